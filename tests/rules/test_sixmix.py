"""Sixmix rules (companion/rules/sixmix.py): every rule of shared/rules/sixmix.txt and the
Sixmix part of NOTES.md, plus the module's house decisions, as table-driven scenarios
(position + move -> new position or a named refusal); the rulebook's scoring example; the
round end, next starter, game end and tie rules; records and JSON round-trips."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import Die, Move, Reason, Rejection, Roll, Score
from companion.rules.session import RecordError, replay_record
from companion.rules.sixmix import (
    DEFAULT_COLOURS,
    FREE,
    GAME,
    Options,
    Place,
    RoundResult,
    Starter,
    State,
    die_at,
    digits_of,
    last_round,
    rank_points,
    row_value,
    triplet_points,
    unplaced_colours,
)
from companion.simulate import random_action

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "sixmix.json"

# The rulebook's example (sixmix.txt, "Calculating Points"); light blue is our teal.
RULEBOOK_ROWS = ["365231", "651344", "651155", "443554", "113253"]

# -- factories ----------------------------------------------------------------------------


def start(players: int = 4, **options: object) -> State:
    return GAME.setup(Options(players=players, **options))  # type: ignore[arg-type]


def roll_with(state: State, *front: Die) -> State:
    """Roll the active player's unplaced dice: `front` dice first, every other die shows 1."""
    turn = GAME.turn(state)
    assert turn.dice is not None
    rest = list(turn.dice.colours)
    for die in front:
        rest.remove(die.colour)
    return GAME.play(state, Roll(dice=(*front, *(Die(c, 1) for c in rest))))


def play_turn(state: State, die: Die, row: str, space: int) -> State:
    """The active player rolls (with `die` among her dice) and places `die`."""
    rolled = roll_with(state, die)
    return GAME.play(rolled, Place(rolled.active, die, row, space))


def literal(
    rows: list[str],
    *,
    players: int | None = None,
    before: tuple[int, ...] | None = None,
    starter: int = 0,
) -> State:
    """A position from row strings ("36523." : a digit per die, "." for a free space). Each
    die has its row's colour. `before`: the points of one earlier round. The active player is
    the owner of the first row with a free space."""
    seats = players or len(rows)
    colours = DEFAULT_COLOURS[: len(rows)]
    board = tuple(
        tuple(FREE if ch == "." else f"{colours[r]} {ch}" for ch in row)
        for r, row in enumerate(rows)
    )
    free_row = next(r for r, row in enumerate(rows) if "." in row)
    per_seat = len(rows) // seats
    return State(
        players=seats,
        colours=colours,
        target=10,
        round=1 if before is None else 2,
        starter=starter,
        active=free_row // per_seat,
        board=board,
        points=before or (0,) * seats,
        round_points=() if before is None else (before,),
    )


def last_placement(rows: list[str], value: int, **kwargs: object) -> tuple[State, Place]:
    """A position with one free space, its owner's last die rolled, and the move filling it."""
    state = literal(rows, **kwargs)  # type: ignore[arg-type]
    row = next(r for r, cells in enumerate(rows) if "." in cells)
    colour = state.colours[row]
    die = Die(colour, value)
    state = GAME.play(state, Roll(dice=(die,)))
    return state, Place(state.active, die, colour, rows[row].index("."))


