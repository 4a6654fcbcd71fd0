"""Sixes rules: setup, the table-pound, the outcomes of a roll, sharing the pot, passing the
dice, money limits, the end of the game, scores, JSON and game records.

Rule sources: ../shared/rules/sixes.txt and the Sixes part of ../shared/rules/NOTES.md;
house decisions are listed in companion/rules/sixes.py's docstring."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import Die, Move, Reason, Rejection, Roll
from companion.rules.session import RecordError, Session, replay_record
from companion.rules.sixes import (
    GAME,
    EndGame,
    EndReason,
    GoOn,
    Options,
    Pass,
    Pound,
    State,
    Step,
    TurnResult,
    bets_to_six,
)

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "sixes.json"


# -- factories -----------------------------------------------------------------------------


def roll(a: int, b: int, colours: tuple[str, str] = ("white", "white")) -> Roll:
    return Roll(dice=(Die(colours[0], a), Die(colours[1], b)))


def start(**options: Any) -> State:
    """A new game; by default 4 players, multiplier 10, starter pot 50, purses 500."""
    return GAME.setup(Options(**options))


def position(
    *,
    roller: int = 0,
    number: int = 1,
    step: Step = Step.POUND,
    betting: tuple[int, ...] = (),
    purses: tuple[int, ...] = (450, 500, 500, 500),
    pot: int = 50,
    pounded_by: int | None = None,
    rollers: int = 8,
    rollers_done: int = 0,
    multiplier: int = 10,
    starter_pot: int = 50,
) -> State:
    """A position in the middle of a turn; the starting purses are chosen so that no coin
    is missing (the pot counted as the roller's)."""
    start_purses = tuple(p + (pot if seat == roller else 0) for seat, p in enumerate(purses))
    return replace(
        start(players=len(purses), multiplier=multiplier),
        multiplier=multiplier,
        starter_pot=starter_pot,
        rollers=rollers,
        start_purses=start_purses,
        purses=purses,
        pot=pot,
        roller=roller,
        number_up=number,
        betting=betting,
        pounded_by=pounded_by,
        step=step,
        rollers_done=rollers_done,
    )


def refusal(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


def play(state: State, *moves: Move) -> State:
    for move in moves:
        state = GAME.play(state, move)
        GAME.invariants(state)
    return state


# -- setup ---------------------------------------------------------------------------------


def test_setup_drops_the_first_starter_pot() -> None:
    state = start()
    assert state.roller == 0 and state.number_up == 1 and state.step is Step.POUND
    assert state.pot == 50  # 5 x multiplier 10
    assert state.purses == (450, 500, 500, 500)
    assert state.start_purses == (500, 500, 500, 500)  # 50 x multiplier (rulebook example)
    assert state.rollers == 8  # two rounds around a table of four
    assert state.dice == ("white", "white")


def test_rulebook_stakes_example_multiplier_100() -> None:
    # "multiplier of 100, and need bring no more than 5,000 coins each"
    state = start(players=3, multiplier=100)
    assert state.start_purses == (5000, 5000, 5000)
    assert state.pot == 500


def test_options_set_purses_length_and_dice() -> None:
    state = start(players=3, purses=(100, 200, 300), rollers=20, dice=("red", "blue"))
    assert state.start_purses == (100, 200, 300) and state.purses == (50, 200, 300)
    assert state.rollers == 20
    dice = GAME.turn(state).dice
    assert dice is not None and dice.colours == ("red", "blue")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"players": 2}, "players"),
        ({"players": 13}, "players"),
        ({"multiplier": 0}, "multiplier"),
        ({"starter_factor": -1}, "starter_factor"),
        ({"purses": (500, 500, 500)}, "purses"),
        ({"purses": (500, 500, 500, -1)}, "purses"),
        ({"purses": (0, 0, 0, 0)}, "purses"),
        ({"purses": (500, 0, 0, 0)}, "purses"),  # only one player can play
        ({"rollers": 0}, "rollers"),
        ({"dice": ("white", "gold")}, "dice"),
    ],
)
def test_bad_options_are_refused_naming_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(Rejection) as info:
        start(**options)
    assert info.value.reason is Reason.BAD_OPTIONS
    assert info.value.rule == field


