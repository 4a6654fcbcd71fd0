"""The camera's runtime in the server: the dice reader, the worker thread and its status.

`CameraRuntime` loads the models and opens the source on a starter thread (so the server
answers at once), then runs the worker (companion.live.worker: source -> DiceReader ->
settle on its own thread) until `stop()`. Every settled throw is handed to the server's
loop as a `RollEvent`, which carries the frame it was read from. Faults stay in the threads:
the worker's status shows them and it reconnects with back-off; a model that does not load
leaves the preview running and says why.

`CalibratedReader` is the worker's reader: the DiceReader with the table calibration's
play area and die size applied (dice outside either are dropped), and the dice set the
colour stage assigns to (the game's declaration, chosen by the feed). It also keeps the
latest frame and reading for the calibration page.

Nothing here knows a game or a table: `companion.table.camera_hub` wires this to them."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from companion.live.demo import DemoDirector
from companion.live.settle import RollEvent, SettleConfig, sure_frames_for
from companion.live.worker import BackOff, CameraStatus, CameraWorker
from companion.table.camera_decision import shipped_threshold
from companion.table.camera_settings import CameraSettings
from companion.table.held_reading import Mode
from companion.vision.types import FrameReading

if TYPE_CHECKING:
    from companion.live.demo import SourcePlan
    from companion.vision.calibration import TableCalibration
    from companion.vision.colour import DiceSet

logger = logging.getLogger(__name__)

SETTLE_SECONDS = 0.2
MIN_STABLE_FRAMES = 3
FULL_FRAME = (0.0, 0.0, 1.0, 1.0)

ThrowHandler = Callable[[RollEvent], Coroutine[Any, Any, None]]


class DiceReaderLike(Protocol):
    """What the runtime needs of companion.vision.pipeline.DiceReader."""

    dice_set: DiceSet | None

    def read(self, image: object, frame_index: int = 0) -> FrameReading: ...


ReaderFactory = Callable[[], DiceReaderLike]


def default_reader_factory() -> DiceReaderLike:
    """The real pipeline: both ONNX models checked against their manifests."""
    from companion.vision.pipeline import DiceReader

    return DiceReader.load()


@dataclass(frozen=True, slots=True)
class PlayArea:
    """Where dice count: the part of the frame the table occupies (fractions x0, y0, x1,
    y1) and the calibrated die side in pixels of a frame `side_frame_width` wide (a camera
    running at another resolution sees the dice bigger or smaller by the width ratio)."""

    area: tuple[float, float, float, float] = FULL_FRAME
    die_side: float | None = None
    side_frame_width: int | None = None

    def keeps(self, reading: FrameReading) -> FrameReading:
        """`reading` without the dice outside the area or far from the calibrated size."""
        if self.area == FULL_FRAME and self.die_side is None:
            return reading
        x0, y0, x1, y1 = self.area
        w, h = max(reading.width, 1), max(reading.height, 1)
        side = self.die_side
        if side is not None and self.side_frame_width:
            side *= w / self.side_frame_width
        kept = tuple(
            d
            for d in reading.dice
            if x0 <= d.where.cx / w <= x1
            and y0 <= d.where.cy / h <= y1
            # a die half or twice the calibrated size is something else (a score pad digit,
            # a die on the shelf behind)
            and (side is None or 0.5 * side <= max(d.where.w, d.where.h) <= 2.0 * side)
        )
        return reading if len(kept) == len(reading.dice) else replace(reading, dice=kept)


class CalibratedReader:
    """The worker's reader (see the module docstring). The worker reads on its thread;
    `play_area` and the dice set are replaced by one attribute store each, safe across
    threads.

    The dice set the feed chose last (`use_dice_set`) is kept here, not only in the reader
    in place: a reader put in place later (the models loaded after the feed's first
    look-up, the models put back by a camera restart, a setup's heads put in place or taken
    away) reads with it from its first frame, not with the set it last had (another table's,
    or none) until the feed's next look-up."""

    def __init__(self, reader: DiceReaderLike | None) -> None:
        self._reader = reader
        self._chosen: tuple[DiceSet | None] | None = None  # None: the feed chose no set yet
        self._lock = threading.Lock()  # the feed (the loop) and a swap (another thread)
        self.play_area = PlayArea()
        self.last_image: np.ndarray | None = None
        self.last_reading: FrameReading | None = None

    @property
    def reader(self) -> DiceReaderLike | None:
        return self._reader

    @reader.setter
    def reader(self, reader: DiceReaderLike | None) -> None:
        """Put `reader` in place, with the dice set the feed chose (before the worker's
        next read sees it)."""
        with self._lock:
            if reader is not None and self._chosen is not None:
                _give_dice_set(reader, self._chosen[0])
            self._reader = reader

    def use_dice_set(self, dice_set: DiceSet | None) -> None:
        with self._lock:
            self._chosen = (dice_set,)
            if self._reader is not None:
                _give_dice_set(self._reader, dice_set)

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        reader = self._reader
        if reader is None:
            h, w = getattr(image, "shape", (0, 0))[:2]
            reading = FrameReading(int(w), int(h), (), frame_index=frame_index)
        else:
            reading = self.play_area.keeps(reader.read(image, frame_index))
        if isinstance(image, np.ndarray):
            self.last_image = image
        self.last_reading = reading
        return reading


