"""Sixis rules (companion/rules/sixis.py): goal cards, layout and reach, the deal, the turn
steps, every refusal, round ends, scoring, options, JSON and the example record.
Rule sources: shared/rules/sixis.txt and the Sixis part of shared/rules/NOTES.md."""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import DiceSpec, Die, Move, Reason, Rejection, Roll
from companion.rules.session import RecordError, replay_record
from companion.rules.sixis import (
    CARD_IDS,
    CARDS,
    GAME,
    SIXIS,
    SIXIS_SIDE,
    TABLE_LAYOUTS,
    Claim,
    Decline,
    EndRound,
    FlipCard,
    KeepSaved,
    Options,
    RollAll,
    RoundResult,
    SaveDice,
    Starter,
    State,
    Step,
    TakeCard,
    deal_layout,
    satisfied_sides,
)
from companion.simulate import random_action

RECORD = Path(__file__).resolve().parents[2] / "docs" / "records" / "sixis.json"

# Seat 0 reaches arms 0 and 1 (slots 0-5), seat 1 arms 1 and 2 (slots 3-8), seat 2 arms 2
# and 0 (slots 6-8 and 0-2).
LAYOUT_3 = ("ones", "twos", "threes", "three_kind", "pairs", "low", "high", "odd", "even")
# Line 0 (slots 0-3) and line 1 (slots 4-7); both players reach everything.
LAYOUT_2 = ("ones", "twos", "threes", "fours", "fives", "sixes", "low", "high")


# -- factories -----------------------------------------------------------------------------


def options(players: int = 3, **fields: object) -> Options:
    layout = LAYOUT_3 if players == 3 else LAYOUT_2 if players == 2 else None
    rounds = fields.get("rounds", 1)
    assert isinstance(rounds, int)
    if layout is not None and "layouts" not in fields:
        fields["layouts"] = (layout,) * rounds
    return Options(players=players, **fields)  # type: ignore[arg-type]


def position(
    players: int = 3,
    *,
    step: Step = Step.ACT,
    active: int = 0,
    dice: tuple[int, ...] = (),
    red: tuple[str, ...] = (),
    taken: dict[str, int] | None = None,
    saved: dict[int, tuple[int, ...]] | None = None,
    turn_action: str = "",
    opts: Options | None = None,
    history: tuple[RoundResult, ...] = (),
) -> State:
    """A position of round 1 (or later, with `history`) built from literals."""
    o = opts or options(players)
    state = GAME.setup(o)
    taken = taken or {}
    cards = state.cards
    no_saved: list[tuple[int, ...]] = [(), (), (), ()]
    all_saved = no_saved[: o.players]
    for seat, values in (saved or {}).items():
        all_saved[seat] = values
    return replace(
        state,
        round=len(history) + 1,
        red=tuple(card in red for card in cards),
        taken_by=tuple(taken.get(card, -1) for card in cards),
        step=step,
        active=active,
        dice=dice,
        saved=tuple(all_saved),
        turn_action=turn_action,
        history=history,
    )


def roll(colour: str, *values: int) -> Roll:
    return Roll(dice=tuple(Die(colour, v) for v in values))


