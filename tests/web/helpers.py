"""Small factories for the web tests: literal rolls, a table through the API, a store of
many tables, and a Snapshot of a game after literal moves (for view tests without a
server)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from companion.rules.base import Die, Move, Roll
from companion.rules.registry import find_game
from companion.rules.session import Session, replay_record
from companion.table import snapshot as table_snapshot
from companion.table.snapshot import Snapshot
from companion.table.store import Store


def roll_json(*dice: tuple[str, int]) -> dict[str, Any]:
    """A roll move as a box would send it: roll_json(("white", 3), ("red", 2))."""
    return {
        "kind": "roll",
        "player": -1,
        "dice": [{"colour": colour, "value": value} for colour, value in dice],
    }


QWIXX_ROLL_7 = roll_json(
    ("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)
)
"""White sum 7; red 2 gives 5 or 6, yellow 5 gives 8 or 9, green 6 gives 9 or 10, blue 1
gives 4 or 5."""


def create_table(
    client: TestClient, game: str, players: list[str], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Create a table as its host (the client keeps the host cookie)."""
    response = client.post(
        "/api/tables", json={"game": game, "options": options or {}, "players": players}
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def stored_tables(data_dir: Path, count: int, finished: bool) -> list[str]:
    """A new store of `count` running (or finished) Qwixx tables, players "Ann<n>" and
    "Bob", and one table of the other kind; their ids newest first as the listings order
    them: the running by their start, the finished by their finish (in another order than
    their start)."""
    store = Store.open(data_dir / "companion.sqlite3")
    try:
        for n in range(count + 1):
            players = ["Other", "Kind"] if n == 0 else [f"Ann{n}", "Bob"]
            store.create_table(f"t{n:05d}", f"C{n:05d}", "qwixx", {"players": 2}, players)
        ids = [f"t{n:05d}" for n in range(1, count + 1)]
        random.Random(1).shuffle(ids)
        for table_id in ids if finished else ["t00000"]:
            summary = {"game": "qwixx", "title": "Qwixx", "players": ["Ann", "Bob"]}
            store.set_finished(table_id, summary)
        return ids[::-1] if finished else [row.table_id for row in store.tables(finished=False)]
    finally:
        store.close()


def refuse_reading_every_table(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the app's Store.tables (every stored table's row) fail the test when called."""

    def read_everything(*args: object, **kwargs: object) -> None:
        raise AssertionError("a page read every stored table")

    monkeypatch.setattr(app.state.tables.store, "tables", read_everything)


def every_page_of(client: TestClient, path: str) -> list[str]:
    """A listing's pages (the start page's games in progress, the history), from its first
    through each "Older games" link in turn: their HTML."""
    pages = [client.get(path).text]
    while found := re.search(rf'href="{re.escape(path)}\?older=(\d+)" id="older-games"', pages[-1]):
        pages.append(client.get(path, params={"older": int(found.group(1))}).text)
    return pages


def seat_player(client: TestClient, code: str, table_id: str, seat: int) -> None:
    """Join with the code and take `seat` (the client keeps the device cookie)."""
    assert client.post("/api/join", json={"code": code}).status_code == 200
    response = client.post(f"/api/tables/{table_id}/seat", json={"seat": seat})
    assert response.status_code == 200, response.text


def act(
    client: TestClient,
    table_id: str,
    move: dict[str, Any],
    action_id: str,
    expected_state_id: int | None = None,
) -> Any:
    body: dict[str, Any] = {"action_id": action_id, "move": move}
    if expected_state_id is not None:
        body["expected_state_id"] = expected_state_id
    return client.post(f"/api/tables/{table_id}/actions", json=body)


def snapshot_of(
    game_name: str,
    players: list[str],
    moves: list[Move],
    options: Any | None = None,
) -> Snapshot:
    """The Snapshot a table would publish after `moves` (rolls by the camera)."""
    game = find_game(game_name)
    session = Session(game, options or game.options_for(len(players)), players)
    for move in moves:
        session.act(move)
    return table_snapshot.snapshot_of(session)


def roll(*dice: tuple[str, int]) -> Roll:
    return Roll(dice=tuple(Die(colour, value) for colour, value in dice))


RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"


def finished_snapshot(game_name: str) -> Snapshot:
    """The last position of the documented example game (docs/records/<game>.json)."""
    session = replay_record(json.loads((RECORDS / f"{game_name}.json").read_text()))
    assert session.outcome() is not None
    return table_snapshot.snapshot_of(session)
