"""Load benchmark: one real `companion serve` process (loopback only) with --tables Qwixx
tables of six devices each (five seated players and the host's table view, every one a
WebSocket client). Every table plays at once: the host's device enters the dice, all
waiting players tap the white-sum step at the same moment, the active player the colour
step; each device sends its own actions on its own socket, as a tablet does.

Figures:
- fan-out latency: from an action being sent to the moment every device of that table has
  received a state at least that new (p50, p95, max);
- accepted actions per second held by the server over the run, and refusals by reason.

Two modes:
- saturation (default): every table sends its next actions as soon as the previous ones are
  acknowledged and every device of the table shows the new state (a player taps what their
  screen shows), all waiting players at once: the most the server holds;
- paced (`--rate R`): each table sends R actions per second (one at a time, spread across the
  seats that may act, a roll by the host's device when the dice are due), as a real dice
  table does (about 0.5-1 per table per second); the figures are the latency a player sees
  at that load and whether the server keeps up with it.

Bounded: each table stops after --actions accepted actions, the whole run after --seconds;
the server is stopped at the end. `--ping-s S`: every device also sends the page's heartbeat
(a ping the server answers with a pong) every S seconds; the page sends one only after 15 s
with nothing heard, so at a table in play none, and a ping a second on every socket is far
above what 120 idle pages send (8 a second in all). `--profile FILE` samples the server with py-spy (every
thread, `.venv/bin/pip install py-spy`) and writes its collapsed stacks to FILE.

    .venv/bin/python bench/load.py [--tables 20] [--actions 120] [--seconds 120] [--rate R]
        [--ping-s S] [--profile FILE] [--write]

--write appends the figures to docs/benchmarks/reliability.md.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import websockets

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._server import start_server  # noqa: E402
from companion.rules.base import Die, Move, Roll  # noqa: E402
from companion.rules.registry import find_game  # noqa: E402
from companion.rules.session import Session  # noqa: E402

SEATS = 5  # Qwixx's most; the sixth device is the host's table view
GAME = find_game("qwixx")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Device:
    """A device's socket, the state ids it received with their times, and its replies."""

    socket: Any
    seen_ids: list[int] = field(default_factory=list)
    seen_at: list[float] = field(default_factory=list)
    replies: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    pongs: int = 0

    async def read(self) -> None:
        async for text in self.socket:
            message = json.loads(text)
            if message["type"] == "pong":
                self.pongs += 1
            elif message["type"] == "state":
                self.seen_ids.append(message["state_id"])
                self.seen_at.append(time.perf_counter())
            elif message.get("action_id") in self.replies:
                self.replies.pop(message["action_id"]).set_result(message)

    def time_of(self, state_id: int) -> float | None:
        """When this device first held a state at least `state_id` new."""
        at = bisect.bisect_left(self.seen_ids, state_id)
        return self.seen_at[at] if at < len(self.seen_ids) else None

    async def ping_every(self, seconds: float) -> None:
        """The page's heartbeat (table.js), sent every `seconds` whatever else comes."""
        while True:
            await asyncio.sleep(seconds)
            await self.socket.send('{"type": "ping"}')

    async def send(self, move: Move, action_id: str, expected: int) -> dict[str, Any]:
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[action_id] = reply
        body = {"type": "act", "action_id": action_id, "expected_state_id": expected}
        await self.socket.send(json.dumps(body | {"move": GAME.move_to_json(move)}))
        return await asyncio.wait_for(reply, timeout=30)


