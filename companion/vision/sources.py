"""Frame sources: the first stage of the vision pipeline (source -> locate -> classify ->
colour -> settle). Every source is an iterable of `Frame` behind one interface:

- `CameraSource(index)`: a webcam through cv2.VideoCapture;
- `VideoSource(path)`: a video file;
- `FolderSource(path)`: the images of a folder, in sorted name order (each held for
  `hold_frames` frames: a folder of still photos rather than a clip).

A frame or image that cannot be decoded is logged, counted in the source's `status` and
skipped; the iteration goes on. A camera that cannot be opened, or that stops delivering
frames, is logged and noted in `status.problem` (the iteration then ends). Nothing is
opened at construction: a source opens its device or file when iterated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.vision.types import Frame

logger = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")

# A webcam that returns this many failed reads in a row is considered lost.
CAMERA_LOST_AFTER = 30


@dataclass
class SourceStatus:
    """What a source has done so far: frames delivered, frames skipped as unreadable, the
    last skipped item and the problem that ended the source (None while all is well)."""

    frames: int = 0
    skipped: int = 0
    last_skipped: str = ""
    problem: str | None = None
    skipped_items: list[str] = field(default_factory=list)

    def skip(self, what: str, why: str) -> None:
        self.skipped += 1
        self.last_skipped = what
        self.skipped_items.append(f"{what}: {why}")
        logger.warning("skipped unreadable frame %s: %s", what, why)

    def fail(self, problem: str) -> None:
        self.problem = problem
        logger.error("%s", problem)


def is_usable_image(image: np.ndarray | None) -> bool:
    """A decoded picture the pipeline can use: H x W x 3 uint8 with both sides >= 1."""
    return (
        image is not None
        and image.ndim == 3
        and image.shape[2] == 3
        and image.shape[0] > 0
        and image.shape[1] > 0
        and image.dtype == np.uint8
    )


class FrameSource:
    """The common interface: iterate to get Frames; `status` tells what happened;
    `describe()` names the source for logs and the web page."""

    def __init__(self) -> None:
        self.status = SourceStatus()

    def __iter__(self) -> Iterator[Frame]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def _frame(self, image: np.ndarray, index: int, source: str) -> Frame:
        self.status.frames += 1
        return Frame(image=image, index=index, timestamp=time.time(), source=source)


class FolderSource(FrameSource):
    """The images of a folder (not its subfolders), sorted by file name. Files with an
    image suffix that cannot be decoded are skipped and counted."""

    def __init__(self, folder: str | Path, hold_frames: int = 1) -> None:
        super().__init__()
        self.folder = Path(folder)
        # each image delivered this many times in a row: a folder of still photos, one
        # throw at rest each, shown long enough for the settle stage to see it rest (1: a
        # recorded clip, one image per frame)
        self.hold_frames = max(1, int(hold_frames))

    def describe(self) -> str:
        return f"folder {self.folder}"

    def paths(self) -> list[Path]:
        return sorted(
            p for p in self.folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
        )

    def __iter__(self) -> Iterator[Frame]:
        if not self.folder.is_dir():
            self.status.fail(f"{self.folder}: no such folder")
            return
        index = 0
        for path in self.paths():
            image = read_image(path)
            if image is None:
                self.status.skip(str(path), "not a readable image")
                continue
            for _ in range(self.hold_frames):
                yield self._frame(image, index, str(path))
                index += 1


def read_image(path: str | Path) -> np.ndarray | None:
    """Decode an image file to BGR uint8; None when it is missing, empty or corrupt.
    (cv2.imread has no error detail; it returns None for all three.)"""
    try:
        data = np.fromfile(str(path), dtype=np.uint8)
    except OSError:
        return None
    if data.size == 0:
        return None
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return image if is_usable_image(image) else None


class _CaptureSource(FrameSource):
    """A cv2.VideoCapture behind the source interface (camera or video file)."""

    lost_after = 1

    def _open(self) -> cv2.VideoCapture:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Frame]:
        capture = self._open()
        try:
            if not capture.isOpened():
                if self.status.problem is None:
                    self.status.fail(f"{self.describe()}: cannot be opened")
                return
            failures = 0
            index = 0
            position = 0
            while True:
                ok, image = capture.read()
                position += 1
                if ok and is_usable_image(image):
                    failures = 0
                    yield self._frame(image, index, self.describe())
                    index += 1
                    continue
                failures += 1
                if self._finished(capture, failures):
                    return
                self.status.skip(f"{self.describe()} frame {position}", "could not be decoded")
        finally:
            capture.release()

    def _finished(self, capture: cv2.VideoCapture, failures: int) -> bool:
        raise NotImplementedError


class VideoSource(_CaptureSource):
    """The frames of a video file, in order. A frame that fails to decode inside the file
    is skipped; the end of the file ends the source."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)

    def describe(self) -> str:
        return f"video {self.path}"

    def _open(self) -> cv2.VideoCapture:
        if not self.path.is_file():
            self.status.fail(f"{self.path}: no such video file")
        return cv2.VideoCapture(str(self.path))

    def _finished(self, capture: cv2.VideoCapture, failures: int) -> bool:
        total = capture.get(cv2.CAP_PROP_FRAME_COUNT)
        done = capture.get(cv2.CAP_PROP_POS_FRAMES)
        # past the last frame, or a container that does not know its length
        return total <= 0 or done >= total or failures > 25


class CameraSource(_CaptureSource):
    """A webcam by index. If it cannot be opened, or gives CAMERA_LOST_AFTER failed reads
    in a row (unplugged, taken by another program), the source reports it in
    `status.problem` and ends."""

    def __init__(self, index: int, width: int | None = None, height: int | None = None) -> None:
        super().__init__()
        self.index = index
        self.width = width
        self.height = height

    def describe(self) -> str:
        return f"camera {self.index}"

    def _open(self) -> cv2.VideoCapture:
        capture = cv2.VideoCapture(self.index)
        if capture.isOpened():
            configure_camera(capture, self.width, self.height)
        return capture

    def _finished(self, capture: cv2.VideoCapture, failures: int) -> bool:
        if failures >= CAMERA_LOST_AFTER:
            self.status.fail(f"{self.describe()}: lost (no frame in {failures} reads)")
            return True
        return False


def configure_camera(
    capture: cv2.VideoCapture, width: int | None = None, height: int | None = None
) -> None:
    """Ask an opened webcam for the frame size, and to keep one frame in its buffer.

    A capture driver queues frames (V4L2 four by default); a reader slower than the camera
    (a busy laptop reading 1280x720 frames) would then get each frame up to four frames
    late, and every roll that much later. With one buffered frame each read is the newest
    the camera has. Backends that cannot do it say no (set returns False): nothing changes."""
    if width:
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
    if height:
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
    if not capture.set(cv2.CAP_PROP_BUFFERSIZE, 1):
        logger.info("the camera keeps its own frame buffer (CAP_PROP_BUFFERSIZE refused)")


def open_source(
    camera: int | None = None, video: str | Path | None = None, images: str | Path | None = None
) -> FrameSource:
    """The source the command line asked for (exactly one of the three)."""
    given = [x is not None for x in (camera, video, images)]
    if sum(given) != 1:
        raise ValueError("give exactly one of camera, video, images")
    if camera is not None:
        return CameraSource(camera)
    if video is not None:
        return VideoSource(video)
    return FolderSource(images)  # type: ignore[arg-type]
