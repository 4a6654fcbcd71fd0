"""Abuse benchmark: can one client stall every table? A real `companion serve` process on a
store of about 90,000 recorded actions, and three abuses at once, each from its own
loopback address (as separate devices on a LAN would be):

- imports: 4 clients each import in a loop, at the same time, a ~1.2 MB game record (over
  the size cap) and a real long game's record (a Sixis game of 1,000+ actions, replayed);
- dice statistics: 4 clients request /t/X/dice in a loop (X: a table of the big store);
- a burst of table creations: one client creates 500 tables as fast as it can;
- long pages (issue 25, each with --only): 2 clients loop on the log page of a
  10,000-entry game (`log`), 2 on its exported record (`record`), 2 on /history from the
  server's own machine, where it lists the store's latest finished games (`history`;
  --finished 3000 adds 3,000 finished games of no action, as docs/RELIABILITY.md item 19);
  4 clients import the long game's record and open its table, in a loop (`open`: each
  open replays the game in the server's process); 2 clients loop on the start page from
  the server's own machine, where it lists the running games (`start`; --running 3000 for
  the fifth probe's store of 3,000 running tables).

A reader (dice, long pages) or opener answered 429 waits out its Retry-After, at most
MAX_RETRY_WAIT_S and never past the abuse's end, as a well-behaved client does: what the
readers got counts what the limiter lets through, and the latency what serving that costs.
--hostile: the readers loop without waiting, as a hostile client would (docs/BENCHMARKS.md's
figures before 2026-12-07: thousands of 429s, each costing the loop a little; the opener
waits either way). The importers and the creator never wait: they are the flood.

Meanwhile a seventh device plays its own Qwixx table, paced (one action per --interval
seconds, sent on the host's WebSocket), and measures push latency: from sending an action
to the moment another device's socket at that table shows the new state. Printed: p50/p95
of that latency before the abuse (idle) and during it, and what each abuser got (answer
counts per status; `<name> waited`: the 429s a reader waited out; reader_p50_ms: the
median time of a reader's request, 429s included). Target: p95 under abuse < 100 ms.

    .venv/bin/python bench/abuse.py [--seconds 30] [--actions 90000] [--server-repo DIR]
                                    [--only ...] [--hostile]

--server-repo runs the server from another checkout (e.g. /work/main, for a before/after
figure); the abusers, the store and the measuring device stay the same.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import websockets

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.rules.base import Move, Roll  # noqa: E402
from companion.rules.codec import encode  # noqa: E402
from companion.rules.registry import find_game  # noqa: E402
from companion.rules.session import Session  # noqa: E402
from companion.simulate import play_random_game, random_action  # noqa: E402
from companion.table.access import hash_token  # noqa: E402
from companion.table.store import LogEntry, Store  # noqa: E402

DICE_TOKEN = "bench-dice-token"
LONG_TOKEN = "bench-long-token"
LONG_TABLE = "benchlong"  # a game of 10,000 log entries (its moves, undone and made again)
LONG_ENTRIES = 10_000
LOG_READERS = ["127.0.0.11", "127.0.0.12"]
RECORD_READERS = ["127.0.0.13", "127.0.0.14"]
HISTORY_READERS = ["127.0.0.1", "127.0.0.1"]  # /history lists every finished game here, paged
START_READERS = ["127.0.0.1", "127.0.0.1"]  # / lists the running games on this machine
IMPORTERS = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
DICE_READERS = ["127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"]
CREATOR = "127.0.0.10"
MAX_RETRY_WAIT_S = 10.0  # a Retry-After beyond this is waited only this long


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def recorded_game(name: str, players: int, seed: int) -> Session:
    """A random complete game, as its devices would have sent it."""
    game = find_game(name)
    session = Session(game, game.options_for(players))

    def keep(_before: object, move: Move, _after: object) -> None:
        session.act(move, by="camera" if isinstance(move, Roll) else str(move.player))

    play_random_game(game, game.options_for(players), random.Random(seed), 20_000, keep)
    return session


def build_store(data_dir: Path, actions: int, running: int = 0, finished: int = 0) -> str:
    """A store of about `actions` recorded Qwixx actions (finished games of 2-5 players),
    `running` Qwixx tables with no action yet and `finished` ones the host ended before any
    action; the id of the table the dice readers open (their device token is
    DICE_TOKEN)."""
    store = Store.open(data_dir / "companion.sqlite3")
    total, index, first = 0, 0, ""
    try:
        while total < actions:
            session = recorded_game("qwixx", 2 + index % 4, index)
            table_id = f"bench{index:05d}"
            log = [
                LogEntry(i + 1, f"a{i + 1}", "move", a.by, session.game.move_to_json(a.move))
                for i, a in enumerate(session.actions)
            ]
            store.create_table(
                table_id,
                f"B{index:05d}",
                "qwixx",
                encode(session.options),
                session.players,
                log,
                {"game": "qwixx", "title": "Qwixx", "players": session.players, "scores": []},
            )
            first = first or table_id
            total += len(log)
            index += 1
        store.add_device(hash_token(DICE_TOKEN), first, True, None)
        store_long_game(store)
        for n in range(running):
            options = {"players": 2}
            store.create_table(f"run{n:05d}", f"R{n:05d}", "qwixx", options, ["Ann", "Bob"])
        for n in range(finished):
            players = ["Ann", "Bob"]
            summary = {"game": "qwixx", "title": "Qwixx", "players": players, "scores": []}
            store.create_table(
                f"end{n:05d}", f"E{n:05d}", "qwixx", {"players": 2}, players, (), summary
            )
    finally:
        store.close()
    print(f"store: {index} games, {total} actions", flush=True)
    return first


def store_long_game(store: Store) -> None:
    """A running game of LONG_ENTRIES log entries: each move of a recorded game, taken back
    by the host and made again until the log is that long (its device token: LONG_TOKEN)."""
    session = recorded_game("qwixx", 4, 99)
    moves = [(a.by, session.game.move_to_json(a.move)) for a in session.actions[:-1]]
    repeats = max(0, (LONG_ENTRIES - len(moves)) // (2 * len(moves)))
    log: list[LogEntry] = []
    for index, (by, move) in enumerate(moves):
        for again in range(repeats + 1):
            if again:
                log.append(LogEntry(len(log) + 1, f"u{index}-{again}", "undo", "host", None))
            suffix = f"-{again}" if again else ""
            log.append(LogEntry(len(log) + 1, f"m{index}{suffix}", "move", by, move))
    options = encode(session.options)
    store.create_table(LONG_TABLE, "BLONG1", "qwixx", options, session.players, log)
    store.add_device(hash_token(LONG_TOKEN), LONG_TABLE, True, None)
    print(f"long game: {len(log)} log entries", flush=True)


def start_server(repo: Path, data_dir: Path, port: int) -> tuple[subprocess.Popen[bytes], float]:
    """`companion serve` from `repo` on 127.0.0.1; the seconds it took to answer."""
    command = [sys.executable, "-m", "companion.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--no-camera", "--local"]
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(repo)},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/icon.svg", timeout=0.5)
            return process, time.perf_counter() - started
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


# -- the abusers (a separate process, so their work does not slow the measuring device) ---
def import_records() -> tuple[bytes, bytes]:
    """(a ~1.2 MB record, a real long game's record), as JSON bytes."""
    long_game = recorded_game("sixis", 4, 3).to_record()
    while len(long_game["actions"]) < 1000:
        long_game = recorded_game("sixis", 4, len(long_game["actions"])).to_record()
    legal = json.dumps(long_game).encode()
    copies = 1_200_000 // len(legal) + 1
    big = json.dumps(long_game | {"actions": long_game["actions"] * copies}).encode()
    return big, legal


async def importer(
    base: str, address: str, records: tuple[bytes, bytes], stop: float, seen: Counter[str]
) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=60) as client:
        while time.monotonic() < stop:
            for kind, body in zip(("1.2MB", "long game"), records, strict=True):
                answer = await client.post(
                    "/api/import", content=body, headers={"content-type": "application/json"}
                )
                seen[f"import {kind} {answer.status_code}"] += 1


