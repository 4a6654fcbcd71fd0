"""Sixes: a betting game for three or more players and two dice.

Rule sources: the rulebook ``../shared/rules/sixes.txt`` (instructions, "Order of Play" and
"Outcomes") and the Sixes section of ``../shared/rules/NOTES.md``. A rulebook sentence wins
over NOTES; NOTES wins over the house decisions below.

A roller's turn (rulebook, "Order of Play"):
1. the roller drops the starter pot (starter_factor x multiplier coins) -- automatic;
2. the roller calls the number up n (1 first) -- automatic;
3. table-pound: the first player to pound after the call wins it and is in the betting for
   the rest of this turn ("stuck"); only one player wins a table-pound, and when that player
   is already in the betting, newcomers are shut out until the next call;
4. everyone in the betting drops n x multiplier coins -- automatic;
5. the roller rolls both dice. Outcomes, checked in this order (NOTES): double 6 -> the
   roller takes the pot; n shows on either die -> the roller loses and the pot is shared
   among the betters; n = 6 and not shown -> the roller takes the pot; otherwise the roll is
   safe and the roller may pass (pot shared among the betters and the roller) or go on with
   n + 1;
6. after a win, loss or pass the dice move clockwise to the next player.

Decisions from NOTES (the rulebook is silent):
- Sharing: the pot is split evenly in whole coins; the remainder goes one coin at a time to
  the sharers in clockwise order starting left of the roller (on a pass the roller is a
  sharer too, and so comes last). No coin is ever created or lost: the purses plus the pot
  always add up to the purses at setup (`invariants`).
- A roller who loses while nobody is betting takes the pot back.

House decisions (neither the rulebook nor NOTES settles these):
- Players: 3 (rulebook) to 12 (a table; the tablets' layout is designed for up to 12).
- The table-pound is modelled as a race: in step "pound" every player who may pound is
  listed and the first accepted `Pound` closes the window ("someone else pounded first" for
  the rest). A player already in the betting may pound, which shuts newcomers out (rulebook).
  The roll also closes the window: when the dice are rolled before anyone pounded, nobody
  won this table-pound, the bets are dropped and the roll counts. So the roller needs no
  "nobody pounded" move: the camera seeing the dice is that moment.
- The roller never pounds (the roller is not a better in their own turn).
- Money: purses never go negative. A player may win a table-pound as a newcomer only if
  their purse covers every bet they would be stuck with, n + (n+1) + ... + 6 times the
  multiplier; so a better can always pay, and there is no "all in". A player already in the
  betting may always pound. A player who cannot drop the starter pot when the dice reach
  them is skipped (the dice move on; `State.skipped` names them) and that does not count as
  a roller turn.
- First roller: the table chooses (`Options.first_player`, seat 0 by default; the rulebook
  does not say), or the first seat clockwise from it who can drop the starter pot.
- Starting purses: 50 x multiplier each by default, from the rulebook's example (multiplier
  100, "need bring no more than 5,000 coins each"); `Options.purses` sets each seat's purse.
- Game length: the rulebook ends the game "when people get sick and tired" of it. Here the
  game ends (a) after `Options.rollers` completed roller turns (default: two rounds around
  the table, 2 x players), (b) when the current roller plays `EndGame` at the very start of
  their turn (number up 1, nobody has pounded, nothing rolled; the starter pot goes back to
  the roller) -- the host can send that move on the roller's behalf, or (c) when no money
  can move any more: nobody can drop the starter pot, or fewer than two players can take
  part (drop the starter pot, or cover the bet on 6 as a newcomer). Random play (the
  conformance test, the benchmark) may pick `EndGame`, so random games often end early.
- Score: a player's purse; the breakdown is the starting purse and what was won or lost
  (coins in the pot during a turn count as lost until the turn ends). Winners: the richest
  player(s) at the end; ties are shared, and the end message says so ("... and share the
  win").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
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
    seat_name,
)

# -- constants -----------------------------------------------------------------------------

MIN_PLAYERS = 3  # rulebook: "three or more players"
MAX_PLAYERS = 12  # house bound, see the module docstring
LAST_NUMBER = 6
PURSE_FACTOR = 50  # rulebook example: multiplier 100, "no more than 5,000 coins each"
DEFAULT_ROUNDS = 2  # default game length: each player is the roller twice
MAX_MULTIPLIER = 1_000_000  # rulebook: stakes up to "hundreds of thousands of silvers"
MAX_STARTER_FACTOR = 100
MAX_PURSE = 10**12
MAX_ROLLERS = 10_000


def bets_to_six(number: int, multiplier: int) -> int:
    """What a newcomer at `number` is stuck with: the bets number..6, times the multiplier."""
    return sum(range(number, LAST_NUMBER + 1)) * multiplier


# -- options -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """Setup of a game of Sixes (rulebook: multiplier and starter pot are fixed per game).

    `purses`: each seat's starting purse; empty means PURSE_FACTOR x multiplier each.
    `rollers`: completed roller turns after which the game ends; None means two rounds
    around the table. `dice`: the colours of the two dice the camera looks for."""

    players: int = 4
    multiplier: int = 10
    starter_factor: int = 5
    purses: tuple[int, ...] = ()
    rollers: int | None = None
    dice: tuple[str, str] = ("white", "white")
    first_player: int = 0  # the first roller, as the table chooses (issue 26 item 11)


# -- moves ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pound(Move):
    """Hit the table after the call: the first pound wins the table-pound (rulebook)."""

    kind: ClassVar[str] = "pound"
    player: int


@dataclass(frozen=True, slots=True)
class Pass(Move):
    """The roller, after a safe roll, stops: the pot is shared among betters and roller."""

    kind: ClassVar[str] = "pass"
    player: int


@dataclass(frozen=True, slots=True)
class GoOn(Move):
    """The roller, after a safe roll, calls the next number up."""

    kind: ClassVar[str] = "go_on"
    player: int


@dataclass(frozen=True, slots=True)
class EndGame(Move):
    """The roller (or the host for them) ends the game at the very start of their turn."""

    kind: ClassVar[str] = "end_game"
    player: int


# -- state ---------------------------------------------------------------------------------


class Step(StrEnum):
    POUND = "pound"  # the number is called; the table-pound is open
    ROLL = "roll"  # someone won the table-pound; the bets are in; the dice are due
    DECIDE = "decide"  # a safe roll: the roller passes or goes on
    OVER = "over"


class TurnResult(StrEnum):
    WIN = "win"  # the roller took the pot
    LOSS = "loss"  # the pot went to the betters (or back to a roller nobody bet against)
    PASS = "pass"  # the pot was shared among the betters and the roller
    STOPPED = "stopped"  # the game was ended; the starter pot went back to the roller


class EndReason(StrEnum):
    ROLLERS_DONE = "rollers_done"
    STOPPED = "stopped"
    OUT_OF_MONEY = "out_of_money"


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How the last roller's turn ended, for the page: who got how many coins of the pot."""

    roller: int
    result: TurnResult
    number_up: int
    pot: int
    sharers: tuple[int, ...]  # who received coins, in hand-out order
    shares: tuple[int, ...]  # coins each of them received


