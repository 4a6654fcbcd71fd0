"""Dice in a dish, a tray or a cup: a rim, a curved inner wall in its own light and shade,
a floor in the wall's shadow, and the near wall hiding what lies behind it.

Shapes are superellipses, ((|x|/a)^n + (|y|/b)^n)^(1/n) <= 1: n = 2 a round dish or cup,
larger n a tray with rounded corners. The rim is where the camera sees the top of the
wall; the floor is the rim's shape, smaller (a sloping or steep wall) and shifted towards
the camera's vanishing point by the wall's height, as the dice's bottoms are."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .description import BGR, Camera, Container, Point, Table
from .seeds import part_seed
from .surfaces import draw_surface

CONTAINERS = ("dish", "tray", "cup")
FLOORS = {
    "dish": ("white", "white", "felt", "dark_cloth", "wood"),
    "tray": ("felt", "felt", "dark_cloth", "cardboard", "wood"),
    "cup": ("dark_cloth", "felt", "white", "cardboard"),
}


def sample_container(
    rng: np.random.Generator,
    root: int,
    kind: str,
    width: int,
    height: int,
    camera: Camera,
    base_size: float,
    count: int,
) -> Container:
    """A container of `kind` with room for `count` dice of `base_size` (as far as the
    picture allows)."""
    short = min(width, height)
    squash = math.cos(math.radians(min(camera.tilt, 60.0)))
    if kind == "tray":
        rx = float(rng.uniform(0.32, 0.46)) * width
        ry = float(rng.uniform(0.32, 0.46)) * height
        roundness, floor_scale = float(rng.uniform(5, 10)), float(rng.uniform(0.9, 0.96))
        wall = float(rng.uniform(0.3, 0.8)) * base_size
    else:
        roomy = 1.7 if kind == "dish" else 1.35  # radius for n dice: about roomy sqrt(n) sides
        least = roomy * math.sqrt(max(count, 1)) + 0.8
        spread = rng.uniform(3.0, 6.0) if kind == "dish" else rng.uniform(2.2, 3.4)
        rx = max(float(spread), least) * base_size
        rx = min(rx, 0.47 * short / max(squash, 0.5))
        rx = min(rx, 0.47 * width)
        ry = min(rx * squash, 0.47 * height)
        roundness = 2.0
        floor_scale = float(rng.uniform(0.6, 0.8) if kind == "dish" else rng.uniform(0.82, 0.9))
        wall = float(rng.uniform(0.4, 0.9) if kind == "dish" else rng.uniform(1.5, 3.0))
        wall *= base_size
    cx = float(rng.uniform(rx + 2, width - rx - 2)) if width > 2 * rx + 4 else width / 2
    cy = float(rng.uniform(ry + 2, height - ry - 2)) if height > 2 * ry + 4 else height / 2
    shift = _wall_shift(camera, cx, cy, wall)
    floor = Table(FLOORS[kind][int(rng.integers(0, len(FLOORS[kind])))], part_seed(root, "floor"))
    return Container(
        kind=kind,
        cx=cx,
        cy=cy,
        rx=rx,
        ry=ry,
        roundness=roundness,
        floor_scale=floor_scale,
        floor_shift=shift,
        rim_width=float(rng.uniform(0.04, 0.1)) * min(rx, ry),
        rim_colour=_colour(rng, [[235, 235, 235], [40, 40, 40], [60, 90, 140], [150, 60, 30]]),
        wall_colour=_colour(rng, [[225, 225, 225], [50, 50, 55], [70, 100, 150], [160, 80, 40]]),
        outside_colour=_colour(rng, [[210, 210, 210], [45, 45, 45], [80, 110, 160]]),
        floor=floor,
        shadow=float(rng.uniform(0.25, 0.55)),
        shadow_reach=wall * float(rng.uniform(0.3, 1.0)),
    )


def _wall_shift(camera: Camera, cx: float, cy: float, wall: float) -> Point:
    """How far the floor lies from the rim in the picture: towards the vanishing point,
    by the wall's height foreshortened as a die's side faces are."""
    vx, vy = camera.vanish
    dx, dy = vx - cx, vy - cy
    dist = math.hypot(dx, dy)
    if dist < 1e-3:
        return 0.0, 0.0
    lean = min(
        0.85, math.sin(math.radians(camera.tilt)) + 0.6 * dist / camera.focal * (camera.tilt < 1)
    )
    return dx / dist * wall * lean, dy / dist * wall * lean


def _colour(rng: np.random.Generator, colours: list[list[int]]) -> BGR:
    base = np.array(colours[int(rng.integers(0, len(colours)))], np.float32)
    b, g, r = (float(c) for c in np.clip(base * rng.uniform(0.85, 1.1), 0, 255))
    return b, g, r


# ----------------------------------------------------------------------------------------
# Where things are


def shape_q(c: Container, x: np.ndarray, y: np.ndarray, which: str) -> np.ndarray:
    """The superellipse's normalised radius (< 1 inside) of the rim ("rim"), the rim's
    inner edge ("opening") or the floor ("floor") at picture points (x, y)."""
    cx, cy, rx, ry = _outline_of(c, which)
    n = c.roundness
    u = np.abs(x - cx) / np.float32(rx)
    v = np.abs(y - cy) / np.float32(ry)
    if n == 2.0:
        round_q: np.ndarray = np.sqrt(u * u + v * v)
        return round_q
    out: np.ndarray = np.power(np.power(u, n) + np.power(v, n), 1.0 / n)
    return out


def _outline_of(c: Container, which: str) -> tuple[float, float, float, float]:
    if which == "rim":
        return c.cx, c.cy, c.rx, c.ry
    if which == "opening":
        return c.cx, c.cy, max(c.rx - c.rim_width, 1.0), max(c.ry - c.rim_width, 1.0)
    sx, sy = c.floor_shift
    return c.cx + sx, c.cy + sy, c.rx * c.floor_scale, c.ry * c.floor_scale


def outline(c: Container, which: str, points: int = 96) -> np.ndarray:
    """The outline ("rim", "opening" or "floor") as a polygon (N x 2)."""
    cx, cy, rx, ry = _outline_of(c, which)
    t = np.linspace(0, 2 * math.pi, points, endpoint=False)
    e = 2.0 / c.roundness
    cos, sin = np.cos(t), np.sin(t)
    x = cx + rx * np.sign(cos) * np.abs(cos) ** e
    y = cy + ry * np.sign(sin) * np.abs(sin) ** e
    return np.stack([x, y], axis=1).astype(np.float32)


def floor_contains(c: Container, x: float, y: float, margin: float) -> bool:
    """Whether a disc of radius `margin` about (x, y) lies on the floor."""
    return _within(c, "floor", x, y, margin)


def opening_contains(c: Container, x: float, y: float, margin: float) -> bool:
    """Whether a disc of radius `margin` about (x, y) shows through the opening."""
    return _within(c, "opening", x, y, margin)


def _within(c: Container, which: str, x: float, y: float, margin: float) -> bool:
    cx, cy, rx, ry = _outline_of(c, which)
    if rx <= margin or ry <= margin:
        return False
    return _q(c.roundness, x - cx, y - cy, rx - margin, ry - margin) <= 1.0


def _q(n: float, dx: float, dy: float, rx: float, ry: float) -> float:
    return float(((abs(dx) / rx) ** n + (abs(dy) / ry) ** n) ** (1.0 / n))


def floor_box(c: Container) -> tuple[float, float, float, float]:
    """The floor's bounding box (x0, y0, x1, y1)."""
    cx, cy, rx, ry = _outline_of(c, "floor")
    return cx - rx, cy - ry, cx + rx, cy + ry


