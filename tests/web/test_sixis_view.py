"""The Sixis page: the view holds no rules (every legal move of a seat is offered exactly
once: takes and flips on the cards, the turn's buttons, every legal save one choice of die
toggles away; nothing the engine does not list is marked legal; a device that may not act
gets no moves), the layout per player count, reach, taken cards under the taker's name, the
points per round and team totals. Then the same through the app: a Sixis table, a roll, a
flip, a save built as the Save button builds it, a refused take with the engine's rule."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from html import unescape
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules.base import Move
from companion.rules.registry import find_game
from companion.rules.sixis import (
    SIXIS,
    TABLE_LAYOUTS,
    Decline,
    EndRound,
    FlipCard,
    KeepSaved,
    Options,
    RollAll,
    SaveDice,
    Step,
    TakeCard,
)
from companion.simulate import random_action
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.web.app import create_app
from companion.web.fragments import SheetCache, render_live
from companion.web.settings import Settings
from companion.web.views import live_context, move_attr, sheet_context
from companion.web.views.sixis import TEMPLATE
from tests.web.helpers import act, create_table, roll, roll_json, seat_player, snapshot_of

GAME = find_game("sixis")
NAMES = ["Ann", "Bob", "Cy", "Di"]
# a 2-player deal in slot order: the line above the Sixis card (0-3), the line below (4-7)
TWO_LAYOUT = ("three_kind", "pairs", "low", "high", "odd", "even", "run_low", "run_high")
TWO = Options(players=2, colours=("red", "blue"), layouts=(TWO_LAYOUT,))


def red(*values: int) -> Any:
    return roll(*(("red", v) for v in values))


def blue(*values: int) -> Any:
    return roll(*(("blue", v) for v in values))


def cards_of(context: dict[str, Any]) -> list[dict[str, Any]]:
    return [card for arm in context["arms"] for card in arm["cards"]] + [context["sixis"]]


def card(context: dict[str, Any], card_id: str) -> dict[str, Any]:
    return next(c for c in cards_of(context) if c["card"] == card_id)


def controls(context: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tappable card control (take, flip) of the sheet."""
    found = []
    for c in cards_of(context):
        found += [c[k] for k in ("take", "flip") if c.get(k)]
    return found


def offered_legal(context: dict[str, Any]) -> list[str]:
    """Every move offered as legal except saves: card controls, turn buttons, generic ones."""
    moves = [c["move"] for c in controls(context) if c["legal"]]
    moves += [a["move"] for a in context["actions"] + context["ending"]]
    moves += [b["move"] for b in context["buttons"] if b["legal"]]
    return moves


def sendable(context: dict[str, Any]) -> set[str]:
    """Every move a tap on this sheet could send, legal or not."""
    moves = {c["move"] for c in controls(context)}
    moves |= {a["move"] for a in context["actions"] + context["ending"] + context["buttons"]}
    if context["save"]:
        moves.add(context["save"]["move"])
    return moves


def composable(context: dict[str, Any], seat: int) -> set[Move]:
    """Every SaveDice the die toggles and the Save button can send (any choice of dice)."""
    save = context["save"]
    if save is None:
        return set()
    base = json.loads(save["move"])
    assert base == {"kind": "save", "player": seat, "values": []}
    assert save["field"] == "values"
    values = [d["value"] for d in save["dice"]]
    return {
        SaveDice(seat, tuple(chosen))
        for size in range(len(values) + 1)
        for chosen in combinations(values, size)
    }


def random_moves(options: Options, seed: int, limit: int) -> list[Move]:
    """The moves of one random game (from the engine's legal moves), at most `limit`."""
    rng = random.Random(seed)
    state = GAME.setup(options)
    moves: list[Move] = []
    while GAME.outcome(state) is None and len(moves) < limit:
        move = random_action(GAME, state, rng)
        moves.append(move)
        state = GAME.play(state, move)
    return moves


def random_snapshots(options: Options, seed: int, limit: int = 90) -> Iterator[Snapshot]:
    """A snapshot after every action of one random game."""
    moves = random_moves(options, seed, limit)
    for count in range(len(moves) + 1):
        yield snapshot_of("sixis", NAMES[: options.players], moves[:count], options)


