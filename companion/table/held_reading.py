"""A camera reading held for a person, and the pure functions that change it.

A settled throw either goes straight to the game or is held:
- "mismatch": the dice do not match the roll the game expects, for the host to fix;
- "confirm": a matching roll waiting for the active player's "Use this roll" (the table's
  camera mode "confirm");
- "unsure": a matching roll the camera is not sure of (mode "sure": apply sure rolls), held
  with just its unsure dice, each with its two likeliest values: a tap on a value answers
  that die, and when no unsure die is left the roll is applied.
Which dice are unsure is a `RollVerdict`, the camera's decision on the whole roll
(companion.table.camera_decision: calibrated confidence against the shipped threshold),
handed in as a function so that everything here stays pure.

`HeldReading` is frozen; `judge_throw`, `fix_die`, `add_die`, `rematch` and `confirmed`
return a new `HeldReading` or the `CameraRoll` to apply, so each step can be tested on
literals. `HeldReadings` is the one mutable holder (per table, with a lock so two taps sent
together each finish before the next starts).

What a throw means (the roll and any moves it implies first: automatic passes, Sixto's
re-roll) is the engine's `Throw` (`Turn.on_throw`); the table makes those moves when it
applies the roll (`Table.act_throw`); nothing here knows a game."""

from __future__ import annotations

import asyncio
import statistics
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from companion.live.match import Mismatch, Problem, match_roll
from companion.live.settle import RollEvent
from companion.rules.base import Move, Reason, Rejection, Roll, Throw
from companion.rules.session import CAMERA, HOST
from companion.vision.types import DieBox, DieReading

if TYPE_CHECKING:
    from companion.table.tables import Table

ADDED = "added"  # flag of a die the host added to a held reading (the finder missed it)
DEFAULT_SIDE_FRACTION = 0.09  # an added die's side with no other dice and no calibration
WAITING_MAX = 3  # throws kept behind an open question (a table rarely throws more meanwhile)
# the camera's note when an undo ended its question: the question went from every screen
# with nothing said, and the host took it for lost dice
DROPPED_BY_UNDO = (
    "the camera's question was dropped because of the undo: throw the dice again, "
    "or enter them by tapping"
)

# the one refusal of a camera roll because the game's state changed since the camera read
# the throw, in the same words wherever it is refused: by the engine when the intake
# applies it (companion.table.roll_intake), or on a tap on a question the game moved past
CAMERA_MOVED_ON = "the game moved on while the camera read the throw; throw again"


def camera_moved_on() -> Rejection:
    return Rejection(Reason.STALE_STATE, "camera_moved_on", CAMERA_MOVED_ON)


HeldKind = Literal["mismatch", "confirm", "unsure"]
Mode = Literal["auto", "sure", "confirm"]  # a table's camera mode (camera_feed)
# what a tap on a held reading changes: a die's value; a die's colour, or drops it (not a
# die); or adds a die the camera missed
DieChange = Literal["value", "recolour_or_drop", "add"]


@dataclass(frozen=True, slots=True)
class UnsureDie:
    """A die the camera is not sure of: its index in the reading and its two likeliest
    values, the likeliest first (the buttons the question shows)."""

    index: int
    choices: tuple[int, int]


@dataclass(frozen=True, slots=True)
class RollVerdict:
    """The camera's decision on a matching roll: `apply` it without a tap, or ask about the
    `unsure` dice only; `confidence` the probability that every die is read right."""

    apply: bool
    unsure: tuple[UnsureDie, ...] = ()
    confidence: float = 0.0


# (the reading's dice, how many dice lie on the table) -> the verdict
Decide = Callable[[Sequence[DieReading], int], RollVerdict]


@dataclass(frozen=True, slots=True)
class CameraRoll:
    """A roll the camera read, ready to apply on state `state_id` (after the moves its throw
    implies), by `by` (the camera, or whoever fixed the reading), with the frame and the
    dice it was read from (its photo)."""

    roll: Roll
    state_id: int
    by: str
    image: np.ndarray = field(repr=False, compare=False)
    dice: tuple[DieReading, ...] = ()


