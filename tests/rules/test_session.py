"""The session: the one mutable holder of a game (states, actions, undo, state id), and
game records, played through the real Qwixx engine."""

from __future__ import annotations

import copy
import json
import operator
import random
from functools import partial
from pathlib import Path

import pytest

from companion.rules.base import Die, Move, Reason, Rejection, Roll
from companion.rules.qwixx import GAME as QWIXX
from companion.rules.qwixx import Cross, Options, Pass
from companion.rules.registry import GAME_NAMES
from companion.rules.session import (
    HOST,
    Action,
    RecordError,
    Session,
    replay_record,
    standing,
    undo_target,
)

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"

KARI_ROLL = Roll(
    dice=(
        Die("white", 4),
        Die("white", 1),
        Die("red", 3),
        Die("yellow", 6),
        Die("green", 5),
        Die("blue", 6),
    )
)


def new_session() -> Session:
    return Session(QWIXX, Options(players=3), ["Kari", "Ola", "Mia"])


def test_state_id_counts_every_change_including_undo() -> None:
    session = new_session()
    assert session.state_id == 0
    session.act(KARI_ROLL)
    session.act(Cross(0, "yellow", 5))
    assert session.state_id == 2
    session.undo(by="0")
    assert session.state_id == 3
    assert len(session.actions) == 1
    assert session.state == session.states[-1]


def test_stale_view_is_refused_and_changes_nothing() -> None:
    session = new_session()
    session.act(KARI_ROLL, seen=0)
    with pytest.raises(Rejection) as info:
        session.act(Cross(1, "red", 5), seen=0)
    assert info.value.reason is Reason.STALE_STATE
    assert session.state_id == 1 and len(session.actions) == 1


def test_a_player_marks_only_their_own_sheet() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    with pytest.raises(Rejection) as info:
        session.act(Cross(1, "red", 5), by="0")
    assert info.value.reason is Reason.NOT_ALLOWED
    session.act(Cross(1, "red", 5), by=HOST)  # the host may mark for a player
    assert session.actions[-1].by == HOST


def test_undo_only_by_its_author_or_the_host() -> None:
    session = new_session()
    with pytest.raises(Rejection) as empty:
        session.undo()
    assert empty.value.reason is Reason.NOTHING_TO_UNDO
    session.act(KARI_ROLL)
    session.act(Cross(1, "red", 5))
    with pytest.raises(Rejection) as other:
        session.undo(by="0")
    assert other.value.rule == "undo_own_only"
    assert session.undo(by="1").move == Cross(1, "red", 5)
    assert session.undo(by=HOST).move == KARI_ROLL
    assert session.state == QWIXX.setup(Options(players=3))


def test_record_round_trip_replays_to_the_same_state() -> None:
    session = new_session()
    for move in (KARI_ROLL, Cross(0, "yellow", 5), Cross(1, "red", 5), Pass(2)):
        session.act(move)
    record = json.loads(json.dumps(session.to_record()))
    again = replay_record(record)
    assert again.state == session.state
    assert again.players == ["Kari", "Ola", "Mia"]
    assert [a.by for a in again.actions] == ["camera", "0", "1", "2"]


@pytest.mark.parametrize(
    ("change", "index", "fragment"),
    [
        (lambda r: r.update(schema=99), None, "schema"),
        (lambda r: r.update(game="chess"), None, "unknown game"),
        (lambda r: r.update(actions="none"), None, "'actions' must be a list"),
        (lambda r: r.update(players=[1, 2]), None, "'players'"),
        (lambda r: r["options"].update(players=9), None, "players"),
        (lambda r: r["actions"][1]["move"].update(kind="teleport"), 1, "unknown move kind"),
        (lambda r: r["actions"][1]["move"].update(number="five"), 1, "expected an integer"),
        (lambda r: r["actions"][1]["move"].update(number=3), 1, "white"),
        (lambda r: r["actions"].insert(1, r["actions"][0]), 1, "no roll is expected"),
    ],
)
def test_broken_records_name_the_problem(change, index, fragment) -> None:  # type: ignore[no-untyped-def]
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Cross(0, "yellow", 5))
    record = copy.deepcopy(session.to_record())
    change(record)
    with pytest.raises(RecordError) as info:
        replay_record(record)
    assert info.value.index == index
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_example_record_replays_to_the_end(name: str) -> None:
    record = json.loads((RECORDS / f"{name}.json").read_text())
    session = replay_record(record)
    assert session.outcome() is not None, f"docs/records/{name}.json is not a complete game"
    assert json.loads(json.dumps(session.to_record())) == record


# -- propose and commit ------------------------------------------------------------------


