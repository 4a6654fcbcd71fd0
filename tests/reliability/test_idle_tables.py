"""Idle tables leave memory and come back from the store on demand (issue 25, item 6).
Before, every table opened stayed in memory for good (about 7.5 MiB per 10,000-action
table; 116 -> 317 MiB after 24 of them). A table nobody uses for `table_idle_s` and no
screen watches is let go; its next request opens it again from the store, exactly as it
was; a table with a WebSocket open stays. Real uvicorn, real SQLite."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from companion.rules.base import Rejection
from companion.web.store import Store
from companion.web.tables import Tables
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
