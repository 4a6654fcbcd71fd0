"""Qwixx rules (companion/rules/qwixx.py): every rule of shared/rules/qwixx.txt and the Qwixx
part of NOTES.md, as table-driven scenarios (position + move -> new position or a named
refusal), the rulebook examples, scoring, the end, records and JSON round-trips."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import Die, Move, Reason, Rejection, Roll
from companion.rules.qwixx import (
    GAME,
    ROW_COLOURS,
    ROW_POINTS,
    Cross,
    EndReason,
    Options,
    Pass,
    Sheet,
    State,
    Step,
    rows_closed_to,
)
from companion.rules.session import RecordError, replay_record
from companion.simulate import random_action

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "qwixx.json"

# -- factories ----------------------------------------------------------------------------


def roll(white1: int, white2: int, **coloured: int) -> Roll:
    """A roll of two white dice plus the named coloured dice; by default all four coloured
    dice show 1 unless given (pass colour=0 to leave a die out: it left the game)."""
    values = {"red": 1, "yellow": 1, "green": 1, "blue": 1, **coloured}
    dice = [Die("white", white1), Die("white", white2)]
    dice += [Die(colour, value) for colour, value in values.items() if value]
    return Roll(dice=tuple(dice))


def position(
    *sheets: Sheet,
    active: int = 0,
    step: Step = Step.ROLL,
    dice: Roll | None = None,
    locked: tuple[str, ...] = (),
    waiting: tuple[int, ...] | None = None,
    active_crossed: bool = False,
) -> State:
    """A position with the given sheets (default: three empty ones)."""
    sheets = sheets or (Sheet(), Sheet(), Sheet())
    if waiting is None:
        waiting = tuple(range(len(sheets))) if step is Step.WHITE_SUM else ()
    return State(
        players=len(sheets),
        active=active,
        step=step,
        sheets=tuple(sheets),
        dice=dice.dice if dice else (),
        locked=locked,
        waiting=waiting,
        active_crossed=active_crossed,
    )


def play(state: State, *moves: Move) -> State:
    for move in moves:
        state = GAME.play(state, move)
    return state


def refusal(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


def all_candidate_moves(players: int) -> list[Move]:
    """Every Cross and Pass a seat could name, plus a few malformed ones."""
    moves: list[Move] = []
    for seat in range(-1, players + 1):
        moves.append(Pass(seat))
        for colour in (*ROW_COLOURS, "purple", "white"):
            for number in range(1, 14):
                moves.append(Cross(seat, colour, number))
    return moves


# A red row with five crosses, ready to lock with 12; the green twin ready to lock with 2.
RED_FIVE = (2, 3, 4, 5, 6)
YELLOW_FIVE = (2, 3, 4, 5, 6)
GREEN_FIVE = (12, 11, 10, 9, 8)
BLUE_FIVE = (12, 11, 10, 9, 8)


# -- setup and turn structure -------------------------------------------------------------


def test_setup_defaults_and_first_roll() -> None:
    state = GAME.setup(Options())
    assert state.players == 4 and state.active == 0 and state.step is Step.ROLL
    assert state.sheets == (Sheet(),) * 4
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.players, turn.chance) == ("roll", 0, (), True)
    assert turn.dice is not None
    assert turn.dice.colours == ("white", "white", "red", "yellow", "green", "blue")
    assert GAME.turn(GAME.setup(Options(players=5, first_player=3))).active == 3
    assert GAME.options_for(2) == Options(players=2)


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        (Options(players=1), "players"),
        (Options(players=6), "players"),
        (Options(players=3, first_player=3), "first_player"),
        (Options(players=3, first_player=-1), "first_player"),
    ],
)
def test_bad_options_are_refused(options: Options, rule: str) -> None:
    with pytest.raises(Rejection) as info:
        GAME.setup(options)
    assert (info.value.reason, info.value.rule) == (Reason.BAD_OPTIONS, rule)


def test_parse_options_names_the_bad_field() -> None:
    assert GAME.parse_options({"players": 3, "first_player": 2}) == Options(3, 2)
    with pytest.raises(Rejection) as info:
        GAME.parse_options({"players": 9})
    assert info.value.reason is Reason.BAD_OPTIONS


def test_roll_leads_to_white_sum_for_everyone_then_colour_for_the_active_player() -> None:
    state = play(position(active=1), roll(3, 4))
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.players, turn.chance) == ("white_sum", 1, (1, 2, 0), False)
    state = play(state, Pass(2))
    assert GAME.turn(state).players == (1, 0)
    state = play(state, Pass(0), Cross(1, "red", 7))
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.players) == ("colour", 1, (1,))
    state = play(state, Pass(1))
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.chance) == ("roll", 2, True)
    assert state.dice == ()


def test_the_dice_pass_to_the_left_and_wrap_around() -> None:
    state = position(active=2, step=Step.COLOUR, dice=roll(1, 1), active_crossed=True)
    state = play(state, Pass(2))
    assert (state.step, state.active) == (Step.ROLL, 0)


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule"),
    [
        (position(), Pass(0), Reason.NOT_YOUR_TURN, "waiting_for_roll"),
        (position(), Cross(0, "red", 2), Reason.NOT_YOUR_TURN, "waiting_for_roll"),
        (position(), Roll(dice=()), Reason.WRONG_DICE, "dice_expected"),
        (position(), roll(1, 2, red=0), Reason.WRONG_DICE, "dice_expected"),
        (position(), roll(1, 7), Reason.WRONG_DICE, "die_value"),
        (position(locked=("red",)), roll(1, 2), Reason.WRONG_DICE, "dice_expected"),
        (
            position(step=Step.WHITE_SUM, dice=roll(1, 2)),
            roll(1, 2),
            Reason.NOT_YOUR_TURN,
            "no_roll_expected",
        ),
        (
            position(step=Step.COLOUR, dice=roll(1, 2)),
            roll(1, 2),
            Reason.NOT_YOUR_TURN,
            "no_roll_expected",
        ),
    ],
)
def test_rolls_and_moves_out_of_step(state: State, move: Move, reason: Reason, rule: str) -> None:
    rejection = refusal(state, move)
    assert (rejection.reason, rejection.rule) == (reason, rule)


def test_the_roll_leaves_out_locked_dice() -> None:
    state = position(locked=("red",))
    turn = GAME.turn(state)
    assert turn.dice is not None
    assert turn.dice.colours == ("white", "white", "yellow", "green", "blue")
    assert play(state, roll(2, 3, red=0)).step is Step.WHITE_SUM


# -- the rulebook's example turn ----------------------------------------------------------


def test_rulebook_example_turn_kari_ola_mia() -> None:
    """Kari rolls white 4, white 1, red 3, yellow 6, green 5, blue 6 (qwixx.txt)."""
    kari, ola, mia = 0, 1, 2
    state = position(Sheet(), Sheet(), Sheet(red=(6,)), active=kari)
    state = play(state, roll(4, 1, red=3, yellow=6, green=5, blue=6))

    # The white sum is five: Kari crosses yellow 5, Ola red 5.
    state = play(state, Cross(kari, "yellow", 5), Cross(ola, "red", 5))
    # Mia has red 6 already: red 5 is gone for her; she lets the five go by, for free.
    rejection = refusal(state, Cross(mia, "red", 5))
    assert (rejection.rule, rejection.message) == (
        "left_to_right",
        "red 5 is left of your last red cross",
    )
    assert Cross(mia, "red", 5) not in GAME.legal_moves(state, mia)
    state = play(state, Pass(mia))

    # The coloured half is Kari's alone: white 4 + blue 6 = blue 10.
    assert GAME.legal_moves(state, ola) == []
    assert refusal(state, Cross(ola, "blue", 10)).message == (
        "only player 1, whose turn it is, may use a coloured die now"
    )
    assert Cross(kari, "blue", 10) in GAME.legal_moves(state, kari)
    state = play(state, Cross(kari, "blue", 10))

    assert state.sheets[kari] == Sheet(yellow=(5,), blue=(10,))
    assert state.sheets[ola] == Sheet(red=(5,))
    assert state.sheets[mia] == Sheet(red=(6,))
    assert [sheet.penalties for sheet in state.sheets] == [0, 0, 0]
    # Ola takes over as the active player.
    assert (state.step, state.active) == (Step.ROLL, ola)
    # Blue counts down from 12, so blue 12 and 11 are lost to Kari from here on.
    for number in (12, 11):
        later = play(state, roll(6, number - 6), Pass(ola), Pass(mia))
        rejection = refusal(later, Cross(kari, "blue", number))
        assert (rejection.rule, rejection.message) == (
            "left_to_right",
            f"blue {number} is left of your last blue cross",
        )


def test_rulebook_example_turn_colour_options() -> None:
    """Kari's coloured choices in the example: each coloured die with either white die."""
    state = position(
        Sheet(yellow=(5,)),
        Sheet(),
        step=Step.COLOUR,
        dice=roll(4, 1, red=3, yellow=6, green=5, blue=6),
        active_crossed=True,
    )
    crosses = {(m.colour, m.number) for m in GAME.legal_moves(state, 0) if isinstance(m, Cross)}
    assert crosses == {
        ("red", 7), ("red", 4), ("yellow", 10), ("yellow", 7),
        ("green", 9), ("green", 6), ("blue", 10), ("blue", 7),
    }  # fmt: skip
    assert Pass(0) in GAME.legal_moves(state, 0)


