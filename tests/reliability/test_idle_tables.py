"""Idle tables leave memory and come back from the store on demand (issue 25, item 6).
Before, every table opened stayed in memory for good (about 7.5 MiB per 10,000-action
table; 116 -> 317 MiB after 24 of them). A table nobody uses for `table_idle_s` and no
screen watches is let go; its next request opens it again from the store, exactly as it
was; a table with a WebSocket open stays. Real uvicorn, real SQLite."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from companion.rules.base import Rejection
from companion.table.access import hash_token
from companion.table.store import Store
from companion.table.tables import Tables
from tests.reliability.conftest import ThreadServer, thread_settings
from tests.waiting import wait_until
from tests.web.helpers import QWIXX_ROLL_7

GENEROUS_S = 30.0


def test_an_idle_table_leaves_memory_and_comes_back_as_it_was(tmp_path: Path) -> None:
    with ThreadServer(thread_settings(tmp_path, table_idle_s=0.5)) as server:
        tables = server.app.state.tables
        host = httpx.Client(base_url=server.base_url, timeout=20)
        created = [
            host.post("/api/tables", json={"game": "qwixx", "options": {"players": 2}}).json()
            for _ in range(2)
        ]
        idle, watched = created[0]["table_id"], created[1]["table_id"]
        rolled = host.post(
            f"/api/tables/{idle}/actions", json={"action_id": "roll-00001", "move": QWIXX_ROLL_7}
        )
        assert rolled.status_code == 200
        before = host.get(f"/api/tables/{idle}/state").json()
        url = server.base_url.replace("http", "ws", 1) + f"/t/{watched}/ws"
        cookie = f"tc_{watched}={host.cookies[f'tc_{watched}']}"
        with connect(url, additional_headers={"Cookie": cookie}) as screen:
            screen.recv(timeout=GENEROUS_S)
            wait_until(lambda: not tables.is_loaded(idle), GENEROUS_S, "the idle table let go")
            assert tables.is_loaded(watched)  # a screen watches it: it stays
            screen.send(json.dumps({"type": "sync"}))
            assert json.loads(screen.recv(timeout=GENEROUS_S))["type"] == "state"
        # opened again on demand, from the store: the same game, and it plays on
        assert host.get(f"/api/tables/{idle}/state").json() == before
        assert tables.is_loaded(idle)
        again = host.post(
            f"/api/tables/{idle}/actions", json={"action_id": "roll-00001", "move": QWIXX_ROLL_7}
        )
        assert again.json() == {"state_id": 1, "duplicate": True}  # its log came back too
        passed = host.post(
            f"/api/tables/{idle}/actions",
            json={"action_id": "pass-00001", "move": {"kind": "pass", "player": 0}},
        )
        assert passed.status_code == 200 and passed.json()["state_id"] == 2
        wait_until(lambda: not tables.is_loaded(watched), GENEROUS_S, "closed, it goes too")


def test_a_change_through_a_table_that_left_memory_is_refused(tmp_path: Path) -> None:
    """A request that held the table from before it left memory cannot change it: the
    table opened again would not know (two copies of one game)."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "companion.sqlite3")
        tables = Tables(store, import_process=False, idle_s=60)
        try:
            held = await tables.create("qwixx", {"players": 2}, [])
            assert tables.evict_idle(time.monotonic() + 61) == [held.table_id]
            dice = [(d["colour"], d["value"]) for d in QWIXX_ROLL_7["dice"]]
            with pytest.raises(Rejection) as refused:
                await held.apply_roll(dice, action_id="roll-00001")
            assert refused.value.rule == "table_reloaded"
            fresh = await tables.get(held.table_id)
            assert fresh is not None and fresh is not held
            assert (await fresh.apply_roll(dice, action_id="roll-00001")).state_id == 1
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


RECORD = {"schema": 1, "game": "qwixx", "options": {"players": 2}, "players": ["a", "b"]}


def client_at(server: ThreadServer, address: str) -> httpx.Client:
    """A device at its own loopback address (as another tablet on the LAN would be)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.base_url, timeout=20, transport=transport)


def imported(client: httpx.Client, count: int) -> list[str]:
    """`count` tables imported (stored, not opened) by `client`, which holds their cookies."""
    ids = []
    for _ in range(count):
        answer = client.post("/api/import", json=RECORD | {"actions": []})
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["table_id"])
    return ids


def test_one_client_holds_at_most_its_share_of_unwatched_tables(tmp_path: Path) -> None:
    """Opening stored tables beyond `client_tables` that no screen watches lets that
    client's least recently used ones leave memory (they come back from the store); a
    watched one and another client's stay (issue 25, item 6: a cap per client)."""
    with ThreadServer(thread_settings(tmp_path, client_tables=2)) as server:
        tables = server.app.state.tables
        greedy, other = client_at(server, "127.0.0.1"), client_at(server, "127.0.0.2")
        mine, theirs = imported(greedy, 5), imported(other, 1)
        assert other.get(f"/api/tables/{theirs[0]}/state").status_code == 200
        assert greedy.get(f"/api/tables/{mine[0]}/state").status_code == 200
        url = server.base_url.replace("http", "ws", 1) + f"/t/{mine[0]}/ws"
        cookie = f"tc_{mine[0]}={greedy.cookies[f'tc_{mine[0]}']}"
        with connect(url, additional_headers={"Cookie": cookie}) as screen:
            screen.recv(timeout=GENEROUS_S)  # mine[0] is open and watched
            for table_id in mine[1:4]:
                assert greedy.get(f"/api/tables/{table_id}/state").status_code == 200
            # 2 unwatched ones at most: mine[1] (least recently used) went
            assert tables.held_by("127.0.0.1") == [mine[0], mine[2], mine[3]]
            assert not tables.is_loaded(mine[1])
            greedy.get(f"/api/tables/{mine[2]}/state")  # used again: now the most recent
            assert greedy.get(f"/api/tables/{mine[4]}/state").status_code == 200
            assert tables.held_by("127.0.0.1") == [mine[0], mine[2], mine[4]]
            assert tables.is_loaded(theirs[0])  # another client's table is not its share
            # a table that left memory comes back from the store as it was
            assert greedy.get(f"/api/tables/{mine[1]}/state").json()["state_id"] == 0
            assert tables.held_by("127.0.0.1") == [mine[0], mine[4], mine[1]]


