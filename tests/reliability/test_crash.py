"""Crash test: six devices (the host entering the dice and five players crossing and
passing) act as fast as they can on Qwixx tables while the real server process is killed
with SIGKILL at random moments, 20 times. After every restart:

- every acknowledged action is in the SQLite log exactly once, at the state id its
  acknowledgement named (read straight from the database file);
- a retry of acknowledged actions by their senders is answered `duplicate` with the same
  state id;
- every table's state and scores equal the replay of its exported record through the
  engine, and a WebSocket sees the same state id;
- every device reconnects by itself and gets answers again, and the game goes on.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.sync.client import connect

from companion.rules.registry import find_game
from companion.rules.session import replay_record
from tests.reliability.conftest import SeatedTable, random_roll, seat_devices
from tests.web.conftest import ServerProcess

KILLS = 20
RUNNING_TABLES = 3  # unfinished tables at every restart: the devices move on when one ends
ROUND_DEADLINE_S = 60.0  # generous: CI's 2-core machine may be busy


@dataclass
class Tally:
    """What the devices saw, shared between their threads (under `lock`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> (table, state)
    sent: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    answers: Counter[int] = field(default_factory=Counter)  # device -> answers this round
    acks: Counter[int] = field(default_factory=Counter)  # device -> acks this round


class Device(threading.Thread):
    """One device: reads the state, sends one of its legal moves (the host: the dice),
    and on a dropped connection parks until the server is back, then resumes."""

    def __init__(
        self,
        index: int,
        client: httpx.Client,
        tables: list[str],
        seat: int | None,
        tally: Tally,
        running: threading.Event,
        stop: threading.Event,
    ) -> None:
        super().__init__(daemon=True)
        self.index, self.client, self.tables, self.seat = index, client, tables, seat
        self.tally, self.running, self.stop = tally, running, stop
        self.parked = threading.Event()
        self.rng = random.Random(index)
        self.sent_count = 0
        self.finished: set[str] = set()

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.running.is_set():
                self.parked.set()
                self.running.wait(0.05)
                continue
            self.parked.clear()
            try:
                self.step()
            except (httpx.TransportError, httpx.RemoteProtocolError):
                time.sleep(0.02)  # the server is down: try again (a fresh connection)

    def step(self) -> None:
        table_id = next((t for t in self.tables if t not in self.finished), None)
        if table_id is None:
            time.sleep(0.05)
            return
        state = self.client.get(f"/api/tables/{table_id}/state")
        self.count_answer(state.status_code)
        payload = state.json()
        if payload["finished"]:
            self.finished.add(table_id)
            return
        turn = payload["turn"]
        if self.seat is None:
            if not turn["chance"]:
                time.sleep(0.002)
                return
            move = random_roll(turn["dice"], self.rng)
        else:
            if not payload["legal_moves"]:
                time.sleep(0.002)
                return
            move = self.rng.choice(payload["legal_moves"])
        action_id = f"d{self.index}-{self.sent_count:06d}"
        self.sent_count += 1
        with self.tally.lock:
            self.tally.sent[action_id] = (table_id, move)
        answer = self.client.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": action_id, "move": move, "expected_state_id": payload["state_id"]},
        )
        self.count_answer(answer.status_code)
        with self.tally.lock:
            if answer.status_code == 200:
                self.tally.acked[action_id] = (table_id, answer.json()["state_id"])
                self.tally.acks[self.index] += 1
            elif answer.status_code >= 500:
                self.tally.server_errors.append(f"{answer.status_code} {answer.text[:200]}")
            else:
                self.tally.refused[answer.json().get("reason", str(answer.status_code))] += 1

    def count_answer(self, status: int) -> None:
        with self.tally.lock:
            self.tally.answers[self.index] += 1
            if status >= 500:
                self.tally.server_errors.append(f"{status} on a state read")


def stored_actions(server: ServerProcess) -> dict[str, tuple[str, int]]:
    """action id -> (table id, seq) straight from the SQLite file (a read-only reader)."""
    path = server.data_dir / "companion.sqlite3"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT action_id, table_id, seq FROM actions").fetchall()
    finally:
        db.close()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), "an action id is stored twice"
    return {action_id: (table_id, seq) for action_id, table_id, seq in rows}