# -- refusals -----------------------------------------------------------------------------

WHITE_7 = roll(3, 4, red=2, yellow=5, green=6, blue=1)

REFUSALS = [
    # (name, state, move, reason, rule, message)
    (
        "left to right",
        position(Sheet(yellow=(6,)), Sheet(), step=Step.WHITE_SUM, dice=roll(2, 3)),
        Cross(0, "yellow", 5),
        Reason.ILLEGAL_MOVE, "left_to_right", "yellow 5 is left of your last yellow cross",
    ),
    (
        "green runs 12 down to 2",
        position(Sheet(green=(6,)), Sheet(), step=Step.WHITE_SUM, dice=roll(3, 4)),
        Cross(0, "green", 7),
        Reason.ILLEGAL_MOVE, "left_to_right", "green 7 is left of your last green cross",
    ),
    (
        "already crossed",
        position(Sheet(red=(3, 7)), Sheet(), step=Step.WHITE_SUM, dice=WHITE_7),
        Cross(0, "red", 7),
        Reason.ILLEGAL_MOVE, "already_crossed", "red 7 is already crossed",
    ),
    (
        "last number needs five crosses",
        position(Sheet(red=(2, 3, 4, 5)), Sheet(), step=Step.WHITE_SUM, dice=roll(6, 6)),
        Cross(0, "red", 12),
        Reason.ILLEGAL_MOVE, "lock_needs_five", "red 12 locks the row: it needs 5 crosses in red first (you have 4)",
    ),
    (
        "blue 2 needs five crosses",
        position(Sheet(blue=(12, 10, 8, 6)), Sheet(), step=Step.WHITE_SUM, dice=roll(1, 1)),
        Cross(0, "blue", 2),
        Reason.ILLEGAL_MOVE, "lock_needs_five", "blue 2 locks the row: it needs 5 crosses in blue first (you have 4)",
    ),
    (
        "locked row",
        position(step=Step.WHITE_SUM, dice=roll(3, 4, green=0), locked=("green",)),
        Cross(1, "green", 7),
        Reason.ILLEGAL_MOVE, "row_locked", "green is locked: nobody crosses in it any more",
    ),
    (
        "white sum",
        position(step=Step.WHITE_SUM, dice=WHITE_7),
        Cross(1, "red", 9),
        Reason.ILLEGAL_MOVE, "white_sum", "the white dice show 7, not 9",
    ),
    (
        "colour step for the active player only",
        position(step=Step.COLOUR, dice=WHITE_7),
        Cross(1, "yellow", 8),
        Reason.NOT_YOUR_TURN, "active_player_only", "only player 1, whose turn it is, may use a coloured die now",
    ),
    (
        "colour step pass by another player",
        position(step=Step.COLOUR, dice=WHITE_7),
        Pass(2),
        Reason.NOT_YOUR_TURN, "active_player_only", "only player 1, whose turn it is, may use a coloured die now",
    ),
    (
        "colour sum",
        position(step=Step.COLOUR, dice=WHITE_7),
        Cross(0, "yellow", 7),
        Reason.ILLEGAL_MOVE, "colour_sum", "a white die and the yellow die make 8 or 9, not 7",
    ),
    (
        "the white sum alone is no colour combination",
        position(step=Step.COLOUR, dice=WHITE_7),
        Cross(0, "red", 7),
        Reason.ILLEGAL_MOVE, "colour_sum", "a white die and the red die make 5 or 6, not 7",
    ),
    (
        "the die of another colour does not count",
        position(step=Step.COLOUR, dice=WHITE_7),
        Cross(0, "red", 9),
        Reason.ILLEGAL_MOVE, "colour_sum", "a white die and the red die make 5 or 6, not 9",
    ),
    (
        "colour step: left to right",
        position(Sheet(green=(8,)), Sheet(), step=Step.COLOUR, dice=WHITE_7),
        Cross(0, "green", 9),
        Reason.ILLEGAL_MOVE, "left_to_right", "green 9 is left of your last green cross",
    ),
    (
        "colour step: locked row",
        position(step=Step.COLOUR, dice=roll(3, 4, red=0), locked=("red",)),
        Cross(0, "red", 5),
        Reason.ILLEGAL_MOVE, "row_locked", "red is locked: nobody crosses in it any more",
    ),
    (
        "each player uses the white sum once",
        position(step=Step.WHITE_SUM, dice=WHITE_7, waiting=(0, 2)),
        Cross(1, "red", 7),
        Reason.NOT_YOUR_TURN, "already_acted", "you have already crossed or passed on this white sum",
    ),
    (
        "the active player done with the white sum waits for the others to use a coloured die",
        position(step=Step.WHITE_SUM, dice=WHITE_7, waiting=(1, 2)),
        Cross(0, "yellow", 8),
        Reason.NOT_YOUR_TURN, "white_sum_first",
        "the coloured dice are yours once everyone has crossed or passed on the white sum; "
        "waiting for player 2 and player 3",
    ),
    (
        "the active player's colour cross before their white sum",
        position(step=Step.WHITE_SUM, dice=WHITE_7),
        Cross(0, "yellow", 9),
        Reason.ILLEGAL_MOVE, "white_sum",
        "the white dice show 7, not 9; a white and a coloured die come after the white sum",
    ),
    (
        "a lock with the wrong sum names the five crosses it needs",
        position(Sheet(red=(2, 3)), Sheet(), step=Step.WHITE_SUM, dice=roll(2, 3)),
        Cross(0, "red", 12),
        Reason.ILLEGAL_MOVE, "lock_needs_five",
        "red 12 locks the row: it needs 5 crosses in red first (you have 2)",
    ),
    (
        "a struck-through box with the wrong sum names the left-to-right rule",
        position(Sheet(red=(6,)), Sheet(), step=Step.WHITE_SUM, dice=roll(4, 5)),
        Cross(0, "red", 4),
        Reason.ILLEGAL_MOVE, "left_to_right", "red 4 is left of your last red cross",
    ),
    (
        "a locked row is named before the dice",
        position(step=Step.WHITE_SUM, dice=roll(3, 4, green=0), locked=("green",)),
        Cross(1, "green", 9),
        Reason.ILLEGAL_MOVE, "row_locked", "green is locked: nobody crosses in it any more",
    ),
    (
        "no such seat",
        position(step=Step.WHITE_SUM, dice=WHITE_7),
        Pass(5),
        Reason.NOT_YOUR_TURN, "not_your_turn", "you may not act now; waiting for player 1, player 2 and player 3",
    ),
    (
        "no such row",
        position(step=Step.WHITE_SUM, dice=WHITE_7),
        Cross(0, "purple", 7),
        Reason.ILLEGAL_MOVE, "no_such_row", "there is no purple row; the rows are red, yellow, green, blue",
    ),
    (
        "no such number",
        position(step=Step.WHITE_SUM, dice=WHITE_7),
        Cross(0, "red", 13),
        Reason.ILLEGAL_MOVE, "no_such_number", "red has no box 13; it runs 2 to 12",
    ),
    (
        "game over",
        State(3, 0, Step.OVER, (Sheet(),) * 3, end=EndReason.TWO_LOCKS),
        Pass(0),
        Reason.GAME_OVER, "game_over", "the game is over",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule", "message"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals(state: State, move: Move, reason: Reason, rule: str, message: str) -> None:
    rejection = refusal(state, move)
    assert (rejection.reason, rejection.rule, rejection.message) == (reason, rule, message)
    assert move not in GAME.legal_moves(state, move.player)
    if reason is Reason.ILLEGAL_MOVE:
        # A refused cross may always be replaced by a pass: nothing is lost.
        GAME.check(state, Pass(move.player))


def test_a_struck_through_box_is_named_before_whose_turn_it_is() -> None:
    """Ann is done with the white sum and taps a box left of her last cross: that box can
    never be crossed, which she hears first (not that Bob is still on the white sum)."""
    state = position(Sheet(red=(6,)), Sheet(), step=Step.WHITE_SUM, dice=roll(4, 5), waiting=(1,))
    rejection = refusal(state, Cross(0, "red", 4))
    assert (rejection.rule, rejection.message) == (
        "left_to_right",
        "red 4 is left of your last red cross",
    )
    assert refusal(state, Cross(0, "red", 9)).rule == "white_sum_first"


# -- crossing: left to right with skipping ------------------------------------------------


def test_skipping_is_allowed_and_the_skipped_boxes_are_gone() -> None:
    """Jump straight to red 10 and eight boxes are shut (qwixx.txt)."""
    state = play(position(), roll(4, 6), Cross(0, "red", 10))
    assert state.sheets[0].red == (10,)
    for number in range(2, 13):
        dice = roll(number // 2, number - number // 2)
        white = position(*state.sheets, step=Step.WHITE_SUM, dice=dice)
        expected = {10: "already_crossed", 11: None, 12: "lock_needs_five"}.get(
            number, "left_to_right"
        )
        if expected is None:
            assert Cross(0, "red", number) in GAME.legal_moves(white, 0)
        else:
            assert refusal(white, Cross(0, "red", number)).rule == expected


@pytest.mark.parametrize(
    ("sheet", "white", "crosses"),
    [
        # white sum 5: every open row takes it
        (Sheet(), (2, 3), {"red", "yellow", "green", "blue"}),
        # red 6 and green 4 lie beyond 5; yellow 5 is crossed; blue 6 still allows 5
        (Sheet(red=(6,), yellow=(5,), green=(4,), blue=(6,)), (2, 3), {"blue"}),
        # the last number: red needs 5 crosses (it has 5), yellow has 4
        (Sheet(red=RED_FIVE, yellow=(2, 3, 4, 5)), (6, 6), {"red", "green", "blue"}),
        # green 2 and blue 2 are last: green has 5, blue 4
        (Sheet(green=GREEN_FIVE, blue=(12, 11, 10, 9)), (1, 1), {"red", "yellow", "green"}),
    ],
)
def test_white_sum_legal_moves(sheet: Sheet, white: tuple[int, int], crosses: set[str]) -> None:
    state = position(sheet, Sheet(), step=Step.WHITE_SUM, dice=roll(*white))
    moves = GAME.legal_moves(state, 0)
    assert Pass(0) in moves
    number = sum(white)
    assert {m.colour for m in moves if isinstance(m, Cross)} == crosses
    assert all(m.number == number for m in moves if isinstance(m, Cross))


def test_white_first_then_colour_in_the_same_row() -> None:
    """The white cross comes first; the colour cross must lie right of it (qwixx.txt)."""
    state = play(position(), roll(2, 3, red=3), Cross(0, "red", 5))
    state = play(state, Pass(1), Pass(2))
    assert refusal(state, Cross(0, "red", 5)).rule == "already_crossed"  # white 2 + red 3
    state = play(state, Cross(0, "red", 6))  # white 3 + red 3
    assert state.sheets[0].red == (5, 6)
    assert state.sheets[0].penalties == 0


def test_active_player_may_use_either_white_die() -> None:
    dice = roll(1, 6, red=0, yellow=2, green=0, blue=0)
    state = position(step=Step.COLOUR, dice=dice, locked=("red",), active_crossed=True)
    assert {m.number for m in GAME.legal_moves(state, 0) if isinstance(m, Cross)} == {3, 8}
    for number in (3, 8):
        assert play(state, Cross(0, "yellow", number)).sheets[0].yellow == (number,)


# -- locks --------------------------------------------------------------------------------


def test_lock_counts_as_a_cross_and_needs_five_before() -> None:
    state = position(Sheet(red=RED_FIVE), Sheet(), step=Step.WHITE_SUM, dice=roll(6, 6))
    state = play(state, Cross(0, "red", 12))
    sheet = state.sheets[0]
    assert sheet.red == (*RED_FIVE, 12)
    assert sheet.crosses("red") == 7 and sheet.is_locked_by_me("red")
    assert dict(GAME.scores(state)[0].breakdown)["red"] == 28


def test_white_sum_lock_lets_others_cross_and_lock_the_same_colour() -> None:
    """Several players may lock the same colour on the white sum; the row closes when the step
    ends, and its die cannot be used in the colour step (qwixx.txt, NOTES.md)."""
    sheets = (Sheet(red=RED_FIVE), Sheet(red=RED_FIVE), Sheet(red=(3,)))
    state = position(*sheets, active=2, step=Step.WHITE_SUM, dice=roll(6, 6, red=5, yellow=3))
    state = play(state, Cross(0, "red", 12))
    assert state.locking == ("red",) and state.locked == ()
    assert Cross(1, "red", 12) in GAME.legal_moves(state, 1)
    assert Cross(2, "red", 12) not in GAME.legal_moves(state, 2)  # only 1 red cross
    state = play(state, Cross(1, "red", 12))
    assert state.locking == ("red",)
    state = play(state, Pass(2))
    assert state.locked == ("red",) and state.locking == ()
    assert state.sheets[0].crosses("red") == state.sheets[1].crosses("red") == 7
    # The red die has left the game: Mia may not use white 6 + red 5 = red 11 any more.
    assert GAME.turn(state).step == "colour"
    assert refusal(state, Cross(2, "red", 11)).message == (
        "red is locked: nobody crosses in it any more"
    )
    assert {m.colour for m in GAME.legal_moves(state, 2) if isinstance(m, Cross)} == {
        "yellow", "green", "blue",
    }  # fmt: skip
    state = play(state, Pass(2))
    assert [sheet.penalties for sheet in state.sheets] == [0, 0, 1]
    turn = GAME.turn(state)
    assert turn.dice is not None
    assert turn.dice.colours == ("white", "white", "yellow", "green", "blue")


def test_a_pending_lock_still_needs_five_crosses_from_the_next_player() -> None:
    """While green is being locked on the white sum, another player may lock it too only with
    five crosses of their own: the pending lock is no reason for refusal, the count is."""
    sheets = (Sheet(green=GREEN_FIVE), Sheet(green=(12,)), Sheet())
    state = position(*sheets, step=Step.WHITE_SUM, dice=roll(1, 1))
    state = play(state, Cross(0, "green", 2))
    rejection = refusal(state, Cross(1, "green", 2))
    assert (rejection.rule, rejection.message) == (
        "lock_needs_five",
        "green 2 locks the row: it needs 5 crosses in green first (you have 1)",
    )
    state = play(state, Cross(1, "red", 2), Pass(2))
    assert state.locked == ("green",) and state.step is Step.COLOUR


def test_lock_in_the_colour_step_closes_at_once() -> None:
    state = position(
        Sheet(yellow=YELLOW_FIVE), Sheet(), step=Step.COLOUR, dice=roll(6, 1, yellow=6)
    )
    state = play(state, Cross(0, "yellow", 12))
    assert state.locked == ("yellow",)
    assert (state.step, state.active) == (Step.ROLL, 1)
    turn = GAME.turn(state)
    assert turn.dice is not None
    assert turn.dice.colours == ("white", "white", "red", "green", "blue")
    state = play(state, roll(6, 6, yellow=0))
    assert refusal(state, Cross(1, "yellow", 12)).rule == "row_locked"


# -- penalties ----------------------------------------------------------------------------


def turn_of(active_moves: tuple[Move, Move]) -> State:
    """One whole turn of seat 0 with white 2+3, red 4, others passing."""
    state = position(Sheet(), Sheet(), Sheet())
    state = play(state, roll(2, 3, red=4), active_moves[0], Pass(1), Pass(2))
    return play(state, active_moves[1])


@pytest.mark.parametrize(
    ("white_move", "colour_move", "penalties"),
    [
        (Pass(0), Pass(0), 1),  # nothing crossed: a penalty, although crosses were possible
        (Cross(0, "blue", 5), Pass(0), 0),
        (Pass(0), Cross(0, "red", 6), 0),
        (Cross(0, "yellow", 5), Cross(0, "red", 7), 0),
    ],
)
def test_active_player_penalty(white_move: Move, colour_move: Move, penalties: int) -> None:
    state = turn_of((white_move, colour_move))
    assert [sheet.penalties for sheet in state.sheets] == [penalties, 0, 0]
    assert dict(GAME.scores(state)[0].breakdown)["penalties"] == -5 * penalties


def test_the_engine_says_the_penalty_a_move_marks() -> None:
    """`Game.penalty`: what a move costs its player as a penalty, the rule the undo button
    and the log word ("Undo pass (−5 penalty)"); the views worked it out from the scores
    before and after the move. Only the active player's pass that ends a turn without a
    cross marks one."""
    state = play(position(Sheet(), Sheet(), Sheet()), roll(2, 3, red=4))
    assert [GAME.penalty(state, move) for move in (Pass(0), Pass(1), Cross(0, "red", 5))] == [
        0,
        0,
        0,
    ]  # a pass of the white sum alone costs nothing
    state = play(state, Pass(0), Pass(1), Pass(2))
    assert GAME.penalty(state, Pass(0)) == -5
    assert GAME.penalty(state, Cross(0, "red", 6)) == 0
    crossed = play(position(Sheet(), Sheet()), roll(2, 3, red=4), Cross(0, "blue", 5), Pass(1))
    assert GAME.penalty(crossed, Pass(0)) == 0


def test_only_the_active_players_own_crosses_spare_the_penalty() -> None:
    """Crosses by other players on the white sum do not count for the active player."""
    state = play(position(), roll(2, 3), Pass(0), Cross(1, "red", 5), Cross(2, "green", 5))
    state = play(state, Pass(0))
    assert [sheet.penalties for sheet in state.sheets] == [1, 0, 0]


def test_penalty_when_no_cross_is_possible() -> None:
    dead = Sheet(red=(11,), yellow=(11,), green=(3,), blue=(3,))
    state = position(dead, Sheet(), step=Step.WHITE_SUM, dice=roll(2, 3))
    assert GAME.legal_moves(state, 0) == [Pass(0)]
    state = play(state, Pass(0), Pass(1))
    assert GAME.legal_moves(state, 0) == [Pass(0)]
    assert play(state, Pass(0)).sheets[0].penalties == 1


def test_fourth_penalty_ends_the_game_at_once() -> None:
    state = position(Sheet(red=(2, 3), penalties=3), Sheet(yellow=(4,)), active=0)
    state = play(state, roll(2, 3), Pass(0), Pass(1), Pass(0))
    assert state.step is Step.OVER and state.end is EndReason.FOURTH_PENALTY
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.reason == "fourth_penalty" and outcome.winners == (1,)
    assert "player 1 marked a fourth penalty" in outcome.message
    assert GAME.scores(state)[0].breakdown == (
        ("red", 3), ("yellow", 0), ("green", 0), ("blue", 0), ("penalties", -20),
    )  # fmt: skip
    assert GAME.turn(state).step == "over" and GAME.turn(state).active is None
    assert [GAME.legal_moves(state, seat) for seat in (0, 1)] == [[], []]
    assert refusal(state, roll(1, 1)).reason is Reason.GAME_OVER


# -- end by locks -------------------------------------------------------------------------


def test_second_lock_on_the_white_sum_ends_the_game_without_colour_step() -> None:
    sheets = (Sheet(green=GREEN_FIVE), Sheet(blue=BLUE_FIVE), Sheet())
    state = position(
        *sheets, active=1, step=Step.WHITE_SUM, dice=roll(1, 1, red=0), locked=("red",)
    )
    state = play(state, Cross(0, "green", 2), Pass(1))
    assert state.step is Step.WHITE_SUM  # others still use the same white sum
    state = play(state, Pass(2))
    assert state.step is Step.OVER and state.locked == ("red", "green")
    # The active player passed, but the game stopped before the colour step: no penalty.
    assert [sheet.penalties for sheet in state.sheets] == [0, 0, 0]
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "two_locks" and outcome.winners == (0,)
    assert GAME.turn(state).players == () and not GAME.turn(state).chance


def test_a_row_locking_on_the_white_sum_is_closed_to_those_who_can_no_longer_cross_it() -> None:
    """What a sheet shows (`rows_closed_to`): a row locking on this white sum stays open to a
    player still to act who may lock it too, and is closed to the one who locked it and to
    one who cannot (one red cross); locked rows are closed to everyone."""
    sheets = (Sheet(red=RED_FIVE), Sheet(red=RED_FIVE), Sheet(red=(3,)))
    state = position(
        *sheets, active=2, step=Step.WHITE_SUM, dice=roll(6, 6, blue=0), locked=("blue",)
    )
    state = play(state, Cross(0, "red", 12))
    assert [rows_closed_to(state, seat) for seat in range(3)] == [
        {"red", "blue"},
        {"blue"},
        {"red", "blue"},
    ]
    state = play(state, Pass(1))
    assert rows_closed_to(state, 1) == {"red", "blue"}


def test_those_still_to_act_on_a_white_sum_locking_a_second_row_may_cross_any_row() -> None:
    """Everyone crosses the white sum at once (qwixx.txt: "Every player may now cross off that
    sum"), so a second lock on it does not cut the others short: they may still cross any open
    row, not only lock, and the game ends when the last of them has acted."""
    sheets = (Sheet(green=GREEN_FIVE), Sheet(), Sheet(blue=BLUE_FIVE))
    state = position(
        *sheets, active=1, step=Step.WHITE_SUM, dice=roll(1, 1, red=0), locked=("red",)
    )
    state = play(state, Cross(0, "green", 2))
    assert state.step is Step.WHITE_SUM and state.locking == ("green",)
    assert GAME.turn(state).on_throw() is None  # no roll may pass for them: they act by hand
    assert Cross(1, "yellow", 2) in GAME.legal_moves(state, 1)
    state = play(state, Cross(1, "yellow", 2))
    assert state.step is Step.WHITE_SUM
    state = play(state, Cross(2, "blue", 2))
    assert state.step is Step.OVER and state.end is EndReason.TWO_LOCKS
    assert state.locked == ("red", "green", "blue")
    assert state.sheets[1].yellow == (2,)
    assert dict(GAME.scores(state)[1].breakdown)["yellow"] == 1
    assert [sheet.penalties for sheet in state.sheets] == [0, 0, 0]


def test_third_row_closes_together_with_the_second() -> None:
    sheets = (Sheet(green=GREEN_FIVE), Sheet(blue=BLUE_FIVE), Sheet(green=GREEN_FIVE))
    state = position(*sheets, step=Step.WHITE_SUM, dice=roll(1, 1))
    state = play(state, Cross(1, "blue", 2), Cross(0, "green", 2), Cross(2, "green", 2))
    assert state.step is Step.OVER
    assert state.locked == ("blue", "green")
    sheets = (Sheet(green=GREEN_FIVE), Sheet(blue=BLUE_FIVE), Sheet())
    state = position(*sheets, step=Step.WHITE_SUM, dice=roll(1, 1, red=0), locked=("red",))
    state = play(state, Cross(1, "blue", 2), Cross(0, "green", 2), Pass(2))
    assert state.locked == ("red", "blue", "green")
    outcome = GAME.outcome(state)
    assert outcome is not None and "red and blue and green are locked" in outcome.message


def test_second_lock_in_the_colour_step_ends_the_game() -> None:
    state = position(
        Sheet(red=RED_FIVE),
        Sheet(),
        step=Step.COLOUR,
        dice=roll(6, 2, red=6, yellow=0),
        locked=("yellow",),
    )
    state = play(state, Cross(0, "red", 12))
    assert state.step is Step.OVER and state.end is EndReason.TWO_LOCKS
    assert state.locked == ("yellow", "red")


# -- scoring ------------------------------------------------------------------------------


def test_row_points_table() -> None:
    """1, 3, 6, 10, ... 78 for 1..12 crosses (NOTES.md)."""
    assert ROW_POINTS[1:] == (1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78)
    assert ROW_POINTS[0] == 0


def test_rulebook_scoring_example_kari_70() -> None:
    """Red 4 crosses (10), yellow 3 (6), green 8 (36), blue 7 (28), two penalties: 70."""
    kari = Sheet(
        red=(2, 3, 5, 8),
        yellow=(4, 6, 9),
        green=(12, 11, 10, 9, 7, 6, 5, 4),
        blue=(12, 10, 8, 6, 5, 2),  # six numbers and the lock: seven crosses
        penalties=2,
    )
    state = position(kari, Sheet())
    score = GAME.scores(state)[0]
    assert score.breakdown == (
        ("red", 10), ("yellow", 6), ("green", 36), ("blue", 28), ("penalties", -10),
    )  # fmt: skip
    assert score.total == 70
    assert [kari.crosses(c) for c in ROW_COLOURS] == [4, 3, 8, 7]


def test_full_row_is_twelve_crosses() -> None:
    full = Sheet(red=tuple(range(2, 13)))
    assert full.crosses("red") == 12
    assert GAME.scores(position(full, Sheet()))[0].total == 78


def test_ties_share_the_win() -> None:
    sheets = (Sheet(red=(2, 3), penalties=4), Sheet(yellow=(4, 5, 6)), Sheet(blue=(9, 8, 7)))
    state = State(3, 0, Step.OVER, sheets, end=EndReason.FOURTH_PENALTY)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (1, 2)
    assert "share the win with 6" in outcome.message
    assert GAME.outcome(position()) is None


# -- legal_moves agrees with check --------------------------------------------------------


def positions_from_random_play(seed: int, players: int) -> list[State]:
    rng = random.Random(seed)
    state = GAME.setup(Options(players=players, first_player=seed % players))
    seen = [state]
    while GAME.outcome(state) is None:
        state = GAME.play(state, random_action(GAME, state, rng))
        seen.append(state)
    return seen


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 5))
def test_legal_moves_agree_with_check(seed: int, players: int) -> None:
    candidates = all_candidate_moves(players)
    for state in positions_from_random_play(seed, players)[::3]:
        GAME.invariants(state)
        legal = {seat: GAME.legal_moves(state, seat) for seat in range(-1, players + 1)}
        for move in candidates:
            listed = move in legal[move.player]
            try:
                GAME.check(state, move)
                accepted = True
            except Rejection:
                accepted = False
            assert listed == accepted, (state, move)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 5))
