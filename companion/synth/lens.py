"""A wide-angle webcam's lens: barrel distortion (straight lines bow outwards, things near
the edges shrink and turn) and vignetting (the corners darker).

The distortion is radial about the lens centre, in radii normalised so that the picture's
corners are at 1: a picture point at radius r shows the scene at radius
r (1 + k r^2) / (1 + k), so the corners stay where they are, the middle is magnified
by 1 + k and everything towards the edges is squeezed. Labels go the other way
(`distort_points`: scene -> picture, by Newton's method on the same cubic)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .description import Lens


def _radius_unit(lens: Lens, width: int, height: int) -> float:
    cx, cy = lens.centre
    return max(
        math.hypot(x - cx, y - cy) for x in (0.0, float(width)) for y in (0.0, float(height))
    )


def distort_image(img: np.ndarray, lens: Lens) -> np.ndarray:
    """The scene as the lens shows it: barrel distortion, then vignetting."""
    h, w = img.shape[:2]
    cx, cy = lens.centre
    unit = _radius_unit(lens, w, h)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = (xx - cx) / unit, (yy - cy) / unit
    r2 = dx * dx + dy * dy
    k = lens.barrel
    scale = (1 + k * r2) / (1 + k)
    map_x = cx + dx * scale * unit
    map_y = cy + dy * scale * unit
    out = cv2.remap(img, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)
    if lens.vignette > 0:
        gain = 1 - lens.vignette * np.power(r2, lens.falloff / 2)
        out = out * gain[..., None]
    return out


def distort_points(points: np.ndarray, lens: Lens, width: int, height: int) -> np.ndarray:
    """Where scene points (N x 2, pixels) appear in the lens's picture."""
    cx, cy = lens.centre
    unit = _radius_unit(lens, width, height)
    d = (np.asarray(points, np.float64) - (cx, cy)) / unit
    r_scene = np.hypot(d[:, 0], d[:, 1])
    k = lens.barrel
    target = r_scene * (1 + k)
    # k r^3 + r - target = 0 is increasing and convex for r >= 0: from above, Newton's
    # steps fall monotonically onto the root
    r = target.copy()
    for _ in range(12):
        r -= (k * r**3 + r - target) / (3 * k * r**2 + 1)
    ratio = np.divide(r, r_scene, out=np.ones_like(r), where=r_scene > 1e-9)
    out: np.ndarray = (d * ratio[:, None]) * unit + (cx, cy)
    return out.astype(np.float32)
