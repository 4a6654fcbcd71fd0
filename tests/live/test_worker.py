"""CameraWorker with real sources: a folder with corrupt files mixed in, a folder that
disappears and comes back, a source that fails mid-way, stop() during play and back-off;
plus the demo clip as a looping source."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.live.demo import (
    DEMO_CLIP,
    DEMO_FPS,
    DEMO_SEED,
    ClipFrame,
    LoopingSource,
    find_camera_or_demo,
    open_demo_source,
    plan_source,
    render_throws,
)
from companion.live.settle import RollEvent, SettleConfig
from companion.live.worker import BackOff, CameraStatus, CameraWorker
from companion.table.camera_runtime import WEBCAM_RETRY_S, CameraRuntime, status_line
from companion.table.camera_settings import CameraSettings
from companion.vision.colour import DiceSet
from companion.vision.sources import FolderSource, FrameSource
from companion.vision.types import UNREADABLE, DieBox, DieReading, Frame, FrameReading
from tests.images import read_image
from tests.waiting import wait_until

FAST = BackOff(first=0.02, longest=0.1)


class ClipReader:
    """Reads a rendered clip by frame index from its ground truth: the pipeline's place
    taken by a perfect reader, so these tests check the worker, not the models (the real
    DiceReader runs in test_settle.py when the models exist). `read_indices` lists the
    frames it was asked to read."""

    def __init__(self, clip: list[ClipFrame]) -> None:
        self.clip = clip
        self.read_indices: list[int] = []

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        self.read_indices.append(frame_index)
        shown = self.clip[frame_index % len(self.clip)]
        dice = tuple(
            DieReading(
                DieBox(d.cx, d.cy, d.side, d.side, d.angle),
                d.value,
                0.99,
                d.colour,
                flags=() if d.value else (UNREADABLE,),
            )
            for d in shown.dice
        )
        h, w = shown.image.shape[:2]
        return FrameReading(w, h, dice, frame_index=frame_index)


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


@pytest.fixture(scope="module")
def clip() -> list[ClipFrame]:
    return list(render_throws(seed=5, throws=1, width=320, height=240, side=24.0))


def write_clip(folder: Path, clip: list[ClipFrame]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, c in enumerate(clip):
        cv2.imwrite(str(folder / f"frame_{k:03d}.jpg"), c.image, [cv2.IMWRITE_JPEG_QUALITY, 90])


def demo_clip_events(
    reader: Any, settle: SettleConfig, frames: int, timeout: float = 30.0
) -> list[RollEvent]:
    """The roll events of one pass of the bundled demo clip (``frames`` long) read by
    ``reader`` in a real CameraWorker."""
    events: list[RollEvent] = []
    worker = CameraWorker(open_demo_source, reader, events.append, settle=settle)
    worker.start()
    try:
        wait_for(lambda: worker.status().frames_read >= frames, timeout=timeout)
    finally:
        assert worker.stop()
    return [e for e in events if e.frame_index < frames]


def test_folder_with_corrupt_files_plays_through(tmp_path: Path, clip: list[ClipFrame]) -> None:
    folder = tmp_path / "frames"
    write_clip(folder, clip)
    (folder / "frame_005b.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    (folder / "frame_010b.png").write_bytes(b"")
    (folder / "frame_020b.jpg").write_text("hello", encoding="utf-8")
    events: list[RollEvent] = []
    worker = CameraWorker(
        lambda: FolderSource(folder),
        ClipReader(clip),
        events.append,
        settle=SettleConfig(stable_frames=4),
    )
    worker.start()
    assert worker.wait(30.0)
    status = worker.status()
    assert status.frames_read == len(clip)
    assert status.corrupt_frames == 3
    assert status.ended and not status.running and status.reconnect_attempts == 0
    assert status.events == 1 and len(events) == 1
    assert clip[events[0].frame_index].phase == "rest"
    assert Counter(d.value for d in events[0].dice) == Counter(
        d.value for d in clip[events[0].frame_index].dice
    )
    preview = worker.preview_jpeg()
    assert preview is not None
    image = cv2.imdecode(np.frombuffer(preview, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == (240, 320, 3)
    assert status.ms_per_frame > 0 and status.fps > 0
    assert set(status.to_json()) >= {"source", "fps", "frames_read", "corrupt_frames"}


def test_folder_that_disappears_is_reopened_with_back_off(
    tmp_path: Path, clip: list[ClipFrame]
) -> None:
    folder = tmp_path / "frames"
    write_clip(folder, clip[:6])
    worker = CameraWorker(
        lambda: FolderSource(folder), None, pace_fps=200.0, back_off=FAST, reopen_at_end=True
    )
    worker.start()
    try:
        wait_for(lambda: worker.status().frames_read >= 8)  # looped once at least
        folder.rename(tmp_path / "away")
        wait_for(lambda: worker.status().reconnect_attempts >= 3)
        gone = worker.status()
        assert not gone.connected and gone.running
        # "no such folder" from the source, or the OS's words when the folder vanished
        # between the source's check and its listing
        assert "no such" in (gone.last_error or "").lower()
        (tmp_path / "away").rename(folder)
        before = worker.status().frames_read
        wait_for(lambda: worker.status().frames_read >= before + 6)
        assert worker.status().connected
    finally:
        assert worker.stop()


class FlakySource(FrameSource):
    """A camera that is unplugged after three frames, will not open once, then works:
    what a USB webcam does when its cable is pulled and pushed back."""

    def __init__(self, opened: list[int], image: np.ndarray) -> None:
        super().__init__()
        self.opened = opened
        self.image = image

    def describe(self) -> str:
        return "flaky camera"

    def __iter__(self) -> Iterator[Frame]:
        self.opened.append(len(self.opened) + 1)
        attempt = len(self.opened)
        if attempt == 2:
            self.status.fail("flaky camera: cannot be opened")
            return
        for k in range(1000):
            if attempt == 1 and k == 3:
                raise OSError("USB camera unplugged")
            yield self._frame(self.image, k, "flaky camera")


def test_source_failing_mid_way_comes_back(clip: list[ClipFrame]) -> None:
    opened: list[int] = []
    statuses: list[CameraStatus] = []
    worker = CameraWorker(
        lambda: FlakySource(opened, clip[0].image), None, pace_fps=200.0, back_off=FAST
    )
    worker.start()
    try:
        wait_for(lambda: len(opened) >= 2)
        statuses.append(worker.status())
        wait_for(lambda: len(opened) >= 3 and worker.status().frames_read >= 20)
        statuses.append(worker.status())
    finally:
        assert worker.stop()
    assert statuses[0].last_error is not None
    assert "USB camera unplugged" in statuses[0].last_error or "cannot be opened" in (
        statuses[0].last_error
    )
    assert statuses[1].connected and statuses[1].reconnect_attempts == 2
    assert statuses[1].last_error == "flaky camera: cannot be opened"
    assert not worker.is_alive and not worker.status().running


def test_event_callback_errors_do_not_stop_the_worker(
    tmp_path: Path, clip: list[ClipFrame]
) -> None:
    folder = tmp_path / "frames"
    write_clip(folder, clip)

    def broken(event: RollEvent) -> None:
        raise RuntimeError("the web layer is gone")

    worker = CameraWorker(
        lambda: FolderSource(folder),
        ClipReader(clip),
        broken,
        settle=SettleConfig(stable_frames=4),
    )
    worker.start()
    assert worker.wait(30.0)
    status = worker.status()
    assert status.events == 1 and status.frames_read == len(clip) and status.ended
    assert "the web layer is gone" in (status.last_error or "")


def test_stop_joins_while_playing_and_while_backing_off(clip: list[ClipFrame]) -> None:
    playing = CameraWorker(open_demo_source, None, pace_fps=10.0)
    playing.start()
    wait_for(lambda: playing.status().frames_read >= 1)
    assert playing.stop(timeout=2.0)

    def missing() -> FrameSource:
        return FolderSource(Path("/nonexistent/frames"))

    waiting = CameraWorker(missing, None, back_off=BackOff(first=60.0, longest=60.0))
    waiting.start()
    wait_for(lambda: waiting.status().last_error is not None)
    assert waiting.stop(timeout=2.0)  # the 60 s back-off wait ends at once
    assert waiting.status().reconnect_attempts == 0


def test_replay_paces_at_the_given_rate(tmp_path: Path, clip: list[ClipFrame]) -> None:
    folder = tmp_path / "frames"
    write_clip(folder, clip[:10])
    worker = CameraWorker(lambda: FolderSource(folder), None, pace_fps=50.0)
    started = time.monotonic()
    worker.start()
    assert worker.wait(10.0)
    # ten frames at 50 fps cannot be done in less than 10 / 50 s
    assert time.monotonic() - started >= 0.19
    assert worker.status().frames_read == 10


def test_back_off_doubles_and_is_bounded() -> None:
    back_off = BackOff(first=0.5, longest=10.0)
    assert [back_off.delay(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_start_twice_is_refused(clip: list[ClipFrame]) -> None:
    worker = CameraWorker(open_demo_source, None, pace_fps=10.0)
    worker.start()
    try:
        with pytest.raises(RuntimeError):
            worker.start()
    finally:
        assert worker.stop()


def test_demo_clip_loops_and_is_the_fallback() -> None:
    frames = sorted(DEMO_CLIP.glob("*.jpg"))
    assert 60 <= len(frames) <= 200
    assert sum(f.stat().st_size for f in frames) < 2_000_000
    source = open_demo_source()
    indices = []
    for frame in source:
        assert frame.image.shape == (480, 640, 3)
        indices.append(frame.index)
        if len(indices) == len(frames) + 5:
            break
    assert indices == list(range(len(frames) + 5))  # numbered on across the loop
    assert isinstance(find_camera_or_demo(index=97), LoopingSource)  # no webcam here
    with pytest.raises(FileNotFoundError, match="make_demo_clip"):
        open_demo_source(Path("/nonexistent/clip"))


def test_looping_source_of_an_empty_folder_ends_with_its_problem(tmp_path: Path) -> None:
    source = LoopingSource(FolderSource(tmp_path / "none"))
    assert list(source) == []
    assert "no such folder" in (source.status.problem or "")


def test_source_plans(tmp_path: Path, clip: list[ClipFrame]) -> None:
    video = tmp_path / "throw.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 25.0, (320, 240))
    for c in clip[:5]:
        writer.write(c.image)
    writer.release()
    plan = plan_source(video=video)
    assert plan.pace_fps == pytest.approx(25.0) and not plan.reopen_at_end and not plan.live
    assert len(list(plan.open())) == 5
    assert plan_source(images=tmp_path).pace_fps == DEMO_FPS
    held = plan_source(images=tmp_path, images_hold_s=2.0).open()
    assert isinstance(held, FolderSource) and held.hold_frames == round(2.0 * DEMO_FPS)
    assert not plan_source(images=tmp_path).live
    camera = plan_source(camera=3)
    assert camera.pace_fps is None and camera.reopen_at_end and camera.name == "camera 3"
    assert camera.live  # real dice: the tables default to confirming its rolls
    demo = plan_source()  # no webcam on this machine
    assert demo.name == "demo clip" and demo.pace_fps == DEMO_FPS and not demo.live
    assert isinstance(demo.open(), LoopingSource)


def test_worker_on_the_bundled_demo_clip_reports_each_throw() -> None:
    """The bundled clip played through the worker: three throws, three events, each while
    the dice rest (readings from the clip's ground truth, rendered again from its seed)."""
    truth = list(render_throws(seed=DEMO_SEED, throws=3))
    first_loop = demo_clip_events(ClipReader(truth), SettleConfig(stable_frames=3), len(truth))
    assert [truth[e.frame_index].throw for e in first_loop] == [0, 1, 2]
    assert all(truth[e.frame_index].phase == "rest" for e in first_loop)
    assert all(e.frame_index - e.rest_index == 2 for e in first_loop)


def test_real_dice_reader_reads_every_throw_of_the_bundled_clip() -> None:
    """The shipped ONNX models through the worker on the bundled demo clip: one roll per
    throw, each the roll that was drawn."""
    from companion.live.match import match_roll
    from companion.rules.base import DiceSpec, Roll
    from companion.vision.pipeline import DiceReader

    truth = list(render_throws(seed=DEMO_SEED, throws=3))
    first_loop = demo_clip_events(
        DiceReader.load(dice_set="qwixx"), SettleConfig.for_fps(DEMO_FPS), len(truth), 60.0
    )
    assert [truth[e.frame_index].throw for e in first_loop] == [0, 1, 2]
    spec = DiceSpec(("white", "white", "red", "yellow", "green", "blue"))
    for event in first_loop:
        roll = match_roll(event.dice, spec)
        assert isinstance(roll, Roll), roll
        drawn = truth[event.frame_index].dice
        assert sorted((d.colour, d.value) for d in roll.dice) == sorted(
            (d.colour, d.value) for d in drawn
        )


class FixedReader:
    """A reader that reports the same dice for every frame (the keeper's size filter is
    what is under test, not the models)."""

    def __init__(self, reading: FrameReading) -> None:
        self.reading = reading

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        return self.reading


def test_the_calibrated_die_size_follows_the_camera_resolution() -> None:
    """A die size calibrated at 640 px wide frames means twice that many pixels once the
    camera runs at 1280 px: dice of the calibrated real size are kept, a thing of half
    that size (a score pad digit) is dropped."""
    from companion.table.camera_runtime import CalibratedReader, PlayArea

    def die(cx: float, side: float) -> DieReading:
        return DieReading(DieBox(cx, 300, side, side), 3, 0.99, "red")

    reading = FrameReading(1280, 720, (die(200, 90), die(600, 84), die(1000, 36)))
    reader = CalibratedReader(FixedReader(reading))  # type: ignore[arg-type]
    reader.play_area = PlayArea(die_side=42.0, side_frame_width=640)
    kept = reader.read(np.zeros((720, 1280, 3), np.uint8)).dice
    assert [d.where.cx for d in kept] == [200, 600]

    reader.play_area = PlayArea(die_side=42.0, side_frame_width=1280)  # 21-84 px are dice
    kept = reader.read(np.zeros((720, 1280, 3), np.uint8)).dice
    assert [d.where.cx for d in kept] == [600, 1000]
    outside = PlayArea(area=(0.0, 0.0, 0.5, 1.0), die_side=42.0, side_frame_width=1280)
    assert [d.where.cx for d in outside.keeps(reading).dice] == [600]


SURE = SettleConfig(stable_frames=6, sure_frames=2)


def test_the_worker_reads_no_frame_in_which_dice_move(
    tmp_path: Path, clip: list[ClipFrame]
) -> None:
    """The motion measure decides before the reader: the first frame is read (the reader
    meets the frame size), then only still frames after motion; the roll goes out two
    frames after the dice stop, read once; nothing is read while dice tumble or the hand
    moves, nor while the settled dice lie still."""
    folder = tmp_path / "frames"
    write_clip(folder, clip)
    reader = ClipReader(clip)
    events: list[RollEvent] = []
    worker = CameraWorker(
        lambda: FolderSource(folder),
        reader,
        events.append,
        settle=SURE,
        idle_read_interval=3600.0,
    )
    worker.start()
    assert worker.wait(30.0)
    [event] = events
    first_rest = next(k for k, c in enumerate(clip) if all(d.value for d in c.dice) and c.dice)
    assert clip[event.frame_index].phase == "rest"
    assert first_rest <= event.rest_index <= first_rest + 1
    assert event.frame_index == event.rest_index + 1
    read = reader.read_indices
    assert read[0] == 0 and event.rest_index in read
    assert [k for k in read[1:] if any(d.value is None for d in clip[k].dice)] == []

    def changed(k: int) -> float:
        return float(np.abs(clip[k].image.astype(int) - clip[k - 1].image.astype(int)).mean())

    # every frame read after the first shows what the frame before it showed (noise aside):
    # the first still frame of the dice, a hand pausing, the empty table
    assert all(changed(k) < 3 for k in read[1:]), [(k, changed(k)) for k in read]
    hand = next(k for k, c in enumerate(clip) if c.phase == "hand")
    assert [k for k in read if event.frame_index <= k < hand] == []  # settled: not read
    status = worker.status()
    assert status.frames_unread == len(clip) - len(read) and status.frames_read == len(clip)
    # the event's picture is the frame that was read; the frame after it did not change
    assert event.image is not None
    assert np.abs(event.image.astype(int) - clip[event.rest_index].image.astype(int)).mean() < 3


class ListSource(FrameSource):
    """Given images, once, in order (frame index = place in the list)."""

    def __init__(self, images: list[np.ndarray]) -> None:
        super().__init__()
        self.images = images

    def describe(self) -> str:
        return "listed frames"

    def __iter__(self) -> Iterator[Frame]:
        for index, image in enumerate(self.images):
            yield self._frame(image, index, "listed")


class ListReader:
    def __init__(self, readings: list[FrameReading]) -> None:
        self.readings = readings
        self.read_indices: list[int] = []

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        self.read_indices.append(frame_index)
        return self.readings[frame_index]


def moved_die(rest: ClipFrame, table: np.ndarray, colour: str, dx: int) -> ClipFrame:
    """The rest frame with the die of `colour` pushed `dx` pixels to the right."""
    die = next(d for d in rest.dice if d.colour == colour)
    reach = int(die.side * 0.75)
    x0, y0 = int(die.cx) - reach, int(die.cy) - reach
    image = rest.image.copy()
    image[y0 : y0 + 2 * reach, x0 : x0 + 2 * reach] = table[
        y0 : y0 + 2 * reach, x0 : x0 + 2 * reach
    ]
    image[y0 : y0 + 2 * reach, x0 + dx : x0 + dx + 2 * reach] = rest.image[
        y0 : y0 + 2 * reach, x0 : x0 + 2 * reach
    ]
    dice = tuple(replace(d, cx=d.cx + dx) if d is die else d for d in rest.dice)
    return replace(rest, image=image, dice=dice)


def test_a_die_nudged_after_the_roll_is_reported_again_through_the_worker(
    clip: list[ClipFrame],
) -> None:
    """A die pushed after the roll went out: the worker skips the frames of the push, reads
    the dice once they lie still again and reports the new layout once; the dice lying on
    afterwards report nothing more."""
    rest = next(c for c in clip if c.phase == "rest")
    empty = next(c for c in clip if c.phase == "empty")
    side = int(rest.dice[0].side)
    throw = [c for c in clip if c.phase in ("tumble", "rest")]
    push = [moved_die(rest, empty.image, "red", side // 2)]
    pushed = [moved_die(rest, empty.image, "red", side)] * 8
    shown = [*throw, *push, *pushed]
    reader = ListReader([ClipReader(shown).read(c.image, k) for k, c in enumerate(shown)])
    events: list[RollEvent] = []
    worker = CameraWorker(
        lambda: ListSource([c.image for c in shown]),
        reader,
        events.append,
        settle=SURE,
        idle_read_interval=3600.0,
    )
    worker.start()
    assert worker.wait(30.0)
    assert len(events) == 2
    red = [next(d for d in e.dice if d.colour == "red") for e in events]
    assert red[1].where.cx - red[0].where.cx == pytest.approx(side)
    assert events[1].rest_index >= len(throw) + 1  # after the push, never during it
    assert len(throw) not in reader.read_indices  # the frame of the push is not read


class PhotoReader:
    """Reads each photo of a folder by its truth: the photo whose mean colour is nearest
    (JPEG changes the bytes, not the mean)."""

    def __init__(self, photos: list[tuple[np.ndarray, ClipFrame]]) -> None:
        self.photos = [(image.mean(axis=(0, 1)), shown) for image, shown in photos]

    def read(self, image: Any, frame_index: int = 0) -> FrameReading:
        mean = np.asarray(image).mean(axis=(0, 1))
        _, shown = min(self.photos, key=lambda p: float(np.abs(p[0] - mean).sum()))
        dice = tuple(
            DieReading(DieBox(d.cx, d.cy, d.side, d.side, d.angle), d.value, 0.99, d.colour)
            for d in shown.dice
        )
        return FrameReading(320, 240, dice, frame_index=frame_index)


class NoDiceReader:
    """A reader without models: no frame comes from a webcam that does not answer."""

    dice_set: DiceSet | None = None

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        return FrameReading(0, 0, (), frame_index=frame_index)


@pytest.mark.parametrize(("hold", "throws_seen"), [(8, 3), (1, 0)])
def test_a_folder_of_still_photos_is_a_throw_each_when_held(
    tmp_path: Path, hold: int, throws_seen: int
) -> None:
    """Three photos of three throws at rest: held for 8 frames each, each is one roll;
    played as a clip (one frame each) none rests, and the status line says what to do."""
    frames = list(render_throws(seed=7, throws=3, width=320, height=240, side=24.0))
    rests = [next(f for f in frames if f.throw == t and f.phase == "rest") for t in range(3)]
    folder = tmp_path / "photos"
    write_clip(folder, rests)
    files = sorted(folder.iterdir())
    photos = [(read_image(p), shown) for p, shown in zip(files, rests, strict=True)]
    events: list[RollEvent] = []
    worker = CameraWorker(
        lambda: FolderSource(folder, hold_frames=hold),
        PhotoReader(photos),
        events.append,
        settle=SettleConfig(stable_frames=4),
    )
    worker.start()
    assert worker.wait(30.0)
    status = worker.status()
    assert status.ended and status.frames_read == 3 * hold
    assert [Counter(d.value for d in e.dice) for e in events] == [
        Counter(d.value for d in shown.dice) for shown in rests[:throws_seen]
    ]
    line = status_line(True, False, status.to_json(), None)
    assert ("--hold" in line) is (throws_seen == 0)


def test_a_named_webcam_that_does_not_answer_says_which_and_what_to_do() -> None:
    """A café owner's trial: with `--camera 0` named and no webcam plugged in, the camera
    line said only "camera lost: reconnecting (attempt 3) · camera 0: cannot be opened":
    a webcam that never answered was not lost, and the line said neither what to do nor
    how often it is tried. Now it names the webcam, says to plug it in and how often it is
    tried again; no demo plays in its place (the host named the camera). A real webcam
    source on an index no machine has (the runtime's own plan and worker)."""
    runtime = CameraRuntime(CameraSettings(index=63), NoDiceReader)
    loop = asyncio.new_event_loop()  # no throw comes: nothing is handed to it

    async def ignore_throw(event: RollEvent) -> None:
        pass

    runtime.start(loop, ignore_throw)
    try:
        status = wait_until(
            lambda: (
                (s := runtime.status_json())["status"]
                and s["status"]["reconnect_attempts"] >= 1
                and s
            ),
            20,
            "the webcam tried again",
        )
        attempt = status["status"]["reconnect_attempts"]
        assert status["line"] == (
            "webcam 63 did not answer: plug it in (or close a program using it); the camera "
            f"tries it again every {WEBCAM_RETRY_S:g} s (attempt {attempt})"
        ), status["line"]
        assert status["source"] == "camera 63" and runtime.demo is None
    finally:
        runtime.stop()
        loop.close()


def test_a_webcam_that_stopped_answering_asks_to_plug_it_back_in() -> None:
    lost = {
        "connected": False,
        "ended": False,
        "running": True,
        "source": "camera 0",
        "frames_read": 900,
        "reconnect_attempts": 2,
        "last_error": "camera 0: lost (no frame in 30 reads)",
        "corrupt_frames": 0,
    }
    assert status_line(True, False, lost, None) == (
        "webcam 0 stopped answering: plug it back in (or close a program using it); the "
        f"camera tries it again every {WEBCAM_RETRY_S:g} s (attempt 2)"
    )
