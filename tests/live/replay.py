"""Replay clips for the live-table tests and the latency benchmark: one throw at a time
rendered with companion.live.demo.render_throws (companion.synth's dice: tumbling,
motion-blurred frames, then rest, a hand picking the dice up, an empty table) and written as
JPEG frames into the folder the server's camera replays (`companion serve --images DIR`);
and a real uvicorn server in this process, so a test can also hand the camera a reader."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import httpx
import uvicorn

from companion.live.demo import ClipFrame, render_throws
from companion.vision.types import UNREADABLE, DieBox, DieReading, FrameReading
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.waiting import wait_until  # noqa: F401  (the live tests import it from here)


@dataclass(frozen=True)
class Throw:
    """A rendered throw: its frames and what came to rest (colour, value) in frame order."""

    frames: list[ClipFrame]
    rest: tuple[tuple[str, int], ...]

    @property
    def rest_index(self) -> int:
        """The first frame in which every die lies still."""
        return next(i for i, f in enumerate(self.frames) if f.phase == "rest")


def render_throw(colours: Sequence[str], seed: int, side: float = 44.0) -> Throw:
    frames = list(render_throws(seed=seed, throws=1, colours=tuple(colours), side=side))
    rest = next(f for f in frames if f.phase == "rest")
    return Throw(frames, tuple((d.colour, int(d.value or 0)) for d in rest.dice))


def write_throw(folder: Path, throw: Throw, quality: int = 92) -> None:
    """Replace the folder's frames with the throw's (frame_0000.jpg, ...)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for i, frame in enumerate(throw.frames):
        cv2.imwrite(
            str(folder / f"frame_{i:04d}.jpg"), frame.image, [cv2.IMWRITE_JPEG_QUALITY, quality]
        )


class ClipReader:
    """Reads the throw being replayed from its ground truth, by frame index: the vision
    models' place taken by a perfect reader, so a test checks the live chain (settle, match,
    server, game) and not the models (test_real_pipeline_* runs the models). Colours in
    `hide` are left out of every reading: dice that lie in the picture but that the finder
    missed."""

    dice_set: Any = None

    def __init__(self) -> None:
        self.throw: Throw | None = None
        self.hide: set[str] = set()
        # the confidence of each colour's die (default 0.99)
        self.confidence: dict[str, float] = {}
        # as the real reader's classifier: its calibrated confidence map with the shipped
        # auto-apply threshold (None: uncalibrated; companion.table.camera_decision)
        self.classifier = SimpleNamespace(confidence_map=SimpleNamespace(threshold=None))

    @property
    def auto_apply_threshold(self) -> float | None:
        return self.classifier.confidence_map.threshold  # type: ignore[no-any-return]

    @auto_apply_threshold.setter
    def auto_apply_threshold(self, threshold: float | None) -> None:
        self.classifier.confidence_map.threshold = threshold

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        shape = getattr(image, "shape", (480, 640))
        h, w = int(shape[0]), int(shape[1])
        if self.throw is None or frame_index >= len(self.throw.frames):
            return FrameReading(w, h, (), frame_index=frame_index)
        shown = self.throw.frames[frame_index]
        dice = tuple(
            DieReading(
                DieBox(d.cx, d.cy, d.side, d.side, d.angle),
                d.value,
                self.confidence.get(d.colour, 0.99),
                d.colour,
                flags=() if d.value else (UNREADABLE,),
            )
            for d in shown.dice
            if d.colour not in self.hide
        )
        return FrameReading(w, h, dice, frame_index=frame_index)


# a browser context sending this header (Playwright's extra_http_headers) is seen by the
# server as a device on the network at that address, not the server machine itself
# (deps.is_local): a tablet, though every test browser runs over loopback
SEEN_FROM = "x-test-seen-from"


def seen_from_header(app: Any) -> Any:
    """`app` with each request's client address taken from its SEEN_FROM header, if any."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            seen = dict(scope.get("headers") or ()).get(SEEN_FROM.encode())
            if seen is not None:
                scope = {**scope, "client": (seen.decode(), 50000)}
        await app(scope, receive, send)

    return asgi


class LiveServer:
    """`create_app` under a real uvicorn on a free port, in a thread of this process. A
    request with the SEEN_FROM header comes from that address (a tablet)."""

    def __init__(self, settings: Settings, reader_factory: Callable[[], Any] | None) -> None:
        self.app = create_app(settings, reader_factory)
        self.port = settings.port
        self.base_url = f"http://127.0.0.1:{settings.port}"
        config = uvicorn.Config(
            seen_from_header(self.app), host="127.0.0.1", port=settings.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)

    @property
    def hub(self) -> Any:
        return self.app.state.camera

    def table(self, table_id: str) -> Any:
        """The live Table object (read its snapshot; never mutate it from here)."""
        loop = self.hub.runtime.loop
        return asyncio.run_coroutine_threadsafe(self.app.state.tables.get(table_id), loop).result(5)


def seat_devices(
    base_url: str, code: str, table_id: str, seats: Sequence[int]
) -> list[httpx.Client]:
    """A device for each of `seats` joins the table with its code and takes its seat (a
    replayed source, a video or a folder of photos, takes no throw while a seat is free);
    the devices, open, in that order (the caller closes them)."""
    devices = []
    for seat in seats:
        device = httpx.Client(base_url=base_url, timeout=10)
        devices.append(device)
        assert device.post("/api/join", json={"code": code}).status_code == 200
        taken = device.post(f"/api/tables/{table_id}/seat", json={"seat": seat})
        assert taken.status_code == 200, taken.text
    return devices


def seat_everyone(base_url: str, code: str, table_id: str, seats: Sequence[int]) -> None:
    """`seat_devices`, the devices closed (their seats stay taken)."""
    for device in seat_devices(base_url, code, table_id, seats):
        device.close()