@dataclass(frozen=True, slots=True)
class HeldReading:
    """A reading held for a person at state `state_id` of table `table_id`: a mismatch to
    fix (`problems`), or a matching `roll` to confirm or to answer for its `unsure` dice.
    `throw` is what the throw meant then; `picture` the held frame with the problem (or
    unsure) dice marked (drawn off the loop)."""

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
    unsure: tuple[UnsureDie, ...] = ()
    picture: bytes = field(default=b"", repr=False, compare=False)
    thumbnail: bytes = field(default=b"", repr=False, compare=False)  # cropped to the dice
    corrected_by: str | None = None  # who fixed a die of a roll to confirm (its roll's `by`)

    @property
    def problem_boxes(self) -> list[DieBox]:
        """The dice the picture marks: those a problem names, or the unsure ones."""
        named = [box for problem in self.problems for box in problem.boxes]
        return named + [self.dice[u.index].where for u in self.unsure]


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
    mode: Mode,
    held_id: str,
    decide: Decide | None = None,
) -> HeldReading | CameraRoll:
    """A settled throw on state `state_id`: the roll to apply, or a reading to hold: a
    mismatch; in mode "confirm" a matching roll for the active player to confirm (its
    unsure dice marked when `decide` is given); in mode "sure" a matching roll that
    `decide` does not find sure enough, with its unsure dice (no `decide`: every die)."""
    held = _held(held_id, table_id, state_id, throw, event)
    result = match_roll(event.dice, throw.dice)
    if isinstance(result, Mismatch):
        return replace(held, message=result.message, problems=result.problems)
    on_table = len(throw.dice.colours) + len(throw.dice.kept)
    verdict = decide(event.dice, on_table) if decide is not None else None
    if mode == "auto" or (mode == "sure" and verdict is not None and verdict.apply):
        return CameraRoll(result, state_id, CAMERA, held.image, held.dice)
    if mode == "confirm":
        unsure = verdict.unsure if verdict is not None else ()
        return replace(
            held, kind="confirm", message="confirm the camera's roll", roll=result, unsure=unsure
        )
    unsure = verdict.unsure if verdict is not None else every_die_unsure(event.dice)
    count = len(unsure)
    message = f"the camera is not sure of {count} {'die' if count == 1 else 'dice'}"
    return replace(held, kind="unsure", message=message, roll=result, unsure=unsure)


def carried_over(held: HeldReading, table: Table) -> HeldReading | None:
    """A held reading still meant for the game at `table` now: the dice lie on the table
    while players act, so players' moves since (a player crossing while the question
    waits) leave it the same throw of the same dice, now implying fewer passes; a roll
    entered by hand, an undo, or a throw that means otherwise now (other dice, another
    roller, a Sixto re-roll no longer asked for) end it.
    Dropping it at any move lost the throw with nobody told (the players' re-trial)."""
    throw, was = table.snapshot.throw, held.throw
    since = table.session.moves_since(held.state_id)
    if throw is None or since is None:
        return None
    # the same dice, roller and meaning (Sixto's re-roll: a Keep since makes the throw a
    # new turn's, which it is not); only the passes it closes may be fewer
    if (throw.dice, throw.moves, throw.roller) != (was.dice, was.moves, was.roller):
        return None
    if any(isinstance(action.move, Roll) for action in since):
        return None
    return replace(held, state_id=table.snapshot.state_id, throw=throw)


def every_die_unsure(dice: Sequence[DieReading]) -> tuple[UnsureDie, ...]:
    """Every die as unsure, with its value and the opposite face (no decision at hand)."""
    return tuple(UnsureDie(k, (d.value or 1, 7 - (d.value or 1))) for k, d in enumerate(dice))


def fix_die(
    held: HeldReading, index: int, value: int | None, colour: str | None, remove: bool
) -> HeldReading:
    """A person corrects die `index` (its value and/or colour) or removes it (not a die);
    the die is no longer unsure. Match the result again with `rematch`."""
    if not 0 <= index < len(held.dice):
        raise Rejection(
            Reason.MALFORMED,
            "no_such_die",
            f"die index {index} is not on the held picture (its {len(held.dice)} dice are indexed from 0)",
        )
    dice = list(held.dice)
    # the answered die leaves the question; after a removal the later dice move up one
    shift = 1 if remove else 0
    unsure = tuple(
        UnsureDie(u.index - shift if u.index > index else u.index, u.choices)
        for u in held.unsure
        if u.index != index
    )
    held = replace(held, unsure=unsure)
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


def rematch(held: HeldReading, throw: Throw, by: str = HOST) -> HeldReading | CameraRoll:
    """Match a corrected reading again: `by`'s roll when it matches and no unsure die is
    left to answer (fixing is that person's check, so it needs no confirmation); a roll
    that matches with unsure dice left stays held for them; a reading that does not match
    is held with the problems that remain (a corrected roll that no longer matches is no
    roll to confirm)."""
    result = match_roll(held.dice, throw.dice)
    if isinstance(result, Mismatch):
        return replace(
            held,
            kind="mismatch",
            roll=None,
            unsure=(),
            message=result.message,
            problems=result.problems,
        )
    if held.kind == "confirm":
        # a roll to confirm stays a question after a fix: a second misread die can still be
        # fixed, and "Use this roll" applies the corrected dice (by whoever corrected them)
        return replace(held, roll=result, corrected_by=by)
    if held.unsure and held.kind == "unsure":
        count = len(held.unsure)
        message = f"the camera is not sure of {count} {'die' if count == 1 else 'dice'}"
        return replace(held, roll=result, message=message)
    return CameraRoll(result, held.state_id, by, held.image, held.dice)