def test_a_proposal_changes_nothing_until_it_is_committed() -> None:
    session = new_session()
    proposal = session.propose(KARI_ROLL)
    assert (session.state_id, session.actions, len(session.states)) == (0, [], 1)
    assert proposal.base_id == 0 and proposal.state_id == 1 and proposal.action.by == "camera"
    session.commit(proposal)
    assert session.state_id == 1 and session.state == proposal.state
    assert session.actions[-1].move == KARI_ROLL


def test_a_proposal_overtaken_by_another_change_is_refused() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    first = session.propose(Cross(0, "yellow", 5))
    session.act(Pass(1))
    with pytest.raises(Rejection) as info:
        session.commit(first)
    assert info.value.reason is Reason.STALE_STATE
    assert [a.move for a in session.actions] == [KARI_ROLL, Pass(1)]


def test_an_undo_is_proposed_and_committed_like_a_move() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Cross(0, "yellow", 5))
    proposal = session.propose_undo(by="0", seen=2)
    assert proposal.undo and proposal.action.move == Cross(0, "yellow", 5)
    assert session.state_id == 2 and len(session.actions) == 2
    session.commit(proposal)
    assert session.state_id == 3 and len(session.actions) == 1
    with pytest.raises(Rejection) as stale:
        session.propose_undo(by=HOST, seen=2)
    assert stale.value.reason is Reason.STALE_STATE