def refused(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


# -- goal cards ------------------------------------------------------------------------------

# NOTES.md: (id, blue side, points, red side, points).
CARD_TABLE = [
    ("ones", "Double Ones", 20, "Four Ones", 50),
    ("twos", "Double Twos", 20, "Four Twos", 50),
    ("threes", "Double Threes", 20, "Four Threes", 50),
    ("fours", "Double Fours", 20, "Four Fours", 50),
    ("fives", "Double Fives", 20, "Four Fives", 50),
    ("sixes", "Double Sixes", 20, "Four Sixes", 50),
    ("one_six", "One and Six", 15, "Two Ones and Two Sixes", 50),
    ("two_five", "Two and Five", 15, "Two Twos and Two Fives", 50),
    ("three_four", "Three and Four", 15, "Two Threes and Two Fours", 50),
    ("run_low", "Run 1-2-3", 25, "Run 1-2-3-4-5", 60),
    ("run_high", "Run 4-5-6", 25, "Run 2-3-4-5-6", 60),
    ("three_kind", "Three of a Kind", 15, "Full House", 55),
    ("pairs", "Two Pair", 20, "Three Pair", 80),
    ("low", "Low", 20, "Very Low", 60),
    ("high", "High", 20, "Very High", 60),
    ("odd", "Four Dice Odd", 15, "All Dice Odd", 65),
    ("even", "Four Dice Even", 15, "All Dice Even", 65),
]


def test_the_seventeen_goal_cards_and_the_sixis_card() -> None:
    assert len(CARD_IDS) == 17
    got = [(c.id, c.blue.name, c.blue.points, c.red.name, c.red.points) for c in CARDS.values()]
    assert got == CARD_TABLE
    assert (SIXIS_SIDE.name, SIXIS_SIDE.points) == ("Sixis", 60)


# (card, red side?, dice, satisfied?)
GOALS = [
    ("ones", False, (1, 1, 2, 3, 4, 5), True),
    ("ones", False, (1, 2, 3, 4, 5, 6), False),
    ("ones", True, (1, 1, 1, 1, 5, 6), True),
    ("ones", True, (1, 1, 1, 2, 5, 6), False),
    ("sixes", True, (6, 6, 6, 6, 6, 6), True),  # "at least" four
    ("one_six", False, (1, 2, 3, 4, 5, 6), True),
    ("one_six", False, (1, 2, 3, 4, 5, 5), False),
    ("one_six", True, (1, 1, 6, 6, 2, 3), True),
    ("one_six", True, (1, 1, 1, 6, 2, 3), False),
    ("two_five", True, (2, 2, 5, 5, 5, 5), True),
    ("three_four", False, (3, 4, 4, 4, 4, 4), True),
    ("run_low", False, (1, 2, 3, 6, 6, 6), True),
    ("run_low", False, (1, 2, 4, 5, 6, 6), False),
    ("run_low", True, (1, 2, 3, 4, 5, 1), True),
    ("run_low", True, (1, 2, 3, 4, 6, 6), False),
    ("run_high", False, (4, 5, 6, 1, 1, 1), True),
    ("run_high", True, (2, 3, 4, 5, 6, 6), True),
    ("run_high", True, (1, 3, 4, 5, 6, 6), False),
    ("three_kind", False, (5, 5, 5, 1, 2, 3), True),
    ("three_kind", False, (5, 5, 1, 1, 2, 3), False),
    ("three_kind", True, (5, 5, 5, 4, 4, 1), True),
    ("three_kind", True, (5, 5, 5, 4, 4, 4), True),
    ("three_kind", True, (5, 5, 5, 5, 4, 4), True),  # at least three and two, distinct values
    ("three_kind", True, (5, 5, 5, 5, 5, 4), False),  # rulebook: 5/5/5/5/5 is no full house
    ("three_kind", True, (5, 5, 5, 5, 5, 5), False),
    ("pairs", False, (5, 5, 4, 4, 1, 2), True),
    ("pairs", False, (5, 5, 5, 4, 4, 1), True),
    ("pairs", False, (5, 5, 5, 5, 1, 2), False),  # four 5s are not two pairs
    ("pairs", True, (5, 5, 4, 4, 1, 1), True),
    ("pairs", True, (5, 5, 5, 5, 4, 4), False),  # rulebook: 5/5/5/5/4/4 is no three pair
    ("pairs", True, (5, 5, 5, 4, 4, 1), False),
    ("low", False, (3, 3, 3, 3, 3, 3), True),  # 18
    ("low", False, (3, 3, 3, 3, 3, 4), False),  # 19
    ("low", True, (2, 2, 2, 2, 2, 2), True),  # 12
    ("low", True, (2, 2, 2, 2, 2, 3), False),  # 13
    ("high", False, (4, 4, 4, 4, 4, 4), True),  # 24
    ("high", False, (4, 4, 4, 4, 4, 3), False),  # 23
    ("high", True, (5, 5, 5, 5, 5, 5), True),  # 30
    ("high", True, (5, 5, 5, 5, 5, 4), False),  # 29
    ("odd", False, (1, 3, 5, 5, 2, 2), True),
    ("odd", False, (1, 3, 5, 2, 2, 2), False),
    ("odd", True, (1, 3, 5, 1, 3, 5), True),
    ("odd", True, (1, 3, 5, 1, 3, 6), False),
    ("even", False, (2, 4, 6, 6, 1, 1), True),
    ("even", True, (2, 4, 6, 2, 4, 6), True),
    ("even", True, (2, 4, 6, 2, 4, 5), False),
    (SIXIS, True, (3, 3, 3, 3, 3, 3), True),
    (SIXIS, True, (3, 3, 3, 3, 3, 4), False),
]


@pytest.mark.parametrize(("card", "red", "dice", "expected"), GOALS)
def test_goal_of_each_side(card: str, red: bool, dice: tuple[int, ...], expected: bool) -> None:
    assert ((card, red) in satisfied_sides(tuple(sorted(dice)))) is expected


def _reference_sides(dice: tuple[int, ...]) -> set[tuple[str, bool]]:
    """The goals written out a second way, straight from NOTES.md, for the property test."""
    count = Counter(dice)
    total = sum(dice)
    odd = sum(1 for d in dice if d % 2)
    pair_values = [v for v in range(1, 7) if count[v] >= 2]
    goals: dict[tuple[str, bool], bool] = {}
    for v, word in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), start=1):
        goals[(word, False)] = count[v] >= 2
        goals[(word, True)] = count[v] >= 4
    for card, (a, b) in {"one_six": (1, 6), "two_five": (2, 5), "three_four": (3, 4)}.items():
        goals[(card, False)] = count[a] >= 1 and count[b] >= 1
        goals[(card, True)] = count[a] >= 2 and count[b] >= 2
    goals[("run_low", False)] = {1, 2, 3} <= set(dice)
    goals[("run_low", True)] = {1, 2, 3, 4, 5} <= set(dice)
    goals[("run_high", False)] = {4, 5, 6} <= set(dice)
    goals[("run_high", True)] = {2, 3, 4, 5, 6} <= set(dice)
    goals[("three_kind", False)] = max(count.values()) >= 3
    goals[("three_kind", True)] = any(
        count[a] >= 3 and count[b] >= 2 for a, b in itertools.permutations(range(1, 7), 2)
    )
    goals[("pairs", False)] = len(pair_values) >= 2
    goals[("pairs", True)] = len(pair_values) >= 3
    goals[("low", False)], goals[("low", True)] = total <= 18, total <= 12
    goals[("high", False)], goals[("high", True)] = total >= 24, total >= 30
    goals[("odd", False)], goals[("odd", True)] = odd >= 4, odd == 6
    goals[("even", False)], goals[("even", True)] = 6 - odd >= 4, odd == 0
    goals[(SIXIS, True)] = len(count) == 1
    return {side for side, ok in goals.items() if ok}


@given(st.lists(st.integers(1, 6), min_size=6, max_size=6))
def test_goals_agree_with_a_second_reading(dice: list[int]) -> None:
    assert satisfied_sides(tuple(sorted(dice))) == _reference_sides(tuple(dice))


# -- layout, reach and the deal -------------------------------------------------------------


def test_layout_data_matches_the_rulebook_diagrams() -> None:
    two, three, four = TABLE_LAYOUTS[2], TABLE_LAYOUTS[3], TABLE_LAYOUTS[4]
    assert (two.card_count, three.card_count, four.card_count) == (8, 9, 12)
    assert [len(arm) for arm in two.arms] == [4, 4]
    assert [len(arm) for arm in four.arms] == [3, 3, 3, 3]
    # 2 players reach all eight cards.
    assert two.reachable_slots(0) == two.reachable_slots(1) == tuple(range(8))
    for layout in (three, four):
        for seat in range(layout.players):
            assert len(layout.reachable_slots(seat)) == 6  # the six adjacent cards
        for arm in range(len(layout.arms)):  # every arm lies between two seats
            assert sum(arm in reach for reach in layout.reach) == 2
    assert three.reachable_slots(0) == (0, 1, 2, 3, 4, 5)
    assert three.reachable_slots(2) == (0, 1, 2, 6, 7, 8)
    # 4 players: partners sit opposite and share no card; neighbours share one arm.
    assert not set(four.reachable_slots(0)) & set(four.reachable_slots(2))
    assert len(set(four.reachable_slots(0)) & set(four.reachable_slots(1))) == 3
    assert len(four.arm_bearings) == 4 and len(four.seat_bearings) == 4


def test_the_deal_is_a_pure_function_of_seed_and_round() -> None:
    first = deal_layout(12345, 1, 12)
    assert first == deal_layout(12345, 1, 12)
    assert len(set(first)) == 12 and set(first) <= set(CARD_IDS)
    assert deal_layout(12345, 1, 8) == first[:8]  # a shorter deal is the same shuffle's top
    rounds = {deal_layout(12345, r, 9) for r in range(1, 6)}
    assert len(rounds) == 5  # each round is dealt afresh
    seeds = {deal_layout(seed, 1, 8) for seed in range(40)}
    assert len(seeds) > 30
    # Over many deals every card turns up.
    seen = {card for seed in range(40) for card in deal_layout(seed, 1, 8)}
    assert seen == set(CARD_IDS)