@dataclass(frozen=True, slots=True)
class State:
    """A game of Sixes, as the web page shows it: `roller`, `number_up`, `pot`, `purses`;
    `betting`: seats in the betting this turn, in the order they joined; `pounded_by`: who
    won the current call's table-pound (None while it is open, or when the dice were rolled
    before anyone pounded); `last_roll` and `last_turn`: what happened last, and
    `last_roller` and `last_roll_number_up`: whose roll `last_roll` was and the number it
    was rolled for (it may belong to the turn going on, not to `last_turn`: the page says
    whose it is; None and 0 before the first roll)."""

    multiplier: int
    starter_pot: int
    dice: tuple[str, str]
    rollers: int
    start_purses: tuple[int, ...]
    purses: tuple[int, ...]
    pot: int
    roller: int
    number_up: int
    betting: tuple[int, ...]
    pounded_by: int | None
    step: Step
    rollers_done: int
    last_roll: tuple[Die, ...] = ()
    last_turn: TurnEnd | None = None
    last_roller: int | None = None
    last_roll_number_up: int = 0
    skipped: tuple[int, ...] = ()  # seats passed over at the last hand-over (no starter pot)
    end_reason: EndReason | None = None

    @property
    def players(self) -> int:
        return len(self.purses)


# -- the game ------------------------------------------------------------------------------


def _clockwise_from_left(roller: int, count: int) -> list[int]:
    """Every seat but the roller's, clockwise starting left of the roller, then the roller."""
    return [(roller + k) % count for k in range(1, count + 1)]


