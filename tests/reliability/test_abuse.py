"""One client must not stall every table. Against the real app under real uvicorn (in a
thread of this process, so the test can see which thread does the work), real SQLite:

- an import is read, checked and replayed in the import process, never on the event loop
  (four 1.2 MB imports froze the loop for up to 2.5 s), and the table is replayed in the
  server's process only when it is first opened, on its replay thread; a record over the
  size cap is
  refused before it is parsed (413), one over the action cap before it is replayed (422);
  while the import process is busy, at most Settings.max_imports_waiting imports queue and
  the next is told to come back (429 imports_busy), one address holding at most half of
  them (429 imports_busy_yours); one address imports at most
  Settings.import_actions_per_hour actions an hour (429 import_actions);
- the dice page reads no log: its counts are kept roll by roll (every log was read on each
  request: 1.2-1.7 s on a store of 91,000 actions) and equal the counts recomputed from the
  log, after rolls, undos, imports and a restart;
- table creations and imports are limited per client address (500 creations in 1.7 s met
  no limit): a client past its burst gets 429 with Retry-After, another address does not.

How fast the server stays under these abuses is measured by bench/abuse.py
(docs/BENCHMARKS.md), not here."""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion.live.stats import FACES
from companion.rules.base import Roll
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.simulate import play_random_game
from companion.table import access as access_module
from companion.table import records as records_module
from companion.table import tables as tables_module
from companion.table.dice import effective_entries, roll_of
from companion.table.store import Store
from tests.reliability.conftest import ThreadServer, thread_settings
from tests.waiting import wait_until
from tests.web.helpers import QWIXX_ROLL_7

UNLIMITED_DEVICES = {"device_rate_per_s": 10_000, "device_burst": 10_000}
REPLAY_THREAD = ("replay_0",)  # Tables.replay_pool's one thread


def long_record(name: str = "sixis", seed: int = 3) -> dict[str, Any]:
    """A real long game's record (Sixis with 4 players: 1,000-1,600 actions)."""
    game = find_game(name)
    options = game.options_for(game.players.high or 4)
    session = Session(game, options)

    def keep(_before: object, move: Any, _after: object) -> None:
        session.act(move, by="camera" if isinstance(move, Roll) else str(move.player))

    play_random_game(game, options, random.Random(seed), 20_000, keep)
    return session.to_record()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ThreadServer]:
    with ThreadServer(thread_settings(tmp_path / "data", **UNLIMITED_DEVICES)) as running:
        yield running