def test_random_games_end_and_totals_match_breakdowns(seed: int, players: int) -> None:
    final = positions_from_random_play(seed, players)[-1]
    outcome = GAME.outcome(final)
    assert outcome is not None
    scores = GAME.scores(final)
    assert all(s.total == sum(p for _, p in s.breakdown) for s in scores)
    assert outcome.winners == tuple(
        s.player for s in scores if s.total == max(t.total for t in scores)
    )
    if outcome.reason == "two_locks":
        assert len(final.locked) >= 2
    else:
        assert max(sheet.penalties for sheet in final.sheets) == 4


# -- JSON and records ---------------------------------------------------------------------


def test_json_round_trip_and_format() -> None:
    state = position(
        Sheet(red=(2, 5), green=(11,), penalties=1),
        Sheet(),
        step=Step.COLOUR,
        dice=roll(3, 4, red=0),
        locked=("red",),
        active_crossed=True,
    )
    data = GAME.state_to_json(state)
    assert data["state"]["sheets"][0] == {
        "red": [2, 5], "yellow": [], "green": [11], "blue": [], "penalties": 1,
    }  # fmt: skip
    assert data["state"]["step"] == "colour"
    assert GAME.state_from_json(json.loads(json.dumps(data))) == state
    cross = Cross(1, "blue", 9)
    assert GAME.move_to_json(cross) == {"kind": "cross", "player": 1, "colour": "blue", "number": 9}
    assert GAME.move_from_json({"kind": "pass", "player": 2}) == Pass(2)
    assert GAME.move_from_json(GAME.move_to_json(cross)) == cross
    with pytest.raises(Rejection) as info:
        GAME.move_from_json({"kind": "cross", "player": 1, "colour": "blue"})
    assert info.value.reason is Reason.MALFORMED


