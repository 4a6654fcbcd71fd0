"""Qwixx (Nürnberger-Spielkarten-Verlag, 2012), the base game for 2 to 5 players.

Rule sources: ``../shared/rules/qwixx.txt`` (the rulebook) and the Qwixx part of
``../shared/rules/NOTES.md``. A rulebook sentence wins over NOTES.

A turn has three steps:

1. ``roll`` (the chance player): two white dice plus every coloured die still in the game.
2. ``white_sum``: every player, each once and in any order, crosses the sum of the white dice
   in one of their four rows or passes.
3. ``colour``: only the active player crosses one white die plus one coloured die in the row of
   that die's colour, or passes. Then the player on the left rolls.

House decisions where the rulebook is silent (or where the product needs a fixed answer):

- Who rolled the first 6 is settled at the table; ``Options.first_player`` names that seat.
- Every player declares the white-sum step explicitly (a cross or a pass), and the active
  player declares the colour step explicitly, even when no cross is possible: the engine cannot
  know when someone at the table is done writing.
- Players cross the white sum at the same moment at a real table, so a lock made in the
  white-sum step does not stop another player from crossing or locking the same colour in that
  step. Those locks close their rows when the white-sum step ends; the colour step of the same
  turn can no longer use those dice (NOTES: "a colour locked during the white-sum step cannot
  be used in the colour step"). Until then such a row is closed only to those who can no
  longer cross it on that sum, and a sheet shows it so (`rows_closed_to`).
- That holds for a second lock too: the players still to act on that white sum may cross any
  open row, not only lock (rulebook: "several players can lock the same colour at once ... A
  third row can even close at the same moment as the second"), and the game ends when the
  last of them has acted, before the colour step ("It stops right there, mid turn").
- A lock in the colour step closes the row at once.
- The penalty is marked when the active player finishes the colour step without a cross in
  either step (also when a cross was possible and declined: rulebook). When the game ends at the
  end of the white-sum step (a second lock), there is no colour step and so no penalty that turn.
- The sheet stores the crossed numbers of each row in crossing order (which is left to right).
  The lock box is crossed exactly when the row's last number is, so it is not stored separately;
  it counts as one more cross when scoring (NOTES: no "bonus point", and the last number itself
  is not among the 5 crosses it needs).
- Ties share the win (rulebook); there is no tie-break.
- The next roll closes the turn, as at a paper table: whoever has not crossed the white sum
  when the next roll comes has passed, and so has the active player who has not used a
  coloured die (with the penalty the rulebook gives for a turn without a cross). The Turn
  declares those passes (`Throw.closes`); a table may play without them. A throw declares
  none when those passes would end the game (a second lock closing, a fourth penalty):
  ending the game is the players' call, not a throw's.
- A refusal names the rule a player breaks first, in the order a player thinks: the row is
  closed, the box lies left of your last cross (or is crossed), the lock needs five
  crosses, the dice do not show the number.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import ClassVar

from companion.rules.base import (
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

ROW_COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
"""The four rows, in sheet order; a coloured die of the same name belongs to each."""

WHITE = "white"
DICE_COLOURS: tuple[str, ...] = (WHITE, WHITE, *ROW_COLOURS)
"""The six dice: two white dice plus one die per row colour (rulebook, first paragraph)."""
ROW_LENGTH = 11  # numbers 2..12 in every row
LOCK_NEEDS = 5  # crosses needed in a row before its last number may be crossed
MAX_PENALTIES = 4
PENALTY_POINTS = -5
LOCKS_TO_END = 2
MIN_PLAYERS, MAX_PLAYERS = 2, 5

_ASCENDING = tuple(range(2, 13))
_DESCENDING = tuple(range(12, 1, -1))
ROW_NUMBERS: tuple[tuple[int, ...], ...] = (_ASCENDING, _ASCENDING, _DESCENDING, _DESCENDING)
"""The printed numbers of each row, left to right: red and yellow 2..12, green and blue 12..2."""

COLOUR_INDEX: dict[str, int] = {colour: i for i, colour in enumerate(ROW_COLOURS)}
LAST_NUMBER: tuple[int, ...] = tuple(numbers[-1] for numbers in ROW_NUMBERS)

# POSITION[row][number] is the box index (0..10, left to right) of `number` in that row;
# indexed by the number itself so the hot paths need no dict look-up.
POSITION: tuple[tuple[int, ...], ...] = tuple(
    tuple(numbers.index(n) if 2 <= n <= 12 else -1 for n in range(13)) for numbers in ROW_NUMBERS
)
LAST_POSITION = ROW_LENGTH - 1

ROW_POINTS: tuple[int, ...] = tuple(n * (n + 1) // 2 for n in range(ROW_LENGTH + 2))
"""Points of a row by its crosses, lock included: 0, 1, 3, 6, ..., 78 (NOTES)."""


class Step(StrEnum):
    """The steps of a Qwixx turn, and the end."""

    ROLL = "roll"
    WHITE_SUM = "white_sum"
    COLOUR = "colour"
    OVER = "over"


class EndReason(StrEnum):
    """Why the game ended (rulebook: a fourth penalty, or a second locked colour)."""

    FOURTH_PENALTY = "fourth_penalty"
    TWO_LOCKS = "two_locks"


# -- options ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """Setup: `players` seats (2-5) and the seat that rolls first (`first_player`, 0-based:
    whoever rolled the first 6 at the table)."""

    players: int = 4
    first_player: int = 0


# -- moves --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cross(Move):
    """`player` crosses `number` in the row of `colour` (red, yellow, green or blue). In the
    white-sum step the number is the white sum; in the colour step it is one white die plus
    the die of that colour."""

    kind: ClassVar[str] = "cross"
    colour: str
    number: int


@dataclass(frozen=True, slots=True)
class Pass(Move):
    """`player` crosses nothing in this step (free, except for the active player who crosses
    nothing in the whole turn: a penalty)."""

    kind: ClassVar[str] = "pass"


# -- state --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sheet:
    """One player's score sheet: the crossed numbers of each row in crossing (left-to-right)
    order, and the penalty boxes marked. A row whose last number is crossed also has its lock
    crossed."""

    red: tuple[int, ...] = ()
    yellow: tuple[int, ...] = ()
    green: tuple[int, ...] = ()
    blue: tuple[int, ...] = ()
    penalties: int = 0

    def rows(self) -> tuple[tuple[int, ...], ...]:
        """The four rows in ROW_COLOURS order."""
        return (self.red, self.yellow, self.green, self.blue)

    def row(self, colour: str) -> tuple[int, ...]:
        return self.rows()[COLOUR_INDEX[colour]]

    def crosses(self, colour: str) -> int:
        """Crosses in the row of `colour`, the lock included."""
        index = COLOUR_INDEX[colour]
        return _row_crosses(self.rows()[index], index)

    def is_locked_by_me(self, colour: str) -> bool:
        """Whether this player crossed the lock box of `colour`."""
        row = self.row(colour)
        return bool(row) and row[-1] == LAST_NUMBER[COLOUR_INDEX[colour]]


@dataclass(frozen=True, slots=True)
class State:
    """A Qwixx position.

    `step` and `active` say whose turn it is; `dice` is the current roll (empty while a roll
    is due); `locked` lists the closed colours (their dice left the game) in closing order;
    `locking` the colours locked during the current white-sum step, which close when that step
    ends; `waiting` the players still to act in the white-sum step; `active_crossed` whether
    the active player crossed anything this turn; `end` why the game ended (None while it
    goes on)."""

    players: int
    active: int
    step: Step
    sheets: tuple[Sheet, ...]
    dice: tuple[Die, ...] = ()
    locked: tuple[str, ...] = ()
    locking: tuple[str, ...] = ()
    waiting: tuple[int, ...] = ()
    active_crossed: bool = False
    end: EndReason | None = None


# -- helpers ------------------------------------------------------------------------------


def _row_crosses(row: tuple[int, ...], index: int) -> int:
    """Crosses in a row, the lock counted as one more when the last number is crossed."""
    if row and row[-1] == LAST_NUMBER[index]:
        return len(row) + 1
    return len(row)


def _white_values(dice: tuple[Die, ...]) -> tuple[int, ...]:
    return tuple(d.value for d in dice if d.colour == WHITE)


def _with_cross(sheet: Sheet, index: int, number: int) -> Sheet:
    rows = [sheet.red, sheet.yellow, sheet.green, sheet.blue]
    rows[index] = (*rows[index], number)
    return Sheet(rows[0], rows[1], rows[2], rows[3], sheet.penalties)


def _with_penalty(sheet: Sheet) -> Sheet:
    return Sheet(sheet.red, sheet.yellow, sheet.green, sheet.blue, sheet.penalties + 1)


def _row_refusal(row: tuple[int, ...], index: int, number: int) -> Rejection | None:
    """Why `number` may not be crossed in this row now (left to right with skipping; the last
    number needs LOCK_NEEDS crosses first), or None when it may."""
    colour = ROW_COLOURS[index]
    positions = POSITION[index]
    position = positions[number]
    if row:
        last = positions[row[-1]]
        if position == last:
            return illegal("already_crossed", f"{colour} {number} is already crossed")
        if position < last:
            return illegal(
                "left_to_right", f"{colour} {number} is left of your last {colour} cross"
            )
    if position == LAST_POSITION and len(row) < LOCK_NEEDS:
        return illegal(
            "lock_needs_five",
            f"{colour} {number} locks the row: it needs {LOCK_NEEDS} crosses in {colour} "
            f"first (you have {len(row)})",
        )
    return None


def _is_open(row: tuple[int, ...], index: int, number: int) -> bool:
    """Fast twin of `_row_refusal(...) is None` for legal_moves."""
    positions = POSITION[index]
    position = positions[number]
    if row and position <= positions[row[-1]]:
        return False
    return position != LAST_POSITION or len(row) >= LOCK_NEEDS


# Shared, immutable move objects so legal_moves builds no dataclasses on the hot path.
_CROSSES: tuple[tuple[tuple[Cross | None, ...], ...], ...] = tuple(
    tuple(
        tuple(Cross(seat, colour, n) if 2 <= n <= 12 else None for n in range(13))
        for colour in ROW_COLOURS
    )
    for seat in range(MAX_PLAYERS)
)
_PASSES: tuple[Pass, ...] = tuple(Pass(seat) for seat in range(MAX_PLAYERS))
_SEAT_ORDER: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple((first + k) % count for k in range(count)) for first in range(count))
    if count
    else ()
    for count in range(MAX_PLAYERS + 1)
)
_OVER_TURN = Turn(step=Step.OVER.value, active=None)


@cache
def _roll_turn(active: int, locked: tuple[str, ...]) -> Turn:
    colours = tuple(c for c in DICE_COLOURS if c not in locked)
    return Turn(step=Step.ROLL.value, active=active, chance=True, dice=DiceSpec(colours=colours))


@cache
def _white_turn(active: int, waiting: tuple[int, ...], players: int, throw: Throw | None) -> Turn:
    # everyone acts once in any order: the taps of those who acted belong to this step
    acted = players - len(waiting)
    # no closing throw: the passes could end the game (`_closing_throw`)
    return Turn(
        step=Step.WHITE_SUM.value, active=active, players=waiting, moves_in_step=acted,
        throw=throw, ends_by_hand=throw is None,
    )  # fmt: skip


@cache
def _colour_turn(active: int, throw: Throw | None) -> Turn:
    return Turn(
        step=Step.COLOUR.value, active=active, players=(active,), throw=throw,
        ends_by_hand=throw is None,
    )  # fmt: skip


@cache
def _closing_throw(
    players: int,
    active: int,
    waiting: tuple[int, ...],
    locked: tuple[str, ...],
    last_penalty: bool,
) -> Throw | None:
    """What the next roll means while the turn is open (module docstring): the waiting
    players pass on the white sum, then the active player passes the colour step, then the
    next player rolls the dice still in the game. `locked` includes the rows the white sum
    is locking; `last_penalty`: that pass would mark the active player's fourth penalty.
    None when the passes would end the game."""
    if len(locked) >= LOCKS_TO_END or last_penalty:
        return None
    closes = (*(_PASSES[seat] for seat in waiting), _PASSES[active])
    colours = tuple(c for c in DICE_COLOURS if c not in locked)
    return Throw(DiceSpec(colours=colours), closes=closes, roller=(active + 1) % players)


def _turn_throw(state: State) -> Throw | None:
    """`_closing_throw` for the white-sum or colour step of `state`."""
    locked = (*state.locked, *state.locking)
    penalties = state.sheets[state.active].penalties
    last_penalty = not state.active_crossed and penalties + 1 >= MAX_PENALTIES
    return _closing_throw(state.players, state.active, state.waiting, locked, last_penalty)


def _white_sum_moves(state: State, player: int) -> list[Move]:
    """A waiting player's white-sum crosses (one per open row) and the pass."""
    white_sum = 0
    for die in state.dice:
        if die.colour == WHITE:
            white_sum += die.value
    sheet = state.sheets[player]
    crosses = _CROSSES[player]
    locked = state.locked
    moves: list[Move] = []
    for index, row in enumerate((sheet.red, sheet.yellow, sheet.green, sheet.blue)):
        if (not locked or ROW_COLOURS[index] not in locked) and _is_open(row, index, white_sum):
            moves.append(crosses[index][white_sum])  # type: ignore[arg-type]
    moves.append(_PASSES[player])
    return moves


