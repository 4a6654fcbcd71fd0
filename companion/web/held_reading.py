"""A camera reading held for a person, and the pure functions that change it.

A settled throw either goes straight to the game or is held: a `Mismatch` (the dice do not
match the roll the game expects) for the host to fix, or a matching roll waiting for the
active player's confirmation. `HeldReading` is frozen; `judge_throw`, `fix_die`, `add_die`,
`rematch` and `confirmed` return a new `HeldReading` or the `CameraRoll` to apply, so each
step can be tested on literals. `HeldReadings` is the one mutable holder (per table, with a
lock so two taps sent together each finish before the next starts).

What a throw means (the roll and any moves it implies first, Sixto's re-roll) is the
engine's `Throw` (`Turn.on_throw`); nothing here knows a game."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from companion.live.match import Mismatch, Problem, match_roll
from companion.live.settle import RollEvent
from companion.rules.base import Move, Reason, Rejection, Roll, Throw
from companion.rules.session import CAMERA, HOST
from companion.vision.types import DieBox, DieReading

if TYPE_CHECKING:
    from companion.web.tables import Table

ADDED = "added"  # flag of a die the host added to a held reading (the finder missed it)
DEFAULT_SIDE_FRACTION = 0.09  # an added die's side with no other dice and no calibration

HeldKind = Literal["mismatch", "confirm"]


@dataclass(frozen=True, slots=True)
class CameraRoll:
    """A roll the camera read, ready to apply on state `state_id`: the moves its throw
    implies, then `roll`, by `by` (the camera, or the host who fixed the reading), with the
    frame and the dice it was read from (its photo)."""

    roll: Roll
    implied: tuple[Move, ...]
    state_id: int
    by: str
    image: np.ndarray = field(repr=False, compare=False)
    dice: tuple[DieReading, ...] = ()


@dataclass(frozen=True, slots=True)
class HeldReading:
    """A reading held for a person at state `state_id` of table `table_id`: a mismatch to
    fix (`problems`), or a matching `roll` to confirm. `throw` is what the throw meant then;
    `picture` the held frame with the problem dice marked (drawn off the loop)."""

    held_id: str
    table_id: str
    kind: HeldKind
    state_id: int
    throw: Throw
    dice: tuple[DieReading, ...]
    width: int
    height: int
    image: np.ndarray = field(repr=False, compare=False)
    message: str = ""
    problems: tuple[Problem, ...] = ()
    roll: Roll | None = None
    picture: bytes = field(default=b"", repr=False, compare=False)

    @property
    def problem_boxes(self) -> list[DieBox]:
        return [box for problem in self.problems for box in problem.boxes]


def _held(
    held_id: str, table_id: str, state_id: int, throw: Throw, event: RollEvent
) -> HeldReading:
    assert event.image is not None  # the runtime hands over only events with their frame
    return HeldReading(
        held_id, table_id, "mismatch", state_id, throw, event.dice, event.width,
        event.height, event.image,
    )  # fmt: skip


def judge_throw(
    event: RollEvent,
    throw: Throw,
    state_id: int,
    table_id: str,
    confirm: bool,
    held_id: str,
) -> HeldReading | CameraRoll:
    """A settled throw on state `state_id`: the roll to apply, or a reading to hold (a
    mismatch; with `confirm`, a matching roll for the active player to confirm)."""
    held = _held(held_id, table_id, state_id, throw, event)
    result = match_roll(event.dice, throw.dice)
    if isinstance(result, Mismatch):
        return replace(held, message=result.message, problems=result.problems)
    if confirm:
        return replace(held, kind="confirm", message="confirm the camera's roll", roll=result)
    return CameraRoll(result, throw.moves, state_id, CAMERA, held.image, held.dice)


def fix_die(
    held: HeldReading, index: int, value: int | None, colour: str | None, remove: bool
) -> HeldReading:
    """The host corrects die `index` (its value and/or colour) or removes it (not a die).
    Match the result again with `rematch`."""
    if not 0 <= index < len(held.dice):
        raise Rejection(Reason.MALFORMED, "no_such_die", f"there is no die {index + 1}")
    dice = list(held.dice)
    if remove:
        del dice[index]
    else:
        old = dice[index]
        dice[index] = replace(
            old,
            value=value if value is not None else old.value,
            colour=colour if colour is not None else old.colour,
            confidence=1.0,
            flags=tuple(f for f in old.flags if f not in ("unreadable", "extra")),
        )
    return replace(held, dice=tuple(dice))


def add_die(
    held: HeldReading, x: float, y: float, value: int, colour: str, side: float
) -> HeldReading:
    """The host adds a die the finder missed: `value` and `colour`, centred on (x, y) in
    pixels of the held frame, `side` pixels wide (`added_die_side`). Refused outside the
    picture or on a die already read (tap that one to fix it)."""
    for name, where, size in (("x", x, held.width), ("y", y, held.height)):
        if not 0 <= where < size:
            raise Rejection(
                Reason.MALFORMED,
                f"add.{name}",
                f"add.{name} {where:g} lies outside the picture (0 to {size})",
            )
    for i, die in enumerate(held.dice):
        x0, y0, x1, y1 = die.where.box
        if x0 <= x <= x1 and y0 <= y <= y1:
            raise Rejection(
                Reason.ILLEGAL_MOVE, "on_a_die", f"die {i + 1} lies there: tap it to fix it"
            )
    added = DieReading(DieBox(x, y, side, side), value, 1.0, colour, 1.0, flags=(ADDED,))
    return replace(held, dice=(*held.dice, added))


def rematch(held: HeldReading, throw: Throw) -> HeldReading | CameraRoll:
    """Match a corrected reading again: the host's roll when it matches (fixing is the
    host's check, so it needs no confirmation), else the reading held with the problems
    that remain (a corrected roll that no longer matches is no roll to confirm)."""
    result = match_roll(held.dice, throw.dice)
    if isinstance(result, Mismatch):
        return replace(
            held, kind="mismatch", roll=None, message=result.message, problems=result.problems
        )
    return CameraRoll(result, throw.moves, held.state_id, HOST, held.image, held.dice)


def confirmed(held: HeldReading) -> CameraRoll:
    """The roll the active player (or the host) accepts; refused for a mismatch."""
    if held.kind != "confirm" or held.roll is None:
        raise Rejection(Reason.WRONG_DICE, "fix_first", "these dice do not match: fix them first")
    return CameraRoll(held.roll, held.throw.moves, held.state_id, CAMERA, held.image, held.dice)


def added_die_side(
    dice: tuple[DieReading, ...],
    width: int,
    height: int,
    die_side: float | None = None,
    side_frame_width: int | None = None,
) -> float:
    """The side of a die the host adds to a reading: the median side of the other dice in
    it; without any, the calibrated `die_side` (scaled to this frame's width when the
    calibration names the width it was measured in); else DEFAULT_SIDE_FRACTION of the
    frame's shorter side."""
    if dice:
        return float(statistics.median(max(d.where.w, d.where.h) for d in dice))
    if die_side is not None:
        return float(die_side * width / side_frame_width) if side_frame_width else float(die_side)
    return DEFAULT_SIDE_FRACTION * min(width, height)