def refusal(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


# -- setup and options --------------------------------------------------------------------


def test_default_options_make_a_four_player_game() -> None:
    state = GAME.setup(Options())
    assert state.colours == ("green", "blue", "red", "orange")
    assert state.active == 0 and state.round == 1 and state.points == (0, 0, 0, 0)
    turn = GAME.turn(state)
    assert turn.step == "roll" and turn.chance and turn.players == ()
    assert turn.dice is not None and turn.dice.colours == ("green",) * 6


@pytest.mark.parametrize(
    ("players", "rows"),
    [
        (2, ("green", "blue", "red", "orange")),
        (3, ("green", "blue", "red")),
        (5, ("green", "blue", "red", "orange", "teal")),
    ],
)
def test_only_rows_of_colours_in_play_are_active(players: int, rows: tuple[str, ...]) -> None:
    state = start(players)
    assert state.colours == rows
    assert len(state.board) == len(rows)


def test_two_players_each_roll_twelve_dice_of_two_colours() -> None:
    state = start(2)
    assert sorted(unplaced_colours(state, 0)) == ["blue"] * 6 + ["green"] * 6
    assert sorted(unplaced_colours(state, 1)) == ["orange"] * 6 + ["red"] * 6
    turn = GAME.turn(state)
    assert turn.dice is not None and len(turn.dice.colours) == 12


def test_first_player_comes_from_the_options() -> None:
    state = start(3, first_player=2)
    assert state.active == 2 and state.starter == 2
    assert GAME.turn(state).dice.colours == ("red",) * 6  # type: ignore[union-attr]


def test_options_for_gives_the_player_count() -> None:
    assert GAME.options_for(5) == Options(players=5)


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        (Options(players=1), "players"),
        (Options(players=6), "players"),
        (Options(players=4, colours=("green", "blue", "red")), "colours"),
        (Options(players=2, colours=("green", "blue", "red")), "colours"),
        (Options(players=3, colours=("green", "lightblue", "red")), "colours"),
        (Options(players=3, colours=("green", "green", "red")), "colours"),
        (Options(players=3, first_player=3), "first_player"),
        (Options(players=3, first_player=-1), "first_player"),
        (Options(target=0), "target"),
    ],
)
def test_bad_options_are_refused_by_name(options: Options, rule: str) -> None:
    with pytest.raises(Rejection) as info:
        GAME.setup(options)
    assert info.value.reason is Reason.BAD_OPTIONS
    assert info.value.rule == rule


def test_parse_options_reads_json_and_refuses_bad_fields() -> None:
    assert GAME.parse_options({"players": 3, "colours": ["red", "green", "blue"]}) == Options(
        players=3, colours=("red", "green", "blue")
    )
    with pytest.raises(Rejection) as info:
        GAME.parse_options({"players": "three"})
    assert info.value.reason is Reason.BAD_OPTIONS


# -- the turn: roll, then place one die --------------------------------------------------


def test_a_turn_is_a_roll_of_the_unplaced_dice_then_one_placement() -> None:
    state = start(3)
    rolled = GAME.play(state, Roll(dice=tuple(Die("green", v) for v in (6, 5, 4, 3, 2, 1))))
    turn = GAME.turn(rolled)
    assert turn.step == "place" and turn.players == (0,) and not turn.chance
    placed = GAME.play(rolled, Place(0, Die("green", 6), "green", 0))
    assert die_at(placed, 0, 0) == Die("green", 6)
    assert placed.roll == () and placed.active == 1
    assert GAME.turn(placed).dice.colours == ("blue",) * 6  # type: ignore[union-attr]
    # Next time green rolls only her five unplaced dice.
    placed = play_turn(placed, Die("blue", 2), "blue", 0)
    placed = play_turn(placed, Die("red", 3), "red", 0)
    assert placed.active == 0
    assert GAME.turn(placed).dice.colours == ("green",) * 5  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "dice",
    [
        (Die("blue", 1),) * 6,  # not green's dice
        (Die("green", 1),) * 5,  # one die missing
        (Die("green", 1),) * 7,  # one die too many
    ],
)
def test_a_roll_must_be_the_active_players_unplaced_dice(dice: tuple[Die, ...]) -> None:
    rejection = refusal(start(3), Roll(dice=dice))
    assert rejection.reason is Reason.WRONG_DICE


def test_a_die_value_must_be_one_to_six() -> None:
    rejection = refusal(start(3), Roll(dice=(Die("green", 7),) + (Die("green", 1),) * 5))
    assert (rejection.reason, rejection.rule) == (Reason.WRONG_DICE, "die_value")


