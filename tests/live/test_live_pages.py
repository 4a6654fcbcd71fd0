"""What the live table expects of the camera per game, the game log page and the dice
statistics page (a real server with the camera off; rolls entered by hand)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion.table.camera_hub import expected_throw
from companion.table.camera_runtime import status_line
from companion.table.camera_settings import CameraSettings
from companion.table.dice import DiceTally, effective_entries
from companion.table.store import LogEntry
from companion.web.settings import Settings
from tests.live.replay import LiveServer
from tests.web.conftest import free_port
from tests.web.helpers import roll, snapshot_of

QWIXX_ROLL = roll(("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1))


@pytest.mark.parametrize(
    ("game", "players", "moves", "colours", "reroll"),
    [
        ("qwixx", ["A", "B"], [], ("white", "white", "red", "yellow", "green", "blue"), None),
        # crossing: the next roll passes for those who have not acted (the table's option)
        (
            "qwixx",
            ["A", "B"],
            [QWIXX_ROLL],
            ("white", "white", "red", "yellow", "green", "blue"),
            None,
        ),
        ("sixto", ["A", "B"], [], ("red", "orange", "yellow", "green", "blue", "purple"), None),
        (
            "sixto",
            ["A", "B"],
            [roll(*((c, 2) for c in ("red", "orange", "yellow", "green", "blue", "purple")))],
            ("red", "orange", "yellow", "green", "blue", "purple"),
            "reroll",
        ),
        ("sixis", ["A", "B"], [], ("red",) * 6, None),
        ("sixes", ["A", "B", "C"], [], None, None),
    ],
)
def test_expected_dice_come_from_the_engine(
    game: str, players: list[str], moves: list[Any], colours: Any, reroll: str | None
) -> None:
    snapshot = snapshot_of(game, players, moves)
    throw = expected_throw(snapshot)
    turn = snapshot.turn
    if colours is None and game == "sixes":
        assert throw is not None and throw.dice == turn.dice  # straight from its Turn
        return
    assert (throw.dice.colours if throw else None) == colours
    implied = [move.kind for move in throw.moves] if throw else []
    assert implied == ([reroll] if reroll else [])
    if throw is not None and throw.closes:
        # the white sum is open: both pass on it, then the active player's colour step
        assert [(m.kind, m.player) for m in throw.closes] == [("pass", 0), ("pass", 1), ("pass", 0)]
        # a table without automatic passes expects no roll while the step is open
        assert expected_throw(replace(snapshot, auto_pass=False)) is None


def test_effective_entries_drop_what_was_undone() -> None:
    log = [
        LogEntry(1, "a", "move", "camera", {"kind": "roll", "player": -1, "dice": []}),
        LogEntry(2, "b", "move", "0", {"kind": "pass", "player": 0}),
        LogEntry(3, "c", "undo", "host", None),
        LogEntry(4, "d", "move", "1", {"kind": "pass", "player": 1}),
    ]
    assert [e.action_id for e in effective_entries(log)] == ["a", "d"]
    camera_roll = {"kind": "roll", "player": -1, "dice": [{"colour": "red", "value": 6}]}
    by_hand = {"kind": "roll", "player": -1, "dice": [{"colour": "red", "value": 1}]}
    mixed = [
        LogEntry(1, "x", "move", "camera", camera_roll),
        LogEntry(2, "y", "move", "0", by_hand),
    ]
    tally = DiceTally.from_logs({"t": mixed}).of("t")
    assert tally.camera.rolls == 1 and tally.camera.counts == {"red": [0, 0, 0, 0, 0, 1]}
    assert tally.all.rolls == 2 and tally.all.counts == {"red": [1, 0, 0, 0, 0, 1]}
    undone = DiceTally.from_logs({"t": [*mixed, LogEntry(3, "z", "undo", "host", None)]})
    assert undone.of("t").all.counts == {"red": [0, 0, 0, 0, 0, 1]}


def test_status_line_names_faults() -> None:
    assert status_line(False, False, None, None) == "camera off (manual dice entry)"
    lost = {
        "connected": False,
        "ended": False,
        "running": True,
        "reconnect_attempts": 3,
        "last_error": "camera 0: lost (no frame in 30 reads)",
        "corrupt_frames": 4,
        "fps": 0.0,
        "settle": "moving",
    }
    line = status_line(True, False, lost, None)
    assert "reconnecting (attempt 3)" in line and "lost" in line and "4 unreadable" in line


def test_status_line_counts_one_unreadable_frame_in_the_singular() -> None:
    """A folder with one truncated JPEG: "1 unreadable frame skipped" ("1 unreadable
    frames" read as a slip to the host)."""
    ended = {
        "connected": False,
        "ended": True,
        "running": False,
        "events": 1,
        "reconnect_attempts": 0,
        "last_error": None,
        "corrupt_frames": 1,
        "fps": 10.0,
        "settle": "empty",
    }
    assert "· 1 unreadable frame skipped" in status_line(True, False, ended, None)


@pytest.fixture
def server(tmp_path: Path) -> Any:
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(disabled=True)
    )
    with LiveServer(settings, None) as running:
        yield running


