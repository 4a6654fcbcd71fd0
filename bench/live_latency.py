"""Live-table latency: from the frame in which thrown dice come to rest arriving at the
camera to the roll reaching a WebSocket client of the table.

A Qwixx clip of --throws throws is rendered (companion.live.demo.render_throws: tumbling,
rest, a hand, an empty table per throw) and written as a 30 fps video; a real uvicorn
server (this process, create_app) replays it as its camera (`--video`, paced at the file's
30 fps), a WebSocket client watches the table, and between throws the players pass over
HTTP so the game asks for the next roll.

The rest frame of each throw is known: the first frame in which every die lies where it
comes to rest (dice that stop early rest in the clip's last "tumble" frames already). Its
arrival is the moment the camera worker takes it from the source (the source is wrapped to
note it: the reader does not see every frame, the worker skips frames in which something
moves). The figure per throw is the time from that arrival to the WebSocket message carrying
the state after the roll, printed with its three parts: the wait for the frame that settles
the throw, that frame's reading and settling, and the hand-over from the camera thread to
the WebSocket (match, engine, SQLite, push). It includes the settle stage's deliberate wait
(where the motion measure is sure, as on this clip, two more unchanged frames at 30 fps,
67 ms; 6 still frames where it is not): a roll is only reported once the dice stopped.

    .venv/bin/python bench/live_latency.py [--throws 20] [--reader truth|pipeline] [--write]

--reader truth: the clip's ground truth stands in for the vision models (measures the live
chain: settle, match, engine, SQLite, WebSocket); pipeline: the shipped ONNX models read
the frames the worker reads. --write adds the run as the first row of the table in
docs/benchmarks/live.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import httpx
from websockets.sync.client import connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.live import demo  # noqa: E402
from companion.live.demo import render_throws  # noqa: E402
from companion.live.settle import RollEvent  # noqa: E402
from companion.rules.registry import standard_dice_sets  # noqa: E402
from companion.table.camera_runtime import CameraRuntime  # noqa: E402
from companion.table.camera_settings import CameraSettings  # noqa: E402
from companion.table.store import Store  # noqa: E402
from companion.table.tables import Tables  # noqa: E402
from companion.vision.sources import FrameSource  # noqa: E402
from companion.vision.types import Frame  # noqa: E402
from companion.web.deps import cookie_name  # noqa: E402
from companion.web.settings import Settings  # noqa: E402
from tests.live.replay import LiveServer  # noqa: E402
from tests.web.conftest import free_port  # noqa: E402

FPS = 30.0
EXTRA_EMPTY_FRAMES = 15
TABLE_HEADER = "| date (UTC) | code |"  # the table of docs/benchmarks/live.md --write adds to
QWIXX = standard_dice_sets()["qwixx"]


class TimedSource(FrameSource):
    """Wraps the camera's source: notes when the worker takes each frame (by index)."""

    def __init__(self, inner: FrameSource, arrival: dict[int, float]) -> None:
        super().__init__()
        self.inner = inner
        self.status = inner.status  # the worker reads the inner source's problems
        self.arrival = arrival

    def describe(self) -> str:
        return self.inner.describe()

    def __iter__(self) -> Iterator[Frame]:
        for frame in self.inner:
            self.arrival.setdefault(frame.index, time.perf_counter())
            yield frame


def time_the_sources(arrival: dict[int, float]) -> None:
    """Make every source the server's camera opens a TimedSource (the camera runtime asks
    companion.live.demo.plan_source for its plan when it starts)."""
    original = demo.plan_source

    def timed_plan(*args: Any, **kwargs: Any) -> demo.SourcePlan:
        plan = original(*args, **kwargs)
        return replace(plan, open=lambda: TimedSource(plan.open(), arrival))

    demo.plan_source = timed_plan


def time_the_events(settled: dict[int, float]) -> None:
    """Note when the camera worker hands each settled throw over (by its frame index)."""
    original = CameraRuntime._event_from_thread

    def timed(runtime: CameraRuntime, event: RollEvent) -> None:
        settled.setdefault(event.frame_index, time.perf_counter())
        original(runtime, event)

    CameraRuntime._event_from_thread = timed  # type: ignore[method-assign,assignment]