def test_no_placement_before_the_roll_and_no_second_roll() -> None:
    state = start(3)
    assert refusal(state, Place(0, Die("green", 1), "green", 0)).rule == "waiting_for_roll"
    rolled = roll_with(state)
    rejection = refusal(rolled, Roll(dice=(Die("green", 1),) * 6))
    assert (rejection.reason, rejection.rule) == (Reason.NOT_YOUR_TURN, "no_roll_expected")


# -- refusals, one per rule ----------------------------------------------------------------

# Three players whose board markers include blue and teal, which are not in play here.
NOT_BLUE = ("green", "red", "orange", "blue", "teal")


def green_rolled() -> State:
    """Green to place from a roll of 5, 5, 4, 3, 2, 1 (nothing placed yet)."""
    state = start(3, colours=NOT_BLUE)
    dice = tuple(Die("green", v) for v in (5, 5, 4, 3, 2, 1))
    return GAME.play(state, Roll(dice=dice))


def red_rolled_after_green_took_red_1000() -> State:
    """Green put a 5 in red's 1,000 space; red has rolled 6, 1, 1, 1, 1, 1."""
    state = play_turn(start(3, colours=NOT_BLUE), Die("green", 5), "red", 2)
    return roll_with(state, Die("red", 6))


POSITIONS: dict[str, Callable[[], State]] = {
    "green_rolled": green_rolled,
    "red_rolled": red_rolled_after_green_took_red_1000,
}


@pytest.mark.parametrize(
    ("position", "move", "reason", "rule", "message"),
    [
        (
            "green_rolled",
            Place(1, Die("green", 5), "green", 3),
            Reason.NOT_YOUR_TURN,
            "not_your_turn",
            "you may not act now",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 6), "green", 0),
            Reason.ILLEGAL_MOVE,
            "die_not_rolled",
            "your roll has no green 6",
        ),
        (
            "green_rolled",
            Place(0, Die("red", 5), "red", 3),
            Reason.ILLEGAL_MOVE,
            "die_not_rolled",
            "your roll has no red 5",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 5), "blue", 3),
            Reason.ILLEGAL_MOVE,
            "row_not_in_play",
            "blue's row is not in play",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 5), "purple", 3),
            Reason.ILLEGAL_MOVE,
            "row_not_in_play",
            "purple's row is not in play",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 5), "red", 6),
            Reason.ILLEGAL_MOVE,
            "no_such_space",
            "there is no space 6",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 5), "red", -1),
            Reason.ILLEGAL_MOVE,
            "no_such_space",
            "there is no space -1",
        ),
        (
            "green_rolled",
            Place(0, Die("green", 5), "red", 0),
            Reason.ILLEGAL_MOVE,
            "owner_fills_first_space",
            "only player 2 may fill red's 100,000 space",
        ),
        (
            "red_rolled",
            Place(1, Die("red", 6), "red", 2),
            Reason.ILLEGAL_MOVE,
            "space_taken",
            "that space is taken",
        ),
        (
            "red_rolled",
            Place(1, Die("red", 6), "green", 0),
            Reason.ILLEGAL_MOVE,
            "owner_fills_first_space",
            "only player 1 may fill green's 100,000 space",
        ),
    ],
)
def test_refusals_name_the_rule(
    position: str, move: Place, reason: Reason, rule: str, message: str
) -> None:
    state = POSITIONS[position]()
    rejection = refusal(state, move)
    assert (rejection.reason, rejection.rule) == (reason, rule)
    assert message in rejection.message
    assert move not in GAME.legal_moves(state, move.player)


def test_the_owner_fills_her_100000_space_with_any_rolled_die() -> None:
    state = green_rolled()
    after = GAME.play(state, Place(0, Die("green", 1), "green", 0))
    assert die_at(after, 0, 0) == Die("green", 1)


def keep_die_position() -> State:
    """Three players; green has placed five dice outside her own row and rolled her last
    die, a 4, while her 100,000 space is still free."""
    board = (
        (FREE, "red 1", "red 1", FREE, "red 1", "orange 4"),
        ("red 1", "green 6", "green 6", "green 6", "red 1", "orange 4"),
        ("orange 1", "green 6", "green 6", "orange 6", FREE, "orange 1"),
    )
    state = State(
        players=3,
        colours=("green", "red", "orange"),
        target=10,
        round=1,
        starter=0,
        active=0,
        board=board,
        points=(0, 0, 0),
    )
    GAME.invariants(state)
    return GAME.play(state, Roll(dice=(Die("green", 4),)))


