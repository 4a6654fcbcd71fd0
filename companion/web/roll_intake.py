"""The intake: camera rolls into the game, each with its photo.

`RollIntake.apply` makes the moves a throw implies (each by its player's seat, as that
player would tap them: Sixto's re-roll), then the roll, on the state the throw was read
at, so a game that moved on refuses it as stale; the photo of the frame the roll was read
from is stored beside the roll's action in SQLite. A refusal is noted, never raised: the
camera's status line says what happened to each throw (`notes`)."""

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
        """Apply the implied moves and the roll; store the photo beside the roll. Returns
        the roll's log seq, or None when the engine refused (noted)."""
        action_id = f"camera-{secrets.token_hex(8)}"
        state_id = camera_roll.state_id
        try:
            for number, move in enumerate(camera_roll.implied):
                done = await table.act(move, str(move.player), f"{action_id}-{number}", state_id)
                state_id = done.state_id
            result = await table.apply_roll(
                camera_roll.roll.dice,
                by=camera_roll.by,
                action_id=action_id,
                expected_state_id=state_id,
            )
        except Rejection as exc:
            self.note(table.table_id, f"the game refused the camera's roll: {exc.message}")
            return None
        self.note(table.table_id, "roll applied")
        rolled = tuple((d.colour, d.value) for d in camera_roll.roll.dice)
        self._notes[table.table_id] = replace(
            self.note_of(table.table_id), last_roll=rolled, last_roll_seq=result.state_id
        )
        await self._keep_photo(table, action_id, camera_roll)
        return result.state_id

    async def _keep_photo(self, table: Table, action_id: str, camera_roll: CameraRoll) -> None:
        try:
            photo = await asyncio.to_thread(roll_photo, camera_roll.image, camera_roll.dice)
            await asyncio.to_thread(self.store.add_photo, table.table_id, action_id, photo)
        except Exception:  # the roll stands; only its evidence is missing
            logger.warning("photo of roll %s not stored", action_id, exc_info=True)
