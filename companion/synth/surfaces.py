"""Table surfaces, one small function each, behind one registry.

A surface function takes its own generator and the picture's height and width and
returns the bare table as float32 BGR (about 0-255). Add a surface with `@surface("name")`;
`SURFACES` lists them in registration order (benches and tests go through every one)."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np

from .texture import put_text, smooth_noise

SurfaceDrawer = Callable[[np.random.Generator, int, int], np.ndarray]

_REGISTRY: dict[str, SurfaceDrawer] = {}


def surface(name: str) -> Callable[[SurfaceDrawer], SurfaceDrawer]:
    """Register a surface drawer under `name`."""

    def register(drawer: SurfaceDrawer) -> SurfaceDrawer:
        if name in _REGISTRY:
            raise ValueError(f"surface {name!r} is registered twice")
        _REGISTRY[name] = drawer
        return drawer

    return register


def registered() -> tuple[str, ...]:
    """Every registered surface (the built-in SURFACES and any added since)."""
    return tuple(_REGISTRY)


def draw_surface(kind: str, rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """The bare table of kind `kind`, h x w float32 BGR."""
    drawer = _REGISTRY.get(kind)
    if drawer is None:
        raise ValueError(f"unknown surface {kind!r}; known: {', '.join(_REGISTRY)}")
    return drawer(rng, h, w)


def _plain(h: int, w: int, colour: np.ndarray | float) -> np.ndarray:
    img = np.empty((h, w, 3), np.float32)
    img[:] = colour
    return img


def _fine(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    return rng.standard_normal((h, w), dtype=np.float32)


def _pick(rng: np.random.Generator, colours: list[list[int]]) -> np.ndarray:
    return np.array(colours[int(rng.integers(0, len(colours)))], np.float32)


@surface("white")
def _white(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A white sheet or board: a faint weave."""
    img = _plain(h, w, rng.uniform(205, 248) + rng.normal(0, 3, 3))
    weave = cv2.GaussianBlur(_fine(rng, h, w), (0, 0), 0.8)
    img += (weave * rng.uniform(2, 7))[..., None]
    return img