def test_the_last_die_must_go_to_the_own_100000_space() -> None:
    state = keep_die_position()
    rejection = refusal(state, Place(0, Die("green", 4), "orange", 4))
    assert (rejection.reason, rejection.rule) == (Reason.ILLEGAL_MOVE, "keep_die_for_first_space")
    assert rejection.message == "you must keep a die for your own 100,000 space"
    assert GAME.legal_moves(state, 0) == [Place(0, Die("green", 4), "green", 0)]


def test_a_player_whose_100000_space_is_filled_places_anywhere_free() -> None:
    state = green_rolled()
    state = GAME.play(state, Place(0, Die("green", 5), "green", 0))
    state = play_turn(state, Die("red", 1), "red", 0)
    state = play_turn(state, Die("orange", 1), "orange", 0)
    state = roll_with(state, Die("green", 2))
    moves = GAME.legal_moves(state, 0)
    assert Place(0, Die("green", 2), "red", 1) in moves
    assert all(isinstance(m, Place) and m.space != 0 for m in moves)
    assert len({(m.row, m.space) for m in moves if isinstance(m, Place)}) == 15


def two_player_reserve_position() -> State:
    """Two players, red-and-orange started: green-and-blue has two dice left (green 3,
    blue 5 rolled) and both her 100,000 spaces free; red-and-orange has one die left."""
    board = (
        (FREE, "green 1", "green 1", "red 1", "red 1", "orange 1"),
        (FREE, "green 1", "blue 1", "blue 1", "red 1", "orange 1"),
        ("red 1", "green 1", "blue 1", "blue 1", "red 1", "orange 1"),
        ("orange 1", "green 1", "blue 1", "red 1", "orange 1", FREE),
    )
    state = State(
        players=2,
        colours=("green", "blue", "red", "orange"),
        target=10,
        round=1,
        starter=1,
        active=0,
        board=board,
        points=(0, 0),
    )
    GAME.invariants(state)
    return GAME.play(state, Roll(dice=(Die("green", 3), Die("blue", 5))))


def test_two_players_keep_a_die_for_each_own_100000_space() -> None:
    state = two_player_reserve_position()
    rejection = refusal(state, Place(0, Die("blue", 5), "orange", 5))
    assert rejection.rule == "keep_die_for_first_space"
    assert rejection.message == "you must keep a die for each of your own 100,000 spaces"
    assert refusal(state, Place(0, Die("blue", 5), "red", 0)).rule == "space_taken"
    moves = GAME.legal_moves(state, 0)
    assert {(m.die, m.row) for m in moves if isinstance(m, Place)} == {
        (Die(c, v), row) for c, v in (("green", 3), ("blue", 5)) for row in ("green", "blue")
    }
    # Either colour may fill either of her own 100,000 spaces.
    after = GAME.play(state, Place(0, Die("green", 3), "blue", 0))
    assert die_at(after, 1, 0) == Die("green", 3)
    assert refusal(state, Place(1, Die("green", 3), "green", 0)).reason is Reason.NOT_YOUR_TURN


def test_legal_moves_offer_one_move_per_face_and_free_space() -> None:
    state = GAME.play(start(4), Roll(dice=tuple(Die("green", v) for v in (5, 5, 5, 1, 1, 2))))
    moves = GAME.legal_moves(state, 0)
    # green's own 100,000 space + five spaces in each of four rows, for the faces 5, 1, 2
    assert len(moves) == 3 * (1 + 4 * 5)
    assert len(set(moves)) == len(moves)
    assert GAME.legal_moves(state, 1) == []
    assert GAME.legal_moves(start(4), 0) == []  # the roll comes first