def test_setup_deals_from_the_seed_unless_layouts_are_given() -> None:
    state = GAME.setup(Options(players=4, deal_seed=77))
    assert state.cards == deal_layout(77, 1, 12)
    assert state.red == (False,) * 12 and state.taken_by == (-1,) * 12
    entered = GAME.setup(Options(players=3, layouts=(LAYOUT_3,), deal_seed=77))
    assert entered.cards == LAYOUT_3
    # Rounds beyond the entered layouts come from the seed.
    two_rounds = Options(players=3, rounds=2, layouts=(LAYOUT_3,), deal_seed=77)
    assert GAME.layout_of_round(two_rounds, 2) == deal_layout(77, 2, 9)


# -- options -----------------------------------------------------------------------------------

BAD_OPTIONS = [
    (Options(players=1), "players"),
    (Options(players=5), "players"),
    (Options(players=2, colours=("red",)), "colours"),
    (Options(players=2, colours=("red", "mauve")), "colours"),
    (Options(players=2, colours=("red", "red")), "colours"),
    (Options(players=3, team_play=True), "team_play"),
    (Options(rounds=0), "rounds"),
    (Options(rounds=21), "rounds"),
    (Options(target=-5), "target"),
    (Options(target=600, rounds=3), "target"),
    (Options(players=3, first_player=3), "first_player"),
    (Options(deal_seed=-1), "deal_seed"),
    (Options(deal_seed=2**32), "deal_seed"),
    (Options(layouts=(LAYOUT_2, LAYOUT_2)), "layouts"),
    (Options(layouts=(LAYOUT_2[:7],)), "layouts"),
    (Options(layouts=(LAYOUT_2[:7] + ("joker",),)), "layouts"),
    (Options(layouts=(LAYOUT_2[:7] + ("ones",),)), "layouts"),
    (Options(layouts=((*LAYOUT_2[:7], SIXIS),)), "layouts"),
]


@pytest.mark.parametrize(("bad", "rule"), BAD_OPTIONS)
def test_bad_options_are_refused_naming_the_field(bad: Options, rule: str) -> None:
    with pytest.raises(Rejection) as info:
        GAME.setup(bad)
    assert (info.value.reason, info.value.rule) == (Reason.BAD_OPTIONS, rule)


def test_default_and_parsed_options() -> None:
    state = GAME.setup(Options())
    assert state.options.players == 2 and GAME.turn(state).dice is not None
    assert GAME.turn(state).dice.colours == ("red",) * 6  # type: ignore[union-attr]
    four = GAME.setup(GAME.options_for(4))
    assert GAME.turn(replace(four, step=Step.ROLL, active=3)).dice.colours == (  # type: ignore[union-attr]
        ("yellow",) * 6
    )
    parsed = GAME.parse_options({"players": 4, "team_play": True, "target": 600})
    assert parsed == Options(players=4, team_play=True, target=600)
    with pytest.raises(Rejection) as info:
        GAME.parse_options({"players": 4, "team_mode": True})
    assert info.value.reason is Reason.BAD_OPTIONS


# -- a turn ----------------------------------------------------------------------------------


def test_a_turn_roll_take_save_then_the_next_seat() -> None:
    state = GAME.setup(options(3))
    turn = GAME.turn(state)
    assert (turn.step, turn.active, turn.chance, turn.players) == ("roll", 0, True, ())
    assert turn.dice is not None and turn.dice.colours == ("red",) * 6 and turn.dice.kept == ()
    state = GAME.play(state, roll("red", 5, 5, 5, 4, 4, 1))
    assert state.step is Step.ACT and state.dice == (1, 4, 4, 5, 5, 5)
    moves = GAME.legal_moves(state, 0)
    # Three of a Kind and Two Pair are matched (take or flip), Double Ones... no; plus decline.
    assert set(moves) == {
        TakeCard(0, "three_kind"), TakeCard(0, "pairs"),
        FlipCard(0, "three_kind"), FlipCard(0, "pairs"), Decline(0),
    }  # fmt: skip
    state = GAME.play(state, TakeCard(0, "pairs"))
    assert state.step is Step.SAVE and state.turn_action == "took"
    assert state.taken_by[LAYOUT_3.index("pairs")] == 0
    assert GAME.scores(state)[0].breakdown == (("round 1: Two Pair", 20),)
    state = GAME.play(state, SaveDice(0, (5, 5, 5)))
    assert state.saved[0] == (5, 5, 5)
    assert (state.step, state.active) == (Step.ROLL, 1)  # seat 1 saved nothing: straight to roll
    assert GAME.turn(state).dice.colours == ("blue",) * 6  # type: ignore[union-attr]


def test_saved_dice_are_kept_or_all_six_rolled_again() -> None:
    state = position(step=Step.SAVE, dice=(4, 4, 4, 1, 2, 6), turn_action="declined")
    state = GAME.play(state, SaveDice(0, (4, 4, 4)))
    # Seats 1 and 2 roll and save nothing.
    for colour in ("blue", "green"):
        state = GAME.play(state, roll(colour, 1, 2, 3, 4, 5, 6))
        state = GAME.play(state, SaveDice(state.active, ()))
    assert (state.step, state.active) == (Step.START, 0)
    assert GAME.legal_moves(state, 0) == [KeepSaved(0), RollAll(0)]
    kept = GAME.play(state, KeepSaved(0))
    spec = GAME.turn(kept).dice
    assert spec is not None and spec.colours == ("red",) * 3
    assert spec.kept == (Die("red", 4), Die("red", 4), Die("red", 4))
    # The saved and rolled dice together make Four Fours... not dealt; Three of a Kind is.
    after = GAME.play(kept, roll("red", 4, 3, 3))
    assert after.dice == (3, 3, 4, 4, 4, 4)
    assert TakeCard(0, "three_kind") in GAME.legal_moves(after, 0)
    assert FlipCard(0, "pairs") in GAME.legal_moves(after, 0)  # 4/4/4/4/3/3: two pair
    rerolled = GAME.play(state, RollAll(0))
    assert rerolled.saved[0] == ()
    assert GAME.turn(rerolled).dice.colours == ("red",) * 6  # type: ignore[union-attr]
    # Keeping only part of the saved dice is no move at all.
    assert refused(state, SaveDice(0, (4,))).rule == "roll_first"


