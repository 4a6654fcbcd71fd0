"""Sixto (KENDi Games, 2023, Steffen and Florian Benndorf), for 1 to 6 players.

Rule sources: ``../shared/rules/sixto.txt`` (the rulebook) and the Sixto part of
``../shared/rules/NOTES.md``. A rulebook sentence wins over NOTES.

A turn has three steps:

1. ``roll`` (the chance player): one die of every colour still in the game.
2. ``reroll``: the active player keeps that roll (`Keep`) or re-rolls all of it once
   (`Reroll`, then a second ``roll`` whose result stands; rulebook: no dice put aside).
3. ``cross``: every player, each once and in any order, crosses boxes with the dice (one
   `Cross` per tap, so tablets show each cross live) and then says `Done`. Then the player on
   the left (the next seat) rolls.

Crossing (rulebook and NOTES): the die of colour c showing v crosses one box of row c that shows
v and lies right of that row's last cross; skipped boxes are lost. Each die is used at most once
per player per turn, so a row gets at most one cross per player per turn. Boxes 10-12 (the
target area) need at least 4 crosses already in the row. After crossing box 12 a player cannot
cross that row again. A player's second target-area cross in a row closes that colour for all.

House decisions where the rulebook is silent (or where the product needs a fixed answer):

- Sheets: the printed pad's digits are not public, so the project ships its OWN twelve layouts
  A-L (`PROJECT_SHEETS`, also stored as ``companion/rules/data/sixto_sheets.json``, both made
  by ``scripts/make_sixto_sheets.py`` from a fixed seed; each digit twice per row). A player
  may instead bring a transcribed printed sheet: `SheetChoice.rows`, checked by `parse_sheet`
  (file reading lives in ``companion/sheets.py``; the rules do no I/O). Row i of a sheet
  belongs to the i-th colour of `Options.colours`. Options carry the whole custom grid, so a
  game record replays on its own.
- Different sheets for everyone (rulebook: "Make sure that everyone uses a different score
  sheet"; NOTES: "every player a different one") is judged by the digits: no two players
  may have the same project letter (`sheet_taken`, "both have sheet C"), nor a custom sheet
  whose digits repeat another player's, custom or project letter (`sheet_taken`, naming
  both players and sheets), even when two pads hold the same printed sheet. (Tables made
  before 2026-12-07 allowed repeated custom sheets and still open: the check is
  `Options.custom_sheets_may_repeat` False, every new table's default.) A custom sheet
  must have 6 rows of 12 digits 1-6; the count of each digit is not checked (the printed
  pad's distribution is not known).
- Colours are configurable (NOTES: the exact die colours are not public): six different names
  from the camera's colour vocabulary (`base.COLOURS`); default red, orange, yellow, green,
  blue, purple.
- Closing a row: the colour is closed for everyone from the next turn on; in the turn it closes
  every other player may still use that die (NOTES: "the die leaves the game after the turn";
  rulebook: announcing a completion lets the others cross in that row). The announcement
  itself needs no move: the tablets show every cross live.
- Every player ends the cross step with an explicit `Done`, even with nothing to cross: the
  engine cannot know when someone at the table has finished writing.
- The end is checked after a turn (after the last `Done`): three or more dice out of the game
  (closed colours); or some player can cross no box at all any more (every row closed, ended
  with box 12, or past box 9 with fewer than 4 crosses so that the target area can never
  open); or, solo, at least two dice "have not been used to cross" (rulebook) in that turn.
  We read that sentence literally: a die of that turn's roll the solo player did not cross
  with, whether no box fitted or the player chose not to, counts as not used. Closed colours
  are not rolled and do not count. The rulebook's "the game ends when a player has crossed
  the last possible box in each row" names no moment inside a turn, and everyone crosses with
  the same roll at once (it suggests ticking "half" and completing the crosses at the end of
  the turn), so that player's last cross does not cut the others' crosses of that turn short.
- The next roll closes the cross step, as at a paper table: whoever has not said done when
  the next roll comes is done (`Throw.closes`); a table may play without that. No throw is
  declared when those `Done`s would end the game (the end is the players' call).
- Scores: rows and main columns 1-9 by the rulebook table (target crosses count for the row,
  target columns are not scored as columns). Ties: the most crosses on the sheet wins; still
  tied, the win is shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache
from typing import ClassVar

from companion.rules.base import (
    COLOURS,
    DiceSpec,
    Die,
    Game,
    Move,
    Outcome,
    PlayerCount,
    Reason,
    Rejection,
    Roll,
    Score,
    Throw,
    Turn,
    check_actor,
    describe_seats,
    die_value,
    illegal,
    replaced,
    seat_name,
)

# -- constants ----------------------------------------------------------------------------

MIN_PLAYERS, MAX_PLAYERS = 1, 6
DEFAULT_COLOURS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple")
"""The die colours in sheet-row order (NOTES: "rainbow"; configurable)."""

ROWS = 6
BOXES = 12
MAIN_BOXES = 9  # boxes 1-9: the main area, scored by column too
TARGET_FIRST = 10  # boxes 10-12: the target area
TARGET_NEEDS = 4  # crosses a row needs before its target area opens
TARGET_CROSSES_TO_CLOSE = 2
DICE_OUT_TO_END = 3
SOLO_UNUSED_TO_END = 2
DIGITS = "123456"
CROSSED, EMPTY = "x", "."  # a sheet row's marks: "x" a crossed box, "." an empty one
EMPTY_ROW = EMPTY * BOXES

POINTS: tuple[int, ...] = (0, -5, 0, 5, 10, 15, 21, 28, 36, 45, 55, 66)
"""Points of a row or a main column by its number of crosses, 0 to 11 (rulebook table)."""

SHEET_FORMAT = "sixto-sheets"
SHEET_FORMAT_VERSION = 1

# Table Companion's own layouts A-L, NOT the printed pad's (whose digits are not public).
# Generated once by scripts/make_sixto_sheets.py (seed 20231129), identical to
# companion/rules/data/sixto_sheets.json (a test checks this). Row i: the i-th colour.
PROJECT_SHEETS: dict[str, tuple[str, ...]] = {
    "A": (
        "411242563365",
        "513423264516",
        "362431265145",
        "132453645126",
        "216436534251",
        "214463512536",
    ),
    "B": (
        "135412564236",
        "365254113462",
        "554246312631",
        "236615234514",
        "661235414253",
        "642136255341",
    ),
    "C": (
        "263214135564",
        "561364521342",
        "614242653531",
        "314526621354",
        "136541235264",
        "124643655312",
    ),
    "D": (
        "256541423361",
        "442521631356",
        "453521634162",
        "625341463215",
        "234245156631",
        "253426311645",
    ),
    "E": (
        "253661423541",
        "562443153612",
        "314523561642",
        "231345264165",
        "132653524146",
        "314662523415",
    ),
    "F": (
        "652344135621",
        "315241365426",
        "534142563612",
        "453264123615",
        "144316253562",
        "312256341645",
    ),
    "G": (
        "415334662521",
        "625162314543",
        "415313256642",
        "166425513342",
        "364252351416",
        "442153631625",
    ),
    "H": (
        "454265136312",
        "316244513265",
        "143546632512",
        "261361453245",
        "642351253641",
        "416365234215",
    ),
    "I": (
        "251534316642",
        "453236614125",
        "354264165132",
        "132654243516",
        "334556211624",
        "632514531246",
    ),
    "J": (
        "312454612536",
        "225356164314",
        "246541132635",
        "562415234163",
        "241526341653",
        "542624163351",
    ),
    "K": (
        "426531362514",
        "655142321346",
        "423635165241",
        "412566235413",
        "155246363412",
        "361324545216",
    ),
    "L": (
        "652146243315",
        "531421356462",
        "432641315526",
        "142166235453",
        "214235615643",
        "415124366523",
    ),
}
PROJECT_LETTERS: tuple[str, ...] = tuple(PROJECT_SHEETS)


class Step(StrEnum):
    """The steps of a Sixto turn, and the end."""

    ROLL = "roll"
    REROLL = "reroll"
    CROSS = "cross"
    OVER = "over"


class EndReason(StrEnum):
    """Why the game ended (rulebook: the third die out, a player who can cross nothing more,
    solo: two dice not used in a turn)."""

    THREE_DICE_OUT = "three_dice_out"
    NO_BOX_LEFT = "no_box_left"
    SOLO_UNUSED_DICE = "solo_unused_dice"


# -- options ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SheetChoice:
    """One player's sheet: either `letter`, one of the project's own layouts "A"-"L", or
    `rows`, a custom sheet (six strings of 12 digits 1-6, e.g. a transcribed printed sheet)
    with an optional `name` to show."""

    letter: str = ""
    rows: tuple[str, ...] = ()
    name: str = ""


@dataclass(frozen=True, slots=True)
class Options:
    """Setup: `players` seats (1-6); `first_player`, the seat that rolls first (0-based);
    `colours`, the six die colours in sheet-row order; `sheets`, one `SheetChoice` per seat
    (empty: the project sheets A, B, C, ... in seat order). `custom_sheets_may_repeat`: a
    custom sheet may repeat another player's digits (True in the dataclass, so tables and
    records made before 2026-12-07, when that was allowed, still open and replay;
    `options_for`, every new table's default, follows the rulebook: False)."""

    players: int = 2
    first_player: int = 0
    colours: tuple[str, ...] = DEFAULT_COLOURS
    sheets: tuple[SheetChoice, ...] = ()
    custom_sheets_may_repeat: bool = True