def _colour_moves(state: State, player: int) -> list[Move]:
    """The active player's colour crosses (a white die plus the row's die) and the pass."""
    whites: list[int] = []
    coloured: dict[str, int] = {}
    for die in state.dice:
        if die.colour == WHITE:
            whites.append(die.value)
        else:
            coloured[die.colour] = die.value
    sheet = state.sheets[player]
    crosses = _CROSSES[player]
    low, high = sorted(whites)
    moves: list[Move] = []
    for index, row in enumerate((sheet.red, sheet.yellow, sheet.green, sheet.blue)):
        colour = ROW_COLOURS[index]
        value = coloured.get(colour)
        if value is None or colour in state.locked:
            continue
        for number in (low + value, high + value) if low != high else (low + value,):
            if _is_open(row, index, number):
                moves.append(crosses[index][number])  # type: ignore[arg-type]
    moves.append(_PASSES[player])
    return moves


def _check_step_actor(state: State, player: int) -> None:
    """The step's own who-may-act refusals, more precise than `check_actor`'s, spoken to
    the player (the others named as "player N")."""
    if state.step is Step.COLOUR and player != state.active:
        raise Rejection(
            Reason.NOT_YOUR_TURN,
            "active_player_only",
            f"only {seat_name(state.active)}, whose turn it is, may use a coloured die now",
        )
    if state.step is Step.WHITE_SUM and player not in state.waiting:
        if player == state.active:
            # the active player who is done with the white sum wants a coloured die
            raise Rejection(
                Reason.NOT_YOUR_TURN,
                "white_sum_first",
                "the coloured dice are yours once everyone has crossed or passed on the "
                f"white sum; waiting for {describe_seats(state.waiting)}",
            )
        raise Rejection(
            Reason.NOT_YOUR_TURN,
            "already_acted",
            "you have already crossed or passed on this white sum",
        )


