"""The fancy style's surfaces (fancy.py): felt and leather in strong colours (the floors
of dice trays and bowls), patterned cloths, carpet. Registered in the same registry as
surfaces.py's, after `SURFACES` was fixed: a default scene never picks one (its surface
is drawn from `SURFACES` only), `surface="leather"` asks for one by name."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .surfaces import surface
from .texture import smooth_noise

# strong colours of felt and leather trays (BGR): red, wine, purple, royal blue, navy,
# teal, green, black, orange, pink, brown
STRONG = [
    [40, 40, 190], [50, 30, 120], [120, 40, 100], [170, 80, 30], [90, 40, 20],
    [120, 120, 20], [40, 120, 30], [30, 30, 32], [30, 110, 220], [150, 90, 220],
    [40, 70, 120],
]  # fmt: skip
FANCY_FLOORS = ("felt_strong", "felt_strong", "leather", "wood")
FANCY_TABLES = ("cloth", "cloth", "leather", "carpet", "wood", "stone", "felt_strong")


def strong_colour(rng: np.random.Generator) -> np.ndarray:
    base = np.array(STRONG[int(rng.integers(0, len(STRONG)))], np.float32)
    return np.clip(base * rng.uniform(0.75, 1.2), 0, 255)


def _plain(h: int, w: int, colour: np.ndarray) -> np.ndarray:
    img = np.empty((h, w, 3), np.float32)
    img[:] = colour
    return img


@surface("felt_strong")
def _felt_strong(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A dice tray's felt or velvet in a strong colour: fine fuzz, soft light patches."""
    img = _plain(h, w, strong_colour(rng))
    fuzz = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 0.8)
    img *= (1 + 0.06 * fuzz + 0.1 * smooth_noise(rng, h, w, 70))[..., None]
    return img


@surface("leather")
def _leather(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Leather (or leatherette) in a strong or brown colour: a pebbled grain of little
    cells, creases, a slight sheen."""
    colour = strong_colour(rng) if rng.random() < 0.6 else rng.uniform([20, 40, 70], [60, 90, 140])
    img = _plain(h, w, np.asarray(colour, np.float32))
    cells = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 1.6)
    pebble = np.abs(cells) / (float(np.abs(cells).mean()) + 1e-6)
    sheen = smooth_noise(rng, h, w, 90)
    img *= (0.9 + 0.08 * np.clip(pebble, 0, 2) + 0.12 * sheen)[..., None]
    return img


@surface("carpet")
def _carpet(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Carpet: coarse tufts of two or three close colours."""
    img = _plain(h, w, rng.uniform(40, 200, 3).astype(np.float32))
    tufts = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 1.2)
    tint = rng.normal(0, 18, 3).astype(np.float32)
    img += (tufts[..., None] * 14) + (tufts > 0.5)[..., None] * tint
    img *= (1 + 0.1 * smooth_noise(rng, h, w, 120))[..., None]
    return img


@surface("cloth")
def _cloth(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A patterned table cloth: tartan, checks, stripes, polka dots or a print of
    flowers and stars (busy patterns a finder takes for dice and pips)."""
    pattern = str(rng.choice(["tartan", "checks", "stripes", "dots", "print"]))
    ground = rng.uniform(30, 235, 3).astype(np.float32)
    img = _plain(h, w, ground)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    turn = float(rng.uniform(-0.3, 0.3))
    u = xx * math.cos(turn) + yy * math.sin(turn)
    v = -xx * math.sin(turn) + yy * math.cos(turn)
    period = float(rng.uniform(14, 70))
    if pattern in ("tartan", "checks", "stripes"):
        ink = rng.uniform(20, 235, 3).astype(np.float32)
        band_u = ((u / period) % 1.0 < rng.uniform(0.3, 0.6)).astype(np.float32)
        band_v = ((v / period) % 1.0 < rng.uniform(0.3, 0.6)).astype(np.float32)
        if pattern == "stripes":
            mix = band_u * 0.9
        elif pattern == "checks":
            mix = np.abs(band_u - band_v)
        else:  # tartan: crossing translucent bands and a thin line
            line = ((u / period) % 1.0 < 0.06).astype(np.float32)
            mix = np.clip(0.45 * band_u + 0.45 * band_v + line, 0, 1)
        mix = cv2.GaussianBlur(mix, (0, 0), 0.8)[..., None]
        img = img * (1 - mix) + ink * mix
    else:
        _motifs(rng, img, pattern, period)
    weave = np.sin(xx * 1.9) * np.sin(yy * 1.9)
    img += (weave * 4 + rng.standard_normal((h, w)).astype(np.float32) * 3)[..., None]
    img *= (1 + 0.1 * smooth_noise(rng, h, w, 100))[..., None]
    return img


def _motifs(rng: np.random.Generator, img: np.ndarray, pattern: str, period: float) -> None:
    """Polka dots on a grid, or a scattered print of flowers, stars and blobs."""
    h, w = img.shape[:2]
    inks = [rng.uniform(20, 235, 3) for _ in range(3)]
    radius = period * float(rng.uniform(0.12, 0.3))
    if pattern == "dots":
        for row, y in enumerate(np.arange(0, h + period, period)):
            for x in np.arange((row % 2) * period / 2, w + period, period):
                cv2.circle(img, (int(x), int(y)), int(radius), inks[0].tolist(), -1, cv2.LINE_AA)
        return
    for _ in range(int(h * w / period**2 * 1.5)):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        ink = inks[int(rng.integers(0, 3))].tolist()
        petals = int(rng.integers(4, 7))
        for k in range(petals):
            a = 2 * math.pi * k / petals
            p = (int(x + radius * math.cos(a)), int(y + radius * math.sin(a)))
            cv2.circle(img, p, max(1, int(radius * 0.6)), ink, -1, cv2.LINE_AA)
        cv2.circle(img, (int(x), int(y)), max(1, int(radius * 0.45)), inks[2].tolist(), -1)
