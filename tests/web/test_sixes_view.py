"""The Sixes page: the view holds no rules (every legal move of a seat is offered exactly
once, nothing the engine does not list is offered as legal, a device that may not act gets
no moves), the POUND button on every other player's device while the table-pound is open,
the roller's buttons from the legal moves, and the shared table (pot, purses, number up,
roller, betting, last roll, last turn). Then the same through the app: a Sixes table, two
pounds, the first accepted and the second refused by the engine with its rule."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules.base import Move, Rejection
from companion.rules.registry import find_game
from companion.rules.sixes import EndGame, GoOn, Options, Pass, Pound, Step
from companion.simulate import random_action
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.web.app import create_app
from companion.web.fragments import SheetCache, render_live
from companion.web.settings import Settings
from companion.web.views import SheetInput, move_attr, sheet_context
from companion.web.views.sixes import TEMPLATE
from tests.web.helpers import (
    act,
    create_table,
    finished_snapshot,
    roll,
    roll_json,
    seat_player,
    snapshot_of,
)

NAMES = ["Ann", "Bob", "Cy"]
# SheetInput names only the sheet's own seat; until the web layer passes every name, the
# page names the other seats as the engine does ("Player 2"); see SheetInput.seat_names
EVERY_NAME = "players" in SheetInput.__dataclass_fields__


def shown(seat: int, on_sheet_of: int) -> str:
    """How `seat` is named on the sheet of seat `on_sheet_of`."""
    return NAMES[seat] if EVERY_NAME or seat == on_sheet_of else f"Player {seat + 1}"


def offered(context: dict[str, Any]) -> list[str]:
    """Every move the sheet offers as legal: the POUND button, the roller's buttons and any
    generic button."""
    moves = []
    if context["pound"] and context["pound"]["legal"]:
        moves.append(context["pound"]["move"])
    moves += [a["move"] for a in context["actions"]]
    moves += [b["move"] for b in context["buttons"] if b["legal"]]
    return moves


def sendable(context: dict[str, Any]) -> set[str]:
    """Every move a tap on this sheet could send, legal or not."""
    moves = {a["move"] for a in context["actions"]} | {b["move"] for b in context["buttons"]}
    if context["pound"]:
        moves.add(context["pound"]["move"])
    return {m for m in moves if m}


def random_snapshots(players: int, seed: int) -> Iterator[Snapshot]:
    """A snapshot after every action of one random game (moves from the engine)."""
    game = find_game("sixes")
    rng = random.Random(seed)
    state = game.setup(game.options_for(players))
    moves: list[Move] = []
    while game.outcome(state) is None and len(moves) < 60:
        # the voluntary end_game would end most random games at once; it is still offered
        # (and checked) at the start of every roller's turn
        move = random_action(game, state, rng, avoid=frozenset({EndGame.kind}))
        moves.append(move)
        state = game.play(state, move)
    names = [f"P{i}" for i in range(players)]
    for count in range(len(moves) + 1):
        yield snapshot_of("sixes", names, moves[:count])


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (4, 7), (5, 11)])
def test_every_legal_move_is_offered_exactly_once_and_nothing_else(players: int, seed: int) -> None:
    seen_steps = set()
    for snapshot in random_snapshots(players, seed):
        seen_steps.add(snapshot.state.step)
        for seat in range(players):
            for viewer in (Viewer(seat=seat, host=False), Viewer(seat=None, host=True)):
                context = sheet_context(snapshot, seat, viewer)
                engine = Counter(
                    move_attr(snapshot.game, m)
                    for m in snapshot.game.legal_moves(snapshot.state, seat)
                )
                assert Counter(offered(context)) == engine, (snapshot.state_id, seat, viewer)
    # the random game went through every step a page draws
    assert {Step.POUND, Step.ROLL, Step.DECIDE} <= seen_steps


def test_a_device_that_may_not_act_on_a_sheet_gets_no_moves() -> None:
    for snapshot in random_snapshots(4, seed=3):
        for seat in range(4):
            other = sheet_context(snapshot, seat, Viewer(seat=(seat + 1) % 4, host=False))
            watcher = sheet_context(snapshot, seat, Viewer(seat=None, host=False))
            for context in (other, watcher):
                assert sendable(context) == set() and not context["markable"]


def test_the_pound_button_during_the_call_and_after_the_first_pound() -> None:
    called = snapshot_of("sixes", NAMES, [])  # Ann (seat 0) rolls and has called 1
    ann, bob, cy = (sheet_context(called, s, Viewer(s, False)) for s in range(3))
    assert ann["pound"] is None  # the roller does not pound
    assert [a["label"] for a in ann["actions"]] == ["End the game here"]
    # final for everyone: the button asks once (a tap lands on it at the turn's start)
    assert ann["actions"][0]["confirm"].startswith("This ends the game for everyone")
    for context, seat in ((bob, 1), (cy, 2)):
        assert context["pound"]["legal"] and context["pound"]["open"]
        assert json.loads(context["pound"]["move"]) == {"kind": "pound", "player": seat}
    assert bob["table"]["number_up"] == 1 and bob["table"]["pot"] == 50  # starter pot 5 x 10

    pounded = snapshot_of("sixes", NAMES, [Pound(1)])
    bob = sheet_context(pounded, 1, Viewer(1, False))
    cy = sheet_context(pounded, 2, Viewer(2, False))
    # Cy's button stays (a late tap must hear the engine's refusal) but is not legal
    assert cy["pound"]["move"] == move_attr(pounded.game, Pound(2))
    assert not cy["pound"]["legal"] and not cy["pound"]["open"]
    assert cy["pound"]["hint"] == f"{shown(1, 2)} won this table-pound"
    assert bob["pound"]["hint"] == "You won this table-pound"
    assert cy["table"]["betting"] == [shown(1, 2)] and cy["table"]["pounded_by"] == shown(1, 2)
    assert cy["table"]["pot"] == 60  # Bob's bet on 1 went in
    assert [t["text"] for t in bob["status"]] == ["in the betting", "won the pound"]


def test_a_pound_the_purse_cannot_cover_says_why_before_the_tap(tmp_path: Path) -> None:
    """Players' phones: Cy's greyed POUND button still read "First pound after the call of
    1 wins"; why Cy could not pound showed only after a tap. The button says it, in the
    engine's words for that refusal, and stays tappable (the engine answers a tap)."""
    poor = Options(players=3, purses=(500, 500, 100))  # the bets from 1 to 6 cost 210
    called = snapshot_of("sixes", NAMES, [], poor)
    cy = sheet_context(called, 2, Viewer(2, False))
    with pytest.raises(Rejection) as refusal:
        called.game.check(called.state, Pound(2))
    assert refusal.value.rule == "cannot_cover"
    assert not cy["pound"]["legal"] and cy["pound"]["move"] == move_attr(called.game, Pound(2))
    assert cy["pound"]["hint"] == (
        "You can't cover the bets from 1 to 6 (210 coins); your purse holds 100"
    )
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = unescape(str(SheetCache().html(templates, "sixes", TEMPLATE, cy)))
    assert "You can't cover the bets from 1 to 6" in html and "First pound" not in html
    # Bob's purse covers them: his button reads as before
    bob = sheet_context(called, 1, Viewer(1, False))
    assert bob["pound"]["legal"]
    assert bob["pound"]["hint"] == "First pound after the call of\u00a01 wins"