def confirmed(held: HeldReading, shown: Sequence[tuple[str, int]] | None = None) -> CameraRoll:
    """The roll the active player (or the host) accepts as read; refused where the reading
    is none to accept as read (`as_read_refusal`), and when `shown` (the dice the person
    saw, as (colour, value)) is not the roll held now (another device fixed a die since):
    never apply dice the person did not see."""
    refusal = as_read_refusal(held.kind)
    if refusal is not None or held.roll is None:
        raise refusal or Rejection(Reason.WRONG_DICE, "fix_first", FIX_FIRST)
    if shown is not None and sorted(shown) != roll_dice(held.roll):
        raise Rejection(
            Reason.STALE_STATE,
            "question_changed",
            "the dice of the camera's question changed since you saw them "
            f"(now {describe_dice(roll_dice(held.roll))}): check them and tap again",
        )
    return CameraRoll(held.roll, held.state_id, held.corrected_by or CAMERA, held.image, held.dice)


FIX_FIRST = "these dice do not match: fix them first"


def as_read_refusal(kind: HeldKind) -> Rejection | None:
    """Why a reading held as `kind` may not be accepted as read ("Use this roll"; None: it
    may): a mismatch is fixed first; a roll the camera is not sure of is answered die by
    die (mode "sure" asks a person exactly those dice: accepting them as read would
    apply the guesses it was not sure of, nobody having looked)."""
    if kind == "mismatch":
        return Rejection(Reason.WRONG_DICE, "fix_first", FIX_FIRST)
    if kind == "unsure":
        return Rejection(
            Reason.ILLEGAL_MOVE,
            "answer_unsure_first",
            "the camera is not sure of some dice: tap the value each of them shows",
        )
    return None


def asked_refusal(host: bool, seat: int | None, active: int | None) -> Rejection | None:
    """Why the camera's question is not put to a device (None: it is): the camera asks the
    active player's device and the host's."""
    if host or (seat is not None and seat == active):
        return None
    return Rejection(
        Reason.NOT_ALLOWED,
        "confirm_by_active_or_host",
        "the active player (or the host) confirms the camera's roll",
    )


def confirm_refusal(
    kind: HeldKind, host: bool, seat: int | None, active: int | None
) -> Rejection | None:
    """Why a device may not accept a reading held as `kind` as read (None: it may): the
    device must be asked (`asked_refusal`), the reading one to accept as read
    (`as_read_refusal`)."""
    return asked_refusal(host, seat, active) or as_read_refusal(kind)


def rethrow_refusal(host: bool) -> Rejection | None:
    """Why a device may not send the held reading back for a re-throw (None: it may): the
    host's alone (a player's tap would throw away a question another device answers)."""
    if host:
        return None
    return Rejection(Reason.NOT_ALLOWED, "host_only", "only the host's device may do this")


def die_change(colour: str | None, remove: bool) -> DieChange:
    """What a fix of a held die changes (`fix_refusal` says who may): its value alone, or
    its colour or the die itself."""
    return "value" if colour is None and not remove else "recolour_or_drop"


def fix_refusal(
    kind: HeldKind, change: DieChange, host: bool, seat: int | None, active: int | None
) -> Rejection | None:
    """Why a device may not make `change` to a reading held as `kind` (None: it may): the
    host fixes any reading; the active player's device sets the value of a die of a roll
    held to confirm or for its unsure dice. A missed die is added to a mismatch only: a
    roll that matched has all its dice (a die read wrong there is tapped and fixed)."""
    answers = change == "value" and kind in ("confirm", "unsure")
    if not (host or (answers and seat is not None and seat == active)):
        return Rejection(
            Reason.NOT_ALLOWED,
            "fix_by_host",
            "only the host fixes this reading; the active player may set the value of a "
            "die of a roll to confirm",
        )
    if change == "add" and kind != "mismatch":
        return Rejection(
            Reason.ILLEGAL_MOVE,
            "add_to_mismatch",
            "these dice match the roll: tap a die read wrong to fix it (a missed die is "
            "added to dice that do not match)",
        )
    return None


