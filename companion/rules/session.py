"""The one mutable holder of a game: the list of states, who did each action, undo, and a
state id that increases on every change (so a view rendered from an old state is refused).

A change is made in two steps: `propose` (or `propose_undo`) checks it and works out the
state after it without changing anything, and `commit` makes it. Whoever keeps the game
durable (the web layer's SQLite log) stores the change between the two, so a change that
cannot be stored is simply never committed. `act` and `undo` do both at once.

Staleness is one rule (`is_current`), from what the engine declares: a screen drawn at
state id `seen` still means what it meant while the step it showed goes on (the Turn's
`moves_in_step` says how far back the step began; `step_id` is the state id of that
beginning), so players acting at once (Qwixx's white sum, Sixes' pound race) are judged by
the rules, not refused as stale. A roll answers the one state it was drawn for, and a view
drawn before an undo is stale.

A throw is one change in several actions (`propose_throw`): the moves it implies (the
automatic passes of those who had not acted, Sixto's re-roll), marked `Action.implied`,
then its roll; an undo of the roll takes them all back, so nobody keeps a penalty of a
roll that no longer stands.

Pure: no I/O. Persistence (the web layer's SQLite log) stores `Session.actions` and replays
them through `Session.from_record`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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
# the table itself: a move a throw implied for a player who had not acted when the next roll
# came (`Throw.closes`: an automatic pass); only the host takes one back
AUTO = "auto"

EntryT = TypeVar("EntryT")


@dataclass(frozen=True, slots=True)
class Action:
    """An accepted move and who made it: a seat number (as str, e.g. "0"), "host",
    "camera" or "auto" (an automatic pass). `implied`: made by the throw whose roll follows
    it (`Throw.closes` and `Throw.moves`), so taken back with that roll."""

    move: Move
    by: str
    implied: bool = False


@dataclass(frozen=True, slots=True)
class Proposal:
    """A checked change that is not made yet (`Session.commit` makes it): the state after
    it, checked against state id `base_id`. `action` is the move made, or for an undo
    (`undo` True) the action taken back."""

    base_id: int
    state: object  # the game's state after the change (opaque to the session)
    action: Action
    undo: bool = False
    taken: int = 1  # for an undo: how many actions it takes back (a throw and its moves)

    @property
    def state_id(self) -> int:
        """The state id once committed."""
        return self.base_id + 1


def stale_view() -> Rejection:
    return Rejection(
        Reason.STALE_STATE,
        "stale_state",
        "the game has moved on since this screen was drawn; it has been refreshed",
    )


def may_undo(last_by: str | None, by: str) -> bool:
    """Whether `by` may take back the last action, made by `last_by` (None: there is none):
    the host may, and so may whoever made it."""
    return last_by is not None and by in (HOST, last_by)


def standing(
    entries: Sequence[EntryT],
    is_undo: Callable[[EntryT], bool],
    is_implied: Callable[[EntryT], bool] = lambda entry: False,
) -> list[EntryT]:
    """The actions of a log of actions and undos that stand: each undo takes back the latest
    action still standing and the moves its throw implied before it, as `Session.undo`
    does (for logs read without a Session)."""
    stack: list[EntryT] = []
    for entry in entries:
        if not is_undo(entry):
            stack.append(entry)
        elif stack:
            stack.pop()
            while stack and is_implied(stack[-1]):
                stack.pop()
    return stack


class Session:
    def __init__(self, game: Game[Any, Any], options: Any, players: list[str] | None = None):
        self.game = game
        self.options = options
        first = game.setup(options)
        self.states: list[Any] = [first]
        self.actions: list[Action] = []
        self.state_id = 0
        # the state id at which each state of `states` was reached, and of the latest undo
        self._reached: list[int] = [0]
        self._undone_at = 0
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

    @property
    def last_by(self) -> str | None:
        """Who made the action an undo would take back (None: nothing to undo)."""
        return self.actions[-1].by if self.actions else None

    def moves_since(self, state_id: int) -> list[Action] | None:
        """The actions made after state `state_id`, oldest first; None when an undo came
        since (the actions then are not the states' story)."""
        if self._undone_at > state_id or state_id > self.state_id:
            return None
        count = self.state_id - state_id
        return list(self.actions[len(self.actions) - count :]) if count else []

    @property
    def step_id(self) -> int:
        """The state id at which the current step began (`Turn.moves_in_step` moves ago),
        or of the latest undo when that came later: a screen drawn at it or since shows
        this step."""
        back = min(self.turn().moves_in_step, len(self._reached) - 1)
        return max(self._reached[-1 - back], self._undone_at)

    def is_current(self, move: Move, seen: int | None) -> bool:
        """Whether `move`, sent from a screen drawn at state id `seen` (None: no screen, e.g.
        a record), still means what it meant there: a roll only at that very state (dice
        answer one call), any other move from anywhere in the current step."""
        if seen is None:
            return True
        if isinstance(move, Roll):
            return seen == self.state_id
        return self.step_id <= seen <= self.state_id

    # -- changing ----------------------------------------------------------------------
    def propose(
        self, move: Move, by: str | None = None, seen: int | None = None, implied: bool = False
    ) -> Proposal:
        """Check `move` and work out the state after it, changing nothing. Checks in a fixed
        order: a stale view (`is_current`), a player marking another's sheet, then the
        game's own (game over, may this player act now, is it legal). `by` defaults to the
        move's player (or "camera" for a roll); `implied`: a move of the throw whose roll
        comes next (Action.implied). Raises Rejection."""
        if not self.is_current(move, seen):
            raise stale_view()
        return self._proposed(self.state_id, self.state, move, by, implied)

    def _proposed(
        self, base_id: int, state: object, move: Move, by: str | None, implied: bool
    ) -> Proposal:
        if by is None:
            by = CAMERA if isinstance(move, Roll) else str(move.player)
        if not isinstance(move, Roll) and by not in (str(move.player), HOST, AUTO):
            raise Rejection(
                Reason.NOT_ALLOWED, "own_sheet_only", "you may only mark your own sheet"
            )
        return Proposal(base_id, self.game.play(state, move), Action(move, by, implied))

    def propose_throw(
        self, moves: Sequence[tuple[Move, str]], roll: Roll, by: str
    ) -> list[Proposal]:
        """Check a throw: the `moves` it implies now (each with who makes it), then `roll`
        by `by`, each on the state the one before leads to; changing nothing. Committed in
        order they make one throw: an undo of its roll takes them all back."""
        proposals: list[Proposal] = []
        state, base_id = self.state, self.state_id
        steps = [*((move, who, True) for move, who in moves), (roll, by, False)]
        for move, who, implied in steps:
            proposal = self._proposed(base_id, state, move, who, implied)
            proposals.append(proposal)
            state, base_id = proposal.state, proposal.state_id
        if by.isdigit():  # a player's device: its roll costs no other player points
            penalised = self.game.penalised_by(self.state, [move for move, _ in moves])
            others = [p for p in penalised if str(p) != by]
            if others:
                name = self.players[others[0]]
                raise Rejection(
                    Reason.NOT_ALLOWED,
                    "penalty_for_other",
                    f"{name} has not finished this turn, and the roll would pass for "
                    f"{name} with a penalty: {name} passes (or crosses) first, or the host "
                    "enters the roll",
                )
        return proposals

    def propose_undo(self, by: str = HOST, seen: int | None = None) -> Proposal:
        """Check taking back the last action (allowed to the host and to whoever made it;
        `seen`, when given, must be the current state id), changing nothing."""
        if seen is not None and seen != self.state_id:
            raise stale_view()
        if not self.actions:
            raise Rejection(Reason.NOTHING_TO_UNDO, "nothing_to_undo", "there is nothing to undo")
        last = self.actions[-1]
        if not may_undo(last.by, by):
            raise Rejection(
                Reason.NOT_ALLOWED,
                "undo_own_only",
                "only the player who made the last action, or the host, may undo it",
            )
        taken = 1  # a throw's roll, and the moves the throw implied before it
        while taken < len(self.actions) and self.actions[-1 - taken].implied:
            taken += 1
        return Proposal(self.state_id, self.states[-1 - taken], last, undo=True, taken=taken)

    def commit(self, proposal: Proposal) -> None:
        """Make a proposed change. Refused (STALE_STATE) when anything changed since it was
        proposed: a proposal is made and committed under one lock."""
        if proposal.base_id != self.state_id:
            raise stale_view()
        self.state_id += 1
        if proposal.undo:
            del self.states[-proposal.taken :]
            del self.actions[-proposal.taken :]
            del self._reached[-proposal.taken :]
            self._undone_at = self.state_id
        else:
            self.states.append(proposal.state)
            self.actions.append(proposal.action)
            self._reached.append(self.state_id)

    def act(
        self, move: Move, by: str | None = None, seen: int | None = None, implied: bool = False
    ) -> Any:
        """Check and apply `move` (`propose`, then `commit`); returns the new state."""
        proposal = self.propose(move, by, seen, implied)
        self.commit(proposal)
        return proposal.state

    def undo(self, by: str = HOST, seen: int | None = None) -> Action:
        """Take back the last action (`propose_undo`, then `commit`); returns it."""
        proposal = self.propose_undo(by, seen)
        self.commit(proposal)
        return proposal.action

    # -- records -----------------------------------------------------------------------
    def to_record(self, actions: Sequence[Action] | None = None) -> dict[str, Any]:
        """The game record; of `actions` (a copy of `self.actions` taken earlier) when
        given, so it can be encoded on another thread while the game goes on."""
        from companion.rules.codec import encode

        return {
            "schema": SCHEMA_VERSION,
            "game": self.game.name,
            "options": encode(self.options),
            "players": list(self.players),
            "actions": [
                self._action_record(a) for a in (self.actions if actions is None else actions)
            ],
        }

    def _action_record(self, action: Action) -> dict[str, object]:
        item: dict[str, object] = {"by": action.by, "move": self.game.move_to_json(action.move)}
        return item | {"implied": True} if action.implied else item

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
            implied = item.get("implied", False)
            if not isinstance(implied, bool):
                raise Rejection(Reason.MALFORMED, "action", '"implied" is true or false')
            session.act(move, by=str(by) if by is not None else None, implied=implied)
        except Rejection as exc:
            raise RecordError(index, exc, session) from exc
    return session