GAMES = [
    (Options(players=2, deal_seed=7), 1),
    (Options(players=3, deal_seed=11, advanced_start=True), 2),
    (Options(players=4, deal_seed=5, team_play=True, rounds=2), 3),
]


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_every_legal_move_is_offered_exactly_once_and_nothing_else(
    options: Options, seed: int
) -> None:
    steps = set()
    for snapshot in random_snapshots(options, seed):
        steps.add(snapshot.state.step)
        for seat in range(options.players):
            for viewer in (Viewer(seat, False), Viewer(None, True)):
                context = sheet_context(snapshot, seat, viewer)
                legal = snapshot.game.legal_moves(snapshot.state, seat)
                others = Counter(move_attr(GAME, m) for m in legal if not isinstance(m, SaveDice))
                where = (snapshot.state_id, seat, viewer)
                assert Counter(offered_legal(context)) == others, where
                saves = {m for m in legal if isinstance(m, SaveDice)}
                assert saves <= composable(context, seat), where
                # no generic button duplicates a save the toggles already build
                assert not any('"save"' in b["move"] for b in context["buttons"]), where
                if context["save"]:
                    assert context["save"]["legal"] == bool(saves)
    assert {Step.START, Step.ROLL, Step.ACT, Step.SAVE} <= steps


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_a_device_that_may_not_act_now_gets_no_moves(options: Options, seed: int) -> None:
    n = options.players
    for snapshot in random_snapshots(options, seed, limit=40):
        turn = snapshot.turn
        for seat in range(n):
            other = sheet_context(snapshot, seat, Viewer((seat + 1) % n, False))
            watcher = sheet_context(snapshot, seat, Viewer(None, False))
            for context in (other, watcher):
                assert sendable(context) == set() and not context["markable"]
            own = sheet_context(snapshot, seat, Viewer(seat, False))
            if seat not in turn.players:  # someone else's turn, or the dice are due
                assert sendable(own) == set(), (snapshot.state_id, seat)
            else:
                assert sendable(own), (snapshot.state_id, seat)


def test_every_open_card_sends_its_move_and_only_blue_cards_flip() -> None:
    # Ann rolls 2 2 3 5 5 5: Three of a Kind, Two Pair and Four Dice Odd match
    snapshot = snapshot_of("sixis", NAMES[:2], [red(2, 2, 3, 5, 5, 5)], TWO)
    ann = sheet_context(snapshot, 0, Viewer(0, False))
    assert snapshot.state.step is Step.ACT
    low = card(ann, "low")
    # the illegal tap still reaches the engine, which says what Low needs
    assert json.loads(low["take"]["move"]) == {"kind": "take", "player": 0, "card": "low"}
    assert not low["take"]["legal"] and not low["flip"]["legal"]
    assert json.loads(low["flip"]["move"]) == {"kind": "flip", "player": 0, "card": "low"}
    assert low["face"]["tag"] == "blue · easy" and low["other"]["name"] == "Very Low"
    assert {c["card"] for c in cards_of(ann) if c["take"]["legal"]} == {
        "three_kind",
        "pairs",
        "odd",
    }
    assert json.loads(ann["sixis"]["take"]["move"])["card"] == "sixis"
    assert [a["label"] for a in ann["actions"]] == ["Take no card"]
    assert [d["value"] for d in ann["dice"]] == [2, 2, 3, 5, 5, 5]
    # the banner shows the six red dice
    assert [
        (d["colour"], d["value"]) for d in live_context(snapshot, Viewer(1, False), "sheet")["dice"]
    ] == [("red", v) for v in (2, 2, 3, 5, 5, 5)]

    flipped = snapshot_of(
        "sixis", NAMES[:2], [red(2, 2, 3, 5, 5, 5), FlipCard(0, "three_kind")], TWO
    )
    ann = sheet_context(flipped, 0, Viewer(0, False))
    full_house = card(ann, "three_kind")
    assert full_house["face"]["name"] == "Full House" and full_house["face"]["tag"] == "red · hard"
    assert full_house["flip"] is None and full_house["other"] is None  # red: nothing to flip
    # one card a turn: the save step that follows offers no card, and the cards carry none
    assert full_house["take"] is None and controls(ann) == []
    assert (
        ann["note"]
        == "You flipped Three of a Kind to Full House. Tap the dice to keep for your next turn, then Save."
    )
    assert [d["value"] for d in ann["save"]["dice"]] == [2, 2, 3, 5, 5, 5]
    assert ann["save"]["limit"] is None


