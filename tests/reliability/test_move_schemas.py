"""Every move kind of every game, sent as arbitrary JSON to a real server (real uvicorn on
loopback, real SQLite) through each way a move comes in: the HTTP API, an imported game
record and the WebSocket. The moves are drawn from the schemas the server publishes
(`/api/games/{game}/moves`, generated from the move dataclasses): well-formed ones,
near-misses and JSON of any shape, the `kind` included (a list there gave 500, and closed
the socket without an answer).

Held: no answer is a server error (5xx); every refusal names its reason; every WebSocket
message gets its answer on a socket that stays open; afterwards each table's state is the
engine's replay of its exported record."""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from companion.rules.codec import encode
from companion.rules.registry import GAME_NAMES, find_game
from companion.rules.session import replay_record
from tests.reliability.conftest import ThreadServer, random_roll, thread_settings
from tests.rules.move_strategies import moves

EXAMPLES = int(os.environ.get("RELIABILITY_MOVE_EXAMPLES", "40"))  # per game and channel
IDS = itertools.count()
UNLIMITED = {
    "device_rate_per_s": 10_000,
    "device_burst": 10_000,
    "table_rate_per_s": 10_000,
    "table_burst": 10_000,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    settings_ = thread_settings(tmp_path_factory.mktemp("moves"), **UNLIMITED)
    with ThreadServer(settings_) as running:
        yield running


def new_table(server: ThreadServer, name: str) -> tuple[httpx.Client, str]:
    """A table of `name` (its host's client and id), rolled once where it starts with a
    roll, so the players' moves are in play."""
    import random

    game = find_game(name)
    host = httpx.Client(base_url=server.base_url, timeout=10)
    created = host.post("/api/tables", json={"game": name, "options": {}})
    assert created.status_code == 201, created.text
    table_id = created.json()["table_id"]
    turn = host.get(f"/api/tables/{table_id}/state").json()["turn"]
    if turn["chance"]:
        roll = random_roll(turn["dice"], random.Random(7))
        body = {"action_id": "first-roll", "move": roll}
        assert host.post(f"/api/tables/{table_id}/actions", json=body).status_code == 200
    assert game.name == name
    return host, table_id


def schemas(server: ThreadServer, name: str) -> dict[str, dict[str, Any]]:
    answer = httpx.get(f"{server.base_url}/api/games/{name}/moves", timeout=10)
    assert answer.status_code == 200, answer.text
    published: dict[str, dict[str, Any]] = answer.json()
    assert set(published) == set(find_game(name).move_kinds())
    return published


def refused_well(answer: httpx.Response, where: str) -> None:
    assert answer.status_code < 500, (where, answer.status_code, answer.text[:300])
    if answer.status_code >= 400:
        body = answer.json()
        assert body.get("reason") and body.get("message"), (where, body)


def replays(host: httpx.Client, table_id: str) -> None:
    """The server's state of the table equals the engine's replay of its record."""
    state = host.get(f"/api/tables/{table_id}/state").json()
    record = host.get(f"/api/tables/{table_id}/record").json()
    session = replay_record(record)
    assert state["state"] == session.game.state_to_json(session.state)
    assert state["state_id"] >= len(record["actions"])


@pytest.mark.parametrize("name", GAME_NAMES)
def test_arbitrary_moves_over_http_never_answer_5xx(server: ThreadServer, name: str) -> None:
    host, table_id = new_table(server, name)
    statuses: Counter[int] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(move=moves(schemas(server, name)))
    def send(move: Any) -> None:
        body = {"action_id": f"fuzz-{next(IDS):08d}", "move": move}
        # json.dumps writes NaN and Infinity as they are: the server must refuse them too
        answer = host.post(
            f"/api/tables/{table_id}/actions",
            content=json.dumps(body),
            headers={"content-type": "application/json"},
        )
        refused_well(answer, f"HTTP {move!r:.200}")
        statuses[answer.status_code] += 1

    send()
    assert sum(statuses.values()) >= EXAMPLES and 422 in statuses, statuses
    replays(host, table_id)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_arbitrary_moves_in_an_imported_record_never_answer_5xx(
    server: ThreadServer, name: str
) -> None:
    game = find_game(name)
    options = game.options_for(game.players.low)
    seats = len(game.scores(game.setup(options)))
    header = {
        "schema": 1,
        "game": name,
        "options": encode(options),
        "players": [f"P{i + 1}" for i in range(seats)],
    }
    client = httpx.Client(base_url=server.base_url, timeout=10)
    statuses: Counter[int] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(move=moves(schemas(server, name)), by=st.sampled_from(["host", "camera", "0"]))
    def send(move: Any, by: str) -> None:
        record = header | {"actions": [{"by": by, "move": move}]}
        answer = client.post(
            "/api/import",
            content=json.dumps(record),
            headers={"content-type": "application/json"},
        )
        refused_well(answer, f"import {move!r:.200}")
        statuses[answer.status_code] += 1
        if answer.status_code == 201:
            replays(client, answer.json()["table_id"])

    send()
    assert sum(statuses.values()) >= EXAMPLES and 422 in statuses, statuses


def answer_of(socket: ClientConnection, action_id: str) -> dict[str, Any]:
    """The frame answering `action_id` (state pushes in between are skipped)."""
    while True:
        frame = json.loads(socket.recv(timeout=10))
        if frame["type"] in ("ack", "error") and frame.get("action_id") in (action_id, None):
            return frame  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_arbitrary_moves_over_the_websocket_are_all_answered(
    server: ThreadServer, name: str
) -> None:
    host, table_id = new_table(server, name)
    url = server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws?view=table"
    cookie = f"tc_{table_id}={host.cookies.get(f'tc_{table_id}')}"
    kinds: Counter[str] = Counter()
    with connect(url, additional_headers={"Cookie": cookie}, open_timeout=10) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "state"

        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        @given(move=moves(schemas(server, name)))
        def send(move: Any) -> None:
            action_id = f"ws-fuzz-{next(IDS):08d}"
            socket.send(json.dumps({"type": "act", "action_id": action_id, "move": move}))
            reply = answer_of(socket, action_id)
            if reply["type"] == "error":
                assert 400 <= reply["status"] < 500 and reply["message"], (move, reply)
            kinds[reply["type"]] += 1

        send()
        socket.send(json.dumps({"type": "sync"}))  # the socket is still open and answers
        while json.loads(socket.recv(timeout=10))["type"] != "state":
            pass
    assert kinds["error"] > 0 and sum(kinds.values()) >= EXAMPLES, kinds
    replays(host, table_id)