# -- legal_moves agrees with check ----------------------------------------------------------


def candidate_moves(state: State) -> list[Place]:
    """Every plausible placement: each seat, rolled dice plus a foreign one, each row in play
    plus one out of play, spaces -1 to 6."""
    dice = [*dict.fromkeys(state.roll), Die("purple", 3), Die(state.colours[0], 6)]
    rows = [*state.colours, "purple"]
    return [
        Place(seat, die, row, space)
        for seat in range(state.players)
        for die in dice
        for row in rows
        for space in range(-1, 7)
    ]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000), players=st.integers(2, 5), steps=st.integers(0, 70))
def test_legal_moves_agree_with_check(seed: int, players: int, steps: int) -> None:
    rng = random.Random(seed)
    state = start(players, first_player=seed % players)
    for _ in range(steps):
        state = GAME.play(state, random_action(GAME, state, rng))
    if state.over:
        return
    if not state.roll:
        state = GAME.play(state, random_action(GAME, state, rng))
    legal = set(GAME.legal_moves(state, state.active))
    assert legal, "the player to move always has a placement"
    for move in candidate_moves(state):
        try:
            GAME.check(state, move)
        except Rejection:
            assert move not in legal
        else:
            assert move in legal


# -- scoring --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "points"),
    [
        ((5, 4, 3), (2, 1, 0)),
        ((5, 5, 3), (3, 3, 0)),  # tied for the top: both places each
        ((5, 5, 5, 1), (3, 3, 3, 0)),
        ((5, 4, 4, 1), (2, 1, 1, 0)),  # tied for second: 1 each
        ((2, 2), (3, 3)),
        ((1, 9), (1, 2)),
    ],
)
def test_rank_points(values: tuple[int, ...], points: tuple[int, ...]) -> None:
    assert rank_points(values) == points


@pytest.mark.parametrize(
    ("digits", "points"),
    [
        ((1, 2, 3, 4, 5, 6), 0),
        ((5, 1, 5, 2, 5, 3), 1),  # not adjacent
        ((4, 4, 4, 4, 1, 2), 1),
        ((4, 4, 4, 4, 4, 2), 1),
        ((6, 6, 6, 6, 6, 6), 2),  # a sextuplet is two triplets
        ((1, 1, 1, 2, 2, 2), 2),
        ((1, 1, 2, 2, 3, 3), 0),
    ],
)
def test_triplet_points(digits: tuple[int, ...], points: int) -> None:
    assert triplet_points(digits) == points


def test_row_value_reads_the_dice_as_digits() -> None:
    assert row_value((3, 6, 5, 2, 3, 1)) == 365_231
    assert digits_of(365_231) == (3, 6, 5, 2, 3, 1)


def test_rulebook_example_round() -> None:
    """Green 365,231; dark blue 651,344 -> 2; red 651,155 -> 2 (2nd + triplet of 5);
    orange 443,554 -> 1 (triplet of 4); light blue (teal) 113,253 -> 0."""
    rows = [*RULEBOOK_ROWS[:4], "11325."]
    state, move = last_placement(rows, 3, starter=2)
    after = GAME.play(state, move)
    assert last_round(after) == RoundResult(
        number=1,
        row_values=(365_231, 651_344, 651_155, 443_554, 113_253),
        rank_points=(0, 2, 1, 0, 0),
        triplet_points=(0, 0, 1, 1, 0),
    )
    assert after.points == (0, 2, 2, 1, 0)
    assert after.round_points == ((0, 2, 2, 1, 0),)
    assert last_round(state) is None
    # The lowest total (teal, 113,253) starts round 2 on an empty board.
    assert after.round == 2 and after.starter == 4 and after.active == 4
    assert all(cell == FREE for row in after.board for cell in row)
    assert GAME.turn(after).dice.colours == ("teal",) * 6  # type: ignore[union-attr]
    assert GAME.outcome(after) is None
    assert GAME.scores(after)[2] == Score(2, 2, (("round 1", 2),))