def test_the_layout_follows_the_table_for_two_three_and_four_players() -> None:
    expected = {
        2: ("column", ["n", "s"], ["w", "e"]),
        3: ("three_arms", ["n", "se", "sw"], ["ne", "s", "nw"]),
        4: ("x", ["ne", "se", "sw", "nw"], ["e", "s", "w", "n"]),
    }
    for players, (shape, arm_areas, seat_areas) in expected.items():
        snapshot = snapshot_of("sixis", NAMES[:players], [], Options(players=players))
        context = sheet_context(snapshot, 0, Viewer(0, False))
        assert context["shape"] == shape
        assert [a["area"] for a in context["arms"]] == arm_areas
        assert [s["area"] for s in context["seats"]] == seat_areas
        slots = [[c["slot"] for c in a["cards"]] for a in context["arms"]]
        assert slots == [list(arm) for arm in TABLE_LAYOUTS[players].arms]
        # the step from the Sixis card outwards, for the diagonal stair
        assert all(
            [c["step"] for c in a["cards"]] == list(range(len(a["cards"]))) for a in context["arms"]
        )
        assert [c["card"] for a in context["arms"] for c in a["cards"]] == list(
            snapshot.state.cards
        )


def test_cards_out_of_reach_are_marked_but_still_reach_the_engine() -> None:
    snapshot = snapshot_of("sixis", NAMES[:3], [], Options(players=3, deal_seed=3))
    for seat in range(3):
        context = sheet_context(snapshot, seat, Viewer(seat, False))
        reach = {c["slot"] for c in cards_of(context)[:-1] if c["reach"]}
        assert reach == set(TABLE_LAYOUTS[3].reachable_slots(seat))
        far = [c for c in cards_of(context)[:-1] if not c["reach"]]
        assert len(far) == 3 and all(c["aria"].endswith("out of your reach") for c in far)
    # the roll is due: no moves yet; after it the far cards carry their moves too
    state = snapshot.state
    dice = red(6, 6, 6, 6, 6, 6)
    rolled = snapshot_of("sixis", NAMES[:3], [dice], Options(players=3, deal_seed=3))
    ann = sheet_context(rolled, 0, Viewer(0, False))
    far = [c for c in cards_of(ann)[:-1] if not c["reach"]]
    assert all(c["take"]["move"] and not c["take"]["legal"] for c in far)
    assert ann["sixis"]["take"]["legal"]  # six of a kind
    assert state.cards == rolled.state.cards


def test_a_line_says_what_dashed_cards_mean_when_some_are_out_of_reach(
    tmp_path: Path,
) -> None:
    """Players' phones: the dashed cards meant "out of your reach", but nothing on the
    sheet said so. A line under the cards says it while some open card is out of this
    seat's reach; with two players (every card in reach) there is none."""
    templates = create_app(Settings(data_dir=tmp_path)).state.templates

    def drawn(snapshot: Snapshot, seat: int, viewer: Viewer) -> str:
        context = sheet_context(snapshot, seat, viewer)
        return unescape(str(SheetCache().html(templates, "sixis", TEMPLATE, context)))

    three = snapshot_of("sixis", NAMES[:3], [], Options(players=3, deal_seed=3))
    legend = (
        "Dashed cards are out of your reach: you take from the two arms beside you"
        " and the Sixis card."
    )
    assert legend in drawn(three, 0, Viewer(0, False))
    # the table's screen, every sheet at once: each line names whose reach
    host_view = drawn(three, 1, Viewer(None, True))
    assert (
        "Dashed cards are out of Bob's reach: Bob takes from the two arms beside them"
        " and the Sixis card." in host_view
    )
    two = snapshot_of("sixis", NAMES[:2], [], TWO)
    assert "Dashed cards" not in drawn(two, 0, Viewer(0, False))


def test_taken_cards_show_under_the_takers_name_and_send_nothing() -> None:
    moves = [
        red(2, 2, 3, 5, 5, 5),
        FlipCard(0, "three_kind"),
        SaveDice(0, (5, 5)),
        blue(1, 2, 3, 4, 6, 6),
        TakeCard(1, "run_low"),
        SaveDice(1, ()),
    ]
    snapshot = snapshot_of("sixis", NAMES[:2], moves, TWO)
    assert snapshot.state.step is Step.START and snapshot.state.active == 0
    ann = sheet_context(snapshot, 0, Viewer(0, False))
    run = card(ann, "run_low")
    assert run["taken"] and run["taken_by"] == NAMES[1] and run["take"] is None
    assert run["flip"] is None
    bob_seat = ann["seats"][1]
    assert [t["name"] for t in bob_seat["taken"]] == ["Run 1-2-3"]
    assert [d["value"] for d in ann["seats"][0]["saved"]] == [5, 5]
    # Ann may keep her 5 5 or roll all six; no card is legal before the roll
    assert [a["label"] for a in ann["actions"]] == ["Keep 5 5, roll 4", "Roll all six"]
    assert not any(c["legal"] for c in controls(ann))
    bob = sheet_context(snapshot, 1, Viewer(1, False))
    assert bob["seats"][1]["taken"][0]["points"] == 25
    assert bob["scores"]["rows"][1]["points"] == [25] and bob["scores"]["rows"][1]["total"] == 25
    assert bob["note"] == f"{NAMES[0]}'s turn: keeping the saved dice or rolling all six."