def _check_box(state: State, move: Cross) -> int:
    """The row index of a cross to a box that exists in an open row."""
    colour, number = move.colour, move.number
    index = COLOUR_INDEX.get(colour) if isinstance(colour, str) else None
    if index is None:
        raise illegal(
            "no_such_row", f"there is no {colour} row; the rows are {', '.join(ROW_COLOURS)}"
        )
    if isinstance(number, bool) or not isinstance(number, int) or not 2 <= number <= 12:
        raise illegal("no_such_number", f"{colour} has no box {number!r}; it runs 2 to 12")
    if colour in state.locked:
        raise illegal("row_locked", f"{colour} is locked: nobody crosses in it any more")
    return index


def _colour_sums(state: State, colour: str) -> list[int]:
    """The numbers a white die and the die of `colour` make (none when it is not rolled)."""
    value = die_value(state.dice, colour)
    if value is None:
        return []
    return sorted({white + value for white in _white_values(state.dice)})


def _check_sum(state: State, move: Cross) -> None:
    """The number is the white sum, or (colour step) a white die plus the row's die."""
    colour, number = move.colour, move.number
    if state.step is Step.WHITE_SUM:
        white_sum = sum(_white_values(state.dice))
        if number == white_sum:
            return
        early = move.player == state.active and number in _colour_sums(state, colour)
        after = "; a white and a coloured die come after the white sum" if early else ""
        raise illegal("white_sum", f"the white dice show {white_sum}, not {number}{after}")
    sums = _colour_sums(state, colour)
    assert sums  # an open colour is always rolled
    if number not in sums:
        options = " or ".join(str(s) for s in sums)
        raise illegal(
            "colour_sum", f"a white die and the {colour} die make {options}, not {number}"
        )


