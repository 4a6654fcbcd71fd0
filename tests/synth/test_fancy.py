"""The fancy style (companion/synth/fancy.py, issue 22 item 3): it comes only when asked
for, it changes the scenes, its labels are right (boxes in the picture, the value the
pips drawn say), and its things that are not d6 dice are never labelled as dice."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from companion.synth import (
    SURFACES,
    DieSpec,
    draw_scene,
    render_scene,
    render_scene_and_others,
    sample_scene,
)
from companion.synth.description import Distractor, Look, SceneDescription
from companion.synth.distractors import KINDS
from companion.synth.fancy_dice import FINISHES, PIP_STYLES
from companion.synth.fancy_surfaces import FANCY_FLOORS, FANCY_TABLES
from companion.vision.classifier import crop_square
from models.recipe.data import render_scenes

W, H = 320, 240


def test_fancy_0_is_the_default_style_and_fancy_1_is_not() -> None:
    for seed in (1, 2, 3):
        plain = sample_scene(seed, W, H)
        assert all(d.look is None for d in plain.dice) and plain.distractors == ()
        assert sample_scene(seed, W, H, fancy=0.0) == plain
        fancy = sample_scene(seed, W, H, fancy=1.0)
        assert fancy.dice and all(d.look is not None for d in fancy.dice)
        assert 20 <= len(fancy.dice) + len(fancy.distractors) <= 60
        assert fancy.table.surface in FANCY_TABLES
        if fancy.container is not None:
            assert fancy.container.floor.surface in FANCY_FLOORS


def test_a_share_makes_about_that_share_of_scenes_fancy() -> None:
    fancy = [bool(sample_scene(seed, 64, 48, fancy=0.3, n_dice=2).dice[0].look)
             for seed in range(200)]  # fmt: skip
    assert 0.2 < np.mean(fancy) < 0.4


def test_fancy_scenes_show_every_style() -> None:
    finishes, pips, kinds, symbols = set(), set(), set(), 0
    for seed in range(40):
        scene = sample_scene(seed, W, H, fancy=1.0)
        for die in scene.dice:
            assert die.look is not None
            finishes.add(die.look.finish)
            pips.add(die.look.pip_style)
            symbols += bool(die.look.symbol)
        kinds |= {d.kind for d in scene.distractors}
    assert finishes == set(FINISHES) and pips == set(PIP_STYLES) and kinds == set(KINDS)
    assert symbols > 0
    surfaces = {sample_scene(seed, 64, 48, fancy=1.0, n_dice=1).table.surface for seed in range(60)}
    assert surfaces - set(SURFACES)  # surfaces the default style never shows


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_fancy_labels_lie_in_the_picture_and_others_are_not_dice(seed: int) -> None:
    image, dice, others = render_scene_and_others(seed, W, H, fancy=1.0)
    assert image.shape == (H, W, 3) and image.dtype == np.uint8
    assert dice
    for die in dice:
        x0, y0, x1, y1 = die.box
        assert 0 <= x0 < die.cx < x1 <= W and 0 <= y0 < die.cy < y1 <= H
        assert die.side > 4
        assert (die.value is None) == bool(die.reason)
        assert die.value is None or 1 <= die.value <= 6
    for other in others:
        x0, y0, x1, y1 = other.box
        assert 0 <= x0 < other.cx < x1 <= W and 0 <= y0 < other.cy < y1 <= H
        # no die is labelled where a distractor lies
        assert all(math.hypot(d.cx - other.cx, d.cy - other.cy) > 0.4 * d.side for d in dice)


def test_asked_for_dice_stay_dice_in_the_fancy_style() -> None:
    for seed in range(3):
        _, dice, others = render_scene_and_others(
            seed, W, H, fancy=1.0, dice=[DieSpec(3, "red", "white"), DieSpec(5, "blue", "white")]
        )
        assert [(d.value, d.body) for d in dice] == [(3, "red"), (5, "blue")] and others == []
        _, dice, others = render_scene_and_others(seed, W, H, fancy=1.0, n_dice=25)
        assert 15 <= len(dice) <= 25


def test_the_training_scenes_keep_others_as_hard_negatives_never_as_dice() -> None:
    scenes = render_scenes(3, 7, width=W, height=H, fancy=1.0)
    assert sum(len(s.hard) for s in scenes) > 0
    for scene in scenes:
        assert len(scene.dice) == len(scene.values) >= 1
        for cx, cy, _ in scene.hard:
            gaps = np.hypot(scene.dice[:, 0] - cx, scene.dice[:, 1] - cy) / scene.dice[:, 2]
            assert gaps.min() > 0.4
    assert all(len(s.hard) == 0 for s in render_scenes(2, 7, width=W, height=H))


def _one_die(value: int, look: Look, body: tuple[float, float, float], pips: tuple[float, ...],
             tilt: float = 0.0) -> tuple[np.ndarray, SceneDescription]:  # fmt: skip
    """One big flat die of `look` on a plain table under the default light."""
    scene = sample_scene(9, 200, 200, fancy=1.0, n_dice=1, light="default", camera_tilt=tilt)
    die = scene.dice[0]
    top = dataclasses.replace(die.top, value=value, glare=None, flare=None)
    pip_bgr = (float(pips[0]), float(pips[1]), float(pips[2]))
    die = dataclasses.replace(
        die, value=value, cx=100.0, cy=95.0, side=90.0, angle=17.0, state="", level=0, clear=0.0,
        occluder=None, top=top, look=look, body_bgr=body, pip_bgr=pip_bgr,
    )  # fmt: skip
    scene = dataclasses.replace(scene, dice=(die,), distractors=(), container=None)
    image, labels = draw_scene(scene)
    assert labels[0].value == value
    top_face = crop_square(image, labels[0].cx, labels[0].cy, labels[0].side * 0.92, 120,
                           labels[0].angle)  # fmt: skip
    return top_face, scene


def _blobs(mask: np.ndarray, least: int) -> int:
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    return int(sum(stats[k, cv2.CC_STAT_AREA] >= least for k in range(1, count)))


BLUE, GOLD, RED = (128.0, 65.0, 19.0), (55.0, 165.0, 210.0), (40.0, 40.0, 200.0)


@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize(
    ("finish", "style", "pips"),
    [("plain", "paint", RED), ("glitter", "metal", GOLD), ("two_tone", "paint", RED)],
)
def test_the_value_is_the_number_of_pips_drawn(
    value: int, finish: str, style: str, pips: tuple[float, float, float]
) -> None:
    look = Look(finish, (60.0, 120.0, 40.0), style, seed=3)  # second tone: green
    face, _ = _one_die(value, look, BLUE, pips)
    distance = np.linalg.norm(face.astype(np.float32) - np.array(pips, np.float32), axis=2)
    assert _blobs(distance < 70, least=40) == value


@pytest.mark.parametrize("value", range(1, 7))
def test_engraved_pips_are_pits_without_ink_and_still_count(value: int) -> None:
    look = Look("plain", BLUE, "engraved", seed=4)
    face, _ = _one_die(value, look, (200.0, 200.0, 205.0), (200.0, 200.0, 205.0))
    grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY).astype(np.float32)
    body = float(np.median(grey))
    assert _blobs(grey < 0.7 * body, least=15) == value
    # no ink: nothing on the face is of another hue than the body's grey
    assert np.ptp(face.astype(np.int16), axis=2).max() < 40


@pytest.mark.parametrize("face_value", [1, 6])
def test_a_symbol_replaces_the_pips_of_its_face_only(face_value: int) -> None:
    look = Look("plain", BLUE, "paint", "star", face_value, seed=5)
    symbol_face, _ = _one_die(face_value, look, BLUE, RED)
    other = 5 if face_value == 6 else 4
    other_face, _ = _one_die(other, look, BLUE, RED)
    red = (40.0, 40.0, 200.0)

    def inked(face: np.ndarray) -> np.ndarray:
        return np.linalg.norm(face.astype(np.float32) - np.array(red, np.float32), axis=2) < 70

    assert _blobs(inked(symbol_face), least=40) == 1  # one star in place of the pips
    assert _blobs(inked(other_face), least=40) == other


def test_a_distractor_is_drawn_where_its_label_says() -> None:
    scene = sample_scene(9, 200, 200, fancy=1.0, n_dice=1, light="default", camera_tilt=0.0)
    thing = Distractor("d20", 100.0, 100.0, 80.0, 10.0, RED, (240.0, 240.0, 240.0), 20, 1)
    bare = dataclasses.replace(scene, dice=(), distractors=(), container=None)
    with_it = dataclasses.replace(bare, distractors=(thing,))
    before, _ = draw_scene(bare)
    after, _ = draw_scene(with_it)
    changed = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2) > 30
    ys, xs = np.nonzero(changed)
    assert abs(xs.mean() - 100) < 8 and abs(ys.mean() - 100) < 8
    assert 60 < xs.max() - xs.min() < 100


def test_default_scenes_are_the_same_whatever_the_fancy_code_does() -> None:
    """The fancy option left at 0 draws nothing of its own: same pictures as no option."""
    a, dice_a = render_scene(3, W, H)
    b, dice_b = render_scene(3, W, H, fancy=0.0)
    assert np.array_equal(a, b) and dice_a == dice_b