# -- moves --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Keep(Move):
    """The active player keeps the first roll of the turn."""

    kind: ClassVar[str] = "keep"


@dataclass(frozen=True, slots=True)
class Reroll(Move):
    """The active player re-rolls all the dice (once per turn); the next roll stands."""

    kind: ClassVar[str] = "reroll"


@dataclass(frozen=True, slots=True)
class Cross(Move):
    """`player` uses the die of `colour` to cross box `column` (1-12, left to right) of that
    colour's row on their own sheet."""

    kind: ClassVar[str] = "cross"
    colour: str
    column: int


@dataclass(frozen=True, slots=True)
class Done(Move):
    """`player` has finished crossing for this turn (with or without crosses)."""

    kind: ClassVar[str] = "done"


# -- state --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sheet:
    """One player's score sheet: `name` (the project letter or the custom sheet's name),
    `numbers` (six strings of 12 digits, row i for colour i) and `marks` (six strings of 12
    characters lined up with `numbers`: "x" a crossed box, "." an empty one; e.g. numbers
    "411242563365" with marks "x..x...xx.x." crossed boxes 1, 4, 8, 9 and 11)."""

    name: str
    numbers: tuple[str, ...]
    marks: tuple[str, ...] = (EMPTY_ROW,) * ROWS


@dataclass(frozen=True, slots=True)
class State:
    """A Sixto position.

    `colours` are the dice in sheet-row order; `step` and `active` say whose turn it is;
    `rerolled` whether this turn's dice were already re-rolled; `dice` the roll being used
    (empty while a roll is due); `used[seat]` the colours whose die that seat has used this
    turn; `waiting` the seats still crossing this turn; `closing` the colours closed during
    this turn (their dice leave when it ends); `closed` the colours out of the game, in
    closing order; `turn_number` counts turns from 1; `end` why the game ended."""

    colours: tuple[str, ...]
    sheets: tuple[Sheet, ...]
    active: int
    step: Step
    used: tuple[tuple[str, ...], ...]
    rerolled: bool = False
    dice: tuple[Die, ...] = ()
    waiting: tuple[int, ...] = ()
    closing: tuple[str, ...] = ()
    closed: tuple[str, ...] = ()
    turn_number: int = 1
    end: EndReason | None = None