def test_two_players_rank_each_row_and_the_owner_collects() -> None:
    # green-and-blue owns the two highest rows: 2 + 1; red's triplet of 2s goes to red's owner.
    state, move = last_placement(["6.1111", "512345", "222413", "123456"], 1, players=2)
    after = GAME.play(state, move)
    result = last_round(after)
    assert result is not None
    assert result.rank_points == (2, 1, 0, 0)
    assert result.triplet_points == (1, 0, 1, 0)  # green: five 1s
    assert after.points == (2 + 1 + 1, 1)
    assert after.starter == 1  # 123,456 is the lowest row, red-and-orange's


def test_two_players_collect_every_tied_row() -> None:
    state, move = last_placement(["12345.", "123456", "654321", "111222"], 6, players=2)
    after = GAME.play(state, move)
    # green and blue tie for second: one point each, both to green-and-blue
    assert last_round(after) == RoundResult(
        1, (123456, 123456, 654321, 111222), (1, 1, 2, 0), (0, 0, 0, 2)
    )
    assert after.points == (2, 2 + 2)
    state, move = last_placement(["65432.", "654321", "123456", "111222"], 1, players=2)
    after = GAME.play(state, move)
    assert last_round(after) == RoundResult(
        1, (654321, 654321, 123456, 111222), (3, 3, 0, 0), (0, 0, 0, 2)
    )
    assert after.points == (6, 2)


@pytest.mark.parametrize(
    ("starter", "expected"),
    [(0, 1), (1, 2), (2, 1)],
)
def test_tied_lowest_rows_the_first_owner_clockwise_after_the_last_starter_starts(
    starter: int, expected: int
) -> None:
    # blue and red tie for the lowest row (111,111); green is higher.
    state, move = last_placement(["65432.", "111111", "111111"], 1, starter=starter)
    after = GAME.play(state, move)
    assert after.starter == expected and after.active == expected


def test_the_table_may_hand_a_tied_start_to_another_tied_player() -> None:
    """The rulebook's youngest: the companion's starter (or the host) hands the start to
    the other tied owner before the round's first roll; the record holds the move."""
    state, move = last_placement(["65432.", "111111", "111111"], 1, starter=0)
    after = GAME.play(state, move)
    assert (after.starter, after.tied) == (1, (1, 2))
    turn = GAME.turn(after)
    assert turn.chance and turn.players == (1,)
    assert GAME.legal_moves(after, 1) == [Starter(1, 2)]
    assert GAME.legal_moves(after, 2) == []
    handed = GAME.play(after, Starter(1, 2))
    assert (handed.starter, handed.active) == (2, 2)
    spec = GAME.turn(handed).dice
    assert spec is not None and set(spec.colours) == {"red"}  # the new starter's dice
    rolled = roll_with(handed, Die("red", 4))
    assert rolled.tied == () and GAME.legal_moves(rolled, 2) != []
    assert GAME.move_from_json(GAME.move_to_json(Starter(1, 2))) == Starter(1, 2)


def test_the_start_goes_only_to_another_tied_player_before_the_first_roll() -> None:
    state, move = last_placement(["65432.", "111111", "111111"], 1, starter=0)
    after = GAME.play(state, move)
    rejection = refusal(after, Starter(1, 0))
    assert (rejection.rule, rejection.message) == (
        "starter_among_tied",
        "the start goes to another of those tied for the lowest row: player 3",
    )
    assert refusal(after, Starter(2, 1)).rule == "not_your_turn"
    rolled = roll_with(after, Die("blue", 4))
    assert refusal(rolled, Starter(1, 2)).rule == "no_tie_to_settle"
    untied, last = last_placement(["65432.", "123456", "111111"], 1, starter=0)
    no_tie = GAME.play(untied, last)
    assert no_tie.tied == ()
    # docs/game-records.md: with no tie the starter may not act before the roll at all
    other = (no_tie.active + 1) % 3
    assert refusal(no_tie, Starter(no_tie.active, other)).rule == "waiting_for_roll"