@dataclass
class TableRun:
    """One table: its devices (index SEATS is the host), a local mirror of the game, and
    (sent time, state id) of every accepted action."""

    name: str
    devices: list[Device]
    mirror: Session
    rng: random.Random
    accepted: list[tuple[float, int]] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    count: int = 0

    async def act(self, device: int, move: Move, expected: int) -> tuple[int, Move, str] | None:
        self.count += 1
        sent = time.perf_counter()
        reply = await self.devices[device].send(move, f"{self.name}-{self.count:06d}", expected)
        if reply["type"] != "ack":
            self.refused[reply.get("reason", "?")] += 1
            return None
        self.accepted.append((sent, reply["state_id"]))
        by = "host" if device == SEATS else str(device)
        return reply["state_id"], move, by

    async def play(self, limit: int, until: float) -> None:
        while len(self.accepted) < limit and time.monotonic() < until:
            if self.mirror.outcome() is not None:
                return
            turn = self.mirror.turn()
            expected = self.mirror.state_id
            if turn.chance and turn.dice is not None:
                dice = tuple(Die(c, self.rng.randint(1, 6)) for c in turn.dice.colours)
                sends = [self.act(SEATS, Roll(dice=dice), expected)]
            else:  # every player who may act taps at once
                sends = [
                    self.act(seat, self.rng.choice(self.mirror.legal_moves(seat)), expected)
                    for seat in turn.players
                ]
            results = [r for r in await asyncio.gather(*sends) if r is not None]
            for _, move, by in sorted(results, key=lambda r: r[0]):
                self.mirror.act(move, by="camera" if isinstance(move, Roll) else by)
            if results:  # the next taps are made on screens that show this state
                await self.shown(max(r[0] for r in results), until)

    async def shown(self, state_id: int, until: float) -> bool:
        """Wait until every device holds `state_id` (False if `until` passes first)."""
        while any(d.time_of(state_id) is None for d in self.devices):
            if time.monotonic() >= until:
                return False
            await asyncio.sleep(0.005)
        return True

    async def play_paced(self, limit: int, until: float, rate: float) -> None:
        """One action every 1/rate s (never a burst to catch up: a late action delays the
        next), each after the previous one was acknowledged; a waiting player at random."""
        interval = 1.0 / rate
        next_at = time.monotonic() + self.rng.uniform(0, interval)  # tables out of phase
        while len(self.accepted) < limit:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if time.monotonic() >= until or self.mirror.outcome() is not None:
                return
            next_at = max(next_at + interval, time.monotonic())
            turn = self.mirror.turn()
            expected = self.mirror.state_id
            if turn.chance and turn.dice is not None:
                dice = tuple(Die(c, self.rng.randint(1, 6)) for c in turn.dice.colours)
                result = await self.act(SEATS, Roll(dice=dice), expected)
            else:
                seat = self.rng.choice(turn.players)
                result = await self.act(
                    seat, self.rng.choice(self.mirror.legal_moves(seat)), expected
                )
            if result is not None:
                _, move, by = result
                self.mirror.act(move, by="camera" if isinstance(move, Roll) else by)

    def latencies(self) -> list[float]:
        out = []
        for sent, state_id in self.accepted:
            times = [d.time_of(state_id) for d in self.devices]
            if all(t is not None for t in times):
                out.append(max(t for t in times if t is not None) - sent)
        return out


async def open_table(base: str, index: int, seed: int) -> tuple[TableRun, list[asyncio.Task[None]]]:
    ws_base = base.replace("http://", "ws://")
    async with httpx.AsyncClient(base_url=base, timeout=30) as host:
        created = await host.post(
            "/api/tables", json={"game": "qwixx", "options": {"players": SEATS}}
        )
        table = created.json()
        cookies = ["; ".join(f"{k}={v}" for k, v in host.cookies.items())]
    for seat in range(SEATS):
        async with httpx.AsyncClient(base_url=base, timeout=30) as phone:
            await phone.post("/api/join", json={"code": table["code"]})
            await phone.post(f"/api/tables/{table['table_id']}/seat", json={"seat": seat})
            cookies.insert(seat, "; ".join(f"{k}={v}" for k, v in phone.cookies.items()))
    devices, readers = [], []
    for seat, cookie in enumerate(cookies):
        view = "table" if seat == SEATS else "sheet"
        sock = await websockets.connect(
            f"{ws_base}/t/{table['table_id']}/ws?view={view}",
            additional_headers={"Cookie": cookie},
            max_size=2**22,
        )
        device = Device(sock)
        devices.append(device)
        readers.append(asyncio.create_task(device.read()))
    mirror = Session(GAME, GAME.options_for(SEATS))
    return TableRun(f"t{index:02d}", devices, mirror, random.Random(seed + index)), readers