# -- sheet data ---------------------------------------------------------------------------


def _bad_sheet(rule: str, message: str) -> Rejection:
    return Rejection(Reason.BAD_OPTIONS, rule, message)


def parse_sheet(data: object, where: str = "sheet") -> tuple[str, ...]:
    """A sheet's digits from JSON-like data: a list of 6 rows, each a string of 12 digits 1-6
    (spaces allowed, e.g. "4112 4256 3365") or a list of 12 numbers 1-6. Returns six
    12-character strings. Raises Rejection(BAD_OPTIONS) naming the sheet, row and box."""
    if isinstance(data, str) or not isinstance(data, list | tuple):
        raise _bad_sheet(
            "sheet_rows", f"{where}: a sheet is a list of {ROWS} rows, not {type(data).__name__}"
        )
    if len(data) != ROWS:
        raise _bad_sheet(
            "sheet_rows",
            f"{where}: a sheet has {ROWS} rows (one per die colour), this one has {len(data)}",
        )
    return tuple(_parse_row(row, f"{where}, row {i + 1}") for i, row in enumerate(data))


def _parse_row(row: object, where: str) -> str:
    if isinstance(row, str):
        boxes: list[object] = [c for c in row if not c.isspace()]
    elif isinstance(row, list | tuple):
        boxes = list(row)
    else:
        raise _bad_sheet(
            "sheet_row_type",
            f'{where}: a row is a string of {BOXES} digits like "411242563365" '
            f"or a list of {BOXES} numbers, not {type(row).__name__}",
        )
    if len(boxes) != BOXES:
        raise _bad_sheet(
            "sheet_row_length", f"{where}: a row has {BOXES} boxes, this one has {len(boxes)}"
        )
    digits = []
    for i, box in enumerate(boxes):
        text = box if isinstance(box, str) else None
        if isinstance(box, int) and not isinstance(box, bool):
            text = str(box)
        if text is None or text not in DIGITS:
            raise _bad_sheet(
                "sheet_digit", f"{where}, box {i + 1}: {box!r} is not a digit from 1 to 6"
            )
        digits.append(text)
    return "".join(digits)


def parse_sheet_set(data: object, where: str = "sheet file") -> dict[str, tuple[str, ...]]:
    """The sheets of a sheet file's JSON data: ``{"format": "sixto-sheets", "version": 1,
    "sheets": {"NAME": [six rows], ...}}`` ("format", "version" and any "about" text are
    optional). Raises Rejection(BAD_OPTIONS) naming the problem."""
    if not isinstance(data, dict):
        raise _bad_sheet("sheet_format", f'{where}: expected a JSON object with a "sheets" entry')
    if data.get("format", SHEET_FORMAT) != SHEET_FORMAT:
        raise _bad_sheet(
            "sheet_format", f'{where}: format {data["format"]!r} is not "{SHEET_FORMAT}"'
        )
    if data.get("version", SHEET_FORMAT_VERSION) != SHEET_FORMAT_VERSION:
        raise _bad_sheet(
            "sheet_format",
            f"{where}: version {data['version']!r} is not {SHEET_FORMAT_VERSION}",
        )
    unknown = sorted(set(data) - {"format", "version", "about", "sheets"})
    if unknown:
        raise _bad_sheet("sheet_format", f"{where}: unknown entries {', '.join(unknown)}")
    sheets = data.get("sheets")
    if not isinstance(sheets, dict) or not sheets:
        raise _bad_sheet(
            "sheet_format",
            f'{where}: "sheets" must map sheet names to their rows, '
            'e.g. {"C": ["411242563365", ...]}',
        )
    parsed: dict[str, tuple[str, ...]] = {}
    for name, rows in sheets.items():
        if not name.strip():
            raise _bad_sheet("sheet_name", f"{where}: a sheet needs a name")
        parsed[name] = parse_sheet(rows, f"{where}, sheet {name}")
    return parsed


