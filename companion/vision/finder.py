"""Locate stage: find every die in a frame with the dice-finder ONNX model.

The model (models/dice_finder.onnx, see models/README.md) is a small CenterNet-style
fully-convolutional net. The frame is shrunk so its long side is the manifest's size
(512), padded right/bottom to a multiple of 32, and the net returns at stride 4: a centre
heat map, log die side, sub-cell centre offset and the die's rotation as (cos 4θ, sin 4θ).
Peaks of the heat map (3x3 local maxima above a threshold) are the dice."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import cv2
import numpy as np

from companion.vision.model import OnnxModel, default_models_dir
from companion.vision.types import DieBox

logger = logging.getLogger(__name__)

FINDER_FILE = "dice_finder.onnx"
# Below this many pixels on a side no die of the supported sizes (>= 20 px) can be seen.
MIN_IMAGE_SIDE = 16


def as_bgr_uint8(image: object) -> np.ndarray | None:
    """A BGR uint8 H x W x 3 view of ``image`` (grey and BGRA accepted), or None when it
    is not a picture (wrong type, rank or channel count)."""
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        return None
    if image.dtype != np.uint8:
        if not np.issubdtype(image.dtype, np.number) or np.issubdtype(
            image.dtype, np.complexfloating
        ):
            return None
        image = np.clip(np.nan_to_num(image), 0, 255).astype(np.uint8)
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    channels = image.shape[2]
    if channels == 3:
        return image
    if channels == 1:
        return cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
    if channels == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return None


def local_maxima(heat: np.ndarray) -> np.ndarray:
    """Boolean map of cells that equal the maximum of their 3x3 neighbourhood."""
    padded = np.pad(heat, 1, mode="constant", constant_values=-np.inf)
    h, w = heat.shape
    neighbourhood = padded[0:h, 0:w]
    for dy in range(3):
        for dx in range(3):
            if dy or dx:
                neighbourhood = np.maximum(neighbourhood, padded[dy : dy + h, dx : dx + w])
    return heat >= neighbourhood


class DiceFinder:
    """Finds dice in BGR frames; see the module docstring."""

    def __init__(self, model: OnnxModel, threshold: float | None = None) -> None:
        self.model = model
        manifest = model.manifest
        self.long_side = int(manifest.option("long_side", manifest.input.size[1]))
        self.pad_multiple = int(manifest.option("pad_multiple", 32))
        self.stride = int(manifest.option("stride", 4))
        self.threshold = float(
            threshold if threshold is not None else manifest.option("threshold", 0.35)
        )
        self.max_dice = int(manifest.option("max_dice", 64))
        # Weak peaks (between weak_threshold and threshold) are dice only when the pip
        # classifier reads a value on them with at least weak_min_confidence: the finder
        # alone cannot tell a small die on a busy board from the board's print, the
        # classifier, which sees the crop up close, can (companion.vision.pipeline
        # confirm_weak). Absent from the manifest: no weak peaks.
        weak = manifest.option("weak_threshold", None)
        self.weak_threshold = float(weak) if weak is not None else None
        self.weak_min_confidence = float(manifest.option("weak_min_confidence", 1.0))
        # Two peaks closer than this x the larger die's side are one die seen twice (a
        # big die or a die with a visible side face); touching dice are >= 1 side apart.
        self.suppress_distance = float(manifest.option("suppress_distance", 0.6))

    @classmethod
    def load(
        cls,
        models_dir: Path | None = None,
        *,
        intra_op_num_threads: int = 1,
        threshold: float | None = None,
    ) -> DiceFinder:
        """Load and check models_dir/dice_finder.onnx (default: the repo's models/)."""
        directory = models_dir if models_dir is not None else default_models_dir()
        model = OnnxModel.load(directory / FINDER_FILE, intra_op_num_threads=intra_op_num_threads)
        return cls(model, threshold)

    def prepare(self, image_bgr: np.ndarray) -> tuple[np.ndarray, float]:
        """The network input (1 x 3 x H x W) and the factor input px = original px * f."""
        h, w = image_bgr.shape[:2]
        factor = self.long_side / max(h, w)
        new_w = max(1, int(round(w * factor)))
        new_h = max(1, int(round(h * factor)))
        resized = image_bgr
        # Halving with area averaging is a fast special case in OpenCV and keeps small
        # dice from aliasing; the last step (less than 2x) is bilinear. A full INTER_AREA
        # resize of a 1280x720 frame costs ~4 ms, this ~1 ms.
        while resized.shape[1] >= 2 * new_w and resized.shape[0] >= 2 * new_h:
            half = (resized.shape[1] // 2, resized.shape[0] // 2)
            resized = cv2.resize(resized, half, interpolation=cv2.INTER_AREA)
        if resized.shape[:2] != (new_h, new_w):
            resized = cv2.resize(resized, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
        m = self.pad_multiple
        padded_h, padded_w = -(-new_h // m) * m, -(-new_w // m) * m
        canvas = np.full((padded_h, padded_w, 3), 127, np.uint8)
        canvas[:new_h, :new_w] = resized
        if self.model.manifest.input.colour_order == "RGB":
            canvas = canvas[:, :, ::-1]
        return self.model.normalise(canvas[None]), factor

    def find(self, image_bgr: np.ndarray, include_weak: bool = False) -> list[DieBox]:
        """Every die in the frame as a DieBox in pixels of the original image; [] for an
        image that is not a picture or too small to hold a die. ``include_weak`` adds the
        weak peaks (score from ``weak_threshold`` up) for the classifier to confirm."""
        image = as_bgr_uint8(image_bgr)
        if image is None or min(image.shape[:2]) < MIN_IMAGE_SIDE:
            return []
        batch, factor = self.prepare(image)
        output = self.model.run(batch)[0][0]
        floor = self.threshold
        if include_weak and self.weak_threshold is not None:
            floor = min(floor, self.weak_threshold)
        return self.decode(output, factor, image.shape[1], image.shape[0], floor)

    def decode(
        self, output: np.ndarray, factor: float, width: int, height: int, floor: float | None = None
    ) -> list[DieBox]:
        """Peaks of the heat map at or above ``floor`` (default: the threshold) ->
        DieBoxes (original pixels), strongest first; a peak within ``suppress_distance`` x
        side of a stronger one is dropped."""
        heat = output[0]
        peaks = (heat >= (self.threshold if floor is None else floor)) & local_maxima(heat)
        ys, xs = np.nonzero(peaks)
        order = np.argsort(-heat[ys, xs])[: self.max_dice]
        boxes = []
        for y, x in zip(ys[order], xs[order], strict=True):
            cx = (x + float(output[2, y, x])) * self.stride / factor
            cy = (y + float(output[3, y, x])) * self.stride / factor
            if not (0 <= cx < width and 0 <= cy < height):
                continue  # a peak in the padding
            side = math.exp(float(np.clip(output[1, y, x], 0.0, 7.0))) / factor
            angle = math.degrees(math.atan2(float(output[5, y, x]), float(output[4, y, x]))) / 4
            if any(
                math.hypot(cx - kept.cx, cy - kept.cy) < self.suppress_distance * max(side, kept.w)
                for kept in boxes
            ):
                continue  # a weaker second peak on a die already found
            boxes.append(DieBox(cx, cy, side, side, angle % 90.0, float(heat[y, x])))
        return boxes