def check_after_restart(
    server: ServerProcess, table: SeatedTable, tally: Tally, tables: list[str]
) -> None:
    """Everything the module docstring promises, with the devices parked."""
    stored = stored_actions(server)
    with tally.lock:
        acked = dict(tally.acked)
        sent = dict(tally.sent)
    missing = {a: v for a, v in acked.items() if stored.get(a) != v}
    assert not missing, f"acknowledged actions lost or moved: {list(missing.items())[:5]}"
    # anything stored beyond the acknowledgements was sent (its answer lost in the crash)
    assert set(stored) <= set(sent), "the log holds an action nobody sent"

    host = table.host
    game = find_game("qwixx")
    for table_id in tables:
        payload = host.get(f"/api/tables/{table_id}/state").json()
        record = host.get(f"/api/tables/{table_id}/record").json()
        replayed = replay_record(record)
        assert payload["state"] == game.state_to_json(replayed.state)
        assert [s["total"] for s in payload["scores"]] == [s.total for s in replayed.scores()]
        on_table = [s for t, s in acked.values() if t == table_id]
        assert payload["state_id"] >= max(on_table, default=0)
        assert payload["state_id"] == sum(1 for t, _ in stored.values() if t == table_id)

    # server-side idempotency: retries of acknowledged actions apply nothing (each from
    # the device that sent it: another device's is checked as a new action)
    rng = random.Random(len(acked))
    devices = [host, *table.seats]
    for action_id in rng.sample(sorted(acked), min(8, len(acked))):
        table_id, state_id = acked[action_id]
        sender = devices[int(action_id[1:].split("-")[0])]  # "d{device index}-{count}"
        retry = sender.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": action_id, "move": sent[action_id][1]},
        )
        assert retry.json() == {"state_id": state_id, "duplicate": True}, retry.text

    # the live channel comes back with the stored state
    live = tables[0]
    ws_url = server.base_url.replace("http://", "ws://") + f"/t/{live}/ws?view=table"
    cookie = f"tc_{live}={host.cookies.get(f'tc_{live}')}"
    with connect(ws_url, additional_headers={"Cookie": cookie}, open_timeout=5) as socket:
        first = json.loads(socket.recv(timeout=5))
    assert first["type"] == "state"
    assert first["state_id"] == host.get(f"/api/tables/{live}/state").json()["state_id"]


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` until it holds; fail naming `what` after ROUND_DEADLINE_S."""
    deadline = time.monotonic() + ROUND_DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {ROUND_DEADLINE_S} s: {what}")
        time.sleep(0.01)


def top_up(tables: list[str], host: httpx.Client, seats: list[httpx.Client], base_url: str) -> None:
    """Keep RUNNING_TABLES unfinished tables in `tables` (the devices parked): on a quick
    machine the devices end games faster than on a busy one, and a round with every table
    over would leave them nothing to send."""
    running = sum(1 for t in tables if not host.get(f"/api/tables/{t}/state").json()["finished"])
    for _ in range(RUNNING_TABLES - running):
        tables.append(seat_devices(base_url, host, seats).table_id)


def test_sigkill_twenty_times_while_six_devices_play(server: ServerProcess) -> None:
    host = httpx.Client(base_url=server.base_url, timeout=5)
    seats = [httpx.Client(base_url=server.base_url, timeout=5) for _ in range(5)]
    first = seat_devices(server.base_url, host, seats)
    tables = [first.table_id]
    top_up(tables, host, seats, server.base_url)
    tally = Tally()
    running, stop = threading.Event(), threading.Event()
    devices = [Device(0, host, tables, None, tally, running, stop)] + [
        Device(i + 1, client, tables, i, tally, running, stop) for i, client in enumerate(seats)
    ]
    for device in devices:
        device.start()
    rng = random.Random(2026)
    acked_per_round: list[int] = []

    def every_device_answered_and_one_acked() -> bool:
        with tally.lock:
            answered = all(tally.answers[d.index] > 0 for d in devices)
            return answered and sum(tally.acks.values()) > 0

    try:
        for _ in range(KILLS):
            with tally.lock:
                tally.answers.clear()
                tally.acks.clear()
            running.set()
            # every device gets answers again after the restart (it reconnected by itself)
            # and the game moves on; how long that takes depends on the machine's load
            wait_until(every_device_answered_and_one_acked, "every device answered again")
            time.sleep(rng.uniform(0.0, 0.7))  # then a random moment, requests in flight
            server.kill()
            running.clear()
            for device in devices:
                assert device.parked.wait(10), f"device {device.index} did not notice the crash"
            with tally.lock:
                acked_per_round.append(sum(tally.acks.values()))
            server.start()
            check_after_restart(server, first, tally, tables)
            top_up(tables, host, seats, server.base_url)
    finally:
        stop.set()
        running.set()
        for device in devices:
            device.join(timeout=10)
    assert not tally.server_errors, tally.server_errors[:5]
    # the refusals the devices met are the engine's and the stale-view check, never errors
    assert set(tally.refused) <= {"stale_state", "illegal_move", "not_your_turn", "game_over"}
    print(
        f"kills={KILLS} tables={len(tables)} acked={len(tally.acked)} sent={len(tally.sent)} "
        f"refused={dict(tally.refused)} per_round={acked_per_round}"
    )