def _give_dice_set(reader: DiceReaderLike, dice_set: DiceSet | None) -> None:
    if reader.dice_set is not dice_set:
        reader.dice_set = dice_set


def settle_config(
    fps: float, play_area: tuple[float, float, float, float] = FULL_FRAME
) -> SettleConfig:
    """The settle stage for the live table: a roll is reported after SETTLE_SECONDS of
    still, unchanged dice, at least MIN_STABLE_FRAMES frames (6 at 30 fps; 3 at the demo
    clip's 10 fps), or sooner where the motion measure is sure that nothing changed at all
    (`sure_frames_for`: 2 frames at 30 fps, the roll goes out 67 ms after the first still
    frame; docs/benchmarks/live.md)."""
    frames = max(MIN_STABLE_FRAMES, round(fps * SETTLE_SECONDS))
    return SettleConfig.model_validate(
        {"stable_frames": frames, "sure_frames": sure_frames_for(fps), "play_area": play_area}
    )


def default_camera_mode(live_camera: bool) -> Mode:
    """The mode of a table whose host chose none. A live camera reads real dice, where the
    models still misread some (docs/BENCHMARKS.md: 2 of 274 dice on byler-d6-train, 34 of
    379 on epanemu-dice3's oblique phone photos), so its rolls wait for the active
    player's "Use this roll"; a replayed source (the demo camera, a video, a folder of
    images) applies a matching roll at once. "sure" (apply sure rolls, ask about the
    unsure dice) is offered to the host; it becomes a webcam's default once issue 14's
    targets hold on photos of tables the models never saw (not yet)."""
    return "confirm" if live_camera else "auto"


# with no source named, why the source playing was chosen (`CameraRuntime.source_why`):
# the webcam is looked for when the camera starts, and again at each restart
NO_WEBCAM = "no webcam answered at start: the demo camera plays"
WEBCAM_FOUND = "a webcam answered at start: {name} plays"
# the host's line adds how a webcam plugged in later is used, without restarting the server
PLUG_IN_LATER = "plug one in, then Restart the camera (Camera settings) to use it"


def source_why(source: str, plan_name: str, live: bool) -> str | None:
    """Why the source playing was chosen, for the camera line: only when none was named
    (`CameraSettings.source` "demo": a webcam when one answers, else the demo camera)."""
    if source != "demo":
        return None  # the host named it
    return WEBCAM_FOUND.format(name=plan_name) if live else NO_WEBCAM


# a video or folder played to its end (it may have ended before the table was started)
SOURCE_ENDED = "camera source ended (Restart the camera, under Camera settings, plays it again)"
# a source played to its end without one throw coming to rest (a folder of photos, each
# shown for one frame, never holds still long enough)
NO_THROW_AT_REST = (
    "camera source ended without a throw at rest in it (a folder of still photos, one throw "
    "each: start with --hold 2 to show each photo for 2 s)"
)


# a webcam named (`--camera N`) that gives no frames: which one, what to do, and how often it
# is tried (no demo in its place: the host named it); the worker waits at most this long
WEBCAM_RETRY_S = BackOff().longest
WEBCAM_SILENT = (
    "webcam {index} did not answer: plug it in (or close a program using it); the camera "
    "tries it again every {retry:g} s (attempt {attempt})"
)
WEBCAM_LOST = (
    "webcam {index} stopped answering: plug it back in (or close a program using it); the "
    "camera tries it again every {retry:g} s (attempt {attempt})"
)