def test_the_session_says_the_penalty_an_action_and_the_latest_undo_took() -> None:
    """What the undo takes back is the session's to say (`penalty_of`, `latest_undo_penalty`,
    from the game's `penalty` on the state the action met): the undo button and the other
    devices' news word it ("Undo pass (−5 penalty)"), with no score arithmetic of theirs."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    session.act(KARI_ROLL)
    session.act(Pass(1))
    session.act(Pass(0))
    assert session.penalty_of(session.actions[-1]) == 0  # the white sum's pass is free
    session.act(Pass(0))
    assert session.penalty_of(session.actions[-1]) == -5
    session.undo(by="0")
    assert session.latest_undo_penalty == -5
    session.undo(by="0")  # her white sum's pass
    assert session.latest_undo_penalty == 0


def test_undo_permission_is_one_rule() -> None:
    """`undo_target`: the host's undo takes the last action, a player's their own latest
    that no throw implied; the session and every log reader ask it."""
    actions = [Action(KARI_ROLL, "camera"), Action(Cross(1, "red", 5), "1")]
    implied = lambda action: action.implied  # noqa: E731
    assert undo_target(actions, HOST, implied) == 1 and undo_target(actions, "1", implied) == 1
    assert undo_target(actions, "0", implied) is None and undo_target([], HOST, implied) is None
    actions.append(Action(Pass(2), "2"))
    assert undo_target(actions, "1", implied) == 1  # others have acted since
    actions = [Action(Pass(1), "1", implied=True), Action(KARI_ROLL, "1")]
    assert undo_target(actions, "1", implied) == 1  # the roll, not the move it implied


def test_standing_entries_follow_the_session_undo() -> None:
    log = ["roll", "a", "undo", "b", "c", "undo", "undo", "undo", "undo", "d"]
    assert standing(log, lambda e: e == "undo") == ["d"]
    assert standing(["a", "b", "undo", "c"], lambda e: e == "undo") == ["a", "c"]


# -- staleness: one rule from the Turn ----------------------------------------------------


def test_taps_drawn_in_the_same_white_sum_step_are_current() -> None:
    """Qwixx's white sum: everyone acts once, so a tap drawn anywhere in the step is judged
    by the rules; a tap drawn before the roll, or in the white sum during the colour step,
    is stale; a roll must be drawn at the current state."""
    session = new_session()
    session.act(KARI_ROLL, seen=0)  # state 1: the white sum
    assert session.step_id == 1
    session.act(Pass(0), seen=1)
    session.act(Pass(1), seen=1)  # drawn before the first pass: still current
    assert session.step_id == 1 and session.turn().moves_in_step == 2
    with pytest.raises(Rejection) as before_roll:
        session.act(Pass(2), seen=0)
    assert before_roll.value.reason is Reason.STALE_STATE
    session.act(Pass(2), seen=2)  # the colour step begins (state 4)
    assert session.step_id == 4
    assert not session.is_current(Pass(0), 3)
    assert session.is_current(Pass(0), 4)
    assert not session.is_current(KARI_ROLL, 3)


def test_a_view_drawn_before_an_undo_is_stale() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Pass(0))
    session.undo(by="0")  # state 3, the white sum again
    assert session.step_id == 3
    assert not session.is_current(Pass(1), 2)
    session.act(Pass(1), seen=3)


def test_sixto_crosses_of_one_turn_do_not_make_other_screens_stale() -> None:
    from companion.rules.sixto import GAME as SIXTO
    from companion.rules.sixto import Keep

    session = Session(SIXTO, SIXTO.options_for(2))
    roll = Roll(dice=tuple(Die(c, 1) for c in SIXTO.dice_colours(session.options)))
    session.act(roll)
    session.act(Keep(0))  # state 2: everyone crosses
    first = next(m for m in session.legal_moves(0) if m.kind == "cross")
    session.act(first, seen=2)
    other = session.legal_moves(1)[0]
    assert session.is_current(other, 2)  # drawn before player 1's cross: still this step
    assert not session.is_current(other, 1)


def test_the_sixes_call_goes_on_after_the_winning_pound() -> None:
    from companion.rules.sixes import GAME as SIXES
    from companion.rules.sixes import Pound

    session = Session(SIXES, SIXES.options_for(3))
    assert session.turn().race
    session.act(Pound(1), seen=0)
    assert session.step_id == 0  # the call began at state 0
    with pytest.raises(Rejection) as lost:
        session.act(Pound(2), seen=0)
    assert lost.value.rule == "pound_taken"
    session.act(Roll(dice=(Die("white", 3), Die("white", 4))), seen=1)
    assert not session.is_current(Pound(2), 1)


# -- a player's undo after others have acted -------------------------------------------


def sixto_crossing() -> tuple[Session, Move, Move]:
    """A 3-player Sixto game in its crossing step (Eve, Finn, Gus), with a purple cross for
    Finn (seat 1) and a red one for Gus (seat 2) the roll allows."""
    from companion.rules.sixto import GAME as SIXTO
    from companion.rules.sixto import Keep

    for value in range(1, 7):
        session = Session(SIXTO, SIXTO.options_for(3), ["Eve", "Finn", "Gus"])
        colours = SIXTO.dice_colours(session.options)
        session.act(Roll(dice=tuple(Die(colour, value) for colour in colours)))
        session.act(Keep(0))
        finn = [m for m in session.legal_moves(1) if getattr(m, "colour", "") == "purple"]
        gus = [m for m in session.legal_moves(2) if getattr(m, "colour", "") == "red"]
        if finn and gus:
            return session, finn[0], gus[0]
    raise AssertionError("no roll lets Finn cross purple and Gus red")


def test_a_player_undoes_their_own_cross_after_another_player_crossed() -> None:
    """The café's Sixto case: Finn taps purple by mistake, then Gus crosses red. Finn's
    undo takes back his own cross and Gus's stands (it was refused: undo_own_only, and
    the host's undo would have taken Gus's first). The log read again, the record and a
    replay agree."""
    session, finns, guss = sixto_crossing()
    session.act(finns, by="1")
    session.act(guss, by="2")
    assert dict(session.undo_offers()) == {
        HOST: Action(guss, "2"),
        "2": Action(guss, "2"),
        "1": Action(finns, "1"),
    }
    assert session.undo(by="1") == Action(finns, "1")
    assert [a.move for a in session.actions][2:] == [guss]
    assert session.state_id == 5
    without = Session(session.game, session.options, session.players)
    for action in session.actions:
        without.act(action.move, by=action.by)
    assert session.state == without.state  # as if Finn had never crossed
    assert replay_record(session.to_record()).state == session.state
    undo = Action(Pass(1), "1")  # Finn's undo as a stored log holds it: its maker only
    log = [*session.actions[:2], Action(finns, "1"), Action(guss, "2"), undo]
    assert standing(log, lambda entry: entry is undo)[2:] == [Action(guss, "2")]
    session.act(finns, by="1", seen=5)  # Finn may cross again


def after_karis_colour_cross() -> Session:
    """Qwixx: Ola passes the white sum, Kari (active) crosses it, Mia passes, so Kari's
    colour step begins, and Kari crosses a colour."""
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Pass(1))  # Ola
    session.act(Cross(0, "yellow", 5))  # Kari, the white sum 4 + 1
    session.act(Pass(2))  # Mia: Kari's colour step
    session.act(Cross(0, "red", 4))  # Kari: white 1 + red 3
    return session


def test_a_players_undo_is_refused_when_an_action_since_needs_it() -> None:
    """Qwixx: Ola passes the white sum, Kari (active) crosses it, Mia passes, so Kari's
    colour step begins, and Kari crosses a colour. Ola's pass can no longer go on its own:
    without it the white sum is still open and Kari's colour cross would not apply."""
    session = after_karis_colour_cross()
    before = (session.state_id, list(session.actions), session.state)
    with pytest.raises(Rejection) as refused:
        session.undo(by="1")
    assert refused.value.reason is Reason.NOT_ALLOWED and refused.value.rule == "acted_on"
    assert refused.value.message.startswith("player 1's move since needs your last action")
    assert (session.state_id, list(session.actions), session.state) == before
    assert "1" not in dict(session.undo_offers())


