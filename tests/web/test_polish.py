"""Small things a QA pass found on the pages, checked through the real app (TestClient,
real templates, real SQLite): the end screen says "Game over" once; an engine sentence
shown on its own starts with a capital; a locked Qwixx colour's die is marked "locked" in
the roll banner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from companion.web.app import create_app
from companion.web.settings import Settings
from companion.web.views import for_display
from tests.web.helpers import act, create_table

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"


def test_for_display_names_the_seat_and_starts_with_a_capital() -> None:
    players = ["Ann", "Bob", "Cid"]
    assert for_display("the white dice show 7, not 9", players) == "The white dice show 7, not 9"
    assert for_display("player 3 has already passed", players) == "Cid has already passed"
    assert for_display("", players) == ""


def test_the_end_screen_says_game_over_once_and_its_message_as_a_sentence(
    tmp_path: Path,
) -> None:
    app: Any = create_app(Settings(data_dir=tmp_path))
    record = json.loads((RECORDS / "qwixx.json").read_text())  # ends "blue and green are ..."
    with TestClient(app) as host:
        imported = host.post("/api/import", json=record)
        assert imported.status_code == 201
        page = host.get(imported.json()["url"]).text
        assert page.count("Game over") == 1
        assert "Blue and green are locked: the game is over; Mia wins with 144" in page
        assert "Blue and green are locked" in host.get("/history").text


def banner_dice(live: str) -> dict[str, str]:
    """Each die of the roll banner: colour -> its HTML."""
    banner = live.split('aria-label="current roll"')[1].split("</div>")[0]
    spans = banner.split("<span ")[1:]
    return {span.split('data-colour="')[1].split('"')[0]: span for span in spans}


def test_a_colour_locked_in_this_roll_is_marked_locked_in_the_banner(tmp_path: Path) -> None:
    app: Any = create_app(Settings(data_dir=tmp_path))
    colours = ["white", "white", "red", "yellow", "green", "blue"]
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        tid = table["table_id"]
        moves: list[dict[str, Any]] = []
        # Ann crosses red 2..6 on five white sums, then red 12 on double six: red locks
        # during this white-sum step, while its die still lies in the roll
        for turn, (w1, w2) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (6, 6)]):
            values = [w1, w2, 5, 1, 1, 1]
            dice = [{"colour": c, "value": v} for c, v in zip(colours, values, strict=True)]
            moves.append({"kind": "roll", "player": -1, "dice": dice})
            moves.append({"kind": "cross", "player": 0, "colour": "red", "number": w1 + w2})
            if turn < 5:
                moves.append({"kind": "cross", "player": 1, "colour": "yellow", "number": w1 + w2})
                moves.append({"kind": "pass", "player": turn % 2})
        before_lock = None
        for n, move in enumerate(moves):
            if n == len(moves) - 1:
                before_lock = banner_dice(host.get(f"/t/{tid}/live").text)
            assert act(host, tid, move, f"lock-{n:04d}").status_code == 200
        assert before_lock is not None and "locked" not in before_lock["red"]
        shown = banner_dice(host.get(f"/t/{tid}/live").text)
        assert set(shown) == {"white", "red", "yellow", "green", "blue"}
        assert 'class="die c-red out"' in shown["red"]
        # "red" for a screen reader: a locked die was read as "5 locked", of no colour
        assert '<i><small class="sr-only">red </small>locked</i>' in shown["red"]
        for colour in ("white", "yellow", "green", "blue"):
            assert " out" not in shown[colour] and "locked" not in shown[colour], colour


def test_the_host_tools_of_a_seated_host_open_their_sheet(tmp_path: Path) -> None:
    """Mum hosts on the tablet and plays at seat 1. From the table page her host tools
    offered "Take a seat on this device", which led to the seat list with her own seat
    marked "(you)"; they offer her sheet instead. A host without a seat still gets the
    seat list."""
    app: Any = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Mum", "Dad"], {"players": 2})
        tid = table["table_id"]
        page = host.get(f"/t/{tid}").text
        assert f'<a class="button" href="/t/{tid}/seat">Take a seat on this device</a>' in page
        seated = host.post(f"/api/tables/{tid}/seat", json={"seat": 0})
        assert seated.status_code == 200, seated.text
        page = host.get(f"/t/{tid}").text
        tools = page[
            page.index('id="host-tools"') : page.index("</details>", page.index('id="host-tools"'))
        ]
        assert f'<a class="button" href="/t/{tid}/sheet">Open my sheet (Mum)</a>' in tools
        assert "Take a seat on this device" not in tools