def test_player_bounds_and_defaults() -> None:
    assert (GAME.players.low, GAME.players.high) == (3, 12)
    assert len(start(players=12).purses) == 12
    assert GAME.options_for(6) == Options(players=6)


def test_parse_options_from_json() -> None:
    options = GAME.parse_options({"players": 5, "purses": [10, 600, 600, 600, 600]})
    assert options.purses == (10, 600, 600, 600, 600)
    with pytest.raises(Rejection) as info:
        GAME.parse_options({"players": 5, "stakes": 3})
    assert info.value.reason is Reason.BAD_OPTIONS


def test_a_first_roller_who_cannot_drop_the_starter_pot_is_skipped() -> None:
    state = start(purses=(49, 500, 500, 500))
    assert state.roller == 1 and state.skipped == (0,)
    assert state.purses == (49, 450, 500, 500) and state.pot == 50


# -- whose turn ----------------------------------------------------------------------------


def test_turn_in_each_step() -> None:
    opening = GAME.turn(start())
    assert opening.step == "pound" and opening.active == 0 and opening.chance
    # everyone else may pound, clockwise from the roller's left; the roller may end the game
    assert opening.players == (1, 2, 3, 0)
    assert opening.dice is not None and opening.dice.colours == ("white", "white")

    later = GAME.turn(position(number=3, betting=(2,), purses=(450, 500, 470, 500), pot=80))
    assert later.players == (1, 2, 3)  # the roller ends the game only at the turn's start

    waiting = GAME.turn(position(step=Step.ROLL, betting=(2,), pounded_by=2))
    assert waiting.step == "roll" and waiting.players == () and waiting.chance

    deciding = GAME.turn(position(step=Step.DECIDE))
    assert deciding.step == "decide" and deciding.players == (0,) and not deciding.chance


# -- the table-pound -----------------------------------------------------------------------


def test_first_pound_joins_the_betting_and_drops_the_bet() -> None:
    state = play(start(), Pound(2))
    assert state.betting == (2,) and state.pounded_by == 2
    assert state.step is Step.ROLL
    assert state.purses == (450, 500, 490, 500) and state.pot == 60  # 1 x multiplier 10


def test_every_better_drops_the_bet_of_the_number_up() -> None:
    state = position(number=3, betting=(1, 3), purses=(450, 470, 500, 470), pot=110)
    after = play(state, Pound(2))
    assert after.betting == (1, 3, 2)
    assert after.purses == (450, 440, 470, 440) and after.pot == 200  # 3 x 30


def test_a_better_who_pounds_first_shuts_newcomers_out() -> None:
    # rulebook: "if that person is already in the betting, then new betters are
    # effectively shut out until the next"
    state = position(number=2, betting=(1,), purses=(450, 490, 500, 500), pot=60)
    after = play(state, Pound(1))
    assert after.betting == (1,) and after.pounded_by == 1 and after.pot == 80
    refused = refusal(after, Pound(3))
    assert (refused.reason, refused.rule) == (Reason.ILLEGAL_MOVE, "pound_taken")
    assert "someone else pounded first" in refused.message