def test_an_undo_a_move_the_host_made_for_another_needs_points_at_the_host_only() -> None:
    """As above, but the host's device crossed Kari's colour for her (Kari has no phone).
    Ola read "once player 1 undoes that move, you can undo yours", though Kari's undo
    takes back only what Kari's device made (`undo_target`): only the host's undo helps."""
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Pass(1))  # Ola
    session.act(Cross(0, "yellow", 5))  # Kari, the white sum 4 + 1
    session.act(Pass(2))  # Mia: Kari's colour step
    session.act(Cross(0, "red", 4), by=HOST)  # the host's device, for Kari
    with pytest.raises(Rejection) as refused:
        session.undo(by="1")
    assert refused.value.rule == "acted_on"
    assert refused.value.message == (
        "the host's move for player 1 since needs your last action; the host can undo back to it"
    )


def test_a_players_undo_is_refused_once_the_dice_rolled_again() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Pass(1))  # Ola
    session.act(Pass(0))
    session.act(Pass(2))  # Kari's colour step
    session.act(Pass(0))  # Kari: nothing at all, a penalty; Ola rolls next
    session.act(KARI_ROLL)
    with pytest.raises(Rejection) as refused:
        session.undo(by="1")
    assert refused.value.rule == "undo_before_roll"
    assert "1" not in dict(session.undo_offers())


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_offered_undo_is_the_game_played_without_that_action(name: str) -> None:
    """Random games of every game, each player acting for their seat: at every point, each
    undo a seat is offered (`undo_offers`, the button) leaves the state of the game played
    from its start without the action it takes back, and the log rule (`standing`) names
    the same action; an undo not offered is refused. (Qwixx's white sum and Sixto's crossing
    offer undos past other players' actions; the others' steps are one player's at a time.)"""
    from companion.rules.registry import find_game
    from companion.simulate import random_action

    game = find_game(name)
    offered_past_others = 0
    for seed in range(4):
        rng = random.Random(seed)
        players = game.players.low + seed % 2
        session = Session(game, game.options_for(players))
        while session.outcome() is None and len(session.actions) < 400:
            move = random_action(game, session.state, rng)
            session.act(move)
            offers = dict(session.undo_offers())
            for seat in range(players):
                by = str(seat)
                if by not in offers:
                    with pytest.raises(Rejection):
                        session.propose_undo(by)
                    continue
                proposal = session.propose_undo(by)
                kept = [
                    a
                    for i, a in enumerate(session.actions)
                    if not proposal.at <= i < proposal.at + proposal.taken
                ]
                offered_past_others += proposal.at + proposal.taken < len(session.actions)
                again = Session(game, session.options)
                for action in kept:
                    again.act(action.move, by=action.by, implied=action.implied)
                assert again.state == proposal.state
                undo = Action(Pass(0), by)  # as a stored log holds it: its maker only
                assert standing([*session.actions, undo], partial(operator.is_, undo)) == kept
    if name in ("qwixx", "sixto"):  # everyone acts on one roll at once
        assert offered_past_others, f"{name}: no undo past another player's action offered"


def test_an_undo_from_an_older_screen_names_why_it_is_no_longer_allowed() -> None:
    """Ola's undo tap, drawn before the next roll, reaches the session after it: the refusal
    says the dice rolled since (`undo_before_roll`), not only that the screen was old; a tap
    whose undo is still allowed, but may now name another action, stays stale."""
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Pass(1))  # Ola, on her screen drawn at state 2
    seen = session.state_id
    session.act(Cross(0, "yellow", 5))  # Kari
    with pytest.raises(Rejection) as still_allowed:
        session.propose_undo("1", seen=seen)
    assert still_allowed.value.rule == "stale_state"
    session.act(Pass(2))
    session.act(Pass(0))  # Kari's colour step: Ola rolls next
    session.act(KARI_ROLL)
    with pytest.raises(Rejection) as too_late:
        session.propose_undo("1", seen=seen)
    assert too_late.value.rule == "undo_before_roll"


def test_undo_answers_name_why_each_seat_without_an_offer_may_not_undo() -> None:
    """Every seat and the host get the action their undo would take back, or the refusal
    that names why not: what a screen whose undo button went away says."""
    session = after_karis_colour_cross()
    answers = dict(session.undo_answers())
    assert answers[HOST] == answers["0"] == Action(Cross(0, "red", 4), "0")
    refusals = {by: a.rule for by, a in answers.items() if isinstance(a, Rejection)}
    assert refusals == {"1": "acted_on", "2": "acted_on"}
    assert dict(session.undo_offers()).keys() == {HOST, "0"}
    fresh = new_session()
    assert {by: a.rule for by, a in fresh.undo_answers() if isinstance(a, Rejection)} == {
        HOST: "nothing_to_undo",
        "0": "nothing_to_undo",
        "1": "nothing_to_undo",
        "2": "nothing_to_undo",
    }