@surface("cardboard")
def _cardboard(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Grey cardboard with dark specks."""
    img = _plain(h, w, np.array([190, 195, 198], np.float32) * rng.uniform(0.85, 1.05))
    img += (_fine(rng, h, w) * rng.uniform(4, 9))[..., None]
    specks = rng.random((h, w)) < 0.002
    img[specks] *= 0.6
    return img


@surface("wood")
def _wood(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Wood grain: long, gently waving dark late-wood lines."""
    base = _pick(rng, [[150, 190, 222], [90, 130, 180], [60, 90, 140], [170, 205, 230]])
    base *= rng.uniform(0.85, 1.1)
    angle = rng.uniform(0, math.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    u = xx * math.cos(angle) + yy * math.sin(angle)
    # the warp varies slowly across the grain
    warp = smooth_noise(rng, h, w, 160) * rng.uniform(4, 14)
    grain = np.sin((u + warp) * rng.uniform(0.08, 0.3)) * 0.5 + 0.5
    grain = grain ** rng.uniform(4, 12)  # thin dark lines
    streak = smooth_noise(rng, h, w, 25) * 0.04
    img = _plain(h, w, base)
    img *= (1 - 0.18 * grain - streak)[..., None]
    img += (_fine(rng, h, w) * 2.5)[..., None]
    return img


@surface("felt")
def _felt(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Green, blue or red felt of a games table."""
    base = _pick(rng, [[40, 110, 28], [50, 120, 40], [110, 60, 20], [40, 40, 120]])
    img = _plain(h, w, base * rng.uniform(0.7, 1.2))
    img += (cv2.GaussianBlur(_fine(rng, h, w), (0, 0), 0.7) * 9)[..., None]
    img *= (1 + 0.05 * smooth_noise(rng, h, w, 60))[..., None]
    return img


@surface("dark_cloth")
def _dark_cloth(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A dark woven cloth with folds."""
    base = _pick(rng, [[35, 30, 32], [50, 35, 30], [45, 28, 60], [30, 30, 45]])
    img = _plain(h, w, base * rng.uniform(0.8, 1.3))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    weave = np.sin(xx * 1.3) * np.sin(yy * 1.3)
    img += (weave * 4 + _fine(rng, h, w) * 4)[..., None]
    img *= (1 + 0.12 * smooth_noise(rng, h, w, 80))[..., None]
    return img


@surface("tray")
def _tray(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A flat dice tray seen from above: a table around it, a rim, a lined floor whose
    edge lies in the rim's soft shadow."""
    outer = draw_surface(str(rng.choice(["white", "wood", "dark_cloth"])), rng, h, w)
    inner = draw_surface(str(rng.choice(["felt", "cardboard", "dark_cloth"])), rng, h, w)
    mx, my = rng.uniform(0.03, 0.12) * w, rng.uniform(0.03, 0.12) * h
    rim = rng.uniform(0.02, 0.05) * min(h, w)
    img = outer
    rim_colour = _pick(rng, [[30, 30, 30], [60, 90, 130], [200, 200, 200]])
    corner_a, corner_b = (int(mx), int(my)), (int(w - mx), int(h - my))
    cv2.rectangle(img, corner_a, corner_b, tuple(float(c) for c in rim_colour), -1)
    x0, y0, x1, y1 = int(mx + rim), int(my + rim), int(w - mx - rim), int(h - my - rim)
    img[y0:y1, x0:x1] = inner[y0:y1, x0:x1]
    inside = np.zeros((h, w), np.float32)
    inside[y0:y1, x0:x1] = 1
    rim_shadow = cv2.GaussianBlur(inside, (0, 0), rim * 0.6)
    img *= (1 - 0.35 * inside * (1 - rim_shadow))[..., None]
    return img


@surface("board")
def _board(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A printed game board: coloured hexagons with dark borders and printed numbers."""
    img = _plain(h, w, rng.uniform(180, 235, 3))
    for _ in range(int(rng.integers(10, 40))):
        colour = tuple(float(c) for c in rng.uniform(30, 240, 3))
        centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        radius = int(rng.uniform(0.04, 0.15) * min(h, w))
        turn = int(rng.uniform(0, 60))
        hexagon = np.asarray(cv2.ellipse2Poly(centre, (radius, radius), turn, 0, 360, 60))
        cv2.fillPoly(img, [hexagon], colour, cv2.LINE_AA)
        cv2.polylines(img, [hexagon], True, (40, 40, 40), 2, cv2.LINE_AA)
    for _ in range(int(rng.integers(0, 8))):
        where = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        put_text(img, str(int(rng.integers(2, 13))), where, rng.uniform(0.5, 1.5), (20, 20, 20), 2)
    img += (_fine(rng, h, w) * 3)[..., None]
    return img


@surface("stone")
def _stone(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Granite, terrazzo and quartz worktops (kitchen and cafe tables): grains of a few
    pixels in dark, light and tinted minerals. Dark grains on a light stone are pip-sized
    dots, which is why a finder that never saw stone takes it for dice."""
    stones = [[205, 205, 205], [170, 178, 185], [120, 122, 126], [58, 58, 62], [185, 200, 215]]
    img = _plain(h, w, _pick(rng, stones) * rng.uniform(0.85, 1.1))
    minerals = [[25, 25, 28], [75, 75, 80], [235, 235, 238], [110, 125, 160], [50, 70, 110]]
    for _ in range(int(rng.integers(2, 6))):
        field = cv2.GaussianBlur(_fine(rng, h, w), (0, 0), rng.uniform(0.7, 2.8))
        spread = float(field.std()) + 1e-6
        grains = (field > rng.uniform(1.0, 2.3) * spread).astype(np.float32)
        soft = cv2.GaussianBlur(grains, (0, 0), 0.6)[..., None]
        mineral = _pick(rng, minerals) * rng.uniform(0.8, 1.2)
        img = img * (1 - soft) + mineral * soft
    if rng.random() < 0.3:  # marble: a few long, thin, wandering veins
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        warp = smooth_noise(rng, h, w, 120) * rng.uniform(20, 60)
        angle = rng.uniform(0, math.pi)
        u = xx * math.cos(angle) + yy * math.sin(angle) + warp
        veins = np.abs(np.sin(u * rng.uniform(0.01, 0.03))) < 0.04
        soft_veins = cv2.GaussianBlur(veins.astype(np.float32), (0, 0), 1.0)[..., None]
        img = img * (1 - 0.5 * soft_veins) + 90 * 0.5 * soft_veins
    img += (_fine(rng, h, w) * 3)[..., None]
    return img


SURFACES: tuple[str, ...] = tuple(_REGISTRY)
