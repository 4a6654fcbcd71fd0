"""Sampling the conditions of webcams over other tables: the sensor (greyscale or near-
infrared), the lens (fisheye and vignetting), a container, a strong lamp and its flare on
each die, and whether the dice lie in a pile. Each has its own child seed, and a chance
of 0 draws nothing, so a scene without a condition is the scene it was before."""

from __future__ import annotations

import math

import numpy as np

from .container import sample_container
from .description import Camera, Container, Glare, Lamp, Lens, Sensor
from .options import SceneOptions
from .seeds import part_rng


def _happens(root: int, part: str, chance: float) -> np.random.Generator | None:
    """The part's generator when the part happens (it has drawn its chance), else None."""
    if chance <= 0:
        return None
    rng = part_rng(root, part)
    return rng if rng.random() < chance else None


def sample_sensor(root: int, width: int, height: int, options: SceneOptions) -> Sensor:
    if options.greyscale <= 0 and options.infrared <= 0:
        return Sensor()
    rng = part_rng(root, "sensor")
    pick = rng.random()
    if pick < options.infrared:
        centre = (
            width / 2 + float(rng.normal(0, 0.08)) * width,
            height / 2 + float(rng.normal(0, 0.08)) * height,
        )
        return Sensor(
            kind="ir",
            contrast=float(rng.uniform(0.8, 1.2)),
            gamma=float(rng.uniform(0.8, 1.2)),
            hotspot=float(rng.uniform(0.2, 0.6)),
            hotspot_centre=centre,
            hotspot_spread=float(rng.uniform(0.5, 1.0)),
            noise_gain=float(rng.uniform(1.3, 2.5)),
        )
    if pick < options.infrared + options.greyscale:
        return Sensor(
            kind="grey",
            contrast=float(rng.uniform(0.8, 1.25)),
            gamma=float(rng.uniform(0.8, 1.25)),
            noise_gain=float(rng.uniform(1.0, 1.8)),
        )
    return Sensor()


def sample_lens(root: int, width: int, height: int, options: SceneOptions) -> Lens | None:
    centre = (width / 2, height / 2)
    fisheye = _happens(root, "lens.fisheye", options.fisheye)
    if fisheye is not None:
        shift = fisheye.normal(0, 0.015, 2)
        return Lens(
            barrel=float(fisheye.uniform(0.15, 0.6)),
            vignette=float(fisheye.uniform(0.25, 0.65)),
            falloff=float(fisheye.uniform(2.0, 4.0)),
            centre=(centre[0] + float(shift[0]) * width, centre[1] + float(shift[1]) * height),
        )
    vignetting = _happens(root, "lens.vignetting", options.vignetting)
    if vignetting is not None:
        return Lens(
            barrel=0.0,
            vignette=float(vignetting.uniform(0.35, 0.75)),
            falloff=float(vignetting.uniform(1.5, 3.5)),
            centre=centre,
        )
    return None


def sample_container_part(
    root: int,
    width: int,
    height: int,
    camera: Camera,
    base_size: float,
    count: int,
    options: SceneOptions,
) -> Container | None:
    rng = _happens(root, "container", options.container)
    if rng is None:
        return None
    kinds = tuple(options.containers)
    kind = kinds[int(rng.integers(0, len(kinds)))]
    return sample_container(rng, root, kind, width, height, camera, base_size, count)


def is_pile(root: int, options: SceneOptions) -> bool:
    return _happens(root, "pile", options.pile) is not None


def sample_lamp(root: int, width: int, height: int, options: SceneOptions) -> Lamp | None:
    rng = _happens(root, "lamp", options.strong_glare)
    if rng is None:
        return None
    diagonal = math.hypot(width, height)
    return Lamp(
        x=float(rng.uniform(-0.1, 1.1)) * width,
        y=float(rng.uniform(-0.1, 1.1)) * height,
        reach=float(rng.uniform(0.15, 0.45)) * diagonal,
        strength=float(rng.uniform(250, 450)),
        table_gloss=float(rng.uniform(0.0, 0.5)),
    )


def sample_flare(
    rng: np.random.Generator, cx: float, cy: float, angle: float, lamp: Lamp
) -> tuple[Glare | None, float]:
    """A lamp's reflection on a die's top at (cx, cy), and its even sheen over the face:
    strongest near the lamp's mirror point (where tops blow out), the spot placed on the
    face towards it; far from it most tops show a small hard spot."""
    dx, dy = lamp.x - cx, lamp.y - cy
    near = math.exp(-(dx * dx + dy * dy) / (2 * lamp.reach**2))
    sheen = lamp.strength * 0.35 * near**2 * float(rng.uniform(0.5, 1.0))
    if near < 0.05 and rng.random() < 0.4:
        return None, sheen
    strength = lamp.strength * (0.3 + 0.7 * near) + float(rng.uniform(30, 100))
    # the face's own axes: the reflection sits on the side that faces the mirror point
    a = math.radians(angle)
    u = dx * math.cos(a) + dy * math.sin(a)
    v = -dx * math.sin(a) + dy * math.cos(a)
    norm = math.hypot(u, v) or 1.0
    offset = float(rng.uniform(0.05, 0.3)) * min(1.0, 3 * near + 0.3)
    size = float(rng.uniform(0.1, 0.28)) * (0.7 + 0.8 * near)
    glare = Glare(
        x=0.5 + u / norm * offset,
        y=0.5 + v / norm * offset,
        axes=(size, size * float(rng.uniform(0.4, 1.0))),
        angle=float(rng.uniform(0, 180)),
        strength=strength,
        hardness=float(rng.uniform(0.7, 1.0)),
    )
    return glare, sheen
