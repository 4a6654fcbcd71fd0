"""Frame sources: folder of images, video file, webcam (no camera exists here: its failure
report is tested, and a lost camera through a real capture that runs dry)."""

from __future__ import annotations

import logging
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.sources import (
    CameraSource,
    FolderSource,
    VideoSource,
    configure_camera,
    open_source,
    read_image,
)


def write_images(folder: Path, names: list[str]) -> None:
    for k, name in enumerate(names):
        cv2.imwrite(str(folder / name), np.full((24, 32, 3), 40 * k, np.uint8))


def write_video(path: Path, frames: int) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 10, (64, 48))
    assert writer.isOpened()
    for k in range(frames):
        writer.write(np.full((48, 64, 3), (k * 20) % 256, np.uint8))
    writer.release()


def test_folder_gives_images_in_sorted_order_and_skips_bad_files(tmp_path: Path) -> None:
    write_images(tmp_path, ["b.png", "a.jpg", "c.png"])
    (tmp_path / "a2.jpg").write_bytes(b"this is not a jpeg")
    (tmp_path / "b2.png").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("ignored: not an image suffix")
    (tmp_path / "sub").mkdir()
    source = FolderSource(tmp_path)
    frames = list(source)
    assert [Path(f.source).name for f in frames] == ["a.jpg", "b.png", "c.png"]
    assert [f.index for f in frames] == [0, 1, 2]
    assert all(f.image.shape == (24, 32, 3) and f.image.dtype == np.uint8 for f in frames)
    assert source.status.frames == 3
    assert source.status.skipped == 2
    assert any("a2.jpg" in item for item in source.status.skipped_items)
    assert source.status.problem is None


def test_missing_folder_is_reported(tmp_path: Path) -> None:
    source = FolderSource(tmp_path / "nowhere")
    assert list(source) == []
    assert source.status.problem is not None and "no such folder" in source.status.problem


def test_video_gives_every_frame(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    write_video(path, 12)
    source = VideoSource(path)
    frames = list(source)
    assert len(frames) == 12 and source.status.frames == 12
    assert frames[0].image.shape == (48, 64, 3)
    # the frames come in order: brightness rises with the frame number
    means = [float(f.image.mean()) for f in frames]
    assert means == sorted(means)


def test_damaged_video_does_not_stop_the_iteration(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    write_video(path, 20)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 400] = bytes(400)  # zero a stretch inside the frame data
    path.write_bytes(bytes(data))
    source = VideoSource(path)
    frames = list(source)  # must not raise
    assert source.status.frames == len(frames) >= 10


def test_missing_and_corrupt_video_are_reported(tmp_path: Path) -> None:
    source = VideoSource(tmp_path / "none.avi")
    assert list(source) == []
    assert "no such video file" in (source.status.problem or "")
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"\x00" * 1000)
    source = VideoSource(junk)
    assert list(source) == []
    assert "cannot be opened" in (source.status.problem or "")


def test_camera_that_cannot_be_opened_is_reported() -> None:
    source = CameraSource(97)  # no machine that runs the tests has 98 cameras
    assert list(source) == []
    assert source.status.problem == "camera 97: cannot be opened"


class _CaptureSettings:
    """What a webcam's capture is asked to set, and whether its backend agrees (no camera
    is attached where the tests run, so this stands in for the driver)."""

    def __init__(self, buffer_size_supported: bool) -> None:
        self.asked: dict[int, float] = {}
        self.buffer_size_supported = buffer_size_supported

    def set(self, prop: int, value: float) -> bool:
        self.asked[prop] = value
        return prop != cv2.CAP_PROP_BUFFERSIZE or self.buffer_size_supported


@pytest.mark.parametrize("supported", [True, False])
def test_a_webcam_is_asked_for_its_size_and_a_one_frame_buffer(
    supported: bool, caplog: pytest.LogCaptureFixture
) -> None:
    capture = _CaptureSettings(buffer_size_supported=supported)
    with caplog.at_level(logging.INFO, logger="companion.vision.sources"):
        configure_camera(capture, 1280, 720)  # type: ignore[arg-type]
    assert capture.asked == {
        cv2.CAP_PROP_FRAME_WIDTH: 1280,
        cv2.CAP_PROP_FRAME_HEIGHT: 720,
        cv2.CAP_PROP_BUFFERSIZE: 1,
    }
    # a backend that keeps its own buffer is said so in the log, and nothing else changes
    assert ("CAP_PROP_BUFFERSIZE refused" in caplog.text) is not supported
    capture = _CaptureSettings(buffer_size_supported=supported)
    configure_camera(capture)  # type: ignore[arg-type]
    assert capture.asked == {cv2.CAP_PROP_BUFFERSIZE: 1}  # the camera's own size kept


def test_an_opened_webcam_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[_OpenedCapture] = []

    class _OpenedCapture(_CaptureSettings):
        def __init__(self, index: int) -> None:
            super().__init__(buffer_size_supported=True)
            self.index = index
            opened.append(self)

        def isOpened(self) -> bool:  # noqa: N802 (OpenCV's name)
            return True

    monkeypatch.setattr("companion.vision.sources.cv2.VideoCapture", _OpenedCapture)
    CameraSource(3, width=640, height=480)._open()
    assert [c.index for c in opened] == [3]
    assert opened[0].asked[cv2.CAP_PROP_BUFFERSIZE] == 1
    assert opened[0].asked[cv2.CAP_PROP_FRAME_WIDTH] == 640


class _RunsDryCamera(CameraSource):
    """A camera whose capture is a short real video: after its last frame every read
    fails, as when a webcam is unplugged."""

    def __init__(self, video: Path) -> None:
        super().__init__(0)
        self.video = video

    def _open(self) -> cv2.VideoCapture:
        return cv2.VideoCapture(str(self.video))


def test_lost_camera_is_reported_after_repeated_failed_reads(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    write_video(path, 5)
    source = _RunsDryCamera(path)
    frames = list(source)
    assert len(frames) == 5
    assert source.status.problem is not None and "lost" in source.status.problem


def test_read_image(tmp_path: Path) -> None:
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), np.full((10, 12), 90, np.uint8))
    image = read_image(grey)
    assert image is not None and image.shape == (10, 12, 3)
    assert read_image(tmp_path / "missing.png") is None
    (tmp_path / "empty.png").write_bytes(b"")
    assert read_image(tmp_path / "empty.png") is None


def test_open_source_wants_exactly_one(tmp_path: Path) -> None:
    assert isinstance(open_source(images=tmp_path), FolderSource)
    assert isinstance(open_source(video=tmp_path / "v.avi"), VideoSource)
    assert isinstance(open_source(camera=0), CameraSource)
    with pytest.raises(ValueError, match="exactly one"):
        open_source()
    with pytest.raises(ValueError, match="exactly one"):
        open_source(camera=0, images=tmp_path)