def not_delivering(status: Mapping[str, object]) -> tuple[str, bool]:
    """The words for a running source that gives no frames, and whether they say its
    error already. A webcam (described "camera N") says which, and what to do: "camera
    lost: reconnecting" named neither, and a webcam that never answered was not "lost"."""
    attempt = status["reconnect_attempts"]
    source = str(status.get("source") or "")
    if not source.startswith("camera "):
        return f"camera lost: reconnecting (attempt {attempt})", False
    index = source.removeprefix("camera ")
    if not attempt and not status["last_error"]:
        return f"webcam {index}: opening…", False
    words = WEBCAM_LOST if status.get("frames_read") else WEBCAM_SILENT
    return words.format(index=index, retry=WEBCAM_RETRY_S, attempt=attempt), True


def status_line(
    enabled: bool, starting: bool, status: dict[str, Any] | None, error: str | None
) -> str:
    """The camera status in a few words for the table view."""
    if not enabled:
        return "camera off (manual dice entry)"
    if status is None:
        return "camera starting…" if starting else (error or "camera not running")
    parts = []
    said_error = False
    if status["connected"]:
        parts.append(f"camera live · {status['fps']} fps · {status['settle']}")
    elif status["ended"]:
        parts.append(SOURCE_ENDED if status["events"] else NO_THROW_AT_REST)
    elif status["running"]:
        words, said_error = not_delivering(status)
        parts.append(words)
    else:
        parts.append("camera stopped")
    if status["last_error"] and not said_error:
        parts.append(str(status["last_error"]))
    if status["corrupt_frames"]:
        skipped = status["corrupt_frames"]
        parts.append(f"{skipped} unreadable frame{'' if skipped == 1 else 's'} skipped")
    if error:
        parts.append(error)
    return " · ".join(parts)


