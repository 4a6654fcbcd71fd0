"""The renderer's colours and pip layouts: what real plastic dice look like.

Body colours are typical of real plastic dice; each random die jitters around its colour
so the colour namer learns a region, not a point. The default calibration files
(calibration/*-default.json) were measured on these colours under the default light, so
changing one means re-measuring them (bench/vision_colour.py --calibrate)."""

from __future__ import annotations

import cv2
import numpy as np

BGR = tuple[float, float, float]

BODY_BGR: dict[str, tuple[int, int, int]] = {
    # measured dice in the real photos (byler-d6-train) are darker and less saturated
    # than paint-box colours; these sit between the two
    "white": (224, 229, 232),
    "black": (32, 33, 36),
    "grey": (124, 124, 124),
    "red": (41, 43, 167),
    "orange": (33, 114, 224),
    "yellow": (49, 199, 224),
    "green": (58, 128, 27),
    "blue": (128, 65, 19),
    "teal": (102, 111, 30),
    "purple": (89, 34, 78),
    "pink": (171, 122, 225),
    "brown": (38, 67, 103),
}
PIP_BGR: dict[str, tuple[int, int, int]] = {
    **BODY_BGR,
    "white": (240, 242, 244),
    "black": (18, 18, 20),
    "gold": (40, 170, 210),
}
PIP_COLOURS: tuple[str, ...] = tuple(PIP_BGR)

# Pip positions on a 3x3 grid (column, row) in -1..1. Faces 2, 3 and 6 are not symmetric
# under a quarter turn, so each has two orientations; a real die shows either.
_PIP_LAYOUTS: dict[int, tuple[tuple[tuple[int, int], ...], ...]] = {
    1: (((0, 0),),),
    2: (((-1, -1), (1, 1)), ((1, -1), (-1, 1))),
    3: (((-1, -1), (0, 0), (1, 1)), ((1, -1), (0, 0), (-1, 1))),
    4: (((-1, -1), (1, -1), (-1, 1), (1, 1)),),
    5: (((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),),
    6: (
        ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
        ((-1, -1), (0, -1), (1, -1), (-1, 1), (0, 1), (1, 1)),
    ),
}


def pip_layout(value: int, orientation: int = 0) -> tuple[tuple[int, int], ...]:
    """Grid positions (column, row in -1..1) of the pips of face `value` (1-6);
    `orientation` picks one of the two layouts of 2, 3 and 6."""
    layouts = _PIP_LAYOUTS[value]
    return layouts[orientation % len(layouts)]


def default_pips(rng: np.random.Generator, body: str) -> str:
    """A pip colour a real die of this body colour typically has."""
    choices: tuple[str, ...]
    weights: tuple[float, ...]
    if body == "white":
        choices, weights = ("black", "red", "blue"), (0.7, 0.2, 0.1)
    elif body in ("yellow", "pink", "orange"):
        choices, weights = ("black", "red", "blue", "white"), (0.6, 0.2, 0.1, 0.1)
    elif body in ("black", "brown", "grey"):
        choices, weights = ("white", "red", "gold", "yellow"), (0.6, 0.2, 0.1, 0.1)
    else:
        choices, weights = ("white", "black", "yellow", "gold"), (0.7, 0.15, 0.1, 0.05)
    return str(rng.choice(choices, p=np.array(weights) / sum(weights)))


def jitter_colour(rng: np.random.Generator, bgr: tuple[int, int, int], amount: float) -> BGR:
    """A colour near `bgr`: small hue, saturation and brightness changes."""
    pixel = np.array([[bgr]], dtype=np.uint8)
    h, s, v = cv2.cvtColor(pixel, cv2.COLOR_BGR2HSV)[0, 0].astype(np.float32)
    h = (h + rng.normal(0, 3.0 * amount)) % 180
    s = np.clip(s * (1 + rng.normal(0, 0.12 * amount)), 0, 255)
    v = np.clip(v * (1 + rng.normal(0, 0.10 * amount)), 0, 255)
    out = cv2.cvtColor(np.array([[[h, s, v]]], dtype=np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return float(out[0]), float(out[1]), float(out[2])
