"""Qwixx's pass button says what it costs, as the engine scores it: the active player's
pass after crossing nothing reads "Pass: −5 penalty" and asks once; every other pass reads
"Pass (no cross)" and is sent at the first tap."""

from __future__ import annotations

from companion.rules.base import Move
from companion.rules.qwixx import Cross, Pass, Qwixx, State
from companion.table.access import Viewer
from companion.web.views import SheetInput, sheet_context
from companion.web.views import qwixx as qwixx_view
from tests.web.helpers import roll, snapshot_of

ROLL_7 = roll(("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1))


def pass_button(moves: list[Move], seat: int) -> dict[str, object]:
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], moves)
    buttons = sheet_context(snapshot, seat, Viewer(seat=seat, host=False))["buttons"]
    (button,) = [b for b in buttons if '"pass"' in b["move"]]
    return dict(button)


def test_a_free_pass_reads_no_cross_and_does_not_ask() -> None:
    for seat in (0, 1):  # the white sum: nobody pays for passing it
        button = pass_button([ROLL_7], seat)
        assert button["label"] == "Pass (no cross)" and "confirm" not in button


def test_the_active_players_pass_after_no_cross_names_its_penalty_and_asks_once() -> None:
    colour_step = [ROLL_7, Pass(player=0), Pass(player=1)]
    button = pass_button(colour_step, 0)
    assert button["label"] == "Pass: \N{MINUS SIGN}5 penalty"
    assert button["confirm"] == "Tap again to pass and take \N{MINUS SIGN}5"


def test_after_a_white_sum_cross_the_colour_pass_is_free() -> None:
    crossed = [ROLL_7, Cross(player=0, colour="red", number=7), Pass(player=1)]
    button = pass_button(crossed, 0)
    assert button["label"] == "Pass (no cross)" and "confirm" not in button


def test_the_pass_that_marks_a_fourth_penalty_says_it_ends_the_game() -> None:
    """Mum passed her turn with three penalties: the button read "Pass: −5 penalty" like
    any other, and the game was over for the whole table at her second tap. A fourth
    penalty ends the game at once (rulebook), and the button and its question say so."""
    three_each = [
        move
        for turn in range(6)  # Ann, Bob, Ann, Bob, Ann, Bob: each passes a turn 3 times
        for move in (ROLL_7, Pass(player=0), Pass(player=1), Pass(player=turn % 2))
    ]
    button = pass_button([*three_each, ROLL_7, Pass(player=0), Pass(player=1)], 0)
    assert button["label"] == "Pass: \N{MINUS SIGN}5 penalty, ends the game"
    assert button["confirm"] == "Tap again to take your fourth penalty: the game ends"


def white(first: int, second: int, locked: tuple[str, ...] = ()) -> Move:
    """A roll of two white dice and every coloured die still in the game showing 1."""
    colours = [c for c in ("red", "yellow", "green", "blue") if c not in locked]
    return roll(("white", first), ("white", second), *[(c, 1) for c in colours])


def test_the_last_pass_on_a_white_sum_that_locks_a_second_row_says_it_ends_the_game() -> None:
    """Red is locked (Ann's); Bob locks yellow on the white sum 12, and Ann is the last to
    act on it: her pass, free as any white-sum pass, ends the game (the second lock closes
    when everyone has acted: rulebook, "Either way the game is over"). It read "Pass (no
    cross)" and went at the first tap; it says so and asks once, as the fourth penalty's."""
    moves: list[Move] = []
    for turn, (first, second) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)]):
        moves += [white(first, second), Cross(0, "red", first + second)]
        moves += [Cross(1, "yellow", first + second), Pass(player=turn % 2)]
    moves += [white(6, 6), Cross(0, "red", 12), Pass(player=1), Pass(player=1)]  # Bob's turn
    moves += [white(6, 6, ("red",)), Cross(1, "yellow", 12)]  # Ann rolls; Bob locks yellow
    button = pass_button(moves, 0)
    assert button["label"] == "Pass (no cross), ends the game"
    assert button["confirm"] == "Tap again to pass: the game ends"
    bob_first = pass_button([*moves[:-1]], 1)  # before Bob's lock nothing ends the game
    assert bob_first["label"] == "Pass (no cross)" and "confirm" not in bob_first


class PenaltyOfThree(Qwixx):
    """Qwixx whose penalty the engine says is -3 while its score sheet still counts -5: a
    view that reads the cost off the engine's `penalty` says -3, one that works it out from
    the scores says -5."""

    def penalty(self, state: State, move: Move) -> int:
        return -3 if super().penalty(state, move) < 0 else 0


def test_the_pass_button_takes_its_cost_from_the_engines_penalty() -> None:
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], [ROLL_7, Pass(player=0), Pass(player=1)])
    game = PenaltyOfThree()
    inp = SheetInput(
        game=game,
        state=snapshot.state,
        seat=0,
        name="Ann",
        turn=snapshot.turn,
        score=snapshot.scores[0],
        legal=tuple(game.legal_moves(snapshot.state, 0)),
        markable=True,
        outcome=None,
        players=("Ann", "Bob"),
    )
    (button,) = qwixx_view.sheet(inp)["buttons"]
    assert button["label"] == "Pass: \N{MINUS SIGN}3 penalty"