# ----------------------------------------------------------------------------------------
# Drawing


@dataclass(frozen=True)
class Front:
    """What of the container lies in front of the dice (the near wall's outside and the
    rim): its mask (0-1) and its pixels, laid over the picture once the dice are drawn."""

    mask: np.ndarray
    pixels: np.ndarray


def draw_container(img: np.ndarray, c: Container, light_direction: Point) -> Front:
    """Draw the container onto float `img` (which holds the bare table)."""
    h, w = img.shape[:2]
    d = np.array(light_direction, np.float32)
    hull = cv2.convexHull(np.concatenate([outline(c, "rim"), outline(c, "floor")])).reshape(-1, 2)
    silhouette = np.zeros((h, w), np.float32)
    cv2.fillPoly(silhouette, [(hull * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
    _cast_shadow(img, silhouette, d, c)
    front = np.zeros((h, w), np.float32)
    x0, y0 = np.maximum(np.floor(hull.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.ceil(hull.max(axis=0)).astype(int) + 3
    x1, y1 = min(x1, w), min(y1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return Front(front, img * front[..., None])
    box = (slice(y0, y1), slice(x0, x1))
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    roi, shape = img[box], silhouette[box][..., None]
    # the outside of the wall: darker towards the table
    roi[:] = roi * (1 - shape) + np.array(c.outside_colour, np.float32) * 0.8 * shape
    sharp = min(c.rx, c.ry)  # an edge one pixel wide
    opening = np.clip((1.0 - shape_q(c, xx, yy, "opening")) * sharp + 0.5, 0, 1)
    rim = np.clip((1.0 - shape_q(c, xx, yy, "rim")) * sharp + 0.5, 0, 1)
    angle = np.arctan2((yy - c.cy) / c.ry, (xx - c.cx) / c.rx)
    lit = np.clip(np.cos(angle) * d[0] + np.sin(angle) * d[1], 0, 1)
    inside = _inside(c, xx, yy, lit, d, box)
    roi[:] = roi * (1 - opening[..., None]) + inside * opening[..., None]
    ring = (np.clip(rim - opening, 0, 1) * shape[..., 0])[..., None]
    rim_pixels = np.array(c.rim_colour, np.float32) * (0.85 + 0.3 * (1 - lit))[..., None]
    roi[:] = roi * (1 - ring) + rim_pixels * ring
    front[box] = np.clip(shape[..., 0] - opening, 0, 1)
    return Front(front, img * front[..., None])


def _cast_shadow(img: np.ndarray, silhouette: np.ndarray, d: np.ndarray, c: Container) -> None:
    """The container's soft shadow on the table (worked out at a quarter of the size: it
    is soft anyway)."""
    h, w = silhouette.shape
    small = cv2.resize(silhouette, (max(w // 4, 1), max(h // 4, 1)), interpolation=cv2.INTER_AREA)
    reach = (c.shadow_reach + 2.0) / 4
    m = np.array([[1, 0, d[0] * reach], [0, 1, d[1] * reach]], np.float32)
    shifted = cv2.warpAffine(small, m, (small.shape[1], small.shape[0]))
    soft = cv2.GaussianBlur(shifted, (0, 0), max(0.5, reach * 0.5))
    img *= (1 - c.shadow * 0.8 * cv2.resize(soft, (w, h)))[..., None]


def _inside(
    c: Container,
    xx: np.ndarray,
    yy: np.ndarray,
    lit: np.ndarray,
    d: np.ndarray,
    box: tuple[slice, slice],
) -> np.ndarray:
    """The inside seen through the opening (within `box` of the picture): the curved
    wall, and the floor in the wall's shadow."""
    q_floor = shape_q(c, xx, yy, "floor")
    # the wall: lit where it faces the light, darker down towards the floor (curvature)
    depth = np.clip((q_floor - 1.0) / max(1.0 / c.floor_scale - 1.0, 0.05), 0, 1)
    wall = (
        np.array(c.wall_colour, np.float32) * ((0.45 + 0.55 * lit) * (0.7 + 0.3 * depth))[..., None]
    )
    floor = _floor_texture(c, box)
    # the wall's shadow on the floor: the light (which comes from -d) is cut off by the
    # wall where a step back towards it leaves the opening
    back = shape_q(c, xx - d[0] * c.shadow_reach, yy - d[1] * c.shadow_reach, "opening")
    shade = np.clip((back - 1.0) * 8.0, 0, 1)
    occlusion = np.exp(-np.clip(1.0 - q_floor, 0, None) / 0.06)
    floor = floor * (1 - c.shadow * shade - 0.3 * occlusion)[..., None]
    on_floor = np.clip((1.0 - q_floor) * min(c.rx, c.ry) * c.floor_scale + 0.5, 0, 1)
    out: np.ndarray = wall * (1 - on_floor[..., None]) + floor * on_floor[..., None]
    return out


def _floor_texture(c: Container, box: tuple[slice, slice]) -> np.ndarray:
    """The floor's surface over `box` (drawn from the floor's own seed)."""
    rows, cols = box
    h, w = rows.stop - rows.start, cols.stop - cols.start
    return draw_surface(c.floor.surface, np.random.default_rng(c.floor.seed), h, w)
