"""Small drawing helpers shared by surfaces, clutter and dice."""

from __future__ import annotations

import math

import cv2
import numpy as np


def smooth_noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Smooth random field in about -1..1, features of roughly `cell` pixels."""
    gh, gw = max(2, h // cell + 2), max(2, w // cell + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def rounded_square(radius: float, n_per_corner: int = 6) -> np.ndarray:
    """Outline of the unit square (-0.5..0.5) with rounded corners, counter-clockwise
    in image coordinates, as an (N, 2) array."""
    r = float(np.clip(radius, 0.0, 0.5))
    points = []
    for cx, cy, start in (
        (0.5 - r, 0.5 - r, 0),
        (-0.5 + r, 0.5 - r, 90),
        (-0.5 + r, -0.5 + r, 180),
        (0.5 - r, -0.5 + r, 270),
    ):
        for k in range(n_per_corner + 1):
            a = math.radians(start + 90 * k / n_per_corner)
            points.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.array(points, dtype=np.float32)


def put_text(
    img: np.ndarray,
    text: str,
    org: tuple[int, int],
    scale: float,
    colour: tuple[float, ...],
    thickness: int,
) -> None:
    """cv2.putText onto a float image (OpenCV draws text on 8-bit images only)."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    (tw, th), base = cv2.getTextSize(text, font, scale, thickness)
    h, w = img.shape[:2]
    x0, y0 = max(org[0] - 2, 0), max(org[1] - th - 2, 0)
    x1, y1 = min(org[0] + tw + 2, w), min(org[1] + base + 2, h)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.putText(mask, text, (org[0] - x0, org[1] - y0), font, scale, 255, thickness, cv2.LINE_AA)
    alpha = (mask.astype(np.float32) / 255)[..., None]
    roi = img[y0:y1, x0:x1]
    roi[:] = roi * (1 - alpha) + np.array(colour, np.float32) * alpha


def fill(img: np.ndarray, polygon: np.ndarray, colour: tuple[float, ...] | float) -> None:
    """Fill a float polygon (N x 2) anti-aliased, with sub-pixel precision (2 bits)."""
    cv2.fillPoly(img, [(polygon * 4).astype(np.int32)], colour, cv2.LINE_AA, 2)


def colour_tuple(colour: np.ndarray | tuple[float, ...]) -> tuple[float, ...]:
    return tuple(float(c) for c in colour)
