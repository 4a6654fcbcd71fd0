"""The camera worker: source -> motion -> DiceReader -> settle in its own thread.

`CameraWorker` pulls frames from a source (companion.vision.sources: a webcam, a video file,
a folder, the looping demo clip), measures each frame's motion (the settle stage's `look`,
on a small grey copy, no models), reads with the DiceReader only the frames that can end a
throw, settles those and hands every settled throw (`RollEvent`) to a callback. A frame in
which something moves (dice still tumbling, a hand) is never read; nor are the still frames
after a settled throw until something moves again, but for one every `idle_read_interval`
seconds (the preview's outlines, the calibration page). The reader's time goes to the frames
that decide the roll, and the server's to handing the roll over. It runs on a plain thread,
never on an asyncio loop: the web layer passes a callback that hands the event (which
carries its frame) to its loop with `asyncio.run_coroutine_threadsafe(...)`, and reads
`status()` and `preview_jpeg()` whenever it likes.

Failures stay inside the thread: a source that cannot be opened, that is lost (its
`status.problem`), or that raises, is reported in the status and opened again after an
exponential back-off (`BackOff`: 0.5 s doubling up to 10 s by default); unreadable frames
are counted (`corrupt_frames`), a failing reader or callback is logged and noted, and the
loop goes on until `stop()`. A source that simply ends (a video file played to its end)
ends the worker unless `reopen_at_end` is set.

Replay: `pace_fps` paces a file or folder at that frame rate (its native rate); None plays it
as fast as the reader allows (tests, benchmarks). A live camera paces itself."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Protocol

import cv2
import numpy as np

from companion.live.settle import RollEvent, SettleConfig, Settler, Stillness
from companion.vision.sources import FrameSource
from companion.vision.types import Frame, FrameReading

logger = logging.getLogger(__name__)

PREVIEW_JPEG_QUALITY = 75
FPS_WINDOW = 2.0  # seconds of frames the status's frame rate is measured over

# How one pass over a source ended (see CameraWorker._run_source).
ENDED, FAILED, DELIVERED = "ended", "failed", "delivered"


class FrameReader(Protocol):
    """What the worker needs of companion.vision.pipeline.DiceReader."""

    def read(self, image: object, frame_index: int = 0) -> FrameReading: ...


@dataclass(frozen=True, slots=True)
class BackOff:
    """Delays before reopening a failed source: `first` seconds, doubled after every failed
    attempt in a row, never more than `longest`."""

    first: float = 0.5
    longest: float = 10.0

    def delay(self, attempt: int) -> float:
        """The wait before attempt number `attempt` (1 = the first reopening)."""
        return float(min(self.longest, self.first * 2 ** max(attempt - 1, 0)))


@dataclass(frozen=True, slots=True)
class CameraStatus:
    """A snapshot of the worker for the status line: which source, whether it delivers
    frames, measured frames per second and milliseconds of work per frame, counts, the last
    error and how often the source was reopened. `frames_read` counts every frame taken
    from the source, `frames_unread` those of them the reader did not read (something moved,
    or the dice lay as they were read and settled)."""

    source: str = ""
    running: bool = False
    connected: bool = False
    ended: bool = False
    fps: float = 0.0
    ms_per_frame: float = 0.0
    frames_read: int = 0
    frames_unread: int = 0
    corrupt_frames: int = 0
    events: int = 0
    reconnect_attempts: int = 0
    last_error: str | None = None
    settle: str = "moving"

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["fps"] = round(self.fps, 1)
        data["ms_per_frame"] = round(self.ms_per_frame, 1)
        return data


class CameraWorker:
    """See the module docstring. `open_source` makes a fresh source each time the worker
    (re)opens one; `reader` None runs the camera for its preview only (no models)."""

    def __init__(
        self,
        open_source: Callable[[], FrameSource],
        reader: FrameReader | None,
        on_event: Callable[[RollEvent], None] | None = None,
        *,
        settle: SettleConfig | None = None,
        pace_fps: float | None = None,
        back_off: BackOff = BackOff(),
        reopen_at_end: bool = False,
        preview_interval: float = 0.1,
        idle_read_interval: float = 0.25,
        name: str = "camera-worker",
    ) -> None:
        self._open_source = open_source
        self._reader = reader
        self._on_event = on_event
        self._settler = Settler(settle or SettleConfig.for_fps(pace_fps or 30.0))
        self._pace_fps = pace_fps
        self._back_off = back_off
        self._reopen_at_end = reopen_at_end
        self._preview_interval = preview_interval
        self._idle_read_interval = idle_read_interval
        self._read_at = -math.inf  # when the reader last read a frame (monotonic)
        self._name = name
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._status = CameraStatus()
        self._preview: bytes | None = None
        self._preview_at = 0.0
        self._reading: FrameReading | None = None
        self._corrupt_before = 0  # unreadable frames of sources already closed
        self._frame_times: deque[float] = deque()  # the last FPS_WINDOW seconds' frames

    # -- control ---------------------------------------------------------------------
    def start(self) -> None:
        """Start the thread (once; a stopped worker is not restarted)."""
        if self._thread is not None:
            raise RuntimeError("the camera worker was already started")
        self._set(running=True)
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Ask the thread to finish and wait up to `timeout` seconds; True when it ended.
        (A source blocked inside a camera driver may outlive the wait; the thread is a
        daemon, so it never keeps the process alive.)"""
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("camera worker did not stop within %.1f s", timeout)
            return False
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the worker to end by itself (a replayed file played out)."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- what the web layer reads ------------------------------------------------------
    def status(self) -> CameraStatus:
        with self._lock:
            return self._status

    def preview_jpeg(self) -> bytes | None:
        """The latest frame with the reading drawn on it, as JPEG bytes (None before the
        first frame)."""
        with self._lock:
            return self._preview

    def latest_reading(self) -> FrameReading | None:
        """The reading of the last frame read (frames whose dice moved are not read)."""
        with self._lock:
            return self._reading

    # -- the thread --------------------------------------------------------------------
    def _set(self, **changes: object) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)  # type: ignore[arg-type]

    def _run(self) -> None:
        failures_in_a_row = 0
        try:
            while not self._stop.is_set():
                outcome = self._run_source()
                if self._stop.is_set():
                    break
                if outcome == ENDED:
                    if not self._reopen_at_end:
                        self._set(ended=True)
                        break
                    failures_in_a_row = 0
                    continue
                # a source that delivered before failing starts the back-off afresh
                failures_in_a_row = 1 if outcome == DELIVERED else failures_in_a_row + 1
                delay = self._back_off.delay(failures_in_a_row)
                logger.info("reopening the source in %.1f s", delay)
                if self._stop.wait(delay):
                    break
                with self._lock:
                    attempts = self._status.reconnect_attempts + 1
                self._set(reconnect_attempts=attempts)
        except BaseException as exc:  # the last guard: nothing may escape the thread
            logger.exception("camera worker crashed")
            self._set(last_error=f"camera worker stopped: {exc!r}")
        finally:
            self._set(running=False, connected=False)

    def _run_source(self) -> str:
        """Play one source until it ends, fails or the worker stops. Returns ENDED (ran out
        of frames normally, or the worker stops), FAILED (failed before its first frame) or
        DELIVERED (failed after delivering frames)."""
        delivered = 0
        source: FrameSource | None = None
        frames: Iterator[Frame] | None = None
        try:
            source = self._open_source()
            self._set(source=source.describe())
            self._settler.reset()
            frames = iter(source)
            paced_from = time.monotonic()
            for frame in frames:
                delivered += 1
                if delivered == 1:
                    self._set(connected=True)
                    paced_from = time.monotonic()
                self._process(frame, source)
                paced_from = self._pace(delivered, paced_from)
                if self._stop.is_set():
                    return ENDED
            return self._pass_ended(source, delivered)
        except Exception as exc:
            logger.warning("camera source failed: %s", exc, exc_info=True)
            self._set(connected=False, last_error=f"{type(exc).__name__}: {exc}")
            return DELIVERED if delivered else FAILED
        finally:
            if frames is not None and hasattr(frames, "close"):
                try:
                    frames.close()  # releases the capture (the generator's finally)
                except Exception:
                    logger.warning("closing the source failed", exc_info=True)
            if source is not None:
                self._corrupt_before += source.status.skipped
                self._set(corrupt_frames=self._corrupt_before)

    def _pace(self, delivered: int, paced_from: float) -> float:
        """Wait until frame `delivered` is due at `pace_fps` (returns at once when the
        worker stops); returns the pacing start, moved on when far behind (a slow
        reader paces from now on)."""
        if not self._pace_fps:
            return paced_from
        wait = paced_from + delivered / self._pace_fps - time.monotonic()
        if wait < -1.0:
            return time.monotonic() - delivered / self._pace_fps
        if wait > 0:
            self._stop.wait(wait)
        return paced_from

    def _pass_ended(self, source: FrameSource, delivered: int) -> str:
        """How a pass over a source that stopped yielding frames ended."""
        problem = source.status.problem
        if problem:
            self._set(connected=False, last_error=problem)
            return DELIVERED if delivered else FAILED
        if delivered == 0 and self._reopen_at_end:
            # an empty pass of a source played in a loop is a failure (no busy loop)
            self._set(connected=False)
            return FAILED
        # a source that ran out normally stays "connected" while it is played again
        # (the worker's end marks it disconnected otherwise)
        return ENDED

    def _process(self, frame: Frame, source: FrameSource) -> None:
        """One frame: motion, the reading where it can end a throw, settle, publish,
        preview, status."""
        started, arrived = time.perf_counter(), time.monotonic()
        reading, event = self._look_and_read(frame)
        if event is not None:
            self._publish(event)
        now = time.monotonic()
        preview: bytes | None = None
        if event is not None or now - self._preview_at >= self._preview_interval:
            preview = self._encode_preview(frame.image, self._drawn_reading(frame, reading))
            self._preview_at = now
        ms = (time.perf_counter() - started) * 1000.0
        self._note_frame(source, reading, event, preview, ms, arrived)

    def _look_and_read(self, frame: Frame) -> tuple[FrameReading | None, RollEvent | None]:
        """The settle stage looks first; the reader reads only where it can matter:
        - something moves: not read (the frame cannot end a throw), except a source's first
          frame, whose motion is unknown: read, not settled;
        - still, and surely unchanged since the frame read last: settled with that reading;
        - still, the throw settled (or the table read empty) and nothing moved since: not
          read, but for one every `idle_read_interval` seconds (the reading the preview and
          the calibration page show stays current);
        - any other still frame: read and settled."""
        settler = self._settler
        now = time.monotonic()
        if settler.look(frame) is Stillness.MOVING:
            if settler.last_motion.known:
                return None, None
            # a source's first frame: the reader meets the camera's frame size before a
            # throw depends on it (the first inference at a new size is slow), and the
            # preview shows the dice at once
            self._read_at = now
            return self._read(frame), None
        if not settler.can_end_throw:
            if now - self._read_at < self._idle_read_interval:
                return None, None
        elif settler.reading_stands:
            return None, settler.settle(frame, None)
        self._read_at = now
        reading = self._read(frame)
        return reading, settler.settle(frame, reading)

    def _drawn_reading(self, frame: Frame, reading: FrameReading | None) -> FrameReading:
        """What the preview outlines: this frame's reading; for a still frame left unread,
        the last reading (nothing moved since); none while something moves."""
        if reading is not None:
            return reading
        last = self._reading
        if last is not None and self._settler.last_stillness is not Stillness.MOVING:
            return last
        return unread(frame)

    def _frame_rate(self, arrived: float) -> float:
        """Frames per second over the frames that arrived in the last FPS_WINDOW seconds,
        timed where the worker took them: frames not read take a millisecond, so after a
        slow reading a replay catches up in a burst, which an average of the intervals
        between frames done would count as a higher rate."""
        times = self._frame_times
        times.append(arrived)
        while arrived - times[0] > FPS_WINDOW:
            times.popleft()
        span = arrived - times[0]
        return (len(times) - 1) / span if span > 0 else 0.0

    def _note_frame(
        self,
        source: FrameSource,
        reading: FrameReading | None,
        event: RollEvent | None,
        preview: bytes | None,
        ms: float,
        arrived: float,
    ) -> None:
        """The status after one frame (`reading` None: not read; `arrived`: when the worker
        took it from the source, monotonic)."""
        with self._lock:
            old = self._status
            fps = self._frame_rate(arrived)
            self._status = replace(
                old,
                frames_read=old.frames_read + 1,
                frames_unread=old.frames_unread + (reading is None),
                corrupt_frames=self._corrupt_before + source.status.skipped,
                events=old.events + (event is not None),
                fps=fps,
                ms_per_frame=ms if old.ms_per_frame == 0 else 0.9 * old.ms_per_frame + 0.1 * ms,
                settle=self._settler.state,
            )
            if reading is not None:
                self._reading = reading
            if preview is not None:
                self._preview = preview

    def _read(self, frame: Frame) -> FrameReading:
        h, w = frame.image.shape[:2]
        if self._reader is None:
            return unread(frame)
        try:
            return self._reader.read(frame.image, frame.index)
        except Exception as exc:  # DiceReader never raises; any other reader might
            logger.warning("reading frame %s failed: %s", frame.index, exc, exc_info=True)
            self._set(last_error=f"reader: {type(exc).__name__}: {exc}")
            return FrameReading(w, h, (), frame_index=frame.index, problems=(str(exc),))

    def _publish(self, event: RollEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception as exc:
            logger.warning("roll event callback failed: %s", exc, exc_info=True)
            self._set(last_error=f"event callback: {type(exc).__name__}: {exc}")

    def _encode_preview(self, image: np.ndarray, reading: FrameReading) -> bytes | None:
        return preview_jpeg_of(image, reading)


def preview_jpeg_of(image: np.ndarray, reading: FrameReading) -> bytes | None:
    """`image` with `reading`'s dice outlined, as JPEG bytes (None, logged, when it cannot
    be drawn)."""
    try:
        annotated = annotate_frame(image, reading)
        ok, buffer = cv2.imencode(
            ".jpg", annotated, [cv2.IMWRITE_JPEG_QUALITY, PREVIEW_JPEG_QUALITY]
        )
        return buffer.tobytes() if ok else None
    except Exception:
        logger.warning("preview failed", exc_info=True)
        return None


def unread(frame: Frame) -> FrameReading:
    """The reading of a frame nobody read: its size, no dice."""
    h, w = frame.image.shape[:2]
    return FrameReading(w, h, (), frame_index=frame.index)


def annotate_frame(image: np.ndarray, reading: FrameReading) -> np.ndarray:
    """The frame with the dice outlined (companion.vision.annotate when it is there, else
    plain boxes)."""
    try:
        from companion.vision.annotate import annotate
    except ImportError:  # the vision package without its annotate module
        out = image.copy()
        for die in reading.dice:
            x0, y0, x1, y1 = die.where.box
            cv2.rectangle(out, (x0, y0), (x1, y1), (60, 200, 60), 2)
        return out
    return annotate(image, reading)