def manual_roll(client: httpx.Client, table_id: str, value: int, action_id: str) -> None:
    dice = [
        {"colour": c, "value": value} for c in ("white", "white", "red", "yellow", "green", "blue")
    ]
    body = {"action_id": action_id, "move": {"kind": "roll", "player": -1, "dice": dice}}
    response = client.post(f"/api/tables/{table_id}/actions", json=body)
    assert response.status_code == 200, response.text


def test_log_and_dice_pages(server: Any) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=10)
    created = client.post(
        "/api/tables", json={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}}
    )
    table_id = created.json()["table_id"]
    manual_roll(client, table_id, 3, "roll-one-0001")
    undo = client.post(f"/api/tables/{table_id}/undo", json={"action_id": "undo-one-0001"})
    assert undo.status_code == 200
    manual_roll(client, table_id, 5, "roll-two-0001")

    camera = client.get(f"/api/tables/{table_id}/camera").json()
    assert camera["enabled"] is False and camera["line"] == "camera off (manual dice entry)"

    log = client.get(f"/t/{table_id}/log").text
    assert log.count('class="undone"') == 1 and "undo" in log
    assert "/photos/" not in log  # rolls entered by hand have no photo
    assert "data-ended-by-host" not in log

    page = client.get(f"/t/{table_id}/dice").text
    white = re.search(r'data-section="0".*?data-colour="white">(.*?)</tr>', page, re.S)
    assert white is not None
    counts = [int(c) for c in re.findall(r'class="count">(\d+)<', white.group(1))]
    assert counts == [0, 0, 0, 0, 2, 0]  # the undone roll of threes does not count
    assert "not enough rolls yet" in page
    camera_only = client.get(f"/t/{table_id}/dice?rolls=camera").text
    assert "This game: 0 rolls" in camera_only
    assert client.get(f"/t/{table_id}/dice?rolls=bogus").status_code == 422
    stranger = httpx.Client(base_url=server.base_url, follow_redirects=False)
    assert stranger.get(f"/t/{table_id}/dice").status_code == 303  # to the join page


def test_the_log_shows_where_the_host_ended_the_game(server: Any) -> None:
    """A game the host ends stops in its log with a row that says so (the end is no action
    of the record, so the log showed nothing)."""
    client = httpx.Client(base_url=server.base_url, timeout=10)
    created = client.post(
        "/api/tables", json={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}}
    )
    table_id = created.json()["table_id"]
    manual_roll(client, table_id, 4, "roll-one-0002")
    assert client.post(f"/api/tables/{table_id}/end").status_code == 200
    log = client.get(f"/t/{table_id}/log").text
    rows = re.findall(
        r"<tr class=\"[^\"]*\" data-seq=|<tr class=\"ended\" data-ended-by-host>", log
    )
    assert rows[-1] == '<tr class="ended" data-ended-by-host>', rows  # the last row
    assert "ended the game here" in log