# -- helpers ------------------------------------------------------------------------------


def marks_of(columns: tuple[int, ...] | list[int]) -> str:
    """A row's marks with the given boxes (1-12) crossed, e.g. (1, 4) -> "x..x........"."""
    return "".join(CROSSED if column in columns else EMPTY for column in range(1, BOXES + 1))


def crossed_columns(marks: str) -> tuple[int, ...]:
    """The crossed boxes (1-12) of a row's marks, left to right."""
    return tuple(i + 1 for i, mark in enumerate(marks) if mark == CROSSED)


def _last_cross(marks: str) -> int:
    """The box (1-12) of the row's last cross, 0 for an empty row."""
    return marks.rfind(CROSSED) + 1


def _target_crosses(marks: str) -> int:
    return marks.count(CROSSED, TARGET_FIRST - 1)


def _is_row_dead(marks: str) -> bool:
    """Whether no box of this row can ever be crossed again by its owner: box 12 is crossed,
    or every main box is behind the last cross and the row lacks the 4 crosses that open the
    target area (a row closed for everyone is checked separately)."""
    last = _last_cross(marks)
    return last == BOXES or (last >= MAIN_BOXES and marks.count(CROSSED) < TARGET_NEEDS)


def _can_cross_nothing(sheet: Sheet, colours: tuple[str, ...], closed: tuple[str, ...]) -> bool:
    return _rows_all_dead(sheet.marks, colours, closed)


@lru_cache(maxsize=4096)
def _rows_all_dead(
    marks: tuple[str, ...], colours: tuple[str, ...], closed: tuple[str, ...]
) -> bool:
    # cached: every turn() query in the cross step asks this of every sheet (whether the
    # next roll ends the game), while the sheets change only with a cross
    return all(
        colour in closed or _is_row_dead(row) for colour, row in zip(colours, marks, strict=True)
    )


def _open_columns(numbers: str, marks: str, value: int) -> list[int]:
    """The boxes of a row that a die showing `value` may cross now."""
    end = BOXES if marks.count(CROSSED) >= TARGET_NEEDS else MAIN_BOXES
    digit = DIGITS[value - 1]
    return [
        column for column in range(_last_cross(marks) + 1, end + 1) if numbers[column - 1] == digit
    ]


def _crosses_total(sheet: Sheet) -> int:
    return sum(marks.count(CROSSED) for marks in sheet.marks)


def _resolve_sheets(options: Options) -> tuple[Sheet, ...]:
    choices = options.sheets
    if not choices:
        return tuple(
            Sheet(letter, PROJECT_SHEETS[letter]) for letter in PROJECT_LETTERS[: options.players]
        )
    if len(choices) != options.players:
        raise _bad_sheet(
            "sheets",
            f"{options.players} players need {options.players} sheets, not {len(choices)}",
        )
    sheets = []
    holder: dict[str, int] = {}
    for seat, choice in enumerate(choices):
        who = seat_name(seat)
        if choice.letter and choice.rows:
            raise _bad_sheet(
                "sheet_choice",
                f"{who}: choose a project sheet letter or give custom rows, not both",
            )
        if choice.letter:
            if choice.letter not in PROJECT_SHEETS:
                raise _bad_sheet(
                    "sheet_letter",
                    f"{who}: there is no project sheet {choice.letter!r}; "
                    f"the letters are {PROJECT_LETTERS[0]} to {PROJECT_LETTERS[-1]}",
                )
            if choice.letter in holder:
                raise _bad_sheet(
                    "sheet_taken",
                    f"{seat_name(holder[choice.letter])} and {who} both have sheet "
                    f"{choice.letter}; everyone needs a different sheet",
                )
            holder[choice.letter] = seat
            sheets.append(Sheet(choice.letter, PROJECT_SHEETS[choice.letter]))
        elif choice.rows:
            numbers = parse_sheet(list(choice.rows), f"{who}'s custom sheet")
            sheets.append(Sheet(choice.name or "custom", numbers))
        else:
            raise _bad_sheet(
                "sheet_choice",
                f"{who} needs a sheet: a project letter A-L or the rows of a custom sheet",
            )
    if not options.custom_sheets_may_repeat:
        _check_different(sheets, choices)
    return tuple(sheets)


