"""Sixmix (FX Schmid, 1999; 2-5 players): place your dice as the digits of six-digit numbers.

Rule sources: ``../shared/rules/sixmix.txt`` (the rulebook) and the Sixmix part of
``../shared/rules/NOTES.md``. A rulebook sentence wins over NOTES.

The rules, as enforced here:
- Each player has six dice of her colour and the row of that colour (with 2 players each
  player plays two colours: two rows, twelve dice). Only rows of colours in play are active.
  A row's spaces are worth 100,000, 10,000, 1,000, 100, 10 and 1 times the die in them.
- A turn: the active player rolls all her unplaced dice, then places ONE of the rolled dice
  in any free space of an active row; then the next player clockwise.
- Space 0 (the 100,000 space) of a row may be filled only by the row's owner, and each player
  must place exactly one of her dice in each of her own 100,000 spaces. A placement that would
  make that impossible later is illegal: she may place a die outside her own empty 100,000
  spaces only while she keeps at least one unplaced die per such empty space.
- When every die is placed the round is scored: the highest row total 2 points, the second
  highest 1; rows tied for the top each get 2 + 1 and nobody scores second; rows tied for
  second each get 1. Each three equal values in a row give 1 point to the row's owner
  (4 or 5 equal: 1, 6 equal: 2 -- that is, equal values // 3).
- The next round starts with the owner of the lowest row. The game ends at the end of a
  round in which a player has reached 10 points (``Options.target``).

House decisions where the rulebook is silent (each is tested):
- Why the keep-a-die rule is the only completion rule: the board has exactly as many
  spaces as there are dice, and only 100,000 spaces are restricted. If every player keeps
  at least as many unplaced dice as she has empty 100,000 spaces, the remaining free spaces
  (the other spaces) equal the remaining dice after those reservations, so every die fits and
  the player to move always has a legal placement. No other placement can block a round.
- A player's die of either of her colours may fill either of her own 100,000 spaces (the
  rulebook speaks of "her dice", not of a colour).
- With 2 players every row competes on its own: highest and second highest are ranked over
  the four rows, triplets count per row, and all points of a row go to its owner (so one
  player may take 2 + 1 with her two rows; two of her rows tied for the top earn 3 + 3, two
  tied for second 1 + 1). The next starter is the owner of the lowest row.
- First round: the rulebook's start roll (highest sum starts) happens at the table; the
  companion takes the result as ``Options.first_player``.
- Tie for the lowest row (the rulebook says the youngest starts; the companion knows no
  ages): the tied owner reached first going clockwise from the seat after the previous
  round's starter starts, and until the round's first roll that starter (or the host) may
  hand the start to another of the tied owners (`Starter`, a move the record holds), so
  the table follows the rulebook's youngest.
- End tie (most points shared): the higher total of the player's rows in the final round
  (one row, or the sum of her two rows with 2 players), then her higher 100,000 digit(s)
  (compared highest first), then a shared win. With one row per player the second key
  cannot split a tie the first left (digits 1-6 make equal values equal digit for digit),
  but it does with two rows. A game the host ends before its end compares the latest
  scored round (its values, not the next round's board on the table), and the end card
  names the tie-break that decided (`tie_break_words`).
- ``Options.colours`` lists the board's colour markers in board order; the first ``players``
  (with 2 players: the first four) are in play. With 2 players seat 0 plays colours[0] and
  colours[1], seat 1 colours[2] and colours[3]. Colours must be names the camera knows
  (``base.COLOURS``).
- Score breakdown: the chips won in each finished round, ``("round 1", 3), ...``.
- Everyone has the same number of dice and places one per turn, so nobody runs out early;
  should a seat have no dice left, the turn passes over it.
- The board is stored as text per space ("red 5", "" when free) rather than Die objects:
  every state goes through JSON to every tablet on every action, and the text form is about
  three times cheaper to decode; ``die_at`` reads a space as a Die.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
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
    Turn,
    check_actor,
    describe_seats,
    illegal,
)
from companion.rules.base import seat_name as base_seat_name

# -- constants ---------------------------------------------------------------------------

SPACES = 6
DICE_PER_COLOUR = 6
FIRST_SPACE = 0
FREE = ""  # a board space without a die
VALID_FACES = ("1", "2", "3", "4", "5", "6")
SPACE_VALUES = (100_000, 10_000, 1_000, 100, 10, 1)
SPACE_NAMES = ("100,000", "10,000", "1,000", "100", "10", "1")
HIGHEST_POINTS = 2
SECOND_POINTS = 1
TRIPLET = 3  # equal values per point: 3-5 equal -> 1 point, 6 equal -> 2 points
DEFAULT_COLOURS = ("green", "blue", "red", "orange", "teal")
DEFAULT_TARGET = 10
MIN_PLAYERS = 2
MAX_PLAYERS = 5


def rows_per_seat(players: int) -> int:
    """Rows (colours) each player owns: two with 2 players, otherwise one (rulebook)."""
    return 2 if players == 2 else 1


# -- options -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """Setup: `players` (2-5); `colours`: the board's colour markers in board order, of
    which the first `players` rows (4 with 2 players) are in play; `first_player`: the seat
    that won the start roll; `target`: the points that end the game (rulebook: 10)."""

    players: int = 4
    colours: tuple[str, ...] = DEFAULT_COLOURS
    first_player: int = 0
    target: int = DEFAULT_TARGET


# -- moves -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place(Move):
    """The active player puts one die of her roll into space `space` (0 = the 100,000
    space ... 5 = the 1 space) of the row of colour `row`."""

    kind: ClassVar[str] = "place"
    die: Die
    row: str
    space: int


@dataclass(frozen=True, slots=True)
class Starter(Move):
    """`seat` starts this round instead of `player`, the starter the companion picked: one
    of the owners tied for the lowest row of the last round (the rulebook: the youngest of
    them), chosen before the round's first roll by that starter or the host."""

    kind: ClassVar[str] = "starter"
    seat: int