def test_record_replays_to_its_end() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    session = replay_record(record)
    outcome = session.outcome()
    assert outcome is not None
    assert session.game is GAME
    assert GAME.turn(session.state).step == "over"
    assert len(session.actions) == len(record["actions"])
    assert session.scores()[outcome.winners[0]].total == max(s.total for s in session.scores())


def test_corrupted_record_names_the_bad_action() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    bad = copy.deepcopy(record)
    # The first cross made on a white sum: change its number so it no longer is the sum.
    index = next(
        i
        for i, action in enumerate(bad["actions"])
        if action["move"]["kind"] == "cross" and bad["actions"][i - 1]["move"]["kind"] == "roll"
    )
    bad["actions"][index]["move"]["number"] += (
        1 if bad["actions"][index]["move"]["number"] < 12 else -1
    )
    with pytest.raises(RecordError) as info:
        replay_record(bad)
    assert info.value.index == index
    assert info.value.rejection.rule == "white_sum"


# -- the next roll closes the turn (automatic passes) -------------------------------------


def play_throw(state: State, dice: Roll) -> State:
    """What a table with automatic passes does with a new throw: the passes the Turn
    declares, then the roll."""
    throw = GAME.turn(state).on_throw()
    assert throw is not None
    return play(state, *throw.implied, dice)