def test_a_roll_before_anyone_pounds_closes_the_window() -> None:
    state = position(number=2, betting=(1,), purses=(450, 490, 500, 500), pot=60)
    after = play(state, roll(3, 4))  # safe: nobody new, the better still pays 2 x 10
    assert after.betting == (1,) and after.pounded_by is None
    assert after.pot == 80 and after.purses[1] == 470 and after.step is Step.DECIDE


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule", "words"),
    [
        (position(), Pound(0), Reason.ILLEGAL_MOVE, "roller_cannot_pound", "the roller can't"),
        (
            position(step=Step.ROLL, betting=(2,), pounded_by=2, pot=60),
            Pound(1),
            Reason.ILLEGAL_MOVE,
            "pound_taken",
            "someone else pounded first: player 3",
        ),
        (
            position(step=Step.ROLL, betting=(2,), pounded_by=2, pot=60),
            Pound(2),
            Reason.ILLEGAL_MOVE,
            "pound_taken",
            "you already won",
        ),
        (
            position(step=Step.DECIDE),
            Pound(1),
            Reason.ILLEGAL_MOVE,
            "no_call_yet",
            "call the next number",
        ),
        (
            # a newcomer on 4 is stuck with 4 + 5 + 6 = 15 x 10 coins
            position(number=4, purses=(450, 149, 500, 500)),
            Pound(1),
            Reason.ILLEGAL_MOVE,
            "cannot_cover",
            "can't cover the bets from 4 to 6 (150 coins)",
        ),
        (position(), Pound(4), Reason.NOT_YOUR_TURN, "no_such_seat", "no player 5"),
        (position(), Pound(-3), Reason.NOT_YOUR_TURN, "no_such_seat", "no player -2"),
    ],
)
def test_pound_refusals(state: State, move: Move, reason: Reason, rule: str, words: str) -> None:
    refused = refusal(state, move)
    assert (refused.reason, refused.rule) == (reason, rule)
    assert words in refused.message


def test_newcomer_must_cover_every_bet_to_six_exactly() -> None:
    assert bets_to_six(1, 10) == 210 and bets_to_six(6, 10) == 60 and bets_to_six(7, 10) == 0
    just_enough = position(number=4, purses=(450, 150, 500, 500))
    after = play(just_enough, Pound(1))
    assert after.purses[1] == 110  # 5 and 6 are still covered
    # a better with little money left may still pound (to shut newcomers out)
    poor_better = position(number=5, betting=(1,), purses=(450, 110, 500, 500), pot=200)
    assert GAME.legal_moves(poor_better, 1) == [Pound(1)]


# -- the roll ------------------------------------------------------------------------------

# (number up, betting, dice) -> result of the turn or None (safe), sharers, shares.
# Roller seat 0; the pot before the bets of this number is 100; purses as `position`.
ROLL_TABLE = [
    # double 6 wins on any number, checked first (also when the number up is 6)
    (1, (2,), (6, 6), TurnResult.WIN, (0,), (110,)),
    (6, (2,), (6, 6), TurnResult.WIN, (0,), (160,)),
    # the number up shows on either die: the betters share the pot
    (3, (1, 2), (3, 5), TurnResult.LOSS, (1, 2), (80, 80)),
    (3, (1, 2), (5, 3), TurnResult.LOSS, (1, 2), (80, 80)),
    (3, (2, 1), (3, 3), TurnResult.LOSS, (1, 2), (80, 80)),  # hand-out order is clockwise
    (6, (3,), (6, 2), TurnResult.LOSS, (3,), (160,)),
    # a loss with nobody betting: the pot goes back to the roller (NOTES)
    (2, (), (2, 4), TurnResult.LOSS, (0,), (100,)),
    # 6 up and no 6 shown: the roller wins
    (6, (1,), (1, 5), TurnResult.WIN, (0,), (160,)),
    # safe rolls on 1..5
    (1, (1,), (2, 3), None, (), ()),
    (5, (1, 3), (6, 4), None, (), ()),
]


