"""The intake: where the one decision on a camera throw (companion.table.camera_decision)
lands. `RollIntake.take` gets the decision's outcome and nothing else to ask for:

- a `CameraRoll` is applied: handed to the table as the next throw (`Table.act_throw`: the
  moves the throw implies first, the automatic passes by "auto" and e.g. Sixto's re-roll
  by its player's seat, then the roll), on the state the throw was read at, so a game that
  moved on refuses it as stale; then `roll_applied` keeps its photo and the camera's setup
  learns from its dice (companion.table.learning, issue 15);
- a `HeldReading` is held as the table's question (`held`, with its picture drawn off the
  loop) until a person answers it (the hub's confirm, fix, add, dismiss).

A refusal is noted, never raised: the camera's status line says what happened to each
throw (`notes`), in words for a camera where the engine's speak to a screen
(`camera_refusal`).

`RollIntake.roll_applied` is the one place where a camera roll counts as applied, with the
reading it came from (every die's box, value, colour and confidence) and its frame: the
photo goes into SQLite beside the roll's action.

Every roll applied, asked about or refused is one INFO line in the server's log
(`log_roll`): the table's game and join code, the dice read, and what became of them. A
throw is judged once when it settles, so this is a line per throw, never per frame."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from companion.rules.base import Die, Rejection
from companion.rules.session import HOST
from companion.table.camera_pictures import held_picture, held_thumbnail, roll_photo
from companion.table.held_reading import (
    CameraRoll,
    HeldKind,
    HeldReading,
    HeldReadings,
    camera_moved_on,
    may_answer,
)
from companion.table.learning import Learning
from companion.table.store import Store
from companion.table.tables import SEAT_FREED, Table
from companion.table.words import with_names
from companion.vision.types import DieReading

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TableNote:
    """What the camera last did for a table, for its status line: a sentence, when
    (seconds since the epoch), and the last roll it applied with its log seq."""

    text: str = ""
    at: float = 0.0
    last_roll: tuple[tuple[str, int], ...] | None = None
    last_roll_seq: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "note": self.text,
            "note_at": self.at,
            # how old, by the server's clock (a tablet's may differ): the page says so
            "note_age_s": round(max(0.0, time.time() - self.at)) if self.at else None,
            "last_roll": [list(die) for die in self.last_roll] if self.last_roll else None,
            "last_roll_seq": self.last_roll_seq,
        }


@dataclass(frozen=True, slots=True)
class Taken:
    """What the intake did with a decision: the question it holds now, or the applied
    roll's log seq (both None: the engine refused the roll, noted)."""

    held: HeldReading | None = None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Answerer:
    """The device whose answer to the camera's question made a roll: its token, and what
    it acts as (the host, or the seat of the active player). The table checks it again
    where it applies the roll, under its lock (`Table.act_throw`)."""

    token: str = field(repr=False)
    acts_as: str


class RollIntake:
    """See the module docstring."""

    def __init__(self, store: Store, learning: Learning | None = None) -> None:
        self.store = store
        self.learning = learning
        self.held = HeldReadings(self.note)
        self._notes: dict[str, TableNote] = {}

    def note(self, table_id: str, text: str) -> None:
        self._notes[table_id] = replace(self.note_of(table_id), text=text, at=time.time())

    def note_of(self, table_id: str) -> TableNote:
        return self._notes.get(table_id, TableNote())

    async def take(
        self,
        table: Table,
        outcome: CameraRoll | HeldReading,
        setup: str | None,
        tapped: bool,
        answerer: Answerer | None = None,
    ) -> Taken:
        """Apply a roll or hold a question (the module docstring). `setup`: the camera's
        calibration (None: nothing learns); `tapped`: a person's answer led here (a roll
        they checked; a question they see change, so it is not noted again); `answerer`:
        the device whose answer it is (None: the camera's, a test's, the server's own),
        refused (raised, `seat_freed`, the question kept) when it lost its place."""
        if isinstance(outcome, CameraRoll):
            answered = self.held.drop(table.table_id)
            try:
                seq = await self.apply(table, outcome, answerer)
            except Rejection:
                if answered is not None:  # its device lost its place: the host answers
                    self.held.put(answered)
                raise
            self._learn(table, outcome, seq, setup, tapped)
            return Taken(seq=seq)
        held = await _with_picture(outcome)
        self.held.put(held)
        if not tapped:  # a person's answer that asks again is the same throw, logged once
            question = question_note(held, who_answers(table, held.kind))
            self.note(table.table_id, question)
            log_roll(table, held.dice, f"asked ({held.kind}): {question}")
        return Taken(held=held)

    async def apply(
        self, table: Table, camera_roll: CameraRoll, answerer: Answerer | None = None
    ) -> int | None:
        """Apply the roll as the next throw (its implied moves first); then
        `roll_applied`. Returns the roll's log seq, or None when the engine refused
        (noted). A refusal of `answerer` (it lost its seat) is its device's to read:
        raised, not noted."""
        action_id = f"camera-{secrets.token_hex(8)}"
        try:
            result = await table.act_throw(
                camera_roll.roll,
                camera_roll.by,
                action_id,
                camera_roll.state_id,
                token=answerer.token if answerer else None,
                acts_as=answerer.acts_as if answerer else None,
            )
        except Rejection as exc:
            if answerer is not None and exc.rule == SEAT_FREED:
                raise
            refused = camera_refusal(exc)
            refusal = with_names(refused.message, table.snapshot.players)
            self.note(table.table_id, f"the game refused the camera's roll: {refusal}")
            log_roll(table, read_dice(camera_roll), f"refused ({refused.rule}): {refusal}")
            return None
        self.note(table.table_id, "roll applied")
        log_roll(table, read_dice(camera_roll), applied_words(camera_roll, result.state_id))
        rolled = tuple((d.colour, d.value) for d in camera_roll.roll.dice)
        self._notes[table.table_id] = replace(
            self.note_of(table.table_id), last_roll=rolled, last_roll_seq=result.state_id
        )
        await self.roll_applied(table, action_id, camera_roll)
        return result.state_id

    async def roll_applied(self, table: Table, action_id: str, camera_roll: CameraRoll) -> None:
        """A camera roll was applied as action `action_id` of `table`: its reading is
        `camera_roll.dice`, its frame `camera_roll.image` (module docstring). Keeps its
        photo; never raises (the roll stands either way)."""
        await self._keep_photo(table, action_id, camera_roll)

    async def _keep_photo(self, table: Table, action_id: str, camera_roll: CameraRoll) -> None:
        try:
            photo = await asyncio.to_thread(roll_photo, camera_roll.image, camera_roll.dice)
            await asyncio.to_thread(self.store.add_photo, table.table_id, action_id, photo)
        except Exception:  # the roll stands; only its evidence is missing
            logger.warning("photo of roll %s not stored", action_id, exc_info=True)

    def _learn(
        self,
        table: Table,
        camera_roll: CameraRoll,
        seq: int | None,
        setup: str | None,
        tapped: bool,
    ) -> None:
        """An applied roll (seq not None) teaches the camera's setup, in the background."""
        if self.learning is None or seq is None or setup is None:
            return
        self.learning.roll_applied_soon(
            setup,
            camera_roll.image,
            camera_roll.dice,
            tapped=tapped,
            by_host=camera_roll.by == HOST,
            table_id=table.table_id,
            throw=seq,
        )


