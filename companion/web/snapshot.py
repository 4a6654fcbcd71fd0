"""`Snapshot`: the immutable picture of a table's game that every screen draws from.

Its own module so that the views (which draw snapshots) and the tables (which publish them)
do not import each other: tables -> render -> views -> snapshot, one way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.rules.base import Game, Outcome, Score, Turn


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What every screen draws from: the state after `state_id` accepted actions."""

    state_id: int
    game: Game[Any, Any]
    state: Any
    players: tuple[str, ...]
    turn: Turn
    scores: tuple[Score, ...]
    outcome: Outcome | None
    last_by: str | None  # who made the action an undo would take back
    ended_by_host: bool
    step_id: int = 0  # the state id at which the current step began (Session.step_id)

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.ended_by_host
