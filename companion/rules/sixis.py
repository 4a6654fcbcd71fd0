"""Sixis (Asmadi Games, 2011, Chris Cieslik; 2-4 players): roll six dice of your colour and
claim goal cards from the layout around the Sixis card.

Rule sources: ``../shared/rules/sixis.txt`` (the rulebook) and the Sixis part of
``../shared/rules/NOTES.md`` (the 17 goal cards, their sides and points). A rulebook sentence
wins over NOTES.

The rules, as enforced here:
- 17 goal cards, blue (easy) side / red (hard) side, points in brackets (NOTES): Double
  Ones..Sixes [20] / Four Ones..Sixes [50]; One and Six, Two and Five, Three and Four, one of
  each [15] / two of each [50]; Run 1-2-3 [25] / Run 1-2-3-4-5 [60]; Run 4-5-6 [25] / Run
  2-3-4-5-6 [60]; Three of a Kind [15] / Full House [55]; Two Pair [20] / Three Pair [80];
  Low, total 18 or less [20] / Very Low, 12 or less [60]; High, 24 or more [20] / Very High,
  30 or more [60]; Four Dice Odd [15] / All Dice Odd [65]; Four Dice Even [15] / All Dice
  Even [65]. The Sixis card (red only): six of a kind [60]. Every goal is "at least", except
  the rulebook's clarification: the sets of Full House, Two Pair and Three Pair are of
  distinct values (5/5/5/5/5 is no full house, 5/5/5/5/4/4 is no three pair).
- Layout (rulebook diagrams, NOTES): 2 players 8 cards, a line of four on either side of the
  Sixis card, both players reach all; 3 players 9 cards, three arms of three, each seat
  reaches the two arms beside it; 4 players 12 cards, four arms of three in an X, each seat
  reaches its two neighbouring arms. Every seat reaches the Sixis card. `TABLE_LAYOUTS` holds
  this as data (arm -> slots, seat -> arms, and bearings to draw it).
- A turn (rulebook "Playing the Game"): (1) round over? with 3 or 4 players, if none of the
  cards this player reaches is left, the round ends; (2) keep the saved dice or roll all six again (never a
  choice of some); (3) roll the unsaved dice; (4) take one card whose face-up side the six
  dice satisfy, OR flip one blue card to red, OR neither; with six of a kind the Sixis card
  may be taken, which ends the round at once; (5) save any of the six dice for the next turn.
  Play passes clockwise (seat + 1).
- 2 players (rulebook "Special Rules for Two Players": everything plays as with three or
  four "except for the end condition"): at the start of your turn you may end the round when
  every card left is red or one of the two lines is empty (`EndRound`), but you do not have
  to. That replaces step (1): the round never ends by itself when cards are gone, not even
  when no card is left (both lines are empty, so the player may end it, or play on with
  `RollAll` and try for the Sixis card). Taking the Sixis card ends it as always. (A table
  made before 2026-12-07 ended such a round by itself when no card was left, and its games
  replay so: `Options.no_card_left_ends_round`, True in the dataclass, False for every new
  table.)
- Round end: each player scores the points of the sides of the cards they took. Several
  rounds are summed. Team play (4 players): seats 0+2 and 1+3 sit opposite and share a total.
- Game length: `rounds` rounds (1, 3 or 5 in the rulebook), or rounds until a player (a team)
  has at least `target` points at a round end (e.g. 600). Ties are shared.

House decisions where the rulebook is silent or unclear (each is tested):
- Flipping needs a match: the rulebook says "If your dice ... satisfy the conditions on a
  card ..., you have a choice. You may either take the card ..., OR if it is blue side up,
  you may flip it" and "your roll will need to match at least one for you to be able to
  act". So a player may flip only a blue card whose blue side their dice satisfy (NOTES'
  shorter "flip one blue card" is read with the rulebook's condition).
- The dice that count are all six: the saved ones plus the rolled ones (rulebook "combining
  both rolled and saved dice"); that holds for the Sixis card too.
- When the dice match no reachable card, the take/flip step is skipped and the turn goes
  straight to saving (there is nothing to decline). A player who keeps all six saved dice
  rolls nothing: the turn goes straight to taking or flipping.
- The keep-or-roll-all choice is asked only when the player saved dice last turn (or, with 2
  players, when the round may be ended: then `RollAll` means "play on").
- Saved dice are dice values: `SaveDice(values=(5, 5))` (sorted on creation; dice of one
  colour are alike). Saving all six, or none, is allowed (rulebook "any or all").
- The deal: the engine has no randomness, so the cards of round r are the first 8/9/12
  cards of a permutation of the 17 goal cards made by a small 64-bit LCG (Knuth's MMIX
  constants) from `deal_seed` and r (`deal_layout`). The seed is picked at table creation
  (the start page shows a fresh one; a table made without one, e.g. through the API, gets
  one the server draws: `seed_options`, records.new_table_options) and stored with the
  table's options, so a restart deals the same; `layouts` overrides the deal round by round
  so a physical deal can be entered.
  Slot order: arm by arm, each arm from the Sixis card outwards.
- Start player: `first_player` (the table rolls for it, the companion takes the result); in
  later rounds the start passes clockwise: round r starts with seat first_player + r - 1,
  unless the table chooses another opener before the round's first roll (the rulebook
  leaves later rounds open): that opener or the host hands it on (`Starter`, a move the
  record holds).
- Advanced start: the start phase of the first round (the rulebook ties it to the roll
  that chooses the first player), or of every round (`advanced_start_every_round`: a
  table's choice; True in the dataclass, so records made before the choice existed replay
  as they were played; `options_for`, every new table's default, from the start page or
  the API, follows the rulebook).
  After the start player is known, the second, third and fourth seats (clockwise from the
  start player) each roll six dice and save up to 2, 3 and 4 of them (the start player's
  roll has no use and is not recorded). Saved dice never carry over into a new round.
- Team play: each partner's score shows the team's cards (label names the seat that took
  the card) and the team total; both partners of the best team win.
- Score breakdown: one entry per card taken, ``("round 1: Full House", 55)``.
- Target games: `rounds` must stay 1 (the default) when `target` is set; there is no cap on
  the number of rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
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
    replaced,
    seat_name,
)

# -- constants and data tables -----------------------------------------------------------

DICE_PER_PLAYER = 6
DEFAULT_COLOURS = ("red", "blue", "green", "yellow")
SIXIS = "sixis"
MAX_ROUNDS = 20
MAX_DEAL_SEED = 2**32  # fits a JSON number in every browser
# The advanced start: how many dice the k-th seat after the start player may save (k = 1..3).
ADVANCED_START_SAVES = (2, 3, 4)

Counts = tuple[int, ...]  # counts[v] = how many dice show v (index 0 unused)


def _counts(dice: tuple[int, ...]) -> Counts:
    counts = [0] * 7
    for value in dice:
        counts[value] += 1
    return tuple(counts)


@dataclass(frozen=True, slots=True)
class CardSide:
    """One side of a goal card: its name, points, the goal in words and its test."""

    name: str
    points: int
    needs: str
    test: Callable[[Counts], bool]


@dataclass(frozen=True, slots=True)
class GoalCard:
    """A goal card: a stable id (used in moves), its blue side and its red side."""

    id: str
    blue: CardSide
    red: CardSide

    def side(self, red: bool) -> CardSide:
        return self.red if red else self.blue


_NUMBER_WORD = ("", "One", "Two", "Three", "Four", "Five", "Six")
_NUMBER_WORDS = ("", "Ones", "Twos", "Threes", "Fours", "Fives", "Sixes")


def _at_least(value: int, count: int) -> Callable[[Counts], bool]:
    return lambda c: c[value] >= count


def _each_at_least(values: tuple[int, ...], count: int) -> Callable[[Counts], bool]:
    return lambda c: all(c[v] >= count for v in values)


def _sets_of_distinct_values(sizes: tuple[int, ...]) -> Callable[[Counts], bool]:
    """True when distinct values cover sets of the given sizes (largest first): (3, 2) is a
    full house, (2, 2) two pair, (2, 2, 2) three pair (rulebook "Clarifications")."""

    def test(c: Counts) -> bool:
        # Greedy works: sizes are sorted large to small and each set needs its own value,
        # so giving the largest set the value with the most dice never loses a solution.
        available = sorted(c[1:], reverse=True)
        return all(have >= need for have, need in zip(available, sizes, strict=False))

    return test


def _total(test: Callable[[int], bool]) -> Callable[[Counts], bool]:
    return lambda c: test(sum(v * c[v] for v in range(1, 7)))


def _odd_count(c: Counts) -> int:
    return c[1] + c[3] + c[5]


def _even_count(c: Counts) -> int:
    return c[2] + c[4] + c[6]


def _number_card(value: int) -> GoalCard:
    word = _NUMBER_WORDS[value]
    return GoalCard(
        word.lower(),
        CardSide(f"Double {word}", 20, f"two {value}s", _at_least(value, 2)),
        CardSide(f"Four {word}", 50, f"four {value}s", _at_least(value, 4)),
    )


def _two_number_card(low: int, high: int) -> GoalCard:
    low_word, high_word = _NUMBER_WORDS[low], _NUMBER_WORDS[high]
    low_one, high_one = _NUMBER_WORD[low], _NUMBER_WORD[high]
    return GoalCard(
        f"{low_one.lower()}_{high_one.lower()}",
        CardSide(
            f"{low_one} and {high_one}",
            15,
            f"a {low} and a {high}",
            _each_at_least((low, high), 1),
        ),
        CardSide(
            f"Two {low_word} and Two {high_word}",
            50,
            f"two {low}s and two {high}s",
            _each_at_least((low, high), 2),
        ),
    )


GOAL_CARDS: tuple[GoalCard, ...] = (
    *(_number_card(v) for v in range(1, 7)),
    _two_number_card(1, 6),
    _two_number_card(2, 5),
    _two_number_card(3, 4),
    GoalCard(
        "run_low",
        CardSide("Run 1-2-3", 25, "a 1, a 2 and a 3", _each_at_least((1, 2, 3), 1)),
        CardSide("Run 1-2-3-4-5", 60, "a 1, 2, 3, 4 and 5", _each_at_least((1, 2, 3, 4, 5), 1)),
    ),
    GoalCard(
        "run_high",
        CardSide("Run 4-5-6", 25, "a 4, a 5 and a 6", _each_at_least((4, 5, 6), 1)),
        CardSide("Run 2-3-4-5-6", 60, "a 2, 3, 4, 5 and 6", _each_at_least((2, 3, 4, 5, 6), 1)),
    ),
    GoalCard(
        "three_kind",
        CardSide("Three of a Kind", 15, "three of one value", _sets_of_distinct_values((3,))),
        CardSide(
            "Full House",
            55,
            "three of one value and two of another",
            _sets_of_distinct_values((3, 2)),
        ),
    ),
    GoalCard(
        "pairs",
        CardSide("Two Pair", 20, "two pairs of different values", _sets_of_distinct_values((2, 2))),
        CardSide(
            "Three Pair",
            80,
            "three pairs of three different values",
            _sets_of_distinct_values((2, 2, 2)),
        ),
    ),
    GoalCard(
        "low",
        CardSide("Low", 20, "a total of 18 or less", _total(lambda t: t <= 18)),
        CardSide("Very Low", 60, "a total of 12 or less", _total(lambda t: t <= 12)),
    ),
    GoalCard(
        "high",
        CardSide("High", 20, "a total of 24 or more", _total(lambda t: t >= 24)),
        CardSide("Very High", 60, "a total of 30 or more", _total(lambda t: t >= 30)),
    ),
    GoalCard(
        "odd",
        CardSide("Four Dice Odd", 15, "four odd dice", lambda c: _odd_count(c) >= 4),
        CardSide("All Dice Odd", 65, "six odd dice", lambda c: _odd_count(c) == 6),
    ),
    GoalCard(
        "even",
        CardSide("Four Dice Even", 15, "four even dice", lambda c: _even_count(c) >= 4),
        CardSide("All Dice Even", 65, "six even dice", lambda c: _even_count(c) == 6),
    ),
)
CARDS: dict[str, GoalCard] = {card.id: card for card in GOAL_CARDS}
CARD_IDS: tuple[str, ...] = tuple(card.id for card in GOAL_CARDS)
SIXIS_SIDE = CardSide("Sixis", 60, "six of a kind", lambda c: max(c) == DICE_PER_PLAYER)
assert len(GOAL_CARDS) == 17


def side_of(card: str, red: bool) -> CardSide:
    """The side of a card by id (the Sixis card has only its red side)."""
    return SIXIS_SIDE if card == SIXIS else CARDS[card].side(red)


@cache
def satisfied_sides(dice: tuple[int, ...]) -> frozenset[tuple[str, bool]]:
    """Every (card id, red?) side that these six dice satisfy, the Sixis card included.
    `dice` sorted; cached, since there are only 462 different throws of six dice."""
    counts = _counts(dice)
    found = {
        (card.id, red)
        for card in GOAL_CARDS
        for red in (False, True)
        if card.side(red).test(counts)
    }
    if SIXIS_SIDE.test(counts):
        found.add((SIXIS, True))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class TableLayout:
    """Where the cards lie, for a player count (rulebook diagrams). `arms`: the card slots
    of each arm, from the Sixis card outwards; `reach`: the arms each seat reaches (every
    seat also reaches the Sixis card). Bearings are degrees clockwise from the top of the
    table, for drawing: arm a points to `arm_bearings[a]`, seat s sits at `seat_bearings[s]`."""

    players: int
    shape: str
    arms: tuple[tuple[int, ...], ...]
    reach: tuple[tuple[int, ...], ...]
    arm_bearings: tuple[int, ...]
    seat_bearings: tuple[int, ...]

    @property
    def card_count(self) -> int:
        return sum(len(arm) for arm in self.arms)

    def reachable_slots(self, seat: int) -> tuple[int, ...]:
        return tuple(sorted(slot for arm in self.reach[seat] for slot in self.arms[arm]))


TABLE_LAYOUTS: dict[int, TableLayout] = {
    # A column: four cards above and four below the Sixis card, one seat on either side.
    2: TableLayout(
        2, "column", ((0, 1, 2, 3), (4, 5, 6, 7)), ((0, 1), (0, 1)), (0, 180), (270, 90)
    ),
    # Three arms; seat s sits between arm s and arm s + 1.
    3: TableLayout(
        3,
        "three_arms",
        ((0, 1, 2), (3, 4, 5), (6, 7, 8)),
        ((0, 1), (1, 2), (2, 0)),
        (0, 120, 240),
        (60, 180, 300),
    ),
    # An X; seat s sits between arm s and arm s + 1, partners (s, s + 2) face each other.
    4: TableLayout(
        4,
        "x",
        ((0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)),
        ((0, 1), (1, 2), (2, 3), (3, 0)),
        (45, 135, 225, 315),
        (90, 180, 270, 0),
    ),
}
_REACH: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(layout.reachable_slots(seat) for seat in range(n))
    for n, layout in TABLE_LAYOUTS.items()
}

_MASK64 = (1 << 64) - 1
_LCG_MULTIPLIER = 6364136223846793005  # Knuth's MMIX LCG
_LCG_INCREMENT = 1442695040888963407
_GOLDEN = 0x9E3779B97F4A7C15  # spreads round numbers over the seed space


def deal_layout(seed: int, round_no: int, count: int) -> tuple[str, ...]:
    """The first `count` cards of round `round_no`'s shuffle of the 17 goal cards: a
    Fisher-Yates shuffle driven by a 64-bit LCG seeded from (`seed`, `round_no`). Pure and
    stable across Python versions, so a seed always means the same deal."""
    state = (seed ^ (round_no * _GOLDEN)) & _MASK64
    deck = list(CARD_IDS)
    for i in range(len(deck) - 1, 0, -1):
        state = (state * _LCG_MULTIPLIER + _LCG_INCREMENT) & _MASK64
        j = (state >> 33) % (i + 1)  # high bits: an LCG's low bits are poor
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck[:count])


# -- options ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """Table setup. `colours`: one dice colour per seat (empty: red, blue, green, yellow).
    `team_play`: 4 players only, seats 0+2 against 1+3. `rounds`: rounds to play, or
    `target` > 0: play until someone reaches that total at a round end (rounds then 1).
    `first_player`: the seat that starts round 1. `deal_seed`: makes the deal (0 <= seed <
    2**32). `layouts`: the cards actually dealt, one tuple of card ids per round in slot
    order (rounds beyond it use the seed)."""

    players: int = 2
    colours: tuple[str, ...] = ()
    team_play: bool = False
    advanced_start: bool = False
    rounds: int = 1
    target: int = 0
    first_player: int = 0
    deal_seed: int = 0
    layouts: tuple[tuple[str, ...], ...] = ()
    advanced_start_every_round: bool = True  # False: the first round only (the rulebook)
    # 2 players, no card left: True, the round ends by itself (tables and records made
    # before 2026-12-07 played so, and still replay); False, the player may end it or play
    # on for the Sixis card (the rulebook; `options_for`, every new table's default)
    no_card_left_ends_round: bool = True


# -- moves --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeepSaved(Move):
    """Start of a turn: roll only the dice not saved last turn."""

    kind: ClassVar[str] = "keep"


@dataclass(frozen=True, slots=True)
class RollAll(Move):
    """Start of a turn: give up the saved dice and roll all six (with 2 players and no saved
    dice: play on instead of ending the round)."""

    kind: ClassVar[str] = "roll_all"


@dataclass(frozen=True, slots=True)
class EndRound(Move):
    """2 players, start of a turn: end the round (all cards red or one line empty)."""

    kind: ClassVar[str] = "end_round"


@dataclass(frozen=True, slots=True)
class TakeCard(Move):
    """Take a card whose face-up side the dice satisfy (`card` is a card id or "sixis")."""

    kind: ClassVar[str] = "take"
    card: str


@dataclass(frozen=True, slots=True)
class FlipCard(Move):
    """Turn a blue card whose blue side the dice satisfy to its red side."""

    kind: ClassVar[str] = "flip"
    card: str


@dataclass(frozen=True, slots=True)
class Decline(Move):
    """Neither take nor flip a card this turn."""

    kind: ClassVar[str] = "decline"


@dataclass(frozen=True, slots=True)
class Starter(Move):
    """`seat` opens this round instead of `player` (the opener the companion picked): a
    later round, before its first roll, by that opener or the host."""

    kind: ClassVar[str] = "starter"
    seat: int


@dataclass(frozen=True, slots=True)
class SaveDice(Move):
    """Set these dice values aside for the next turn (any number, none included); also the
    advanced start's save. Values are kept sorted: dice of one colour are alike."""

    kind: ClassVar[str] = "save"
    values: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(sorted(self.values)))


