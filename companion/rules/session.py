"""The one mutable holder of a game: the list of states, who did each action, undo, and a
state id that increases on every change (so a view rendered from an old state is refused).

Pure: no I/O. Persistence (the web layer's SQLite log) stores `Session.actions` and replays
them through `Session.from_record`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.rules.base import (
    SCHEMA_VERSION,
    Game,
    Move,
    Outcome,
    Reason,
    Rejection,
    Roll,
    Score,
    Turn,
)
from companion.rules.registry import find_game

HOST = "host"
CAMERA = "camera"


@dataclass(frozen=True, slots=True)
class Action:
    """An accepted move and who made it: a seat number (as str, e.g. "0"), "host" or
    "camera"."""

    move: Move
    by: str


class Session:
    def __init__(self, game: Game[Any, Any], options: Any, players: list[str] | None = None):
        self.game = game
        self.options = options
        first = game.setup(options)
        self.states: list[Any] = [first]
        self.actions: list[Action] = []
        self.state_id = 0
        count = len(game.scores(first))
        self.players = list(players) if players else [f"Player {i + 1}" for i in range(count)]

    # -- reading -----------------------------------------------------------------------
    @property
    def state(self) -> Any:
        return self.states[-1]

    def turn(self) -> Turn:
        return self.game.turn(self.state)

    def scores(self) -> tuple[Score, ...]:
        return self.game.scores(self.state)

    def outcome(self) -> Outcome | None:
        return self.game.outcome(self.state)

    def legal_moves(self, player: int) -> list[Move]:
        return self.game.legal_moves(self.state, player)

    # -- changing ----------------------------------------------------------------------
    def act(self, move: Move, by: str | None = None, expected_state_id: int | None = None) -> Any:
        """Check and apply `move`; `by` defaults to the move's player (or "camera" for a
        roll). Raises Rejection (STALE_STATE when `expected_state_id` is not current)."""
        if expected_state_id is not None and expected_state_id != self.state_id:
            raise Rejection(
                Reason.STALE_STATE,
                "stale_state",
                "the game has moved on since this screen was drawn; it has been refreshed",
            )
        if by is None:
            by = CAMERA if isinstance(move, Roll) else str(move.player)
        if not isinstance(move, Roll) and by not in (str(move.player), HOST):
            raise Rejection(
                Reason.NOT_ALLOWED, "own_sheet_only", "you may only mark your own sheet"
            )
        new_state = self.game.play(self.state, move)
        self.states.append(new_state)
        self.actions.append(Action(move, by))
        self.state_id += 1
        return new_state

    def undo(self, by: str = HOST) -> Action:
        """Take back the last action: allowed to the host and to whoever made it."""
        if not self.actions:
            raise Rejection(Reason.NOTHING_TO_UNDO, "nothing_to_undo", "there is nothing to undo")
        last = self.actions[-1]
        if by != HOST and by != last.by:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "undo_own_only",
                "only the player who made the last action, or the host, may undo it",
            )
        self.actions.pop()
        self.states.pop()
        self.state_id += 1
        return last

    # -- records -----------------------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        from companion.rules.codec import encode

        return {
            "schema": SCHEMA_VERSION,
            "game": self.game.name,
            "options": encode(self.options),
            "players": list(self.players),
            "actions": [{"by": a.by, "move": self.game.move_to_json(a.move)} for a in self.actions],
        }

    @classmethod
    def from_record(cls, record: Any) -> Session:
        """Replay a game record. Raises RecordError naming the first bad action."""
        return replay_record(record)


class RecordError(Exception):
    """A record that cannot be replayed: `index` of the first bad action (None when the
    record's header is bad), and the Rejection behind it."""

    def __init__(self, index: int | None, rejection: Rejection, session: Session | None = None):
        where = "record" if index is None else f"action {index}"
        super().__init__(
            f"{where}: {rejection.reason.value} ({rejection.rule}): {rejection.message}"
        )
        self.index = index
        self.rejection = rejection
        self.session = session


def replay_record(record: Any) -> Session:
    def bad(message: str, rule: str = "record") -> RecordError:
        return RecordError(None, Rejection(Reason.MALFORMED, rule, message))

    if not isinstance(record, dict):
        raise bad("a game record is a JSON object")
    if record.get("schema") != SCHEMA_VERSION:
        raise bad(f"unsupported record schema {record.get('schema')!r} (expected {SCHEMA_VERSION})")
    try:
        game = find_game(str(record.get("game")))
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    try:
        options = game.parse_options(record.get("options") or {})
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    players = record.get("players")
    if players is not None and (
        not isinstance(players, list) or not all(isinstance(p, str) for p in players)
    ):
        raise bad("'players' must be a list of names")
    actions = record.get("actions")
    if not isinstance(actions, list):
        raise bad("'actions' must be a list")
    session = Session(game, options, players)
    for index, item in enumerate(actions):
        try:
            if not isinstance(item, dict) or "move" not in item:
                raise Rejection(
                    Reason.MALFORMED, "action", 'an action is {"by": ..., "move": {...}}'
                )
            move = game.move_from_json(item["move"])
            by = item.get("by")
            session.act(move, by=str(by) if by is not None else None)
        except Rejection as exc:
            raise RecordError(index, exc, session) from exc
    return session