def _sheet_words(sheet: Sheet, choice: SheetChoice) -> str:
    """A sheet as a refusal names it: "sheet A", 'custom sheet "C"' or "custom sheet"."""
    if choice.letter:
        return f"sheet {choice.letter}"
    return f'custom sheet "{choice.name}"' if choice.name else "custom sheet"


def _check_different(sheets: list[Sheet], choices: tuple[SheetChoice, ...]) -> None:
    """Everyone uses a different sheet (rulebook), judged by the digits: a custom sheet may
    not repeat another player's custom sheet or project letter."""
    first: dict[tuple[str, ...], int] = {}
    for seat, sheet in enumerate(sheets):
        other = first.setdefault(sheet.numbers, seat)
        if other != seat:
            raise _bad_sheet(
                "sheet_taken",
                f"{seat_name(seat)}'s {_sheet_words(sheet, choices[seat])} has the same "
                f"numbers as {seat_name(other)}'s ({_sheet_words(sheets[other], choices[other])}"
                "); everyone needs a different sheet",
            )


def _check_colours(colours: tuple[str, ...]) -> None:
    if len(colours) != ROWS:
        raise _bad_sheet(
            "colours",
            f"Sixto uses {ROWS} dice of different colours, not {len(colours)}",
        )
    for colour in colours:
        if colour not in COLOURS:
            raise _bad_sheet(
                "colours",
                f"{colour!r} is not a die colour the companion knows; known: {', '.join(COLOURS)}",
            )
    if len(set(colours)) != ROWS:
        raise _bad_sheet("colours", "the six dice need six different colours")


