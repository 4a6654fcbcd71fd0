"""The photometric augmentation (models/recipe/augment.py): a JPEG round trip that does
not decode keeps the jittered frame instead of handing training None."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from models.recipe import augment


def test_a_jpeg_that_does_not_decode_keeps_the_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """imdecode answering None (a broken encoder): the copy is the frame as it was jittered
    up to the JPEG step, of the image's shape, not None."""
    image = np.random.default_rng(7).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    encoded: list[np.ndarray] = []
    real_imencode = cv2.imencode

    def recording_imencode(ext: str, frame: np.ndarray, params: Any) -> Any:
        encoded.append(frame.copy())
        return real_imencode(ext, frame, params)

    monkeypatch.setattr(cv2, "imencode", recording_imencode)
    monkeypatch.setattr(cv2, "imdecode", lambda data, flags: None)
    # the JPEG step is taken at random (30 %): the first seed whose copy takes it
    for seed in range(100):
        encoded.clear()
        out = augment.photometric(image, np.random.default_rng(seed))
        if encoded:
            break
    assert len(encoded) == 1, "no seed of 100 took the JPEG step"
    assert out is not None and out.dtype == np.uint8 and out.shape == image.shape
    assert np.array_equal(out, encoded[0])