def answer_rights(
    kind: HeldKind | None, host: bool, seat: int | None, active: int | None
) -> dict[str, bool]:
    """What a device may do about the reading held now (`kind`; None: none is held), as
    the camera state tells each device so that its page works none of it out: each flag
    is the refusal its route checks."""

    def may(change: DieChange) -> bool:
        return kind is not None and fix_refusal(kind, change, host, seat, active) is None

    rights = {
        "may_confirm": kind is not None and confirm_refusal(kind, host, seat, active) is None,
        "may_fix_values": may("value"),
        "may_recolour_or_drop": may("recolour_or_drop"),
        "may_add_dice": may("add"),
        "may_rethrow": kind is not None and rethrow_refusal(host) is None,
    }
    rights["may_answer"] = any(rights.values())
    # the question (in the banner, the held picture) goes to whoever the camera asks, a
    # mismatch too (the active player reads who fixes it), and to whoever may answer it
    asked = kind is not None and asked_refusal(host, seat, active) is None
    rights["may_act"] = asked or rights["may_answer"]
    return rights


def may_answer(kind: HeldKind, host: bool, seat: int | None, active: int | None) -> bool:
    """Whether a device may answer a reading held as `kind` at all (confirm, fix, add or
    send it back): whom the question waits for."""
    return answer_rights(kind, host, seat, active)["may_answer"]


def roll_dice(roll: Roll) -> list[tuple[str, int]]:
    """A roll's dice as sorted (colour, value) pairs, as a confirm names them."""
    return sorted((d.colour, d.value) for d in roll.dice)


def describe_dice(dice: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{colour} {value}" for colour, value in dice)


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


def held_json(
    held: HeldReading, describe: Callable[[Sequence[Move]], list[str]]
) -> dict[str, object]:
    """What the table page shows of a held reading (`describe` labels the implied moves,
    all at once: a move's cost can depend on those before it)."""
    return {
        "id": held.held_id,
        "kind": held.kind,
        "state_id": held.state_id,
        "message": held.message,
        "problems": [p.to_json() for p in held.problems],
        "unsure": [{"index": u.index, "choices": list(u.choices)} for u in held.unsure],
        "implies": describe(held.throw.implied),
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

    def __init__(self, note: Callable[[str, str], None] = lambda table_id, text: None) -> None:
        self.lock = asyncio.Lock()
        self._held: dict[str, HeldReading] = {}
        # per table, the id of the latest reading a tap made the roll: a second tap on it
        # (two devices answering at once) is told the roll is in, not that it is gone
        self._used: dict[str, str] = {}
        self._waiting: dict[str, deque[RollEvent]] = {}
        self._note = note  # the camera's note of a table (RollIntake.note)

    def put(self, held: HeldReading) -> None:
        self._held[held.table_id] = held

    def wait(self, table_id: str, event: RollEvent) -> bool:
        """Keep a throw made while a question is open, to be the next question (the one on
        screen is never replaced); False when WAITING_MAX throws wait already (dropped)."""
        waiting = self._waiting.setdefault(table_id, deque())
        if len(waiting) >= WAITING_MAX:
            return False
        waiting.append(event)
        return True

    def next_waiting(self, table_id: str) -> RollEvent | None:
        """The oldest throw waiting behind a question, taken off the queue."""
        waiting = self._waiting.get(table_id)
        return waiting.popleft() if waiting else None

    def waiting_count(self, table_id: str) -> int:
        return len(self._waiting.get(table_id, ()))

    def drop(self, table_id: str) -> HeldReading | None:
        """Forget the reading held for `table_id`; returns it (None: none was held)."""
        return self._held.pop(table_id, None)

    def used(self, table_id: str, held_id: str) -> None:
        """A tap on reading `held_id` applied its roll."""
        self._used[table_id] = held_id

    def current(self, table: Table) -> HeldReading | None:
        """The reading held for `table`: carried to the state now while only players' moves
        of the same throw came since (`carried_over`), dropped once the game moved on (a
        roll entered by hand, an undo, a throw that means otherwise)."""
        held = self._held.get(table.table_id)
        if held is None or held.state_id == table.snapshot.state_id:
            return held
        carried = carried_over(held, table)
        if carried is None:
            self.drop(table.table_id)
            if table.session.moves_since(held.state_id) is None:  # an undo came since
                self._note(table.table_id, DROPPED_BY_UNDO)
        else:
            self._held[table.table_id] = carried
        return carried

    def picture(self, table_id: str, thumbnail: bool = False) -> bytes | None:
        held = self._held.get(table_id)
        if held is None:
            return None
        return held.thumbnail if thumbnail else held.picture

    def take(self, table: Table, held_id: str) -> HeldReading:
        """The reading a tap refers to; refused when it is gone or the game moved on."""
        held = self._held.get(table.table_id)
        if held is None or held.held_id != held_id:
            if self._used.get(table.table_id) == held_id:
                raise Rejection(
                    Reason.STALE_STATE,
                    "reading_used",
                    "that roll is already in the game: it was used a moment ago",
                )
            raise Rejection(Reason.STALE_STATE, "no_such_reading", "that camera reading is gone")
        held = self.current(table)
        if held is None:
            raise camera_moved_on()
        return held
