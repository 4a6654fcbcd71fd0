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

Undo (`propose_undo`, `undo_target`): the host takes back the last action, whoever made
it, newest first. A player takes back their own latest action, also when others have acted
since (Sixto's cross step and Qwixx's white sum, where everyone acts on one roll at once):
the actions after it are played again through the rules without it. Refused by name when
a roll came after it (`undo_before_roll`: the dice answered the state with it; the host
undoes back that far) or when one of those actions no longer applies without it
(`acted_on`: "player 1's move since needs your last action"). The rule is the game's, not the session's:
whatever the game accepts again stands.
A player's undo reaches back at most `UNDO_REACH` actions (`undo_too_far` beyond: the host
undoes back that far): a step without a roll can grow without end (Sixis' opening handed on
and back), and every change works out who may undo what (`undo_offers`), so without a reach
each change at such a table cost time in the length of that step, on the server's one loop.
Who may not undo is told why (`undo_answers`: each seat's refusal), so a screen whose undo
went away says so, and an undo sent from an older screen gets that reason, not "stale".
An undo is stored as an undo by its maker and nothing more: the same rule names the same
action when the log is read again (`standing`, a restart's replay), and a record keeps only
the actions that stand.

Pure: no I/O. Persistence (the web layer's SQLite log) stores `Session.actions` and replays
them through `Session.from_record`.
"""

from __future__ import annotations

from collections import Counter
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
    seat_name,
)
from companion.rules.registry import find_game

HOST = "host"
# how a player's undo refusal points at the host, who undoes any action (one by one, from
# the last): a screen whose host's device holds a seat, and so undoes as its player,
# words it for that device (views.undo_refusal_for)
HOST_UNDOES_BACK = "the host can undo back to it"
HOST_UNDOES_OTHERS = "only the host may undo another player's"
# how a player's refused roll (`penalty_for_other`) points at the host's table view, which
# may enter it: the views word it for the host's own seated device and leave it out while
# that device acts as its player only (views.roll_refusal_for)
HOST_ENTERS_THE_ROLL = "or the host enters the roll"
CAMERA = "camera"
# the table itself: a move a throw implied for a player who had not acted when the next roll
# came (`Throw.closes`: an automatic pass); only the host takes one back
AUTO = "auto"

EntryT = TypeVar("EntryT")

# how many of the latest actions a player's own undo looks through for theirs (and so the
# most it plays again): far above a real step (a Qwixx white sum of 12 players is 14, a
# Sixto crossing a few taps a player), and it bounds what every change costs to work out
# who may undo what (`Session.undo_offers`) however long a step without a roll grows
UNDO_REACH = 100


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
    # for an undo: the index in `Session.actions` of the first action it takes back, and
    # the states of the later actions played again without them (empty: it takes back the
    # last)
    at: int = 0
    replayed: tuple[object, ...] = ()
    maker: str = HOST  # for an undo: who takes the action back

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


def undo_target(
    actions: Sequence[EntryT],
    by: str,
    is_implied: Callable[[EntryT], bool],
    reach: int | None = None,
) -> int | None:
    """The index in `actions` (those that stand, oldest first; each with its maker as
    `.by`) of the action an undo by `by` takes back; None when `by` has none to take back.
    The host takes back the last action, whoever made it; anyone else the latest of their
    own that no throw implied (an implied move goes with its roll), even when others have
    acted since (`Session.propose_undo` checks that their actions stand without it). The
    rule of the session and of every reader of a stored log (`standing`). `reach`: look
    through at most that many of the latest actions (None when `by`'s is further back)."""
    if not actions:
        return None
    if by == HOST:
        return len(actions) - 1
    stop = -1 if reach is None else max(-1, len(actions) - 1 - reach)
    for index in range(len(actions) - 1, stop, -1):
        action = actions[index]
        if getattr(action, "by", None) == by and not is_implied(action):
            return index
    return None


def acted_on(action: Action) -> Rejection:
    """The refusal of a player's undo that `action`, made since, needs. Its player can undo
    it first only when they made it themselves: a move the host's device made for them is
    theirs to undo no more than any other player's (`undo_target`: a player undoes the
    latest action they made), so only the host's undo back to it is offered then."""
    who = seat_name(action.move.player)
    if action.by == str(action.move.player):
        return Rejection(
            Reason.NOT_ALLOWED,
            "acted_on",
            f"{who}'s move since needs your last action: once {who} undoes that move, you "
            f"can undo yours; {HOST_UNDOES_BACK}",
        )
    return Rejection(
        Reason.NOT_ALLOWED,
        "acted_on",
        f"the host's move for {who} since needs your last action; {HOST_UNDOES_BACK}",
    )


def implied_before(
    actions: Sequence[EntryT], index: int, is_implied: Callable[[EntryT], bool]
) -> int:
    """How many actions just before `index` its throw implied (taken back with it)."""
    count = 0
    while count < index and is_implied(actions[index - 1 - count]):
        count += 1
    return count


def standing(
    entries: Sequence[EntryT],
    is_undo: Callable[[EntryT], bool],
    is_implied: Callable[[EntryT], bool] = lambda entry: False,
) -> list[EntryT]:
    """The actions of a log of actions and undos that stand: each undo takes back the action
    `undo_target` names for its maker (`.by`) and the moves its throw implied before it, as
    `Session.undo` does (for logs read without a Session)."""
    return replay_undos(entries, is_undo, is_implied)[0]


def replay_undos(
    entries: Sequence[EntryT],
    is_undo: Callable[[EntryT], bool],
    is_implied: Callable[[EntryT], bool] = lambda entry: False,
) -> tuple[list[EntryT], dict[int, EntryT]]:
    """`standing`'s walk of a log: the actions that stand, and for each undo that took an
    action back (by its index in `entries`) the action `undo_target` named (without the
    moves its throw implied), so a reader can say what an undo took back."""
    stack: list[EntryT] = []
    taken: dict[int, EntryT] = {}
    for index, entry in enumerate(entries):
        if not is_undo(entry):
            stack.append(entry)
            continue
        target = undo_target(stack, getattr(entry, "by", HOST), is_implied)
        if target is not None:
            taken[index] = stack[target]
            first = target - implied_before(stack, target, is_implied)
            del stack[first : target + 1]
    return stack, taken


def refuse_a_roll_among(later: Sequence[Action]) -> None:
    """Refuse a player's undo of an action the dice were rolled after (`undo_before_roll`):
    the roll answered the state with it."""
    if any(isinstance(action.move, Roll) for action in later):
        raise Rejection(
            Reason.NOT_ALLOWED,
            "undo_before_roll",
            "the dice have been rolled since your last action, so it can no longer be "
            f"undone on its own; {HOST_UNDOES_BACK}",
        )


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
        # how many actions that stand each maker made (no implied ones): whether a player
        # has an action of their own to undo, without a walk over the whole game
        self._made: Counter[str] = Counter()
        # the undo the latest change was: who made it and the action it took back (None
        # when the latest change was no undo), so every other screen can say what went
        self.latest_undo: tuple[str, Action] | None = None
        # the penalty that action had cost its player (`penalty_of`), which the undo took
        # back: every other screen says so ("Ann took back: Pass (-5 penalty)")
        self.latest_undo_penalty = 0
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
                    f"{name} with a penalty: {name} passes (or crosses) first, "
                    f"{HOST_ENTERS_THE_ROLL}",
                )
        return proposals

    def propose_undo(self, by: str = HOST, seen: int | None = None) -> Proposal:
        """Check taking back an action, changing nothing (`seen`, when given, must be the
        current state id). The host takes back the last action; a player their own latest
        (`undo_target`), also when others have acted since, as long as no roll came after
        it (the dice answered the state with it; the host undoes back that far) and the
        actions since still apply legally without it: they are played again through the
        rules, and the first that no longer would is named (`acted_on`). A throw's roll
        goes with the moves the throw implied before it. An undo from an older screen
        (`seen` not current) is stale, unless no undo by `by` is allowed now at all: then
        the Rejection says why (the roll or the action that came since), which tells the
        player more than "the game moved on"."""
        proposal = self._undo_proposal(by)
        if seen is not None and seen != self.state_id:
            raise stale_view()
        return proposal

    def _undo_proposal(self, by: str) -> Proposal:
        if not self.actions:
            raise Rejection(Reason.NOTHING_TO_UNDO, "nothing_to_undo", "there is nothing to undo")
        target = self._undo_target(by)
        at = target - implied_before(self.actions, target, lambda action: action.implied)
        later = self.actions[target + 1 :]
        replayed = self._replayed_without(self.states[at], later)
        state = replayed[-1] if replayed else self.states[at]
        return Proposal(
            self.state_id,
            state,
            self.actions[target],
            undo=True,
            taken=target + 1 - at,
            at=at,
            replayed=replayed,
            maker=by,
        )

    def _undo_target(self, by: str) -> int:
        """The index of the action an undo by `by` takes back (`undo_target`), looked for
        among the latest `UNDO_REACH` actions only for a player. Raises a Rejection naming
        why there is none: no action of theirs stands (`undo_own_only`), a roll came after
        it (`undo_before_roll`), or it lies further back than the reach (`undo_too_far`)."""
        reach = None if by == HOST else UNDO_REACH
        target = undo_target(self.actions, by, lambda action: action.implied, reach)
        if target is not None:
            return target
        if not self._made[by]:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "undo_own_only",
                f"you have no action of your own to undo; {HOST_UNDOES_OTHERS}",
            )
        refuse_a_roll_among(self.actions[-UNDO_REACH:])
        raise Rejection(
            Reason.NOT_ALLOWED,
            "undo_too_far",
            f"more than {UNDO_REACH} actions have been made since your last one, so it can no "
            f"longer be undone on its own; {HOST_UNDOES_BACK}",
        )

    def _replayed_without(self, state: object, later: Sequence[Action]) -> tuple[object, ...]:
        """The states of `later` (the actions after the one an undo takes back) played
        again from `state`, the state before it. Raises a Rejection when a roll is among
        them, or one of them no longer applies."""
        refuse_a_roll_among(later)
        states: list[object] = []
        for action in later:
            try:
                state = self.game.play(state, action.move)
            except Rejection as exc:
                raise acted_on(action) from exc
            states.append(state)
        return tuple(states)

    def commit(self, proposal: Proposal) -> None:
        """Make a proposed change. Refused (STALE_STATE) when anything changed since it was
        proposed: a proposal is made and committed under one lock."""
        if proposal.base_id != self.state_id:
            raise stale_view()
        self.state_id += 1
        if proposal.undo:
            at, replayed = proposal.at, proposal.replayed
            self.latest_undo_penalty = self.penalty_of(proposal.action)  # while it stands
            del self.states[at + 1 :]
            self.states.extend(replayed)
            self._made.subtract(
                a.by for a in self.actions[at : at + proposal.taken] if not a.implied
            )
            del self.actions[at : at + proposal.taken]
            # the states played again are reached now
            del self._reached[at + 1 :]
            self._reached.extend([self.state_id] * len(replayed))
            self._undone_at = self.state_id
            self.latest_undo = (proposal.maker, proposal.action)
        else:
            self.latest_undo, self.latest_undo_penalty = None, 0
            self.states.append(proposal.state)
            self.actions.append(proposal.action)
            if not proposal.action.implied:
                self._made[proposal.action.by] += 1
            self._reached.append(self.state_id)

    def state_met(self, action: Action) -> object:
        """The state `action` (one that stands) met when it was made: what its words may
        depend on (a pass's penalty, a Sixis take's side). Looked for from the latest, as
        an undo's action lies among the latest `UNDO_REACH`."""
        for index in range(len(self.actions) - 1, -1, -1):
            if self.actions[index] is action:
                return self.states[index]
        raise ValueError("the action does not stand")

    def penalty_of(self, action: Action) -> int:
        """The penalty `action` (one that stands) cost its player when it was made (the
        game's `penalty` on the state it met; 0: none): what an undo of it takes back."""
        return int(self.game.penalty(self.state_met(action), action.move))

    def undo_offers(self) -> tuple[tuple[str, Action], ...]:
        """Who may undo now and the action each would take back: the host, and every seat
        whose `propose_undo` would be accepted (what a screen offers: "Undo my red 5"), in
        that order."""
        return tuple((by, a) for by, a in self.undo_answers() if isinstance(a, Action))

    def undo_answers(self) -> tuple[tuple[str, Action | Rejection], ...]:
        """What an undo by the host and by each seat would do now (`propose_undo`): the
        action it would take back, or the Rejection that names why it may not (a screen
        whose offer went away says why). The host first, then the seats that acted since
        the last roll (latest first: the only ones an undo may be offered to), then the
        other seats, whose refusals are found without playing anything again."""
        # only an action since the last roll (or that roll), among the latest UNDO_REACH,
        # may be a player's to take back: the walk stops there, however long the game or
        # the step
        makers: list[str] = [HOST]
        for action in reversed(self.actions[-UNDO_REACH:]):
            if action.by not in makers and not action.implied:
                makers.append(action.by)
            if isinstance(action.move, Roll):
                break
        seats = [str(seat) for seat in range(len(self.players))]
        answers: list[tuple[str, Action | Rejection]] = []
        for by in [*makers, *(seat for seat in seats if seat not in makers)]:
            if by in (CAMERA, AUTO):  # the table's own actions: the host takes them back
                continue
            try:
                answers.append((by, self.propose_undo(by).action))
            except Rejection as exc:
                answers.append((by, exc))
        return tuple(answers)

    def act(
        self, move: Move, by: str | None = None, seen: int | None = None, implied: bool = False
    ) -> Any:
        """Check and apply `move` (`propose`, then `commit`); returns the new state."""
        proposal = self.propose(move, by, seen, implied)
        self.commit(proposal)
        return proposal.state

    def undo(self, by: str = HOST, seen: int | None = None) -> Action:
        """Take back an action (`propose_undo`, then `commit`); returns it."""
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