async def opener(
    base: str, address: str, records: tuple[bytes, bytes], stop: float, seen: Counter[str]
) -> None:
    """Import the long game and open its table (replayed in the server), in a loop."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=60) as client:
        while time.monotonic() < stop:
            answer = await client.post(
                "/api/import", content=records[1], headers={"content-type": "application/json"}
            )
            seen[f"open: import {answer.status_code}"] += 1
            if answer.status_code == 201:
                page = await client.get(answer.json()["url"], headers={"accept": "text/html"})
                seen[f"open: page {page.status_code}"] += 1
            else:
                await wait_out(answer, stop, seen, "open")


async def dice_reader(
    base: str,
    address: str,
    table_id: str,
    stop: float,
    seen: Counter[str],
    took: list[float],
    patient: bool = True,
) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    cookies = {f"tc_{table_id}": DICE_TOKEN}
    async with httpx.AsyncClient(
        base_url=base, transport=transport, timeout=60, cookies=cookies
    ) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            answer = await client.get(f"/t/{table_id}/dice")
            took.append(time.perf_counter() - started)
            seen[f"dice {answer.status_code}"] += 1
            await wait_out(answer, stop, seen, "dice", patient)


async def page_reader(
    base: str,
    address: str,
    path: str,
    stop: float,
    seen: Counter[str],
    took: list[float],
    patient: bool = True,
) -> None:
    """GET `path` in a loop with the long game's host cookie, each request as soon as the
    last is answered or its 429's Retry-After is waited out (wait_out; not `patient`:
    at once)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    cookies = {f"tc_{LONG_TABLE}": LONG_TOKEN}
    async with httpx.AsyncClient(
        base_url=base, transport=transport, timeout=60, cookies=cookies
    ) as client:
        while time.monotonic() < stop:
            started = time.perf_counter()
            answer = await client.get(path, headers={"accept": "text/html"})
            took.append(time.perf_counter() - started)
            name = path.split("/")[-1] or path
            seen[f"{name} {answer.status_code}"] += 1
            await wait_out(answer, stop, seen, name, patient)