async def run(
    base: str,
    tables: int,
    actions: int,
    seconds: float,
    seed: int,
    rate: float | None,
    ping_s: float | None = None,
) -> dict[str, Any]:
    opened = [await open_table(base, i, seed) for i in range(tables)]
    runs = [r for r, _ in opened]
    if ping_s:
        for table_run, readers in opened:  # cancelled with the readers at the end
            readers.extend(asyncio.create_task(d.ping_every(ping_s)) for d in table_run.devices)
    started = time.perf_counter()
    until = time.monotonic() + seconds
    if rate is None:
        await asyncio.gather(*(r.play(actions, until) for r in runs))
    else:
        await asyncio.gather(*(r.play_paced(actions, until, rate) for r in runs))
    elapsed = time.perf_counter() - started
    # the last pushes: every device gets its table's last state (or 30 s pass)
    settle = time.monotonic() + 30
    for r in runs:
        if r.accepted:
            await r.shown(max(s for _, s in r.accepted), settle)
    delivered_at = [
        max(t for d in r.devices if (t := d.time_of(max(s for _, s in r.accepted))) is not None)
        for r in runs
        if r.accepted and all(d.time_of(max(s for _, s in r.accepted)) for d in r.devices)
    ]
    delivered_s = (max(delivered_at) - started) if delivered_at else float("nan")
    for table_run, readers in opened:
        for task in readers:
            task.cancel()
        for device in table_run.devices:
            await device.socket.close()
    latencies = sorted(x for r in runs for x in r.latencies())
    accepted = sum(len(r.accepted) for r in runs)
    refused: Counter[str] = Counter()
    for r in runs:
        refused.update(r.refused)
    return {
        "mode": "saturation" if rate is None else f"paced {rate:g}/s per table",
        "tables": tables,
        "devices": tables * (SEATS + 1),
        "accepted": accepted,
        "refused": dict(refused),
        "seconds": round(elapsed, 2),
        "actions_per_s": round(accepted / elapsed, 1),
        # accepted actions over the time until the last one was on every device
        "delivered_per_s": round(accepted / delivered_s, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1),
        "max_ms": round(latencies[-1] * 1000, 1),
        "measured": len(latencies),
        "pongs": sum(d.pongs for r in runs for d in r.devices),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--actions", type=int, default=120, help="accepted actions per table")
    parser.add_argument("--seconds", type=float, default=120.0, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="paced mode: actions per second per table (default: saturation)",
    )
    parser.add_argument(
        "--ping-s", type=float, default=None, help="every device pings every S seconds"
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help="sample the server with py-spy, stacks here"
    )
    parser.add_argument(
        "--write", action="store_true", help="append to docs/benchmarks/reliability.md"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        if args.rate is not None and not 0 < args.rate <= 50:
            parser.error("--rate is actions per second per table, above 0 and at most 50")
        server = start_server(Path(tmp), port)
        sampler = None
        if args.profile is not None:  # py-spy writes its file when it gets SIGINT
            spy = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(server.pid)]
            spy += ["-o", str(args.profile), "-f", "raw", "--threads", "--nonblocking"]
            sampler = subprocess.Popen(spy, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu_before = cpu_seconds(server.pid)
        try:
            figures = asyncio.run(
                run(
                    f"http://127.0.0.1:{port}",
                    args.tables,
                    args.actions,
                    args.seconds,
                    args.seed,
                    args.rate,
                    args.ping_s,
                )
            )
            # the server's own CPU time per accepted action: the cost of checking, storing
            # and fanning out one change, whatever else shares the machine
            server_cpu = cpu_seconds(server.pid) - cpu_before
            figures["server_cpu_s"] = round(server_cpu, 1)
            figures["server_cpu_ms_per_action"] = round(1000 * server_cpu / figures["accepted"], 2)
        finally:
            if sampler is not None:
                sampler.send_signal(signal.SIGINT)
                sampler.wait(timeout=60)
            server.terminate()
            server.wait(timeout=30)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    command = (
        f".venv/bin/python bench/load.py --tables {args.tables} --actions {args.actions} "
        f"--seconds {args.seconds:g}"
        + (f" --rate {args.rate:g}" if args.rate else "")
        + (f" --ping-s {args.ping_s:g}" if args.ping_s else "")
    )
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (
        f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}"
    )
    mode = figures["mode"]
    lines = [
        f"| {mode}: fan-out p95 (action -> all 6 devices of its table) | {figures['p95_ms']} ms "
        f"| {date} | `{command}` | {load} |",
        f"| {mode}: fan-out p50 / max | {figures['p50_ms']} / {figures['max_ms']} ms "
        f"| {date} | `{command}` | {load} |",
        f"| {mode}: accepted actions per second held ({figures['tables']} tables, "
        f"{figures['devices']} WebSockets) "
        f"| {figures['actions_per_s']} /s ({figures['accepted']} in {figures['seconds']} s; "
        f"refused {figures['refused'] or 'none'}); on every device: "
        f"{figures['delivered_per_s']} /s | {date} | `{command}` | {load} |",
        f"| {mode}: server CPU per accepted action | {figures['server_cpu_ms_per_action']} ms "
        f"({figures['server_cpu_s']} s in all) | {date} | `{command}` | {load} |",
    ]
    figures["load_average"] = load
    print(json.dumps(figures, indent=1))
    print("\n".join(lines))
    if args.write:
        path = REPO / "docs" / "benchmarks" / "reliability.md"
        if not path.exists():
            path.write_text(
                "# Reliability benchmarks\n\nFigures printed by bench scripts; machine noted per run.\n\n"
                "| figure | value | date | command | load average (1/5/15 min) |\n"
                "|---|---|---|---|---|\n"
            )
        with path.open("a") as out:
            out.write("\n".join(lines) + f"\n<!-- {machine} -->\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