def test_keeping_all_six_saved_dice_rolls_nothing() -> None:
    state = position(step=Step.START, saved={0: (2, 2, 3, 3, 5, 5)})
    state = GAME.play(state, KeepSaved(0))
    assert state.step is Step.ACT and state.dice == (2, 2, 3, 3, 5, 5)
    assert TakeCard(0, "pairs") in GAME.legal_moves(state, 0)


def test_dice_that_match_no_reachable_card_go_straight_to_saving() -> None:
    state = GAME.setup(options(3))
    # 1-2-3-4-5-6 (total 21): no pair, no triple, not low; High etc. are out of seat 0's reach.
    state = GAME.play(state, roll("red", 1, 2, 3, 4, 5, 6))
    assert state.step is Step.SAVE and state.turn_action == "no_match"
    assert Decline(0) not in GAME.legal_moves(state, 0)
    assert len(GAME.legal_moves(state, 0)) == 64  # every subset of six different dice


def test_flip_turns_a_matched_blue_card_red_and_ends_the_card_action() -> None:
    state = position(dice=(1, 1, 2, 3, 4, 6))
    state = GAME.play(state, FlipCard(0, "ones"))
    assert state.red[LAYOUT_3.index("ones")] and state.step is Step.SAVE
    assert state.turn_action == "flipped" and state.turn_card == "ones"
    rejection = refused(state, TakeCard(0, "ones"))
    assert (rejection.rule, rejection.message) == (
        "one_card_action", "you flipped a card this turn; you can't also take one",
    )  # fmt: skip


def test_save_choices_are_distinct_multisets() -> None:
    state = position(step=Step.SAVE, dice=(5, 5, 5, 5, 5, 5), turn_action="declined")
    moves = GAME.legal_moves(state, 0)
    assert [m.values for m in moves if isinstance(m, SaveDice)] == [(5,) * k for k in range(7)]
    state = position(step=Step.SAVE, dice=(1, 1, 2, 2, 3, 3), turn_action="declined")
    assert len(GAME.legal_moves(state, 0)) == 27
    assert SaveDice(0, (3, 1)) == SaveDice(0, (1, 3))  # the order of values does not matter


# -- refusals ------------------------------------------------------------------------------------


def _act(**fields: object) -> State:
    return position(**fields)  # type: ignore[arg-type]


# (name, position, move, reason, rule, words in the message)
REFUSALS = [
    (
        "full house needs three and two",
        _act(dice=(5, 5, 5, 5, 5, 4), red=("three_kind",)),
        TakeCard(0, "three_kind"),
        Reason.ILLEGAL_MOVE,
        "card_needs",
        "Full House needs three of one value and two of another",
    ),
    (
        "three pair needs three different pairs",
        _act(dice=(5, 5, 5, 5, 4, 4), red=("pairs",)),
        TakeCard(0, "pairs"),
        Reason.ILLEGAL_MOVE,
        "card_needs",
        "Three Pair needs three pairs of three different values",
    ),
    (
        "out of reach",
        _act(dice=(1, 3, 5, 1, 3, 5)),
        TakeCard(0, "odd"),
        Reason.ILLEGAL_MOVE,
        "out_of_reach",
        "that card (Four Dice Odd) is out of your reach",
    ),
    (
        "flip out of reach",
        _act(dice=(1, 3, 5, 1, 3, 5)),
        FlipCard(0, "odd"),
        Reason.ILLEGAL_MOVE,
        "out_of_reach",
        "out of your reach",
    ),
    (
        "already taken",
        _act(dice=(1, 1, 2, 2, 3, 4), taken={"ones": 2}),
        TakeCard(0, "ones"),
        Reason.ILLEGAL_MOVE,
        "card_taken",
        "Double Ones was already taken by player 3",
    ),
    (
        "not dealt",
        _act(dice=(1, 2, 3, 4, 5, 6)),
        TakeCard(0, "run_low"),
        Reason.ILLEGAL_MOVE,
        "card_not_dealt",
        "Run 1-2-3 / Run 1-2-3-4-5 is not on the table",
    ),
    (
        "unknown card",
        _act(dice=(1, 2, 3, 4, 5, 6)),
        TakeCard(0, "yahtzee"),
        Reason.ILLEGAL_MOVE,
        "unknown_card",
        "there is no card 'yahtzee'",
    ),
    (
        "sixis needs six of a kind",
        _act(dice=(2, 2, 2, 2, 2, 3)),
        TakeCard(0, SIXIS),
        Reason.ILLEGAL_MOVE,
        "card_needs",
        "Sixis needs six of a kind",
    ),
    (
        "the sixis card has no blue side",
        _act(dice=(2, 2, 2, 2, 2, 2)),
        FlipCard(0, SIXIS),
        Reason.ILLEGAL_MOVE,
        "flip_sixis",
        "no blue side",
    ),
    (
        "a red card cannot be flipped",
        _act(dice=(1, 1, 2, 3, 4, 6), red=("ones",)),
        FlipCard(0, "ones"),
        Reason.ILLEGAL_MOVE,
        "already_red",
        "Four Ones is already red side up",
    ),
    (
        "flipping needs the blue side matched",
        _act(dice=(1, 1, 2, 3, 4, 6)),
        FlipCard(0, "twos"),
        Reason.ILLEGAL_MOVE,
        "flip_needs",
        "Double Twos needs two 2s",
    ),
    (
        "took then flip",
        _act(step=Step.SAVE, dice=(1, 1, 2, 2, 4, 6), turn_action="took"),
        FlipCard(0, "twos"),
        Reason.ILLEGAL_MOVE,
        "one_card_action",
        "you took a card this turn; you can't also flip one",
    ),
    (
        "took then take",
        _act(step=Step.SAVE, dice=(1, 1, 2, 2, 4, 6), turn_action="took"),
        TakeCard(0, "twos"),
        Reason.ILLEGAL_MOVE,
        "one_card_action",
        "can't also take another",
    ),
    (
        "declined then take",
        _act(step=Step.SAVE, dice=(1, 1, 2, 2, 4, 6), turn_action="declined"),
        TakeCard(0, "twos"),
        Reason.ILLEGAL_MOVE,
        "one_card_action",
        "you passed on the cards",
    ),
    (
        "no match then take names the goal",
        _act(step=Step.SAVE, dice=(1, 2, 3, 4, 5, 6), turn_action="no_match"),
        TakeCard(0, "low"),
        Reason.ILLEGAL_MOVE,
        "card_needs",
        "Low needs a total of 18 or less",
    ),
    (
        "no match then decline",
        _act(step=Step.SAVE, dice=(1, 2, 3, 4, 5, 6), turn_action="no_match"),
        Decline(0),
        Reason.ILLEGAL_MOVE,
        "no_match",
        "your dice match no card",
    ),
    (
        "save a die you do not have",
        _act(step=Step.SAVE, dice=(1, 2, 3, 4, 5, 6), turn_action="no_match"),
        SaveDice(0, (6, 6)),
        Reason.ILLEGAL_MOVE,
        "save_dice",
        "you have only one 6 to save",
    ),
    (
        "save a value not rolled",
        _act(step=Step.SAVE, dice=(1, 1, 3, 4, 5, 6), turn_action="no_match"),
        SaveDice(0, (2,)),
        Reason.ILLEGAL_MOVE,
        "save_dice",
        "you have no 2 to save",
    ),
    (
        "save a die value that does not exist",
        _act(step=Step.SAVE, dice=(1, 1, 3, 4, 5, 6), turn_action="no_match"),
        SaveDice(0, (7,)),
        Reason.ILLEGAL_MOVE,
        "die_value",
        "1 to 6",
    ),
    (
        "save before the card action",
        _act(dice=(1, 1, 3, 4, 5, 6)),
        SaveDice(0, (1, 1)),
        Reason.ILLEGAL_MOVE,
        "act_first",
        "first take a card, flip one, or decline",
    ),
    (
        "take before rolling",
        _act(step=Step.START, saved={0: (1, 1)}),
        TakeCard(0, "ones"),
        Reason.ILLEGAL_MOVE,
        "roll_first",
        "roll first",
    ),
    (
        "keep after rolling",
        _act(dice=(1, 1, 3, 4, 5, 6)),
        KeepSaved(0),
        Reason.ILLEGAL_MOVE,
        "already_rolled",
        "already rolled",
    ),
    (
        "keep with nothing saved",
        _act(players=2, step=Step.START, taken={c: 0 for c in LAYOUT_2[:4]}),
        KeepSaved(0),
        Reason.ILLEGAL_MOVE,
        "nothing_saved",
        "you saved no dice last turn",
    ),
    (
        "end the round with three players",
        _act(step=Step.START, saved={0: (1,)}),
        EndRound(0),
        Reason.ILLEGAL_MOVE,
        "end_round_two_players",
        "only in a two-player game",
    ),
    (
        "end the round while cards are left on both lines",
        _act(players=2, step=Step.START, saved={0: (1,)}, taken={"ones": 1, "low": 0}),
        EndRound(0),
        Reason.ILLEGAL_MOVE,
        "end_round",
        "every card left is red or one side",
    ),
    (
        "end the round after rolling",
        _act(players=2, dice=(1, 1, 3, 4, 5, 6), taken={c: 0 for c in LAYOUT_2[:4]}),
        EndRound(0),
        Reason.ILLEGAL_MOVE,
        "end_round_timing",
        "start of your turn",
    ),
    (
        "another seat's move",
        _act(dice=(1, 1, 3, 4, 5, 6)),
        TakeCard(1, "ones"),
        Reason.NOT_YOUR_TURN,
        "not_your_turn",
        "you may not act now",
    ),
    (
        "a move while the dice are due",
        _act(step=Step.ROLL),
        Decline(0),
        Reason.NOT_YOUR_TURN,
        "waiting_for_roll",
        "rolled first",
    ),
    (
        "a roll while none is due",
        _act(dice=(1, 1, 3, 4, 5, 6)),
        roll("red", 1, 2, 3, 4, 5, 6),
        Reason.NOT_YOUR_TURN,
        "no_roll_expected",
        "no roll is expected",
    ),
    (
        "a roll of the saved dice too",
        _act(step=Step.ROLL, saved={0: (6, 6)}),
        roll("red", 1, 2, 3, 4, 5, 6),
        Reason.WRONG_DICE,
        "dice_expected",
        "this roll needs 4 dice (4 red)",
    ),
    (
        "a roll of another player's dice",
        _act(step=Step.ROLL),
        roll("blue", 1, 2, 3, 4, 5, 6),
        Reason.WRONG_DICE,
        "dice_expected",
        "6 red",
    ),
    (
        "after the game",
        _act(step=Step.OVER, active=-1),
        Decline(0),
        Reason.GAME_OVER,
        "game_over",
        "the game is over",
    ),
]