@pytest.mark.parametrize(("number", "betting", "dice", "result", "sharers", "shares"), ROLL_TABLE)
def test_roll_outcomes(
    number: int,
    betting: tuple[int, ...],
    dice: tuple[int, int],
    result: TurnResult | None,
    sharers: tuple[int, ...],
    shares: tuple[int, ...],
) -> None:
    purses = (450, 500, 500, 500)
    state = position(number=number, betting=betting, purses=purses, pot=100)
    after = play(state, roll(*dice))
    if result is None:
        assert after.step is Step.DECIDE and after.roller == 0 and after.number_up == number
        assert after.pot == 100 + number * 10 * len(betting)
        assert GAME.legal_moves(after, 0) == [Pass(0), GoOn(0)]
        assert (after.last_roller, after.last_roll_number_up) == (0, number)
        return
    assert after.last_turn is not None
    assert after.last_turn.result is result and after.last_turn.roller == 0
    assert (after.last_turn.sharers, after.last_turn.shares) == (sharers, shares)
    assert sum(shares) == after.last_turn.pot == 100 + number * 10 * len(betting)
    # the dice move clockwise and the next roller drops the starter pot
    assert after.roller == 1 and after.number_up == 1 and after.betting == ()
    assert after.rollers_done == 1 and after.pot == 50
    for seat in range(4):
        paid = number * 10 if seat in betting else 0
        got = dict(zip(sharers, shares, strict=True)).get(seat, 0)
        starter = 50 if seat == 1 else 0
        assert after.purses[seat] == purses[seat] - paid + got - starter
    assert after.last_roll == roll(*dice).dice
    # whose roll it was: the turn it ended, not the next roller's
    assert (after.last_roller, after.last_roll_number_up) == (0, number)


def test_a_loss_with_nobody_betting_returns_the_pot_to_that_roller() -> None:
    state = position(roller=2, number=3, purses=(500, 500, 450, 500), pot=50)
    after = play(state, roll(3, 5))
    assert after.last_turn is not None and after.last_turn.result is TurnResult.LOSS
    assert after.last_turn.sharers == (2,) and after.last_turn.shares == (50,)
    assert after.roller == 3 and after.purses == (500, 500, 500, 450)


def test_rulebook_example_number_three() -> None:
    # "If the number up is 3, and a 3 shows on either die, the roller loses ... If no 3
    # shows, the roller is safe, and may choose to either pass or proceed to ... 4"
    state = position(number=3, betting=(1,), purses=(450, 470, 500, 500), pot=80)
    lost = play(state, roll(3, 1))
    assert lost.last_turn is not None and lost.last_turn.result is TurnResult.LOSS
    safe = play(state, roll(2, 1))
    assert GAME.legal_moves(safe, 0) == [Pass(0), GoOn(0)]
    onward = play(safe, GoOn(0))
    assert onward.number_up == 4 and onward.step is Step.POUND and onward.pounded_by is None


def test_a_roller_who_passes_through_six_takes_the_pot() -> None:
    state = start()
    state = play(state, Pound(1), roll(2, 3))  # 1 safe
    for number, dice in [(2, (1, 3)), (3, (1, 2)), (4, (1, 2)), (5, (1, 2))]:
        state = play(state, GoOn(0))
        assert state.number_up == number
        state = play(state, roll(*dice))
        assert state.step is Step.DECIDE
    state = play(state, GoOn(0), roll(1, 2))  # 6 not shown
    assert state.last_turn is not None
    assert state.last_turn.result is TurnResult.WIN and state.last_turn.number_up == 6
    # the pot: starter 50 + Ben's bets 10 + 20 + ... + 60
    assert state.last_turn.pot == 50 + 210
    assert state.purses[0] == 450 + 260
    assert state.purses[1] == 500 - 210 - 50  # and Ben, the next roller, drops the starter


# -- sharing -------------------------------------------------------------------------------


def test_loss_remainder_goes_clockwise_from_the_roller_left() -> None:
    # roller seat 2 of 5; pot 101 after the bets; betters 0, 1, 4: order left of seat 2 is
    # 3, 4, 0, 1 -> sharers 4, 0, 1 get 34, 34, 33
    purses = (500, 500, 450, 500, 500)
    state = position(roller=2, number=1, betting=(0, 1, 4), purses=purses, pot=71)
    after = play(state, roll(1, 4))
    assert after.last_turn is not None
    assert after.last_turn.pot == 101
    assert after.last_turn.sharers == (4, 0, 1) and after.last_turn.shares == (34, 34, 33)