class TimedReader:
    """Wraps a reader (the clip's truth or the real pipeline) and counts the frames it
    reads."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.frames_read = 0

    @property
    def dice_set(self) -> Any:
        return getattr(self.inner, "dice_set", None)

    @dice_set.setter
    def dice_set(self, value: Any) -> None:
        if self.inner is not None:
            self.inner.dice_set = value

    def read(self, image: object, frame_index: int = 0) -> Any:
        self.frames_read += 1
        return self.inner.read(image, frame_index)


def write_video(frames: list[Any], path: Path) -> None:
    h, w = frames[0].image.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), FPS, (w, h))
    if not writer.isOpened():
        raise RuntimeError("OpenCV cannot write an MJPG video here")
    for frame in frames:
        writer.write(frame.image)
    writer.release()


async def make_table(settings: Settings) -> tuple[str, str]:
    """A two-player Qwixx table in the settings' store, Ann and Bob at their seats (a
    replayed video takes no throw while a seat is free), and a host device token for it."""
    store = Store.open(settings.database_path)
    try:
        table = await Tables(store).create("qwixx", {"players": 2}, ["Ann", "Bob"])
        for seat in range(2):
            assert await table.take_seat(await table.add_device(host=False), seat)
        return table.table_id, await table.add_device(host=True)
    finally:
        store.close()


def render_clip(throws: int) -> tuple[list[Any], list[int]]:
    """The clip's frames and, per throw, its rest frame: the first frame in which every die
    lies where it comes to rest (a die that stops early rests in the clip's last "tumble"
    frames already; from that frame on the picture no longer changes)."""
    frames = []
    for frame in render_throws(seed=4242, throws=throws, colours=QWIXX):
        frames.append(frame)
        if frame.phase == "empty":
            # a longer empty table between throws: the players pass (three HTTP actions)
            # before the next throw lands, as they would at a real table
            frames += [frame] * EXTRA_EMPTY_FRAMES
    first: dict[int, int] = {}
    for i, f in enumerate(frames):
        resting = len(f.dice) == len(QWIXX) and all(d.value is not None for d in f.dice)
        if f.phase in ("tumble", "rest") and resting:
            first.setdefault(f.throw, i)
    return frames, [first[t] for t in sorted(first)]


def make_reader(kind: str, frames: list[Any]) -> TimedReader:
    if kind == "truth":
        from tests.live.replay import ClipReader, Throw

        clip = ClipReader()
        clip.throw = Throw(frames, ())
        return TimedReader(clip)
    from companion.vision.pipeline import DiceReader

    return TimedReader(DiceReader.load())


def next_move(snapshot: Any) -> Any | None:
    """The move the bench's players make now: None while no player may act; the active
    player crosses a box now and then (passing would cost a penalty each turn and end the
    game after four), everyone else passes."""
    if not snapshot.turn.players or snapshot.finished:
        return None
    seat = snapshot.turn.players[0]
    legal = snapshot.game.legal_moves(snapshot.state, seat)
    crosses = [m for m in legal if m.kind == "cross"]
    wants = seat == snapshot.turn.active and snapshot.turn.step == "white_sum"
    return crosses[0] if wants and crosses else next(m for m in legal if m.kind == "pass")


def play(server: LiveServer, table_id: str, token: str, frames: int, arrival: Any) -> Any:
    """Watch the table on a WebSocket while the camera replays the clip; the players act
    over HTTP whenever a state message says they may (no polling of the server between).
    Returns when the camera took every frame; the time each state id reached the client."""
    client = httpx.Client(base_url=server.base_url, timeout=10)
    client.cookies.set(cookie_name(table_id), token)
    received: dict[int, float] = {}
    changed = threading.Event()
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    url = f"ws://127.0.0.1:{server.port}/t/{table_id}/ws?view=table"
    with connect(url, additional_headers={"Cookie": cookie, "Origin": server.base_url}) as socket:
        stop = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                try:
                    message = json.loads(socket.recv(timeout=0.5))
                except TimeoutError:
                    continue
                except Exception:
                    return
                if message.get("type") == "state":
                    received.setdefault(int(message["state_id"]), time.perf_counter())
                    changed.set()

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        deadline = time.monotonic() + frames / FPS + 30
        step = 0
        while time.monotonic() < deadline:
            changed.clear()
            snapshot = server.table(table_id).snapshot
            move = next_move(snapshot)
            if move is not None:
                step += 1
                client.post(
                    f"/api/tables/{table_id}/actions",
                    json={
                        "action_id": f"pass-{step:06d}",
                        "move": snapshot.game.move_to_json(move),
                    },
                )
                continue
            status = server.hub.runtime.worker_status()
            if status is not None and status.ended and len(arrival) >= frames:
                break
            changed.wait(0.05)
        time.sleep(0.3)
        stop.set()
        listener.join(2)
    return received


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--throws", type=int, default=20)
    parser.add_argument("--reader", choices=("truth", "pipeline"), default="truth")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    frames, rest_frames = render_clip(args.throws)
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "throws.avi"
        write_video(frames, video)
        reader = make_reader(args.reader, frames)
        arrival: dict[int, float] = {}
        settled: dict[int, float] = {}
        time_the_sources(arrival)
        time_the_events(settled)
        settings = Settings(
            port=free_port(), data_dir=Path(tmp) / "data", camera=CameraSettings(video=video)
        )
        # the table exists before the server starts, so the video's first throw is its first
        table_id, token = asyncio.run(make_table(settings))
        with LiveServer(settings, lambda: reader) as server:
            received = play(server, table_id, token, len(frames), arrival)
            log = server.app.state.tables.store.log(table_id)
            print(f"settled throws seen by the camera: {server.hub.events_seen}")
            print(
                f"frames taken from the source: {len(arrival)}, read by the reader:"
                f" {reader.frames_read} (the others moved, or lay as read already)"
            )
    rolls = [e for e in log if e.move and e.move["kind"] == "roll"]
    latencies, parts = [], []
    for entry in rolls:
        dice = sorted((d["colour"], d["value"]) for d in entry.move["dice"])
        throw = next(
            (
                k
                for k, i in enumerate(rest_frames)
                if sorted((d.colour, d.value) for d in frames[i].dice) == dice
            ),
            None,
        )
        if throw is None or entry.seq not in received or rest_frames[throw] not in arrival:
            continue
        rest = rest_frames[throw]
        latencies.append((received[entry.seq] - arrival[rest]) * 1000)
        parts.append(split_latency(rest, received[entry.seq], arrival, settled))
    print(f"throws: {args.throws}, rolls reaching the game: {len(rolls)}, timed: {len(latencies)}")
    if not latencies:
        print("no roll reached the WebSocket client: nothing to measure")
        return 1
    latencies.sort()
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(
        f"rest frame -> WebSocket: p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {latencies[-1]:.0f} ms"
    )
    timed = [p for p in parts if p is not None]
    print_parts(timed)
    if args.write:
        row = table_row(args, latencies, timed)
        write_row(REPO / "docs" / "benchmarks" / "live.md", row)
        print(f"written to docs/benchmarks/live.md: {row}")
    return 0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def split_latency(
    rest: int, received: float, arrival: dict[int, float], settled: dict[int, float]
) -> tuple[float, float, float] | None:
    """One throw's figure in three parts (ms): the wait from the rest frame's arrival to the
    arrival of the frame that settled it, that frame's reading and settling, and the
    hand-over from the camera thread to the WebSocket message (match, engine, SQLite,
    push)."""
    ending = min((i for i in settled if i >= rest), default=None)
    if ending is None or ending not in arrival:
        return None
    wait = arrival[ending] - arrival[rest]
    read = settled[ending] - arrival[ending]
    return wait * 1000, read * 1000, (received - settled[ending]) * 1000


def table_row(
    args: argparse.Namespace, latencies: list[float], parts: list[tuple[float, float, float]]
) -> str:
    """The run as a row of docs/benchmarks/live.md's table (its columns, in order)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    split = ", ".join(
        f"{statistics.median(v):.0f}/{percentile(list(v), 0.95):.0f}"
        for v in zip(*parts, strict=True)
    )
    command = (
        f"`.venv/bin/python bench/live_latency.py --throws {args.throws} --reader {args.reader}`"
    )
    return (
        f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {commit or '?'} | {args.reader} "
        f"| {os.getloadavg()[0]:.1f} | {len(latencies)}/{args.throws} "
        f"| {statistics.median(latencies):.0f} ms | {percentile(latencies, 0.95):.0f} ms "
        f"| {max(latencies):.0f} ms | {split} ms | {command} |"
    )


def write_row(path: Path, row: str) -> None:
    """Put `row` first in the table whose header starts with TABLE_HEADER."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith(TABLE_HEADER))
    lines.insert(header + 2, row)  # below the header and its |---| line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def print_parts(parts: list[tuple[float, float, float]]) -> None:
    if not parts:
        return
    names = ("wait for the settling frame", "its reading", "camera -> WebSocket")
    words = []
    for name, values in zip(names, zip(*parts, strict=True), strict=True):
        values_ms = list(values)
        p50, p95 = statistics.median(values_ms), percentile(values_ms, 0.95)
        words.append(f"{name} p50 {p50:.0f} / p95 {p95:.0f} ms")
    print("parts: " + "; ".join(words))


if __name__ == "__main__":
    sys.exit(main())