def test_the_roller_passes_or_goes_on_after_a_safe_roll() -> None:
    safe = snapshot_of("sixes", NAMES, [Pound(1), roll(("white", 3), ("white", 4))])
    ann = sheet_context(safe, 0, Viewer(0, False))
    assert [(a["kind"], a["label"]) for a in ann["actions"]] == [
        ("pass", "Pass: share the pot (60)"),
        ("go_on", "Go on: call 2"),
    ]
    assert {json.loads(a["move"])["kind"] for a in ann["actions"]} == {"pass", "go_on"}
    assert ann["buttons"] == []  # drawn by the page, so no generic duplicates
    bob = sheet_context(safe, 1, Viewer(1, False))
    assert bob["pound"] is None and bob["actions"] == []  # no call: nothing to pound
    assert [d["value"] for d in bob["table"]["last_roll"]] == [3, 4]
    # the host's table view offers the roller's choice on the roller's sheet
    host = sheet_context(safe, 0, Viewer(None, True))
    assert {a["kind"] for a in host["actions"]} == {"pass", "go_on"}


def test_a_pass_with_nobody_betting_says_the_pot_goes_back_to_the_roller() -> None:
    # nobody pounded: a pass hands the whole pot back to Ann, which "share the pot" hid
    safe = snapshot_of("sixes", NAMES, [roll(("white", 3), ("white", 4))])
    ann = sheet_context(safe, 0, Viewer(0, False))
    assert [(a["kind"], a["label"]) for a in ann["actions"]] == [
        ("pass", "Pass: take the pot back (50)"),
        ("go_on", "Go on: call 2"),
    ]
    passed = snapshot_of("sixes", NAMES, [roll(("white", 3), ("white", 4)), Pass(0)])
    table = sheet_context(passed, 1, Viewer(1, False))["table"]
    assert table["last_turn"]["text"] == (
        f"{shown(0, 1)} passed after 1; nobody was betting: the pot went back"
    )
    assert table["last_turn"]["shares"] == [{"name": shown(0, 1), "coins": 50}]