def test_pass_shares_with_the_roller_who_comes_last() -> None:
    # rulebook: "If the roller passes, the pot is shared between the roller and betters"
    state = position(
        roller=1, step=Step.DECIDE, number=2, betting=(3, 0), pot=103, purses=(470, 450, 500, 470)
    )
    after = play(state, Pass(1))
    assert after.last_turn is not None and after.last_turn.result is TurnResult.PASS
    # clockwise from the roller's left: 2, 3, 0, 1 -> sharers 3, 0, 1; 103 = 35 + 34 + 34
    assert after.last_turn.sharers == (3, 0, 1) and after.last_turn.shares == (35, 34, 34)
    assert after.roller == 2  # the dice move on after a pass


def test_pass_with_nobody_betting_gives_the_starter_pot_back() -> None:
    after = play(position(step=Step.DECIDE), Pass(0))
    assert after.last_turn is not None
    assert after.last_turn.sharers == (0,) and after.purses[0] == 500


@settings(max_examples=200, deadline=None)
@given(
    pot=st.integers(0, 10_000),
    roller=st.integers(0, 5),
    betting=st.sets(st.integers(0, 5), max_size=5),
)
def test_shares_are_even_and_lose_no_coin(pot: int, roller: int, betting: set[int]) -> None:
    betters = tuple(sorted(betting - {roller}))
    purses = tuple(10_000 for _ in range(6))
    state = position(
        roller=roller, step=Step.DECIDE, number=2, betting=betters, pot=pot, purses=purses
    )
    after = play(state, Pass(roller))
    assert after.last_turn is not None
    shares = after.last_turn.shares
    assert sum(shares) == pot and max(shares) - min(shares) <= 1
    assert list(shares) == sorted(shares, reverse=True)  # the extra coins go first
    assert set(after.last_turn.sharers) == {*betters, roller}


# -- pass and go on ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule", "words"),
    [
        (
            position(),
            Pass(0),
            Reason.ILLEGAL_MOVE,
            "pass_after_safe_roll",
            "you can only pass after a safe roll",
        ),
        (
            position(step=Step.ROLL, betting=(1,), pounded_by=1),
            Pass(0),
            Reason.ILLEGAL_MOVE,
            "pass_after_safe_roll",
            "after a safe roll",
        ),
        (
            position(step=Step.ROLL, betting=(1,), pounded_by=1),
            GoOn(0),
            Reason.ILLEGAL_MOVE,
            "go_on_after_safe_roll",
            "after a safe roll",
        ),
        (
            position(step=Step.DECIDE),
            Pass(2),
            Reason.NOT_YOUR_TURN,
            "roller_decides",
            "only the roller (player 1)",
        ),
        (position(step=Step.DECIDE), GoOn(3), Reason.NOT_YOUR_TURN, "roller_decides", "roller"),
        (
            position(step=Step.DECIDE),
            roll(1, 2),
            Reason.NOT_YOUR_TURN,
            "no_roll_expected",
            "no roll is expected",
        ),
        (
            position(),
            roll(1, 2, ("white", "red")),
            Reason.WRONG_DICE,
            "dice_expected",
            "2 dice (2 white)",
        ),
        (
            position(),
            Roll(dice=(Die("white", 3),)),
            Reason.WRONG_DICE,
            "dice_expected",
            "got 1 die (white)",
        ),
        (position(), roll(1, 7), Reason.WRONG_DICE, "die_value", "1 to 6"),
    ],
)
def test_roller_and_dice_refusals(
    state: State, move: Move, reason: Reason, rule: str, words: str
) -> None:
    refused = refusal(state, move)
    assert (refused.reason, refused.rule) == (reason, rule)
    assert words in refused.message


