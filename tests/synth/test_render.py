"""The synthetic scene renderer (companion.synth): determinism, labels that match the pixels, pip layouts,
dice sets, touching, unreadable, tumbling and translucent dice."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from companion.cli import game_dice_set
from companion.rules.registry import standard_dice_sets
from companion.synth import (
    SURFACES,
    DieSpec,
    pip_layout,
    render_die_crop,
    render_roll_clip,
    render_scene,
    sample_scene,
)
from companion.vision.colour import DiceSet
from companion.vision.types import BASIC_COLOURS
from tests.tiny_game import tiny_game_registered


def test_same_seed_same_scene_and_labels() -> None:
    a_img, a_dice = render_scene(np.random.default_rng(42), 320, 240)
    b_img, b_dice = render_scene(np.random.default_rng(42), 320, 240)
    assert np.array_equal(a_img, b_img)
    assert a_dice == b_dice
    c_img, _ = render_scene(np.random.default_rng(43), 320, 240)
    assert not np.array_equal(a_img, c_img)


@pytest.mark.parametrize("surface", SURFACES)
def test_every_surface_renders_dice_inside_the_frame(surface: str) -> None:
    rng = np.random.default_rng(hash(surface) % 1000)
    image, dice = render_scene(rng, 400, 300, surface=surface, n_dice=4, size=40)
    assert image.shape == (300, 400, 3) and image.dtype == np.uint8
    assert len(dice) == 4
    for die in dice:
        x0, y0, x1, y1 = die.box
        assert 0 <= x0 < die.cx < x1 <= 400 and 0 <= y0 < die.cy < y1 <= 300
        assert 20 <= die.side <= 70
        assert die.value is None or 1 <= die.value <= 6
        assert die.body in BASIC_COLOURS


@pytest.mark.parametrize("value", range(1, 7))
def test_pip_layouts_have_value_pips_and_quarter_turn_orientations(value: int) -> None:
    first, second = pip_layout(value, 0), pip_layout(value, 1)
    assert len(first) == len(second) == value
    assert len(set(first)) == value
    turned = {(-row, col) for col, row in first}  # a quarter turn of the face
    assert turned == set(second)
    if value in (2, 3, 6):
        assert set(first) != set(second)  # these faces have two orientations


@pytest.mark.parametrize("value", range(1, 7))
def test_rendered_top_face_shows_value_pips(value: int) -> None:
    """Count the dark blobs on a white die seen straight from above."""
    rng = np.random.default_rng(value)
    image, dice = render_scene(
        rng,
        300,
        300,
        dice=[DieSpec(value, "white", "black")],
        size=120,
        light="default",
        surface="felt",
        camera_tilt=0.0,
        clutter=0.0,
    )
    die = dice[0]
    assert die.value == value
    mask = np.zeros(image.shape[:2], np.uint8)
    corners = cv2.boxPoints(((die.cx, die.cy), (die.side * 0.8, die.side * 0.8), die.angle))
    cv2.fillPoly(mask, [corners.astype(np.int32)], 1)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    dark = ((grey < 100) & (mask > 0)).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    blobs = [s for s in stats[1:] if s[cv2.CC_STAT_AREA] > 30]
    assert len(blobs) == value


@pytest.mark.parametrize("set_name", sorted(standard_dice_sets()))
def test_dice_set_is_rendered_in_order_with_given_values(set_name: str) -> None:
    values = [6, 1, 5, 2, 4, 3][: len(standard_dice_sets()[set_name])]
    _, dice = render_scene(np.random.default_rng(7), 640, 480, dice_set=set_name, values=values)
    assert [d.body for d in dice] == list(standard_dice_sets()[set_name])
    assert [d.value for d in dice] == values  # given dice are never made unreadable


def test_touching_dice_lie_flush() -> None:
    _, dice = render_scene(
        np.random.default_rng(3),
        640,
        480,
        n_dice=6,
        size=50,
        touching=1.0,
        unreadable=0.0,
        camera_tilt=0.0,
    )
    gaps = [
        math.hypot(a.cx - b.cx, a.cy - b.cy) / ((a.side + b.side) / 2)
        for a, b in zip(dice, dice[1:], strict=False)
    ]
    assert len(dice) >= 4
    assert sum(1 for g in gaps if g < 1.25) >= len(gaps) - 1


def test_unreadable_dice_are_labelled_none_with_a_reason() -> None:
    _, dice = render_scene(np.random.default_rng(5), 640, 480, n_dice=8, size=40, unreadable=1.0)
    assert dice and all(d.value is None for d in dice)
    assert {d.reason for d in dice} <= {"cocked", "hidden"}


def test_tumbling_dice_are_unreadable() -> None:
    _, dice = render_scene(np.random.default_rng(6), 320, 240, dice_set="qwixx", tumbling=True)
    assert len(dice) == 6 and all(d.value is None and d.reason == "tumbling" for d in dice)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="values for a set of 6"):
        render_scene(np.random.default_rng(0), dice_set="qwixx", values=[1, 2])
    with pytest.raises(ValueError, match="unknown body colour"):
        render_scene(np.random.default_rng(0), dice=[(1, "mauve", None)])
    with pytest.raises(ValueError, match="unknown surface"):
        render_scene(np.random.default_rng(0), surface="marble")
    with pytest.raises(ValueError, match="translucent chance -0.1 is not 0-1"):
        render_scene(np.random.default_rng(0), translucent=-0.1)
    with pytest.raises(ValueError, match="clearness 1.5 is not 0-1"):
        render_scene(np.random.default_rng(0), dice=[DieSpec(3, "red", "white", clear=1.5)])


@pytest.mark.parametrize("value", [1, 4, 6, None])
def test_die_crop_is_square_and_deterministic(value: int | None) -> None:
    a = render_die_crop(np.random.default_rng(9), value, "red", "white", 48)
    b = render_die_crop(np.random.default_rng(9), value, "red", "white", 48)
    assert a.shape == (48, 48, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    # the die's body colour dominates the middle of the crop
    middle = a[16:32, 16:32].reshape(-1, 3).astype(int)
    reddish = (middle[:, 2] > middle[:, 1] + 30) & (middle[:, 2] > middle[:, 0] + 30)
    if value is not None:
        assert reddish.mean() > 0.3


def test_roll_clip_tumbles_then_settles_on_one_table() -> None:
    frames = render_roll_clip(
        np.random.default_rng(2),
        160,
        120,
        frames_rolling=3,
        frames_still=2,
        dice_set="sixto",
        values=[1, 2, 3, 4, 5, 6],
        size=18,  # room for all six in 160x120
    )
    assert len(frames) == 5
    assert all(d.value is None for _, dice in frames[:3] for d in dice)
    assert [d.value for d in frames[3][1]] == [1, 2, 3, 4, 5, 6]
    # the table does not move: the still frames differ only by a little sensor noise
    still_a, still_b = (f[0].astype(int) for f in frames[3:])
    assert np.abs(still_a - still_b).mean() < 3
    assert np.abs(frames[0][0].astype(int) - still_a).mean() > np.abs(still_a - still_b).mean()


def _top_face_brightness(surface: str, clear: float) -> float:
    image, dice = render_scene(
        np.random.default_rng(7),
        300,
        300,
        dice=[DieSpec(1, "red", "white", clear=clear)],
        size=120,
        light="default",
        surface=surface,
        camera_tilt=0.0,
        clutter=0.0,
    )
    die = dice[0]
    assert die.value == 1  # see-through plastic leaves the die readable
    mask = np.zeros(image.shape[:2], np.uint8)
    corners = cv2.boxPoints(((die.cx, die.cy), (die.side * 0.8, die.side * 0.8), die.angle))
    cv2.fillPoly(mask, [corners.astype(np.int32)], 1)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return float(np.median(grey[mask > 0]))


def test_a_translucent_die_shows_the_table_through_its_body() -> None:
    opaque = _top_face_brightness("white", 0.0) - _top_face_brightness("dark_cloth", 0.0)
    clear = _top_face_brightness("white", 0.7) - _top_face_brightness("dark_cloth", 0.7)
    assert abs(opaque) < 5
    assert clear > 25


def test_translucent_chance_changes_only_the_dice_plastic() -> None:
    plain = sample_scene(11, 320, 240, n_dice=6)
    every = sample_scene(11, 320, 240, n_dice=6, translucent=1.0)
    assert all(d.clear == 0 for d in plain.dice) and all(d.clear > 0 for d in every.dice)
    see_through = [dataclasses.replace(d, clear=0.0, under=None) for d in every.dice]
    assert tuple(see_through) == plain.dice
    assert (every.table, every.camera, every.light, every.clutter) == (
        plain.table,
        plain.camera,
        plain.light,
        plain.clutter,
    )


def test_a_registered_games_dice_set_is_rendered_from_the_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The renderer took only the names of the shipped sets (calibration/<name>-default.json):
    a game registered without one could not be rendered. It takes the set the registry
    gives, as `companion read --dice-set` does (cli.game_dice_set): the renderer knows no
    games, the wiring hands it the set."""
    with tiny_game_registered(monkeypatch) as tiny:
        dice_set = game_dice_set(tiny)
    assert isinstance(dice_set, DiceSet) and dice_set.name == tiny
    values = [6, 1, 5, 2, 4, 3]
    _, dice = render_scene(np.random.default_rng(7), 640, 480, dice_set=dice_set, values=values)
    assert [d.body for d in dice] == list(standard_dice_sets()["qwixx"])
    assert [d.value for d in dice] == values