@pytest.mark.parametrize(
    ("state", "move", "reason", "rule", "words"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals_name_the_rule(
    state: State, move: Move, reason: Reason, rule: str, words: str
) -> None:
    rejection = refused(state, move)
    assert (rejection.reason, rejection.rule) == (reason, rule)
    assert words in rejection.message
    assert move not in GAME.legal_moves(state, getattr(move, "player", 0))


# -- round ends ----------------------------------------------------------------------------------


def test_three_players_round_ends_when_a_seat_finds_its_cards_gone() -> None:
    # Seat 1 reaches slots 3-8: all gone but "low" (slot 5), which seat 0 takes now.
    gone = {card: 2 for card in LAYOUT_3[3:5] + LAYOUT_3[6:]}
    state = position(dice=(1, 1, 1, 2, 3, 3), taken=gone)
    state = GAME.play(state, TakeCard(0, "low"))
    assert GAME.outcome(state) is None  # the round ends at the start of seat 1's turn...
    state = GAME.play(state, SaveDice(0, ()))
    assert state.step is Step.OVER and state.history[-1].ending == "cards_gone"
    assert state.history[-1].ended_by == 1  # the seat that found its cards gone
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (2,)  # 85 points against 20
    assert GAME.legal_moves(state, 0) == []
    assert GAME.turn(state).step == "over" and not GAME.turn(state).chance


def test_the_round_goes_on_while_the_next_seat_still_reaches_a_card() -> None:
    # Seat 2 (slots 6-8 and 0-2) has nothing left, seat 1 still has "three_kind".
    gone = {card: 0 for card in LAYOUT_3[:3] + LAYOUT_3[4:]}
    state = position(step=Step.SAVE, dice=(1, 2, 3, 4, 5, 6), turn_action="no_match", taken=gone)
    state = GAME.play(state, SaveDice(0, ()))
    assert (state.step, state.active) == (Step.ROLL, 1)
    state = GAME.play(state, roll("blue", 1, 2, 3, 4, 5, 6))  # no match for seat 1
    state = GAME.play(state, SaveDice(1, ()))
    assert state.step is Step.OVER  # seat 2's turn begins with its six cards gone


def test_taking_the_sixis_card_ends_the_round_at_once() -> None:
    state = position(dice=(4, 4, 4, 4, 4, 4), opts=options(3, rounds=2))
    moves = GAME.legal_moves(state, 0)
    assert TakeCard(0, SIXIS) in moves and TakeCard(0, "three_kind") in moves
    state = GAME.play(state, TakeCard(0, SIXIS))
    assert state.history == (RoundResult(1, "sixis_taken", (Claim(0, SIXIS, True),), 0),)
    # Round 2 starts with the next seat, a fresh layout and no saved dice.
    assert (state.round, state.starter, state.active, state.step) == (2, 1, 1, Step.ROLL)
    assert state.taken_by == (-1,) * 9
    assert GAME.scores(state)[0].breakdown == (("round 1: Sixis", 60),)


def test_two_players_may_end_the_round_when_a_line_is_empty() -> None:
    line = {card: 1 for card in LAYOUT_2[:4]}  # line 0 taken
    state = position(2, step=Step.SAVE, dice=(1, 2, 3, 4, 5, 6), turn_action="no_match", taken=line)
    state = GAME.play(state, SaveDice(0, ()))
    # No saved dice, yet the start step is asked: play on (roll all) or end the round.
    assert (state.step, state.active) == (Step.START, 1)
    assert GAME.legal_moves(state, 1) == [RollAll(1), EndRound(1)]
    played_on = GAME.play(state, RollAll(1))
    assert played_on.step is Step.ROLL
    ended = GAME.play(state, EndRound(1))
    assert (ended.history[-1].ending, ended.history[-1].ended_by) == ("ended_by_player", 1)
    outcome = GAME.outcome(ended)
    assert outcome is not None and outcome.winners == (1,)


def test_two_players_may_end_the_round_when_every_card_left_is_red() -> None:
    red = LAYOUT_2[1:]
    state = position(2, step=Step.START, saved={0: (1,)}, red=red, taken={"ones": 1})
    assert EndRound(0) in GAME.legal_moves(state, 0)
    blue_left = position(2, step=Step.START, saved={0: (1,)}, red=red[1:], taken={"ones": 1})
    assert EndRound(0) not in GAME.legal_moves(blue_left, 0)


def _two_players_every_card_gone(kept: tuple[int, ...] = (), old_table: bool = False) -> State:
    """2 players, 2 rounds: seat 1 takes the last card ("high"), seat 0 (who saved `kept`
    on its turn before) begins its turn with no card left. `old_table`: options as a table
    made before 2026-12-07 stored them (no `no_card_left_ends_round`: the dataclass's True)."""
    all_but_one = {card: 0 for card in LAYOUT_2[:7]}
    opts = (
        options(2, rounds=2) if old_table else options(2, rounds=2, no_card_left_ends_round=False)
    )
    state = position(2, dice=(3, 3, 3, 3, 4, 5), taken=all_but_one, opts=opts)
    state = replace(state, step=Step.SAVE, turn_action="no_match")  # 21: "high" not matched
    state = GAME.play(state, SaveDice(0, kept))
    assert state.step is Step.START  # a line is empty: seat 1 may end or play on
    state = GAME.play(state, RollAll(1))
    state = GAME.play(state, roll("blue", 6, 6, 5, 5, 4, 4))
    state = GAME.play(state, TakeCard(1, "high"))
    return GAME.play(state, SaveDice(1, ()))


def test_two_players_may_play_on_when_every_card_is_gone() -> None:
    # Rulebook, Special Rules for Two Players: "Everything else plays like a normal three or
    # four player game, except for the end condition. At the start of your turn, if ... all
    # cards on one side of the Sixis card are gone you may end the round, but you do not have
    # to." With no card left both sides are gone: a choice, not the end of the round.
    state = _two_players_every_card_gone()
    assert all(seat != -1 for seat in state.taken_by) and not state.history
    assert (state.round, state.step, state.active) == (1, Step.START, 0)
    assert GAME.legal_moves(state, 0) == [RollAll(0), EndRound(0)]
    assert GAME.outcome(state) is None
    # Playing on: only the Sixis card is left to take.
    on = GAME.play(GAME.play(state, RollAll(0)), roll("red", 1, 2, 3, 4, 5, 6))
    assert (on.step, on.turn_action) == (Step.SAVE, "no_match")
    on = GAME.play(on, SaveDice(0, (6,)))
    assert (on.round, on.step, on.active) == (1, Step.START, 1)
    assert GAME.legal_moves(on, 1) == [RollAll(1), EndRound(1)]
    sixis = GAME.play(GAME.play(on, RollAll(1)), roll("blue", 2, 2, 2, 2, 2, 2))
    assert GAME.legal_moves(sixis, 1) == [TakeCard(1, SIXIS), Decline(1)]
    sixis = GAME.play(sixis, TakeCard(1, SIXIS))
    assert (sixis.history[-1].ending, sixis.history[-1].ended_by) == ("sixis_taken", 1)
    assert sixis.round == 2
    # Ending it: the player's choice, recorded as such.
    ended = GAME.play(state, EndRound(0))
    assert (ended.history[-1].ending, ended.history[-1].ended_by) == ("ended_by_player", 0)
    assert (ended.round, ended.step, ended.active) == (2, Step.ROLL, 1)


def test_a_two_player_table_made_before_the_choice_still_ends_when_no_card_is_left() -> None:
    """Its stored games replay as they were played (the round ended by itself), while every
    new table (`options_for`) gives the player the choice."""
    assert GAME.options_for(2).no_card_left_ends_round is False
    state = _two_players_every_card_gone(old_table=True)
    assert (state.history[-1].ending, state.history[-1].ended_by) == ("cards_gone", 0)
    assert (state.round, state.step) == (2, Step.ROLL)


def test_two_players_with_saved_dice_and_no_card_left_keep_roll_all_or_end() -> None:
    state = _two_players_every_card_gone(kept=(3, 3))
    assert (state.step, state.active, state.saved[0]) == (Step.START, 0, (3, 3))
    assert GAME.legal_moves(state, 0) == [KeepSaved(0), RollAll(0), EndRound(0)]
    kept = GAME.play(GAME.play(state, KeepSaved(0)), roll("red", 3, 3, 3, 3))
    assert (kept.step, kept.dice) == (Step.ACT, (3, 3, 3, 3, 3, 3))
    assert GAME.legal_moves(kept, 0) == [TakeCard(0, SIXIS), Decline(0)]


# -- scoring, teams, rounds, target ---------------------------------------------------------------


def test_scores_list_each_card_with_the_points_of_the_side_taken() -> None:
    history = (RoundResult(1, "cards_gone", (Claim(0, "pairs", True), Claim(1, "ones", False))),)
    state = position(
        opts=options(3, rounds=3), history=history, taken={"three_kind": 0, "low": 2},
        red=("three_kind",),
    )  # fmt: skip
    scores = GAME.scores(state)
    assert scores[0].breakdown == (("round 1: Three Pair", 80), ("round 2: Full House", 55))
    assert scores[0].total == 135
    assert scores[1].total == 20 and scores[2].breakdown == (("round 2: Low", 20),)


def test_team_play_shares_the_total_and_both_partners_win() -> None:
    cards: tuple[str, ...] = ("pairs", "ones", "twos", "threes", "low", "high")
    cards += ("odd", "even", "sixes", "fours", "fives", "run_low")
    o = Options(players=4, team_play=True, layouts=(cards,))
    # Seat 0 takes Two Pair (20), its partner seat 2 Low (20), seat 1 Four Dice Even (15).
    claims = (Claim(0, "pairs", False), Claim(2, "low", False), Claim(1, "even", False))
    state = position(4, opts=o, step=Step.OVER, active=-1)
    state = replace(state, round=1, history=(RoundResult(1, "cards_gone", claims),))
    scores = GAME.scores(state)
    assert [score.total for score in scores] == [40, 15, 40, 15]
    assert scores[0].breakdown == scores[2].breakdown == (
        ("round 1: Two Pair (player 1)", 20), ("round 1: Low (player 3)", 20),
    )  # fmt: skip
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0, 2)
    assert outcome.message == "Player 1 and player 3 win with a team total of 40 points"


def test_ties_are_shared() -> None:
    claims = (Claim(0, "ones", False), Claim(1, "twos", False), Claim(2, "odd", False))
    state = position(step=Step.OVER, active=-1, history=(RoundResult(1, "cards_gone", claims),))
    state = replace(state, round=1, taken_by=(-1,) * 9)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0, 1)
    assert outcome.message == "Player 1 and player 2 share the win with 20 points"