# -- state --------------------------------------------------------------------------------


class Step(StrEnum):
    START_ROLL = "start_roll"  # advanced start: a later seat rolls six dice
    START_SAVE = "start_save"  # advanced start: ... and saves up to 2/3/4 of them
    START = "start"  # keep the saved dice or roll all (2 players: or end the round)
    ROLL = "roll"  # the unsaved dice are rolled
    ACT = "act"  # take a card, flip a card, or decline
    SAVE = "save"  # save dice for the next turn
    OVER = "over"


NOT_TAKEN = -1  # `State.taken_by` of a card still on the table


@dataclass(frozen=True, slots=True)
class Claim:
    """A card a player took: the card id and whether its red side was up."""

    seat: int
    card: str
    red: bool

    @property
    def side(self) -> CardSide:
        return side_of(self.card, self.red)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A finished round: why it ended ("cards_gone": 3-4 players, or 2 in a game played
    before the end of a two-player round was the player's choice; "sixis_taken",
    "ended_by_player"), the cards taken in it and `ended_by`: the seat whose turn ended it (the one who took the
    Sixis card or ended the round, or who found no card left in reach; None in a state
    stored before it was kept)."""

    round: int
    ending: str
    claims: tuple[Claim, ...]
    ended_by: int | None = None


@dataclass(frozen=True, slots=True)
class State:
    """The table. The current round's layout is three tuples by slot (see `TABLE_LAYOUTS`
    for which arm a slot lies in): `cards` the card ids dealt, `red` the face-up side,
    `taken_by` the seat that took it (-1: still on the table). `saved[s]`: the dice seat s
    set aside (for the active player during a roll: the dice kept for it). `dice`: the active
    player's six dice after the roll (or the advanced start's roll). `turn_action`: what the
    active player did with the cards this turn ("took", "flipped", "declined", "no_match"
    or ""), `turn_card` which card. `history`: the finished rounds. Kept flat on purpose:
    every state is serialised after each action."""

    options: Options
    round: int
    starter: int
    cards: tuple[str, ...]
    red: tuple[bool, ...]
    taken_by: tuple[int, ...]
    step: Step
    active: int  # -1 once the game is over
    saved: tuple[tuple[int, ...], ...]
    dice: tuple[int, ...] = ()
    turn_action: str = ""
    turn_card: str = ""
    history: tuple[RoundResult, ...] = ()
    # a later round that has had no roll yet: its opener may hand the opening on (`Starter`)
    opener_open: bool = False


# -- the game -------------------------------------------------------------------------------


def seat_colours(options: Options) -> tuple[str, ...]:
    """The dice colour of each seat: `Options.colours`, or the default colours."""
    return options.colours or DEFAULT_COLOURS[: options.players]


def _bad_options(rule: str, message: str) -> Rejection:
    return Rejection(Reason.BAD_OPTIONS, rule, message)


def _describe_count(count: int, value: int) -> str:
    return f"one {value}" if count == 1 else f"{count} {value}s"


def _sub_multisets(dice: tuple[int, ...], limit: int) -> list[tuple[int, ...]]:
    """Every distinct choice of at most `limit` of these dice, as sorted value tuples."""
    choices: list[tuple[int, ...]] = [()]
    for value in sorted(set(dice)):
        available = dice.count(value)
        choices = [c + (value,) * k for c in choices for k in range(available + 1)]
    return sorted((c for c in choices if len(c) <= limit), key=lambda c: (len(c), c))


@cache
def _save_moves(player: int, dice: tuple[int, ...], limit: int) -> tuple[SaveDice, ...]:
    """The save step's moves; cached, since moves are immutable and throws repeat often."""
    return tuple(SaveDice(player, values) for values in _sub_multisets(dice, limit))