def test_two_players_may_end_the_round_once_a_line_is_empty() -> None:
    # the line above the Sixis card goes: Three of a Kind, Two Pair, Low, High
    moves = [
        red(2, 2, 3, 5, 5, 5),
        TakeCard(0, "three_kind"),
        SaveDice(0, ()),
        blue(1, 1, 2, 2, 3, 3),
        TakeCard(1, "pairs"),
        SaveDice(1, ()),
        red(1, 1, 1, 2, 2, 2),
        TakeCard(0, "low"),
        SaveDice(0, ()),
        blue(6, 6, 6, 6, 5, 5),
        TakeCard(1, "high"),
        SaveDice(1, ()),
    ]
    snapshot = snapshot_of("sixis", NAMES[:2], moves, TWO)
    ann = sheet_context(snapshot, 0, Viewer(0, False))
    assert [a["label"] for a in ann["actions"]] == ["Play on: roll all six"]
    assert [a["label"] for a in ann["ending"]] == ["End the round"]
    assert json.loads(ann["ending"][0]["move"]) == {"kind": "end_round", "player": 0}
    # the note says why she may (it said only "keep your saved dice or roll all six")
    assert ann["note"].startswith("Your turn: roll all six, or end the round")
    assert "one side of the Sixis card is empty" in ann["note"]
    assert [t["name"] for t in ann["seats"][0]["taken"]] == ["Three of a Kind", "Low"]
    assert [r["total"] for r in ann["scores"]["rows"]] == [35, 40]

    over = snapshot_of("sixis", NAMES[:2], [*moves, EndRound(0)], TWO)
    assert over.outcome is not None
    ann = sheet_context(over, 0, Viewer(0, False))
    assert sendable(ann) == set() and ann["note"] == "The game is over."
    assert ann["scores"]["rounds"] == [{"round": 1, "ending": "Ann ended the round"}]
    assert [r["points"] for r in ann["scores"]["rows"]] == [[35], [40]]
    assert ann["round_text"] == "1 round played"


def test_two_players_with_every_card_gone_choose_to_end_or_play_on() -> None:
    """Rulebook, two players: "you may end the round, but you do not have to", also once
    every card is gone (the round ended by itself then). The player is offered both and told
    why; the other player reads that she chooses; the end card says she ended it."""
    moves: list[Any] = [
        red(2, 2, 3, 5, 5, 5), TakeCard(0, "three_kind"), SaveDice(0, ()),
        blue(1, 1, 2, 2, 3, 3), TakeCard(1, "pairs"), SaveDice(1, ()),
        red(1, 1, 1, 2, 2, 2), TakeCard(0, "low"), SaveDice(0, ()),
        blue(6, 6, 6, 6, 5, 5), TakeCard(1, "high"), SaveDice(1, ()),
    ]  # fmt: skip
    for seat, colour, dice, taken in (
        (0, red, (1, 1, 3, 3, 5, 5), "odd"),
        (1, blue, (2, 2, 4, 4, 6, 6), "even"),
        (0, red, (1, 2, 3, 4, 4, 6), "run_low"),
        (1, blue, (1, 1, 2, 4, 5, 6), "run_high"),
    ):
        moves += [RollAll(seat), colour(*dice), TakeCard(seat, taken), SaveDice(seat, ())]
    new_table = replace(TWO, no_card_left_ends_round=False)  # every new table's rule
    snapshot = snapshot_of("sixis", NAMES[:2], moves, new_table)
    assert snapshot.outcome is None  # no card left, yet the round goes on
    ann = sheet_context(snapshot, 0, Viewer(0, False))
    assert all(c["taken"] for arm in ann["arms"] for c in arm["cards"])
    assert [a["label"] for a in ann["actions"]] == ["Play on: roll all six"]
    assert [a["label"] for a in ann["ending"]] == ["End the round"]
    assert ann["note"] == (
        "Your turn: every card is gone but the Sixis card. End the round, or roll all six "
        "and play on for the Sixis card: with two players you choose."
    )
    bob = sheet_context(snapshot, 1, Viewer(1, False))
    assert bob["note"] == (
        "Ann's turn: playing on or ending the round: every card is gone but the Sixis card."
    )
    over = snapshot_of("sixis", NAMES[:2], [*moves, EndRound(0)], new_table)
    assert over.outcome is not None
    outcome = live_context(over, Viewer(1, False), "sheet")["outcome"]
    assert [(r["round"], r["ending"]) for r in outcome["rounds"]] == [(1, "Ann ended the round")]


