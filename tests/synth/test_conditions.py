"""The webcam conditions the held-out photos show: greyscale and near-infrared sensors,
fisheye lenses and vignetting, dice in a dish, tray or cup, strong glare, piles, dice of
15-250 px. Each is part of the scene description with its own child seed."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from companion.synth import DieSpec, SceneKeywords, draw_scene, render_scene, sample_scene
from companion.synth.description import Face, Glare, Lens
from companion.synth.dice import glare_hides_a_pip
from companion.synth.lens import distort_image, distort_points

CONDITIONS: list[SceneKeywords] = [
    {"greyscale": 1.0},
    {"infrared": 1.0},
    {"fisheye": 1.0},
    {"vignetting": 1.0},
    {"container": 1.0},
    {"strong_glare": 1.0},
    {"pile": 1.0},
]


@pytest.mark.parametrize(
    ("condition", "part"),
    [
        ({"greyscale": 1.0}, "sensor"),
        ({"infrared": 1.0}, "sensor"),
        ({"fisheye": 1.0}, "lens"),
        ({"vignetting": 1.0}, "lens"),
    ],
)
def test_a_camera_condition_changes_only_its_own_part(condition: SceneKeywords, part: str) -> None:
    plain = sample_scene(31, 320, 240)
    changed = sample_scene(31, 320, 240, **condition)
    assert getattr(changed, part) != getattr(plain, part)
    assert dataclasses.replace(changed, **{part: getattr(plain, part)}) == plain


def test_a_lamp_changes_only_the_dice_tops() -> None:
    plain = sample_scene(32, 320, 240, n_dice=6)
    lit = sample_scene(32, 320, 240, n_dice=6, strong_glare=1.0)
    assert lit.lamp is not None and plain.lamp is None
    unlit = [
        dataclasses.replace(d, top=dataclasses.replace(d.top, flare=None, sheen=0.0))
        for d in lit.dice
    ]
    assert tuple(unlit) == plain.dice
    assert dataclasses.replace(lit, lamp=None, dice=plain.dice) == plain


@pytest.mark.parametrize("condition", CONDITIONS, ids=lambda c: next(iter(c)))
def test_labels_say_why_a_die_is_unreadable(condition: SceneKeywords) -> None:
    for seed in range(3):
        eight_dice: SceneKeywords = {"n_dice": 8, **condition}
        image, dice = render_scene(40 + seed, 480, 360, **eight_dice)
        assert image.shape == (360, 480, 3) and dice
        for die in dice:
            assert (die.value is None) == bool(die.reason), die
            assert 0.0 <= die.visible <= 1.0
            assert die.visible >= 0.8 or die.value is None, die
            x0, y0, x1, y1 = die.box
            assert 0 <= x0 <= die.cx <= x1 <= 480 and 0 <= y0 <= die.cy <= y1 <= 360


@pytest.mark.parametrize("condition", [{"greyscale": 1.0}, {"infrared": 1.0}])
def test_greyscale_and_infrared_pictures_are_grey(condition: SceneKeywords) -> None:
    image, _ = render_scene(5, 320, 240, **condition)
    assert np.array_equal(image[..., 0], image[..., 1])
    assert np.array_equal(image[..., 1], image[..., 2])


def _top_face(image: np.ndarray, die: object) -> np.ndarray:
    cx, cy, side, angle = (getattr(die, k) for k in ("cx", "cy", "side", "angle"))
    mask = np.zeros(image.shape[:2], np.uint8)
    corners = cv2.boxPoints(((cx, cy), (side * 0.8, side * 0.8), angle))
    cv2.fillPoly(mask, [corners.astype(np.int32)], 1)
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)[mask > 0]


def test_infrared_shows_coloured_plastic_light_and_carbon_black_dark() -> None:
    options: SceneKeywords = {
        "dice": [DieSpec(5, "red", "white"), DieSpec(5, "black", "white")],
        "size": 90,
        "light": "default",
        "surface": "felt",
        "camera_tilt": 0.0,
        "touching": 0.0,
    }
    in_infrared: SceneKeywords = {**options, "infrared": 1.0}
    colour, truth = render_scene(3, 480, 240, **options)
    infrared, _ = render_scene(3, 480, 240, **in_infrared)
    red, black = truth
    # in colour a red die is darker than its white pips; in the infrared its plastic is
    # light and the pips turn dark to keep their contrast
    assert np.median(_top_face(colour, red)) < 110
    assert np.median(_top_face(infrared, red)) > 150
    assert np.percentile(_top_face(infrared, red), 3) < 90
    # carbon-black plastic stays dark, its white pips bright
    assert np.median(_top_face(infrared, black)) < 100
    assert np.percentile(_top_face(infrared, black), 97) > 170


def test_the_lens_moves_labels_where_it_moves_pixels() -> None:
    lens = Lens(barrel=0.5, vignette=0.0, falloff=2.0, centre=(161.0, 118.0))
    for point in ((30.0, 25.0), (250.0, 200.0), (200.0, 60.0)):
        dot = np.zeros((240, 320, 3), np.float32)
        cv2.circle(dot, (int(point[0]), int(point[1])), 2, (255, 255, 255), -1)
        seen = distort_image(dot, lens)[..., 0]
        ys, xs = np.nonzero(seen > 60)
        moved = distort_points(np.array([point]), lens, 320, 240)[0]
        assert math.hypot(xs.mean() - moved[0], ys.mean() - moved[1]) < 1.0
    # the corners stay, the middle is magnified: points move away from the centre
    corner = distort_points(np.array([[0.0, 0.0]]), Lens(0.5, 0.0, 2.0, (160.0, 120.0)), 320, 240)
    assert np.allclose(corner, [[0.0, 0.0]], atol=1e-3)


def test_fisheye_labels_follow_the_dice() -> None:
    plain, plain_dice = render_scene(12, 640, 480, n_dice=6, size=50)
    bent, bent_dice = render_scene(12, 640, 480, n_dice=6, size=50, fisheye=1.0)
    assert len(bent_dice) <= len(plain_dice) and bent_dice
    moved = [
        math.hypot(a.cx - b.cx, a.cy - b.cy) for a, b in zip(plain_dice, bent_dice, strict=False)
    ]
    assert max(moved) > 3
    for die in bent_dice:  # each label still sits on its die's body colour
        if die.value is not None and die.body not in ("white", "grey"):
            values = _top_face(bent, die)
            assert values.size > 20


def test_vignetting_darkens_the_corners() -> None:
    plain, _ = render_scene(8, 320, 240, n_dice=0, clutter=0.0, noise=0.0, jpeg_quality=95)
    dark, _ = render_scene(
        8, 320, 240, n_dice=0, clutter=0.0, noise=0.0, jpeg_quality=95, vignetting=1.0
    )
    grey_plain = cv2.cvtColor(plain, cv2.COLOR_BGR2GRAY).astype(float)
    grey_dark = cv2.cvtColor(dark, cv2.COLOR_BGR2GRAY).astype(float)
    corner = (slice(0, 20), slice(0, 20))
    middle = (slice(110, 130), slice(150, 170))
    ratio_plain = grey_plain[corner].mean() / grey_plain[middle].mean()
    ratio_dark = grey_dark[corner].mean() / grey_dark[middle].mean()
    assert ratio_dark < 0.8 * ratio_plain


@pytest.mark.parametrize("kind", ["dish", "tray", "cup"])
def test_dice_in_a_container_lie_inside_its_rim(kind: str) -> None:
    for seed in range(3):
        scene = sample_scene(70 + seed, 640, 480, container=1.0, containers=(kind,), n_dice=6)
        c = scene.container
        assert c is not None and c.kind == kind
        image, dice = draw_scene(scene)
        assert dice
        for die in dice:
            q = (abs(die.cx - c.cx) / c.rx) ** c.roundness + (
                abs(die.cy - c.cy) / c.ry
            ) ** c.roundness
            assert q <= 1.0, (kind, seed, die)


def test_a_container_shades_its_floor_by_the_wall() -> None:
    scene = sample_scene(
        81, 640, 480, container=1.0, containers=("dish",), n_dice=0, light="default"
    )
    assert scene.container is not None
    with_dish, _ = draw_scene(scene)
    without, _ = draw_scene(dataclasses.replace(scene, container=None))
    c = scene.container
    rim = np.zeros((480, 640), np.uint8)
    centre = (int(c.cx), int(c.cy))
    cv2.ellipse(rim, centre, (int(c.rx), int(c.ry)), 0, 0, 360, 1, 3)
    # the rim is drawn and the floor is a different surface from the table
    assert np.abs(with_dish.astype(int) - without.astype(int))[rim > 0].mean() > 10


def test_a_blown_flare_over_a_pip_makes_the_die_unreadable() -> None:
    spot = Glare(x=0.5, y=0.5, axes=(0.15, 0.15), angle=0.0, strength=300.0, hardness=0.9)
    one = Face(value=1, orientation=0, pip_spacing=0.27, pip_radius=0.09, seed=1, flare=spot)
    assert glare_hides_a_pip(one)
    four = dataclasses.replace(one, value=4)  # no pip in the middle of a four
    assert not glare_hides_a_pip(four)
    dim = dataclasses.replace(one, flare=dataclasses.replace(spot, strength=150.0))
    assert not glare_hides_a_pip(dim)


def test_strong_glare_blows_out_parts_of_the_tops() -> None:
    blown = glare = 0
    for seed in range(6):
        image, dice = render_scene(90 + seed, 480, 360, n_dice=8, strong_glare=1.0, jpeg_quality=95)
        for die in dice:
            if die.reason in ("", "glare"):
                blown += int((_top_face(image, die) >= 250).sum() > 3)
            glare += die.reason == "glare"
    assert blown >= 6 and glare >= 1


def test_a_pile_has_dice_on_dice_and_marks_the_covered_ones() -> None:
    overlapping = hidden = readable = 0
    for seed in range(4):
        scene = sample_scene(60 + seed, 640, 480, pile=1.0, n_dice=10, size=50)
        assert any(d.level == 1 for d in scene.dice)
        _, dice = draw_scene(scene)
        for i, a in enumerate(dice):
            overlapping += any(
                math.hypot(a.cx - b.cx, a.cy - b.cy) < 0.9 * (a.side + b.side) / 2
                for b in dice[i + 1 :]
            )
        hidden += sum(d.reason == "hidden" for d in dice)
        readable += sum(d.value is not None for d in dice)
    assert overlapping >= 4 and hidden >= 4 and readable >= 8


def test_dice_from_15_to_250_px() -> None:
    sides = [
        die.side
        for seed in range(150)
        for die in sample_scene(seed, 1280, 720, sizes=(15, 250), n_dice=2, clutter=0.0).dice
    ]
    assert min(sides) < 18 and max(sides) > 220
    assert all(13 <= s <= 280 for s in sides)
    _, big = render_scene(3, 1280, 720, size=240, n_dice=1, camera_tilt=0.0, clutter=0.0)
    assert len(big) == 1 and 200 < big[0].side < 290