def test_scores_list_the_chips_of_every_round() -> None:
    state, move = last_placement(["65432.", "123456", "111222"], 1, before=(1, 3, 0))
    after = GAME.play(state, move)
    assert after.round_points == ((1, 3, 0), (2, 1, 2))
    assert GAME.scores(after) == (
        Score(0, 3, (("round 1", 1), ("round 2", 2))),
        Score(1, 4, (("round 1", 3), ("round 2", 1))),
        Score(2, 2, (("round 1", 0), ("round 2", 2))),
    )


# -- the end ---------------------------------------------------------------------------------


def test_the_game_ends_at_the_round_end_when_someone_has_ten() -> None:
    state, move = last_placement(["65432.", "123456", "111234"], 1, before=(9, 0, 5))
    assert GAME.outcome(state) is None
    final = GAME.play(state, move)
    assert final.over and final.points == (11, 1, 6)
    assert GAME.outcome(final) is not None
    assert GAME.outcome(final).winners == (0,)  # type: ignore[union-attr]
    assert GAME.outcome(final).reason == "target_reached"  # type: ignore[union-attr]
    assert GAME.outcome(final).message == "Player 1 wins with 11 points"  # type: ignore[union-attr]
    # The final board stays on the table.
    assert die_at(final, 0, 5) == Die("green", 1)
    turn = GAME.turn(final)
    assert (turn.step, turn.active, turn.players, turn.chance) == ("over", None, (), False)
    assert all(GAME.legal_moves(final, seat) == [] for seat in range(3))
    rejection = refusal(final, Roll(dice=(Die("green", 1),)))
    assert rejection.reason is Reason.GAME_OVER


def test_the_game_goes_on_while_everyone_is_below_the_target() -> None:
    state, move = last_placement(["65432.", "123456", "111234"], 1, before=(5, 0, 5))
    after = GAME.play(state, move)
    assert after.points == (7, 1, 6) and not after.over


@pytest.mark.parametrize(
    ("rows", "value", "players", "before", "reason", "winners"),
    [
        # Green and red both reach 10: green's 654,321 beats red's 555,111.
        (["65432.", "555111", "111222"], 1, None, (8, 7, 0), "tie_break_row_value", (0,)),
        # Two rows per player: equal sums (722,222), green-and-blue's 6 beats red's 5.
        (
            ["611111", "111111", "511111", "21111."],
            1,
            2,
            (5, 7),
            "tie_break_first_space",
            (0,),
        ),
        # Equal rows: a shared win.
        (["12345.", "123456", "111111"], 6, None, (7, 7, 0), "shared_win", (0, 1)),
    ],
)
def test_end_ties(
    rows: list[str],
    value: int,
    players: int | None,
    before: tuple[int, ...],
    reason: str,
    winners: tuple[int, ...],
) -> None:
    state, move = last_placement(rows, value, players=players, before=before)
    final = GAME.play(state, move)
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert len({final.points[s] for s in winners}) == 1
    assert (outcome.reason, outcome.winners) == (reason, winners)


def test_only_the_leaders_enter_the_tie_break() -> None:
    state, move = last_placement(["12345.", "654321", "111222"], 6, before=(5, 9, 9))
    final = GAME.play(state, move)
    assert final.points == (6, 11, 11)
    outcome = GAME.outcome(final)
    assert outcome is not None and outcome.reason == "tie_break_row_value"
    assert outcome.winners == (1,)


# -- JSON, invariants, records --------------------------------------------------------------


def test_states_and_moves_round_trip_through_json() -> None:
    rows = [*RULEBOOK_ROWS[:4], "11325."]
    state, move = last_placement(rows, 3)
    for value in (start(2), green_rolled(), state, GAME.play(state, move)):
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(value)))) == value
    data = {
        "kind": "place",
        "player": 0,
        "die": {"colour": "red", "value": 5},
        "row": "blue",
        "space": 3,
    }
    assert GAME.move_from_json(data) == Place(0, Die("red", 5), "blue", 3)
    assert GAME.move_to_json(Place(0, Die("red", 5), "blue", 3)) == data