def test_the_end_card_tells_each_round_per_player_and_why_it_ended(tmp_path: Path) -> None:
    """The players' phones: the end card was a table with a column per card taken (mostly
    dashes) and did not say why the round ended. It says why, then per player the cards
    taken and the round's points; the totals follow, with no column per card."""
    moves = [
        red(2, 2, 3, 5, 5, 5),
        TakeCard(0, "three_kind"),
        SaveDice(0, ()),
        blue(4, 4, 4, 4, 4, 4),
        TakeCard(1, SIXIS),  # ends the round, and the one-round game
    ]
    over = snapshot_of("sixis", NAMES[:2], moves, TWO)
    assert over.outcome is not None
    outcome = live_context(over, Viewer(0, False), "sheet")["outcome"]
    assert [(r["round"], r["ending"]) for r in outcome["rounds"]] == [
        (1, "Bob took the Sixis card")
    ]
    players = outcome["rounds"][0]["players"]
    assert [(p["name"], [c["name"] for c in p["cards"]], p["points"]) for p in players] == [
        ("Ann", ["Three of a Kind"], 15),
        ("Bob", ["Sixis"], 60),
    ]
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = render_live(templates, "t", SheetCache(), over, Viewer(0, False), "sheet").html
    card = html[html.index('class="outcome card"') : html.index('class="sheets')]
    assert 'Round 1: <span class="round-ending">Bob took the Sixis card</span>' in card
    assert "round 1: Three of a Kind" not in card and "–" not in card  # no column per card
    # each round's points too, a column a TV's board shows (a phone hides them: companion.css)
    row = r"<th>(\w+)</th><td class=\"round-column\">\d+</td><td class=\"total\">(\d+)</td>"
    assert re.findall(row, card) == [
        ("Bob", "60"),
        ("Ann", "15"),
    ]


def test_points_per_round_and_team_totals_match_the_engine() -> None:
    options = Options(players=4, deal_seed=5, team_play=True, rounds=2)
    moves = random_moves(options, seed=3, limit=1000)
    last = snapshot_of("sixis", NAMES, moves, options)
    assert last.outcome is not None  # the game was played to its end
    context = sheet_context(last, 0, Viewer(0, False))
    scores = context["scores"]
    assert [r["round"] for r in scores["rounds"]] == [1, 2]
    assert all(r["ending"] != "playing" for r in scores["rounds"])
    for row in scores["rows"]:
        assert sum(row["points"]) == row["total"]
    for first, team in enumerate(scores["teams"]):
        assert team["total"] == last.scores[first].total == last.scores[first + 2].total
        assert team["points"] == [
            scores["rows"][first]["points"][r] + scores["rows"][first + 2]["points"][r]
            for r in range(2)
        ]
    assert context["total"] == last.scores[0].total


def test_the_roller_s_own_sheet_asks_them_to_roll_the_others_name_them() -> None:
    # Ann's phone read "Ann: roll 6 dice." while every other note on her own sheet says
    # "your turn"; she rolls, saves 5 5, keeps them: "roll the 4 dice you did not save"
    snapshot = snapshot_of("sixis", NAMES[:2], [], TWO)
    own = sheet_context(snapshot, 0, Viewer(0, False))
    other = sheet_context(snapshot, 0, Viewer(1, False))
    assert own["note"] == "Your turn: roll your 6 dice."
    assert other["note"] == "Ann: roll 6 dice."
    moves = [red(2, 2, 3, 5, 5, 6), Decline(0), SaveDice(0, (5, 5))]
    moves += [blue(1, 2, 3, 4, 4, 6), Decline(1), SaveDice(1, ()), KeepSaved(0)]
    kept = snapshot_of("sixis", NAMES[:2], moves, TWO)
    assert kept.state.step is Step.ROLL
    ann = sheet_context(kept, 0, Viewer(0, False))
    assert ann["note"] == "Your turn: roll the 4 dice you did not save."
    assert sheet_context(kept, 0, Viewer(1, False))["note"] == "Ann: roll 4 dice."
    # the advanced start's roll, on the roller's own sheet
    options = Options(players=3, advanced_start=True, deal_seed=9)
    bob = sheet_context(snapshot_of("sixis", NAMES[:3], [], options), 1, Viewer(1, False))
    assert (
        bob["note"] == "Advanced start: roll your six dice; you may save some for your first turn."
    )