def teams(options: Options) -> tuple[tuple[int, int], ...]:
    """The teams of team play, seats 0 + 2 and 1 + 3 (house rule, module docstring); none
    without it."""
    return ((0, 2), (1, 3)) if options.team_play else ()


def _counted_seats(options: Options, seat: int) -> tuple[int, ...]:
    """The seats whose cards count for `seat`: itself, or its team."""
    return next((team for team in teams(options) if seat in team), (seat,))


def _round_open(state: State) -> bool:
    """Whether the current round's cards still lie on the table uncounted: not once the
    game is over, nor while `_end_round` has just closed the round into the history."""
    closed = bool(state.history) and state.history[-1].round == state.round
    return state.step is not Step.OVER and not closed


def _taken(state: State) -> list[tuple[int, int, str, bool]]:
    """(round, seat, card, red) for every card taken in the game, this round's included."""
    taken = [(r.round, c.seat, c.card, c.red) for r in state.history for c in r.claims]
    if _round_open(state):
        taken.extend(
            (state.round, seat, card, red)
            for card, red, seat in zip(state.cards, state.red, state.taken_by, strict=True)
            if seat != NOT_TAKEN
        )
    return taken


@dataclass(frozen=True, slots=True)
class RoundPoints:
    """The points of one round (a finished one, or the one being played): `seats[s]` the
    face-up points of the cards seat s took in it, `teams[t]` those of team t of `teams`
    (empty without team play)."""

    round: int
    seats: tuple[int, ...]
    teams: tuple[int, ...] = ()


