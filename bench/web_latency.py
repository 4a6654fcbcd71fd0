"""Web latency benchmark: six players' devices (WebSocket clients) at one Sixto table served
by a real `companion serve` process.

Figures:
- cross-to-everyone latency: from a player's cross being sent on its socket to the moment
  all six sockets have received the new state (p50, p95, max over --crosses crosses);
- accepted actions per second: every action (rolls, keeps, crosses, dones) sent one after
  the other by the device whose turn it is, each waiting for its acknowledgement.

Moves are chosen by the engine on a local mirror of the game (random legal moves), so the
benchmark needs no extra requests between actions.

    .venv/bin/python bench/web_latency.py [--crosses 300] [--seconds 10] [--write]

--write appends the figures to docs/benchmarks/web.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import statistics
import sys
import tempfile
import time
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

PLAYERS = 6
GAME = "sixto"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Device:
    """One player's device: its socket, the newest state id it has and when it got it."""

    seat: int
    socket: Any
    state_id: int = -1
    received_at: float = 0.0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    replies: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    async def read(self) -> None:
        async for text in self.socket:
            message = json.loads(text)
            if message["type"] == "state":
                self.state_id = message["state_id"]
                self.received_at = time.perf_counter()
                self.changed.set()
            elif message.get("action_id") in self.replies:
                self.replies.pop(message["action_id"]).set_result(message)

    async def send(self, move: dict[str, Any], action_id: str, expected: int) -> dict[str, Any]:
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[action_id] = reply
        await self.socket.send(
            json.dumps(
                {"type": "act", "action_id": action_id, "expected_state_id": expected, "move": move}
            )
        )
        return await reply


class Bench:
    def __init__(self, base: str, rng: random.Random) -> None:
        self.base = base
        self.rng = rng
        self.game = find_game(GAME)
        self.devices: list[Device] = []
        self.readers: list[asyncio.Task[None]] = []
        self.mirror: Session | None = None
        self.count = 0

    async def new_table(self) -> None:
        for task in self.readers:
            task.cancel()
        for device in self.devices:
            await device.socket.close()
        async with httpx.AsyncClient(base_url=self.base) as host:
            options = {"players": PLAYERS}
            table = (await host.post("/api/tables", json={"game": GAME, "options": options})).json()
        self.mirror = Session(self.game, self.game.parse_options(options))
        self.devices, self.readers = [], []
        ws_base = self.base.replace("http://", "ws://")
        for seat in range(PLAYERS):
            async with httpx.AsyncClient(base_url=self.base) as phone:
                await phone.post("/api/join", json={"code": table["code"]})
                await phone.post(f"/api/tables/{table['table_id']}/seat", json={"seat": seat})
                cookie = "; ".join(f"{k}={v}" for k, v in phone.cookies.items())
            sock = await websockets.connect(
                f"{ws_base}/t/{table['table_id']}/ws?view=sheet",
                additional_headers={"Cookie": cookie},
                max_size=2**22,
            )
            device = Device(seat, sock)
            self.devices.append(device)
            self.readers.append(asyncio.create_task(device.read()))
        await self.everyone_has(0)

    async def everyone_has(self, state_id: int) -> float:
        """Wait until every device shows `state_id`; the time the last one got it."""
        for device in self.devices:
            while device.state_id < state_id:
                device.changed.clear()
                await asyncio.wait_for(device.changed.wait(), timeout=10)
        return max(d.received_at for d in self.devices)

    def next_action(self) -> tuple[int, Move]:
        """(seat that sends it, move): a roll by the active player's device, else a random
        legal move of a random player who may act; crosses preferred over done."""
        assert self.mirror is not None
        turn = self.mirror.turn()
        if turn.chance and turn.dice is not None:
            dice = tuple(Die(c, self.rng.randint(1, 6)) for c in turn.dice.colours)
            return (turn.active or 0), Roll(dice=dice)
        seat = self.rng.choice(turn.players)
        moves = self.mirror.legal_moves(seat)
        crosses = [m for m in moves if m.kind == "cross"]
        if crosses and self.rng.random() < 0.7:
            return seat, self.rng.choice(crosses)
        return seat, self.rng.choice(moves)

    async def step(self) -> tuple[Move, float]:
        """Send the next action; (move, seconds until every device has the new state)."""
        assert self.mirror is not None
        if self.mirror.outcome() is not None:
            await self.new_table()
        seat, move = self.next_action()
        expected = self.mirror.state_id
        self.count += 1
        started = time.perf_counter()
        reply = await self.devices[seat].send(
            self.game.move_to_json(move), f"bench-{self.count:08d}", expected
        )
        if reply["type"] != "ack":
            raise RuntimeError(f"refused: {reply}")
        by = "camera" if isinstance(move, Roll) else str(seat)
        self.mirror.act(move, by=by)
        arrived = await self.everyone_has(self.mirror.state_id)
        return move, arrived - started


async def run(base: str, crosses: int, seconds: float, seed: int) -> dict[str, Any]:
    bench = Bench(base, random.Random(seed))
    await bench.new_table()
    for _ in range(30):  # warm up
        await bench.step()
    latencies: list[float] = []
    while len(latencies) < crosses:
        move, seconds_taken = await bench.step()
        if move.kind == "cross":
            latencies.append(seconds_taken * 1000)
    accepted = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        await bench.step()
        accepted += 1
    elapsed = time.perf_counter() - started
    for device in bench.devices:
        await device.socket.close()
    latencies.sort()
    return {
        "crosses": len(latencies),
        "p50_ms": statistics.median(latencies),
        "p95_ms": latencies[int(0.95 * (len(latencies) - 1))],
        "max_ms": latencies[-1],
        "actions_per_s": accepted / elapsed,
        "actions": accepted,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crosses", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sqlite-synchronous", choices=("FULL", "NORMAL"), default="FULL")
    parser.add_argument("--write", action="store_true", help="append to docs/benchmarks/web.md")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="companion-bench-"))
    port = free_port()
    server = start_server(data_dir, port, "--sqlite-synchronous", args.sqlite_synchronous)
    try:
        figures = asyncio.run(
            run(f"http://127.0.0.1:{port}", args.crosses, args.seconds, args.seed)
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    command = "bench/web_latency.py " + " ".join(sys.argv[1:]).replace("--write", "").strip()
    lines = [
        f"cross to all {PLAYERS} devices: p50 {figures['p50_ms']:.1f} ms, "
        f"p95 {figures['p95_ms']:.1f} ms, max {figures['max_ms']:.1f} ms "
        f"({figures['crosses']} crosses)",
        f"accepted actions per second (one at a time, each acknowledged, committed and "
        f"pushed to {PLAYERS} sockets): {figures['actions_per_s']:.0f} "
        f"({figures['actions']} actions)",
    ]
    lines.append(f"load average during the run (1/5/15 min): {load}")
    print("\n".join(lines))
    if args.write:
        doc = REPO / "docs" / "benchmarks" / "web.md"
        today = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        entry = (
            f"\n## {today}\n\nCommand: `.venv/bin/python {command.strip()}`  \n"
            f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared), SQLite "
            f"synchronous={args.sqlite_synchronous}, WAL, real uvicorn process on loopback.\n\n"
            + "\n".join(f"- {line}" for line in lines)
            + "\n"
        )
        if not doc.exists():
            doc.write_text(
                "# Web benchmarks\n\nFigures from `bench/web_latency.py`: six "
                "WebSocket clients (one per Sixto seat) at one table against a real "
                "server.\n",
                encoding="utf-8",
            )
        with doc.open("a", encoding="utf-8") as out:
            out.write(entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