def _share(state: State, sharers: set[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Split the pot evenly in whole coins; the remainder one coin at a time clockwise from
    the roller's left (NOTES). Returns (sharers in hand-out order, coins each)."""
    order = tuple(s for s in _clockwise_from_left(state.roller, state.players) if s in sharers)
    each, remainder = divmod(state.pot, len(order))
    return order, tuple(each + (1 if i < remainder else 0) for i in range(len(order)))


class Sixes(Game[Options, State]):
    name: ClassVar[str] = "sixes"
    title: ClassVar[str] = "Sixes"
    players: ClassVar[PlayerCount] = PlayerCount(MIN_PLAYERS, MAX_PLAYERS)
    options_type: ClassVar[type] = Options
    state_type: ClassVar[type] = State
    move_types: ClassVar[tuple[type[Move], ...]] = (Pound, Pass, GoOn, EndGame)

    # -- setup -------------------------------------------------------------------------
    def options_for(self, players: int) -> Options:
        return Options(players=players)

    def setup(self, options: Options) -> State:
        def bad(field: str, message: str) -> Rejection:
            return Rejection(Reason.BAD_OPTIONS, field, message)

        if not MIN_PLAYERS <= options.players <= MAX_PLAYERS:
            raise bad("players", f"Sixes is for {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if not 1 <= options.multiplier <= MAX_MULTIPLIER:
            raise bad("multiplier", f"the multiplier is 1 to {MAX_MULTIPLIER}")
        if not 0 <= options.starter_factor <= MAX_STARTER_FACTOR:
            raise bad("starter_factor", f"the starter factor is 0 to {MAX_STARTER_FACTOR}")
        purses = options.purses or (PURSE_FACTOR * options.multiplier,) * options.players
        if len(purses) != options.players:
            raise bad("purses", f"give one purse per player ({options.players}), or none")
        if any(not 0 <= p <= MAX_PURSE for p in purses):
            raise bad("purses", f"a purse holds 0 to {MAX_PURSE} coins")
        rollers = DEFAULT_ROUNDS * options.players if options.rollers is None else options.rollers
        if not 1 <= rollers <= MAX_ROLLERS:
            raise bad("rollers", f"the game lasts 1 to {MAX_ROLLERS} roller turns")
        if len(options.dice) != 2 or any(c not in COLOURS for c in options.dice):
            raise bad("dice", f"two dice, each one of: {', '.join(COLOURS)}")
        if not 0 <= options.first_player < options.players:
            raise bad(
                "first_player", f"who rolls first must be one of the {options.players} players"
            )
        table = State(
            multiplier=options.multiplier,
            starter_pot=options.starter_factor * options.multiplier,
            dice=options.dice,
            rollers=rollers,
            start_purses=purses,
            purses=purses,
            pot=0,
            # the seat before the first roller: the first hand-over reaches them
            roller=(options.first_player - 1) % options.players,
            number_up=1,
            betting=(),
            pounded_by=None,
            step=Step.POUND,
            rollers_done=0,
        )
        state = self._hand_over(table, counted=False)
        if state.step is Step.OVER:
            raise bad(
                "purses",
                f"someone must be able to drop the starter pot ({table.starter_pot} coins) "
                "and at least two players need enough coins to play",
            )
        return state

    def invariants(self, state: State) -> None:
        assert sum(state.purses) + state.pot == sum(state.start_purses), "coins created or lost"
        assert all(p >= 0 for p in state.purses) and state.pot >= 0, "negative coins"
        assert len(set(state.betting)) == len(state.betting), "a better listed twice"
        assert state.roller not in state.betting, "the roller bets against themselves"
        assert 1 <= state.number_up <= LAST_NUMBER
        assert state.rollers_done <= state.rollers
        if state.step is Step.OVER:
            assert state.pot == 0 and not state.betting and state.end_reason is not None
            return
        # A better can always pay the bets still to come (house rule: no "all in").
        bets_dropped = state.step is not Step.POUND
        still_due = bets_to_six(state.number_up + bets_dropped, state.multiplier)
        for seat in state.betting:
            assert state.purses[seat] >= still_due, f"{seat_name(seat)} cannot pay the bets to 6"

    # -- whose turn --------------------------------------------------------------------
    def _can_pound(self, state: State, seat: int) -> bool:
        return seat != state.roller and (
            seat in state.betting
            or state.purses[seat] >= bets_to_six(state.number_up, state.multiplier)
        )

    def _can_end(self, state: State) -> bool:
        return state.number_up == 1 and not state.betting

    def dice_colours(self, options: Options) -> tuple[str, ...]:
        # every roll throws the same two dice: a camera may be calibrated for them
        return tuple(options.dice)

    def turn(self, state: State) -> Turn:
        spec = DiceSpec(colours=state.dice)
        if state.step is Step.OVER:
            return Turn(step="over", active=None)
        if state.step is Step.POUND:
            order = _clockwise_from_left(state.roller, state.players)
            who = tuple(
                s
                for s in order
                if self._can_pound(state, s) or (s == state.roller and self._can_end(state))
            )
            # a race: the first pound wins the call, and the call goes on until the roll
            return Turn(
                step="pound", active=state.roller, players=who, chance=True, dice=spec, race=True
            )
        if state.step is Step.ROLL:
            # after a won pound the call goes on (a late pounder hears who won it)
            won = 1 if state.pounded_by is not None else 0
            return Turn(step="roll", active=state.roller, chance=True, dice=spec, moves_in_step=won)
        return Turn(step="decide", active=state.roller, players=(state.roller,))

    # -- moves -------------------------------------------------------------------------
    def legal_moves(self, state: State, player: int) -> list[Move]:
        if not 0 <= player < state.players:
            return []  # no seat at this table (check: no_such_seat)
        if state.step is Step.POUND:
            if self._can_pound(state, player):
                return [Pound(player)]
            if player == state.roller and self._can_end(state):
                return [EndGame(player)]
        elif state.step is Step.DECIDE and player == state.roller:
            return [Pass(player), GoOn(player)]
        return []

    def check(self, state: State, move: Move) -> None:
        over = state.step is Step.OVER
        if over or isinstance(move, Roll):
            check_actor(over, self.turn(state), move)
            return
        if not 0 <= move.player < state.players:
            raise Rejection(
                Reason.NOT_YOUR_TURN,
                "no_such_seat",
                f"there is no {seat_name(move.player)} at this table of {state.players}",
            )
        if isinstance(move, Pound):
            self._check_pound(state, move.player)
        elif isinstance(move, Pass | GoOn):
            self._check_decision(state, move)
        elif isinstance(move, EndGame):
            self._check_end(state, move.player)
        else:
            raise Rejection(Reason.MALFORMED, "move_kind", f"Sixes has no {move.kind!r} move")

    def _check_pound(self, state: State, player: int) -> None:
        if player == state.roller:
            raise illegal("roller_cannot_pound", "the roller can't pound")
        if state.step is Step.ROLL:
            if state.pounded_by is not None and state.pounded_by != player:
                raise illegal(
                    "pound_taken",
                    f"someone else pounded first: {seat_name(state.pounded_by)} won this table-pound",
                )
            raise illegal("pound_taken", "you already won this table-pound")
        if state.step is Step.DECIDE:
            raise illegal(
                "no_call_yet", "wait for the roller to call the next number before pounding"
            )
        cost = bets_to_six(state.number_up, state.multiplier)
        if player not in state.betting and state.purses[player] < cost:
            raise illegal(
                "cannot_cover",
                f"you can't cover the bets from {state.number_up} to 6 ({cost} coins); "
                f"your purse holds {state.purses[player]}",
            )

    def _check_decision(self, state: State, move: Pass | GoOn) -> None:
        if move.player != state.roller:
            raise Rejection(
                Reason.NOT_YOUR_TURN,
                "roller_decides",
                f"only the roller ({seat_name(state.roller)}) passes or goes on",
            )
        if state.step is not Step.DECIDE:
            if isinstance(move, Pass):
                raise illegal("pass_after_safe_roll", "you can only pass after a safe roll")
            raise illegal(
                "go_on_after_safe_roll", "you can only call the next number after a safe roll"
            )

    def _check_end(self, state: State, player: int) -> None:
        if player != state.roller:
            raise Rejection(
                Reason.NOT_YOUR_TURN,
                "roller_ends",
                f"only the roller ({seat_name(state.roller)}) or the host can end the game, "
                "at the start of the roller's turn",
            )
        if not (state.step is Step.POUND and self._can_end(state)):
            raise illegal(
                "end_at_turn_start",
                "the game can only be ended at the start of a roller's turn, before anyone "
                "pounds or the dice are rolled",
            )

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Roll):
            if state.step is Step.POUND:  # the roll closes the table-pound: nobody won it
                state = self._drop_bets(replace(state, pounded_by=None))
            return self._resolve(state, tuple(d.value for d in move.dice), move.dice)
        if isinstance(move, Pound):
            betting = state.betting
            if move.player not in betting:
                betting = (*betting, move.player)
            return self._drop_bets(replace(state, betting=betting, pounded_by=move.player))
        if isinstance(move, GoOn):
            return replace(state, number_up=state.number_up + 1, step=Step.POUND, pounded_by=None)
        if isinstance(move, Pass):
            return self._end_turn(state, TurnResult.PASS, {*state.betting, state.roller})
        if isinstance(move, EndGame):
            ended = self._end_turn(state, TurnResult.STOPPED, {state.roller}, counted=False)
            return replace(ended, step=Step.OVER, end_reason=EndReason.STOPPED, skipped=())
        raise TypeError(f"not a Sixes move: {move!r}")

    def _drop_bets(self, state: State) -> State:
        """Everyone in the betting drops number up x multiplier (rulebook step 4)."""
        bet = state.number_up * state.multiplier
        purses = tuple(
            p - bet if seat in state.betting else p for seat, p in enumerate(state.purses)
        )
        return replace(
            state, purses=purses, pot=state.pot + bet * len(state.betting), step=Step.ROLL
        )

    def _resolve(self, state: State, values: tuple[int, ...], dice: tuple[Die, ...]) -> State:
        """The outcome of a roll, in the order of NOTES."""
        state = replace(
            state, last_roll=dice, last_roller=state.roller, last_roll_number_up=state.number_up
        )
        if all(v == LAST_NUMBER for v in values):
            return self._end_turn(state, TurnResult.WIN, {state.roller})
        if state.number_up in values:
            return self._end_turn(state, TurnResult.LOSS, set(state.betting) or {state.roller})
        if state.number_up == LAST_NUMBER:
            return self._end_turn(state, TurnResult.WIN, {state.roller})
        return replace(state, step=Step.DECIDE)

    def _end_turn(
        self, state: State, result: TurnResult, sharers: set[int], counted: bool = True
    ) -> State:
        order, shares = _share(state, sharers)
        purses = list(state.purses)
        for seat, coins in zip(order, shares, strict=True):
            purses[seat] += coins
        summary = TurnEnd(state.roller, result, state.number_up, state.pot, order, shares)
        settled = replace(
            state, purses=tuple(purses), pot=0, betting=(), pounded_by=None, last_turn=summary
        )
        if not counted:
            return settled
        return self._hand_over(settled)

    def _can_take_part(self, state: State, seat: int) -> bool:
        purse = state.purses[seat]
        return purse >= state.starter_pot or purse >= bets_to_six(LAST_NUMBER, state.multiplier)

    def _hand_over(self, state: State, counted: bool = True) -> State:
        """Pass the dice clockwise to the next player who can drop the starter pot and start
        their turn, or end the game (length reached, or no money can move any more)."""
        done = state.rollers_done + counted
        if done >= state.rollers:
            return replace(
                state,
                rollers_done=done,
                step=Step.OVER,
                end_reason=EndReason.ROLLERS_DONE,
                skipped=(),
            )
        able = sum(self._can_take_part(state, s) for s in range(state.players))
        skipped: list[int] = []
        roller = None
        for k in range(1, state.players + 1):
            seat = (state.roller + k) % state.players
            if state.purses[seat] >= state.starter_pot:
                roller = seat
                break
            skipped.append(seat)
        if roller is None or able < 2:
            return replace(
                state,
                rollers_done=done,
                step=Step.OVER,
                end_reason=EndReason.OUT_OF_MONEY,
                skipped=(),
            )
        purses = list(state.purses)
        purses[roller] -= state.starter_pot
        return replace(
            state,
            purses=tuple(purses),
            pot=state.starter_pot,
            roller=roller,
            number_up=1,
            betting=(),
            pounded_by=None,
            step=Step.POUND,
            rollers_done=done,
            skipped=tuple(skipped),
        )

    # -- scoring and end ---------------------------------------------------------------
    def scores(self, state: State) -> tuple[Score, ...]:
        return tuple(
            Score(seat, purse, (("start", start), ("won/lost", purse - start)))
            for seat, (start, purse) in enumerate(
                zip(state.start_purses, state.purses, strict=True)
            )
        )

    def outcome(self, state: State) -> Outcome | None:
        if state.end_reason is None:
            return None
        richest = max(state.purses)
        winners = tuple(s for s, p in enumerate(state.purses) if p == richest)
        played = (
            "the one roller turn is played"
            if state.rollers == 1
            else f"all {state.rollers} roller turns are played"
        )
        why = {
            EndReason.ROLLERS_DONE: played,
            EndReason.STOPPED: f"{seat_name(state.roller)} ended the game",
            EndReason.OUT_OF_MONEY: "no money can change hands any more",
        }[state.end_reason]
        names = describe_seats(winners)
        # the end card shows the message alone: it says who wins, not only who is richest
        said = "is" if len(winners) == 1 else "are"
        won = "wins" if len(winners) == 1 else "share the win"
        return Outcome(
            state.end_reason.value,
            f"{why}; {names} {said} the richest with {richest} coins and {won}",
            winners,
        )


GAME = Sixes()