# -- state -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A scored round, per row in board order: its value, its highest/second points and its
    triplet points (each row's points go to its owner). Not kept in the state (which holds
    the row values only, see `last_round`): a view for the tablets and tests."""

    number: int
    row_values: tuple[int, ...]
    rank_points: tuple[int, ...]
    triplet_points: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class State:
    """`colours`: the rows in play, board order (row i belongs to seat
    i // rows_per_seat(players)). `board[row][space]`: the die there as text, "red 5", or ""
    for a free space (`die_at` reads it as a Die). `roll`: the active player's rolled dice,
    empty while her roll is awaited. `points`: chips so far; `round_points[i][seat]`: chips
    won in round i + 1. `last_values`: the row values of the latest scored round, empty
    before the first (see `last_round`; the end tie-break reads them). After the final round
    `over` is set and the final board stays on the table."""

    players: int
    colours: tuple[str, ...]
    target: int
    round: int
    starter: int
    active: int
    board: tuple[tuple[str, ...], ...]
    points: tuple[int, ...]
    roll: tuple[Die, ...] = ()
    round_points: tuple[tuple[int, ...], ...] = ()
    last_values: tuple[int, ...] = ()
    over: bool = False
    # the owners tied for the last round's lowest row, while the round they open has had no
    # roll: the starter may hand the start to another of them (`Starter`)
    tied: tuple[int, ...] = ()


# -- pure helpers (shared by the game and its tests) -------------------------------------


def row_owner(players: int, row: int) -> int:
    return row // rows_per_seat(players)


def seat_rows(players: int, seat: int) -> range:
    per_seat = rows_per_seat(players)
    return range(seat * per_seat, (seat + 1) * per_seat)


def row_value(digits: tuple[int, ...]) -> int:
    """The number a full row shows: die times the space's value, summed (rulebook)."""
    return sum(d * v for d, v in zip(digits, SPACE_VALUES, strict=True))


def rank_points(values: tuple[int, ...]) -> tuple[int, ...]:
    """Highest/second points per row: top 2; rows tied for the top share both places
    (2 + 1 each, no second place left); otherwise rows equal to the second value get 1."""
    top = max(values)
    at_top = [v == top for v in values]
    if sum(at_top) > 1:
        return tuple(HIGHEST_POINTS + SECOND_POINTS if t else 0 for t in at_top)
    rest = [v for v in values if v != top]
    second = max(rest) if rest else None
    return tuple(
        HIGHEST_POINTS if v == top else SECOND_POINTS if v == second else 0 for v in values
    )


def triplet_points(digits: tuple[int, ...]) -> int:
    """One point per three equal values in a row, any colours, not necessarily adjacent
    (4 or 5 equal still 1, 6 equal 2)."""
    return sum(count // TRIPLET for count in Counter(digits).values())


def digits_of(value: int) -> tuple[int, ...]:
    """The dice of a full row from its value (faces 1-6 make the digits unique)."""
    return tuple((value // place) % 10 for place in SPACE_VALUES)


def last_round(state: State) -> RoundResult | None:
    """The latest scored round with its points per row, or None before the first."""
    if not state.last_values:
        return None
    return RoundResult(
        number=len(state.round_points),
        row_values=state.last_values,
        rank_points=rank_points(state.last_values),
        triplet_points=tuple(triplet_points(digits_of(v)) for v in state.last_values),
    )


def seat_name(state: State, seat: int) -> str:
    """How a player is called in messages: "player N" (seat N - 1), which the web layer
    replaces by the player's name (base.seat_name); `state` is kept for the callers."""
    return base_seat_name(seat)


def seat_colours(state: State, seat: int) -> tuple[str, ...]:
    """The colours of `seat`'s dice (placed or not): the colours of her rows."""
    return tuple(state.colours[r] for r in seat_rows(state.players, seat))


def unplaced_colours(state: State, seat: int) -> tuple[str, ...]:
    """One colour name per die of `seat` not yet on the board."""
    text = _board_text(state.board)
    colours: list[str] = []
    for colour in seat_colours(state, seat):
        colours.extend([colour] * (DICE_PER_COLOUR - _placed(text, colour)))
    return tuple(colours)


def empty_first_spaces(state: State, seat: int) -> int:
    return sum(state.board[r][FIRST_SPACE] == FREE for r in seat_rows(state.players, seat))


def cell_text(die: Die) -> str:
    """How a placed die is written on the board: "red 5"."""
    return f"{die.colour} {die.value}"


def die_at(state: State, row: int, space: int) -> Die | None:
    """The die in a space, or None when the space is free."""
    cell = state.board[row][space]
    if cell == FREE:
        return None
    colour, value = cell.split(" ")
    return Die(colour, int(value))


def _board_text(board: tuple[tuple[str, ...], ...]) -> str:
    """Every space between bars, "|green 5||red 3|...", so that counting a colour's dice
    runs in C (the dice counts are asked for on every turn and every check)."""
    return "|" + "|".join(["|".join(row) for row in board]) + "|"


def _placed(board_text: str, colour: str) -> int:
    """How many dice of `colour` lie on the board (`board_text` from `_board_text`)."""
    return board_text.count(f"|{colour} ")


def _empty_board(rows: int) -> tuple[tuple[str, ...], ...]:
    return tuple((FREE,) * SPACES for _ in range(rows))


# -- the game ----------------------------------------------------------------------------


class Sixmix(Game[Options, State]):
    name: ClassVar[str] = "sixmix"
    title: ClassVar[str] = "Sixmix"
    players: ClassVar[PlayerCount] = PlayerCount(MIN_PLAYERS, MAX_PLAYERS)
    options_type: ClassVar[type] = Options
    state_type: ClassVar[type] = State
    move_types: ClassVar[tuple[type[Move], ...]] = (Place, Starter)

    # -- setup -------------------------------------------------------------------------
    def setup(self, options: Options) -> State:
        def bad(rule: str, message: str) -> Rejection:
            return Rejection(Reason.BAD_OPTIONS, rule, message)

        players = options.players
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise bad(
                "players", f"Sixmix is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}"
            )
        rows = players * rows_per_seat(players)
        colours = tuple(options.colours)
        if len(colours) < rows:
            raise bad(
                "colours",
                f"{players} players need {rows} colours, got {len(colours)}",
            )
        unknown = [c for c in colours if c not in COLOURS]
        if unknown:
            raise bad(
                "colours",
                f"unknown colour {unknown[0]!r}; known colours: {', '.join(COLOURS)}",
            )
        if len(set(colours)) != len(colours):
            raise bad("colours", "each colour may appear only once on the board")
        if not 0 <= options.first_player < players:
            raise bad(
                "first_player",
                f"who starts must be one of the {players} players, not {options.first_player}",
            )
        if options.target < 1:
            raise bad("target", f"the target must be at least 1 point, not {options.target}")
        return State(
            players=players,
            colours=colours[:rows],
            target=options.target,
            round=1,
            starter=options.first_player,
            active=options.first_player,
            board=_empty_board(rows),
            points=(0,) * players,
        )

    def options_for(self, players: int) -> Options:
        return Options(players=players)

    def invariants(self, state: State) -> None:
        rows = state.players * rows_per_seat(state.players)
        assert len(state.colours) == rows == len(state.board)
        assert all(len(row) == SPACES for row in state.board)
        on_board: Counter[str] = Counter()
        for r, row in enumerate(state.board):
            for space, cell in enumerate(row):
                if cell == FREE:
                    continue
                colour, _, value = cell.partition(" ")
                assert colour in state.colours and value in VALID_FACES, cell
                on_board[colour] += 1
                if space == FIRST_SPACE:
                    owner = row_owner(state.players, r)
                    assert colour in seat_colours(state, owner), "a foreign 100,000 die"
        assert all(n <= DICE_PER_COLOUR for n in on_board.values())
        for seat in range(state.players):
            unplaced = sum(DICE_PER_COLOUR - on_board[c] for c in seat_colours(state, seat))
            assert unplaced >= empty_first_spaces(state, seat)
            assert seat != state.active or unplaced > 0 or state.over
        assert state.points == tuple(
            sum(won[seat] for won in state.round_points) for seat in range(state.players)
        )
        assert len(state.round_points) == state.round - (0 if state.over else 1)
        assert bool(state.last_values) == bool(state.round_points)
        assert len(state.last_values) in (0, rows)
        full = all(FREE not in row for row in state.board)
        assert full == state.over
        assert (max(state.points) >= state.target) == state.over
        if state.roll:
            assert sorted(d.colour for d in state.roll) == sorted(
                unplaced_colours(state, state.active)
            )
        if state.tied:
            assert len(state.tied) > 1 and not state.roll and not state.over
            assert state.active in state.tied and state.starter == state.active
            assert set(state.tied) <= set(range(state.players))

    # -- whose turn ---------------------------------------------------------------------
    def turn(self, state: State) -> Turn:
        if state.over:
            return Turn(step="over", active=None)
        if not state.roll:
            return Turn(
                step="roll",
                active=state.active,
                # the starter of a round with a tie for the lowest row may hand it on
                players=(state.active,) if state.tied else (),
                chance=True,
                dice=DiceSpec(colours=unplaced_colours(state, state.active)),
            )
        return Turn(step="place", active=state.active, players=(state.active,))

    # -- moves --------------------------------------------------------------------------
    def legal_moves(self, state: State, player: int) -> list[Move]:
        if state.tied and player == state.active:
            return [Starter(player, seat) for seat in state.tied if seat != player]
        if state.over or not state.roll or player != state.active:
            return []
        may_place_elsewhere = len(unplaced_colours(state, player)) > empty_first_spaces(
            state, player
        )
        targets: list[tuple[str, int]] = []
        for r, row in enumerate(state.board):
            mine = row_owner(state.players, r) == player
            for space, cell in enumerate(row):
                if cell != FREE:
                    continue
                if (mine and space == FIRST_SPACE) or (
                    space != FIRST_SPACE and may_place_elsewhere
                ):
                    targets.append((state.colours[r], space))
        # Dice of one colour showing one value are interchangeable: one move per face.
        faces = list(dict.fromkeys(state.roll))
        return [Place(player, die, colour, space) for die in faces for colour, space in targets]

    def check(self, state: State, move: Move) -> None:
        check_actor(state.over, self.turn(state), move)
        if isinstance(move, Roll):
            return
        if isinstance(move, Starter):
            self._check_starter(state, move)
            return
        if not state.roll:
            # the starter may act before the round's first roll, but only to hand it on
            raise Rejection(
                Reason.NOT_YOUR_TURN, "waiting_for_roll", "the dice have to be rolled first"
            )
        if not isinstance(move, Place):
            raise Rejection(Reason.MALFORMED, "move_kind", f"{self.name} has no {move.kind!r} move")
        self._check_place(state, move)

    @staticmethod
    def _check_starter(state: State, move: Starter) -> None:
        if not state.tied:
            raise illegal(
                "no_tie_to_settle",
                "the start is chosen only before the first roll of a round that follows a "
                "tie for the lowest row",
            )
        if move.seat not in state.tied or move.seat == move.player:
            raise illegal(
                "starter_among_tied",
                f"the start goes to another of those tied for the lowest row: "
                f"{' or '.join(base_seat_name(s) for s in state.tied if s != move.player)}",
            )

    def _check_place(self, state: State, move: Place) -> None:
        if move.die not in state.roll:
            rolled = ", ".join(cell_text(d) for d in state.roll)
            raise illegal(
                "die_not_rolled", f"your roll has no {cell_text(move.die)} (you rolled {rolled})"
            )
        if move.row not in state.colours:
            raise illegal("row_not_in_play", f"{move.row}'s row is not in play")
        if not 0 <= move.space < SPACES:
            raise illegal(
                "no_such_space",
                f"there is no space {move.space}: a row's spaces are 0 (100,000) to 5 (1)",
            )
        row = state.colours.index(move.row)
        held = state.board[row][move.space]
        if held != FREE:
            raise illegal(
                "space_taken",
                f"that space is taken: {move.row}'s {SPACE_NAMES[move.space]} space holds a {held}",
            )
        owner = row_owner(state.players, row)
        if move.space == FIRST_SPACE:
            if owner != move.player:
                raise illegal(
                    "owner_fills_first_space",
                    f"only {seat_name(state, owner)} may fill {move.row}'s 100,000 space",
                )
            return
        reserved = empty_first_spaces(state, move.player)
        if len(unplaced_colours(state, move.player)) <= reserved:
            own = "your own 100,000 space" if reserved == 1 else "each of your own 100,000 spaces"
            raise illegal("keep_die_for_first_space", f"you must keep a die for {own}")

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Roll):
            return replace(state, roll=move.dice, tied=())
        if isinstance(move, Starter):
            return replace(state, starter=move.seat, active=move.seat)
        assert isinstance(move, Place)
        row = state.colours.index(move.row)
        board = tuple(
            tuple(cell_text(move.die) if s == move.space else cell for s, cell in enumerate(cells))
            if r == row
            else cells
            for r, cells in enumerate(state.board)
        )
        if all(FREE not in cells for cells in board):
            return self._end_round(replace(state, board=board, roll=()))
        return replace(state, board=board, roll=(), active=self._next_active(state, board))

    def _next_active(self, state: State, board: tuple[tuple[str, ...], ...]) -> int:
        """The next seat clockwise that still has dice to place on `board`."""
        text = _board_text(board)
        seat = state.active
        for _ in range(state.players):
            seat = (seat + 1) % state.players
            if any(_placed(text, c) < DICE_PER_COLOUR for c in seat_colours(state, seat)):
                return seat
        raise AssertionError("a round with free spaces has a player with dice")

    def _end_round(self, state: State) -> State:
        """Score the full board; end the game or start the next round (rulebook)."""
        digits = [tuple(int(cell.split(" ")[1]) for cell in row) for row in state.board]
        values = tuple(row_value(row) for row in digits)
        ranks = rank_points(values)
        triplets = tuple(triplet_points(row) for row in digits)
        per_seat = tuple(
            sum(ranks[r] + triplets[r] for r in seat_rows(state.players, seat))
            for seat in range(state.players)
        )
        points = tuple(p + q for p, q in zip(state.points, per_seat, strict=True))
        scored = replace(
            state,
            points=points,
            round_points=(*state.round_points, per_seat),
            last_values=values,
        )
        if max(points) >= state.target:
            return replace(scored, over=True)
        tied = self._lowest_owners(state, values)
        return replace(
            scored,
            round=state.round + 1,
            starter=tied[0],
            active=tied[0],
            board=_empty_board(len(state.colours)),
            tied=tied if len(tied) > 1 else (),
        )

    @staticmethod
    def _lowest_owners(state: State, values: tuple[int, ...]) -> tuple[int, ...]:
        """The owners of the lowest row, first the one reached first clockwise from the seat
        after the previous starter: the next round's starter unless the table hands the
        start to another of them (house rule; the rulebook's youngest is unknown here)."""
        lowest = min(values)
        owners = {row_owner(state.players, r) for r, v in enumerate(values) if v == lowest}
        order = [(state.starter + step) % state.players for step in range(1, state.players + 1)]
        return tuple(seat for seat in order if seat in owners)

    # -- scoring and end ----------------------------------------------------------------
    def scores(self, state: State) -> tuple[Score, ...]:
        return tuple(
            Score(
                player=seat,
                total=state.points[seat],
                breakdown=tuple(
                    (f"round {number}", won[seat])
                    for number, won in enumerate(state.round_points, start=1)
                ),
            )
            for seat in range(state.players)
        )

    def leaders(self, state: State) -> tuple[int, ...]:
        """Most points; tie: the higher row value of the latest scored round (the final
        round's at the game's end), then the higher 100,000 digits; still tied: all of them
        (rulebook and NOTES.md)."""
        return self._ranked(state)[1]

    def _ranked(self, state: State) -> tuple[str, tuple[int, ...]]:
        """The seats ahead (`leaders`) and what put them there: "points", a tie-break's
        name (`_TIE_BREAKS`), or "shared_win" when every tie-break leaves them equal."""
        best = max(state.points)
        leaders = [seat for seat in range(state.players) if state.points[seat] == best]
        if len(leaders) == 1:
            return "points", tuple(leaders)
        if not state.last_values:  # no round scored yet: everyone on 0, nothing to compare
            return "shared_win", tuple(leaders)
        for reason, key in _tie_break_keys(state):
            top = max(key(s) for s in leaders)
            leaders = [s for s in leaders if key(s) == top]
            if len(leaders) == 1:
                return reason, tuple(leaders)
        return "shared_win", tuple(leaders)

    def tie_break_words(self, state: State) -> str | None:
        """What split the tie when the host ended the game: the row value or the 100,000
        digits of the latest scored round (the final round's, by the rulebook; a game the
        host ended has none, so our rule takes the last one played to its end), with the
        winner's figure, e.g. "on the higher row value in round 3 (654,321)". None when
        points decide or the tie stays shared."""
        reason, leaders = self._ranked(state)
        if reason not in _TIE_BREAKS:
            return None
        compared = {"tie_break_row_value": "row value", "tie_break_first_space": "100,000 digit"}
        # with 2 players each has two rows: two digits, compared highest first
        plural = "s" if reason == "tie_break_first_space" and state.players == 2 else ""
        return (
            f"on the higher {compared[reason]}{plural} in round {len(state.round_points)} "
            f"({_figure(state, reason, leaders[0])})"
        )

    def outcome(self, state: State) -> Outcome | None:
        if not state.over:
            return None
        best = max(state.points)
        reason, winners = self._ranked(state)
        if reason == "points":
            winner = winners[0]
            return Outcome(
                "target_reached",
                f"{_capital(seat_name(state, winner))} wins with {best} points",
                winners,
            )
        tied = _capital(
            describe_seats([s for s in range(state.players) if state.points[s] == best])
        )
        if reason == "shared_win":
            return Outcome(
                reason,
                f"{tied} tie on {best} points with equal boards and share the win",
                winners,
            )
        # each player named once: the winner, then who was level with her on points
        winner = winners[0]
        level = describe_seats(
            [s for s in range(state.players) if state.points[s] == best and s != winner]
        )
        return Outcome(
            reason,
            f"{_capital(seat_name(state, winner))} wins with {best} points, level with "
            f"{level}, on {_TIE_BREAKS[reason]} ({_figure(state, reason, winner)})",
            winners,
        )


def _tie_break_keys(state: State) -> tuple[tuple[str, Callable[[int], tuple[int, ...]]], ...]:
    """Sixmix's end tie-breaks in order, each a name (`_TIE_BREAKS`) and a seat's figure,
    higher wins: the total of her rows in the latest scored round, then her 100,000
    digits in it, highest first. Both read the scored values (`last_values`), never the
    board: a game the host ended mid-round has a board partly filled for the next round."""
    final = state.last_values

    def board_value(seat: int) -> tuple[int, ...]:
        return (sum(final[r] for r in seat_rows(state.players, seat)),)

    def first_digits(seat: int) -> tuple[int, ...]:
        digits = (digits_of(final[r])[FIRST_SPACE] for r in seat_rows(state.players, seat))
        return tuple(sorted(digits, reverse=True))

    return (("tie_break_row_value", board_value), ("tie_break_first_space", first_digits))


def _figure(state: State, reason: str, seat: int) -> str:
    """The seat's figure a tie-break compared, as the card shows it: "654,321", "6 and 1"."""
    return " and ".join(f"{value:,}" for value in dict(_tie_break_keys(state))[reason](seat))


# what each of Sixmix's tie-breaks compares, in words (Sixmix._ranked's names)
_TIE_BREAKS = {
    "tie_break_row_value": "the higher row value in the final round",
    "tie_break_first_space": "the higher 100,000 digit",
}


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


GAME = Sixmix()
