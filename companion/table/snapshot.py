"""`Snapshot`: the immutable picture of a table's game that every screen draws from.

Its own module so that the views (which draw snapshots) and the tables (which publish them)
do not import each other: tables -> render -> views -> snapshot, one way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.rules.base import Game, Outcome, Rejection, Roll, Score, Throw, Turn
from companion.rules.session import Action, Session


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
    last_by: str | None  # who made the last action (the one the host's undo takes back)
    ended_by_host: bool
    step_id: int = 0
    # that end (ended_by_host) was made on the server's own machine, not the host's device
    ended_on_server: bool = False  # the state id at which the current step began (Session.step_id)
    # the table's option: the next roll passes for those who have not acted (Throw.closes)
    auto_pass: bool = True
    # the table the host started to play this game again (Tables.play_again), once there is
    # one: a finished screen points its devices there
    next_table: str | None = None
    # the table its host's device imported this game's exported record to (Tables.
    # point_continuation): a finished screen says the game goes on elsewhere, and no more
    continued: bool = False
    # who may undo now ("host", a seat as str) and the action each would take back
    # (Session.undo_offers)
    undo_offers: tuple[tuple[str, Action], ...] = ()
    # who may not undo now and the Rejection that says why (Session.undo_answers): a screen
    # whose undo button went away says why
    undo_refusals: tuple[tuple[str, Rejection], ...] = ()
    # the undo this state came from: who made it and the action it took back
    # (Session.latest_undo); None when the latest change was no undo
    latest_undo: tuple[str, Action] | None = None
    # the state each offered undo's action met when it was made (Session.state_met), by
    # who may undo: the undo button says what it takes back ("Undo pass (−5 penalty)")
    undo_met: tuple[tuple[str, object], ...] = ()
    # the penalty each offered undo's action cost its player (Session.penalty_of), by who
    # may undo: what the undo takes back, "Undo pass (−5 penalty)"
    undo_penalties: tuple[tuple[str, int], ...] = ()
    # the penalty the action `latest_undo` took back had cost (Session.latest_undo_penalty)
    latest_undo_penalty: int = 0
    # the latest change was a roll (not an undo back to one): a screen reads it out, also
    # when its dice equal the roll before (Sixes keeps its two dice shown between rolls)
    rolled: bool = False
    # the host's device holds a seat (Table.host_seated): it acts as that player only (it
    # marks no other sheet: Viewer.may_mark, enters no roll that costs another a penalty:
    # penalty_for_other), so no screen points the players at the host's device for that
    host_seated: bool = False

    def undo_offer(self, by: str) -> Action | None:
        """The action an undo by `by` would take back now; None: `by` may not undo (nor
        may anyone in a game the host ended or played again: `Table.undo`)."""
        if self.ended_by_host or self.next_table is not None:
            return None
        return next((action for who, action in self.undo_offers if who == by), None)

    def undo_state_met(self, by: str) -> object:
        """The state the action an undo by `by` would take back met when it was made (None
        where `by` may not undo)."""
        return next((state for who, state in self.undo_met if who == by), None)

    def undo_penalty(self, by: str) -> int:
        """The penalty the action an undo by `by` would take back cost its player (0: none,
        or `by` may not undo)."""
        return next((penalty for who, penalty in self.undo_penalties if who == by), 0)

    def undo_refusal(self, by: str) -> Rejection | None:
        """Why `by` may not undo now, by the session's rule (`undo_before_roll`,
        `acted_on`, `undo_too_far`, `undo_own_only`, `nothing_to_undo`); None when it may,
        or when the game is over by the host's hand (its end screen says so)."""
        if self.ended_by_host or self.next_table is not None:
            return None
        return next((refusal for who, refusal in self.undo_refusals if who == by), None)

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.ended_by_host

    @property
    def throw(self) -> Throw | None:
        """What a new throw of the dice means now at this table (`Turn.on_throw` with the
        table's automatic passes); None when the game is over or expects no dice."""
        return None if self.finished else self.turn.on_throw(self.auto_pass)


def snapshot_of(
    session: Session,
    *,
    ended_by_host: bool = False,
    ended_on_server: bool = False,
    auto_pass: bool = True,
    next_table: str | None = None,
    continued: bool = False,
    host_seated: bool = False,
) -> Snapshot:
    """The Snapshot of `session` with the table's own facts (Table._take_snapshot): one
    place says what a screen is drawn from, the table and the tests alike."""
    answers = session.undo_answers()
    offers = tuple((by, a) for by, a in answers if isinstance(a, Action))
    latest = session.actions[-1] if session.actions else None
    return Snapshot(
        state_id=session.state_id,
        game=session.game,
        state=session.state,
        players=tuple(session.players),
        turn=session.turn(),
        scores=session.scores(),
        outcome=session.outcome(),
        last_by=session.last_by,
        ended_by_host=ended_by_host,
        ended_on_server=ended_on_server,
        step_id=session.step_id,
        auto_pass=auto_pass,
        next_table=next_table,
        continued=continued,
        undo_offers=offers,
        undo_met=tuple((by, session.state_met(action)) for by, action in offers),
        undo_penalties=tuple((by, session.penalty_of(action)) for by, action in offers),
        undo_refusals=tuple((by, a) for by, a in answers if isinstance(a, Rejection)),
        latest_undo=session.latest_undo,
        latest_undo_penalty=session.latest_undo_penalty,
        rolled=session.latest_undo is None and latest is not None and isinstance(latest.move, Roll),
        host_seated=host_seated,
    )