def test_the_advanced_start_save_shows_the_engines_limit() -> None:
    options = Options(players=3, advanced_start=True, deal_seed=9)
    # Ann starts; Bob (second) rolls six and may save up to 2
    snapshot = snapshot_of("sixis", NAMES[:3], [blue(1, 1, 1, 2, 3, 6)], options)
    bob = sheet_context(snapshot, 1, Viewer(1, False))
    assert snapshot.state.step is Step.START_SAVE
    assert bob["save"]["limit"] == 2
    assert bob["note"].startswith("Advanced start")
    # the cards wait for the card step: no take or flip that only answers "save dice first"
    assert controls(bob) == [] and bob["save"] is not None


def test_the_cards_carry_take_and_flip_only_in_the_card_step() -> None:
    """Ann's turn began with two saved dice: her sheet showed a dashed red "flip" on every
    card, out of reach too, and a tap only heard "roll first"; so did Bob's while he was to
    hand on the opening of round 2. The cards carry their controls in the card step only,
    there for every card, legal or not (a tap hears the engine's reason)."""
    moves = [red(2, 2, 3, 5, 5, 6), Decline(0), SaveDice(0, (5, 5))]
    moves += [blue(1, 2, 3, 4, 4, 6), Decline(1), SaveDice(1, ())]
    start = snapshot_of("sixis", NAMES[:2], moves, TWO)
    ann = sheet_context(start, 0, Viewer(0, False))
    assert [a["label"] for a in ann["actions"]] == ["Keep 5 5, roll 4", "Roll all six"]
    assert controls(ann) == []
    card_step = snapshot_of("sixis", NAMES[:2], [*moves, KeepSaved(0), red(1, 2, 4, 6)], TWO)
    ann = sheet_context(card_step, 0, Viewer(0, False))
    assert card(ann, "low")["take"] and card(ann, "low")["flip"]
    assert any(not c["legal"] for c in controls(ann))  # the illegal ones answer why
    two_rounds = replace(TWO, rounds=2)
    opener = snapshot_of(
        "sixis", NAMES[:2], [red(6, 6, 6, 6, 6, 6), TakeCard(0, SIXIS)], two_rounds
    )
    assert opener.state.opener_open and opener.state.round == 2
    bob = sheet_context(opener, 1, Viewer(1, False))
    assert controls(bob) == []


def test_the_template_draws_exactly_the_moves_of_the_view(tmp_path: Path) -> None:
    """Positions of random games drawn by the real templates: the buttons carry exactly the
    moves of the view's context, and the Save button collects the die toggles."""
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    for options, seed in GAMES[:2]:
        for snapshot in random_snapshots(options, seed, limit=30):
            for seat in range(options.players):
                for viewer in (Viewer(seat, False), Viewer(None, True), Viewer(None, False)):
                    context = sheet_context(snapshot, seat, viewer)
                    html = str(SheetCache().html(templates, "sixis", TEMPLATE, context))
                    buttons = re.findall(r"<button[^>]*>", html)
                    moves = [
                        unescape(m) for b in buttons for m in re.findall(r'data-move="([^"]*)"', b)
                    ]
                    expected = [c["move"] for c in controls(context)]
                    expected += [a["move"] for a in context["actions"] + context["ending"]]
                    expected += [b["move"] for b in context["buttons"]]
                    toggles = [b for b in buttons if "data-toggle-value" in b]
                    if context["save"]:
                        expected.append(context["save"]["move"])
                        assert len(toggles) == 6
                        assert sum('data-move-collect="values"' in b for b in buttons) == 1
                    else:
                        assert toggles == []
                    assert Counter(moves) == Counter(expected), (snapshot.state_id, seat, viewer)
                    # every card on the table says its side in words, not by colour alone
                    on_table = [c for c in cards_of(context) if not c.get("taken")]
                    assert html.count('class="sxi-tag') == len(on_table)