# -- what a sheet shows -------------------------------------------------------------------


def rows_closed_to(state: State, player: int) -> frozenset[str]:
    """The rows closed to `player` now, as their sheet shows them: every locked row, and
    every row the white sum is locking (module docstring) in which `player` has no cross
    left on it (they have acted, or their row does not take the sum: a lock needs five
    crosses). A row stays open to a player still to act who may lock it too (rulebook:
    "several players can lock the same colour at once") until they act; the legal moves
    decide, so this says no more than they do."""
    if not state.locking:
        return frozenset(state.locked)
    crossable: set[str] = set()
    if state.step is Step.WHITE_SUM and player in state.waiting:
        crossable = {m.colour for m in _white_sum_moves(state, player) if isinstance(m, Cross)}
    return frozenset(state.locked) | {c for c in state.locking if c not in crossable}


# -- the game -----------------------------------------------------------------------------


class Qwixx(Game[Options, State]):
    """The rules of Qwixx (rulebook ../shared/rules/qwixx.txt, NOTES.md)."""

    name: ClassVar[str] = "qwixx"
    title: ClassVar[str] = "Qwixx"
    players: ClassVar[PlayerCount] = PlayerCount(MIN_PLAYERS, MAX_PLAYERS)
    options_type: ClassVar[type] = Options
    state_type: ClassVar[type] = State
    move_types: ClassVar[tuple[type[Move], ...]] = (Cross, Pass)

    # -- setup ------------------------------------------------------------------------
    def setup(self, options: Options) -> State:
        players = options.players
        if (
            isinstance(players, bool)
            or not isinstance(players, int)
            or not (MIN_PLAYERS <= players <= MAX_PLAYERS)
        ):
            raise Rejection(
                Reason.BAD_OPTIONS,
                "players",
                f"Qwixx is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players!r}",
            )
        first = options.first_player
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < players:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "first_player",
                f"who rolls first must be one of the {players} players, not {first!r}",
            )
        return State(players=players, active=first, step=Step.ROLL, sheets=(Sheet(),) * players)

    def options_for(self, players: int) -> Options:
        return Options(players=players)

    def dice_colours(self, options: Options) -> tuple[str, ...]:
        return DICE_COLOURS

    def invariants(self, state: State) -> None:
        assert MIN_PLAYERS <= state.players <= MAX_PLAYERS
        assert len(state.sheets) == state.players
        assert 0 <= state.active < state.players
        locked_anywhere = set()
        for sheet in state.sheets:
            assert 0 <= sheet.penalties <= MAX_PENALTIES
            for index, row in enumerate(sheet.rows()):
                positions = [POSITION[index][n] for n in row]
                assert all(p >= 0 for p in positions), row
                assert positions == sorted(set(positions)), f"not left to right: {row}"
                if row and positions[-1] == LAST_POSITION:
                    assert len(row) >= LOCK_NEEDS + 1, f"lock without five crosses: {row}"
                    locked_anywhere.add(ROW_COLOURS[index])
        assert set(state.locked) | set(state.locking) == locked_anywhere
        assert len(set(state.locked)) == len(state.locked)
        assert not set(state.locked) & set(state.locking)
        penalties = max(sheet.penalties for sheet in state.sheets)
        if state.step is Step.OVER:
            assert state.end is not None
            if state.end is EndReason.FOURTH_PENALTY:
                assert penalties == MAX_PENALTIES
            else:
                assert len(state.locked) >= LOCKS_TO_END
        else:
            assert state.end is None
            assert penalties < MAX_PENALTIES
            assert len(state.locked) < LOCKS_TO_END
        if state.step is Step.WHITE_SUM:
            assert state.waiting and set(state.waiting) <= set(range(state.players))
            assert len(set(state.waiting)) == len(state.waiting)
        else:
            assert not state.waiting and not state.locking
        if state.step in (Step.WHITE_SUM, Step.COLOUR):
            rolled = [die.colour for die in state.dice]
            assert rolled.count(WHITE) == 2
            assert all(colour in rolled for colour in ROW_COLOURS if colour not in state.locked)
        if state.step is Step.ROLL:
            assert not state.dice and not state.active_crossed

    # -- whose turn -------------------------------------------------------------------
    def turn(self, state: State) -> Turn:
        step = state.step
        if step is Step.WHITE_SUM:
            return _white_turn(state.active, state.waiting, state.players, _turn_throw(state))
        if step is Step.COLOUR:
            return _colour_turn(state.active, _turn_throw(state))
        if step is Step.ROLL:
            return _roll_turn(state.active, state.locked)
        return _OVER_TURN

    # -- moves ------------------------------------------------------------------------
    def legal_moves(self, state: State, player: int) -> list[Move]:
        step = state.step
        if step is Step.WHITE_SUM:
            return _white_sum_moves(state, player) if player in state.waiting else []
        if step is Step.COLOUR:
            return _colour_moves(state, player) if player == state.active else []
        return []

    def check(self, state: State, move: Move) -> None:
        step = state.step
        if step is Step.OVER:
            check_actor(True, _OVER_TURN, move)
        seated = not isinstance(move, Roll) and 0 <= move.player < state.players
        if seated and isinstance(move, Cross):
            # in the order a player thinks (module docstring): a box that can never be
            # crossed says why first (the row, its order, the lock), then whose turn it
            # is, then the dice
            index = _check_box(state, move)
            refusal = _row_refusal(state.sheets[move.player].rows()[index], index, move.number)
            if refusal is not None:
                raise refusal
        if seated:
            _check_step_actor(state, move.player)
        check_actor(False, self.turn(state), move)
        if isinstance(move, (Roll, Pass)):
            return
        if not isinstance(move, Cross):
            raise illegal("unknown_move", f"Qwixx has no {type(move).__name__} move")
        _check_box(state, move)
        _check_sum(state, move)

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Roll):
            return State(
                state.players, state.active, Step.WHITE_SUM, state.sheets, move.dice,
                state.locked, (), _SEAT_ORDER[state.players][state.active], False, None,
            )  # fmt: skip
        player = move.player
        sheets = state.sheets
        # The colour whose lock this move crosses, if any.
        lock: str | None = None
        if isinstance(move, Cross):
            index = COLOUR_INDEX[move.colour]
            sheets = replaced(sheets, player, _with_cross(sheets[player], index, move.number))
            if move.number == LAST_NUMBER[index]:
                lock = move.colour
        crossed = isinstance(move, Cross)
        if state.step is Step.WHITE_SUM:
            return self._after_white_sum(state, player, sheets, lock, crossed)
        return self._after_colour(state, player, sheets, lock, crossed)

    def _after_white_sum(
        self, state: State, player: int, sheets: tuple[Sheet, ...], lock: str | None, crossed: bool
    ) -> State:
        """A white-sum cross or pass: the step goes on until everyone has acted; then its
        locks close their rows, and the colour step follows (or the end)."""
        locking = state.locking
        if lock is not None and lock not in locking:
            locking = (*locking, lock)
        waiting = tuple(seat for seat in state.waiting if seat != player)
        active_crossed = state.active_crossed or (crossed and player == state.active)
        if waiting:
            return State(
                state.players, state.active, Step.WHITE_SUM, sheets, state.dice,
                state.locked, locking, waiting, active_crossed, None,
            )  # fmt: skip
        locked = (*state.locked, *locking)
        if len(locked) >= LOCKS_TO_END:
            return self._over(state, sheets, locked, active_crossed, EndReason.TWO_LOCKS)
        return State(
            state.players, state.active, Step.COLOUR, sheets, state.dice, locked, (), (),
            active_crossed, None,
        )  # fmt: skip

    def _after_colour(
        self, state: State, player: int, sheets: tuple[Sheet, ...], lock: str | None, crossed: bool
    ) -> State:
        """The colour step's cross or pass: a lock closes the row at once; no cross in
        either step is a penalty; then the player on the left rolls."""
        locked = state.locked
        if lock is not None:
            locked = (*locked, lock)
            if len(locked) >= LOCKS_TO_END:
                return self._over(state, sheets, locked, True, EndReason.TWO_LOCKS)
        elif not crossed and not state.active_crossed:
            sheet = _with_penalty(sheets[player])
            sheets = replaced(sheets, player, sheet)
            if sheet.penalties >= MAX_PENALTIES:
                return self._over(state, sheets, locked, False, EndReason.FOURTH_PENALTY)
        return State(
            state.players, (state.active + 1) % state.players, Step.ROLL, sheets, (), locked,
            (), (), False, None,
        )  # fmt: skip

    @staticmethod
    def _over(
        state: State,
        sheets: tuple[Sheet, ...],
        locked: tuple[str, ...],
        active_crossed: bool,
        reason: EndReason,
    ) -> State:
        return State(
            state.players,
            state.active,
            Step.OVER,
            sheets,
            state.dice,
            locked,
            (),
            (),
            active_crossed,
            reason,
        )

    # -- scoring and end --------------------------------------------------------------
    def scores(self, state: State) -> tuple[Score, ...]:
        result = []
        for seat, sheet in enumerate(state.sheets):
            breakdown = tuple(
                (colour, ROW_POINTS[_row_crosses(row, index)])
                for index, (colour, row) in enumerate(zip(ROW_COLOURS, sheet.rows(), strict=True))
            ) + (("penalties", PENALTY_POINTS * sheet.penalties),)
            result.append(Score(seat, sum(points for _, points in breakdown), breakdown))
        return tuple(result)

    def penalty(self, state: State, move: Move) -> int:
        """The active player's pass of the colour step after crossing nothing this turn
        marks a penalty (rulebook, also when a cross was possible: `_after_colour`)."""
        marks = (
            isinstance(move, Pass)
            and state.step is Step.COLOUR
            and move.player == state.active
            and not state.active_crossed
        )
        return PENALTY_POINTS if marks else 0

    def outcome(self, state: State) -> Outcome | None:
        if state.end is None:
            return None
        scores = self.scores(state)
        best = max(score.total for score in scores)
        winners = tuple(score.player for score in scores if score.total == best)
        if state.end is EndReason.FOURTH_PENALTY:
            seat = next(
                s for s, sheet in enumerate(state.sheets) if sheet.penalties >= MAX_PENALTIES
            )
            cause = f"{seat_name(seat)} marked a fourth penalty"
        else:
            cause = f"{' and '.join(state.locked)} are locked"
        names = describe_seats(winners)
        verb = "share the win" if len(winners) > 1 else "wins"
        return Outcome(
            state.end.value, f"{cause}: the game is over; {names} {verb} with {best}", winners
        )


GAME = Qwixx()