def round_points(state: State) -> tuple[RoundPoints, ...]:
    """Points per round, per seat and per team. They add up to the scores (`Sixis.scores`):
    a seat's total is the sum of its own rounds, or of its team's with team play."""
    rounds = [r.round for r in state.history]
    if _round_open(state):
        rounds.append(state.round)
    players = state.options.players
    points = {(r, s): 0 for r in rounds for s in range(players)}
    for round_no, seat, card, red in _taken(state):
        points[(round_no, seat)] += side_of(card, red).points
    result = []
    for r in rounds:
        seats = tuple(points[(r, s)] for s in range(players))
        team_points = tuple(sum(seats[s] for s in team) for team in teams(state.options))
        result.append(RoundPoints(r, seats, team_points))
    return tuple(result)


def _check_colours(colours: tuple[str, ...], players: int) -> None:
    if len(colours) != players:
        raise _bad_options(
            "colours", f"give one dice colour per player ({players}), not {len(colours)}"
        )
    for colour in colours:
        if colour not in COLOURS:
            raise _bad_options(
                "colours", f"unknown dice colour {colour!r}; known: {', '.join(COLOURS)}"
            )
    if len(set(colours)) != len(colours):
        raise _bad_options("colours", "every player needs dice of a different colour")


def _check_length(o: Options) -> None:
    """A number of rounds, or one round played to a target total."""
    if not 1 <= o.rounds <= MAX_ROUNDS:
        raise _bad_options("rounds", f"play 1 to {MAX_ROUNDS} rounds, not {o.rounds}")
    if o.target < 0:
        raise _bad_options("target", "the target total cannot be negative (0: no target)")
    if o.target > 0 and o.rounds != 1:
        raise _bad_options("target", "choose a number of rounds or a target total, not both")