def test_three_rounds_are_summed_and_the_start_passes_clockwise() -> None:
    o = Options(players=3, rounds=3, deal_seed=9)
    state = GAME.setup(o)
    starters = []
    for round_no in (1, 2, 3):
        assert state.round == round_no and state.cards == deal_layout(9, round_no, 9)
        starters.append(state.starter)
        state = replace(state, step=Step.ACT, dice=(5,) * 6)
        state = GAME.play(state, TakeCard(state.active, SIXIS))
    assert starters == [0, 1, 2]
    assert state.step is Step.OVER
    assert [score.total for score in GAME.scores(state)] == [60, 60, 60]
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0, 1, 2)
    assert outcome.reason == "rounds_played"


def test_a_target_game_ends_at_the_round_end_that_reaches_it() -> None:
    o = Options(players=2, target=100, deal_seed=3)
    state = GAME.setup(o)
    totals = []
    while state.step is not Step.OVER:
        assert state.round <= 3
        state = replace(state, step=Step.ACT, dice=(6,) * 6)
        state = GAME.play(state, TakeCard(state.active, SIXIS))
        totals.append([s.total for s in GAME.scores(state)])
    # Round 1: seat 0 has 60 < 100, play on; round 2: seat 1 60; round 3: seat 0 120.
    assert totals == [[60, 0], [60, 60], [120, 60]]
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "target_reached" and outcome.winners == (0,)