def test_a_lost_turn_is_told_in_words_with_the_shares() -> None:
    moves = [
        Pound(1),
        roll(("white", 3), ("white", 4)),  # safe on 1
        GoOn(0),
        Pound(2),  # Cy joins on 2
        roll(("white", 2), ("white", 5)),  # 2 shows: Ann loses, Bob and Cy share
    ]
    lost = snapshot_of("sixes", NAMES, moves)
    table = sheet_context(lost, 2, Viewer(2, False))["table"]
    # pot: starter 50 + Bob 10 on 1 + Bob 20 and Cy 20 on 2 = 100, shared 50/50
    assert table["last_turn"]["result"] == "loss"
    assert (
        table["last_turn"]["text"] == f"{shown(0, 2)} lost on 2; the pot of 100 went to the betters"
    )
    assert table["last_turn"]["shares"] == [
        {"name": shown(1, 2), "coins": 50},
        {"name": "Cy", "coins": 50},
    ]
    # the dice went to Bob, who dropped his starter pot (50) and called 1
    assert [p["purse"] for p in table["purses"]] == [450, 470, 530]
    assert [p["change"] for p in table["purses"]] == [-50, -30, 30]
    assert table["roller"] == shown(1, 2) and table["number_up"] == 1 and table["pot"] == 50
    assert [p["roller"] for p in table["purses"]] == [False, True, False]


def test_a_win_before_6_names_the_double_6s() -> None:
    # only double 6s win before the number up reaches 6 (rulebook, "Outcomes"); the line
    # said "Ann won on 1", which read as if the 1 had won
    moves = [Pound(1), roll(("white", 6), ("white", 6))]
    table = sheet_context(snapshot_of("sixes", NAMES, moves), 0, Viewer(0, False))["table"]
    assert table["last_turn"]["result"] == "win"
    assert table["last_turn"]["text"] == "Ann rolled double 6s on 1 and took the pot of 60"


def test_the_final_screen_signs_won_and_lost_alike_in_both_tables(tmp_path: Path) -> None:
    """Players' phones: the end card's "won/lost" read "470" and "-150" where the purses
    table on the same screen read "+470" and "-150" (a hyphen there, the typographic
    minus in the end card's other numbers). Both write a gain with "+" and a loss with
    the minus sign (U+2212)."""
    over = finished_snapshot("sixes")  # Dan won 470; Ann, Ben and Cat lost
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = render_live(templates, "t", SheetCache(), over, Viewer(None, True), "table").html
    card = html[html.index('class="outcome card"') : html.index('class="sheets')]
    columns = re.findall(r"<th[^>]*>([^<]*)</th>", card.split("</thead>")[0])
    won_lost = columns.index("won/lost") - 1  # the first heading is over the names
    cells = re.findall(r"<tr[^>]*><th[^>]*>(\w+)</th>((?:<td[^>]*>[^<]*</td>)+)</tr>", card)
    end_card = {name: re.findall(r"<td[^>]*>([^<]*)</td>", tds)[won_lost] for name, tds in cells}
    sheets = html[html.index('class="sheets') :]
    purses = re.findall(
        r"<th>(\w+)[^/]*?</th>\s*<td class=\"purse\">\d+</td>\s*"
        r"<td class=\"change\">([^<]*)</td>",
        sheets,
    )
    expected = {"Ann": "\u2212150", "Ben": "\u2212170", "Cat": "\u2212150", "Dan": "+470"}
    assert end_card == expected
    assert dict(purses) == expected