# -- passing the dice and money ------------------------------------------------------------


def test_a_roller_who_cannot_drop_the_starter_pot_is_skipped_uncounted() -> None:
    state = position(step=Step.ROLL, betting=(2,), pounded_by=2, purses=(450, 30, 490, 500), pot=60)
    after = play(state, roll(6, 6))  # roller 0 wins; seat 1 (30 coins) cannot drop 50
    assert after.roller == 2 and after.skipped == (1,)
    assert after.rollers_done == 1 and after.purses == (510, 30, 440, 500)


def test_the_game_ends_after_the_last_roller_turn() -> None:
    state = position(step=Step.DECIDE, rollers=3, rollers_done=2)
    after = play(state, Pass(0))
    assert after.step is Step.OVER and after.end_reason is EndReason.ROLLERS_DONE
    assert after.rollers_done == 3 and after.pot == 0
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.reason == "rollers_done"
    # the starter pot went back to the roller: everyone is level and shares the win
    assert outcome.winners == (0, 1, 2, 3) and "richest with 500 coins" in outcome.message


def test_a_one_roller_game_says_its_one_roller_turn_is_played() -> None:
    # a quick game of one roller turn: "all 1 roller turns are played" read wrong
    after = play(position(step=Step.DECIDE, rollers=1), Pass(0))
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.message.startswith("the one roller turn is played;")
    two = GAME.outcome(play(position(step=Step.DECIDE, rollers=2, rollers_done=1), Pass(0)))
    assert two is not None and two.message.startswith("all 2 roller turns are played;")


def test_the_game_ends_when_fewer_than_two_can_take_part() -> None:
    # after this loss only seat 2 can still roll or bet on 6 (60 coins)
    state = position(
        roller=0,
        number=1,
        step=Step.ROLL,
        betting=(2,),
        pounded_by=2,
        purses=(0, 49, 490, 49),
        pot=60,
    )
    after = play(state, roll(1, 2))
    assert after.step is Step.OVER and after.end_reason is EndReason.OUT_OF_MONEY
    assert after.purses == (0, 49, 550, 49)
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == (2,)
    assert "no money can change hands" in outcome.message


def test_the_game_ends_when_nobody_can_drop_the_starter_pot() -> None:
    # starter pot 100 (factor 10): bettors can still cover a 6, but nobody can roll
    state = position(
        roller=0, number=1, step=Step.DECIDE, starter_pot=100, purses=(0, 99, 99, 99), pot=90
    )
    after = play(state, Pass(0))
    assert after.step is Step.OVER and after.end_reason is EndReason.OUT_OF_MONEY
    assert after.purses == (90, 99, 99, 99)


def test_dice_pass_clockwise_around_the_table() -> None:
    state = start(players=3)
    rollers = []
    for _ in range(5):
        rollers.append(state.roller)
        state = play(state, roll(1, 1))  # a loss on 1 with nobody betting
    assert rollers == [0, 1, 2, 0, 1]


# -- ending the game -----------------------------------------------------------------------


def test_the_roller_ends_the_game_at_the_start_of_a_turn() -> None:
    state = play(start(), Pound(1), roll(1, 2), EndGame(1))  # roller 0 lost; roller 1 ends
    assert state.step is Step.OVER and state.end_reason is EndReason.STOPPED
    assert state.pot == 0 and state.purses == (450, 550, 500, 500)  # starter pot back
    assert state.rollers_done == 1
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "stopped" and outcome.winners == (1,)
    assert outcome.message.startswith("player 2 ended the game")
    assert GAME.turn(state).step == "over" and not GAME.turn(state).players
    assert all(GAME.legal_moves(state, seat) == [] for seat in range(4))


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule"),
    [
        (position(), EndGame(2), Reason.NOT_YOUR_TURN, "roller_ends"),
        (position(number=2), EndGame(0), Reason.ILLEGAL_MOVE, "end_at_turn_start"),
        (
            position(step=Step.ROLL, betting=(1,), pounded_by=1),
            EndGame(0),
            Reason.ILLEGAL_MOVE,
            "end_at_turn_start",
        ),
        (position(step=Step.DECIDE), EndGame(0), Reason.ILLEGAL_MOVE, "end_at_turn_start"),
    ],
)
def test_end_game_refusals(state: State, move: Move, reason: Reason, rule: str) -> None:
    refused = refusal(state, move)
    assert (refused.reason, refused.rule) == (reason, rule)