def _check_seat(value: object, low: int, high: int, field: str, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Rejection(Reason.BAD_OPTIONS, field, f"{what} is {low} to {high}, not {value!r}")


@cache
def _roll_turn(active: int, colours: tuple[str, ...]) -> Turn:
    return Turn(step=Step.ROLL.value, active=active, chance=True, dice=DiceSpec(colours=colours))


@cache
def _reroll_turn(active: int, in_play: tuple[str, ...]) -> Turn:
    # a new throw while the active player decides is that player re-rolling (keeping the
    # dice is a tap): the re-roll, then a roll of every die still in play
    throw = Throw(DiceSpec(colours=in_play), (Reroll(active),), roller=active)
    return Turn(step=Step.REROLL.value, active=active, players=(active,), throw=throw)


@cache
def _cross_turn(
    active: int, waiting: tuple[int, ...], moves_made: int, throw: Throw | None
) -> Turn:
    return Turn(
        step=Step.CROSS.value, active=active, players=waiting, moves_in_step=moves_made,
        throw=throw, ends_by_hand=throw is None,  # the turn's end ends the game
    )  # fmt: skip


def _closing_throw(state: State) -> Throw | None:
    """What the next roll means in the cross step (module docstring): those still crossing
    are done, then the next player rolls the dice still in play; None when the end of this
    turn would end the game."""
    if turn_end_reason(state) is not None:
        return None
    closed = (*state.closed, *state.closing)
    closes = tuple(Done(seat) for seat in state.waiting)
    in_play = tuple(c for c in state.colours if c not in closed)
    roller = (state.active + 1) % len(state.sheets)
    return Throw(DiceSpec(colours=in_play), closes=closes, roller=roller)


def turn_end_reason(state: State) -> EndReason | None:
    """What ends the game when this turn ends (its last Done), as the sheets and the dice
    stand now (rulebook): three dice out, a player who can cross no more, or, solo, two
    dice or more of this roll not used to cross; None when the game goes on."""
    closed = (*state.closed, *state.closing)
    if len(closed) >= DICE_OUT_TO_END:
        return EndReason.THREE_DICE_OUT
    if any(_can_cross_nothing(sheet, state.colours, closed) for sheet in state.sheets):
        return EndReason.NO_BOX_LEFT
    if len(state.sheets) == 1:
        unused = sum(1 for die in state.dice if die.colour not in state.used[0])
        if unused >= SOLO_UNUSED_TO_END:
            return EndReason.SOLO_UNUSED_DICE
    return None


def certain_turn_end(state: State) -> EndReason | None:
    """What ends the game when this cross step ends whatever its players still cross; None
    where crosses may yet keep the game going. A cross only adds dice out and takes boxes
    away, so a third die out and a player who can cross no more stay true; solo, a die of
    this roll that fits no open box of its row (each die crosses its own row only) stays
    unused, and two such dice end the game, while dice the player can still cross with
    leave it to them (their Done button says when it ends the game)."""
    reason = turn_end_reason(state)
    if reason is EndReason.SOLO_UNUSED_DICE and _dice_fitting_no_box(state) < SOLO_UNUSED_TO_END:
        return None
    return reason


def _dice_fitting_no_box(state: State) -> int:
    """The solo player's dice of this roll, not yet used, that no open box of their row fits."""
    sheet, used = state.sheets[0], state.used[0]
    count = 0
    for die in state.dice:
        if die.colour in used:
            continue
        index = state.colours.index(die.colour) if die.colour in state.colours else None
        fits = (
            index is not None
            and die.colour not in state.closed
            and bool(_open_columns(sheet.numbers[index], sheet.marks[index], die.value))
        )
        count += not fits
    return count


_OVER_TURN = Turn(step=Step.OVER.value, active=None)
_COLUMN_LABELS = tuple(f"column {column}" for column in range(1, MAIN_BOXES + 1))
_END_MESSAGES: dict[EndReason, str] = {
    EndReason.THREE_DICE_OUT: "three dice have left the game",
    EndReason.NO_BOX_LEFT: "a player can cross no more boxes",
    EndReason.SOLO_UNUSED_DICE: "two dice were not used to cross in one turn",
}


def _end_words(state: State) -> str:
    """Why the game ended; a player who can cross no more is named (the table asks who)."""
    if state.end is not EndReason.NO_BOX_LEFT:
        return _END_MESSAGES[state.end] if state.end else ""
    stuck = [
        seat
        for seat, sheet in enumerate(state.sheets)
        if _can_cross_nothing(sheet, state.colours, state.closed)
    ]
    if not stuck:  # not reached: the end was decided so; the general words stay right
        return _END_MESSAGES[state.end]
    return f"{describe_seats(stuck)} can cross no more boxes"


# -- the game -----------------------------------------------------------------------------


class Sixto(Game[Options, State]):
    """The rules of Sixto (rulebook ../shared/rules/sixto.txt, NOTES.md)."""

    name: ClassVar[str] = "sixto"
    title: ClassVar[str] = "Sixto"
    players: ClassVar[PlayerCount] = PlayerCount(MIN_PLAYERS, MAX_PLAYERS)
    options_type: ClassVar[type] = Options
    state_type: ClassVar[type] = State
    move_types: ClassVar[tuple[type[Move], ...]] = (Keep, Reroll, Cross, Done)

    # -- setup ------------------------------------------------------------------------
    def setup(self, options: Options) -> State:
        _check_seat(options.players, MIN_PLAYERS, MAX_PLAYERS, "players", "Sixto's player count")
        if not (
            isinstance(options.first_player, int)
            and not isinstance(options.first_player, bool)
            and 0 <= options.first_player < options.players
        ):
            raise Rejection(
                Reason.BAD_OPTIONS,
                "first_player",
                f"who rolls first must be one of the {options.players} players",
            )
        colours = tuple(options.colours)
        _check_colours(colours)
        sheets = _resolve_sheets(options)
        return State(
            colours=colours,
            sheets=sheets,
            active=options.first_player,
            step=Step.ROLL,
            used=((),) * options.players,
        )

    def options_for(self, players: int) -> Options:
        """`players` seats with the project sheets A, B, C, ... (a different one each)."""
        return Options(
            players=players,
            sheets=tuple(SheetChoice(letter=letter) for letter in PROJECT_LETTERS[:players]),
            custom_sheets_may_repeat=False,
        )

    def dice_colours(self, options: Options) -> tuple[str, ...]:
        return tuple(options.colours)

    def invariants(self, state: State) -> None:
        players = len(state.sheets)
        assert MIN_PLAYERS <= players <= MAX_PLAYERS
        assert len(state.used) == players
        assert 0 <= state.active < players
        completed: set[str] = set()
        for sheet in state.sheets:
            assert len(sheet.numbers) == ROWS and len(sheet.marks) == ROWS
            for colour, numbers, marks in zip(
                state.colours, sheet.numbers, sheet.marks, strict=True
            ):
                assert len(numbers) == BOXES and not numbers.strip(DIGITS), numbers
                assert len(marks) == BOXES and not marks.strip(CROSSED + EMPTY), marks
                targets = _target_crosses(marks)
                if targets:
                    # at most 2 target crosses, so a row holds at most 9 + 2 = 11 crosses
                    assert targets <= TARGET_CROSSES_TO_CLOSE, marks
                    assert marks.count(CROSSED, 0, MAIN_BOXES) >= TARGET_NEEDS, marks
                    if targets == TARGET_CROSSES_TO_CLOSE:
                        completed.add(colour)
        assert completed == set(state.closed) | set(state.closing)
        assert not set(state.closed) & set(state.closing)
        assert len(set(state.closed)) == len(state.closed)
        in_play = [c for c in state.colours if c not in state.closed]
        for seat_used in state.used:
            assert len(set(seat_used)) == len(seat_used)
            assert set(seat_used) <= set(in_play)
        if state.step is Step.OVER:
            assert state.end is not None and not state.waiting and not state.closing
        else:
            assert state.end is None
            assert len(state.closed) < DICE_OUT_TO_END
        if state.step is Step.CROSS:
            assert sorted(d.colour for d in state.dice) == sorted(in_play)
            assert len(set(state.waiting)) == len(state.waiting)
        else:
            assert not state.waiting and not state.closing
            assert all(not seat_used for seat_used in state.used)
        if state.step is Step.ROLL:
            assert not state.dice
        if state.step is Step.REROLL:
            assert not state.rerolled and state.dice

    # -- whose turn -------------------------------------------------------------------
    def turn(self, state: State) -> Turn:
        step = state.step
        if step is Step.CROSS:
            # everyone crosses in any order: each cross and each Done of this turn so far
            moves_made = sum(map(len, state.used)) + len(state.sheets) - len(state.waiting)
            return _cross_turn(state.active, state.waiting, moves_made, _closing_throw(state))
        in_play = tuple(c for c in state.colours if c not in state.closed)
        if step is Step.ROLL:
            return _roll_turn(state.active, in_play)
        if step is Step.REROLL:
            return _reroll_turn(state.active, in_play)
        return _OVER_TURN

    # -- moves ------------------------------------------------------------------------
    def legal_moves(self, state: State, player: int) -> list[Move]:
        step = state.step
        if step is Step.REROLL:
            return [Keep(player), Reroll(player)] if player == state.active else []
        if step is not Step.CROSS or player not in state.waiting:
            return []
        sheet = state.sheets[player]
        used = state.used[player]
        moves: list[Move] = []
        for index, colour in enumerate(state.colours):
            if colour in used or colour in state.closed:
                continue
            value = die_value(state.dice, colour)
            if value is None:
                continue
            for column in _open_columns(sheet.numbers[index], sheet.marks[index], value):
                moves.append(Cross(player, colour, column))
        moves.append(Done(player))
        return moves

    def check(self, state: State, move: Move) -> None:
        step = state.step
        players = len(state.sheets)
        if step is not Step.OVER and not isinstance(move, Roll):
            seat = move.player
            if (
                step is Step.CROSS
                and isinstance(seat, int)
                and 0 <= seat < players
                and seat not in state.waiting
            ):
                raise Rejection(
                    Reason.NOT_YOUR_TURN,
                    "already_done",
                    "you have finished crossing this turn",
                )
            if step is Step.REROLL and seat == state.active and not isinstance(move, Keep | Reroll):
                raise Rejection(
                    Reason.NOT_YOUR_TURN,
                    "reroll_decision_first",
                    "first keep these dice or re-roll all of them",
                )
        check_actor(step is Step.OVER, self.turn(state), move)
        if isinstance(move, Roll | Done):
            return
        if isinstance(move, Keep | Reroll):
            if step is not Step.REROLL:
                raise illegal(
                    "decision_made",
                    "keeping or re-rolling is decided by the active player right after the "
                    "first roll of a turn, and only once",
                )
            return
        if not isinstance(move, Cross):
            raise illegal("unknown_move", f"Sixto has no {type(move).__name__} move")
        self._check_cross(state, move)

    @staticmethod
    def _check_cross(state: State, move: Cross) -> None:
        colour, column = move.colour, move.column
        if colour not in state.colours:
            raise illegal(
                "unknown_colour",
                f"there is no {colour} die in this game; the dice are {', '.join(state.colours)}",
            )
        if colour in state.closed:
            raise illegal("colour_closed", f"{colour} is closed")
        if colour in state.used[move.player]:
            raise illegal("die_used", f"you already used the {colour} die this turn")
        if isinstance(column, bool) or not isinstance(column, int) or not 1 <= column <= BOXES:
            raise illegal(
                "no_such_box", f"there is no {colour} box {column!r}; the boxes are 1 to {BOXES}"
            )
        index = state.colours.index(colour)
        sheet = state.sheets[move.player]
        numbers, marks = sheet.numbers[index], sheet.marks[index]
        digit = numbers[column - 1]
        count = marks.count(CROSSED)
        if count:
            last = _last_cross(marks)
            if last == BOXES:
                raise illegal(
                    "row_finished",
                    f"you crossed the last {colour} box, so you cannot cross {colour} any more",
                )
            if column == last:
                raise illegal("already_crossed", f"{colour} box {column} is already crossed")
            if column < last:
                raise illegal(
                    "left_to_right",
                    f"{colour} {digit} is left of your last {colour} cross (box {last})",
                )
        if column >= TARGET_FIRST and count < TARGET_NEEDS:
            raise illegal(
                "target_locked",
                f"the target area opens after {TARGET_NEEDS} crosses in this row "
                f"({colour} has {count})",
            )
        value = die_value(state.dice, colour)
        if value is None or DIGITS[value - 1] != digit:
            raise illegal(
                "wrong_number",
                f"the {colour} die shows {value}, {colour} box {column} shows {digit}",
            )

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Roll):
            order = {colour: i for i, colour in enumerate(state.colours)}
            dice = tuple(sorted(move.dice, key=lambda die: order[die.colour]))
            if state.rerolled:
                return State(
                    state.colours, state.sheets, state.active, Step.CROSS, state.used,
                    True, dice, tuple(range(len(state.sheets))), (), state.closed,
                    state.turn_number, None,
                )  # fmt: skip
            return State(
                state.colours, state.sheets, state.active, Step.REROLL, state.used,
                False, dice, (), (), state.closed, state.turn_number, None,
            )  # fmt: skip
        if isinstance(move, Keep):
            return State(
                state.colours, state.sheets, state.active, Step.CROSS, state.used,
                False, state.dice, tuple(range(len(state.sheets))), (), state.closed,
                state.turn_number, None,
            )  # fmt: skip
        if isinstance(move, Reroll):
            return State(
                state.colours, state.sheets, state.active, Step.ROLL, state.used,
                True, (), (), (), state.closed, state.turn_number, None,
            )  # fmt: skip
        player = move.player
        if isinstance(move, Cross):
            index = state.colours.index(move.colour)
            sheet = state.sheets[player]
            old = sheet.marks[index]
            row = f"{old[: move.column - 1]}{CROSSED}{old[move.column :]}"
            marks = (*sheet.marks[:index], row, *sheet.marks[index + 1 :])
            sheets = replaced(state.sheets, player, Sheet(sheet.name, sheet.numbers, marks))
            used = (*state.used[:player], (*state.used[player], move.colour),
                    *state.used[player + 1 :])  # fmt: skip
            closing = state.closing
            if _target_crosses(row) == TARGET_CROSSES_TO_CLOSE and move.colour not in closing:
                closing = (*closing, move.colour)
            return State(
                state.colours, sheets, state.active, Step.CROSS, used, state.rerolled,
                state.dice, state.waiting, closing, state.closed, state.turn_number, None,
            )  # fmt: skip
        waiting = tuple(seat for seat in state.waiting if seat != player)
        if waiting:
            return State(
                state.colours, state.sheets, state.active, Step.CROSS, state.used,
                state.rerolled, state.dice, waiting, state.closing, state.closed,
                state.turn_number, None,
            )  # fmt: skip
        return self._end_turn(state)

    @staticmethod
    def _end_turn(state: State) -> State:
        """After the last Done: the closing dice leave, then the end conditions (rulebook)."""
        players = len(state.sheets)
        closed = (*state.closed, *state.closing)
        end = turn_end_reason(state)
        no_dice_used = ((),) * players
        if end is not None:
            return State(
                state.colours, state.sheets, state.active, Step.OVER, no_dice_used,
                state.rerolled, state.dice, (), (), closed, state.turn_number, end,
            )  # fmt: skip
        return State(
            state.colours, state.sheets, (state.active + 1) % players, Step.ROLL,
            no_dice_used, False, (), (), (), closed, state.turn_number + 1, None,
        )  # fmt: skip

    # -- scoring and end --------------------------------------------------------------
    def scores(self, state: State) -> tuple[Score, ...]:
        """Rows (target crosses included) then main columns 1-9, each by the rulebook
        table; a column without crosses scores 0."""
        result = []
        for seat, sheet in enumerate(state.sheets):
            rows = tuple(
                (f"{colour} row", POINTS[marks.count(CROSSED)])
                for colour, marks in zip(state.colours, sheet.marks, strict=True)
            )
            # zip(*marks) reads the sheet column by column; only the main columns score.
            columns = tuple(
                (_COLUMN_LABELS[index], POINTS[boxes.count(CROSSED)])
                for index, boxes in enumerate(zip(*sheet.marks, strict=True))
                if index < MAIN_BOXES
            )
            breakdown = rows + columns
            result.append(Score(seat, sum(points for _, points in breakdown), breakdown))
        return tuple(result)

    def leaders(self, state: State) -> tuple[int, ...]:
        """Most points; tie: most crosses; still tied: all of them (rulebook: "In the event
        of a tie, the player who has crossed off the most boxes overall wins")."""
        totals = [score.total for score in self.scores(state)]
        best = max(totals)
        tied = [seat for seat, total in enumerate(totals) if total == best]
        crosses = {seat: _crosses_total(state.sheets[seat]) for seat in tied}
        most = max(crosses.values())
        return tuple(seat for seat in tied if crosses[seat] == most)

    def tie_break_words(self, state: State) -> str | None:
        """The words "on most crosses (n)" when the one leader won a tie on points so."""
        totals = [score.total for score in self.scores(state)]
        level = sum(1 for total in totals if total == max(totals))
        winners = self.leaders(state)
        if level == 1 or len(winners) > 1:
            return None
        return f"on most crosses ({_crosses_total(state.sheets[winners[0]])})"

    def outcome(self, state: State) -> Outcome | None:
        """Most points wins; tie: most crosses; still tied: a shared win (rulebook)."""
        if state.end is None:
            return None
        totals = [score.total for score in self.scores(state)]
        best = max(totals)
        leaders = [seat for seat, total in enumerate(totals) if total == best]
        winners = self.leaders(state)
        most = _crosses_total(state.sheets[winners[0]])
        names = describe_seats(winners)
        if len(state.sheets) == 1:
            result = f"final score {best}"
        elif len(winners) > 1:
            result = f"{names} share the win with {best} points and {most} crosses"
        elif len(leaders) > 1:
            result = f"{names} wins with {best} points, on most crosses ({most})"
        else:
            result = f"{names} wins with {best} points"
        return Outcome(state.end.value, f"{_end_words(state)}: {result}", winners)


GAME = Sixto()
