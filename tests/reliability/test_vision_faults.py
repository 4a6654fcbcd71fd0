"""Vision faults. The camera is wired into the server (companion/table/camera_hub.py), so the
first test runs the real server with `--images DIR` semantics (CameraSettings.images) and
the real ONNX DiceReader, and injects: a camera that is missing at start and appears later,
truncated, garbage and empty JPEGs, and black and over-exposed frames. The server keeps
answering and the table's camera status shows each fault.

The second test drives companion.live.worker.CameraWorker directly with a source slower
than the rate it expects and one faster than it (a live source paces itself, a replay is
paced by the worker). The worker's own reconnect tests are in tests/live/test_camera.py
(a folder that disappears and comes back, a source failing mid-way)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np

from companion.live.worker import BackOff, CameraWorker
from companion.table.camera_settings import CameraSettings
from companion.vision.pipeline import DiceReader
from companion.vision.sources import FrameSource
from companion.vision.types import Frame
from tests.images import read_image
from tests.reliability.conftest import ThreadServer, thread_settings
from tests.web.conftest import REPO

DEMO = REPO / "companion" / "live" / "data" / "demo_qwixx"


def wait_for(read: Any, check: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if check(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def faulty_folder(folder: Path) -> None:
    """Six real frames, three unreadable files, a black and an over-exposed frame."""
    folder.mkdir()
    frames = sorted(DEMO.glob("*.jpg"))[:6]
    for i, path in enumerate(frames):
        shutil.copy(path, folder / f"a{i:02d}.jpg")
    data = frames[0].read_bytes()
    (folder / "b-truncated.jpg").write_bytes(data[: len(data) // 3])
    (folder / "c-garbage.jpg").write_bytes(b"\xff\xd8 not a jpeg at all " * 50)
    (folder / "d-empty.jpg").write_bytes(b"")
    cv2.imwrite(str(folder / "e-black.png"), np.zeros((480, 640, 3), np.uint8))
    cv2.imwrite(str(folder / "f-overexposed.png"), np.full((480, 640, 3), 255, np.uint8))


def test_camera_faults_keep_the_server_running_and_show_in_the_status(tmp_path: Path) -> None:
    folder = tmp_path / "frames"  # missing at start: the camera is not there yet
    settings = thread_settings(tmp_path / "data", camera=CameraSettings(images=folder))
    with ThreadServer(settings) as server, httpx.Client(base_url=server.base_url) as host:
        table_id = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()[
            "table_id"
        ]
        url = f"/api/tables/{table_id}/camera"
        missing = wait_for(
            lambda: host.get(url).json(),
            lambda s: s["status"] and s["status"]["reconnect_attempts"] >= 1,
        )
        assert missing["status"]["connected"] is False
        assert "no such folder" in (missing["status"]["last_error"] or "")
        assert missing["line"]  # the status line the table view shows
        assert host.get(f"/api/tables/{table_id}/state").status_code == 200

        faulty_folder(folder)  # the camera comes back, with bad frames among good ones
        played = wait_for(
            lambda: host.get(url).json()["status"],
            lambda s: s["ended"] or s["frames_read"] >= 8,
        )
        played = wait_for(lambda: host.get(url).json()["status"], lambda s: s["ended"])
        assert played["frames_read"] == 8  # six real, the black and the over-exposed
        assert played["corrupt_frames"] == 3  # truncated, garbage, empty: counted, skipped
        assert played["ended"] and not played["running"]
        # the server answered throughout and still does
        assert host.get(f"/api/tables/{table_id}/state").status_code == 200
        assert host.get("/").status_code == 200


class TimedSource(FrameSource):
    """`count` copies of a real frame, one every `interval` seconds (a live camera slower
    than expected), or as fast as they are asked for (interval 0)."""

    def __init__(self, count: int, interval: float) -> None:
        super().__init__()
        self.count = count
        self.interval = interval
        self.image = read_image(sorted(DEMO.glob("*.jpg"))[10])

    def describe(self) -> str:
        return f"timed source every {self.interval} s"

    def __iter__(self) -> Iterator[Frame]:
        for index in range(self.count):
            if self.interval:
                time.sleep(self.interval)
            yield self._frame(self.image, index, "timed")


def run_worker(source: TimedSource, pace_fps: float | None) -> Any:
    worker = CameraWorker(
        lambda: source, DiceReader.load(), pace_fps=pace_fps, back_off=BackOff(0.05, 0.1)
    )
    started = time.monotonic()
    worker.start()
    assert worker.wait(30), "the worker did not finish the source"
    return worker.status(), time.monotonic() - started


def test_sources_slower_and_faster_than_expected() -> None:
    # slower: the worker expects 30 fps, the camera gives 5; it waits, never spins
    slow, took = run_worker(TimedSource(10, 0.2), pace_fps=30.0)
    assert slow.frames_read == 10 and slow.ended and slow.last_error is None
    # the status reports the slow rate; only bounds that hold on a loaded machine are checked
    # (a busy CI core stretches each frame, it never makes the source faster)
    assert 0.5 <= slow.fps <= 6.0 and took >= 1.9
    # faster: a replay that could deliver at once is paced to the rate it was made at
    fast, took = run_worker(TimedSource(15, 0.0), pace_fps=10.0)
    assert fast.frames_read == 15 and fast.ended
    assert took >= 1.3 and 2.0 <= fast.fps <= 11.0