def test_the_last_roll_says_whose_roll_it_was(tmp_path: Path) -> None:
    """The players' tablets: "Last roll 4 6" stood right above "Ann lost on 1", so the new
    roller's safe roll read as the roll Ann lost on. The roll says whose it was and for
    which number; the roll that ended a turn names that turn's roller."""
    ann_lost = [Pound(1), roll(("white", 1), ("white", 5))]  # 1 shows: Ann loses on 1
    lost = sheet_context(snapshot_of("sixes", NAMES, ann_lost), 2, Viewer(2, False))["table"]
    assert lost["last_roll_by"] == f"{shown(0, 2)}'s roll on the call of 1"
    # Bob, the next roller, rolls 4 6 on 1: safe, and Ann's lost turn is still the last one
    bob_safe = snapshot_of("sixes", NAMES, [*ann_lost, roll(("white", 4), ("white", 6))])
    cy = sheet_context(bob_safe, 2, Viewer(2, False))
    table = cy["table"]
    assert [d["value"] for d in table["last_roll"]] == [4, 6]
    assert table["last_roll_by"] == f"{shown(1, 2)}'s roll on the call of 1"
    assert table["last_turn"]["text"].startswith(f"{shown(0, 2)} lost on 1")
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = str(SheetCache().html(templates, "sixes", TEMPLATE, cy))
    last = html[html.index('aria-label="last roll"') : html.index("sixes-last-turn")]
    assert f"{shown(1, 2)}&#39;s roll on the call of 1" in last


def test_names_come_from_the_web_layer_or_the_engines_wording() -> None:
    snapshot = snapshot_of("sixes", NAMES, [])
    fields: dict[str, Any] = {
        "game": snapshot.game,
        "state": snapshot.state,
        "seat": 1,
        "name": "Bob",
        "turn": snapshot.turn,
        "score": snapshot.scores[1],
        "legal": (),
        "markable": False,
        "outcome": None,
    }
    if EVERY_NAME:
        fields["players"] = tuple(NAMES)
    assert SheetInput(**fields).seat_names(3) == [shown(s, 1) for s in range(3)]
    # without the others' names: this sheet's own name, and the engine's wording
    del fields["players"]
    assert SheetInput(**fields).seat_names(3) == ["Player 1", "Bob", "Player 3"]


def test_the_template_draws_exactly_the_moves_of_the_view(tmp_path: Path) -> None:
    """Every position of a random game, drawn by the real templates: the buttons carry
    exactly the moves of the view's context, and only POUND races."""
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    drawn_steps = set()
    for snapshot in random_snapshots(3, seed=5):
        for seat in range(3):
            viewers = (Viewer(seat, False), Viewer(None, True), Viewer(None, False))
            for viewer in viewers:
                context = sheet_context(snapshot, seat, viewer)
                html = str(SheetCache().html(templates, "sixes", TEMPLATE, context))
                buttons = re.findall(r"<button[^>]*>", html)
                moves = [
                    unescape(m) for b in buttons for m in re.findall(r'data-move="([^"]*)"', b)
                ]
                expected = [a["move"] for a in context["actions"]]
                expected += [b["move"] for b in context["buttons"]]
                if context["pound"]:
                    expected.append(context["pound"]["move"])
                assert Counter(moves) == Counter(expected), (snapshot.state_id, seat, viewer)
                racing = [b for b in buttons if "data-race" in b]
                assert len(racing) == (1 if context["pound"] else 0)
                assert all("sixes-pound" in b for b in racing)
                assert (
                    f'data-pot="{snapshot.state.pot}"' in html or snapshot.state.step is Step.OVER
                )
                drawn_steps.add(snapshot.state.step)
    assert drawn_steps == set(Step)


# -- through the app ---------------------------------------------------------------------


