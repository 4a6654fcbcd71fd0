"""Locate stage: find every die in a frame with the dice-finder ONNX model.

The model (models/dice_finder.onnx, see models/README.md) is a small CenterNet-style
fully-convolutional net. The frame is shrunk so its long side is the manifest's size
(512; more for a frame so big that its smallest dice would vanish, and a second pass at
half that for a frame so small that its biggest dice would not fit the net's training
range), padded right/bottom to a multiple of 32, and the net returns at stride 4: a centre
heat map, log die side, sub-cell centre offset and the die's rotation as (cos 4θ, sin 4θ).
Peaks of the heat map (3x3 local maxima above the lowest band of the PeakRule) are the
dice candidates; the classifier's reading decides which of them are dice."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.model import OnnxModel, default_models_dir
from companion.vision.types import DieBox

logger = logging.getLogger(__name__)

FINDER_FILE = "dice_finder.onnx"
# Below this many pixels on a side no die of the supported sizes (>= 20 px) can be seen.
MIN_IMAGE_SIDE = 16
# The dice the pipeline supports, in pixels of the original frame (the spec: 20-150).
MIN_DIE_SIDE = 20
MAX_DIE_SIDE = 150


@dataclass(frozen=True)
class PeakRule:
    """Which finder peaks are dice, once the pip classifier has read each one.

    The finder alone cannot tell a small die on a busy printed board from the board's
    print, nor a die's shadow from a dark die; the classifier, seeing the crop up close,
    can. So the peak's score and the classifier's reading decide together, in three bands:

    - from ``sure_threshold`` up: a die whatever the classifier reads (read as unreadable,
      it is a cocked or half-hidden die: flagged, never dropped);
    - from ``threshold`` up: a die when the classifier reads a face with at least
      ``min_confidence``;
    - from ``weak_threshold`` up (None: no weak band): a die when read with at least
      ``weak_min_confidence``.

    Chosen on training images by models/recipe/evaluate.best_peak_rule and kept in the
    finder's manifest (options.threshold, sure_threshold, min_confidence, weak_threshold,
    weak_min_confidence)."""

    threshold: float
    sure_threshold: float
    min_confidence: float = 0.0
    weak_threshold: float | None = None
    weak_min_confidence: float = 1.0

    def __post_init__(self) -> None:
        if self.sure_threshold < self.threshold:
            raise ValueError(
                f"sure_threshold {self.sure_threshold} is under threshold {self.threshold}"
            )

    @property
    def floor(self) -> float:
        """The lowest peak score any band accepts."""
        if self.weak_threshold is None:
            return self.threshold
        return min(self.threshold, self.weak_threshold)

    def keeps(self, score: float, value: int | None, confidence: float) -> bool:
        """Whether a peak of this score, read as ``value`` (None: unreadable) with this
        confidence, is a die."""
        if score >= self.sure_threshold:
            return True
        read = value is not None
        if score >= self.threshold:
            return read and confidence >= self.min_confidence
        if self.weak_threshold is not None and score >= self.weak_threshold:
            return read and confidence >= self.weak_min_confidence
        return False


def as_bgr_uint8(image: object) -> np.ndarray | None:
    """A BGR uint8 H x W x 3 view of ``image`` (grey and BGRA accepted), or None when it
    is not a picture (wrong type, rank or channel count)."""
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        return None
    # a name of its own: `image` keeps its declared type `object` after a reassignment
    picture: np.ndarray = image
    if picture.dtype != np.uint8:
        if not np.issubdtype(picture.dtype, np.number) or np.issubdtype(
            picture.dtype, np.complexfloating
        ):
            return None
        picture = np.clip(np.nan_to_num(picture), 0, 255).astype(np.uint8)
    if picture.ndim == 2:
        return cv2.cvtColor(picture, cv2.COLOR_GRAY2BGR)
    channels = picture.shape[2]
    if channels == 3:
        return picture
    if channels == 1:
        return cv2.cvtColor(picture[:, :, 0], cv2.COLOR_GRAY2BGR)
    if channels == 4:
        return cv2.cvtColor(picture, cv2.COLOR_BGRA2BGR)
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
        # Which peaks are dice once the classifier has read them: see PeakRule.
        # Absent from the manifest: one threshold, no weak band.
        weak = manifest.option("weak_threshold", None)
        self.weak_threshold = float(weak) if weak is not None else None
        self.weak_min_confidence = float(manifest.option("weak_min_confidence", 1.0))
        self.sure_threshold = float(manifest.option("sure_threshold", self.threshold))
        self.min_confidence = float(manifest.option("min_confidence", 0.0))
        # Two peaks closer than this x the larger die's side are one die seen twice (a
        # big die or a die with a visible side face); touching dice are >= 1 side apart.
        self.suppress_distance = float(manifest.option("suppress_distance", 0.6))
        # The biggest die side (network input px) in the training windows; bigger dice
        # are looked for in a zoomed-out second pass (zoomed_out_long_side), which gives
        # the dice of at least zoom_min_side x that size.
        self.max_input_side = float(manifest.option("max_input_side", 110))
        # The smallest die side (input px) the first pass should see: a frame so big that
        # the manifest's long side would shrink a 20 px die under it is read at a larger
        # input (first_pass_long_side).
        self.min_input_side = float(manifest.option("min_input_side", 6.5))
        self.zoom_min_side = float(manifest.option("zoom_min_side", 0.7))

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

    @property
    def peak_rule(self) -> PeakRule:
        """The rule that turns this finder's peaks, once read, into dice."""
        return PeakRule(
            self.threshold,
            max(self.sure_threshold, self.threshold),
            self.min_confidence,
            self.weak_threshold,
            self.weak_min_confidence,
        )

    def prepare(
        self, image_bgr: np.ndarray, long_side: int | None = None
    ) -> tuple[np.ndarray, float]:
        """The network input (1 x 3 x H x W) and the factor input px = original px * f;
        the frame is shrunk so its long side is ``long_side`` (default: the manifest's)."""
        h, w = image_bgr.shape[:2]
        factor = (long_side or self.long_side) / max(h, w)
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

    def first_pass_long_side(self, image_long_side: int) -> int:
        """The long side of the first pass: the manifest's, or more when that would shrink
        the smallest supported die (MIN_DIE_SIDE) under ``min_input_side`` px. A 1920x1080
        frame at 512 shows a 20 px die at 5 px, smaller than anything in training; at 640 it
        is 6.7 px. Never more than the frame itself."""
        needed = image_long_side * self.min_input_side / MIN_DIE_SIDE
        if needed <= self.long_side:
            return self.long_side
        m = self.pad_multiple
        return min(int(math.ceil(needed / m)) * m, image_long_side)

    def zoomed_out_long_side(self, factor: float) -> int | None:
        """The long side of a second, zoomed-out pass, or None when the first pass already
        shows the biggest supported die (MAX_DIE_SIDE) within the sizes the net was trained
        on. A small frame (a 640x480 photo, a dice tray filling the picture) would show a
        big die larger than anything in training, where the heat map and the side estimate
        fail; half the scale brings it back into range (for frames of 350 px and more on
        the long side: below that even half the scale shows a 150 px die too big)."""
        if MAX_DIE_SIDE * factor <= self.max_input_side:
            return None
        return max(self.pad_multiple, int(round(self.long_side / 2)))

    def find(self, image_bgr: np.ndarray, include_weak: bool = False) -> list[DieBox]:
        """Every peak from ``threshold`` up as a DieBox in pixels of the original image; []
        for an image that is not a picture or too small to hold a die. ``include_weak``
        adds the weak peaks (score from ``weak_threshold`` up). Peaks under
        ``sure_threshold`` are dice only once the classifier confirms them (PeakRule)."""
        floor = self.peak_rule.floor if include_weak else self.threshold
        return self.suppress(self.candidates(image_bgr, floor))

    def candidates(self, image_bgr: np.ndarray, floor: float) -> list[DieBox]:
        """Every peak from ``floor`` up of both passes, before one die's second peaks are
        suppressed (``find`` does that); [] for an image that is not a picture or too small
        to hold a die. A floor under the peak rule's shows how close a missed die came
        (bench/vision_misses.py)."""
        image = as_bgr_uint8(image_bgr)
        if image is None or min(image.shape[:2]) < MIN_IMAGE_SIDE:
            return []
        height, width = image.shape[:2]
        batch, factor = self.prepare(image, self.first_pass_long_side(max(height, width)))
        candidates = self.peaks(self.maps(batch), factor, width, height, floor)
        zoomed_long_side = self.zoomed_out_long_side(factor)
        if zoomed_long_side is not None:
            batch, zoomed = self.prepare(image, zoomed_long_side)
            # Only the big dice come from the zoomed-out pass: small ones are a few pixels
            # there, and the first pass sees them better.
            big_enough = self.zoom_min_side * self.max_input_side / factor
            candidates += [
                box
                for box in self.peaks(self.maps(batch), zoomed, width, height, floor)
                if box.w >= big_enough
            ]
        return candidates

    def maps(self, batch: np.ndarray) -> np.ndarray:
        """The net's six maps (6 x H/4 x W/4) of one prepared input (a setup's adapted
        finder changes the heat here: companion.vision.adapt_finder)."""
        return np.asarray(self.model.run(batch)[0][0])

    def peaks(
        self, output: np.ndarray, factor: float, width: int, height: int, floor: float | None
    ) -> list[DieBox]:
        """Every local maximum of the heat map at or above ``floor`` as a DieBox in
        original pixels (peaks in the padding left out), in no particular order."""
        heat = output[0]
        peaks = (heat >= (self.threshold if floor is None else floor)) & local_maxima(heat)
        ys, xs = np.nonzero(peaks)
        boxes = []
        for y, x in zip(ys, xs, strict=True):
            cx = (x + float(output[2, y, x])) * self.stride / factor
            cy = (y + float(output[3, y, x])) * self.stride / factor
            if not (0 <= cx < width and 0 <= cy < height):
                continue  # a peak in the padding
            side = math.exp(float(np.clip(output[1, y, x], 0.0, 7.0))) / factor
            angle = math.degrees(math.atan2(float(output[5, y, x]), float(output[4, y, x]))) / 4
            boxes.append(DieBox(cx, cy, side, side, angle % 90.0, float(heat[y, x])))
        return boxes

    def suppress(self, candidates: list[DieBox]) -> list[DieBox]:
        """Strongest first, at most ``max_dice``; a peak within ``suppress_distance`` x the
        larger side of a stronger one is the same die seen twice and is dropped."""
        boxes: list[DieBox] = []
        for box in sorted(candidates, key=lambda b: -b.score):
            if len(boxes) == self.max_dice:
                break
            if any(
                math.hypot(box.cx - kept.cx, box.cy - kept.cy)
                < self.suppress_distance * max(box.w, kept.w)
                for kept in boxes
            ):
                continue  # a weaker second peak on a die already found
            boxes.append(box)
        return boxes