def test_nothing_is_accepted_after_the_end() -> None:
    over = play(start(), EndGame(0))
    for move in (Pound(1), Pass(0), GoOn(0), EndGame(0), roll(1, 2)):
        refused = refusal(over, move)
        assert (refused.reason, refused.rule) == (Reason.GAME_OVER, "game_over")


def test_the_host_may_end_the_game_for_the_roller() -> None:
    session = Session(GAME, Options(players=3))
    with pytest.raises(Rejection) as info:
        session.act(EndGame(0), by="2")
    assert info.value.reason is Reason.NOT_ALLOWED
    session.act(EndGame(0), by="host")
    assert session.outcome() is not None


# -- scores and outcome --------------------------------------------------------------------


def test_scores_are_purses_with_a_breakdown() -> None:
    state = position(number=3, betting=(1,), purses=(450, 440, 500, 520), pot=110)
    state = replace(state, start_purses=(500, 500, 500, 520))
    scores = GAME.scores(state)
    assert [s.total for s in scores] == [450, 440, 500, 520]
    assert scores[1].breakdown == (("start", 500), ("won/lost", -60))
    for score in scores:
        assert score.total == sum(points for _, points in score.breakdown)
    assert GAME.outcome(state) is None


def test_richest_players_share_the_win() -> None:
    state = play(position(step=Step.DECIDE, purses=(450, 600, 600, 300), rollers=1), Pass(0))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (1, 2)
    assert "player 2 and player 3 are the richest with 600 coins" in outcome.message


def test_the_end_message_says_who_wins() -> None:
    """The end card reads the message alone: it says "wins" (or "share the win"), not
    only who is the richest, as every other game's end says who won."""
    alone = play(position(step=Step.DECIDE, purses=(450, 700, 600, 300), rollers=1), Pass(0))
    level = play(position(step=Step.DECIDE, purses=(450, 600, 600, 300), rollers=1), Pass(0))
    alone_outcome, level_outcome = GAME.outcome(alone), GAME.outcome(level)
    assert alone_outcome is not None and level_outcome is not None
    assert alone_outcome.message.endswith("player 2 is the richest with 700 coins and wins")
    assert level_outcome.message.endswith(
        "player 2 and player 3 are the richest with 600 coins and share the win"
    )


def test_invariants_catch_a_created_coin() -> None:
    state = start()
    GAME.invariants(state)
    with pytest.raises(AssertionError):
        GAME.invariants(replace(state, pot=state.pot + 1))
    with pytest.raises(AssertionError):
        GAME.invariants(replace(state, betting=(0,)))  # the roller cannot bet


# -- legal moves agree with check, random play ---------------------------------------------