async def wait_out(
    answer: httpx.Response, stop: float, seen: Counter[str], name: str, patient: bool = True
) -> None:
    """After a 429, sleep its Retry-After (1 s when absent or unreadable), at most
    MAX_RETRY_WAIT_S and not past `stop`; counted as `name waited`. Not `patient`
    (--hostile): nothing is waited."""
    if answer.status_code != 429 or not patient:
        return
    try:
        asked = float(answer.headers.get("retry-after", "1"))
    except ValueError:
        asked = 1.0
    seen[f"{name} waited"] += 1
    await asyncio.sleep(max(0.0, min(asked, MAX_RETRY_WAIT_S, stop - time.monotonic())))


LONG_PAGES = {
    "log": (LOG_READERS, f"/t/{LONG_TABLE}/log"),
    "record": (RECORD_READERS, f"/api/tables/{LONG_TABLE}/record"),
    "history": (HISTORY_READERS, "/history"),
    "start": (START_READERS, "/"),
}


async def creator(base: str, seen: Counter[str]) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=CREATOR)
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=60) as client:
        body = {"game": "qwixx", "options": {"players": 2}}

        async def one() -> None:
            answer = await client.post("/api/tables", json=body)
            seen[f"create {answer.status_code}"] += 1

        for _ in range(500 // 10):
            await asyncio.gather(*(one() for _ in range(10)))


async def abuse(
    base: str, table_id: str, seconds: float, which: set[str], patient: bool
) -> dict[str, Any]:
    records = import_records() if {"imports", "open"} & which else (b"", b"")
    stop = time.monotonic() + seconds
    seen: Counter[str] = Counter()
    took: list[float] = []
    started = time.perf_counter()
    work = []
    if "imports" in which:
        work += [importer(base, a, records, stop, seen) for a in IMPORTERS]
    if "dice" in which:
        work += [dice_reader(base, a, table_id, stop, seen, took, patient) for a in DICE_READERS]
    if "create" in which:
        work.append(creator(base, seen))
    if "open" in which:
        work += [opener(base, a, records, stop, seen) for a in IMPORTERS]
    for name, (addresses, path) in LONG_PAGES.items():
        if name in which:
            work += [page_reader(base, a, path, stop, seen, took, patient) for a in addresses]
    await asyncio.gather(*work)
    took.sort()
    return {
        "answers": dict(sorted(seen.items())),
        "reader_p50_ms": 1000 * statistics.median(took) if took else None,
        "creation_and_all_s": time.perf_counter() - started,
        "import_sizes": [len(r) for r in records],
    }


def abuse_process(
    base: str, table_id: str, seconds: float, which: set[str], patient: bool, results: Any
) -> None:
    results.put(asyncio.run(abuse(base, table_id, seconds, which, patient)))


# -- the measuring device -------------------------------------------------------------------
class Player:
    """The seventh device's table: the host sends on its socket, a seated player's socket
    watches; a local mirror of the game chooses legal moves."""

    def __init__(self, base: str, rng: random.Random) -> None:
        self.base, self.rng = base, rng
        self.game = find_game("qwixx")
        self.count = 0

    async def open(self) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=30) as host:
            body = {"game": "qwixx", "options": {"players": 2}}
            table = (await host.post("/api/tables", json=body)).json()
            host_cookie = "; ".join(f"{k}={v}" for k, v in host.cookies.items())
        async with httpx.AsyncClient(base_url=self.base, timeout=30) as phone:
            await phone.post("/api/join", json={"code": table["code"]})
            await phone.post(f"/api/tables/{table['table_id']}/seat", json={"seat": 0})
            phone_cookie = "; ".join(f"{k}={v}" for k, v in phone.cookies.items())
        ws = self.base.replace("http://", "ws://") + f"/t/{table['table_id']}/ws"
        self.sender = await websockets.connect(
            ws + "?view=table", additional_headers={"Cookie": host_cookie}, max_size=2**23
        )
        self.watcher = await websockets.connect(
            ws + "?view=sheet", additional_headers={"Cookie": phone_cookie}, max_size=2**23
        )
        self.mirror = Session(self.game, self.game.options_for(2))
        await self.seen_by_watcher(0)

    async def seen_by_watcher(self, state_id: int) -> float:
        while True:
            message = json.loads(await asyncio.wait_for(self.watcher.recv(), 30))
            if message.get("type") == "state" and message["state_id"] >= state_id:
                return time.perf_counter()

    async def step(self) -> float:
        """One action; milliseconds until the watching device shows its state."""
        if self.mirror.outcome() is not None:
            await self.sender.close()
            await self.watcher.close()
            await self.open()
        move = random_action(self.game, self.mirror.state, self.rng)
        self.count += 1
        started = time.perf_counter()
        await self.sender.send(
            json.dumps(
                {
                    "type": "act",
                    "action_id": f"measure-{self.count:08d}",
                    "expected_state_id": self.mirror.state_id,
                    "move": self.game.move_to_json(move),
                }
            )
        )
        self.mirror.act(move, by="camera" if isinstance(move, Roll) else "host")
        arrived = await self.seen_by_watcher(self.mirror.state_id)
        return 1000 * (arrived - started)