# the engine's words for a throw the game moved past speak to a tablet ("since this screen
# was drawn; it has been refreshed"); the camera line and the log say what a camera means
def camera_refusal(refusal: Rejection) -> Rejection:
    """The engine's refusal of a camera roll as the camera says it: a roll on a state the
    game moved past is the camera's one `camera_moved_on`; a table opened again meanwhile
    says so for a camera; any other keeps the engine's words (a rule of the game)."""
    if refusal.rule == "stale_state":
        return camera_moved_on()
    if refusal.rule == "table_reloaded":
        return Rejection(refusal.reason, refusal.rule, TABLE_RELOADED)
    return refusal


TABLE_RELOADED = "the table was opened again while the camera read the throw; throw again"


def log_roll(table: Table, dice: Sequence[DieReading | Die], what: str) -> None:
    """The server log's line on one camera roll at `table`: its game and join code, the
    dice read, and `what` became of them (applied, asked, refused and why)."""
    logger.info(
        "camera roll at table %s (%s, join code %s): read %s; %s",
        table.table_id,
        table.game.title,
        table.code,
        dice_words(dice),
        what,
    )


def dice_words(dice: Sequence[DieReading | Die]) -> str:
    """The dice as read, "white 3, red ?, ..." ("?": a die the camera could not read)."""
    said = [f"{d.colour or 'a die'} {d.value if d.value is not None else '?'}" for d in dice]
    return ", ".join(said) if said else "no dice"


def read_dice(camera_roll: CameraRoll) -> Sequence[DieReading | Die]:
    """The dice the camera read for a roll (its reading; the roll's own dice when it
    came without one)."""
    return camera_roll.dice or camera_roll.roll.dice


def applied_words(camera_roll: CameraRoll, state_id: int) -> str:
    """What became of an applied roll: its place in the table's log, who made it, and the
    dice applied where a person changed what was read."""
    words = f"applied (state {state_id}, by {camera_roll.by})"
    read = [(d.colour, d.value) for d in camera_roll.dice]
    applied = [(d.colour, d.value) for d in camera_roll.roll.dice]
    if read and read != applied:
        words += f" as {dice_words(camera_roll.roll.dice)}"
    return words


def who_answers(table: Table, kind: HeldKind) -> list[str]:
    """Whom a question held as `kind` at `table` waits for: each player whose device may
    answer it (`may_answer`, the refusals its routes check), by name, then the host
    ("the host"): the host alone fixes a mismatch; a roll to confirm or answer is the
    open step's player's too."""
    snapshot = table.snapshot
    active = snapshot.turn.active
    players = [
        name
        for seat, name in enumerate(snapshot.players)
        if may_answer(kind, host=False, seat=seat, active=active)
    ]
    host = ["the host"] if may_answer(kind, host=True, seat=None, active=active) else []
    return players + host


def question_note(held: HeldReading, answers: Sequence[str]) -> str:
    """The status line of a question the camera has just asked; `answers`: whom it waits
    for (`who_answers`). It names no thrower."""
    if held.kind == "mismatch":
        return f"not applied: {held.message}"
    who = " or ".join(answers)
    if held.kind == "unsure":
        return f"{held.message}: waiting for {who}"
    return f"waiting for {who} to confirm the roll"


async def _with_picture(held: HeldReading) -> HeldReading:
    """The held reading with its picture and thumbnail (problem or unsure dice marked),
    drawn off the loop."""
    boxes = held.problem_boxes
    picture = await asyncio.to_thread(held_picture, held.image, held.dice, boxes)
    thumbnail = await asyncio.to_thread(held_thumbnail, held.image, held.dice, boxes)
    return replace(held, picture=picture, thumbnail=thumbnail)