def test_malformed_moves_are_refused() -> None:
    with pytest.raises(Rejection) as info:
        GAME.move_from_json({"kind": "place", "player": 0, "row": "red", "space": 1})
    assert info.value.reason is Reason.MALFORMED
    with pytest.raises(Rejection) as info:
        GAME.move_from_json({"kind": "cross", "player": 0})
    assert info.value.reason is Reason.MALFORMED


@dataclass(frozen=True, slots=True)
class Shout(Move):
    """A move kind Sixmix does not know."""

    kind: ClassVar[str] = "shout"


def test_a_move_of_another_kind_is_refused() -> None:
    rejection = refusal(green_rolled(), Shout(0))
    assert (rejection.reason, rejection.rule) == (Reason.MALFORMED, "move_kind")


def test_invariants_catch_a_foreign_die_in_a_100000_space() -> None:
    state = literal(["65432.", "123456", "111234"])
    GAME.invariants(state)
    broken = replace(state, board=(("blue 6", *state.board[0][1:]), *state.board[1:]))
    with pytest.raises(AssertionError):
        GAME.invariants(broken)


def test_the_example_record_replays_to_its_end() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    session = replay_record(record)
    outcome = session.outcome()
    assert session.state.over and len(session.actions) == len(record["actions"])
    # The recorded game ends in round 6 with green and blue on 10 points; green's final row
    # (661,553) beats blue's (623,144).
    assert session.state.round == 6 and session.state.points == (10, 10, 9)
    assert session.state.last_values == (661_553, 623_144, 612_263)
    assert outcome is not None and outcome.reason == "tie_break_row_value"
    assert outcome.winners == (0,)


def test_a_corrupted_record_names_the_bad_action() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    bad = copy.deepcopy(record)
    index = next(i for i, a in enumerate(bad["actions"]) if a["move"]["kind"] == "place" and i > 10)
    bad["actions"][index]["move"]["space"] = 9
    with pytest.raises(RecordError) as info:
        replay_record(bad)
    assert info.value.index == index
    assert info.value.rejection.rule == "no_such_space"


def test_a_game_the_host_ended_says_which_tie_break_won() -> None:
    """No rulebook end yet (nobody on 10): the host ends it with green and blue level on 6
    points; green's row of the latest round (654,321) beats blue's, and the end card says so
    in words, as Sixto's "on most crosses" (it said nothing)."""
    state, move = last_placement(["65432.", "555111", "111222"], 1, before=(4, 3, 0))
    ended = GAME.play(state, move)
    assert not ended.over and ended.points == (6, 6, 2)
    assert GAME.winners(ended, ended_early=True) == (0,)
    assert GAME.tie_break_words(ended) == "on the higher row value in round 2 (654,321)"
    # ahead on points, or tied with equal boards: nothing to say
    ahead = GAME.play(*last_placement(["65432.", "123456", "112233"], 1))
    assert GAME.tie_break_words(ahead) is None
    shared = GAME.play(*last_placement(["12345.", "123456", "111111"], 6, before=(2, 2, 0)))
    assert GAME.leaders(shared) == (0, 1) and GAME.tie_break_words(shared) is None


def test_the_100000_digits_break_a_tie_from_the_scored_round_not_the_next_board() -> None:
    """Two rows each, equal sums (722,222) and points (8 each): green-and-blue's 6 beats
    red-and-orange's 5. A die placed on the next round's board changes nothing."""
    state, move = last_placement(
        ["611111", "111111", "511111", "21111."], 1, players=2, before=(3, 5)
    )
    ended = GAME.play(state, move)
    assert not ended.over and ended.points == (8, 8)
    assert GAME.tie_break_words(ended) == "on the higher 100,000 digits in round 2 (6 and 1)"
    die = Die(ended.colours[2 * ended.active], 4)
    next_board = play_turn(ended, die, ended.colours[0], 3)
    assert GAME.leaders(next_board) == (0,)
    assert GAME.tie_break_words(next_board) == "on the higher 100,000 digits in round 2 (6 and 1)"