def test_imports_are_replayed_off_the_event_loop_and_capped(
    server: ThreadServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import is checked and replayed in the import process; the server's own process
    replays the table only when it is first opened, on its replay thread."""
    here: list[str] = []  # what ran in this process, on which thread
    real_check, real_replay = records_module.checked_record, tables_module._replay

    def checked_here(*args: Any) -> Any:
        here.append(f"checked_record on {threading.current_thread().name}")
        return real_check(*args)

    def replayed_here(*args: Any) -> Any:
        here.append(f"replay on {threading.current_thread().name}")
        return real_replay(*args)

    monkeypatch.setattr(records_module, "checked_record", checked_here)
    monkeypatch.setattr(tables_module, "_replay", replayed_here)
    client = httpx.Client(base_url=server.base_url, timeout=60)
    record = long_record()
    accepted = client.post("/api/import", json=record)
    assert accepted.status_code == 201, accepted.text[:300]
    assert here == []  # not in this process: in the import process
    pool = server.app.state.tables._import_pool
    assert pool is not None and all(p.pid != os.getpid() for p in pool._processes.values())
    table_id = accepted.json()["table_id"]
    state = client.get(f"/api/tables/{table_id}/state").json()  # opened: replayed here
    assert here and all(call.endswith(tuple(REPLAY_THREAD)) for call in here), here
    assert state["state_id"] == len(record["actions"])

    # over the size cap: refused before it is parsed or replayed
    copies = 1_250_000 // len(json.dumps(record)) + 1
    padded = json.dumps(record | {"actions": record["actions"] * copies})
    assert len(padded) > 1_200_000
    too_big = client.post(
        "/api/import", content=padded, headers={"content-type": "application/json"}
    )
    assert too_big.status_code == 413 and too_big.json()["rule"] == "too_large"
    # over the action cap (10,000) but under the size cap: refused before it is replayed
    roll_only = {"by": "camera", "move": {"kind": "roll", "player": -1, "dice": []}}
    many = record | {"actions": [roll_only] * 10_001}
    too_long = client.post("/api/import", json=many)
    assert too_long.status_code == 422 and too_long.json()["rule"] == "too_long"
    # nested deeper than a JSON parser goes, well under the size cap: refused, not a 500
    deep = b'{"schema": 1, "game": "qwixx", "actions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for path in ("/api/import", "/api/tables"):
        nested = client.post(path, content=deep, headers={"content-type": "application/json"})
        assert 400 <= nested.status_code < 500, (path, nested.status_code, nested.text[:200])


def wait_for_file(path: str, deadline_s: float) -> None:
    """Keeps the import process busy until the test creates `path` (runs there)."""
    deadline = time.monotonic() + deadline_s
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def post_from(address: str, url: str, record: object) -> httpx.Response:
    """POST `record` to `url` from another loopback address: another device."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(timeout=120, transport=transport) as client:
        return client.post(url, json=record)


def test_imports_queue_for_the_import_process_and_the_rest_come_back_later(
    server: ThreadServer, tmp_path: Path
) -> None:
    """While the import process is busy, imports queue up to max_imports_waiting; one
    address holds at most half of those places (one address kept all 4: another's import
    was refused 38% of the time), so another address still gets in."""
    tables = server.app.state.tables
    waiting = server.app.state.settings.max_imports_waiting
    half = waiting // 2
    record = long_record("qwixx", 1)
    url = f"{server.base_url}/api/import"
    assert httpx.post(url, json=record, timeout=60).status_code == 201  # the process is up
    release = tmp_path / "release"
    busy_process = tables._import_pool.submit(wait_for_file, str(release), 120)
    with ThreadPoolExecutor(waiting) as pool:
        mine = [pool.submit(httpx.post, url, json=record, timeout=120) for _ in range(half)]
        wait_until(lambda: tables.imports_waiting == half, 30, "this address's imports queued")
        hog = httpx.post(url, json=record, timeout=60)
        assert hog.status_code == 429 and hog.json()["rule"] == "imports_busy_yours", hog.text
        assert "half" in hog.json()["message"] and hog.headers["Retry-After"]
        theirs = [pool.submit(post_from, "127.0.0.2", url, record) for _ in range(waiting - half)]
        wait_until(lambda: tables.imports_waiting == waiting, 30, "another's imports queued")
        busy = post_from("127.0.0.3", url, record)
        assert busy.status_code == 429 and busy.json()["rule"] == "imports_busy", busy.text
        assert busy.headers["Retry-After"]
        release.touch()
        busy_process.result(timeout=60)
        assert [f.result().status_code for f in mine + theirs] == [201] * waiting
    assert tables.imports_waiting == 0


def test_imported_actions_are_budgeted_per_address(tmp_path: Path) -> None:
    """One address imports at most import_actions_per_hour actions an hour, however it
    paces its imports (47 legal 8,600-action imports in a minute grew the store 4.7 ->
    90 MB, and every start-up after read it); a record longer than what is left is
    refused once parsed (before it is replayed) and stores nothing, a spent address
    before its record is read, and another address is not held up."""
    record = long_record("qwixx", 1)
    actions = len(record["actions"])
    budget = 2 * actions + actions // 2
    settings = thread_settings(tmp_path / "data", import_actions_per_hour=budget)
    with ThreadServer(settings) as running:
        url = f"{running.base_url}/api/import"
        store = running.app.state.tables.store
        assert [httpx.post(url, json=record, timeout=60).status_code for _ in (1, 2)] == [201] * 2
        over = httpx.post(url, json=record, timeout=60)
        assert over.status_code == 429 and over.json()["rule"] == "import_actions", over.text
        assert f"at most {budget} an hour; {actions // 2} left" in over.json()["message"]
        assert int(over.headers["Retry-After"]) > 3000  # the first import's hour
        assert len(store.tables()) == 2  # the refused record stored nothing
        short = record | {"actions": record["actions"][: actions // 2]}  # what is left
        assert httpx.post(url, json=short, timeout=60).status_code == 201
        spent = httpx.post(url, json=short, timeout=60)  # refused before it is read
        assert spent.status_code == 429 and spent.json()["rule"] == "import_actions"
        assert "; 0 left" in spent.json()["message"]
        assert post_from("127.0.0.2", url, record).status_code == 201  # another device
        assert len(store.tables()) == 4


def test_the_action_budget_is_a_sliding_window(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(access_module.time, "monotonic", lambda: now[0])
    budget = access_module.ActionBudget(100, 3600.0)
    assert budget.wait("a", 100) == 0 and budget.left("a") == 100
    budget.spend("a", 60)
    now[0] += 600
    budget.spend("a", 30)
    assert budget.left("a") == 10 and budget.left("b") == 100
    assert budget.wait("a", 10) == 0
    assert budget.wait("a", 40) == 3000  # when the first 60 leave the window
    assert budget.wait("a", 80) == 3600  # and the 30 too
    assert budget.wait("a", 101) == 3600  # never fits: the whole window
    now[0] += 3000
    assert budget.left("a") == 70


def dice_counts(page: str, section: int) -> dict[str, list[int]]:
    """The face counts of one section of the dice page, per colour ({} when it shows "No
    rolls yet", without a table)."""
    parts = page.split(f'data-section="{section}"', 1)
    if len(parts) == 1:
        assert "No rolls yet" in page
        return {}
    block = parts[1].split("data-section=", 1)[0]
    counts = {}
    for colour, cells in re.findall(r'data-colour="([a-z]+)">(.*?)</tr>', block, re.S):
        counts[colour] = [int(c) for c in re.findall(r'class="count">(\d+)<', cells)]
    return counts


def recounted(path: Path, table_id: str | None) -> dict[str, list[int]]:
    """The counts recomputed from the stored logs (of one table, or of all)."""
    store = Store.open(path)
    try:
        logs = {tid: log for tid, log in store.logs()}
    finally:
        store.close()
    counts: dict[str, list[int]] = {}
    for tid, log in logs.items():
        if table_id is not None and tid != table_id:
            continue
        for entry in effective_entries(log):
            roll = roll_of(entry)
            for die in roll.dice if roll else ():
                counts.setdefault(die.colour, [0] * FACES)[die.value - 1] += 1
    return counts


def test_the_dice_page_reads_no_log_and_keeps_the_right_counts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = data / "companion.sqlite3"
    settings = thread_settings(data, **UNLIMITED_DEVICES)
    with ThreadServer(settings) as first:
        client = httpx.Client(base_url=first.base_url, timeout=30)
        created = client.post("/api/tables", json={"game": "qwixx", "options": {"players": 2}})
        table_id = created.json()["table_id"]
        for n in range(3):
            body = {"action_id": f"roll-{n:04d}", "move": QWIXX_ROLL_7}
            assert client.post(f"/api/tables/{table_id}/actions", json=body).status_code == 200
            undo = {"action_id": f"undo-{n:04d}"}
            assert client.post(f"/api/tables/{table_id}/undo", json=undo).status_code == 200
        body = {"action_id": "roll-last", "move": QWIXX_ROLL_7}
        assert client.post(f"/api/tables/{table_id}/actions", json=body).status_code == 200
        assert client.post("/api/import", json=long_record("qwixx", 2)).status_code == 201
    with ThreadServer(settings) as second:  # a restart: the counts are read once, at start
        client = httpx.Client(base_url=second.base_url, timeout=30, cookies=dict(client.cookies))
        assert client.get(f"/api/tables/{table_id}/state").status_code == 200  # opened
        store = second.app.state.tables.store

        def no_log(*_args: object) -> None:
            raise AssertionError("the dice page read a log")

        store.logs = no_log  # type: ignore[method-assign]
        store.log = no_log  # type: ignore[method-assign]
        page = client.get(f"/t/{table_id}/dice")
        assert page.status_code == 200, page.text[:300]
        assert dice_counts(page.text, 0) == recounted(path, table_id) != {}
        assert dice_counts(page.text, 1) == recounted(path, None)
        assert "All recorded games (2)" in page.text
        # an undo and a roll after the restart change the counts, still without a log read
        assert client.post(
            f"/api/tables/{table_id}/undo", json={"action_id": "undo-after"}
        ).is_success
        page = client.get(f"/t/{table_id}/dice")
        assert dice_counts(page.text, 0) == recounted(path, table_id) == {}
        body = {"action_id": "roll-after", "move": QWIXX_ROLL_7}
        assert client.post(f"/api/tables/{table_id}/actions", json=body).is_success
        page = client.get(f"/t/{table_id}/dice")
        assert dice_counts(page.text, 0) == recounted(path, table_id)
        assert dice_counts(page.text, 1) == recounted(path, None)


def test_table_creation_and_import_are_limited_per_client(server: ThreadServer) -> None:
    burst = server.app.state.settings.table_burst
    client = httpx.Client(base_url=server.base_url, timeout=30)
    body = {"game": "qwixx", "options": {"players": 2}}
    statuses = Counter(client.post("/api/tables", json=body).status_code for _ in range(burst + 20))
    assert statuses[201] <= burst + 2 and statuses[429] >= 18, statuses
    refused = client.post("/api/tables", json=body)
    assert refused.status_code == 429 and refused.json()["rule"] == "table_rate"
    assert int(refused.headers["Retry-After"]) >= 1
    imported = client.post("/api/import", json=long_record("qwixx", 1))  # the same bucket
    assert imported.status_code == 429
    # another device (address) on the network is not held up by this one
    other = httpx.Client(
        base_url=server.base_url,
        timeout=30,
        transport=httpx.HTTPTransport(local_address="127.0.0.2"),
    )
    assert other.post("/api/tables", json=body).status_code == 201
