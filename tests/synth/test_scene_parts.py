"""The renderer's two halves: sampling a frozen scene description, each part from its own
child seed, and drawing it with no random choice left."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from companion.synth import (
    SURFACES,
    SceneKeywords,
    SceneOptions,
    draw_scene,
    render_scene,
    sample_scene,
)
from companion.synth.surfaces import draw_surface, surface


def test_a_scene_spends_one_draw_of_the_callers_generator() -> None:
    rng = np.random.default_rng(5)
    render_scene(rng, 160, 120, n_dice=4, translucent=1.0, clutter=1.0)
    reference = np.random.default_rng(5)
    reference.integers(0, 2**63)
    assert rng.bit_generator.state == reference.bit_generator.state


def test_a_generator_and_its_draw_give_the_same_scene() -> None:
    seed = int(np.random.default_rng(8).integers(0, 2**63))
    assert sample_scene(np.random.default_rng(8), 200, 150) == sample_scene(seed, 200, 150)


def test_drawing_a_description_twice_gives_the_same_pixels() -> None:
    scene = sample_scene(21, 256, 192, n_dice=5, unreadable=0.5, clutter=1.0, translucent=0.5)
    first, first_dice = draw_scene(scene)
    again, again_dice = draw_scene(scene)
    assert np.array_equal(first, again) and first_dice == again_dice


def test_more_dice_leave_the_first_dice_and_the_table_as_they_were() -> None:
    six = sample_scene(3, 640, 480, n_dice=6, size=40, clutter=0.0)
    seven = sample_scene(3, 640, 480, n_dice=7, size=40, clutter=0.0)
    assert len(six.dice) == 6 and seven.dice[:6] == six.dice
    assert (seven.table, seven.camera, seven.light, seven.finish) == (
        six.table,
        six.camera,
        six.light,
        six.finish,
    )


@pytest.mark.parametrize(
    "change",
    [{"glare": 1.0}, {"unreadable": 1.0}, {"surface": "felt"}, {"blur": 2.0, "noise": 0.0}],
)
def test_one_option_changes_only_its_own_part(change: SceneKeywords) -> None:
    base = sample_scene(17, 320, 240, n_dice=5)
    five_dice: SceneKeywords = {"n_dice": 5, **change}
    changed = sample_scene(17, 320, 240, **five_dice)
    assert changed != base
    # where the dice lie never depends on their looks, the table, the light or the camera
    assert [(d.cx, d.cy, d.side, d.angle) for d in changed.dice] == [
        (d.cx, d.cy, d.side, d.angle) for d in base.dice
    ]
    same_parts = [
        name
        for name in ("camera", "table", "light", "finish", "clutter")
        if getattr(changed, name) == getattr(base, name)
    ]
    assert len(same_parts) >= 4, same_parts


def test_the_keyword_list_matches_the_options() -> None:
    assert set(typing.get_type_hints(SceneKeywords)) == {
        f.name for f in dataclasses.fields(SceneOptions)
    }


def test_every_surface_is_registered_with_a_description() -> None:
    assert SURFACES[:8] == (
        "white",
        "cardboard",
        "wood",
        "felt",
        "dark_cloth",
        "tray",
        "board",
        "stone",
    )
    for kind in SURFACES:
        table = draw_surface(kind, np.random.default_rng(1), 24, 32)
        assert table.shape == (24, 32, 3) and table.dtype == np.float32
    with pytest.raises(ValueError, match="registered twice"):
        surface("wood")(lambda rng, h, w: np.zeros((h, w, 3), np.float32))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sizes": (30.0, 10.0)}, "not a range"),
        ({"light": "neon"}, "unknown light"),
        ({"dice_set": "yahtzee"}, "unknown dice set"),
        ({"glare": 2.0}, "glare chance 2.0 is not 0-1"),
        ({"jpeg_quality": 0}, "JPEG quality 0"),
    ],
)
def test_bad_options_name_the_option(options: SceneKeywords, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_scene(0, **options)


def test_a_bad_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative int"):
        sample_scene(-1)
