"""How a die's crop looks apart from its pips: the colour of the table around it and of
the die itself, which says whether a crop comes from a setup's table (issue 24).

A setup's value head reads only the dice like its own (companion.vision.adapt_fit, "Only
dice like the setup's"). The classifier's embedding cannot say which those are: it is
trained to read the pips on any table, so any die is about as like a setup's dice as they
are like each other (rune55's white-board camera, 25 photos: 199 of the 200 no-forgetting
dice of other tables passed its floor), and a head taught there broke three of them (an
epanemu 2, drawn twice into that sample, and a matteop65 6, read as 4; the sample now
draws each die once). Their colour can say: a greyscale camera's dice
have no chroma at all, a purple cloth or light wood has its own. So each crop also gets a
**chroma signature**: the mean and spread of the Lab a and b channels over the crop's
outer band (the table) and over its middle (the die), in CHROMA_UNIT levels; lightness is
left out, as it moves with the light and the die's colour. A crop looks like the setup's
when its signature lies as near one of theirs as LOOK_SHARE of its dice lie to the
nearest die of another of its photos (`look_floor`).

Chosen before any measure-only folder was read, on validation photos of rune55's board and
tower cameras, matteop65, byler and epanemu (25 photos each): the board's and tower's
floor lets through exactly the 80 greyscale dice of the sample (rune55, tomitomi) and none
of the three it broke; matteop65's only its own table's dice; byler's and epanemu's, many
tables each, nearly all (a gate that cannot separate lets the check decide, as before).
Lightness beside the chroma let 47-67 of them through on the board, one or two of the
three among them. The share 0.95 rather than every die: one odd crop (a die beside a
coloured cup) must not open the gate to every table.

Pure numpy and OpenCV, no I/O."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import cv2
import numpy as np

from companion.vision.classifier import crop_die
from companion.vision.types import DieBox

LOOK_SIZE = 64  # companion.vision.adapt_store.CROP_SIZE: a crop measured as it is stored
LOOK_WIDTH = 8  # (a, b) x (mean, spread) x (outer band, middle)
CHROMA_UNIT = 8.0  # Lab levels of OpenCV's 8-bit scale per unit of the signature
BAND = 1 / 6  # the outer band's width, as a share of the crop's side: the table around
LOOK_SHARE = 0.95  # the share of the setup's dice within the floor (module docstring)
LEAST_FLOOR = 1 / CHROMA_UNIT  # one Lab level: a greyscale setup's floor is 0, rounding aside


def chroma_signature(crop_bgr: np.ndarray) -> np.ndarray:
    """LOOK_WIDTH floats of one BGR crop (module docstring); the same for its eight
    symmetric views (the band and the middle are symmetric), zero chroma for grey."""
    height, width = crop_bgr.shape[:2]
    # halved (2 x 2 means, the same under the square's symmetries): OpenCV's Lab costs
    # ~6 ns a pixel here, and a frame has many dice
    half = cv2.resize(
        crop_bgr, (max(1, width // 2), max(1, height // 2)), interpolation=cv2.INTER_AREA
    )
    lab = cv2.cvtColor(half, cv2.COLOR_BGR2LAB)
    band, middle = _masks(lab.shape[0], lab.shape[1])
    outer_mean, outer_spread = cv2.meanStdDev(lab, mask=band)
    middle_mean, middle_spread = cv2.meanStdDev(lab, mask=middle)
    parts = (outer_mean[1:] - 128, middle_mean[1:] - 128, outer_spread[1:], middle_spread[1:])
    return np.asarray(np.concatenate(parts).ravel() / CHROMA_UNIT, np.float32)


@functools.cache
def _masks(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The outer band and the middle of a crop of that size as 8-bit masks (OpenCV's
    statistics run in C: a frame has many dice)."""
    dy, dx = max(1, round(height * BAND)), max(1, round(width * BAND))
    band = np.full((height, width), 255, np.uint8)
    band[dy : height - dy, dx : width - dx] = 0
    middle = 255 - band
    band.flags.writeable = middle.flags.writeable = False
    return band, middle


def crop_looks(image_bgr: np.ndarray, boxes: Sequence[DieBox], margin: float) -> np.ndarray:
    """N x LOOK_WIDTH signatures of the dice in a picture, each measured on the crop the
    setup store would keep of it (``margin`` x its side, LOOK_SIZE px)."""
    return looks_of([crop_die(image_bgr, box, margin, LOOK_SIZE) for box in boxes])


def looks_of(crops: Sequence[np.ndarray]) -> np.ndarray:
    """N x LOOK_WIDTH signatures of stored crops (the setup store's, LOOK_SIZE px BGR)."""
    if not len(crops):
        return np.zeros((0, LOOK_WIDTH), np.float32)
    return np.stack([chroma_signature(crop) for crop in crops])


def nearest_distance(looks: np.ndarray, prototypes: np.ndarray) -> np.ndarray:
    """Per row of ``looks``: the distance to the nearest prototype (NaN for a row whose look
    is not known: it is like none)."""
    if not len(looks):
        return np.zeros(0)
    if not len(prototypes):
        return np.full(len(looks), np.inf)
    return np.asarray(_distances(looks, prototypes).min(axis=1))


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """len(a) x len(b) Euclidean distances (without an N x M x width array)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    squared = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None] - 2 * a @ b.T
    return np.sqrt(np.maximum(squared, 0.0))


def look_floor(looks: np.ndarray, photos: Sequence[object]) -> float | None:
    """The distance within which a crop looks like the setup's dice: the LOOK_SHARE
    quantile of each known look's distance to the nearest die of another of its photos;
    None under two photos with a known look (no gate by look)."""
    known = np.flatnonzero(~np.isnan(np.asarray(looks, np.float64)).any(axis=1))
    codes = np.unique(np.array([str(photos[int(k)]) for k in known]), return_inverse=True)[1]
    if len(set(codes.tolist())) < 2:
        return None
    rows = np.asarray(looks, np.float64)[known]
    distance = _distances(rows, rows)
    distance[codes[:, None] == codes[None, :]] = np.inf  # another photo's dice only
    return max(float(np.quantile(distance.min(axis=1), LOOK_SHARE)), LEAST_FLOOR)
