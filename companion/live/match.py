"""Match a settled reading to the dice the game expects.

The state says which dice the next roll must contain (`DiceSpec`, companion.rules.base): one
colour per rolled die, plus `kept` dice that stay on the table with a known value (Sixis
saved dice, rules/sixis.txt). The camera sees kept and rolled dice alike, so every die on the
table must be accounted for: the kept dice by colour and value, the rest as the roll.

`match_roll(dice, spec)` returns the rules' `Roll` (the rolled dice only, in the spec's
colour order, dice of one colour left to right), or a `Mismatch` naming every problem with
the die boxes involved, so the table page can outline them:
  - unreadable: a cocked or unreadable die (value None or flagged "unreadable");
  - unknown_colour: a die whose colour could not be named;
  - extra: a die of a colour this roll does not use (e.g. a locked Qwixx colour);
  - colour_twice: more dice of a colour than the roll has;
  - missing: fewer dice of a colour than the roll has (no box: nothing was seen);
  - kept_moved: a kept die's value is not on the table (a saved die turned or taken away).
Pure functions; no camera, no clock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from companion.rules.base import COLOURS, DiceSpec, Die, Roll
from companion.vision.types import UNREADABLE, DieBox, DieReading


class ProblemKind(StrEnum):
    """What is wrong with the dice on the table (see the module docstring)."""

    UNREADABLE = "unreadable"
    UNKNOWN_COLOUR = "unknown_colour"
    EXTRA = "extra"
    COLOUR_TWICE = "colour_twice"
    MISSING = "missing"
    KEPT_MOVED = "kept_moved"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong: its kind, the colour concerned (None when unknown), a sentence for
    the players, and the boxes of the dice involved (empty for a missing die)."""

    kind: ProblemKind
    colour: str | None
    message: str
    boxes: tuple[DieBox, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "kind": str(self.kind),
            "colour": self.colour,
            "message": self.message,
            "boxes": [list(b.box) for b in self.boxes],
        }


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The dice on the table are not the roll the game expects; `problems` says why."""

    problems: tuple[Problem, ...]

    @property
    def message(self) -> str:
        return "; ".join(p.message for p in self.problems)

    @property
    def kinds(self) -> tuple[ProblemKind, ...]:
        return tuple(p.kind for p in self.problems)

    def to_json(self) -> dict[str, object]:
        return {"message": self.message, "problems": [p.to_json() for p in self.problems]}


def is_readable(die: DieReading) -> bool:
    """A die with a value 1-6 and no "unreadable" flag."""
    return die.value is not None and 1 <= die.value <= 6 and UNREADABLE not in die.flags


def _known_colour(die: DieReading) -> str | None:
    return die.colour if die.colour in COLOURS else None


def _dice_word(count: int, colour: str) -> str:
    return f"the {colour} die" if count == 1 else f"{count} {colour} dice"


def match_roll(dice: Sequence[DieReading], spec: DiceSpec) -> Roll | Mismatch:
    """The roll on the table, or every reason it is not the roll `spec` asks for."""
    by_colour: dict[str, list[DieReading]] = {}
    for die in dice:
        colour = _known_colour(die)
        if colour is not None:
            by_colour.setdefault(colour, []).append(die)
    problems = [
        *_unreadable(dice),
        *_unnamed(dice),
        *_colour_counts(by_colour, Counter(spec.colours) + Counter(d.colour for d in spec.kept)),
    ]
    if problems:
        return Mismatch(tuple(problems))
    rolled: dict[str, list[DieReading]] = {}
    for colour, seen in by_colour.items():
        rest, moved = _take_kept(seen, [d.value for d in spec.kept if d.colour == colour])
        problems.extend(_kept_moved(colour, value, rest) for value in moved)
        rolled[colour] = sorted(rest, key=lambda d: (d.where.cx, d.where.cy))
    if problems:
        return Mismatch(tuple(problems))
    out: list[Die] = []
    for colour in spec.colours:
        die = rolled[colour].pop(0)
        assert die.value is not None  # is_readable checked every die above
        out.append(Die(colour, die.value))
    return Roll(dice=tuple(out))


def _unreadable(dice: Sequence[DieReading]) -> list[Problem]:
    problems = []
    for die in dice:
        if not is_readable(die):
            what = f"the {die.colour} die" if _known_colour(die) else "a die"
            problems.append(
                Problem(
                    ProblemKind.UNREADABLE,
                    _known_colour(die),
                    f"{what} cannot be read (cocked or covered): lay it flat or roll it again",
                    (die.where,),
                )
            )
    return problems


def _unnamed(dice: Sequence[DieReading]) -> list[Problem]:
    unnamed = [d for d in dice if _known_colour(d) is None]
    if not unnamed:
        return []
    message = (
        f"{len(unnamed)} dice of a colour that cannot be told"
        if len(unnamed) > 1
        else "a die of a colour that cannot be told"
    )
    return [Problem(ProblemKind.UNKNOWN_COLOUR, None, message, tuple(d.where for d in unnamed))]


def _colour_counts(by_colour: dict[str, list[DieReading]], wanted: Counter[str]) -> list[Problem]:
    """Dice of colours the roll does not use, too many of a colour, too few of one."""
    problems = []
    for colour, seen in by_colour.items():
        want = wanted.get(colour, 0)
        boxes = tuple(d.where for d in seen)
        if want == 0:
            them = "it" if len(seen) == 1 else "them"
            message = (
                f"{_dice_word(len(seen), colour)} not part of this roll: take {them} off the table"
            )
            problems.append(Problem(ProblemKind.EXTRA, colour, message, boxes))
        elif len(seen) > want:
            message = f"{len(seen)} {colour} dice on the table, this roll has {want}"
            problems.append(Problem(ProblemKind.COLOUR_TWICE, colour, message, boxes))
    for colour, want in wanted.items():
        short = want - len(by_colour.get(colour, ()))
        if short > 0:
            verb = "is" if short == 1 else "are"
            message = f"{_dice_word(short, colour)} {verb} missing"
            problems.append(Problem(ProblemKind.MISSING, colour, message))
    return problems


def _kept_moved(colour: str, value: int, rest: Sequence[DieReading]) -> Problem:
    return Problem(
        ProblemKind.KEPT_MOVED,
        colour,
        f"the kept {colour} {value} is not on the table: put it back as it was",
        tuple(d.where for d in rest),
    )


def _take_kept(
    seen: Sequence[DieReading], kept_values: Sequence[int]
) -> tuple[list[DieReading], list[int]]:
    """Remove one die per kept value from `seen`; returns the dice left and the kept values
    with no die showing them."""
    left = list(seen)
    not_found = []
    for value in kept_values:
        match = next((d for d in left if d.value == value), None)
        if match is None:
            not_found.append(value)
        else:
            left.remove(match)
    return left, not_found