def test_the_next_roll_passes_for_those_who_have_not_crossed_the_white_sum() -> None:
    state = play(position(), WHITE_7, Cross(1, "red", 7))
    throw = GAME.turn(state).on_throw()
    assert throw is not None
    # seat 0 (active) and seat 2 have not acted: both pass, then seat 0's colour step
    assert throw.closes == (Pass(0), Pass(2), Pass(0))
    assert throw.moves == () and throw.roller == 1
    assert throw.dice.colours == ("white", "white", "red", "yellow", "green", "blue")
    after = play_throw(state, roll(2, 2))
    assert (after.step, after.active, after.waiting) == (Step.WHITE_SUM, 1, (1, 2, 0))
    # the active player crossed nothing: the rulebook's penalty
    assert [sheet.penalties for sheet in after.sheets] == [1, 0, 0]
    assert after.sheets[1].red == (7,)


def test_the_next_roll_in_the_colour_step_passes_for_the_active_player_only() -> None:
    state = play(position(), WHITE_7, Cross(0, "red", 7), Pass(1), Pass(2))
    assert state.step is Step.COLOUR
    throw = GAME.turn(state).on_throw()
    assert throw is not None and throw.closes == (Pass(0),)
    after = play_throw(state, roll(1, 1))
    assert [sheet.penalties for sheet in after.sheets] == [0, 0, 0]  # crossed on the white sum