class CameraRuntime:
    """See the module docstring. `start(loop, on_throw)` in the lifespan, `stop()` at its
    end; with --no-camera only the status exists."""

    def __init__(self, settings: CameraSettings, reader_factory: ReaderFactory | None) -> None:
        self.settings = settings
        self.enabled = settings.source != "none"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reader = CalibratedReader(None)
        # the host's choice (the calibration page, --calibration); `calibration` is it
        # while no demo camera plays
        self.chosen: TableCalibration | None = None
        self._applied: TableCalibration | None = None
        self.source_name = ""
        self.live_camera = False  # the running source is a live camera (not a replay)
        self.source_why: str | None = None  # why that source plays (`source_why`)
        # the demo camera throws what the server says the attached game expects
        self.demo = DemoDirector() if settings.source == "demo" else None
        # the classifier's shipped auto-apply threshold (None: no roll is sure)
        self.auto_apply_threshold: float | None = None
        self.starting = False
        self.reader_error: str | None = None
        self._reader_factory = reader_factory or default_reader_factory
        self._models: DiceReaderLike | None = None
        self._on_throw: ThrowHandler | None = None
        self._worker: CameraWorker | None = None
        self._worker_lock = threading.Lock()
        self._starter: threading.Thread | None = None
        self._stopped = False
        # called (on the thread that made the change) after a calibration is set and after
        # the models load: companion.table.learning restores the setup's saved head
        self.changed: list[Callable[[], None]] = []

    def _tell_changed(self) -> None:
        for listener in list(self.changed):
            try:
                listener()
            except Exception:
                logger.exception("a camera listener failed")

    # -- life -------------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop, on_throw: ThrowHandler) -> None:
        self.loop = loop
        self._on_throw = on_throw
        if self.enabled:
            self._spawn_starter()

    def _spawn_starter(self) -> None:
        self.starting = True
        self._starter = threading.Thread(
            target=self._start_worker, name="camera-start", daemon=True
        )
        self._starter.start()

    def _load_models(self) -> None:
        if self._models is None and self.reader_error is None:
            try:
                self._models = self._reader_factory()
            except Exception as exc:  # the preview still runs without models
                logger.error("dice reader not loaded: %s", exc)
                self.reader_error = f"dice reader not loaded: {exc}"
        self.reader.reader = self._models
        self.auto_apply_threshold = shipped_threshold(self._models)
        self._tell_changed()

    def _start_worker(self) -> None:
        try:
            self._load_models()
            plan = self.source_plan()
            self.source_name = plan.name
            self.live_camera = plan.live
            self.source_why = source_why(self.settings.source, plan.name, plan.live)
            self._apply_calibration()  # none for the demo camera, the choice for another
            settle = settle_config(plan.pace_fps or 30.0, self.reader.play_area.area)
            worker = CameraWorker(
                plan.open,
                self.reader,
                self._event_from_thread,
                settle=settle,
                pace_fps=plan.pace_fps,
                reopen_at_end=plan.reopen_at_end,
            )
            with self._worker_lock:
                if self._stopped:
                    return
                self._worker = worker
                worker.start()
            logger.info("camera started on %s", plan.name)
        except Exception as exc:
            logger.exception("camera could not start")
            self.reader_error = self.reader_error or f"camera could not start: {exc}"
        finally:
            self.starting = False

    def source_plan(self) -> SourcePlan:
        """Which source to open: with no option a webcam when one answers, else the bundled
        demo clip, looping; else the camera, video or folder asked for."""
        from companion.live import demo

        s = self.settings
        if s.source == "demo":
            return demo.plan_source(director=self.demo)
        return demo.plan_source(
            camera=s.index, video=s.video, images=s.images, images_hold_s=s.hold
        )

    def stop(self) -> None:
        self._stopped = True
        if self._starter is not None:
            # loading the models takes a second or two; let it finish before the process
            # may exit (a native thread torn down mid-load aborts the interpreter)
            self._starter.join(timeout=15)
        self._stop_worker()

    def restart(self) -> None:
        """Stop the worker and start it again from the source's beginning (a replayed file
        plays again; a camera is opened afresh)."""
        if not self.enabled:
            return
        self._stop_worker()
        self._spawn_starter()

    def _stop_worker(self) -> None:
        with self._worker_lock:
            worker = self._worker
            self._worker = None
        if worker is not None:
            worker.stop()

    # -- what the worker hands over -----------------------------------------------------------
    def _event_from_thread(self, event: RollEvent) -> None:
        """Called on the worker thread: hand the throw (with its own frame) to the loop."""
        loop, on_throw = self.loop, self._on_throw
        if loop is None or on_throw is None or event.image is None or loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(on_throw(event), loop)

    # -- reading the runtime ------------------------------------------------------------------
    def worker_status(self) -> CameraStatus | None:
        """The worker's status, or None while no worker runs."""
        worker = self._worker
        return worker.status() if worker is not None else None

    def status_json(self, served: bool = True) -> dict[str, Any]:
        """The camera's state for a table's panel; `served` False (a table the camera does
        not serve): without the demo camera's words, which name the served table's players."""
        status = self.worker_status()
        body = status.to_json() if status is not None else None
        return {
            "enabled": self.enabled,
            "source": self.source_name,
            "source_why": self.source_why,
            "starting": self.starting,
            "status": body,
            "error": self.reader_error,
            "line": self._line(body, served),
            "calibration": self.calibration.name if self.calibration else None,
        }

    @property
    def plays_demo(self) -> bool:
        """Whether the frames are the demo camera's renders (no camera attached)."""
        return self.demo is not None and self.source_name == "demo camera"

    def _line(self, body: dict[str, object] | None, served: bool = True) -> str:
        line = status_line(self.enabled, self.starting, body, self.reader_error)
        if served and self.demo is not None and self.plays_demo:
            line += f" · {self.demo.line()}"
        if self.source_why == NO_WEBCAM:
            line += f" · {NO_WEBCAM} ({PLUG_IN_LATER})"
        elif self.source_why is not None:
            line += f" · {self.source_why}"
        return line

    def preview_jpeg(self) -> bytes | None:
        worker = self._worker
        return worker.preview_jpeg() if worker is not None else None

    def latest(self) -> tuple[np.ndarray | None, FrameReading | None]:
        """The frame read last and its reading (the calibration page measures these)."""
        return self.reader.last_image, self.reader.last_reading

    @property
    def calibration(self) -> TableCalibration | None:
        """The calibration the camera reads with: the chosen one, none while the demo
        camera plays (a real camera's colours and play area do not fit its drawn dice)."""
        return None if self.plays_demo else self.chosen

    def set_calibration(self, calibration: TableCalibration | None) -> None:
        """Choose a table calibration (play area, die size) from now on, or none (the whole
        frame, each game's shipped colours); the demo camera reads with none, and the chosen
        one applies once another source plays (`calibration`). The settle stage's motion
        watch takes the new play area when the camera next (re)starts. Its dice set is
        chosen per table by the feed."""
        self.chosen = calibration
        self._apply_calibration(always=True)

    def _apply_calibration(self, always: bool = False) -> None:
        """Put `calibration`'s play area and die size in the reader, and tell the listeners
        when it changed (or `always`)."""
        calibration = self.calibration
        if calibration is self._applied and not always:
            return
        self._applied = calibration
        if calibration is None:
            self.reader.play_area = PlayArea()
        else:
            width = calibration.frame[0] if calibration.frame else None
            self.reader.play_area = PlayArea(calibration.play_area, calibration.die_side, width)
        self._tell_changed()
