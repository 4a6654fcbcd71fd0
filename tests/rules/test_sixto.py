"""Sixto rules (companion/rules/sixto.py) and sheet files (companion/sheets.py): every rule of
shared/rules/sixto.txt and the Sixto part of NOTES.md as table-driven scenarios (position +
move -> new position or a named refusal), the rulebook scoring example, the end and tie rules,
the project's sheet data, malformed sheet files, records and JSON round-trips."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import random
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import Die, Move, Reason, Rejection, Roll, seat_name
from companion.rules.codec import encode
from companion.rules.session import RecordError, replay_record
from companion.rules.sixto import (
    DEFAULT_COLOURS,
    EMPTY_ROW,
    GAME,
    POINTS,
    PROJECT_SHEETS,
    Cross,
    Done,
    EndReason,
    Keep,
    Options,
    Reroll,
    SheetChoice,
    State,
    Step,
    crossed_columns,
    marks_of,
    parse_sheet,
)
from companion.sheets import (
    PROJECT_SHEETS_FILE,
    custom_sheet_choice,
    load_project_sheets,
    load_sheet_file,
)
from companion.simulate import random_action

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "records" / "sixto.json"
RED, ORANGE, YELLOW, GREEN, BLUE, PURPLE = DEFAULT_COLOURS

# A test layout where box c of every row shows ((c - 1) % 6) + 1: a die showing v fits boxes
# v and v + 6, so positions are easy to read.
SIMPLE = ("123456123456",) * 6
COMPLETED = (1, 2, 3, 4, 10, 11)  # a row with two target crosses: its colour is closed

# -- factories ----------------------------------------------------------------------------


def simple_state(players: int = 2, **changes: object) -> State:
    """A new game in which every seat's sheet has the SIMPLE layout. Options refuse two
    players with the same digits (everyone a different sheet), so the game is set up with
    the project sheets and its state then given SIMPLE sheets (the state holds no options)."""
    options = dataclasses.replace(GAME.options_for(players), **changes)  # type: ignore[arg-type]
    state = GAME.setup(options)
    sheets = tuple(dataclasses.replace(s, name="simple", numbers=SIMPLE) for s in state.sheets)
    return dataclasses.replace(state, sheets=sheets)


def roll(**values: int) -> Roll:
    """A roll of the six default dice, each showing 1 unless given; value 0 leaves a die out
    (its colour is closed)."""
    every = {colour: 1 for colour in DEFAULT_COLOURS} | values
    return Roll(dice=tuple(Die(colour, value) for colour, value in every.items() if value))


def crossing(
    players: int = 2,
    marks: dict[int, dict[str, tuple[int, ...]]] | None = None,
    closed: tuple[str, ...] = (),
    **dice: int,
) -> State:
    """A position in the cross step: `players` simple sheets, the given crossed boxes per
    seat and colour, the colours in `closed` out of the game (the last seat completed them,
    unless its crosses in that row are given), and a kept roll (1s unless given)."""
    state = simple_state(players)
    marks = {seat: dict(rows) for seat, rows in (marks or {}).items()}
    last_seat = marks.setdefault(players - 1, {})
    for colour in closed:
        last_seat.setdefault(colour, COMPLETED)
    sheets = list(state.sheets)
    for seat, rows in marks.items():
        row_marks = tuple(marks_of(rows.get(colour, ())) for colour in DEFAULT_COLOURS)
        sheets[seat] = dataclasses.replace(sheets[seat], marks=row_marks)
    state = dataclasses.replace(state, sheets=tuple(sheets), closed=closed)
    values = {colour: dice.get(colour, 1) for colour in DEFAULT_COLOURS if colour not in closed}
    state = GAME.play(state, Roll(dice=tuple(Die(c, v) for c, v in values.items())))
    state = GAME.play(state, Keep(state.active))
    GAME.invariants(state)
    return state


def play_all(state: State, *moves: Move) -> State:
    for move in moves:
        state = GAME.play(state, move)
    return state


def refusal(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


def row_marks(state: State, seat: int, colour: str) -> tuple[int, ...]:
    return crossed_columns(state.sheets[seat].marks[state.colours.index(colour)])


def done_all(state: State) -> State:
    for seat in GAME.turn(state).players:
        state = GAME.play(state, Done(seat))
    return state


# -- options and setup ----------------------------------------------------------------------


def test_default_options_give_two_players_sheets_a_and_b() -> None:
    state = GAME.setup(Options())
    assert [sheet.name for sheet in state.sheets] == ["A", "B"]
    assert state.sheets[0].numbers == PROJECT_SHEETS["A"]
    assert state.colours == DEFAULT_COLOURS
    assert all(marks == EMPTY_ROW for sheet in state.sheets for marks in sheet.marks)


@pytest.mark.parametrize("players", range(1, 7))
def test_options_for_gives_every_player_a_different_project_sheet(players: int) -> None:
    options = GAME.options_for(players)
    letters = [choice.letter for choice in options.sheets]
    assert letters == list("ABCDEF"[:players])
    state = GAME.setup(options)
    assert [sheet.numbers for sheet in state.sheets] == [PROJECT_SHEETS[x] for x in letters]


@pytest.mark.parametrize(
    ("options", "rule", "fragment"),
    [
        (Options(players=0), "players", "1 to 6"),
        (Options(players=7), "players", "1 to 6"),
        (Options(players=2, first_player=2), "first_player", "one of the 2 players"),
        (Options(colours=DEFAULT_COLOURS[:5]), "colours", "6 dice"),
        (Options(colours=(*DEFAULT_COLOURS[:5], "gold")), "colours", "'gold'"),
        (Options(colours=(*DEFAULT_COLOURS[:5], RED)), "colours", "different colours"),
        (Options(players=3, sheets=(SheetChoice("A"), SheetChoice("B"))), "sheets", "3 sheets"),
        (
            Options(players=2, sheets=(SheetChoice("C"), SheetChoice("C"))),
            "sheet_taken",
            "player 1 and player 2 both have sheet C",
        ),
        (Options(players=1, sheets=(SheetChoice("M"),)), "sheet_letter", "A to L"),
        (Options(players=1, sheets=(SheetChoice(),)), "sheet_choice", "needs a sheet"),
        (
            Options(players=1, sheets=(SheetChoice("A", rows=SIMPLE),)),
            "sheet_choice",
            "not both",
        ),
        (
            Options(players=1, sheets=(SheetChoice(rows=("123456123457",) * 6),)),
            "sheet_digit",
            "player 1's custom sheet, row 1, box 12: '7' is not a digit from 1 to 6",
        ),
        (
            Options(players=1, sheets=(SheetChoice(rows=SIMPLE[:5]),)),
            "sheet_rows",
            "this one has 5",
        ),
    ],
)
def test_bad_options_are_refused_with_a_named_rule(
    options: Options, rule: str, fragment: str
) -> None:
    with pytest.raises(Rejection) as info:
        GAME.setup(options)
    assert info.value.reason is Reason.BAD_OPTIONS
    assert info.value.rule == rule
    assert fragment in info.value.message


def test_custom_sheets_keep_their_digits_and_name() -> None:
    pad = SheetChoice(rows=SIMPLE, name="simple")
    state = GAME.setup(Options(players=2, sheets=(SheetChoice("B"), pad)))
    assert [sheet.numbers for sheet in state.sheets] == [PROJECT_SHEETS["B"], SIMPLE]
    assert state.sheets[1].name == "simple"
    solo = GAME.setup(Options(players=1, sheets=(pad,)))
    assert solo.sheets[0].numbers == SIMPLE


@pytest.mark.parametrize(
    ("sheets", "said"),
    [
        (
            (SheetChoice(rows=SIMPLE, name="pad"), SheetChoice(rows=SIMPLE, name="pad")),
            "player 2's custom sheet \"pad\" has the same numbers as player 1's (custom sheet "
            '"pad")',
        ),
        (
            (SheetChoice("A"), SheetChoice(rows=PROJECT_SHEETS["A"])),
            "player 2's custom sheet has the same numbers as player 1's (sheet A)",
        ),
        (
            (SheetChoice(rows=PROJECT_SHEETS["C"], name="C"), SheetChoice("B"), SheetChoice("C")),
            "player 3's sheet C has the same numbers as player 1's (custom sheet \"C\")",
        ),
        (
            (SheetChoice(rows=SIMPLE), SheetChoice("A"), SheetChoice(rows=SIMPLE, name="mine")),
            "player 3's custom sheet \"mine\" has the same numbers as player 1's (custom sheet)",
        ),
    ],
)
def test_two_players_may_not_have_sheets_of_the_same_digits(
    sheets: tuple[SheetChoice, ...], said: str
) -> None:
    # Rulebook: "Make sure that everyone uses a different score sheet." NOTES: "every player a
    # different one". A custom sheet is judged by its digits, beside a letter or another one.
    new = Options(players=len(sheets), sheets=sheets, custom_sheets_may_repeat=False)
    assert GAME.options_for(len(sheets)).custom_sheets_may_repeat is False  # every new table
    with pytest.raises(Rejection) as info:
        GAME.setup(new)
    assert (info.value.reason, info.value.rule) == (Reason.BAD_OPTIONS, "sheet_taken")
    assert info.value.message == f"{said}; everyone needs a different sheet"
    with pytest.raises(Rejection) as parsed:
        GAME.parse_options(encode(new))
    assert parsed.value.rule == "sheet_taken"
    # a table made before the rule (its stored options lack the field) still opens
    old = {key: value for key, value in encode(new).items() if key != "custom_sheets_may_repeat"}
    opened = GAME.setup(GAME.parse_options(old))
    assert [sheet.numbers for sheet in opened.sheets] == [
        sheet.rows or PROJECT_SHEETS[sheet.letter] for sheet in sheets
    ]


def test_options_parse_from_record_json_with_short_sheet_entries() -> None:
    data = {"players": 2, "sheets": [{"letter": "L"}, {"rows": list(SIMPLE), "name": "mine"}]}
    options = GAME.parse_options(data)
    state = GAME.setup(options)
    assert state.sheets[0].numbers == PROJECT_SHEETS["L"]
    assert state.sheets[1].numbers == SIMPLE
    with pytest.raises(Rejection) as info:
        GAME.parse_options({"players": 2, "sheets": [{"letter": "A"}, {"letter": "A"}]})
    assert info.value.rule == "sheet_taken"


def test_configured_colours_are_the_dice_to_roll() -> None:
    colours = ("white", "black", "pink", "teal", "brown", "grey")
    state = GAME.setup(Options(players=1, colours=colours))
    turn = GAME.turn(state)
    assert turn.dice is not None and turn.dice.colours == colours
    state = GAME.play(state, Roll(dice=tuple(Die(c, 1) for c in colours)))
    state = GAME.play(state, Keep(0))
    assert Cross(0, "teal", 1) in GAME.legal_moves(state, 0)


# -- the project's sheet data and sheet files --------------------------------------------------


def test_project_sheets_are_twelve_different_layouts_with_every_digit_twice_per_row() -> None:
    assert list(PROJECT_SHEETS) == list("ABCDEFGHIJKL")
    for letter, rows in PROJECT_SHEETS.items():
        assert len(rows) == 6, letter
        for row in rows:
            assert Counter(row) == {digit: 2 for digit in "123456"}, (letter, row)
    assert len(set(PROJECT_SHEETS.values())) == 12


def test_data_file_matches_the_rules_constant_and_is_marked_as_the_projects_own() -> None:
    assert load_project_sheets() == PROJECT_SHEETS
    about = json.loads(PROJECT_SHEETS_FILE.read_text(encoding="utf-8"))["about"]
    assert "own" in about and "NOT the printed" in about


def _generator() -> ModuleType:
    path = ROOT / "scripts" / "make_sixto_sheets.py"
    spec = importlib.util.spec_from_file_location("make_sixto_sheets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_file_is_what_the_seeded_generator_writes() -> None:
    generator = _generator()
    assert generator.render(generator.make_sheets()) == PROJECT_SHEETS_FILE.read_text("utf-8")
    # Another seed gives other sheets: the file really comes from the fixed seed.
    assert generator.make_sheets(generator.SEED + 1) != generator.make_sheets()


GOOD_ROWS = ["411242563365", "5134 2326 4516", [3, 6, 2, 4, 3, 1, 2, 6, 5, 1, 4, 5]]
GOOD_ROWS += ["132453645126", "216436534251", "214463512536"]


def test_a_transcribed_sheet_file_loads_with_strings_spaces_or_numbers(tmp_path: Path) -> None:
    path = tmp_path / "printed.json"
    path.write_text(json.dumps({"format": "sixto-sheets", "sheets": {"C": GOOD_ROWS}}))
    assert load_sheet_file(path) == {"C": PROJECT_SHEETS["A"]}
    choice = custom_sheet_choice(path)
    assert choice == SheetChoice(rows=PROJECT_SHEETS["A"], name="C")
    state = GAME.setup(Options(players=2, sheets=(choice, SheetChoice("B"))))
    assert state.sheets[0].numbers == PROJECT_SHEETS["A"]
    assert state.sheets[0].name == "C"
    # its digits are the project's sheet A: beside a player with sheet A it is refused
    with pytest.raises(Rejection) as info:
        GAME.setup(
            Options(players=2, sheets=(choice, SheetChoice("A")), custom_sheets_may_repeat=False)
        )
    assert info.value.rule == "sheet_taken"
    assert info.value.message == (
        "player 2's sheet A has the same numbers as player 1's (custom sheet \"C\"); "
        "everyone needs a different sheet"
    )


def _rows_with(index: int, row: object) -> list[object]:
    rows: list[object] = list(GOOD_ROWS)
    rows[index] = row
    return rows


@pytest.mark.parametrize(
    ("content", "rule", "fragment"),
    [
        ({"sheets": {"C": GOOD_ROWS[:5]}}, "sheet_rows", "sheet C: a sheet has 6 rows"),
        ({"sheets": {"C": [*GOOD_ROWS, "123"]}}, "sheet_rows", "this one has 7"),
        ({"sheets": {"C": "411242563365"}}, "sheet_rows", "a sheet is a list of 6 rows"),
        (
            {"sheets": {"C": _rows_with(2, "41124256336")}},
            "sheet_row_length",
            "sheet C, row 3: a row has 12 boxes, this one has 11",
        ),
        (
            {"sheets": {"C": _rows_with(0, "411242563375")}},
            "sheet_digit",
            "sheet C, row 1, box 11: '7' is not a digit from 1 to 6",
        ),
        (
            {"sheets": {"C": _rows_with(1, [1, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6])}},
            "sheet_digit",
            "row 2, box 7: 0 is not a digit from 1 to 6",
        ),
        ({"sheets": {"C": _rows_with(4, 411242563365)}}, "sheet_row_type", "row 5: a row is"),
        ({"sheets": {}}, "sheet_format", '"sheets" must map sheet names'),
        ({"sheet": {"C": GOOD_ROWS}}, "sheet_format", "unknown entries sheet"),
        ({"format": "qwixx", "sheets": {"C": GOOD_ROWS}}, "sheet_format", "'qwixx'"),
        ({"version": 2, "sheets": {"C": GOOD_ROWS}}, "sheet_format", "version 2"),
        ([GOOD_ROWS], "sheet_format", "expected a JSON object"),
    ],
)
def test_a_malformed_sheet_file_is_refused_naming_the_problem(
    tmp_path: Path, content: object, rule: str, fragment: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(Rejection) as info:
        load_sheet_file(path)
    assert info.value.reason is Reason.BAD_OPTIONS
    assert info.value.rule == rule
    assert fragment in info.value.message
    assert str(path) in info.value.message


def test_a_sheet_file_that_is_missing_or_not_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Rejection) as info:
        load_sheet_file(tmp_path / "nowhere.json")
    assert info.value.rule == "sheet_file" and "no such file" in info.value.message
    broken = tmp_path / "broken.json"
    broken.write_text('{"sheets": {"C": [\n"411242563365",, ]}}')
    with pytest.raises(Rejection) as info:
        load_sheet_file(broken)
    assert info.value.rule == "sheet_file" and "not valid JSON (line 2" in info.value.message


def test_custom_sheet_choice_needs_a_name_when_a_file_holds_several(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"sheets": {"C": GOOD_ROWS, "D": list(SIMPLE)}}))
    with pytest.raises(Rejection) as info:
        custom_sheet_choice(path)
    assert info.value.rule == "sheet_name" and "C, D" in info.value.message
    assert custom_sheet_choice(path, "D").rows == SIMPLE
    with pytest.raises(Rejection) as info:
        custom_sheet_choice(path, "E")
    assert info.value.rule == "sheet_name"


def test_parse_sheet_normalises_rows() -> None:
    assert parse_sheet(GOOD_ROWS) == PROJECT_SHEETS["A"]
    with pytest.raises(Rejection) as info:
        parse_sheet([*GOOD_ROWS[:5], [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, True]])
    assert info.value.rule == "sheet_digit"


# -- turn structure -------------------------------------------------------------------------


def test_a_turn_is_roll_then_keep_or_one_reroll_then_everyone_crosses() -> None:
    state = simple_state(3, first_player=1)
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.players, turn.chance) == ("roll", 1, (), True)
    assert turn.dice is not None and turn.dice.colours == DEFAULT_COLOURS

    state = GAME.play(state, roll(red=2))
    turn = GAME.turn(state)
    assert (turn.step, turn.players, turn.chance) == ("reroll", (1,), False)
    assert GAME.legal_moves(state, 1) == [Keep(1), Reroll(1)]
    assert GAME.legal_moves(state, 0) == []
    assert refusal(state, Keep(0)).reason is Reason.NOT_YOUR_TURN
    assert refusal(state, Cross(1, RED, 2)).rule == "reroll_decision_first"

    state = GAME.play(state, Reroll(1))
    turn = GAME.turn(state)
    assert (turn.step, turn.chance, turn.players) == ("roll", True, ())
    assert refusal(state, Keep(1)).rule == "waiting_for_roll"

    state = GAME.play(state, roll(red=5))  # the second result stands: no second decision
    turn = GAME.turn(state)
    assert (turn.step, turn.players) == ("cross", (0, 1, 2))
    assert Cross(0, RED, 5) in GAME.legal_moves(state, 0)
    assert refusal(state, Reroll(1)).rule == "decision_made"  # only one re-roll


def test_keep_goes_to_the_cross_step_with_the_first_roll() -> None:
    state = GAME.play(simple_state(2), roll(red=4))
    state = GAME.play(state, Keep(0))
    assert GAME.turn(state).players == (0, 1)
    assert Cross(1, RED, 4) in GAME.legal_moves(state, 1)


def test_keep_or_reroll_in_the_cross_step_is_refused() -> None:
    state = crossing()
    for move in (Keep(0), Reroll(0)):
        problem = refusal(state, move)
        assert problem.reason is Reason.ILLEGAL_MOVE and problem.rule == "decision_made"


def test_a_roll_must_hold_exactly_the_dice_in_play() -> None:
    state = simple_state(2)
    assert refusal(state, roll(purple=0)).reason is Reason.WRONG_DICE
    assert refusal(state, roll(red=7)).rule == "die_value"
    state = crossing(closed=(ORANGE,))
    state = done_all(state)
    turn = GAME.turn(state)
    assert turn.dice is not None and ORANGE not in turn.dice.colours
    assert refusal(state, roll()).reason is Reason.WRONG_DICE  # orange left the game
    GAME.check(state, roll(orange=0))


def test_after_everyone_is_done_the_next_seat_rolls() -> None:
    state = crossing(3, red=3)
    state = play_all(state, Cross(2, RED, 3), Done(2), Done(0))
    assert GAME.turn(state).players == (1,)
    problem = refusal(state, Cross(0, RED, 3))
    assert (problem.reason, problem.rule) == (Reason.NOT_YOUR_TURN, "already_done")
    state = GAME.play(state, Done(1))
    turn = GAME.turn(state)
    assert (turn.step, turn.active, state.turn_number) == ("roll", 1, 2)
    assert state.used == ((), (), ())
    assert row_marks(state, 2, RED) == (3,)


def test_last_seat_passes_the_dice_to_seat_zero() -> None:
    state = crossing(2)
    state = dataclasses.replace(state, active=1)
    assert GAME.turn(done_all(state)).active == 0


def test_nobody_is_forced_to_cross() -> None:
    state = crossing(2, red=1)
    assert Done(0) in GAME.legal_moves(state, 0)
    state = done_all(state)
    assert GAME.outcome(state) is None


# -- crossing rules -------------------------------------------------------------------------

CROSS_REFUSALS = [
    # (crossed boxes of seat 0, dice, move, rule, message fragment)
    ({}, {}, Cross(0, "pink", 1), "unknown_colour", "there is no pink die in this game"),
    ({}, {"red": 3}, Cross(0, RED, 13), "no_such_box", "the boxes are 1 to 12"),
    ({}, {"red": 3}, Cross(0, RED, 0), "no_such_box", "the boxes are 1 to 12"),
    ({RED: (4,)}, {"red": 3}, Cross(0, RED, 3), "left_to_right",
     "red 3 is left of your last red cross"),
    ({RED: (4,)}, {"red": 4}, Cross(0, RED, 4), "already_crossed", "red box 4 is already crossed"),
    ({}, {"red": 3}, Cross(0, RED, 4), "wrong_number", "the red die shows 3, red box 4 shows 4"),
    ({RED: (1, 2, 3)}, {"red": 4}, Cross(0, RED, 10), "target_locked",
     "the target area opens after 4 crosses in this row"),
    ({GREEN: (2, 3, 4, 5, 12)}, {"green": 6}, Cross(0, GREEN, 12), "row_finished",
     "you crossed the last green box"),
]  # fmt: skip


@pytest.mark.parametrize(("crossed", "dice", "move", "rule", "fragment"), CROSS_REFUSALS)
def test_illegal_crosses_are_refused_with_a_named_rule(
    crossed: dict[str, tuple[int, ...]], dice: dict[str, int], move: Cross, rule: str,
    fragment: str,
) -> None:  # fmt: skip
    state = crossing(2, {0: crossed}, (), **dice)
    problem = refusal(state, move)
    assert problem.reason is Reason.ILLEGAL_MOVE
    assert problem.rule == rule
    assert fragment in problem.message
    assert move not in GAME.legal_moves(state, 0)


def test_each_die_is_used_once_per_player_per_turn() -> None:
    state = crossing(2, red=2)
    state = GAME.play(state, Cross(0, RED, 2))
    problem = refusal(state, Cross(0, RED, 8))
    assert (problem.rule, problem.message) == ("die_used", "you already used the red die this turn")
    assert not [m for m in GAME.legal_moves(state, 0) if isinstance(m, Cross) and m.colour == RED]
    GAME.check(state, Cross(1, RED, 8))  # the other player still has the red die


def test_a_closed_colour_is_refused_by_name() -> None:
    state = crossing(2, closed=(ORANGE,))
    problem = refusal(state, Cross(0, ORANGE, 1))
    assert (problem.rule, problem.message) == ("colour_closed", "orange is closed")


@pytest.mark.parametrize(
    ("crossed", "value", "column"),
    [
        ((), 1, 1),  # the first box
        ((), 3, 9),  # skipping boxes is allowed
        ((2,), 3, 3),  # right next to the last cross
        ((1, 2, 3, 4), 4, 10),  # four crosses open the target area
        ((1, 2, 3, 4), 6, 12),  # ... and it may be skipped into
        ((5, 6, 7, 8, 10), 5, 11),  # a second target cross
    ],
)
def test_legal_crosses_are_accepted_and_marked(
    crossed: tuple[int, ...], value: int, column: int
) -> None:
    state = crossing(2, {0: {BLUE: crossed}}, blue=value)
    assert Cross(0, BLUE, column) in GAME.legal_moves(state, 0)
    state = GAME.play(state, Cross(0, BLUE, column))
    assert row_marks(state, 0, BLUE) == (*crossed, column)
    assert state.used[0] == (BLUE,)


def test_legal_moves_list_exactly_the_boxes_a_die_fits() -> None:
    state = crossing(1, {0: {RED: (2,), YELLOW: (1, 2, 3)}}, red=3, yellow=4, orange=6)
    crosses = {(m.colour, m.column) for m in GAME.legal_moves(state, 0) if isinstance(m, Cross)}
    assert crosses == {
        (RED, 3), (RED, 9),  # right of box 2 only; box 9 is the last main 3
        (ORANGE, 6),  # orange 6 also shows in box 12, but the target area is shut
        (YELLOW, 4),  # yellow 10 needs four crosses first
        (GREEN, 1), (GREEN, 7), (BLUE, 1), (BLUE, 7), (PURPLE, 1), (PURPLE, 7),
    }  # fmt: skip


# -- closing a colour -----------------------------------------------------------------------


def test_second_target_cross_closes_the_colour_after_the_turn() -> None:
    state = crossing(3, {0: {RED: (1, 2, 3, 4, 10)}, 1: {RED: (1, 2, 3, 4)}, 2: {RED: (1,)}}, red=5)
    state = GAME.play(state, Cross(0, RED, 11))
    assert state.closing == (RED,) and state.closed == ()
    # The others may still use the red die in this turn (NOTES: the die leaves after it).
    state = play_all(state, Cross(1, RED, 11), Cross(2, RED, 5))
    assert state.closing == (RED,)
    state = done_all(state)
    assert state.closed == (RED,) and state.closing == ()
    assert GAME.outcome(state) is None
    GAME.invariants(state)
    turn = GAME.turn(state)
    assert turn.dice is not None and RED not in turn.dice.colours
    state = play_all(state, roll(red=0, orange=2))
    state = GAME.play(state, Keep(state.active))
    assert refusal(state, Cross(2, RED, 6)).message == "red is closed"


def test_one_target_cross_does_not_close_and_a_row_holds_at_most_eleven() -> None:
    state = crossing(2, {0: {RED: tuple(range(1, 10))}}, red=4)
    state = GAME.play(state, Cross(0, RED, 10))
    assert state.closing == ()
    state = done_all(state)
    state = play_all(state, roll(red=5), Keep(state.active), Cross(0, RED, 11))
    assert len(row_marks(state, 0, RED)) == 11
    assert state.closing == (RED,)
    state = done_all(state)
    assert state.closed == (RED,)
    assert refusal(state, roll()).reason is Reason.WRONG_DICE


# -- end of the game --------------------------------------------------------------------------


def test_game_ends_after_the_turn_in_which_the_third_die_leaves() -> None:
    full = (1, 2, 3, 4, 10)
    state = crossing(2, {0: {GREEN: full}, 1: {PURPLE: (1, 2, 3, 4, 5)}}, closed=(RED, ORANGE),
                     green=5, purple=6)  # fmt: skip
    state = GAME.play(state, Cross(0, GREEN, 11))
    assert GAME.outcome(state) is None  # the turn is not over yet
    state = play_all(state, Cross(1, PURPLE, 6), Done(0), Done(1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "three_dice_out"
    assert state.closed == (RED, ORANGE, GREEN)
    assert row_marks(state, 1, PURPLE) == (1, 2, 3, 4, 5, 6)
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.players, turn.chance) == ("over", None, (), False)
    assert GAME.legal_moves(state, 0) == [] and GAME.legal_moves(state, 1) == []
    assert refusal(state, Done(0)).reason is Reason.GAME_OVER
    assert refusal(state, roll()).reason is Reason.GAME_OVER


def test_two_dice_out_do_not_end_the_game() -> None:
    state = done_all(crossing(2, closed=(RED, ORANGE)))
    assert GAME.outcome(state) is None
    assert GAME.turn(state).step == "roll"


# a sheet with one way left: every row dead but purple, whose box 9 and target area are open
ALMOST_DEAD = {
    RED: (1, 2, 3, 4, 12),  # box 12 crossed: nothing right of it
    ORANGE: (5, 6, 7, 8, 9, 12),
    YELLOW: (9,),  # past box 9 with fewer than 4 crosses: the target never opens
    GREEN: (2, 9),
    BLUE: (1, 2, 9),
    PURPLE: (5, 6, 7, 8),  # still open: box 9 and the target area
}


def test_game_ends_when_a_player_can_cross_no_box_at_all() -> None:
    dead = ALMOST_DEAD
    state = crossing(2, {0: dead}, purple=6)
    state = done_all(state)
    assert GAME.outcome(state) is None
    state = crossing(2, {0: dead}, purple=6)
    state = play_all(state, Cross(0, PURPLE, 12), Done(0), Done(1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == EndReason.NO_BOX_LEFT.value


def test_the_end_names_the_player_who_can_cross_no_more_boxes() -> None:
    """At the end the table asks "who?": the message read "a player can cross no more
    boxes"; it names the seat (the web layer puts the player's name there)."""
    dead = ALMOST_DEAD
    state = crossing(2, {1: dead}, purple=6)
    state = play_all(state, Done(0), Cross(1, PURPLE, 12), Done(1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == EndReason.NO_BOX_LEFT.value
    assert outcome.message.startswith(f"{seat_name(1)} can cross no more boxes: ")


def test_a_player_with_no_box_left_does_not_cut_the_others_turn_short() -> None:
    """The rulebook's "when a player has crossed the last possible box in each row" names no
    moment inside a turn; everyone crosses with the same roll at once (sixto.txt: tick half,
    complete the crosses at the end of the turn), so the others finish the turn first."""
    dead = ALMOST_DEAD
    state = crossing(2, {0: dead}, purple=6)
    state = play_all(state, Cross(0, PURPLE, 12), Done(0))
    assert GAME.outcome(state) is None and GAME.turn(state).players == (1,)
    assert GAME.turn(state).on_throw() is None  # no roll may say done for seat 1
    assert {Cross(1, RED, 1), Cross(1, PURPLE, 6)} <= set(GAME.legal_moves(state, 1))
    state = play_all(state, Cross(1, RED, 1), Cross(1, PURPLE, 6), Done(1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == EndReason.NO_BOX_LEFT.value
    assert row_marks(state, 1, RED) == (1,) and row_marks(state, 1, PURPLE) == (6,)


def test_a_row_closed_for_everyone_counts_as_no_box_left() -> None:
    dead: dict[str, tuple[int, ...]] = {
        c: (1, 2, 3, 4, 12) for c in (RED, ORANGE, YELLOW, GREEN, BLUE)
    }
    state = crossing(2, {0: dead}, closed=(PURPLE,))
    assert GAME.outcome(done_all(state)) is not None


def test_solo_ends_when_two_dice_were_not_used_in_a_turn() -> None:
    used_five = crossing(1, red=1, orange=1, yellow=1, green=1, blue=1, purple=1)
    for colour in DEFAULT_COLOURS[:5]:
        used_five = GAME.play(used_five, Cross(0, colour, 1))
    state = GAME.play(used_five, Done(0))
    assert GAME.outcome(state) is None  # one unused die is fine

    used_four = crossing(1)
    for colour in DEFAULT_COLOURS[:4]:
        used_four = GAME.play(used_four, Cross(0, colour, 1))
    state = GAME.play(used_four, Done(0))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "solo_unused_dice"
    assert outcome.winners == (0,) and "final score" in outcome.message


def test_solo_counts_only_dice_in_play() -> None:
    state = crossing(1, closed=(RED, ORANGE))
    for colour in (YELLOW, GREEN, BLUE):
        state = GAME.play(state, Cross(0, colour, 1))
    assert GAME.outcome(GAME.play(state, Done(0))) is None  # purple is the only unused die


def test_two_unused_dice_do_not_end_a_game_of_two() -> None:
    assert GAME.outcome(done_all(crossing(2))) is None


# -- scoring ------------------------------------------------------------------------------------

# The rulebook example: rows 15, 5, 28, 15, 21, 21 (105), main columns 15, 0, -5, 21, 0, -5, 5,
# 10, 5 (46), total 151. Crosses per row (boxes 10-12 are the target area):
RULEBOOK_SHEET = {
    RED: (1, 4, 8, 9, 10),  # 5 crosses
    ORANGE: (2, 4, 7),  # 3
    YELLOW: (1, 2, 4, 7, 8, 10, 11),  # 7
    GREEN: (1, 4, 7, 9, 11),  # 5
    BLUE: (1, 3, 4, 8, 10, 12),  # 6
    PURPLE: (1, 4, 6, 8, 9, 12),  # 6
}


def test_rulebook_scoring_example_totals_151() -> None:
    state = crossing(1, {0: RULEBOOK_SHEET}, closed=(YELLOW, BLUE))  # two target crosses each
    (score,) = GAME.scores(state)
    breakdown = dict(score.breakdown)
    rows = [breakdown[f"{colour} row"] for colour in DEFAULT_COLOURS]
    columns = [breakdown[f"column {c}"] for c in range(1, 10)]
    assert rows == [15, 5, 28, 15, 21, 21] and sum(rows) == 105
    assert columns == [15, 0, -5, 21, 0, -5, 5, 10, 5] and sum(columns) == 46
    assert score.total == 151
    assert [label for label, _ in score.breakdown][:7] == [
        "red row", "orange row", "yellow row", "green row", "blue row", "purple row", "column 1",
    ]  # fmt: skip
    assert len(score.breakdown) == 15  # six rows, then nine main columns, no target columns


def test_single_crosses_score_minus_five_and_empty_sheets_zero() -> None:
    empty, one = GAME.scores(crossing(2, {1: {RED: (3,)}}))
    assert empty.total == 0 and all(points == 0 for _, points in empty.breakdown)
    assert dict(one.breakdown)["red row"] == -5 and dict(one.breakdown)["column 3"] == -5
    assert one.total == -10


def test_target_crosses_count_for_the_row_not_for_a_column() -> None:
    before = GAME.scores(crossing(1, {0: {RED: (1, 2, 3, 4)}}))[0]
    after = GAME.scores(crossing(1, {0: {RED: (1, 2, 3, 4, 10)}}))[0]
    assert dict(after.breakdown)["red row"] == 15 and dict(before.breakdown)["red row"] == 10
    assert [p for label, p in after.breakdown if label.startswith("column")] == [
        p for label, p in before.breakdown if label.startswith("column")
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(1, 12), max_size=11, unique=True).map(lambda xs: tuple(sorted(xs))),
        min_size=6, max_size=6,
    )
)  # fmt: skip
def test_score_is_rows_plus_main_columns_by_the_table(rows: list[tuple[int, ...]]) -> None:
    state = crossing(1)
    sheet = dataclasses.replace(state.sheets[0], marks=tuple(marks_of(r) for r in rows))
    state = dataclasses.replace(state, sheets=(sheet,))
    (score,) = GAME.scores(state)
    assert score.total == sum(points for _, points in score.breakdown)
    row_points = [POINTS[len(r)] for r in rows]
    column_points = [POINTS[sum(c in r for r in rows)] for c in range(1, 10)]
    assert [p for _, p in score.breakdown] == row_points + column_points


# -- winners and ties -----------------------------------------------------------------------------


def finished(*sheets: dict[str, tuple[int, ...]]) -> State:
    state = crossing(len(sheets), dict(enumerate(sheets)))
    return dataclasses.replace(
        state, step=Step.OVER, end=EndReason.THREE_DICE_OUT, waiting=(), used=((),) * len(sheets)
    )


def test_most_points_wins() -> None:
    outcome = GAME.outcome(finished({RED: (1, 2, 3)}, {RED: (1,)}))
    assert outcome is not None and outcome.winners == (0,)
    assert outcome.message.startswith("three dice have left the game: player 1 wins")


def test_a_tie_on_points_goes_to_the_most_crosses() -> None:
    # Two crosses in one row: row 0, columns -5 -5 = -10; one cross: -5 and -5 = -10.
    state = finished({RED: (1,)}, {RED: (1, 2)})
    assert [s.total for s in GAME.scores(state)] == [-10, -10]
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (1,)
    assert "most crosses" in outcome.message


def test_a_tie_on_points_and_crosses_is_shared() -> None:
    outcome = GAME.outcome(finished({RED: (1, 2, 3)}, {BLUE: (4, 5, 6)}, {RED: (1,)}))
    assert outcome is not None and outcome.winners == (0, 1)
    assert "share the win" in outcome.message


def test_no_outcome_while_playing() -> None:
    assert GAME.outcome(crossing(2)) is None


# -- legal_moves agrees with check; random play; JSON ----------------------------------------------


def every_probe(state: State, seat: int) -> list[Move]:
    probes: list[Move] = [Keep(seat), Reroll(seat), Done(seat)]
    for colour in (*state.colours, "pink"):
        probes += [Cross(seat, colour, column) for column in range(0, 14)]
    return probes


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(0, 120))
def test_legal_moves_agree_with_check(seed: int, players: int, steps: int) -> None:
    rng = random.Random(seed)
    state = GAME.setup(GAME.options_for(players))
    for _ in range(steps):
        if GAME.outcome(state) is not None:
            break
        state = GAME.play(state, random_action(GAME, state, rng))
    GAME.invariants(state)
    for seat in range(players):
        listed = GAME.legal_moves(state, seat)
        for move in listed:
            GAME.check(state, move)
        for move in every_probe(state, seat):
            if move not in listed:
                with pytest.raises(Rejection):
                    GAME.check(state, move)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_every_state_and_move_round_trips_through_json(seed: int) -> None:
    rng = random.Random(seed)
    state = GAME.setup(GAME.options_for(1 + seed % 6))
    while GAME.outcome(state) is None:
        move = random_action(GAME, state, rng)
        assert GAME.move_from_json(json.loads(json.dumps(GAME.move_to_json(move)))) == move
        state = GAME.play(state, move)
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state


@pytest.mark.parametrize(
    ("data", "move"),
    [
        ({"kind": "keep", "player": 0}, Keep(0)),
        ({"kind": "reroll", "player": 2}, Reroll(2)),
        ({"kind": "cross", "player": 1, "colour": "red", "column": 10}, Cross(1, RED, 10)),
        ({"kind": "done", "player": 3}, Done(3)),
    ],
)
def test_moves_read_from_json(data: dict[str, object], move: Move) -> None:
    assert GAME.move_from_json(data) == move
    assert GAME.move_to_json(move) == data


# -- records ----------------------------------------------------------------------------------------


def test_example_record_replays_to_the_end() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    session = replay_record(record)
    outcome = session.outcome()
    assert outcome is not None and outcome.reason == "three_dice_out"
    assert len(session.actions) == len(record["actions"])
    assert len(session.state.closed) >= 3
    kinds = {action["move"]["kind"] for action in record["actions"]}
    assert kinds == {"roll", "keep", "reroll", "cross", "done"}
    assert session.state.sheets[2].name == "example custom sheet"


def test_a_corrupted_record_names_the_bad_action() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    broken = copy.deepcopy(record)
    index = next(
        i for i, action in enumerate(broken["actions"]) if action["move"]["kind"] == "cross"
    )
    broken["actions"][index]["move"]["column"] = 13
    with pytest.raises(RecordError) as info:
        replay_record(broken)
    assert info.value.index == index
    assert info.value.rejection.rule == "no_such_box"


# -- the next roll closes the cross step (automatic passes) -------------------------------


def test_the_next_roll_is_done_for_those_still_crossing() -> None:
    state = play_all(crossing(3, red=2), Cross(1, RED, 2), Done(1))
    throw = GAME.turn(state).on_throw()
    assert throw is not None
    assert throw.closes == (Done(0), Done(2)) and throw.moves == ()
    assert throw.roller == 1 and throw.dice.colours == DEFAULT_COLOURS
    after = play_all(state, *throw.implied, roll())
    assert (after.step, after.active) == (Step.REROLL, 1)
    assert row_marks(after, 1, RED) == (2,)
    assert GAME.turn(state).on_throw(close_step=False) is None


def test_a_colour_closing_this_turn_leaves_the_next_roll() -> None:
    state = play_all(crossing(2, marks={0: {RED: (1, 2, 3, 4, 10)}}, red=5), Cross(0, RED, 11))
    throw = GAME.turn(state).on_throw()
    assert throw is not None and RED not in throw.dice.colours


def test_no_automatic_done_ends_the_game() -> None:
    """Solo: two dice not used would end the game after the turn; that stays a tap."""
    state = crossing(1)
    assert GAME.turn(state).on_throw() is None


def test_the_reroll_throw_names_its_roller() -> None:
    state = GAME.play(simple_state(2), roll())
    throw = GAME.turn(state).on_throw()
    assert throw is not None and throw.moves == (Reroll(0),) and throw.roller == 0
    assert throw.closes == ()