async def measure(player: Player, seconds: float, interval: float) -> list[float]:
    latencies = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        started = time.monotonic()
        latencies.append(await player.step())
        await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
    return latencies


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms"
        f" ({len(ordered)} actions)"
    )


async def run(args: argparse.Namespace, base: str, table_id: str) -> None:
    player = Player(base, random.Random(7))
    await player.open()
    await measure(player, 2, args.interval)  # warm up
    idle = await measure(player, args.idle_seconds, args.interval)
    print(f"idle:        {percentiles(idle)}", flush=True)
    results: Any = multiprocessing.get_context("spawn").Queue()
    abusers = multiprocessing.get_context("spawn").Process(
        target=abuse_process,
        args=(base, table_id, args.seconds, set(args.only), not args.hostile, results),
    )
    abusers.start()
    await asyncio.sleep(ABUSERS_START_S)  # the abusers build their records and start
    during = await measure(player, args.seconds - ABUSERS_START_S, args.interval)
    report = await asyncio.to_thread(results.get)
    abusers.join()
    print(f"under abuse: {percentiles(during)}", flush=True)
    print(f"abusers: {json.dumps(report)}", flush=True)


ABUSERS_START_S = 3  # the abuse's first seconds, before the player is timed under it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=30,
        help=f"how long the abuse lasts (more than its first {ABUSERS_START_S} s, untimed)",
    )
    parser.add_argument("--idle-seconds", type=float, default=8)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between actions")
    parser.add_argument("--actions", type=int, default=90_000, help="size of the store")
    parser.add_argument(
        "--running", type=int, default=0, help="running tables in the store (for `start`)"
    )
    parser.add_argument(
        "--finished", type=int, default=0, help="finished tables of no action (for `history`)"
    )
    parser.add_argument("--server-repo", type=Path, default=REPO)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=("imports", "dice", "create", "open", *LONG_PAGES),
        default=("imports", "dice", "create"),
        help="run only these abuses (default: all three at once)",
    )
    parser.add_argument(
        "--hostile",
        action="store_true",
        help="readers loop without waiting out a 429's Retry-After (the rows before 2026-12-07)",
    )
    args = parser.parse_args(argv)
    if args.seconds <= ABUSERS_START_S:
        parser.error(
            f"--seconds {args.seconds:g} leaves nothing to time: the abusers take the first "
            f"{ABUSERS_START_S} s to start; give more (default 30)"
        )
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        table_id = build_store(data_dir, args.actions, args.running, args.finished)
        port = free_port()
        process, started = start_server(args.server_repo, data_dir, port)
        print(f"server ({args.server_repo}) answered {started:.1f} s after its start", flush=True)
        try:
            asyncio.run(run(args, f"http://127.0.0.1:{port}", table_id))
        finally:
            process.terminate()
            process.wait(timeout=20)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
