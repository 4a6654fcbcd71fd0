"""Synthetic dice scenes for training and testing the vision stages.

Everything is drawn with numpy and OpenCV and is fully determined by the numpy Generator
passed in, so a seed reproduces a scene exactly. A scene is a table surface (white sheet,
grey cardboard, wood grain, felt, dark cloth, a dice tray with a rim, a printed board,
speckled stone),
some clutter (pencils, paper with a printed score grid, coins), and dice: rounded cubes
seen from a camera that may look straight down or obliquely, so the side faces facing the
camera show (with their own pips). Dice may touch, be cocked (resting tilted against
something) or be half hidden; those two are labelled with value None. Lighting gradients,
colour casts, cast shadows, glare, blur, motion blur, sensor noise and JPEG artefacts make
the pictures look like phone and webcam photos (compare shared/data).

Two entry points:
- `render_scene(rng, width, height, **options)` -> (BGR image, [RenderedDie])
- `render_die_crop(rng, value, body, pips, size, **options)` -> BGR crop of one die,
  framed the way the pipeline crops a found die for the pip classifier.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import cv2
import numpy as np

from companion.vision.types import BASIC_COLOURS, STANDARD_DICE_SETS, whole_pixels

# ----------------------------------------------------------------------------------------
# Colours (BGR). Body colours are typical of real plastic dice; each die jitters around
# its colour so the colour namer learns a region, not a point.
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

SURFACES: tuple[str, ...] = (
    "white",
    "cardboard",
    "wood",
    "felt",
    "dark_cloth",
    "tray",
    "board",
    "stone",
)

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


@dataclass(frozen=True)
class RenderedDie:
    """Ground truth of one rendered die. cx, cy, side and angle describe the top face
    (centre, mean edge length in pixels, rotation in degrees); value is None when the die
    cannot be read (cocked, half hidden, tumbling). `box` is the axis-aligned box
    (x0, y0, x1, y1) around everything visible of the die, side faces included, as a
    YOLO label would draw it."""

    cx: float
    cy: float
    side: float
    angle: float
    value: int | None
    body: str
    pips: str
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    reason: str = ""  # why value is None: "cocked", "hidden", "tumbling"


@dataclass(frozen=True)
class DieSpec:
    """A die to place in a scene: value, body and pip colours (None = leave to chance),
    `state`: "" for a die lying flat, "cocked" or "hidden" to force an unreadable one,
    and `clear`: how see-through its plastic is (0 opaque, up to 1; 0 leaves it to
    render_scene's `translucent` chance)."""

    value: int | None = None
    body: str | None = None
    pips: str | None = None
    state: str = ""
    clear: float = 0.0


# ----------------------------------------------------------------------------------------
# Small helpers


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Smooth random field in about -1..1, features of roughly `cell` pixels."""
    gh, gw = max(2, h // cell + 2), max(2, w // cell + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def _jitter_colour(
    rng: np.random.Generator, bgr: tuple[int, int, int], amount: float
) -> np.ndarray:
    """A colour near `bgr`: small hue, saturation and brightness changes."""
    pixel = np.array([[bgr]], dtype=np.uint8)
    h, s, v = cv2.cvtColor(pixel, cv2.COLOR_BGR2HSV)[0, 0].astype(np.float32)
    h = (h + rng.normal(0, 3.0 * amount)) % 180
    s = np.clip(s * (1 + rng.normal(0, 0.12 * amount)), 0, 255)
    v = np.clip(v * (1 + rng.normal(0, 0.10 * amount)), 0, 255)
    out = cv2.cvtColor(np.array([[[h, s, v]]], dtype=np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return np.asarray(out, dtype=np.float32)


def _default_pips(rng: np.random.Generator, body: str) -> str:
    """A pip colour a real die of this body colour typically has."""
    choices: tuple[str, ...]
    weights: tuple[float, ...]
    if body in ("white", "yellow", "pink", "orange"):
        choices, weights = ("black", "red", "blue", "white"), (0.6, 0.2, 0.1, 0.1)
        if body == "white":
            choices, weights = ("black", "red", "blue"), (0.7, 0.2, 0.1)
    elif body in ("black", "brown", "grey"):
        choices, weights = ("white", "red", "gold", "yellow"), (0.6, 0.2, 0.1, 0.1)
    else:
        choices, weights = ("white", "black", "yellow", "gold"), (0.7, 0.15, 0.1, 0.05)
    return str(rng.choice(choices, p=np.array(weights) / sum(weights)))


def _rounded_square(radius: float, n_per_corner: int = 6) -> np.ndarray:
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


def _put_text(
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


# ----------------------------------------------------------------------------------------
# Faces


def _face_texture(
    rng: np.random.Generator,
    value: int,
    body: np.ndarray,
    pips: np.ndarray,
    size: int,
    corner: float,
    glare: bool,
    marbled: bool,
    clear: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One face as a (size x size) float BGR texture plus an alpha mask with rounded
    corners. Pips are slightly sunk: a darker rim on one side. `clear` (0-1) makes the
    body that much see-through (a translucent die); its pips stay solid paint."""
    tex = np.empty((size, size, 3), np.float32)
    tex[:] = body
    # bevelled edge: faces darken a little towards their rounded rim
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / (size - 1) - 0.5
    edge = np.maximum(np.abs(xx), np.abs(yy))
    tex *= (1.0 - 0.25 * np.clip((edge - 0.38) / 0.12, 0, 1) ** 2)[..., None]
    if marbled:
        swirl = _smooth_noise(rng, size, size, max(4, size // 5))
        swirl = np.clip(np.abs(np.sin(swirl * 3.0)), 0, 1) ** 6
        tint = np.array([235, 235, 235], np.float32) if rng.random() < 0.6 else body * 0.4
        tex = tex * (1 - 0.45 * swirl[..., None]) + tint * 0.45 * swirl[..., None]
    tex += rng.normal(0, 2.0, tex.shape).astype(np.float32)

    spacing = rng.uniform(0.24, 0.30)
    radius = rng.uniform(0.075, 0.105) * (0.88 if value == 6 else 1.0)
    scale = 16  # cv2 shift bits give sub-pixel, anti-aliased circles
    rim = np.clip(body * 0.55, 0, 255)
    paint = np.zeros((size, size), np.float32) if clear > 0 else None
    for col, row in pip_layout(value, int(rng.integers(0, 2))):
        px = (0.5 + col * spacing) * size
        py = (0.5 + row * spacing) * size
        r = radius * size
        c = (int(px * scale), int(py * scale))
        cv2.circle(tex, c, int(r * scale), tuple(float(x) for x in rim), -1, cv2.LINE_AA, 4)
        c2 = (int((px + 0.12 * r) * scale), int((py + 0.12 * r) * scale))
        cv2.circle(tex, c2, int(r * 0.9 * scale), tuple(float(x) for x in pips), -1, cv2.LINE_AA, 4)
        if paint is not None:
            cv2.circle(paint, c, int(r * scale), 1.0, -1, cv2.LINE_AA, 4)
    if glare:
        gx, gy = rng.uniform(0.2, 0.8, 2) * size
        axes = (int(rng.uniform(0.1, 0.35) * size), int(rng.uniform(0.05, 0.2) * size))
        spot = np.zeros((size, size), np.float32)
        cv2.ellipse(spot, (int(gx), int(gy)), axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        soft_spot = cv2.GaussianBlur(spot, (0, 0), max(1.0, size * 0.06))
        tex += (rng.uniform(60, 160) * soft_spot)[..., None]

    alpha = np.zeros((size, size), np.float32)
    outline = (_rounded_square(corner) + 0.5) * (size - 1)
    cv2.fillPoly(alpha, [np.round(outline * scale).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    if paint is not None:
        alpha *= 1.0 - clear * (1.0 - paint)
    return np.clip(tex, 0, 255), alpha


def _warp_onto(
    canvas: np.ndarray, texture: np.ndarray, alpha: np.ndarray, quad: np.ndarray, shade: float
) -> None:
    """Paste `texture` (square) onto `canvas` (float BGR) into the quadrilateral `quad`
    (4x2, corners in texture order TL, TR, BR, BL) with alpha blending, darkened by
    `shade`."""
    h, w = canvas.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    s = texture.shape[0] - 1
    src = np.array([[0, 0], [s, 0], [s, s], [0, s]], np.float32)
    dst = (quad - np.array([x0, y0], np.float32)).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(
        texture, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR)[..., None]
    roi = canvas[y0:y1, x0:x1]
    roi[:] = roi * (1 - a) + warped * shade * a


# ----------------------------------------------------------------------------------------
# Surfaces and clutter


def _surface(rng: np.random.Generator, kind: str, h: int, w: int) -> np.ndarray:
    """A table surface of the given kind as float BGR."""
    img = np.empty((h, w, 3), np.float32)
    fine = rng.normal(0, 1, (h, w)).astype(np.float32)
    if kind == "white":
        level = rng.uniform(205, 248)
        img[:] = level + rng.normal(0, 3, 3)
        weave = cv2.GaussianBlur(fine, (0, 0), 0.8)
        img += (weave * rng.uniform(2, 7))[..., None]
    elif kind == "cardboard":
        img[:] = np.array([190, 195, 198], np.float32) * rng.uniform(0.85, 1.05)
        img += (fine * rng.uniform(4, 9))[..., None]
        specks = rng.random((h, w)) < 0.002
        img[specks] *= 0.6
    elif kind == "wood":
        base = np.array(
            rng.choice([[150, 190, 222], [90, 130, 180], [60, 90, 140], [170, 205, 230]]),
            np.float32,
        )
        base *= rng.uniform(0.85, 1.1)
        angle = rng.uniform(0, math.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        u = xx * math.cos(angle) + yy * math.sin(angle)
        # long, gently waving grain lines: the warp varies slowly across the grain
        warp = _smooth_noise(rng, h, w, 160) * rng.uniform(4, 14)
        freq = rng.uniform(0.08, 0.3)
        grain = np.sin((u + warp) * freq) * 0.5 + 0.5
        grain = grain ** rng.uniform(4, 12)  # thin dark late-wood lines
        streak = _smooth_noise(rng, h, w, 25) * 0.04
        img[:] = base
        img *= (1 - 0.18 * grain - streak)[..., None]
        img += (fine * 2.5)[..., None]
    elif kind == "felt":
        base = np.array(
            rng.choice([[40, 110, 28], [50, 120, 40], [110, 60, 20], [40, 40, 120]]), np.float32
        )
        img[:] = base * rng.uniform(0.7, 1.2)
        img += (cv2.GaussianBlur(fine, (0, 0), 0.7) * 9)[..., None]
        img *= (1 + 0.05 * _smooth_noise(rng, h, w, 60))[..., None]
    elif kind == "dark_cloth":
        base = np.array(
            rng.choice([[35, 30, 32], [50, 35, 30], [45, 28, 60], [30, 30, 45]]), np.float32
        )
        img[:] = base * rng.uniform(0.8, 1.3)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        weave = np.sin(xx * 1.3) * np.sin(yy * 1.3)
        img += (weave * 4 + fine * 4)[..., None]
        img *= (1 + 0.12 * _smooth_noise(rng, h, w, 80))[..., None]  # folds
    elif kind == "tray":
        outer = _surface(rng, str(rng.choice(["white", "wood", "dark_cloth"])), h, w)
        inner = _surface(rng, str(rng.choice(["felt", "cardboard", "dark_cloth"])), h, w)
        mx, my = rng.uniform(0.03, 0.12) * w, rng.uniform(0.03, 0.12) * h
        rim = rng.uniform(0.02, 0.05) * min(h, w)
        img[:] = outer
        rim_colour = np.array(
            rng.choice([[30, 30, 30], [60, 90, 130], [200, 200, 200]]), np.float32
        )
        cv2.rectangle(
            img,
            (int(mx), int(my)),
            (int(w - mx), int(h - my)),
            tuple(float(c) for c in rim_colour),
            -1,
        )
        x0, y0, x1, y1 = int(mx + rim), int(my + rim), int(w - mx - rim), int(h - my - rim)
        img[y0:y1, x0:x1] = inner[y0:y1, x0:x1]
        # the rim casts a soft shadow onto the tray floor
        shadow = np.zeros((h, w), np.float32)
        shadow[y0:y1, x0:x1] = 1
        rim_shadow = cv2.GaussianBlur(shadow, (0, 0), rim * 0.6)
        inside = np.zeros((h, w), np.float32)
        inside[y0:y1, x0:x1] = 1
        img *= (1 - 0.35 * inside * (1 - rim_shadow))[..., None]
    elif kind == "board":
        img[:] = rng.uniform(180, 235, 3)
        for _ in range(int(rng.integers(10, 40))):
            colour = tuple(float(c) for c in rng.uniform(30, 240, 3))
            centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            radius = int(rng.uniform(0.04, 0.15) * min(h, w))
            hexagon = np.asarray(
                cv2.ellipse2Poly(centre, (radius, radius), int(rng.uniform(0, 60)), 0, 360, 60)
            )
            cv2.fillPoly(img, [hexagon], colour, cv2.LINE_AA)
            cv2.polylines(img, [hexagon], True, (40, 40, 40), 2, cv2.LINE_AA)
        for _ in range(int(rng.integers(0, 8))):
            _put_text(
                img,
                str(int(rng.integers(2, 13))),
                (int(rng.uniform(0, w)), int(rng.uniform(0, h))),
                rng.uniform(0.5, 1.5),
                (20, 20, 20),
                2,
            )
        img += (fine * 3)[..., None]
    elif kind == "stone":
        # Granite, terrazzo and quartz worktops (kitchen and cafe tables): grains of a
        # few pixels in dark, light and tinted minerals. Dark grains on a light stone are
        # pip-sized dots, which is why a finder that never saw stone takes it for dice.
        img[:] = np.array(
            rng.choice(
                [[205, 205, 205], [170, 178, 185], [120, 122, 126], [58, 58, 62], [185, 200, 215]]
            ),
            np.float32,
        ) * rng.uniform(0.85, 1.1)
        for _ in range(int(rng.integers(2, 6))):
            field = cv2.GaussianBlur(
                rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), rng.uniform(0.7, 2.8)
            )
            spread = float(field.std()) + 1e-6
            grains = (field > rng.uniform(1.0, 2.3) * spread).astype(np.float32)
            soft = cv2.GaussianBlur(grains, (0, 0), 0.6)[..., None]
            mineral = np.array(
                rng.choice(
                    [[25, 25, 28], [75, 75, 80], [235, 235, 238], [110, 125, 160], [50, 70, 110]]
                ),
                np.float32,
            ) * rng.uniform(0.8, 1.2)
            img = img * (1 - soft) + mineral * soft
        if rng.random() < 0.3:  # marble: a few long, thin, wandering veins
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            warp = _smooth_noise(rng, h, w, 120) * rng.uniform(20, 60)
            angle = rng.uniform(0, math.pi)
            u = xx * math.cos(angle) + yy * math.sin(angle) + warp
            veins = np.abs(np.sin(u * rng.uniform(0.01, 0.03))) < 0.04
            veins = cv2.GaussianBlur(veins.astype(np.float32), (0, 0), 1.0)[..., None]
            img = img * (1 - 0.5 * veins) + 90 * 0.5 * veins
        img += (fine * 3)[..., None]
    else:
        raise ValueError(f"unknown surface {kind!r}; known: {', '.join(SURFACES)}")
    return img


def _clutter_item(
    rng: np.random.Generator,
    img: np.ndarray,
    shadow: np.ndarray,
    kind: str,
    centre: tuple[float, float],
    scale: float,
) -> None:
    """Draw one clutter item (pencil, paper, coin, dots) onto `img` and its shadow."""
    cx, cy = centre
    h, w = img.shape[:2]
    if kind == "pencil":
        length, thick = scale * rng.uniform(3, 7), scale * rng.uniform(0.15, 0.25)
        a = rng.uniform(0, math.pi)
        d = np.array([math.cos(a), math.sin(a)]) * length / 2
        n = np.array([-math.sin(a), math.cos(a)]) * thick / 2
        c = np.array([cx, cy])
        body = np.array([c - d + n, c + d * 0.8 + n, c + d * 0.8 - n, c - d - n])
        tip = np.array([c + d * 0.8 + n, c + d, c + d * 0.8 - n])
        colour = tuple(
            float(x)
            for x in rng.choice(
                [[30, 200, 240], [40, 40, 200], [160, 80, 20], [40, 140, 40], [60, 60, 60]]
            )
        )
        cv2.fillPoly(shadow, [(body + thick * 0.4).astype(np.int32)], 1.0, cv2.LINE_AA)
        cv2.fillPoly(img, [body.astype(np.int32)], colour, cv2.LINE_AA)
        cv2.fillPoly(img, [tip.astype(np.int32)], (150, 190, 225), cv2.LINE_AA)
        cv2.line(
            img,
            whole_pixels(c + d * 0.95),
            whole_pixels(c + d),
            (40, 40, 40),
            max(1, int(thick * 0.2)),
            cv2.LINE_AA,
        )
    elif kind == "paper":
        pw, ph = scale * rng.uniform(3, 7), scale * rng.uniform(2, 5)
        box = cv2.boxPoints(((cx, cy), (pw, ph), rng.uniform(0, 180))).astype(np.float32)
        cv2.fillPoly(shadow, [(box + scale * 0.08).astype(np.int32)], 1.0, cv2.LINE_AA)
        cv2.fillPoly(
            img,
            [box.astype(np.int32)],
            tuple(float(x) for x in rng.uniform(225, 250, 3)),
            cv2.LINE_AA,
        )
        # a printed score grid: rows of numbered boxes, the way a score sheet looks
        m = cv2.getPerspectiveTransform(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32), box)
        rows, cols = int(rng.integers(2, 6)), int(rng.integers(5, 12))
        for row in range(rows):
            row_colour = tuple(float(x) for x in rng.uniform(40, 230, 3))
            for col in range(cols):
                u0, v0 = 0.05 + 0.9 * col / cols, 0.08 + 0.84 * row / rows
                cell = np.array(
                    [
                        [[u0, v0]],
                        [[u0 + 0.8 / cols, v0]],
                        [[u0 + 0.8 / cols, v0 + 0.7 / rows]],
                        [[u0, v0 + 0.7 / rows]],
                    ],
                    np.float32,
                )
                pts = cv2.perspectiveTransform(cell, m).reshape(-1, 2)
                cv2.polylines(img, [pts.astype(np.int32)], True, row_colour, 1, cv2.LINE_AA)
                if rng.random() < 0.5 and scale > 30:
                    org = whole_pixels(pts.mean(axis=0) - [scale * 0.05, -scale * 0.05])
                    _put_text(
                        img,
                        str(int(rng.integers(2, 13))),
                        org,
                        scale / 120,
                        row_colour,
                        1,
                    )
    elif kind == "coin":
        r = scale * rng.uniform(0.35, 0.6)
        metal = np.array(rng.choice([[150, 150, 150], [60, 140, 190], [70, 100, 160]]), np.float32)
        cv2.circle(shadow, (int(cx + r * 0.15), int(cy + r * 0.15)), int(r), 1.0, -1, cv2.LINE_AA)
        cv2.circle(
            img, (int(cx), int(cy)), int(r), tuple(float(x) for x in metal * 0.8), -1, cv2.LINE_AA
        )
        cv2.circle(
            img, (int(cx), int(cy)), int(r * 0.85), tuple(float(x) for x in metal), -1, cv2.LINE_AA
        )
        cv2.circle(
            img,
            (int(cx - r * 0.3), int(cy - r * 0.3)),
            max(1, int(r * 0.25)),
            tuple(float(x) for x in np.clip(metal * 1.4, 0, 255)),
            -1,
            cv2.LINE_AA,
        )
    elif kind == "dots":
        # stray dark dots (a pattern, crumbs): hard negatives that look like pips
        for _ in range(int(rng.integers(2, 9))):
            p = (int(cx + rng.normal(0, scale)), int(cy + rng.normal(0, scale)))
            cv2.circle(
                img, p, max(1, int(scale * rng.uniform(0.05, 0.12))), (30, 30, 30), -1, cv2.LINE_AA
            )
    _ = (h, w)


# ----------------------------------------------------------------------------------------
# Dice geometry


@dataclass
class _Placed:
    spec_value: int | None
    body: str
    pips: str
    cx: float
    cy: float
    side: float
    angle: float
    reason: str = ""
    clear: float = 0.0


class _DieShape(TypedDict):
    """What `_die_shape` works out for one die: the top face quad (TL, TR, BR, BL), the
    same quad moved down to the table, the visible side quads, and the top face's centre
    and side in pixels."""

    top: np.ndarray
    bottom: np.ndarray
    sides: list[np.ndarray]
    cx: float
    cy: float
    side: float


def _top_quad(
    cx: float, cy: float, side: float, angle_deg: float, squash_dir: np.ndarray, squash: float
) -> np.ndarray:
    """Corners (TL, TR, BR, BL of the face texture) of the top face: a square of `side`
    rotated by `angle_deg`, foreshortened by `squash` along unit vector `squash_dir`."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], np.float32)
    square = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]], np.float32) * side
    pts = square @ rot.T
    d = squash_dir.astype(np.float32)
    along = pts @ d
    pts = pts - np.outer(along * (1 - squash), d)
    return pts + np.array([cx, cy], np.float32)


def _extend_quad(quad: np.ndarray, centre: np.ndarray, factor: float) -> np.ndarray:
    # arithmetic on arrays of unknown dtype is Any to the stubs; the result is an array
    extended: np.ndarray = centre + (quad - centre) * factor
    return extended


# ----------------------------------------------------------------------------------------
# The scene


def render_scene(
    rng: np.random.Generator,
    width: int = 640,
    height: int = 480,
    *,
    dice: Sequence[DieSpec | tuple[int | None, str | None, str | None]] | None = None,
    dice_set: str | Sequence[str] | None = None,
    values: Sequence[int] | None = None,
    n_dice: int | None = None,
    size: float | None = None,
    surface: str | None = None,
    light: str = "random",
    camera_tilt: float | None = None,
    touching: float = 0.3,
    unreadable: float = 0.08,
    clutter: float = 0.5,
    tumbling: float = 0.0,
    tumble_seed: int = 0,
    motion_blur: float | None = None,
    blur: float | None = None,
    noise: float | None = None,
    jpeg_quality: int | None = None,
    glare: float = 0.25,
    translucent: float = 0.0,
) -> tuple[np.ndarray, list[RenderedDie]]:
    """Render one table scene with dice; returns the BGR uint8 image and the dice.

    Which dice: `dice` (explicit DieSpec or (value, body, pips) tuples), or `dice_set`
    ("qwixx", "sixto" or a list of body colours) with optional `values`, or `n_dice`
    random dice (default 1-12). `size` is the mean top-face side in pixels (default
    20-150, log-uniform). `light="default"` gives the neutral, even light the default
    calibration files were measured under (no cast, no gradient, no glare, no noise);
    "random" varies everything. `touching` is the chance a die is placed against the
    previous one, `unreadable` the chance a random die is cocked or half hidden (never
    applied to explicitly given dice), `clutter` the chance of clutter. `tumbling` (> 0)
    renders every die smeared by its own motion, about `tumbling` x its side long (value
    None); the smear comes from `tumble_seed`, not from `rng`, so the same rng state gives
    the same scene still or tumbling (see `render_roll_clip`). `translucent` is the chance
    a die is made of see-through plastic (random light only); at 0, the default, no
    random draw is spent on it, so scenes rendered before it existed stay the same.
    """
    if width < 16 or height < 16:
        raise ValueError(f"scene too small: {width}x{height}")
    if not 0.0 <= translucent <= 1.0:  # also refuses NaN
        raise ValueError(f"translucent chance {translucent} is not 0-1")
    default_light = light == "default"
    specs = _dice_specs(rng, dice, dice_set, values, n_dice)
    explicit = dice is not None or dice_set is not None

    # camera: 0 = straight down; the vertical vanishing point sets which side faces show
    tilt = (
        camera_tilt
        if camera_tilt is not None
        else float(rng.choice([rng.uniform(0, 8), rng.uniform(8, 45)], p=[0.55, 0.45]))
    )
    if default_light and camera_tilt is None:
        tilt = 0.0
    focal = rng.uniform(1.0, 2.2) * max(width, height)
    centre = np.array([width / 2, height / 2], np.float32)
    if tilt < 1:
        vanish = centre.copy()
    else:
        vanish = np.array(
            [
                width / 2 + rng.normal(0, width * 0.05),
                height / 2 + focal / math.tan(math.radians(tilt)),
            ],
            np.float32,
        )

    base_size = (
        size if size is not None else float(math.exp(rng.uniform(math.log(22), math.log(130))))
    )
    kind = surface or str(rng.choice(SURFACES))
    img = _surface(rng, kind, height, width)
    shadow = np.zeros((height, width), np.float32)

    use_clutter = rng.random() < clutter
    placed = _place_dice(
        rng, specs, width, height, base_size, touching, 0.0 if explicit else unreadable
    )
    occupied = [(p.cx, p.cy, p.side) for p in placed]
    if use_clutter:
        for _ in range(int(rng.integers(1, 5))):
            cx, cy = _free_spot(rng, occupied, width, height, base_size * 2.5)
            if cx is None:
                break
            kind_c = str(rng.choice(["pencil", "paper", "coin", "coin", "dots"]))
            _clutter_item(rng, img, shadow, kind_c, (cx, cy), base_size)

    light_dir = rng.normal(0, 1, 2).astype(np.float32)
    light_dir /= np.linalg.norm(light_dir) + 1e-6
    shadow_len = 0.0 if default_light else rng.uniform(0.05, 0.5)

    # draw far to near so nearer dice cover the side faces of those behind them
    order = sorted(
        range(len(placed)),
        key=lambda i: (
            (placed[i].cy - vanish[1]) ** 2 * -1
            if tilt >= 1
            else -math.hypot(placed[i].cx - vanish[0], placed[i].cy - vanish[1])
        ),
    )
    shapes = {i: _die_shape(rng, placed[i], vanish, focal, tilt) for i in order}
    hulls = {
        i: cv2.convexHull(np.concatenate([sh["top"], sh["bottom"]]).astype(np.float32)).reshape(
            -1, 2
        )
        for i, sh in shapes.items()
    }
    # cast shadows fall on the table before the dice stand on it
    if shadow_len > 0:
        for i, hull in hulls.items():
            offset = light_dir * placed[i].side * shadow_len
            cv2.fillPoly(shadow, [((hull + offset) * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
    if shadow.any():
        soft_shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, base_size * 0.08))
        img *= (1 - rng.uniform(0.2, 0.45) * np.clip(soft_shadow, 0, 1))[..., None]

    # the dice of one set are made alike: their colours stray far less from the set's
    # colours than random dice of the same colour names do from each other
    spread = 0.3 if dice_set is not None else 1.0
    rendered: dict[int, RenderedDie] = {}
    for i in order:
        p, shape, hull = placed[i], shapes[i], hulls[i]
        clear = p.clear
        if not clear and translucent > 0 and not default_light and rng.random() < translucent:
            clear = float(rng.uniform(0.35, 0.75))
        if tumbling > 0:
            layer = img.copy()
            _draw_die(rng, layer, p, shape, hull, default_light, glare, spread, clear)
            motion = np.random.default_rng([tumble_seed, i])
            _smear(motion, img, layer, hull, p.side * float(tumbling))
        else:
            _draw_die(rng, img, p, shape, hull, default_light, glare, spread, clear)
        x0, y0 = hull.min(axis=0)
        x1, y1 = hull.max(axis=0)
        reason = "tumbling" if tumbling > 0 else p.reason
        rendered[i] = RenderedDie(
            cx=float(shape["cx"]),
            cy=float(shape["cy"]),
            side=float(shape["side"]),
            angle=float(p.angle % 90.0),
            value=None if reason else p.spec_value,
            body=p.body,
            pips=p.pips,
            box=(
                float(max(0, x0)),
                float(max(0, y0)),
                float(min(width, x1)),
                float(min(height, y1)),
            ),
            reason=reason,
        )
    for i in order:
        if placed[i].reason == "hidden":  # a card lies over about half of the die
            sheet = _occlude(rng, img, rendered[i])
            _mark_covered(rendered, shapes, sheet, width, height)

    img = _finish(rng, img, default_light, motion_blur, blur, noise, jpeg_quality)
    return img, [rendered[i] for i in range(len(placed))]


def _dice_specs(
    rng: np.random.Generator,
    dice: Sequence[object] | None,
    dice_set: str | Sequence[str] | None,
    values: Sequence[int] | None,
    n_dice: int | None,
) -> list[DieSpec]:
    """Resolve the dice options into a complete list of DieSpec (no None left)."""
    specs: list[DieSpec] = []
    if dice is not None:
        for d in dice:
            specs.append(d if isinstance(d, DieSpec) else DieSpec(*d))  # type: ignore[misc]
    elif dice_set is not None:
        bodies = STANDARD_DICE_SETS[dice_set] if isinstance(dice_set, str) else dice_set
        if values is not None and len(values) != len(bodies):
            raise ValueError(f"{len(values)} values for a set of {len(bodies)} dice")
        for k, body in enumerate(bodies):
            pips = "black" if body in ("white", "yellow") else "white"
            specs.append(DieSpec(values[k] if values is not None else None, body, pips))
    else:
        count = n_dice if n_dice is not None else int(rng.integers(1, 13))
        specs = [DieSpec() for _ in range(count)]
    out = []
    for s in specs:
        body = s.body or str(rng.choice(BASIC_COLOURS))
        if body not in BODY_BGR:
            raise ValueError(f"unknown body colour {body!r}")
        pips = s.pips or _default_pips(rng, body)
        if pips not in PIP_BGR:
            raise ValueError(f"unknown pip colour {pips!r}")
        value = s.value if s.value is not None else int(rng.integers(1, 7))
        if not 1 <= value <= 6:
            raise ValueError(f"die value {value} is not 1-6")
        if s.state not in ("", "cocked", "hidden"):
            raise ValueError(f"unknown die state {s.state!r}")
        if not 0.0 <= s.clear <= 1.0:
            raise ValueError(f"die clearness {s.clear} is not 0-1")
        out.append(DieSpec(value, body, pips, s.state, s.clear))
    return out


def _place_dice(
    rng: np.random.Generator,
    specs: list[DieSpec],
    width: int,
    height: int,
    base_size: float,
    touching: float,
    unreadable: float,
) -> list[_Placed]:
    """Centres, sizes and rotations. Dice never overlap; with chance `touching` a die lies
    flush against the previous one (same rotation, sides in contact)."""
    placed: list[_Placed] = []
    for spec in specs:
        for attempt in range(80):
            # a crowded table: after many misses the die comes out smaller
            side = base_size * rng.uniform(0.88, 1.12) * 0.97 ** max(0, attempt - 30)
            margin = side * 1.2
            if width <= 2 * margin or height <= 2 * margin:
                side = min(width, height) / 3.2
                margin = side * 1.2
            flush_to = placed[-1] if placed and rng.random() < touching else None
            if flush_to is not None:
                angle = flush_to.angle + rng.normal(0, 3)
                a = math.radians(flush_to.angle + 90 * int(rng.integers(0, 4)))
                dist = (flush_to.side + side) / 2 * rng.uniform(1.01, 1.06)
                slide = rng.uniform(-0.4, 0.4) * side
                cx = flush_to.cx + math.cos(a) * dist - math.sin(a) * slide
                cy = flush_to.cy + math.sin(a) * dist + math.cos(a) * slide
            else:
                angle = rng.uniform(0, 90)
                cx = rng.uniform(margin, width - margin)
                cy = rng.uniform(margin, height - margin)
            if not (margin <= cx <= width - margin and margin <= cy <= height - margin):
                continue
            # apart from the die it is flush with, keep the circumscribed circles apart
            if all(
                math.hypot(cx - q.cx, cy - q.cy) > 0.72 * (q.side + side) * rng.uniform(1, 1.3)
                for q in placed
                if q is not flush_to
            ):
                break
        else:
            continue  # no room left: fewer dice than asked
        reason = spec.state
        if not reason and rng.random() < unreadable:
            reason = "cocked" if rng.random() < 0.5 else "hidden"
        placed.append(
            _Placed(
                spec.value,
                spec.body or "white",
                spec.pips or "black",
                cx,
                cy,
                side,
                angle,
                reason,
                spec.clear,
            )
        )
    return placed


def _free_spot(
    rng: np.random.Generator,
    occupied: list[tuple[float, float, float]],
    width: int,
    height: int,
    clearance: float,
) -> tuple[float | None, float]:
    for _ in range(30):
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        if all(math.hypot(cx - x, cy - y) > clearance + s for x, y, s in occupied):
            return cx, cy
    return None, 0.0


def _die_shape(
    rng: np.random.Generator, p: _Placed, vanish: np.ndarray, focal: float, tilt: float
) -> _DieShape:
    """Top face quad, the base outline and the visible side quads of one die."""
    pos = np.array([p.cx, p.cy], np.float32)
    to_v = vanish - pos
    dist = float(np.linalg.norm(to_v))
    direction = to_v / dist if dist > 1e-3 else np.array([0.0, 1.0], np.float32)
    # far dice look smaller under an oblique camera
    scale = (
        1.0
        + 0.5
        * math.sin(math.radians(tilt))
        * (p.cy - vanish[1] + focal / max(math.tan(math.radians(tilt)), 1e-3))
        / focal
        if tilt >= 1
        else 1.0
    )
    scale = float(np.clip(scale, 0.6, 1.4))
    side = p.side * scale
    lean = min(0.85, math.sin(math.radians(tilt)) + 0.6 * dist / focal * (tilt < 1))
    squash_dir = direction
    if p.reason == "cocked":
        # resting on an edge: a face tips towards a random direction, two faces show
        a = rng.uniform(0, 2 * math.pi)
        squash_dir = np.array([math.cos(a), math.sin(a)], np.float32)
        lean = rng.uniform(0.5, 0.8)
    squash = math.sqrt(max(0.05, 1 - lean**2))
    top = _top_quad(p.cx, p.cy, side, p.angle, squash_dir, squash)
    extrude = (squash_dir if p.reason == "cocked" else direction) * side * lean
    bottom = top + extrude
    sides = []
    n = len(top)
    centre = top.mean(axis=0)
    for k in range(n):
        a_pt, b_pt = top[k], top[(k + 1) % n]
        mid = (a_pt + b_pt) / 2 - centre
        if float(mid @ extrude) > 1e-3 * side:
            sides.append(np.array([a_pt, b_pt, b_pt + extrude, a_pt + extrude], np.float32))
    return {
        "top": top,
        "bottom": bottom,
        "sides": sides,
        "cx": float(centre[0]),
        "cy": float(centre[1]),
        "side": side * math.sqrt(squash) if p.reason else side,
    }


def _draw_die(
    rng: np.random.Generator,
    img: np.ndarray,
    p: _Placed,
    shape: _DieShape,
    hull: np.ndarray,
    default_light: bool,
    glare_chance: float,
    colour_spread: float = 1.0,
    clear: float = 0.0,
) -> None:
    """Draw one die (silhouette, side faces with pips, top face) onto float `img`;
    `colour_spread` scales how far its colour strays from the name's typical colour.
    `clear` > 0 draws a translucent die: the table shows through its body, tinted by it,
    and so do the pips of its side faces and of the face it lies on."""
    body = (
        np.array(BODY_BGR[p.body], np.float32)
        if default_light
        else _jitter_colour(rng, BODY_BGR[p.body], colour_spread)
    )
    pips = (
        np.array(PIP_BGR[p.pips], np.float32)
        if default_light
        else _jitter_colour(rng, PIP_BGR[p.pips], 0.6)
    )
    side_px = float(shape["side"])
    tex_size = int(np.clip(side_px * 1.6, 40, 220))
    corner = 0.16 if default_light else rng.uniform(0.08, 0.24)
    # marbled dice come in random collections, not in a game's set
    marbled = (not default_light) and rng.random() < 0.12 and colour_spread >= 1.0
    side_shade = 0.62 if default_light else rng.uniform(0.45, 0.8)
    # silhouette under the faces fills the rounded edges between them
    if clear > 0:
        _tint_through(img, hull, body, body * side_shade * 0.9, clear)
        # seen through the top face: the face the die lies on, mirrored, the opposite value
        under = 7 - (p.spec_value or 1)
        tex, alpha = _face_texture(rng, under, body, pips, tex_size, corner, False, False, clear)
        # through the body and the plastic's depth these pips look fainter than the top's
        faint = 0.6 * alpha[:, ::-1]
        _warp_onto(img, tex[:, ::-1].copy(), faint, shape["bottom"], side_shade)
    else:
        cv2.fillPoly(
            img,
            [(hull * 4).astype(np.int32)],
            tuple(float(c) for c in body * side_shade * 0.9),
            cv2.LINE_AA,
            2,
        )
    for quad in shape["sides"]:
        value = int(rng.integers(1, 7))
        tex, alpha = _face_texture(rng, value, body, pips, tex_size, corner, False, marbled, clear)
        _warp_onto(img, tex, alpha, quad, side_shade * rng.uniform(0.9, 1.1))
    glare = (not default_light) and rng.random() < glare_chance
    top_value = p.spec_value or 1
    tex, alpha = _face_texture(rng, top_value, body, pips, tex_size, corner, glare, marbled, clear)
    top_shade = 1.0 if default_light else rng.uniform(0.9, 1.05)
    _warp_onto(img, tex, alpha, shape["top"], top_shade)


def _tint_through(
    img: np.ndarray, hull: np.ndarray, body: np.ndarray, solid: np.ndarray, clear: float
) -> None:
    """Inside `hull`, what lies behind a translucent die: the table seen through coloured
    plastic (which passes mostly its own colour), mixed with the plastic's own colour."""
    h, w = img.shape[:2]
    x0, y0 = (int(v) for v in np.floor(hull.min(axis=0)).clip(0, None))
    x1 = int(min(w, np.ceil(hull[:, 0].max()) + 1))
    y1 = int(min(h, np.ceil(hull[:, 1].max()) + 1))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    shifted = (hull - np.array([x0, y0], np.float32)) * 4
    cv2.fillPoly(mask, [shifted.astype(np.int32)], 1.0, cv2.LINE_AA, 2)
    glass = np.clip(body / 255.0 * 1.25 + 0.1, 0.0, 1.0)
    roi = img[y0:y1, x0:x1]
    seen = roi * glass * clear + solid * (1.0 - clear)
    roi[:] = roi * (1.0 - mask[..., None]) + seen * mask[..., None]


def _smear(
    rng: np.random.Generator,
    img: np.ndarray,
    layer: np.ndarray,
    hull: np.ndarray,
    length_px: float,
) -> None:
    """Blend a die drawn on `layer` into `img` smeared along a random motion about
    `length_px` long."""
    length = max(3, int(length_px * rng.uniform(0.5, 1.2)) | 1)
    line = np.zeros((length, length), np.float32)
    line[length // 2, :] = 1.0 / length
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
    # the turned line is float32 like the line (the stubs type it as any numeric array)
    kernel: np.ndarray = cv2.warpAffine(line, rot, (length, length))
    kernel /= kernel.sum()
    mask = np.zeros(img.shape[:2], np.float32)
    cv2.fillPoly(mask, [hull.astype(np.int32)], 1.0)
    x0, y0 = np.maximum(hull.min(axis=0).astype(int) - length, 0)
    x1, y1 = hull.max(axis=0).astype(int) + length
    roi = (slice(y0, y1), slice(x0, x1))
    m = cv2.filter2D(mask[roi], -1, kernel)[..., None]
    smeared = cv2.filter2D(layer[roi] * mask[roi][..., None], -1, kernel)
    img[roi] = img[roi] * (1 - m) + smeared


def _occlude(rng: np.random.Generator, img: np.ndarray, die: RenderedDie) -> np.ndarray:
    """Lay a card, a sheet of paper or a hand over about half of a die; returns its
    outline."""
    a = rng.uniform(0, 2 * math.pi)
    d = np.array([math.cos(a), math.sin(a)])
    n = np.array([-d[1], d[0]])
    edge = np.array([die.cx, die.cy]) + d * die.side * rng.uniform(-0.15, 0.1)
    depth, half_width = die.side * rng.uniform(1.0, 2.0), die.side * rng.uniform(0.9, 1.6)
    sheet = np.array(
        [
            edge + n * half_width,
            edge - n * half_width,
            edge - n * half_width + d * depth,
            edge + n * half_width + d * depth,
        ]
    )
    kind = rng.random()
    if kind < 0.5:  # paper or a card
        colour = rng.uniform(200, 250, 3)
    elif kind < 0.8:  # a hand reaching for the dice: skin tones
        colour = np.array([120, 150, 200]) * rng.uniform(0.45, 1.15) + rng.normal(0, 8, 3)
    else:  # a box lid, a rule book
        colour = rng.uniform(30, 200, 3)
    cv2.fillPoly(
        img, [(sheet * 4).astype(np.int32)], tuple(float(x) for x in colour), cv2.LINE_AA, 2
    )
    cv2.polylines(
        img,
        [(sheet * 4).astype(np.int32)],
        True,
        tuple(float(x) * 0.8 for x in colour),
        1,
        cv2.LINE_AA,
        2,
    )
    return sheet


def _mark_covered(
    rendered: dict[int, RenderedDie],
    shapes: dict[int, _DieShape],
    sheet: np.ndarray,
    width: int,
    height: int,
) -> None:
    """Any die whose top face the sheet covers by a fifth or more becomes unreadable."""
    sheet_mask = np.zeros((height, width), np.uint8)
    cv2.fillPoly(sheet_mask, [sheet.astype(np.int32)], 1)
    for i, die in rendered.items():
        top_mask = np.zeros((height, width), np.uint8)
        cv2.fillPoly(top_mask, [shapes[i]["top"].astype(np.int32)], 1)
        area = int(top_mask.sum())
        if area and die.value is not None and (top_mask & sheet_mask).sum() >= 0.2 * area:
            rendered[i] = dataclasses.replace(die, value=None, reason="hidden")


def _finish(
    rng: np.random.Generator,
    img: np.ndarray,
    default_light: bool,
    motion_blur: float | None,
    blur: float | None,
    noise: float | None,
    jpeg_quality: int | None,
) -> np.ndarray:
    """Light, camera and compression: gradient, colour cast, blur, noise, JPEG."""
    h, w = img.shape[:2]
    if not default_light:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, 2 * math.pi)
        ramp = ((xx - w / 2) * math.cos(a) + (yy - h / 2) * math.sin(a)) / max(h, w)
        gain = rng.uniform(0.65, 1.15) + ramp * rng.uniform(0, 0.5)
        vignette = 1 - rng.uniform(0, 0.35) * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
        gain = gain * vignette + 0.08 * _smooth_noise(rng, h, w, max(h, w) // 3)
        cast = 1 + rng.normal(0, 0.05, 3).astype(np.float32)
        img = img * gain[..., None] * cast
    sigma = (
        blur
        if blur is not None
        else (0.0 if default_light else float(rng.choice([0, rng.uniform(0.3, 1.6)])))
    )
    if sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    length = (
        motion_blur
        if motion_blur is not None
        else (0.0 if default_light or rng.random() > 0.12 else rng.uniform(3, 14))
    )
    if length >= 2:
        k = int(length) | 1
        line = np.zeros((k, k), np.float32)
        line[k // 2, :] = 1.0
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(line, rot, (k, k))
        img = cv2.filter2D(img, -1, kernel / max(kernel.sum(), 1e-6))
    sd = noise if noise is not None else (0.0 if default_light else rng.uniform(0, 7))
    if sd > 0:
        img = img + rng.normal(0, sd, img.shape).astype(np.float32)
    out: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    quality = (
        jpeg_quality
        if jpeg_quality is not None
        else (None if default_light else int(rng.integers(35, 96)))
    )
    if quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        # imdecode says None for bytes it cannot read; what imencode wrote always reads
        if decoded is not None:
            out = decoded
    return out


def render_roll_clip(
    rng: np.random.Generator,
    width: int = 640,
    height: int = 480,
    *,
    frames_rolling: int = 8,
    frames_still: int = 12,
    **options: object,
) -> list[tuple[np.ndarray, list[RenderedDie]]]:
    """Frames of a roll for a demo clip: the dice tumbling (smear shrinking frame by frame,
    values None), then lying still (values readable), on one unchanging table. Options go
    to `render_scene` (e.g. dice_set="qwixx", values=[...])."""
    seed = int(rng.integers(0, 2**62))
    frames = []
    total = frames_rolling + frames_still
    for k in range(total):
        strength = 1.6 * (1 - k / max(frames_rolling, 1)) + 0.3 if k < frames_rolling else 0.0
        image, dice = render_scene(
            np.random.default_rng(seed),
            width,
            height,
            tumbling=strength,
            tumble_seed=k,
            **options,  # type: ignore[arg-type]
        )
        # a little sensor noise differs from frame to frame, as in a real clip
        grain = np.random.default_rng([seed % 2**32, k]).normal(0, 1.5, image.shape)
        frames.append((np.clip(image + grain, 0, 255).astype(np.uint8), dice))
    return frames


# ----------------------------------------------------------------------------------------
# Classifier crops


def render_die_crop(
    rng: np.random.Generator,
    value: int | None,
    body: str,
    pips: str,
    size: int = 64,
    *,
    margin: float = 0.25,
    jitter: float = 0.08,
    **options: object,
) -> np.ndarray:
    """A size x size BGR crop of one die, framed as the pipeline frames a found die: the
    die's box enlarged by `margin` on each side (as a fraction of the box), shifted by up
    to `jitter`. value None renders an unreadable die (cocked or half hidden). Other
    options go to `render_scene` (surface, light, camera_tilt, blur, noise ...); some
    crops get a touching neighbour."""
    die_px = float(rng.uniform(28, 110))
    extent = int(die_px * 3.2)
    state = "" if value is not None else ("cocked" if rng.random() < 0.5 else "hidden")
    first = DieSpec(value if value is not None else int(rng.integers(1, 7)), body, pips, state)
    specs = [first] + [DieSpec() for _ in range(int(rng.choice([0, 0, 1, 2])))]
    opts: dict[str, object] = {"size": die_px, "touching": 0.9, "clutter": 0.3}
    opts.update(options)
    img, dice = render_scene(rng, extent, extent, dice=specs, **opts)  # type: ignore[arg-type]
    if not dice:  # cannot happen for one die in a 3.2-side scene; keep the crop defined
        return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
    die = dice[0]
    x0, y0, x1, y1 = die.box
    bw, bh = x1 - x0, y1 - y0
    side = max(bw, bh) * (1 + 2 * margin)
    cx = (x0 + x1) / 2 + rng.uniform(-jitter, jitter) * side
    cy = (y0 + y1) / 2 + rng.uniform(-jitter, jitter) * side
    m = np.array(
        [
            [size / side, 0, size / 2 - cx * size / side],
            [0, size / side, size / 2 - cy * size / side],
        ],
        np.float32,
    )
    return cv2.warpAffine(
        img, m, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
