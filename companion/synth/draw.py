"""Drawing: a `SceneDescription` in, the picture and its labels out, with no random
choice left (textures come from the seeds the description holds).

Order: the table, clutter, the dice's cast shadows, the dice far to near (so nearer dice
cover the side faces of those behind them), cards and hands over hidden dice, then the
light and the camera's finish."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from .clutter import draw_clutter
from .description import Die, SceneDescription
from .dice import DieShape, die_shape, draw_die, smear
from .finish import apply_finish, apply_light
from .labels import RenderedDie
from .surfaces import draw_surface
from .texture import colour_tuple, fill


def draw_scene(scene: SceneDescription) -> tuple[np.ndarray, list[RenderedDie]]:
    """The BGR uint8 picture of `scene` and its dice, in the order they were asked for."""
    h, w = scene.height, scene.width
    img = draw_surface(scene.table.surface, np.random.default_rng(scene.table.seed), h, w)
    shadow = np.zeros((h, w), np.float32)
    for item in scene.clutter:
        draw_clutter(item.kind, item.seed, img, shadow, item.cx, item.cy, item.scale)
    order = _far_to_near(scene)
    shapes = {die.index: die_shape(die, scene.camera) for die in order}
    _cast_shadows(img, shadow, scene, shapes)
    labels: dict[int, RenderedDie] = {}
    for die in order:
        shape = shapes[die.index]
        if scene.tumbling is not None:
            layer = img.copy()
            draw_die(layer, die, shape)
            motion = np.random.default_rng([scene.tumbling.seed, die.index])
            smear(motion, img, layer, shape.hull, die.side * scene.tumbling.strength)
        else:
            draw_die(img, die, shape)
        labels[die.index] = _label(die, shape, scene)
    for die in order:
        if die.occluder is not None:  # a card lies over about half of the die
            sheet = _occlude(img, die, labels[die.index])
            _mark_covered(labels, shapes, sheet, w, h)
    img = apply_finish(apply_light(img, scene.light), scene.finish)
    return img, [labels[i] for i in sorted(labels)]


def _far_to_near(scene: SceneDescription) -> list[Die]:
    vx, vy = scene.camera.vanish
    if scene.camera.tilt >= 1:
        return sorted(scene.dice, key=lambda d: -((d.cy - vy) ** 2))
    return sorted(scene.dice, key=lambda d: -math.hypot(d.cx - vx, d.cy - vy))


def _cast_shadows(
    img: np.ndarray, shadow: np.ndarray, scene: SceneDescription, shapes: dict[int, DieShape]
) -> None:
    """Cast shadows fall on the table before the dice stand on it."""
    light = scene.light
    if light.shadow_length > 0:
        direction = np.array(light.direction, np.float32)
        for die in scene.dice:
            offset = direction * die.side * light.shadow_length
            fill(shadow, shapes[die.index].hull + offset, 1.0)
    if shadow.any():
        soft = cv2.GaussianBlur(shadow, (0, 0), max(1.0, scene.base_size * 0.08))
        img *= (1 - light.shadow_darkness * np.clip(soft, 0, 1))[..., None]


def _label(die: Die, shape: DieShape, scene: SceneDescription) -> RenderedDie:
    x0, y0 = shape.hull.min(axis=0)
    x1, y1 = shape.hull.max(axis=0)
    reason = "tumbling" if scene.tumbling is not None else die.state
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
    )


def _occlude(img: np.ndarray, die: Die, label: RenderedDie) -> np.ndarray:
    """Lay the die's occluder (card, sheet, hand, lid) over about half of it; returns its
    outline."""
    cover = die.occluder
    assert cover is not None
    d = np.array([math.cos(cover.direction), math.sin(cover.direction)])
    n = np.array([-d[1], d[0]])
    edge = np.array([label.cx, label.cy]) + d * label.side * cover.offset
    depth, half_width = label.side * cover.depth, label.side * cover.half_width
    sheet = np.array(
        [
            edge + n * half_width,
            edge - n * half_width,
            edge - n * half_width + d * depth,
            edge + n * half_width + d * depth,
        ]
    )
    fill(img, sheet, cover.colour)
    outline = colour_tuple(np.array(cover.colour) * 0.8)
    cv2.polylines(img, [(sheet * 4).astype(np.int32)], True, outline, 1, cv2.LINE_AA, 2)
    return sheet


def _mark_covered(
    labels: dict[int, RenderedDie],
    shapes: dict[int, DieShape],
    sheet: np.ndarray,
    width: int,
    height: int,
) -> None:
    """Any die whose top face the sheet covers by a fifth or more becomes unreadable."""
    sheet_mask = np.zeros((height, width), np.uint8)
    cv2.fillPoly(sheet_mask, [sheet.astype(np.int32)], 1)
    for i, label in labels.items():
        top_mask = np.zeros((height, width), np.uint8)
        cv2.fillPoly(top_mask, [shapes[i].top.astype(np.int32)], 1)
        area = int(top_mask.sum())
        if area and label.value is not None and (top_mask & sheet_mask).sum() >= 0.2 * area:
            labels[i] = dataclasses.replace(label, value=None, reason="hidden")
