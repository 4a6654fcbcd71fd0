"""The intake: camera rolls into the game, each with its photo.

`RollIntake.apply` hands the roll to the table as the next throw (`Table.act_throw`: the
moves the throw implies first, the automatic passes by "auto" and e.g. Sixto's re-roll by
its player's seat, then the roll), on the state the throw was read at, so a game that
moved on refuses it as stale. A refusal is noted, never raised: the camera's status line
says what happened to each throw (`notes`).

`RollIntake.roll_applied` is the one place where a camera roll counts as applied, with the
reading it came from (every die's box, value, colour and confidence) and its frame: the
photo goes into SQLite beside the roll's action; whatever else should learn from applied
camera rolls (a reader adapting to its table) is called from there."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, replace

from companion.rules.base import Rejection
from companion.web.camera_pictures import roll_photo
from companion.web.held_reading import CameraRoll
from companion.web.store import Store
from companion.web.tables import Table
from companion.web.views import with_names

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
            "last_roll": [list(die) for die in self.last_roll] if self.last_roll else None,
            "last_roll_seq": self.last_roll_seq,
        }


class RollIntake:
    """See the module docstring."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._notes: dict[str, TableNote] = {}

    def note(self, table_id: str, text: str) -> None:
        self._notes[table_id] = replace(self.note_of(table_id), text=text, at=time.time())

    def note_of(self, table_id: str) -> TableNote:
        return self._notes.get(table_id, TableNote())

    async def apply(self, table: Table, camera_roll: CameraRoll) -> int | None:
        """Apply the roll as the next throw (its implied moves first); then
        `roll_applied`. Returns the roll's log seq, or None when the engine refused
        (noted)."""
        action_id = f"camera-{secrets.token_hex(8)}"
        try:
            result = await table.act_throw(
                camera_roll.roll, camera_roll.by, action_id, camera_roll.state_id
            )
        except Rejection as exc:
            refusal = with_names(exc.message, table.snapshot.players)
            self.note(table.table_id, f"the game refused the camera's roll: {refusal}")
            return None
        self.note(table.table_id, "roll applied")
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