def held_json(held: HeldReading, describe: Callable[[Move], str]) -> dict[str, object]:
    """What the table page shows of a held reading (`describe` labels the implied moves)."""
    return {
        "id": held.held_id,
        "kind": held.kind,
        "state_id": held.state_id,
        "message": held.message,
        "problems": [p.to_json() for p in held.problems],
        "implies": [describe(move) for move in held.throw.moves],
        "width": held.width,
        "height": held.height,
        "dice": [
            {
                "index": i,
                "value": d.value,
                "colour": d.colour,
                "box": list(d.where.box),
                "flags": list(d.flags),
            }
            for i, d in enumerate(held.dice)
        ],
        "roll": [[d.colour, d.value] for d in held.roll.dice] if held.roll else None,
    }


class HeldReadings:
    """The reading held per table. `lock` orders the changes to held readings: two taps
    sent together (two fixes, a fix and a confirm) each finish, picture included, before
    the next starts; otherwise a slower picture of the first could overwrite the second's.
    One lock for every table: the camera watches one table and taps on a held reading come
    seconds apart, so nobody waits on it."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self._held: dict[str, HeldReading] = {}

    def put(self, held: HeldReading) -> None:
        self._held[held.table_id] = held

    def drop(self, table_id: str) -> None:
        self._held.pop(table_id, None)

    def current(self, table: Table) -> HeldReading | None:
        """The reading held for `table`, dropped once the game moved on (a manual roll)."""
        held = self._held.get(table.table_id)
        if held is not None and held.state_id != table.snapshot.state_id:
            self.drop(table.table_id)
            return None
        return held

    def picture(self, table_id: str) -> bytes | None:
        held = self._held.get(table_id)
        return held.picture if held else None

    def take(self, table: Table, held_id: str) -> HeldReading:
        """The reading a tap refers to; refused when it is gone or the game moved on."""
        held = self._held.get(table.table_id)
        if held is None or held.held_id != held_id:
            raise Rejection(Reason.STALE_STATE, "no_such_reading", "that camera reading is gone")
        if held.state_id != table.snapshot.state_id:
            self.drop(table.table_id)
            raise Rejection(
                Reason.STALE_STATE,
                "stale_reading",
                "the game moved on since the camera read these dice; throw again",
            )
        return held