def test_a_table_without_automatic_passes_expects_no_roll_while_the_turn_is_open() -> None:
    state = play(position(), WHITE_7)
    assert GAME.turn(state).on_throw(close_step=False) is None
    with pytest.raises(Rejection) as info:
        GAME.check(state, roll(1, 1))
    assert info.value.rule == "no_roll_expected"


def test_rows_locked_on_the_white_sum_leave_the_next_roll() -> None:
    sheets = (Sheet(green=GREEN_FIVE), Sheet(), Sheet())
    state = play(position(*sheets), roll(1, 1), Cross(0, "green", 2))
    throw = GAME.turn(state).on_throw()
    assert throw is not None
    assert throw.dice.colours == ("white", "white", "red", "yellow", "blue")


def test_no_automatic_pass_ends_the_game() -> None:
    """A fourth penalty or a second lock is the players' call, not a throw's."""
    last = position(Sheet(penalties=3), Sheet(), Sheet(), step=Step.COLOUR, dice=WHITE_7)
    assert GAME.turn(last).on_throw() is None
    sheets = (Sheet(green=GREEN_FIVE), Sheet(), Sheet())
    locking = play(position(*sheets, locked=("red",)), roll(1, 1, red=0), Cross(0, "green", 2))
    assert GAME.turn(locking).on_throw() is None