def test_describe_names_cards_and_saves() -> None:
    from companion.web.views.sixis import describe

    assert describe(TakeCard(0, "three_kind")) == "Take Three of a Kind / Full House"
    assert describe(FlipCard(0, "odd")) == "Flip Four Dice Odd to All Dice Odd"
    assert describe(SaveDice(0, (5, 5))) == "Save 5 5"
    assert describe(SaveDice(0, ())) == "Save no dice"
    assert describe(Decline(0)) == "Take no card"


# -- through the app ---------------------------------------------------------------------


@pytest.fixture
def sixis(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A 2-player Sixis table with a known deal: the host, Ann's device (seat 0, red dice,
    starts) and Bob's (seat 1, blue dice)."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        options = {"players": 2, "colours": ["red", "blue"], "layouts": [list(TWO_LAYOUT)]}
        table = create_table(host, "sixis", NAMES[:2], options)
        devices = {name: TestClient(app) for name in NAMES[:2]}
        for seat, name in enumerate(NAMES[:2]):
            seat_player(devices[name], table["code"], table["table_id"], seat)
        yield {**table, "host": host, **devices}


def live_html(client: TestClient, table_id: str) -> str:
    response = client.get(f"/t/{table_id}/live?view=sheet")
    assert response.status_code == 200, response.text
    return response.text


def data_move(page: str, card_id: str, kind: str) -> dict[str, Any]:
    """The move JSON of a card's take or flip control as the page carries it."""
    block = re.search(rf'data-card="{card_id}".*?</div>', page, re.S)
    assert block is not None, card_id
    for raw in re.findall(r'data-move="([^"]*)"', block.group(0)):
        move: dict[str, Any] = json.loads(unescape(raw))
        if move["kind"] == kind:
            return move
    raise AssertionError(f"no {kind} on {card_id}")


def test_a_roll_a_flip_a_save_and_a_refused_take_through_the_api(
    sixis: dict[str, Any],
) -> None:
    tid, ann, bob = sixis["table_id"], sixis["Ann"], sixis["Bob"]
    # Ann's device enters her roll: 2 2 3 5 5 5
    rolled = act(ann, tid, roll_json(*(("red", v) for v in (2, 2, 3, 5, 5, 5))), "ann-roll-1", 0)
    assert rolled.status_code == 200, rolled.text
    page = live_html(ann, tid)
    # a tap on Low sends the take it carries; the engine refuses with its rule
    low = data_move(page, "low", "take")
    refused = act(ann, tid, low, "ann-low-01", 1)
    assert refused.status_code == 409, refused.text
    assert refused.json() == {
        "reason": "illegal_move",
        "rule": "card_needs",
        "message": "Low needs a total of 18 or less",
    }
    # Ann flips Three of a Kind to Full House with the card's second control
    flip = data_move(page, "three_kind", "flip")
    assert flip == {"kind": "flip", "player": 0, "card": "three_kind"}
    assert act(ann, tid, flip, "ann-flip-1", 1).status_code == 200
    page = live_html(ann, tid)
    assert "Full House" in page and 'data-toggle-value="5"' in page
    # the Save button's move with the values the two pressed toggles give (table.js)
    save_button = re.search(r'data-move="([^"]*)" data-move-collect', page)
    assert save_button is not None
    save = json.loads(unescape(save_button.group(1)))
    assert act(ann, tid, {**save, "values": [5, 5]}, "ann-save-1", 2).status_code == 200
    state = sixis["host"].get(f"/api/tables/{tid}/state").json()
    assert state["state"]["state"]["saved"] == [[5, 5], []]
    assert state["turn"]["step"] == "roll" and state["turn"]["active"] == 1

    # Bob rolls 1 2 3 4 6 6; his tap on the (now red) Full House is refused
    assert (
        act(
            bob, tid, roll_json(*(("blue", v) for v in (1, 2, 3, 4, 6, 6))), "bob-roll-1", 3
        ).status_code
        == 200
    )
    bob_page = live_html(bob, tid)
    full_house = data_move(bob_page, "three_kind", "take")
    refused = act(bob, tid, full_house, "bob-fh-001", 4)
    assert refused.status_code == 409
    assert refused.json()["rule"] == "card_needs"
    assert refused.json()["message"] == "Full House needs three of one value and two of another"
    # Ann's device may not tap for Bob
    assert (
        act(ann, tid, data_move(bob_page, "run_low", "take"), "ann-for-bob", 4).status_code == 403
    )
    # Bob takes Run 1-2-3; Ann's page shows it under his name and his points
    taken = act(bob, tid, data_move(bob_page, "run_low", "take"), "bob-take-1", 4)
    assert taken.status_code == 200, taken.text
    ann_page = live_html(ann, tid)
    bob_seat = re.search(r'<div class="sxi-seat[^"]*" data-seat="1">.*?</div>', ann_page, re.S)
    assert bob_seat is not None and "Run 1-2-3 <b>25</b>" in bob_seat.group(0)
    assert "taken by" in ann_page
    assert "data-move" not in ann_page  # Bob's turn: nothing to tap on Ann's device


