"""A player's undo past others' actions (Session.propose_undo) reaches back a bounded number
of actions: a step without a roll can grow without end (Sixis' opening handed on and back
before a later round's first roll), and every change works out who may undo what
(Session.undo_offers, in every Table snapshot), so an unbounded look back made each change
at such a table cost time in the length of that step, on the server's one event loop.
docs/RELIABILITY.md item 21."""

from __future__ import annotations

import pytest

from companion.rules.base import Die, Rejection, Roll
from companion.rules.registry import find_game
from companion.rules.session import HOST, UNDO_REACH, Session
from companion.rules.sixis import SIXIS, Starter, TakeCard

CHAIN = 2_000  # hand-ons in one step: far beyond any real step, well within an hour's taps


def sixis_round_two() -> Session:
    """A 3-player Sixis game in its second round before the first roll: seat 1 opens it
    and may hand the opening on (`Starter`). Seat 0 rolled six 4s and took the Sixis card."""
    game = find_game("sixis")
    session = Session(game, game.parse_options({"players": 3, "rounds": 2, "deal_seed": 7}))
    colours = session.turn().dice.colours  # type: ignore[union-attr]
    session.act(Roll(dice=tuple(Die(colour, 4) for colour in colours)), by="0")
    session.act(TakeCard(0, SIXIS))
    assert (session.state.round, session.state.starter, session.state.opener_open) == (2, 1, True)
    return session


def long_step(session: Session) -> None:
    """Seat 1 hands the opening to seat 2; then seats 2 and 0 hand it back and forth."""
    session.act(Starter(1, 2))
    for _ in range(CHAIN):
        opener = session.state.starter
        session.act(Starter(opener, 0 if opener == 2 else 2))


class OutOfReach:
    """An action further back than a player's undo looks: reading it fails the test."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"an undo read .{name} of an action beyond the last {UNDO_REACH}")


def test_working_out_who_may_undo_reads_only_the_latest_actions() -> None:
    """Every change at the table takes a snapshot with `undo_offers`, and an undo request
    from any device (a screen that only watches included) looks for its maker's action:
    neither reads an action further back than UNDO_REACH, however long the step. Before:
    both walked the whole step (50,000 hand-ons: undo_offers 36 ms per change, an undo of
    seat 1's hand-on 17 ms per request)."""
    session = sixis_round_two()
    long_step(session)
    far = len(session.actions) - UNDO_REACH
    session.actions[:far] = [OutOfReach() for _ in range(far)]  # type: ignore[misc]
    offers = dict(session.undo_offers())
    assert set(offers) == {HOST, "0"}  # seat 2 acted last; seat 0 is the last but one
    for by in ("1", "viewer"):
        with pytest.raises(Rejection):
            session.propose_undo(by)


def test_a_players_action_further_back_than_the_reach_is_undone_by_the_host() -> None:
    session = sixis_round_two()
    long_step(session)
    with pytest.raises(Rejection) as info:
        session.propose_undo("1")
    assert info.value.rule == "undo_too_far"
    assert str(UNDO_REACH) in info.value.message and "host" in info.value.message
    assert "1" not in dict(session.undo_offers())
    with pytest.raises(Rejection) as info:  # a screen that never acted is told so
        session.propose_undo("viewer")
    assert info.value.rule == "undo_own_only"
    last = session.actions[-1]
    assert session.undo(HOST) == last  # the host undoes back through the step, one by one


def test_an_undo_within_reach_still_takes_back_a_players_action_past_others() -> None:
    """The reach bounds nothing a real step needs: seat 1's hand-on, with seat 2's after it,
    is taken back only when seat 2's still applies without it (here it cannot: seat 2
    opened only because seat 1 handed it on); the last maker undoes as before."""
    session = sixis_round_two()
    session.act(Starter(1, 2))
    session.act(Starter(2, 0))
    with pytest.raises(Rejection) as info:
        session.propose_undo("1")
    assert info.value.rule == "acted_on"
    assert dict(session.undo_offers()).keys() == {HOST, "2"}
    assert session.undo("2").move == Starter(2, 0)
    assert session.undo("1").move == Starter(1, 2)
    assert session.state.starter == 1
    assert dict(session.undo_offers()).keys() == {HOST, "0"}
