"""Sampling: options and a seed in, a frozen `SceneDescription` out (no pixels).

Each part of the scene draws from its own named child seed (seeds.py): the camera, the
table, the dice count, each die's colour, form, faces, glare, state and clearness, the
layout, the clutter, the light and the camera's finish. Which part a draw belongs to is
fixed by its name, so adding a draw to one part leaves every other part as it was. The
webcam conditions (sensor, lens, container, lamp, pile) are sampled in conditions.py,
where the dice lie in layout.py. The public `sample_scene` (fancy.py) calls `describe`
for a scene of the default style, and for the layout of a fancy one."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from companion.vision.types import BASIC_COLOURS

from .conditions import (
    is_pile,
    sample_container_part,
    sample_flare,
    sample_lamp,
    sample_lens,
    sample_sensor,
)
from .description import (
    BGR,
    Camera,
    ClutterItem,
    Container,
    Die,
    Face,
    Finish,
    Glare,
    Lamp,
    Light,
    Occluder,
    SceneDescription,
    Table,
    Tumbling,
)
from .layout import FloorRegion, Region, Spot, pile_dice, spread_dice
from .options import DieSpec, SceneOptions
from .palette import BODY_BGR, PIP_BGR, default_pips, jitter_colour
from .seeds import part_rng, part_seed
from .surfaces import SURFACES

CLUTTER_KINDS = ("pencil", "paper", "coin", "coin", "dots")


def describe(root: int, width: int, height: int, options: SceneOptions) -> SceneDescription:
    """The scene of root seed `root` under `options`."""
    if width < 16 or height < 16:
        raise ValueError(f"scene too small: {width}x{height}")
    camera = _sample_camera(part_rng(root, "camera"), width, height, options)
    specs = _dice_specs(root, options)
    base_size = _sample_size(part_rng(root, "size"), options)
    container = sample_container_part(root, width, height, camera, base_size, len(specs), options)
    spots = _place(root, len(specs), width, height, base_size, container, camera, options)
    lamp = sample_lamp(root, width, height, options)
    # the dice of one set are made alike: their colours stray far less from the set's
    # colours than random dice of the same colour names do from each other
    spread = 0.3 if options.dice_set is not None else 1.0
    dice = tuple(
        _sample_die(root, spot, specs[spot.index], options, spread, lamp) for spot in spots
    )
    keep_off = [(d.cx, d.cy, d.side) for d in dice]
    if container is not None:
        keep_off.append((container.cx, container.cy, max(container.rx, container.ry)))
    tumbling = (
        Tumbling(float(options.tumbling), options.tumble_seed) if options.tumbling > 0 else None
    )
    return SceneDescription(
        width=width,
        height=height,
        camera=camera,
        table=_sample_table(part_rng(root, "table"), root, options),
        dice=dice,
        clutter=_sample_clutter(
            part_rng(root, "clutter"), root, keep_off, width, height, base_size, options
        ),
        light=_sample_light(part_rng(root, "light"), root, options),
        finish=_sample_finish(part_rng(root, "finish"), root, options),
        base_size=base_size,
        tumbling=tumbling,
        sensor=sample_sensor(root, width, height, options),
        lens=sample_lens(root, width, height, options),
        container=container,
        lamp=lamp,
    )


def _place(
    root: int,
    count: int,
    width: int,
    height: int,
    base_size: float,
    container: Container | None,
    camera: Camera,
    options: SceneOptions,
) -> list[Spot]:
    region = Region(width, height)
    if container is not None:
        region = FloorRegion(width, height, container, camera)
    rng = part_rng(root, "layout")
    if is_pile(root, options):
        return pile_dice(rng, count, region, base_size)
    return spread_dice(rng, count, region, base_size, options.touching)


# ----------------------------------------------------------------------------------------
# Camera, table, sizes


def _sample_camera(
    rng: np.random.Generator, width: int, height: int, options: SceneOptions
) -> Camera:
    if options.camera_tilt is not None:
        tilt = float(options.camera_tilt)
    elif options.default_light:
        tilt = 0.0
    elif rng.random() < 0.55:
        tilt = float(rng.uniform(0, 8))
    else:
        tilt = float(rng.uniform(8, 45))
    focal = float(rng.uniform(1.0, 2.2) * max(width, height))
    drift = float(rng.normal(0, width * 0.05))
    if tilt < 1:
        return Camera(tilt, focal, (width / 2, height / 2))
    return Camera(
        tilt, focal, (width / 2 + drift, height / 2 + focal / math.tan(math.radians(tilt)))
    )


def _sample_table(rng: np.random.Generator, root: int, options: SceneOptions) -> Table:
    kind = options.surface or SURFACES[int(rng.integers(0, len(SURFACES)))]
    return Table(kind, part_seed(root, "table.texture"))


def _sample_size(rng: np.random.Generator, options: SceneOptions) -> float:
    if options.size is not None:
        return float(options.size)
    low, high = options.sizes
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


# ----------------------------------------------------------------------------------------
# Which dice


def _dice_specs(root: int, options: SceneOptions) -> list[DieSpec]:
    """The asked-for dice as complete DieSpecs (value, body and pips all set)."""
    bodies = options.set_bodies()
    specs: list[DieSpec]
    given = options.given_dice()
    if given is not None:
        specs = list(given)
    elif bodies is not None:
        values = options.values
        specs = [
            DieSpec(
                values[k] if values is not None else None,
                body,
                "black" if body in ("white", "yellow") else "white",
            )
            for k, body in enumerate(bodies)
        ]
    else:
        count = options.n_dice
        if count is None:
            count = int(part_rng(root, "dice.count").integers(1, 13))
        specs = [DieSpec() for _ in range(count)]
    return [_complete(part_rng(root, "die.identity", k), s) for k, s in enumerate(specs)]


def _complete(rng: np.random.Generator, spec: DieSpec) -> DieSpec:
    body = spec.body or BASIC_COLOURS[int(rng.integers(0, len(BASIC_COLOURS)))]
    pips = spec.pips or default_pips(rng, body)
    value = spec.value if spec.value is not None else int(rng.integers(1, 7))
    return DieSpec(value, body, pips, spec.state, spec.clear)


# ----------------------------------------------------------------------------------------
# How each die looks


def _sample_die(
    root: int, spot: Spot, spec: DieSpec, options: SceneOptions, spread: float, lamp: Lamp | None
) -> Die:
    k = spot.index
    default = options.default_light
    assert spec.value is not None and spec.body is not None and spec.pips is not None
    body_bgr, pip_bgr, marble = _sample_colours(
        part_rng(root, "die.colour", k), spec.body, spec.pips, default, spread
    )
    form = part_rng(root, "die.form", k)
    corner = 0.16 if default else float(form.uniform(0.08, 0.24))
    side_shade = 0.62 if default else float(form.uniform(0.45, 0.8))
    top_shade = 1.0 if default else float(form.uniform(0.9, 1.05))
    faces = part_rng(root, "die.faces", k)
    top = _sample_face(faces, spec.value, top_shade)
    sides = tuple(
        _sample_face(
            faces, int(faces.integers(1, 7)), 1.0 if default else float(faces.uniform(0.9, 1.1))
        )
        for _ in range(2)
    )
    glare = _sample_glare(part_rng(root, "die.glare", k), default, options.glare)
    if glare is not None:
        top = dataclasses.replace(top, glare=glare)
    if lamp is not None:
        flare, sheen = sample_flare(
            part_rng(root, "die.flare", k), spot.cx, spot.cy, spot.angle, lamp
        )
        top = dataclasses.replace(top, flare=flare, sheen=sheen)
    clear = _sample_clear(part_rng(root, "die.clear", k), spec, options)
    under = _sample_face(faces, 7 - spec.value, 1.0) if clear > 0 else None
    state_rng = part_rng(root, "die.state", k)
    state = spec.state or ("cocked" if spot.tipped else "")
    if not state and not options.explicit and state_rng.random() < options.unreadable:
        state = "cocked" if state_rng.random() < 0.5 else "hidden"
    return Die(
        index=k,
        value=spec.value,
        body=spec.body,
        pips=spec.pips,
        cx=spot.cx,
        cy=spot.cy,
        side=spot.side,
        angle=spot.angle,
        body_bgr=body_bgr,
        pip_bgr=pip_bgr,
        corner=corner,
        side_shade=side_shade,
        top=top,
        sides=sides,
        state=state,
        clear=clear,
        marble=marble,
        tip_direction=float(state_rng.uniform(0, 2 * math.pi)) if state == "cocked" else 0.0,
        tip_lean=float(state_rng.uniform(0.5, 0.8)) if state == "cocked" else 0.0,
        under=under,
        occluder=_sample_occluder(state_rng) if state == "hidden" else None,
        level=spot.level,
    )


def _sample_colours(
    rng: np.random.Generator, body: str, pips: str, default: bool, spread: float
) -> tuple[BGR, BGR, BGR | None]:
    if default:
        return _floats(BODY_BGR[body]), _floats(PIP_BGR[pips]), None
    body_bgr = jitter_colour(rng, BODY_BGR[body], spread)
    pip_bgr = jitter_colour(rng, PIP_BGR[pips], 0.6)
    # marbled dice come in random collections, not in a game's set
    marble: BGR | None = None
    if rng.random() < 0.12 and spread >= 1.0:
        marble = (235.0, 235.0, 235.0) if rng.random() < 0.6 else _floats(np.array(body_bgr) * 0.4)
    return body_bgr, pip_bgr, marble


def _sample_face(rng: np.random.Generator, value: int, shade: float) -> Face:
    return Face(
        value=value,
        orientation=int(rng.integers(0, 2)),
        pip_spacing=float(rng.uniform(0.24, 0.30)),
        pip_radius=float(rng.uniform(0.075, 0.105)) * (0.88 if value == 6 else 1.0),
        seed=int(rng.integers(0, 2**63)),
        shade=shade,
    )


def _sample_glare(rng: np.random.Generator, default: bool, chance: float) -> Glare | None:
    if default or chance <= 0 or rng.random() >= chance:
        return None
    x, y = (float(v) for v in rng.uniform(0.2, 0.8, 2))
    axes = (float(rng.uniform(0.1, 0.35)), float(rng.uniform(0.05, 0.2)))
    return Glare(x, y, axes, float(rng.uniform(0, 180)), float(rng.uniform(60, 160)))


def _sample_clear(rng: np.random.Generator, spec: DieSpec, options: SceneOptions) -> float:
    if spec.clear:
        return float(spec.clear)
    chance = options.translucent
    if chance <= 0 or options.default_light or rng.random() >= chance:
        return 0.0
    return float(rng.uniform(0.35, 0.75))


def _sample_occluder(rng: np.random.Generator) -> Occluder:
    direction = float(rng.uniform(0, 2 * math.pi))
    offset, depth = float(rng.uniform(-0.15, 0.1)), float(rng.uniform(1.0, 2.0))
    half_width = float(rng.uniform(0.9, 1.6))
    pick = rng.random()
    if pick < 0.5:
        kind, colour = "paper", rng.uniform(200, 250, 3)
    elif pick < 0.8:  # a hand reaching for the dice: skin tones
        kind = "hand"
        colour = np.array([120, 150, 200]) * rng.uniform(0.45, 1.15) + rng.normal(0, 8, 3)
    else:  # a box lid, a rule book
        kind, colour = "lid", rng.uniform(30, 200, 3)
    return Occluder(kind, direction, offset, depth, half_width, _floats(colour))


def _floats(colour: np.ndarray | tuple[int, ...] | tuple[float, ...]) -> BGR:
    b, g, r = (float(c) for c in colour)
    return b, g, r


# ----------------------------------------------------------------------------------------
# Clutter, light and the camera's finish


def _sample_clutter(
    rng: np.random.Generator,
    root: int,
    occupied: list[tuple[float, float, float]],
    width: int,
    height: int,
    base_size: float,
    options: SceneOptions,
) -> tuple[ClutterItem, ...]:
    """Clutter in free spots: `occupied` holds (x, y, radius) of what it keeps off."""
    if options.clutter <= 0 or rng.random() >= options.clutter:
        return ()
    items = []
    for k in range(int(rng.integers(1, 5))):
        spot = _free_spot(rng, occupied, width, height, base_size * 2.5)
        if spot is None:
            break
        kind = CLUTTER_KINDS[int(rng.integers(0, len(CLUTTER_KINDS)))]
        items.append(ClutterItem(kind, *spot, base_size, part_seed(root, "clutter.item", k)))
    return tuple(items)


def _free_spot(
    rng: np.random.Generator,
    occupied: list[tuple[float, float, float]],
    width: int,
    height: int,
    clearance: float,
) -> tuple[float, float] | None:
    for _ in range(30):
        cx, cy = float(rng.uniform(0, width)), float(rng.uniform(0, height))
        if all(math.hypot(cx - x, cy - y) > clearance + s for x, y, s in occupied):
            return cx, cy
    return None


def _sample_light(rng: np.random.Generator, root: int, options: SceneOptions) -> Light:
    d = rng.normal(0, 1, 2)
    d /= float(np.linalg.norm(d)) + 1e-6
    direction = (float(d[0]), float(d[1]))
    darkness = float(rng.uniform(0.2, 0.45))
    if options.default_light:
        return Light(True, direction, 0.0, darkness)
    return Light(
        default=False,
        direction=direction,
        shadow_length=float(rng.uniform(0.05, 0.5)),
        shadow_darkness=darkness,
        gain=float(rng.uniform(0.65, 1.15)),
        ramp_angle=float(rng.uniform(0, 2 * math.pi)),
        ramp=float(rng.uniform(0, 0.5)),
        vignette=float(rng.uniform(0, 0.35)),
        cast=_floats(1 + rng.normal(0, 0.05, 3)),
        seed=part_seed(root, "light.unevenness"),
    )


def _sample_finish(rng: np.random.Generator, root: int, options: SceneOptions) -> Finish:
    default = options.default_light
    chosen_blur = 0.0 if rng.random() < 0.5 else float(rng.uniform(0.3, 1.6))
    blur = options.blur if options.blur is not None else (0.0 if default else chosen_blur)
    moving = rng.random() < 0.12
    chosen_motion = float(rng.uniform(3, 14)) if moving and not default else 0.0
    motion = options.motion_blur if options.motion_blur is not None else chosen_motion
    chosen_noise = 0.0 if default else float(rng.uniform(0, 7))
    noise = options.noise if options.noise is not None else chosen_noise
    chosen_quality = None if default else int(rng.integers(35, 96))
    quality = options.jpeg_quality if options.jpeg_quality is not None else chosen_quality
    return Finish(
        blur=float(blur),
        motion_length=float(motion),
        motion_angle=float(rng.uniform(0, 180)),
        noise=float(noise),
        noise_seed=part_seed(root, "finish.noise"),
        jpeg_quality=quality,
    )