@pytest.fixture
def sixes(app: Any) -> Iterator[dict[str, Any]]:
    """A 3-player Sixes table: the host, and devices for Ann (seat 0, rolls first), Bob
    (seat 1) and Cy (seat 2)."""
    with TestClient(app) as host:
        table = create_table(host, "sixes", NAMES, {"players": 3})
        devices = {name: TestClient(app) for name in NAMES}
        for seat, name in enumerate(NAMES):
            seat_player(devices[name], table["code"], table["table_id"], seat)
        yield {**table, "host": host, **devices}


def live_html(client: TestClient, table_id: str) -> str:
    response = client.get(f"/t/{table_id}/live?view=sheet")
    assert response.status_code == 200, response.text
    return response.text


def test_two_pounds_the_first_wins_and_the_second_hears_the_engine(
    sixes: dict[str, Any],
) -> None:
    tid = sixes["table_id"]
    # every other player's page shows a POUND button that races (no stale-view check)
    for name, seat in (("Bob", 1), ("Cy", 2)):
        page = live_html(sixes[name], tid)
        button = re.search(r'<button[^>]*class="sixes-pound legal"[^>]*>', page)
        assert button is not None, name
        assert "data-race" in button.group(0)
        assert f"&#34;player&#34;:{seat}" in button.group(0)
    assert "sixes-pound" not in live_html(sixes["Ann"], tid)  # the roller's page has none

    # both saw state 0; Bob's pound arrives first, Cy's (sent as data-race sends it: no
    # expected_state_id) is judged by the engine, not refused as a stale view
    first = act(sixes["Bob"], tid, {"kind": "pound", "player": 1}, "bob-pound-1", 0)
    assert first.status_code == 200 and first.json()["state_id"] == 1
    second = act(sixes["Cy"], tid, {"kind": "pound", "player": 2}, "cy-pound-01")
    assert second.status_code == 409, second.text
    body = second.json()
    assert body["reason"] == "illegal_move" and body["rule"] == "pound_taken"
    assert body["message"].startswith("someone else pounded first")
    # drawn at state 0 the same pound is still of this call (the engine's Turn says the
    # call goes on after the winning pound): the loser hears the rule, not "stale view"
    late = act(sixes["Cy"], tid, {"kind": "pound", "player": 2}, "cy-pound-02", 0)
    assert (late.json()["reason"], late.json()["rule"]) == ("illegal_move", "pound_taken")

    # Cy's page now shows who won; Ann (the roller, active) enters a safe roll herself
    assert f"{shown(1, 2)} won this table-pound" in live_html(sixes["Cy"], tid)
    rolled = act(sixes["Ann"], tid, roll_json(("white", 3), ("white", 4)), "ann-roll-01", 1)
    assert rolled.status_code == 200, rolled.text
    ann_page = live_html(sixes["Ann"], tid)
    assert "Go on: call 2" in ann_page and "Pass: share the pot (60)" in ann_page
    assert "data-move" not in live_html(sixes["Bob"], tid)  # nothing for Bob to do now
    # the roller goes on: the next call opens a new table-pound
    go_on = act(sixes["Ann"], tid, {"kind": "go_on", "player": 0}, "ann-go-on-1", 2)
    assert go_on.status_code == 200
    cy_page = live_html(sixes["Cy"], tid)
    assert 'data-number-up="2"' in cy_page and 'class="sixes-pound legal"' in cy_page


def test_the_stakes_line_says_what_joining_the_betting_needs_in_plain_words(
    tmp_path: Path,
) -> None:
    """The family read "a newcomer on 1 must cover the bets to 6: 210" as a charge of 210
    for pounding; what it means is the purse a newcomer needs (the house rule: the bets
    from the number up to 6), and the line says so."""
    called = snapshot_of("sixes", NAMES, [])
    bob = sheet_context(called, 1, Viewer(1, False))
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    html = unescape(str(SheetCache().html(templates, "sixes", TEMPLATE, bob)))
    stakes = re.search(r'<p class="sixes-stakes">(.*?)</p>', html, re.S)
    assert stakes is not None
    assert " ".join(stakes.group(1).split()) == (
        "Stakes ×10 · starter pot 50 · to join the betting on 1, a purse needs 210 "
        "(the bets from 1 to 6)"
    )