def test_the_target_counts_the_closing_round_once() -> None:
    """A round's cards count once when its end checks the target (they were counted twice,
    from the history and from the table, so 20 + 60 points looked like 160 >= 100)."""
    o = Options(players=2, target=100, deal_seed=3)
    state = GAME.setup(o)
    high = state.cards.index("high")  # 20 points face up
    state = replace(
        state,
        taken_by=tuple(0 if slot == high else t for slot, t in enumerate(state.taken_by)),
        step=Step.ACT,
        dice=(6,) * 6,
    )
    state = GAME.play(state, TakeCard(0, SIXIS))
    assert [s.total for s in GAME.scores(state)] == [80, 0]
    assert state.step is not Step.OVER and state.round == 2
    assert GAME.outcome(state) is None


# -- advanced start -------------------------------------------------------------------------------


def test_advanced_start_lets_later_seats_save_two_three_four_dice() -> None:
    o = Options(players=4, advanced_start=True, first_player=2, deal_seed=1)
    state = GAME.setup(o)
    seen = []
    for colour, seat, limit in (("yellow", 3, 2), ("red", 0, 3), ("blue", 1, 4)):
        turn = GAME.turn(state)
        assert (turn.step, turn.active, turn.chance) == ("start_roll", seat, True)
        assert turn.dice is not None and turn.dice.colours == (colour,) * 6
        state = GAME.play(state, roll(colour, 6, 6, 6, 6, 6, 1))
        assert state.step is Step.START_SAVE
        moves = GAME.legal_moves(state, seat)
        assert max(len(m.values) for m in moves if isinstance(m, SaveDice)) == limit
        too_many = refused(state, SaveDice(seat, (6,) * (limit + 1)))
        assert too_many.rule == "advanced_start_limit" and f"up to {limit} dice" in too_many.message
        assert refused(state, Decline(seat)).rule == "start_save_first"
        state = GAME.play(state, SaveDice(seat, (6,) * limit))
        seen.append(state.saved[seat])
    assert seen == [(6, 6), (6, 6, 6), (6, 6, 6, 6)]
    # The start player rolls all six; the next seat starts with its saved dice.
    assert (state.step, state.active) == (Step.ROLL, 2)
    state = GAME.play(state, roll("green", 1, 2, 3, 4, 5, 6))
    if state.step is Step.ACT:
        state = GAME.play(state, Decline(2))
    state = GAME.play(state, SaveDice(2, ()))
    assert (state.step, state.active) == (Step.START, 3)
    assert GAME.legal_moves(state, 3) == [KeepSaved(3), RollAll(3)]


# -- legal moves agree with check ------------------------------------------------------------------


def _candidate_moves(state: State, seat: int, rng: random.Random) -> list[Move]:
    cards = [*CARD_IDS, SIXIS, "nonsense"]
    moves: list[Move] = [KeepSaved(seat), RollAll(seat), EndRound(seat), Decline(seat)]
    moves += [TakeCard(seat, c) for c in cards] + [FlipCard(seat, c) for c in cards]
    moves += [Starter(seat, other) for other in range(-1, state.options.players + 1)]
    for _ in range(12):
        moves.append(SaveDice(seat, tuple(rng.randint(1, 6) for _ in range(rng.randint(0, 7)))))
    return moves