def test_the_final_board_shows_who_took_the_sixis_card(tmp_path: Path) -> None:
    """The family's final board marked every card taken "taken by ..." but the Sixis card
    in the middle looked untouched, as if still to take, though Bob had taken it and so
    ended the game. On the final board it reads "taken by Bob" like the others."""
    moves = [red(2, 2, 3, 5, 5, 5), TakeCard(0, "three_kind"), SaveDice(0, ())]
    moves += [blue(4, 4, 4, 4, 4, 4), TakeCard(1, SIXIS)]
    over = snapshot_of("sixis", NAMES[:2], moves, TWO)
    assert over.outcome is not None
    ann = sheet_context(over, 0, Viewer(0, False))
    assert ann["sixis"]["taken_by"] == "Bob"
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = unescape(str(SheetCache().html(templates, "sixis", TEMPLATE, ann)))
    centre = html[html.index('class="sxi-centre"') : html.index("sxi-seat ")]
    assert "taken by Bob" in centre and 'aria-label="Sixis, taken by Bob"' in centre
    # before the end the card is there to take
    playing = sheet_context(snapshot_of("sixis", NAMES[:2], moves[:4], TWO), 1, Viewer(1, False))
    assert playing["sixis"]["taken_by"] is None


def test_the_log_names_a_take_by_the_side_taken(host: TestClient) -> None:
    """Ann flips Three of a Kind to its red side, Full House, and takes it a turn later;
    the host undoes the take and Ann takes it again. The game log read "Take Three of a
    Kind / Full House" each time, both sides, as if either could have been taken: it names
    the side the card showed when it was taken, on the struck-through row, on the undo's
    and on the take that stands (worked out from the stored game: a stored move names
    its card only)."""
    from tests.web.helpers import act, create_table, roll_json

    layout = ["three_kind", "pairs", "low", "high", "odd", "even", "run_low", "run_high"]
    options = {"players": 2, "colours": ["red", "blue"], "layouts": [layout]}
    tid = create_table(host, "sixis", ["Ann", "Bob"], options)["table_id"]
    moves: list[dict[str, Any]] = [
        roll_json(*(("red", v) for v in (2, 2, 3, 5, 5, 5))),
        {"kind": "flip", "player": 0, "card": "three_kind"},
        {"kind": "save", "player": 0, "values": []},
        roll_json(*(("blue", v) for v in (1, 2, 3, 4, 6, 6))),
        {"kind": "decline", "player": 1},
        {"kind": "save", "player": 1, "values": []},
        roll_json(*(("red", v) for v in (2, 2, 3, 3, 3, 6))),
        {"kind": "take", "player": 0, "card": "three_kind"},
    ]
    for number, move in enumerate(moves):
        assert act(host, tid, move, f"sixis-move-{number}").status_code == 200
    assert (
        host.post(f"/api/tables/{tid}/undo", json={"action_id": "host-undo-1"}).status_code == 200
    )
    assert act(host, tid, moves[-1], "sixis-take-again").status_code == 200
    log = " ".join(host.get(f"/t/{tid}/log").text.split())
    assert "Full House / " not in log and "Three of a Kind / " not in log, log
    undone = '<span class="sr-only">(undone)</span>'  # struck through, and said
    assert f"<td>8</td> <td>host</td> <td>Take Full House {undone}</td>" in log, log
    assert "<td>9</td> <td>host</td> <td>Undid: Take Full House</td>" in log, log
    assert "<td>10</td> <td>host</td> <td>Take Full House</td>" in log, log
    assert "<td>2</td> <td>host</td> <td>Flip Three of a Kind to Full House</td>" in log, log
