"""Live-table latency: from the frame in which thrown dice come to rest arriving at the
camera to the roll reaching a WebSocket client of the table.

A Qwixx clip of --throws throws is rendered (companion.live.demo.render_throws: tumbling,
rest, a hand, an empty table per throw) and written as a 30 fps video; a real uvicorn
server (this process, create_app) replays it as its camera (`--video`, paced at the file's
30 fps), a WebSocket client watches the table, and between throws the players pass over
HTTP so the game asks for the next roll.

The rest frame of each throw is known (the clip's first "rest" frame); its arrival is the
moment the camera worker hands it to the reader. The figure per throw is the time from that
arrival to the WebSocket message carrying the state after the roll. It includes the settle
stage's deliberate wait (8 still frames at 30 fps, about 270 ms: a roll is only reported
once the dice stopped).

    .venv/bin/python bench/live_latency.py [--throws 20] [--reader truth|pipeline] [--write]

--reader truth: the clip's ground truth stands in for the vision models (measures the live
chain: settle, match, engine, SQLite, WebSocket); pipeline: the shipped ONNX models read
every frame. --write appends the figures to docs/benchmarks/live.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import httpx
from websockets.sync.client import connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.live.demo import render_throws  # noqa: E402
from companion.rules.registry import standard_dice_sets  # noqa: E402
from companion.web.auth import cookie_name  # noqa: E402
from companion.web.settings import CameraSettings, Settings  # noqa: E402
from companion.web.store import Store  # noqa: E402
from companion.web.tables import Tables  # noqa: E402
from tests.live.replay import LiveServer  # noqa: E402
from tests.web.conftest import free_port  # noqa: E402

FPS = 30.0
EXTRA_EMPTY_FRAMES = 15
QWIXX = standard_dice_sets()["qwixx"]


class TimedReader:
    """Wraps a reader: notes when each frame index arrives; the clip's truth or the real
    pipeline does the reading."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.arrival: dict[int, float] = {}

    @property
    def dice_set(self) -> Any:
        return getattr(self.inner, "dice_set", None)

    @dice_set.setter
    def dice_set(self, value: Any) -> None:
        if self.inner is not None:
            self.inner.dice_set = value

    def read(self, image: object, frame_index: int = 0) -> Any:
        self.arrival.setdefault(frame_index, time.perf_counter())
        return self.inner.read(image, frame_index)


def write_video(frames: list[Any], path: Path) -> None:
    h, w = frames[0].image.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (w, h))
    if not writer.isOpened():
        raise RuntimeError("OpenCV cannot write an MJPG video here")
    for frame in frames:
        writer.write(frame.image)
    writer.release()


async def make_table(settings: Settings) -> tuple[str, str]:
    """A two-player Qwixx table in the settings' store, and a host device token for it."""
    store = Store.open(settings.database_path)
    try:
        table = await Tables(store).create("qwixx", {"players": 2}, ["Ann", "Bob"])
        return table.table_id, await table.add_device(host=True)
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--throws", type=int, default=20)
    parser.add_argument("--reader", choices=("truth", "pipeline"), default="truth")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    frames = []
    for frame in render_throws(seed=4242, throws=args.throws, colours=QWIXX):
        frames.append(frame)
        if frame.phase == "empty":
            # a longer empty table between throws: the players pass (three HTTP actions)
            # before the next throw lands, as they would at a real table
            frames += [frame] * EXTRA_EMPTY_FRAMES
    rest_frames = [
        i
        for i, f in enumerate(frames)
        if f.phase == "rest" and (i == 0 or frames[i - 1].phase != "rest")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "throws.avi"
        write_video(frames, video)
        if args.reader == "truth":
            from tests.live.replay import ClipReader, Throw

            clip = ClipReader()
            clip.throw = Throw(frames, ())
            inner: Any = clip
        else:
            from companion.vision.pipeline import DiceReader

            inner = DiceReader.load()
        reader = TimedReader(inner)
        settings = Settings(
            port=free_port(), data_dir=Path(tmp) / "data", camera=CameraSettings(video=video)
        )
        # the table exists before the server starts, so the video's first throw is its first
        table_id, token = asyncio.run(make_table(settings))
        with LiveServer(settings, lambda: reader) as server:
            client = httpx.Client(base_url=server.base_url, timeout=10)
            client.cookies.set(cookie_name(table_id), token)
            received: dict[int, float] = {}
            cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
            url = f"ws://127.0.0.1:{server.port}/t/{table_id}/ws?view=table"
            with connect(
                url, additional_headers={"Cookie": cookie, "Origin": server.base_url}
            ) as socket:
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

                listener = threading.Thread(target=listen, daemon=True)
                listener.start()
                deadline = time.monotonic() + len(frames) / FPS + 30
                step = 0
                while time.monotonic() < deadline:
                    snapshot = server.table(table_id).snapshot
                    status = server.hub.runtime.worker_status()
                    if snapshot.turn.players and not snapshot.finished:
                        seat = snapshot.turn.players[0]
                        legal = snapshot.game.legal_moves(snapshot.state, seat)
                        # the active player crosses a box now and then (passing would cost
                        # a penalty each turn and end the game after four)
                        crosses = [m for m in legal if m.kind == "cross"]
                        wants = seat == snapshot.turn.active and snapshot.turn.step == "white_sum"
                        move = (
                            crosses[0]
                            if wants and crosses
                            else next(m for m in legal if m.kind == "pass")
                        )
                        step += 1
                        client.post(
                            f"/api/tables/{table_id}/actions",
                            json={
                                "action_id": f"pass-{step:06d}",
                                "move": snapshot.game.move_to_json(move),
                            },
                        )
                        continue
                    if status is not None and status.ended and len(reader.arrival) >= len(frames):
                        break
                    time.sleep(0.003)
                time.sleep(0.3)
                stop.set()
                listener.join(2)
            log = server.app.state.tables.store.log(table_id)
            print(f"settled throws seen by the camera: {server.hub.events_seen}")
    rolls = [e for e in log if e.move and e.move["kind"] == "roll"]
    latencies = []
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
        if throw is None or entry.seq not in received or rest_frames[throw] not in reader.arrival:
            continue
        latencies.append((received[entry.seq] - reader.arrival[rest_frames[throw]]) * 1000)
    print(f"throws: {args.throws}, rolls reaching the game: {len(rolls)}, timed: {len(latencies)}")
    if not latencies:
        print("no roll reached the WebSocket client: nothing to measure")
        return 1
    latencies.sort()
    p50 = statistics.median(latencies)
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    print(
        f"rest frame -> WebSocket: p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {latencies[-1]:.0f} ms"
    )
    if args.write:
        line = (
            f"| {datetime.now(UTC):%Y-%m-%d %H:%M} UTC | {args.reader} | {len(latencies)}/{args.throws} "
            f"| {p50:.0f} ms | {p95:.0f} ms | {latencies[-1]:.0f} ms | {os.cpu_count()} cores, "
            f"{platform.processor() or platform.machine()} | "
            f"`.venv/bin/python bench/live_latency.py --throws {args.throws} --reader {args.reader}` |\n"
        )
        with (REPO / "docs" / "benchmarks" / "live.md").open("a", encoding="utf-8") as out:
            out.write(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
