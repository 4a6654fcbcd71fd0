"""Reading an image file a test wrote or ships: OpenCV answers None for a missing or
unreadable file, which here is a broken test setup, not a case under test."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


def read_image(path: str | Path, flags: int = cv2.IMREAD_COLOR) -> np.ndarray:
    """The image at `path` (as `cv2.imread(path, flags)`); fails the test when none is."""
    image = cv2.imread(str(path), flags)
    assert image is not None, f"no image at {path}"
    return image
