"""Things lying on the table besides the dice: pencils, score sheets, coins, stray dots.

Each drawer takes the item's own generator, the picture (float BGR), the shadow mask the
item casts into, its centre and its scale (about a die's side)."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np

from companion.vision.types import whole_pixels

from .texture import colour_tuple, put_text

ClutterDrawer = Callable[[np.random.Generator, np.ndarray, np.ndarray, np.ndarray, float], None]


def _pencil(
    rng: np.random.Generator, img: np.ndarray, shadow: np.ndarray, c: np.ndarray, scale: float
) -> None:
    length, thick = scale * rng.uniform(3, 7), scale * rng.uniform(0.15, 0.25)
    a = rng.uniform(0, math.pi)
    d = np.array([math.cos(a), math.sin(a)]) * length / 2
    n = np.array([-math.sin(a), math.cos(a)]) * thick / 2
    body = np.array([c - d + n, c + d * 0.8 + n, c + d * 0.8 - n, c - d - n])
    tip = np.array([c + d * 0.8 + n, c + d, c + d * 0.8 - n])
    paints = [[30, 200, 240], [40, 40, 200], [160, 80, 20], [40, 140, 40], [60, 60, 60]]
    colour = colour_tuple(np.array(paints[int(rng.integers(0, len(paints)))], np.float32))
    cv2.fillPoly(shadow, [(body + thick * 0.4).astype(np.int32)], 1.0, cv2.LINE_AA)
    cv2.fillPoly(img, [body.astype(np.int32)], colour, cv2.LINE_AA)
    cv2.fillPoly(img, [tip.astype(np.int32)], (150, 190, 225), cv2.LINE_AA)
    lead = max(1, int(thick * 0.2))
    cv2.line(img, whole_pixels(c + d * 0.95), whole_pixels(c + d), (40, 40, 40), lead, cv2.LINE_AA)


def _paper(
    rng: np.random.Generator, img: np.ndarray, shadow: np.ndarray, c: np.ndarray, scale: float
) -> None:
    """A score sheet: rows of numbered boxes."""
    pw, ph = scale * rng.uniform(3, 7), scale * rng.uniform(2, 5)
    box = cv2.boxPoints(((float(c[0]), float(c[1])), (pw, ph), rng.uniform(0, 180)))
    box = box.astype(np.float32)
    cv2.fillPoly(shadow, [(box + scale * 0.08).astype(np.int32)], 1.0, cv2.LINE_AA)
    cv2.fillPoly(img, [box.astype(np.int32)], colour_tuple(rng.uniform(225, 250, 3)), cv2.LINE_AA)
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    m = cv2.getPerspectiveTransform(unit, box)
    rows, cols = int(rng.integers(2, 6)), int(rng.integers(5, 12))
    for row in range(rows):
        row_colour = colour_tuple(rng.uniform(40, 230, 3))
        for col in range(cols):
            u0, v0 = 0.05 + 0.9 * col / cols, 0.08 + 0.84 * row / rows
            u1, v1 = u0 + 0.8 / cols, v0 + 0.7 / rows
            cell = np.array([[[u0, v0]], [[u1, v0]], [[u1, v1]], [[u0, v1]]], np.float32)
            pts = cv2.perspectiveTransform(cell, m).reshape(-1, 2)
            cv2.polylines(img, [pts.astype(np.int32)], True, row_colour, 1, cv2.LINE_AA)
            if rng.random() < 0.5 and scale > 30:
                org = whole_pixels(pts.mean(axis=0) - [scale * 0.05, -scale * 0.05])
                put_text(img, str(int(rng.integers(2, 13))), org, scale / 120, row_colour, 1)


def _coin(
    rng: np.random.Generator, img: np.ndarray, shadow: np.ndarray, c: np.ndarray, scale: float
) -> None:
    r = scale * rng.uniform(0.35, 0.6)
    metals = [[150, 150, 150], [60, 140, 190], [70, 100, 160]]
    metal = np.array(metals[int(rng.integers(0, len(metals)))], np.float32)
    cx, cy = int(c[0]), int(c[1])
    cv2.circle(shadow, (int(c[0] + r * 0.15), int(c[1] + r * 0.15)), int(r), 1.0, -1, cv2.LINE_AA)
    cv2.circle(img, (cx, cy), int(r), colour_tuple(metal * 0.8), -1, cv2.LINE_AA)
    cv2.circle(img, (cx, cy), int(r * 0.85), colour_tuple(metal), -1, cv2.LINE_AA)
    shine = colour_tuple(np.clip(metal * 1.4, 0, 255))
    spot = (int(c[0] - r * 0.3), int(c[1] - r * 0.3))
    cv2.circle(img, spot, max(1, int(r * 0.25)), shine, -1, cv2.LINE_AA)


def _dots(
    rng: np.random.Generator, img: np.ndarray, shadow: np.ndarray, c: np.ndarray, scale: float
) -> None:
    """Stray dark dots (a pattern, crumbs): hard negatives that look like pips."""
    for _ in range(int(rng.integers(2, 9))):
        p = (int(c[0] + rng.normal(0, scale)), int(c[1] + rng.normal(0, scale)))
        radius = max(1, int(scale * rng.uniform(0.05, 0.12)))
        cv2.circle(img, p, radius, (30, 30, 30), -1, cv2.LINE_AA)


CLUTTER: dict[str, ClutterDrawer] = {
    "pencil": _pencil,
    "paper": _paper,
    "coin": _coin,
    "dots": _dots,
}


def draw_clutter(
    kind: str, seed: int, img: np.ndarray, shadow: np.ndarray, cx: float, cy: float, scale: float
) -> None:
    """Draw one item of clutter onto `img` (and the shadow it casts onto `shadow`)."""
    CLUTTER[kind](np.random.default_rng(seed), img, shadow, np.array([cx, cy]), scale)