def _check_layouts(o: Options) -> None:
    """Given layouts: at most one per round, each a full deal of distinct known cards."""
    if o.target == 0 and len(o.layouts) > o.rounds:
        raise _bad_options("layouts", f"{len(o.layouts)} layouts given for a {o.rounds}-round game")
    count = TABLE_LAYOUTS[o.players].card_count
    for index, layout in enumerate(o.layouts):
        where = f"layout of round {index + 1}"
        if len(layout) != count:
            raise _bad_options(
                "layouts", f"{where}: {o.players} players need {count} cards, not {len(layout)}"
            )
        for card in layout:
            if card not in CARDS:
                raise _bad_options(
                    "layouts", f"{where}: unknown card {card!r}; cards: {', '.join(CARD_IDS)}"
                )
        if len(set(layout)) != len(layout):
            raise _bad_options("layouts", f"{where}: a card is dealt twice")


class Sixis(Game[Options, State]):
    name = "sixis"
    title = "Sixis"
    players = PlayerCount(2, 4)
    options_type = Options
    state_type = State
    move_types = (KeepSaved, RollAll, EndRound, TakeCard, FlipCard, Decline, SaveDice, Starter)
    seed_options = {"deal_seed": MAX_DEAL_SEED}  # a fresh deal for every new table
    one_game_options = frozenset({"layouts"})  # a copied real deal is that game's only

    # -- setup --------------------------------------------------------------------------
    def options_for(self, players: int) -> Options:
        return Options(
            players=players,
            colours=DEFAULT_COLOURS[:players],
            advanced_start_every_round=False,
            no_card_left_ends_round=False,
        )

    def setup(self, options: Options) -> State:
        self._validate(options)
        blank = State(
            options=options, round=0, starter=options.first_player, cards=(), red=(),
            taken_by=(), step=Step.START, active=options.first_player,
            saved=((),) * options.players,
        )  # fmt: skip
        return self._begin_round(blank, 1)

    def _validate(self, o: Options) -> None:
        """Refuse options out of range, naming the field (checked in this order)."""
        if not 2 <= o.players <= 4:
            raise _bad_options("players", f"Sixis is for 2 to 4 players, not {o.players}")
        _check_colours(seat_colours(o), o.players)
        if o.team_play and o.players != 4:
            raise _bad_options("team_play", "team play needs exactly 4 players")
        _check_length(o)
        if not 0 <= o.first_player < o.players:
            raise _bad_options(
                "first_player", f"who starts round 1 must be one of the {o.players} players"
            )
        if not 0 <= o.deal_seed < MAX_DEAL_SEED:
            raise _bad_options("deal_seed", f"the deal seed is from 0 to {MAX_DEAL_SEED - 1}")
        _check_layouts(o)

    # -- round and turn flow ------------------------------------------------------------------
    def layout_of_round(self, options: Options, round_no: int) -> tuple[str, ...]:
        """The cards dealt in round `round_no`: `Options.layouts` or the seeded deal."""
        if round_no <= len(options.layouts):
            return options.layouts[round_no - 1]
        count = TABLE_LAYOUTS[options.players].card_count
        return deal_layout(options.deal_seed, round_no, count)

    def _begin_round(self, state: State, round_no: int, starter: int | None = None) -> State:
        """Deal round `round_no` and give the first turn to `starter` (None: clockwise from
        the first player, see the module docstring)."""
        o = state.options
        if starter is None:
            starter = (o.first_player + round_no - 1) % o.players
        cards = self.layout_of_round(o, round_no)
        state = replace(
            state, round=round_no, starter=starter, cards=cards, red=(False,) * len(cards),
            taken_by=(NOT_TAKEN,) * len(cards), saved=((),) * o.players, dice=(),
            turn_action="", turn_card="", opener_open=round_no > 1,
        )  # fmt: skip
        if o.advanced_start and (round_no == 1 or o.advanced_start_every_round):
            return replace(state, step=Step.START_ROLL, active=(starter + 1) % o.players)
        return self._begin_turn(state, starter)

    def _begin_turn(self, state: State, seat: int) -> State:
        """Step 1 of a turn: round over? (3-4 players: the cards this seat reaches are gone;
        2 players: the player's choice, `EndRound`.) Then ask keep-or-roll-all only when it
        is a choice."""
        players = state.options.players
        gone = all(state.taken_by[s] != NOT_TAKEN for s in _REACH[players][seat])
        if gone and (players != 2 or state.options.no_card_left_ends_round):
            return self._end_round(state, "cards_gone", seat)
        ask = bool(state.saved[seat]) or self._may_end_round(state)
        return replace(
            state, step=Step.START if ask else Step.ROLL, active=seat, dice=(),
            turn_action="", turn_card="",
        )  # fmt: skip

    def _may_end_round(self, state: State) -> bool:
        """2 players only: every card left is red, or one line is empty."""
        if state.options.players != 2:
            return False
        left = [i for i, seat in enumerate(state.taken_by) if seat == NOT_TAKEN]
        if left and all(state.red[i] for i in left):
            return True
        arms = TABLE_LAYOUTS[2].arms
        return any(all(state.taken_by[s] != NOT_TAKEN for s in arm) for arm in arms)

    def _end_round(
        self, state: State, reason: str, ended_by: int, sixis: Claim | None = None
    ) -> State:
        claims = self._round_claims(state) + ((sixis,) if sixis else ())
        result = RoundResult(state.round, reason, claims, ended_by)
        state = replace(state, history=state.history + (result,))
        o = state.options
        reached = o.target > 0 and max(self._totals(state)) >= o.target
        if reached or (o.target == 0 and state.round >= o.rounds):
            return replace(state, step=Step.OVER, active=-1, dice=(), turn_action="", turn_card="")
        return self._begin_round(state, state.round + 1)

    def _after_dice(self, state: State) -> State:
        if self._card_moves(state, state.active):
            return replace(state, step=Step.ACT)
        return replace(state, step=Step.SAVE, turn_action="no_match")

    def _save_limit(self, state: State) -> int:
        if state.step is Step.START_SAVE:
            behind = (state.active - state.starter) % state.options.players
            return ADVANCED_START_SAVES[behind - 1]
        return DICE_PER_PLAYER

    # -- whose turn -----------------------------------------------------------------------------
    def turn(self, state: State) -> Turn:
        if state.step is Step.OVER:
            return Turn(step=Step.OVER.value, active=None)
        colour = seat_colours(state.options)[state.active]
        # before a later round's first roll its opener may hand the opening on
        opener = (state.starter,) if state.opener_open else ()
        if state.step is Step.START_ROLL:
            spec = DiceSpec(colours=(colour,) * DICE_PER_PLAYER)
            return Turn(
                step=state.step.value, active=state.active, players=opener, chance=True,
                dice=spec,
            )  # fmt: skip
        if state.step is Step.ROLL:
            kept = state.saved[state.active]
            spec = DiceSpec(
                colours=(colour,) * (DICE_PER_PLAYER - len(kept)),
                kept=tuple(Die(colour, value) for value in kept),
            )
            return Turn(
                step=state.step.value, active=state.active, players=opener, chance=True,
                dice=spec,
            )  # fmt: skip
        return Turn(step=state.step.value, active=state.active, players=(state.active,))

    # -- moves --------------------------------------------------------------------------------
    def _card_moves(self, state: State, seat: int) -> list[Move]:
        """The takes and flips these dice allow (the act step's moves, less Decline)."""
        sides = satisfied_sides(state.dice)
        reach = [i for i in _REACH[state.options.players][seat] if state.taken_by[i] == NOT_TAKEN]
        moves: list[Move] = [
            TakeCard(seat, state.cards[i]) for i in reach if (state.cards[i], state.red[i]) in sides
        ]
        if (SIXIS, True) in sides:
            moves.append(TakeCard(seat, SIXIS))
        moves.extend(
            FlipCard(seat, state.cards[i])
            for i in reach
            if not state.red[i] and (state.cards[i], False) in sides
        )
        return moves

    def legal_moves(self, state: State, player: int) -> list[Move]:
        if state.opener_open and player == state.starter:
            return [
                Starter(player, seat) for seat in range(state.options.players) if seat != player
            ]
        if state.step is Step.OVER or player != state.active:
            return []
        step = state.step
        if step is Step.START:
            moves: list[Move] = []
            if state.saved[player]:
                moves.append(KeepSaved(player))
            moves.append(RollAll(player))
            if self._may_end_round(state):
                moves.append(EndRound(player))
            return moves
        if step is Step.ACT:
            return [*self._card_moves(state, player), Decline(player)]
        if step in (Step.SAVE, Step.START_SAVE):
            return list(_save_moves(player, state.dice, self._save_limit(state)))
        return []  # a roll is due

    def check(self, state: State, move: Move) -> None:
        check_actor(state.step is Step.OVER, self.turn(state), move)
        if isinstance(move, Roll):
            return
        step = state.step
        if step in (Step.ROLL, Step.START_ROLL) and not isinstance(move, Starter):
            # the opener may act before a round's first roll, but only to hand it on
            raise Rejection(
                Reason.NOT_YOUR_TURN, "waiting_for_roll", "the dice have to be rolled first"
            )
        if isinstance(move, KeepSaved | RollAll):
            self._check_start_choice(state, move)
        elif isinstance(move, EndRound):
            self._check_end_round(state)
        elif isinstance(move, TakeCard | FlipCard | Decline):
            self._check_card_step(state, move)
            if isinstance(move, TakeCard):
                self._check_take(state, move)
            elif isinstance(move, FlipCard):
                self._check_flip(state, move)
        elif isinstance(move, Starter):
            self._check_starter(state, move)
        elif isinstance(move, SaveDice):
            if step is Step.START:
                raise illegal("roll_first", "roll first: keep your saved dice or roll all six")
            if step is Step.ACT:
                raise illegal(
                    "act_first", "first take a card, flip one, or decline, then save dice"
                )
            self._check_save(state, move)
        else:
            raise illegal("unknown_move", f"{type(move).__name__} is not a Sixis move")

    @staticmethod
    def _check_starter(state: State, move: Starter) -> None:
        if not state.opener_open:
            raise illegal(
                "opener_chosen_before_first_roll",
                "who opens a round is chosen before its first roll, from the second round on",
            )
        if not 0 <= move.seat < state.options.players or move.seat == move.player:
            raise illegal(
                "opener_is_another_seat",
                f"the opening goes to another seat of this table, not {move.seat + 1}",
            )

    def _check_start_choice(self, state: State, move: KeepSaved | RollAll) -> None:
        if state.step is Step.START_SAVE:
            raise illegal("start_save_first", "save dice from your start roll first")
        if state.step is not Step.START:
            raise illegal("already_rolled", "you have already rolled this turn")
        if isinstance(move, KeepSaved) and not state.saved[move.player]:
            raise illegal("nothing_saved", "you saved no dice last turn; roll all six")

    def _check_end_round(self, state: State) -> None:
        if state.options.players != 2:
            raise illegal(
                "end_round_two_players",
                "only in a two-player game may a player end the round; it ends when the "
                "cards you reach are gone or the Sixis card is taken",
            )
        if state.step is not Step.START:
            raise illegal(
                "end_round_timing", "the round may be ended only at the start of your turn"
            )
        if not self._may_end_round(state):
            raise illegal(
                "end_round",
                "you may end the round only when every card left is red or one side of the "
                "Sixis card is empty",
            )

    def _check_card_step(self, state: State, move: TakeCard | FlipCard | Decline) -> None:
        step = state.step
        if step is Step.START:
            raise illegal("roll_first", "roll first: keep your saved dice or roll all six")
        if step is Step.START_SAVE:
            raise illegal("start_save_first", "save dice from your start roll first")
        if step is not Step.SAVE:
            return  # the act step
        done = state.turn_action
        if done == "no_match":
            # Name what the card needs (or why it is out of play) before the general refusal.
            if isinstance(move, TakeCard):
                self._check_take(state, move)
            elif isinstance(move, FlipCard):
                self._check_flip(state, move)
            raise illegal("no_match", "your dice match no card you can reach; save dice")
        taking = isinstance(move, TakeCard)
        if done == "flipped":
            message = (
                "you flipped a card this turn; you can't also take one"
                if taking
                else "you already flipped a card this turn"
            )
        elif done == "took":
            message = (
                "you took a card this turn; you can't also take another"
                if taking
                else "you took a card this turn; you can't also flip one"
            )
        else:
            message = "you passed on the cards this turn; now save dice"
        raise illegal("one_card_action", message)

    def _check_card(self, state: State, move: TakeCard | FlipCard) -> int | None:
        """The slot of the card named by `move` if it lies on the table, untaken and within
        reach; None for the Sixis card. Raises a Rejection otherwise."""
        if move.card == SIXIS:
            return None
        if move.card not in CARDS:
            raise illegal(
                "unknown_card",
                f"there is no card {move.card!r}; cards: {', '.join(CARD_IDS)}, {SIXIS}",
            )
        if move.card not in state.cards:
            card = CARDS[move.card]
            raise illegal(
                "card_not_dealt",
                f"{card.blue.name} / {card.red.name} is not on the table this round",
            )
        index = state.cards.index(move.card)
        name = side_of(move.card, state.red[index]).name
        holder = state.taken_by[index]
        if holder != NOT_TAKEN:
            by = "you" if holder == move.player else seat_name(holder)
            raise illegal("card_taken", f"{name} was already taken by {by}")
        if index not in _REACH[state.options.players][move.player]:
            raise illegal("out_of_reach", f"that card ({name}) is out of your reach")
        return index

    def _check_take(self, state: State, move: TakeCard) -> None:
        index = self._check_card(state, move)
        side = SIXIS_SIDE if index is None else side_of(move.card, state.red[index])
        if not side.test(_counts(state.dice)):
            raise illegal("card_needs", f"{side.name} needs {side.needs}")

    def _check_flip(self, state: State, move: FlipCard) -> None:
        index = self._check_card(state, move)
        if index is None:
            raise illegal("flip_sixis", "the Sixis card has no blue side to flip")
        card = CARDS[move.card]
        if state.red[index]:
            raise illegal("already_red", f"{card.red.name} is already red side up")
        if not card.blue.test(_counts(state.dice)):
            raise illegal(
                "flip_needs",
                f"to flip {card.blue.name} your dice must match it: "
                f"{card.blue.name} needs {card.blue.needs}",
            )

    def _check_save(self, state: State, move: SaveDice) -> None:
        for value in move.values:
            if not (isinstance(value, int) and 1 <= value <= 6):
                raise illegal("die_value", f"a die shows 1 to 6, not {value!r}")
        for value in sorted(set(move.values)):
            wanted, have = move.values.count(value), state.dice.count(value)
            if wanted > have:
                raise illegal(
                    "save_dice",
                    f"you have no {value} to save"
                    if have == 0
                    else f"you have only {_describe_count(have, value)} to save",
                )
        limit = self._save_limit(state)
        if len(move.values) > limit:
            place = ("second", "third", "fourth")[limit - 2]
            raise illegal(
                "advanced_start_limit",
                f"the {place} player may save up to {limit} dice from the start roll",
            )

    def apply(self, state: State, move: Move) -> State:
        seat = state.active
        if isinstance(move, Roll):
            return self._after_roll(state, tuple(die.value for die in move.dice))
        if isinstance(move, KeepSaved):
            if len(state.saved[seat]) == DICE_PER_PLAYER:  # nothing to roll
                return self._after_dice(replace(state, dice=state.saved[seat]))
            return replace(state, step=Step.ROLL)
        if isinstance(move, RollAll):
            return replace(state, step=Step.ROLL, saved=replaced(state.saved, seat, ()))
        if isinstance(move, EndRound):
            return self._end_round(state, "ended_by_player", seat)
        if isinstance(move, TakeCard | FlipCard | Decline):
            return self._after_card(state, move)
        if isinstance(move, SaveDice):
            return self._after_save(state, move.values)
        if isinstance(move, Starter):
            return self._begin_round(state, state.round, move.seat)
        raise TypeError(f"not a Sixis move: {move!r}")

    def _after_roll(self, state: State, rolled: tuple[int, ...]) -> State:
        state = replace(state, opener_open=False)
        if state.step is Step.START_ROLL:
            return replace(state, step=Step.START_SAVE, dice=tuple(sorted(rolled)))
        dice = tuple(sorted(state.saved[state.active] + rolled))
        return self._after_dice(replace(state, dice=dice))

    def _after_card(self, state: State, move: TakeCard | FlipCard | Decline) -> State:
        """Take a card (the Sixis card ends the round), flip one, or take none; then save."""
        if isinstance(move, Decline):
            return replace(state, step=Step.SAVE, turn_action="declined")
        if isinstance(move, TakeCard) and move.card == SIXIS:
            sixis = Claim(state.active, SIXIS, True)
            return self._end_round(state, "sixis_taken", state.active, sixis)
        index = state.cards.index(move.card)
        if isinstance(move, TakeCard):
            return replace(
                state, step=Step.SAVE, turn_action="took", turn_card=move.card,
                taken_by=replaced(state.taken_by, index, state.active),
            )  # fmt: skip
        return replace(
            state, step=Step.SAVE, turn_action="flipped", turn_card=move.card,
            red=replaced(state.red, index, True),
        )  # fmt: skip

    def _after_save(self, state: State, values: tuple[int, ...]) -> State:
        """Saved dice: the next player's turn (the advanced start: the next start roll)."""
        seat = state.active
        state = replace(state, saved=replaced(state.saved, seat, values))
        following = (seat + 1) % state.options.players
        if state.step is Step.START_SAVE:
            if following == state.starter:
                return self._begin_turn(replace(state, dice=()), state.starter)
            return replace(state, step=Step.START_ROLL, active=following, dice=())
        return self._begin_turn(state, following)

    # -- scoring and end ------------------------------------------------------------------------
    @staticmethod
    def _round_claims(state: State) -> tuple[Claim, ...]:
        """The cards taken so far in the current round, in slot order."""
        return tuple(
            Claim(seat, card, red)
            for card, red, seat in zip(state.cards, state.red, state.taken_by, strict=True)
            if seat != NOT_TAKEN
        )

    def _totals(self, state: State) -> list[int]:
        rounds = round_points(state)
        own = [sum(r.seats[seat] for r in rounds) for seat in range(state.options.players)]
        return [
            sum(own[s] for s in _counted_seats(state.options, seat))
            for seat in range(state.options.players)
        ]

    def scores(self, state: State) -> tuple[Score, ...]:
        team = state.options.team_play
        entries = []
        for round_no, seat, card, red in _taken(state):
            side = side_of(card, red)
            label = f"round {round_no}: {side.name}"
            if team:
                label += f" ({seat_name(seat)})"
            entries.append((seat, (label, side.points)))
        result = []
        for seat in range(state.options.players):
            counted = _counted_seats(state.options, seat)
            breakdown = tuple(entry for owner, entry in entries if owner in counted)
            result.append(Score(seat, sum(points for _, points in breakdown), breakdown))
        return tuple(result)

    def outcome(self, state: State) -> Outcome | None:
        if state.step is not Step.OVER:
            return None
        totals = self._totals(state)
        best = max(totals)
        winners = tuple(seat for seat, total in enumerate(totals) if total == best)
        names = describe_seats(winners)
        if state.options.team_play:
            verb = "win" if len(winners) == 2 else "share the win"
            message = f"{names} {verb} with a team total of {best} points"
        elif len(winners) == 1:
            message = f"{names} wins with {best} points"
        else:
            message = f"{names} share the win with {best} points"
        reason = "target_reached" if state.options.target > 0 else "rounds_played"
        return Outcome(reason, message[0].upper() + message[1:], winners)

    def invariants(self, state: State) -> None:
        n = state.options.players
        count = TABLE_LAYOUTS[n].card_count
        assert len(state.saved) == n
        assert len(state.cards) == len(state.red) == len(state.taken_by) == count
        assert len(set(state.cards)) == count and all(c in CARDS for c in state.cards)
        assert all(NOT_TAKEN <= seat < n for seat in state.taken_by)
        for saved in state.saved:
            assert len(saved) <= DICE_PER_PLAYER and list(saved) == sorted(saved)
        if state.step in (Step.ACT, Step.SAVE, Step.START_SAVE):
            assert len(state.dice) == DICE_PER_PLAYER
        assert [r.round for r in state.history] == list(
            range(1, state.round + (state.step is Step.OVER))
        )
        for result in state.history:
            assert sum(claim.card == SIXIS for claim in result.claims) == (
                result.ending == "sixis_taken"
            )


GAME = Sixis()
