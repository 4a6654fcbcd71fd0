"""Colour of each die, and assignment of the found dice to a known dice set.

Stage: locate -> classify -> **colour** -> settle. For each die the body colour is measured
from the middle of its box: the pixels there are split into two clusters in CIE Lab (body
and pips; the body is the larger one, pips cover at most about a fifth of a face), and the
body colour is the per-channel median of its cluster after dropping glare, so a few odd
pixels do not move it. A basic colour name (white, black, grey, red, orange, yellow, green,
blue, teal, purple, pink, brown) comes from the nearest colour prototypes, with a
confidence from how much nearer the best name is than the next one.

With a dice set (built-in "qwixx" and "sixto", or a calibration file, see
`parse_dice_set`), the found dice are assigned to the set's dice all at once: an optimal
assignment (Hungarian method) over colour distances, each set die used once (so Qwixx's two
white dice take the two whitest dice), dice beyond the set flagged "extra", set dice not
found reported as missing.

Lab values everywhere are CIE L*a*b* (L 0-100, a/b about -128..127), from OpenCV's float
conversion of sRGB.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.types import BASIC_COLOURS, STANDARD_DICE_SETS, DieBox

logger = logging.getLogger(__name__)

CALIBRATION_FORMAT = "companion-dice-set/1"
DEFAULT_CALIBRATION_DIR = Path(__file__).resolve().parents[2] / "calibration"

# Dice assigned to a set die further than this (Lab distance) are flagged: the die found
# does not look like the set die it was given to.
SET_MISMATCH_DISTANCE = 45.0


# ----------------------------------------------------------------------------------------
# Measuring a die's body colour


@dataclass(frozen=True, slots=True)
class BodyColour:
    """The measured colour of one die: body and pip Lab medians, and the share of the
    sampled pixels that belong to the body cluster."""

    lab: tuple[float, float, float]
    pip_lab: tuple[float, float, float] | None
    body_share: float


def to_lab(bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 pixels (any shape ending in 3) to CIE Lab float32."""
    pixels = np.asarray(bgr, dtype=np.uint8).reshape(-1, 1, 3)
    lab = cv2.cvtColor(pixels.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    return lab.reshape(*np.asarray(bgr).shape[:-1], 3)


def sample_die(image: np.ndarray, box: DieBox, samples: int = 24) -> np.ndarray:
    """BGR pixels of the middle of the die: a disc of radius 0.34 x the box's shorter side
    (inside the top face for any rotation of a die in its box), resampled to about
    `samples` x `samples` pixels. Returns an (N, 3) uint8 array, empty if the box lies
    outside the image."""
    radius = 0.34 * min(box.w, box.h)
    if radius < 1 or image.size == 0:
        return np.zeros((0, 3), np.uint8)
    scale = samples / (2 * radius)
    matrix = np.float32(
        [[scale, 0, samples / 2 - box.cx * scale], [0, scale, samples / 2 - box.cy * scale]]
    )
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    patch = cv2.warpAffine(image, matrix, (samples, samples), flags=interp,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    inside = np.zeros((samples, samples), np.uint8)
    cv2.circle(inside, (samples // 2, samples // 2), samples // 2, 1, -1)
    # pixels warped from outside the image are not the die
    valid = cv2.warpAffine(np.ones(image.shape[:2], np.uint8), matrix, (samples, samples),
                           flags=cv2.INTER_NEAREST)
    keep = (inside & valid).astype(bool)
    return patch[keep]


def measure_body(pixels_bgr: np.ndarray) -> BodyColour | None:
    """Split die pixels into body and pips and return the body's robust Lab colour; None
    when there are too few pixels to say."""
    if len(pixels_bgr) < 8:
        return None
    lab = to_lab(pixels_bgr).reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    # kmeans' random start comes from OpenCV's global RNG: seed it so the same pixels
    # always give the same colour
    cv2.setRNGSeed(12345)
    _, labels, centres = cv2.kmeans(lab, 2, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    counts = np.bincount(labels, minlength=2)
    body_k = int(np.argmax(counts))
    separation = float(np.linalg.norm(centres[0] - centres[1]))
    if separation < 12.0:
        # no pips in view (or pips the body's colour): one cluster
        body, pips = lab, None
    else:
        body, pips = lab[labels == body_k], lab[labels != body_k]
    # glare: drop the brightest, least saturated tail of the body pixels
    median = np.median(body, axis=0)
    distance = np.linalg.norm(body - median, axis=1)
    core = body[distance <= max(np.percentile(distance, 80), 1e-3)]
    body_lab = np.median(core if len(core) >= 4 else body, axis=0)
    pip_lab = None if pips is None or len(pips) == 0 else np.median(pips, axis=0)
    share = float(len(body)) / len(lab)
    return BodyColour(
        lab=tuple(float(v) for v in body_lab),  # type: ignore[arg-type]
        pip_lab=None if pip_lab is None else tuple(float(v) for v in pip_lab),  # type: ignore[arg-type]
        body_share=share,
    )


def measure_die(image: np.ndarray, box: DieBox) -> BodyColour | None:
    """The body colour of the die in `box` of a BGR image (None if it cannot be
    measured)."""
    return measure_body(sample_die(image, box))
