"""How much of a die's top face is left to see."""

from __future__ import annotations

import cv2
import numpy as np

SUBPIXEL_BITS = 2


def _fill(mask: np.ndarray, polygon: np.ndarray, origin: np.ndarray) -> None:
    shifted = (polygon - origin) * (1 << SUBPIXEL_BITS)
    cv2.fillPoly(mask, [shifted.astype(np.int32)], 1, cv2.LINE_8, SUBPIXEL_BITS)


def covered_share(
    top: np.ndarray, covers: list[np.ndarray], cover_mask: np.ndarray | None
) -> float:
    """The share (0-1) of the quad `top` that the polygons `covers` and the mask
    `cover_mask` (0-1, the picture's size) together cover."""
    x0, y0 = np.floor(top.min(axis=0)).astype(int)
    x1, y1 = np.ceil(top.max(axis=0)).astype(int) + 1
    if cover_mask is not None:
        h, w = cover_mask.shape
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 1 or y1 - y0 < 1:
        return 0.0
    origin = np.array([x0, y0], np.float32)
    face = np.zeros((y1 - y0, x1 - x0), np.uint8)
    _fill(face, top, origin)
    area = int(face.sum())
    if not area:
        return 0.0
    covered = np.zeros_like(face)
    for polygon in covers:
        px0, py0 = polygon.min(axis=0)
        px1, py1 = polygon.max(axis=0)
        if px1 < x0 or py1 < y0 or px0 > x1 or py0 > y1:
            continue
        _fill(covered, polygon, origin)
    if cover_mask is not None:
        covered |= (cover_mask[y0:y1, x0:x1] > 0.5).astype(np.uint8)
    return float((face & covered).sum()) / area


def inside_share(quad: np.ndarray, width: int, height: int) -> float:
    """The share of the convex quad that lies inside the picture."""
    area = abs(float(cv2.contourArea(quad.astype(np.float32))))
    if area <= 1e-6:
        return 0.0
    frame = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    inside, _ = cv2.intersectConvexConvex(quad.astype(np.float32), frame)
    return float(np.clip(inside / area, 0.0, 1.0))
