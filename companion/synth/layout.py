"""Where the dice lie: spread over the table (or a container's floor), or heaped in a pile.

A region says where a die's centre may go: the picture less a margin, or a container's
floor. Spread dice never overlap; with chance `touching` a die lies flush against the
previous one. A pile is a tight heap: dice on the table touching one another, and some
lying on top of them (level 1), flat or tipped."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .container import floor_box, floor_contains, opening_contains
from .description import Camera, Container


@dataclass(frozen=True)
class Spot:
    """A die's place before its looks are chosen. `level` 1 lies on other dice; `tipped`
    rests on an edge (a die on a pile's slope)."""

    index: int
    cx: float
    cy: float
    side: float
    angle: float
    level: int = 0
    tipped: bool = False


class Region:
    """The picture, less a margin of 1.2 x a die's side (room for its side faces)."""

    margin_factor = 1.2

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height

    def fitted_side(self, side: float) -> float:
        """`side`, or less when such a die cannot fit at all."""
        margin = side * self.margin_factor
        if self.width <= 2 * margin or self.height <= 2 * margin:
            return min(self.width, self.height) / 3.2
        return side

    def sample(self, rng: np.random.Generator, margin: float) -> tuple[float, float] | None:
        if 2 * margin >= min(self.width, self.height):
            return None
        return (
            float(rng.uniform(margin, self.width - margin)),
            float(rng.uniform(margin, self.height - margin)),
        )

    def contains(self, cx: float, cy: float, margin: float) -> bool:
        return margin <= cx <= self.width - margin and margin <= cy <= self.height - margin


class FloorRegion(Region):
    """A container's floor. A die stands on it with its bottom face, which the camera
    sees moved towards the vanishing point from the top face (by the side faces'
    length); the top face's centre must show through the opening. A die near the near
    wall may be partly hidden by it."""

    margin_factor = 0.75

    def __init__(self, width: int, height: int, container: Container, camera: Camera) -> None:
        super().__init__(width, height)
        self.container, self.camera = container, camera

    def fitted_side(self, side: float) -> float:
        x0, y0, x1, y1 = floor_box(self.container)
        room = min(x1 - x0, y1 - y0) / 2
        return side if side * self.margin_factor < room * 0.8 else room * 0.8 / self.margin_factor

    def sample(self, rng: np.random.Generator, margin: float) -> tuple[float, float] | None:
        x0, y0, x1, y1 = floor_box(self.container)
        for _ in range(20):
            cx, cy = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
            if self.contains(cx, cy, margin):
                return cx, cy
        return None

    def contains(self, cx: float, cy: float, margin: float) -> bool:
        side = margin / self.margin_factor
        fx, fy = footprint_shift(self.camera, cx, cy, side)
        return (
            super().contains(cx, cy, margin * 0.5)
            and floor_contains(self.container, cx + fx, cy + fy, 0.6 * side)
            and opening_contains(self.container, cx, cy, 0.3 * side)
        )


def footprint_shift(camera: Camera, cx: float, cy: float, side: float) -> tuple[float, float]:
    """How far a die's bottom face lies from its top face in the picture (as dice.py
    draws it: towards the vanishing point, by the lean of the camera's perspective)."""
    vx, vy = camera.vanish
    dx, dy = vx - cx, vy - cy
    dist = math.hypot(dx, dy)
    if dist < 1e-3:
        return 0.0, 0.0
    tilt = math.radians(camera.tilt)
    lean = min(0.85, math.sin(tilt) + 0.6 * dist / camera.focal * (camera.tilt < 1))
    return dx / dist * side * lean, dy / dist * side * lean


# ----------------------------------------------------------------------------------------
# Spread over the table


def spread_dice(
    rng: np.random.Generator, count: int, region: Region, base_size: float, touching: float
) -> list[Spot]:
    """Centres, sizes and rotations of `count` dice. A die that finds no room is left out
    (fewer dice than asked)."""
    placed: list[Spot] = []
    for index in range(count):
        spot = _spread_spot(rng, index, placed, region, base_size, touching)
        if spot is not None:
            placed.append(spot)
    return placed


def _spread_spot(
    rng: np.random.Generator,
    index: int,
    placed: list[Spot],
    region: Region,
    base_size: float,
    touching: float,
) -> Spot | None:
    for attempt in range(80):
        # a crowded table: after many misses the die comes out smaller
        side = region.fitted_side(
            base_size * rng.uniform(0.88, 1.12) * 0.97 ** max(0, attempt - 30)
        )
        margin = side * region.margin_factor
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
            where = region.sample(rng, margin)
            if where is None:
                continue
            cx, cy = where
        if not region.contains(cx, cy, margin):
            continue
        # apart from the die it is flush with, keep the circumscribed circles apart
        if all(
            math.hypot(cx - q.cx, cy - q.cy) > 0.72 * (q.side + side) * rng.uniform(1, 1.3)
            for q in placed
            if q is not flush_to
        ):
            return Spot(index, float(cx), float(cy), float(side), float(angle))
    return None


# ----------------------------------------------------------------------------------------
# A pile


def pile_dice(rng: np.random.Generator, count: int, region: Region, base_size: float) -> list[Spot]:
    """A heap of `count` dice around one point: most on the table, each touching another,
    about one in three (from the third on) lying on top of the others."""
    side = region.fitted_side(base_size)
    centre = region.sample(rng, side * region.margin_factor * 1.5)
    if centre is None:
        centre = region.sample(rng, side * region.margin_factor)
    if centre is None:
        return []
    placed: list[Spot] = []
    for index in range(count):
        spot = _pile_spot(rng, index, placed, region, side, centre)
        if spot is not None:
            placed.append(spot)
    return placed


def _pile_spot(
    rng: np.random.Generator,
    index: int,
    placed: list[Spot],
    region: Region,
    base_side: float,
    centre: tuple[float, float],
) -> Spot | None:
    ground = [s for s in placed if s.level == 0]
    for _ in range(60):
        side = base_side * float(rng.uniform(0.92, 1.08))
        if not placed:
            return Spot(index, centre[0], centre[1], side, float(rng.uniform(0, 90)))
        upper = len(ground) >= 2 and rng.random() < 0.35
        spot = _on_top(rng, index, ground, side) if upper else _beside(rng, index, ground, side)
        if not region.contains(spot.cx, spot.cy, side * 0.6):
            continue
        if _has_room(spot, placed):
            return spot
    return None


def _beside(rng: np.random.Generator, index: int, ground: list[Spot], side: float) -> Spot:
    """On the table against a die of the pile: flush (about the same turn) or corner-on."""
    other = ground[int(rng.integers(0, len(ground)))]
    a = float(rng.uniform(0, 2 * math.pi))
    if rng.random() < 0.6:
        angle = other.angle + float(rng.normal(0, 6))
        dist = (other.side + side) / 2 * float(rng.uniform(1.0, 1.08))
        a = math.radians(other.angle + 90 * int(rng.integers(0, 4))) + float(rng.normal(0, 0.25))
    else:
        angle = float(rng.uniform(0, 90))
        dist = (other.side + side) / 2 * float(rng.uniform(1.15, 1.35))
    cx, cy = other.cx + math.cos(a) * dist, other.cy + math.sin(a) * dist
    return Spot(index, cx, cy, side, angle)


def _on_top(rng: np.random.Generator, index: int, ground: list[Spot], side: float) -> Spot:
    """Lying on the pile: over the gap between two touching dice, or over one die's edge;
    about a third of them tipped."""
    first = ground[int(rng.integers(0, len(ground)))]
    near = sorted(ground, key=lambda s: math.hypot(s.cx - first.cx, s.cy - first.cy))[1]
    if math.hypot(near.cx - first.cx, near.cy - first.cy) < 1.6 * side:
        cx, cy = (first.cx + near.cx) / 2, (first.cy + near.cy) / 2
    else:
        a = float(rng.uniform(0, 2 * math.pi))
        cx, cy = first.cx + math.cos(a) * side * 0.45, first.cy + math.sin(a) * side * 0.45
    cx += float(rng.normal(0, 0.15)) * side
    cy += float(rng.normal(0, 0.15)) * side
    return Spot(index, cx, cy, side, float(rng.uniform(0, 90)), 1, bool(rng.random() < 0.35))


def _has_room(spot: Spot, placed: list[Spot]) -> bool:
    """Dice of one level never pass through each other."""
    for other in placed:
        if other.level != spot.level:
            continue
        gap = math.hypot(spot.cx - other.cx, spot.cy - other.cy) / ((spot.side + other.side) / 2)
        turn = abs((spot.angle - other.angle + 45) % 90 - 45)
        if gap < (0.99 if turn < 10 else 1.14):
            return False
    return True