@pytest.mark.parametrize("players", [2, 3, 4])
def test_legal_moves_agree_with_check(players: int) -> None:
    rng = random.Random(players)
    o = Options(players=players, advanced_start=True, rounds=2, team_play=players == 4)
    checked = 0
    for game_no in range(3):
        state = GAME.setup(replace(o, deal_seed=game_no))
        for _ in range(200):
            if GAME.outcome(state) is not None:
                break
            for seat in range(players):
                legal = GAME.legal_moves(state, seat)
                assert len(set(legal)) == len(legal)
                # the active player acts; before a later round's first roll, its opener
                assert (
                    not legal
                    or seat == state.active
                    or (state.opener_open and seat == state.starter)
                )
                for move in legal:
                    GAME.check(state, move)
                candidates = _candidate_moves(state, seat, rng)
                if seat != state.active:  # a few suffice: check_actor refuses most
                    candidates = rng.sample(candidates, 4)
                for move in candidates:
                    if move not in legal:
                        with pytest.raises(Rejection):
                            GAME.check(state, move)
                    checked += 1
            state = GAME.play(state, random_action(GAME, state, rng))
    assert checked > 3_000


# -- JSON ---------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([2, 3, 4]))
def test_states_and_moves_round_trip_through_json(seed: int, players: int) -> None:
    rng = random.Random(seed)
    o = Options(players=players, advanced_start=seed % 2 == 0, rounds=2, deal_seed=seed)
    state = GAME.setup(o)
    for _ in range(150):
        if GAME.outcome(state) is not None:
            break
        move = random_action(GAME, state, rng)
        as_json = json.loads(json.dumps(GAME.move_to_json(move)))
        assert GAME.move_from_json(as_json) == move
        state = GAME.play(state, move)
        data = json.loads(json.dumps(GAME.state_to_json(state)))
        assert GAME.state_from_json(data) == state
        GAME.invariants(state)


def test_move_json_examples() -> None:
    assert GAME.move_to_json(SaveDice(1, (5, 2, 5))) == {
        "kind": "save", "player": 1, "values": [2, 5, 5],
    }  # fmt: skip
    assert GAME.move_from_json({"kind": "take", "player": 0, "card": "pairs"}) == TakeCard(
        0, "pairs"
    )
    with pytest.raises(Rejection) as info:
        GAME.move_from_json({"kind": "save", "player": 0, "values": ["five"]})
    assert info.value.reason is Reason.MALFORMED


# -- the example record -------------------------------------------------------------------------


def _record() -> dict[str, object]:
    data: dict[str, object] = json.loads(RECORD.read_text(encoding="utf-8"))
    return data


def test_the_example_record_replays_to_the_end() -> None:
    session = replay_record(_record())
    outcome = session.outcome()
    assert outcome is not None and outcome.winners
    assert session.state.history[-1].ending in ("cards_gone", "sixis_taken", "ended_by_player")
    kinds = {action.move.kind for action in session.actions}
    assert {"roll", "save", "take", "flip", "keep"} <= kinds
    assert session.game.turn(session.state).step == "over"


def test_a_corrupted_record_names_the_bad_action() -> None:
    record = copy.deepcopy(_record())
    actions = record["actions"]
    assert isinstance(actions, list)
    index = next(i for i, a in enumerate(actions) if a["move"]["kind"] == "take")
    actions[index]["move"]["card"] = "yahtzee"
    with pytest.raises(RecordError) as info:
        replay_record(record)
    assert info.value.index == index
    assert info.value.rejection.rule == "unknown_card"


# -- who opens a later round --------------------------------------------------------------


def refusal(state: State, move: Move) -> Rejection:
    with pytest.raises(Rejection) as info:
        GAME.check(state, move)
    return info.value


def test_the_table_chooses_who_opens_a_later_round() -> None:
    """The rulebook leaves later rounds open: the companion's opener (clockwise) or the host
    hands the opening to another seat before the round's first roll."""
    state = position(dice=(4, 4, 4, 4, 4, 4), opts=options(3, rounds=2))
    state = GAME.play(state, TakeCard(0, SIXIS))
    assert (state.round, state.starter, state.opener_open) == (2, 1, True)
    turn = GAME.turn(state)
    assert turn.chance and turn.players == (1,)
    assert GAME.legal_moves(state, 1) == [Starter(1, 0), Starter(1, 2)]
    assert refusal(state, TakeCard(1, "ones")).rule == "waiting_for_roll"
    state = GAME.play(state, Starter(1, 2))
    assert (state.starter, state.active, state.step, state.opener_open) == (2, 2, Step.ROLL, True)
    assert GAME.turn(state).dice == DiceSpec(colours=("green",) * 6)
    state = GAME.play(state, roll("green", 1, 2, 3, 4, 5, 6))
    assert not state.opener_open
    assert refusal(state, Starter(2, 0)).rule == "opener_chosen_before_first_roll"
    assert GAME.move_from_json(GAME.move_to_json(Starter(1, 2))) == Starter(1, 2)


def test_the_first_round_opens_with_the_first_player_option() -> None:
    state = GAME.setup(options(3))
    assert not state.opener_open and GAME.turn(state).players == ()


def test_a_chosen_opener_with_the_advanced_start_lets_the_seat_after_it_start_rolling() -> None:
    state = position(dice=(4,) * 6, opts=replace(options(3, rounds=2), advanced_start=True))
    state = GAME.play(state, TakeCard(0, SIXIS))
    assert (state.step, state.starter, state.active) == (Step.START_ROLL, 1, 2)
    assert GAME.turn(state).players == (1,)
    state = GAME.play(state, Starter(1, 0))
    assert (state.step, state.starter, state.active) == (Step.START_ROLL, 0, 1)
    assert refusal(state, Starter(0, 0)).rule == "opener_is_another_seat"


@pytest.mark.parametrize("every_round", [False, True])
def test_the_advanced_start_is_the_first_rounds_unless_the_table_plays_it_every_round(
    every_round: bool,
) -> None:
    """Issue 26 item 11: the rulebook ties the advanced start to the roll that chooses the
    first player, so a new table has it in round 1 only; every round is the table's choice
    (and how records made before the choice replay)."""
    options = Options(
        players=2, colours=("red", "blue"), rounds=2, advanced_start=True,
        advanced_start_every_round=every_round,
    )  # fmt: skip
    state = GAME.setup(options)
    assert state.step is Step.START_ROLL and state.active == 1
    state = GAME.play(state, Roll(dice=tuple(Die("blue", 1) for _ in range(6))))
    state = GAME.play(state, SaveDice(1, ()))
    state = GAME.play(state, Roll(dice=tuple(Die("red", 6) for _ in range(6))))
    state = GAME.play(state, TakeCard(0, SIXIS))  # six of a kind: round 1 is over
    assert state.round == 2
    assert (state.step is Step.START_ROLL) is every_round
    assert GAME.options_for(2).advanced_start_every_round is False  # a new table: rulebook