def test_opening_stored_tables_is_limited_per_client(tmp_path: Path) -> None:
    """Each open of a stored table replays its game: beyond `open_burst` a client gets
    429 (rule open_rate) with Retry-After; a table in memory and another client's opens
    are still served."""
    settings = thread_settings(tmp_path, open_burst=3, open_rate_per_s=0.001)
    with ThreadServer(settings) as server:
        greedy, other = client_at(server, "127.0.0.1"), client_at(server, "127.0.0.2")
        mine, theirs = imported(greedy, 4), imported(other, 1)
        for table_id in mine[:3]:
            assert greedy.get(f"/api/tables/{table_id}/state").status_code == 200
        refused = greedy.get(f"/api/tables/{mine[3]}/state")
        assert refused.status_code == 429, refused.text
        assert refused.json()["rule"] == "open_rate"
        assert int(refused.headers["retry-after"]) >= 1
        assert not server.app.state.tables.is_loaded(mine[3])
        assert greedy.get(f"/api/tables/{mine[0]}/state").status_code == 200  # in memory
        assert other.get(f"/api/tables/{theirs[0]}/state").status_code == 200


def test_a_stranger_s_websocket_opens_stored_tables_only_within_its_limit(
    tmp_path: Path,
) -> None:
    """A WebSocket to a stored table opened it (replayed its game) before its cookie was
    looked at, past the per-client limit on opens and its share of memory: a device that
    knew table ids had them all replayed and kept. Now a socket with no cookie for the
    table opens nothing, and one with a cookie opens within the client's limit, as a
    request does."""
    settings = thread_settings(tmp_path, open_burst=3, open_rate_per_s=0.001)
    with ThreadServer(settings) as server:
        tables = server.app.state.tables
        ids = imported(client_at(server, "127.0.0.2"), 4)
        base = server.base_url.replace("http", "ws", 1)
        for cookies in ({}, {table_id: "a-forged-token" for table_id in ids}):
            for table_id in ids:
                header = f"tc_{table_id}={cookies[table_id]}" if cookies else ""
                with (
                    pytest.raises(InvalidStatus),
                    connect(
                        f"{base}/t/{table_id}/ws",
                        additional_headers={"Cookie": header} if header else {},
                        source_address=("127.0.0.3", 0),
                    ),
                ):
                    pass
            opened = [table_id for table_id in ids if tables.is_loaded(table_id)]
            assert len(opened) == (3 if cookies else 0), opened


FINAL = {
    "game": "qwixx",
    "title": "Qwixx",
    "players": ["Ann", "Bob"],
    "scores": [{"seat": 0, "total": 3, "breakdown": []}, {"seat": 1, "total": 1, "breakdown": []}],
    "winners": [0],
    "end_message": "Ann wins",
    "actions": 0,
}


def test_listing_the_games_a_browser_joined_opens_none_of_them(tmp_path: Path) -> None:
    """The start page and /history list the stored games a browser's cookies name from
    the store and open none (the third probe: /history opened 30 stored tables in 2.3 s,
    past the per-client open limit); a cookie of a game finished too long ago, or holding
    another game's token, lists nothing; the client's opens are all still its own."""
    store = Store.open(tmp_path / "companion.sqlite3")
    running, finished = [f"run-{i}" for i in range(4)], [f"fin-{i}" for i in range(4)]
    for index, table_id in enumerate([*running, *finished, "fin-old", "not-mine"]):
        store.create_table(table_id, f"CODE{index:02d}", "qwixx", {"players": 2}, ["Ann", "Bob"])
        store.add_device(hash_token(f"token-{table_id}"), table_id, False, None)
    for table_id in [*finished, "fin-old"]:
        store.set_finished(table_id, FINAL)
    store.close()
    with sqlite3.connect(tmp_path / "companion.sqlite3") as db:  # finished a year ago
        db.execute("UPDATE tables SET finished_at = finished_at - 3.2e7 WHERE table_id = 'fin-old'")
    db.close()
    settings = thread_settings(tmp_path, open_burst=2, open_rate_per_s=0.001)
    with ThreadServer(settings) as server:
        tables = server.app.state.tables
        device = client_at(server, "127.0.0.2")  # not the server's machine: cookies count
        for table_id in [*running, *finished, "fin-old"]:
            device.cookies.set(f"tc_{table_id}", f"token-{table_id}")
        device.cookies.set("tc_not-mine", "token-run-0")
        start, history = device.get("/"), device.get("/history")
        assert start.status_code == 200 and history.status_code == 200, history.text
        assert all(f'href="/t/{t}"' in start.text for t in running), start.text
        assert all(f'href="/t/{t}"' in history.text for t in finished), history.text
        for page in (start.text, history.text):
            assert "/t/fin-old" not in page and "/t/not-mine" not in page
        assert not [t for t in [*running, *finished] if tables.is_loaded(t)]
        for table_id in running[:2]:  # its opens were not spent by the listing
            assert device.get(f"/api/tables/{table_id}/state").status_code == 200
        assert device.get(f"/api/tables/{running[2]}/state").status_code == 429