def candidate_moves(players: int) -> list[Move]:
    moves: list[Move] = []
    for seat in range(-1, players + 1):
        moves += [Pound(seat), Pass(seat), GoOn(seat), EndGame(seat)]
    return moves


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(3, 6),
    purse=st.integers(60, 400),
    choices=st.lists(st.integers(0, 10_000), min_size=300, max_size=300),
)
def test_legal_moves_agree_with_check_in_play(players: int, purse: int, choices: list[int]) -> None:
    """Play without ever ending the game on purpose, so the money runs out or the rollers
    are done; at every step the listed moves are exactly the accepted ones. A roller turn
    takes at most 6 x 3 actions, so 12 rollers end within the 300 choices."""
    state = start(players=players, purses=(purse,) * players, rollers=12)
    for choice in choices:
        if GAME.outcome(state) is not None:
            break
        listed: list[Move] = []
        for seat in range(players):
            moves = GAME.legal_moves(state, seat)
            listed += moves
            for move in moves:
                GAME.check(state, move)
        for move in candidate_moves(players):
            if move not in listed:
                with pytest.raises(Rejection):
                    GAME.check(state, move)
        turn = GAME.turn(state)
        assert set(turn.players) == {m.player for m in listed}
        playable = [m for m in listed if not isinstance(m, EndGame)]
        if turn.chance and (not playable or choice % 3 == 0):
            action: Move = roll(1 + choice % 6, 1 + (choice // 6) % 6)
        else:
            action = playable[choice % len(playable)]
        state = GAME.play(state, action)
        GAME.invariants(state)
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
    assert GAME.outcome(state) is not None


@pytest.mark.parametrize("seat", [-1, 4, 9])
@pytest.mark.parametrize(
    "state",
    [
        position(),  # the table-pound is open; seat -1 would index the last purse
        position(step=Step.ROLL, betting=(1,), pounded_by=1, purses=(450, 490, 500, 500), pot=60),
        position(step=Step.DECIDE),
    ],
)
def test_seats_outside_the_table_have_no_legal_moves(state: State, seat: int) -> None:
    """legal_moves agrees with check (rule no_such_seat) for seats that are not at the table."""
    assert GAME.legal_moves(state, seat) == []
    assert refusal(state, Pound(seat)).rule == "no_such_seat"


def test_json_round_trip_of_moves_and_a_finished_state() -> None:
    for move in (Pound(2), Pass(0), GoOn(1), EndGame(3), roll(6, 6)):
        data = json.loads(json.dumps(GAME.move_to_json(move)))
        assert GAME.move_from_json(data) == move
    assert GAME.move_to_json(GoOn(1)) == {"kind": "go_on", "player": 1}
    state = play(start(), Pound(2), roll(2, 2), Pass(0), EndGame(1))
    assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state


# -- game records --------------------------------------------------------------------------


def test_example_record_replays_to_its_end() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    session = replay_record(record)
    outcome = session.outcome()
    assert outcome is not None and outcome.reason == "stopped"
    kinds = {item["move"]["kind"] for item in record["actions"]}
    assert kinds == {"pound", "roll", "go_on", "pass", "end_game"}
    assert sum(s.total for s in session.scores()) == 4 * 500
    assert outcome.winners == (3,)
    assert session.to_record() == record


def test_a_corrupted_record_names_the_bad_action() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    bad = copy.deepcopy(record)
    # action 2 is the roller's go_on after a safe roll; make the roller pound instead
    assert bad["actions"][2]["move"] == {"kind": "go_on", "player": 0}
    bad["actions"][2] = {"by": "0", "move": {"kind": "pound", "player": 0}}
    with pytest.raises(RecordError) as info:
        replay_record(bad)
    assert info.value.index == 2
    assert info.value.rejection.rule == "roller_cannot_pound"


def test_the_table_chooses_who_rolls_first() -> None:
    """Issue 26 item 11: `first_player` is the first roller (seat 0 by default); one who
    cannot drop the starter pot is skipped, as at every hand-over."""
    assert GAME.setup(Options(players=3)).roller == 0
    assert GAME.setup(Options(players=3, first_player=2)).roller == 2
    broke = GAME.setup(Options(players=3, first_player=2, purses=(500, 500, 0)))
    assert broke.roller == 0 and broke.skipped == (2,)
    with pytest.raises(Rejection) as refused:
        GAME.setup(Options(players=3, first_player=3))
    assert refused.value.rule == "first_player" and "one of the 3 players" in refused.value.message
