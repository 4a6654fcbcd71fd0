"""Drawing: a `SceneDescription` in, the picture and its labels out, with no random
choice left (textures come from the seeds the description holds).

Order: the table, clutter, a container, a lamp's gloss on the table (for a near-infrared
sensor then the table's infrared look), the dice level by level (the table's dice, then
those lying on them: each level's cast shadows first, its dice far to near, so nearer
dice cover the side faces of those behind them), the container's near wall over what
lies behind it, cards and hands over hidden dice; then the light, the lens, the sensor
and the camera's finish. Labels follow the dice through the lens."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from .clutter import draw_clutter
from .container import Front, draw_container
from .description import Die, Lamp, SceneDescription
from .dice import DieShape, FaceTexture, die_shape, draw_die, glare_hides_a_pip, smear
from .distractors import RenderedOther, draw_distractor, label_of
from .fancy_dice import texture_for
from .finish import apply_finish, apply_light
from .labels import RenderedDie
from .lens import distort_image, distort_points
from .sensor import cover_colour, die_colours, nir_of_scene, to_sensor
from .surfaces import draw_surface
from .texture import colour_tuple, fill
from .visibility import covered_share, inside_share

HIDDEN_BELOW = 0.8  # a die with less of its top face visible is unreadable


def draw_scene(scene: SceneDescription) -> tuple[np.ndarray, list[RenderedDie]]:
    """The BGR uint8 picture of `scene` and its dice, in the order they were asked for
    (a die the lens pushes out of the picture is left out)."""
    img, table_shadow, front = _draw_table(scene)
    order = _draw_order(scene)
    shapes = {die.index: die_shape(die, scene.camera, 1.0 + 0.1 * die.level) for die in order}
    for level in sorted({0} | {d.level for d in order}):
        dice = [d for d in order if d.level == level]
        shadow = table_shadow if level == 0 else np.zeros_like(table_shadow)
        _cast_shadows(img, shadow, scene, [(d, shapes[d.index]) for d in dice])
        for die in dice:
            _draw_one(img, die, shapes[die.index], scene)
    if front is not None:
        img = img * (1 - front.mask[..., None]) + front.pixels
    sheets = [_occlude(img, die, shapes[die.index], scene) for die in order if die.occluder]
    labels = _labels(scene, order, shapes, sheets, front)
    img = apply_light(img, scene.light)
    if scene.lens is not None:
        img = distort_image(img, scene.lens)
        labels = _through_lens(labels, shapes, scene)
    img = to_sensor(img, scene.sensor)
    mono = scene.sensor.kind != "colour"
    img = apply_finish(img, scene.finish, mono, scene.sensor.noise_gain)
    return img, [labels[i] for i in sorted(labels)]


def _draw_table(scene: SceneDescription) -> tuple[np.ndarray, np.ndarray, Front | None]:
    """The table with its clutter (and the shadow the clutter casts, applied with the
    dice's), container and gloss, as the sensor sees them."""
    h, w = scene.height, scene.width
    img = draw_surface(scene.table.surface, np.random.default_rng(scene.table.seed), h, w)
    shadow = np.zeros((h, w), np.float32)
    for item in scene.clutter:
        draw_clutter(item.kind, item.seed, img, shadow, item.cx, item.cy, item.scale)
    front = None
    if scene.container is not None:
        front = draw_container(img, scene.container, scene.light.direction)
    for other in scene.distractors:  # the fancy style's things that are not d6 dice
        draw_distractor(img, shadow, other, scene.camera, scene.light.direction)
    if scene.lamp is not None:
        _gloss(img, scene.lamp)
    if scene.sensor.kind == "ir":
        img = nir_of_scene(img)
        if front is not None:
            front = Front(front.mask, nir_of_scene(front.pixels) * front.mask[..., None])
    return img, shadow, front


def _gloss(img: np.ndarray, lamp: Lamp) -> None:
    """A glossy table mirrors the lamp: a broad bright patch about its mirror point."""
    if lamp.table_gloss <= 0:
        return
    h, w = img.shape[:2]
    yy, xx = np.ogrid[0:h, 0:w]
    r2 = ((xx - lamp.x) ** 2 + (yy - lamp.y) ** 2) / (2 * (0.8 * lamp.reach) ** 2)
    img += (lamp.table_gloss * lamp.strength * np.exp(-r2)).astype(np.float32)[..., None]


def _draw_order(scene: SceneDescription) -> list[Die]:
    """Far to near: by distance from the vanishing point, nearest to it drawn last."""
    vx, vy = scene.camera.vanish
    if scene.camera.tilt >= 1:
        return sorted(scene.dice, key=lambda d: -((d.cy - vy) ** 2))
    return sorted(scene.dice, key=lambda d: -math.hypot(d.cx - vx, d.cy - vy))


def _cast_shadows(
    img: np.ndarray, shadow: np.ndarray, scene: SceneDescription, dice: list[tuple[Die, DieShape]]
) -> None:
    """Cast shadows fall on what lies under the dice before the dice stand there (a
    near-infrared camera's own LEDs cast short ones)."""
    light = scene.light
    length = light.shadow_length * (0.3 if scene.sensor.kind == "ir" else 1.0)
    if length > 0:
        direction = np.array(light.direction, np.float32)
        for die, shape in dice:
            fill(shadow, shape.hull + direction * die.side * length, 1.0)
    if shadow.any():
        soft = cv2.GaussianBlur(shadow, (0, 0), max(1.0, scene.base_size * 0.08))
        img *= (1 - light.shadow_darkness * np.clip(soft, 0, 1))[..., None]


def _draw_one(img: np.ndarray, die: Die, shape: DieShape, scene: SceneDescription) -> None:
    colours = die_colours(die, scene.sensor)
    texture: FaceTexture | None = None
    if die.look is not None:  # a fancy die (the default style has none)
        texture = texture_for(die.look, scene.sensor.kind == "ir")
    if scene.tumbling is None:
        draw_die(img, die, shape, colours, texture)
        return
    layer = img.copy()
    draw_die(layer, die, shape, colours, texture)
    motion = np.random.default_rng([scene.tumbling.seed, die.index])
    smear(motion, img, layer, shape.hull, die.side * scene.tumbling.strength)


def _occlude(img: np.ndarray, die: Die, shape: DieShape, scene: SceneDescription) -> np.ndarray:
    """Lay the die's occluder (card, sheet, hand, lid) over about half of it; returns its
    outline."""
    cover = die.occluder
    assert cover is not None
    side = shape.side
    d = np.array([math.cos(cover.direction), math.sin(cover.direction)])
    n = np.array([-d[1], d[0]])
    edge = np.array([shape.cx, shape.cy]) + d * side * cover.offset
    depth, half_width = side * cover.depth, side * cover.half_width
    sheet = np.array(
        [
            edge + n * half_width,
            edge - n * half_width,
            edge - n * half_width + d * depth,
            edge + n * half_width + d * depth,
        ]
    )
    colour = cover_colour(cover.kind, cover.colour, scene.sensor)
    fill(img, sheet, colour)
    outline = colour_tuple(np.array(colour) * 0.8)
    cv2.polylines(img, [(sheet * 4).astype(np.int32)], True, outline, 1, cv2.LINE_AA, 2)
    return sheet


# ----------------------------------------------------------------------------------------
# Labels


def other_labels(scene: SceneDescription) -> list[RenderedOther]:
    """Where the things that are not d6 dice (the fancy style's distractors) lie in the
    picture, through the lens; one whose centre leaves the picture is left out."""
    labels = [label_of(d, scene.camera, scene.width, scene.height) for d in scene.distractors]
    if scene.lens is None:
        return labels
    w, h = scene.width, scene.height
    moved = []
    for label in labels:
        x0, y0, x1, y1 = label.box
        points = np.array([[label.cx, label.cy], [x0, y0], [x1, y1]], np.float32)
        (cx, cy), (a, b), (c, d) = distort_points(points, scene.lens, w, h)
        if 0 <= cx < w and 0 <= cy < h:
            box = (max(0.0, float(a)), max(0.0, float(b)), min(w, float(c)), min(h, float(d)))
            moved.append(dataclasses.replace(label, cx=float(cx), cy=float(cy), box=box))
    return moved


def _labels(
    scene: SceneDescription,
    order: list[Die],
    shapes: dict[int, DieShape],
    sheets: list[np.ndarray],
    front: Front | None,
) -> dict[int, RenderedDie]:
    """Each die's label: its top face as drawn, and how much of it is left to see under
    the dice drawn after it, the cards and the container's near wall."""
    labels = {}
    drawn = sorted(order, key=lambda d: d.level)  # the order the dice were drawn in
    for k, die in enumerate(drawn):
        shape = shapes[die.index]
        later = [shapes[d.index].hull for d in drawn[k + 1 :]]
        hidden = covered_share(shape.top, later + sheets, front.mask if front else None)
        labels[die.index] = _label(die, shape, scene, 1.0 - hidden)
    return labels


def _label(die: Die, shape: DieShape, scene: SceneDescription, visible: float) -> RenderedDie:
    x0, y0 = shape.hull.min(axis=0)
    x1, y1 = shape.hull.max(axis=0)
    reason = "tumbling" if scene.tumbling is not None else die.state
    if not reason and visible < HIDDEN_BELOW:
        reason = "hidden"
    if not reason and glare_hides_a_pip(die.top):
        reason = "glare"
    return RenderedDie(
        cx=shape.cx,
        cy=shape.cy,
        side=float(shape.side),
        angle=float(die.angle % 90.0),
        value=None if reason else die.value,
        body=die.body,
        pips=die.pips,
        box=(
            float(max(0, x0)),
            float(max(0, y0)),
            float(min(scene.width, x1)),
            float(min(scene.height, y1)),
        ),
        reason=reason,
        visible=round(float(visible), 4),
    )


def _through_lens(
    labels: dict[int, RenderedDie], shapes: dict[int, DieShape], scene: SceneDescription
) -> dict[int, RenderedDie]:
    """The labels where the lens shows the dice: centre, side (by the top face's area),
    angle (as the top face's first edge turns), box; a die whose centre leaves the
    picture is left out, one the picture's edge cuts loses what it cuts."""
    assert scene.lens is not None
    w, h = scene.width, scene.height
    out = {}
    for index, label in labels.items():
        shape = shapes[index]
        points = np.concatenate([shape.top, shape.hull, [[shape.cx, shape.cy]]])
        moved = distort_points(points, scene.lens, w, h)
        top, hull, (cx, cy) = moved[:4], moved[4:-1], moved[-1]
        if not (0 <= cx < w and 0 <= cy < h):
            continue
        scale = math.sqrt(max(_area(top), 1e-6) / max(_area(shape.top), 1e-6))
        turn = _edge_angle(top) - _edge_angle(shape.top)
        visible = label.visible * inside_share(top, w, h)
        reason = label.reason or ("hidden" if visible < HIDDEN_BELOW else "")
        (x0, y0), (x1, y1) = hull.min(axis=0), hull.max(axis=0)
        out[index] = dataclasses.replace(
            label,
            cx=float(cx),
            cy=float(cy),
            side=label.side * scale,
            angle=float((label.angle + turn) % 90.0),
            value=None if reason else label.value,
            box=(float(max(0, x0)), float(max(0, y0)), float(min(w, x1)), float(min(h, y1))),
            reason=reason,
            visible=round(float(visible), 4),
        )
    return out


def _area(quad: np.ndarray) -> float:
    return float(abs(cv2.contourArea(quad.astype(np.float32))))


def _edge_angle(quad: np.ndarray) -> float:
    dx, dy = (quad[1] - quad[0]).astype(float)
    return math.degrees(math.atan2(dy, dx))
