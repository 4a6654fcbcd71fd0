"""What players read at a refusal and at the end of a game (found in a QA pass through every
game in a browser): the engine's "player N" becomes the seat's name, and the final breakdown
table has a column for every entry any player has, so each number sits under its heading."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules.base import Score
from companion.rules.registry import GAME_NAMES
from companion.rules.session import replay_record
from companion.table.access import Viewer
from companion.table.words import with_names
from companion.web.app import create_app
from companion.web.settings import Settings
from companion.web.views import breakdown_table, live_context
from tests.web.helpers import (
    QWIXX_ROLL_7,
    RECORDS,
    act,
    create_table,
    finished_snapshot,
    seat_player,
    snapshot_of,
)


def test_with_names_puts_the_seat_name_for_the_engines_player_number() -> None:
    players = ("Ann", "Bob", "Cid")
    assert with_names("player 3 has already passed", players) == "Cid has already passed"
    assert with_names("Player 1 wins; player 2 second", players) == "Ann wins; Bob second"
    # no such seat, or not a seat number at all: unchanged
    assert with_names("player 4 and 2 players", players) == "player 4 and 2 players"


def test_the_breakdown_table_has_a_column_for_every_players_entries() -> None:
    scores = [
        Score(player=2, total=60, breakdown=(("round 1: Sixis", 60),)),
        Score(player=0, total=35, breakdown=(("round 1: Low", 20), ("round 1: Odd", 15))),
        Score(player=1, total=0, breakdown=()),
    ]
    table = breakdown_table(scores, ("Ann", "Bob", "Cid"))
    assert table["columns"] == ["round 1: Sixis", "round 1: Low", "round 1: Odd"]
    assert table["cells"] == [[60, None, None], [None, 20, 15], [None, None, None]]


def test_every_final_number_sits_under_its_heading_in_every_game() -> None:
    for game_name in GAME_NAMES:
        snapshot = finished_snapshot(game_name)
        outcome = live_context(snapshot, Viewer(seat=None, host=True), "table")["outcome"]
        by_name = {snapshot.players[s.player]: s for s in snapshot.scores}
        for row in outcome["ranking"]:
            assert len(row["cells"]) == len(outcome["columns"]), game_name
            score = by_name[row["name"]]
            shown = dict(zip(outcome["columns"], row["cells"], strict=True))
            expected: dict[str, int] = {}
            for label, points in score.breakdown:
                expected[with_names(label, snapshot.players)] = (
                    expected.get(with_names(label, snapshot.players), 0) + points
                )
            assert {k: v for k, v in shown.items() if v is not None} == expected, game_name
            assert sum(v for v in row["cells"] if v is not None) == row["total"], game_name


def test_the_end_message_names_the_players() -> None:
    snapshot = finished_snapshot("qwixx")  # Kari, Ola, Mia; Mia wins with 144
    message = live_context(snapshot, Viewer(seat=0, host=False), "sheet")["outcome"]["message"]
    assert "Mia wins with 144" in message and "player 3" not in message


def test_a_refusal_names_the_player(tmp_path: Path) -> None:
    app: Any = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        bob = TestClient(app)
        seat_player(bob, table["code"], table["table_id"], 1)
        tid = table["table_id"]
        assert act(host, tid, QWIXX_ROLL_7, "roll-000001").status_code == 200
        assert act(bob, tid, {"kind": "pass", "player": 1}, "bob-pass-01").status_code == 200
        again = act(
            bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "bob-x-01"
        )
        # Bob's own device hears it in the second person
        assert again.status_code == 409
        assert again.json()["message"] == "you have already crossed or passed on this white sum"
        # the host's table view, tapping for Bob, reads whose move it was; others by name
        for_bob = act(
            host, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "host-x-01"
        )
        assert for_bob.json()["message"] == (
            "Bob: you have already crossed or passed on this white sum"
        )
        colour = act(
            bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 9}, "bob-x-02"
        )
        assert "player" not in colour.json()["message"]


def test_the_history_names_the_players(tmp_path: Path) -> None:
    app: Any = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        record = json.loads((RECORDS / "qwixx.json").read_text())
        assert host.post("/api/import", json=record).status_code == 201
        history = host.get("/history").text
        assert "Mia wins with 144" in history and "player 3" not in history


def test_a_locked_qwixx_row_says_locked_on_every_sheet(tmp_path: Path) -> None:
    app: Any = create_app(Settings(data_dir=tmp_path))
    colours = ["white", "white", "red", "yellow", "green", "blue"]
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        tid = table["table_id"]
        moves: list[dict[str, Any]] = []
        # Ann crosses red 2..6 on white sums (Bob crosses yellow), then red 12 and the lock
        for turn, (w1, w2) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (6, 6)]):
            dice = [
                {"colour": c, "value": v}
                for c, v in zip(colours, [w1, w2, 5, 1, 1, 1], strict=True)
            ]
            moves.append({"kind": "roll", "player": -1, "dice": dice})
            moves.append({"kind": "cross", "player": 0, "colour": "red", "number": w1 + w2})
            if turn < 5:
                moves.append({"kind": "cross", "player": 1, "colour": "yellow", "number": w1 + w2})
                moves.append({"kind": "pass", "player": turn % 2})
        for n, move in enumerate(moves):
            assert act(host, tid, move, f"lock-{n:04d}").status_code == 200
        page = host.get(f"/t/{tid}").text
        for seat in ("0", "1"):
            sheet = page.split(f'data-seat="{seat}"')[1]
            red = sheet.split('data-row="red"')[1].split('data-row="yellow"')[0]
            assert "<small>locked</small>" in red, seat
            yellow = sheet.split('data-row="yellow"')[1].split('data-row="green"')[0]
            assert "locked" not in yellow.split("</span>")[0], seat


def test_the_sixes_banner_does_not_ask_the_roller_to_pound() -> None:
    snapshot = snapshot_of("sixes", ["Ann", "Bob", "Cid", "Dee"], [])
    assert snapshot.turn.step == "pound" and snapshot.turn.active == 0
    assert 0 in snapshot.turn.players  # the roller may end the game, but does not pound
    text = live_context(snapshot, Viewer(seat=1, host=False), "sheet")["turn"]["text"]
    assert text == "Pound: waiting for you, Cid and Dee, or Ann rolls"  # on Bob's device


def card_and_banner_words(page: str) -> str:
    """A final screen's words that can name the winner: the banner but its score strip,
    and the end card above its score table (the strip and the table list every player),
    tags stripped."""
    banner = page.split('<header class="banner', 1)[1].split('<ul class="score-strip">', 1)[0]
    card = page.split('<section class="outcome card"', 1)[1]
    for table_starts in (
        '<section class="round-account"',
        '<div class="breakdown-scroll"',
        "<table",
    ):
        card = card.split(table_starts, 1)[0]
    return re.sub(r"<[^>]+>", " ", banner + card)


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_each_final_screen_names_the_winner_once(tmp_path: Path, game_name: str) -> None:
    """The end card said "Mia wins with 144" and under it "Winner: Mia": once is enough,
    on the table view, the scoreboard and a player's sheet alike."""
    app: Any = create_app(Settings(data_dir=tmp_path))
    record = json.loads((RECORDS / f"{game_name}.json").read_text())
    outcome = replay_record(record).outcome()
    assert outcome is not None
    winners = [record["players"][seat] for seat in outcome.winners]
    with TestClient(app) as host:
        answer = host.post("/api/import", json=record)
        assert answer.status_code == 201, answer.text
        table_id = answer.json()["table_id"]
        seated = host.post(f"/api/tables/{table_id}/seat", json={"seat": 0})
        assert seated.status_code == 200, seated.text
        for path in ("", "/board", "/sheet"):
            words = card_and_banner_words(host.get(f"/t/{table_id}{path}").text)
            for name in winners:
                assert len(re.findall(rf"\b{name}\b", words)) == 1, (path, name, words)
