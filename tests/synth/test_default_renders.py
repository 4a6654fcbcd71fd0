"""The default renders stay byte for byte what they were before the fancy styles came
(issue 22 item 3): a training run in progress resumes from scene caches keyed by seed
(.cache/samples/scenes-COUNT-SEED-TRANSLUCENT.pkl), so with the default options
`models.recipe.data.render_scenes` and `companion.synth.render_scene` must draw the same
pictures and labels as before.

The digests were computed on commit 32c58c2 (before any fancy code): the labels' digest
is exact numbers (any machine); the pictures' digest is the PNG bytes the scene cache
holds, exact on the machine they were computed on (OpenCV's vectorised float code may
round a last bit differently on another CPU: there the pixels are left to
test_fingerprints.py's tolerance and only the labels are checked here).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.synth import SceneKeywords, render_scene
from models.recipe.data import render_scenes

# the machine the picture digests were computed on
PINNED_ON = "x86_64 AMD EPYC numpy 2.4.6 opencv 5.0.0"

SCENE_CASES: dict[str, tuple[int, int, int, SceneKeywords]] = {
    "random": (7, 256, 192, {}),
    "translucent": (8, 256, 192, {"translucent": 0.1}),
    "container": (9, 256, 192, {"container": 1.0, "n_dice": 8}),
    "pile": (10, 256, 192, {"pile": 1.0, "n_dice": 9}),
    "webcam": (11, 256, 192, {"greyscale": 0.5, "infrared": 0.5, "fisheye": 1.0}),
}

# (labels digest, picture digest) per case, from commit 32c58c2
SCENE_DIGESTS = {
    "container": ("2e66f9438b244940", "cb4d9f0d0321af4d"),
    "pile": ("f6645fc7496b15f1", "73b6a7a3d803f832"),
    "random": ("2792d9798461dfbb", "c3000ad17e79ad13"),
    "translucent": ("9f044323a27aa60f", "f7a46afd3bcb8df3"),
    "webcam": ("9b9f3060a7afa016", "2f08c60436d8df43"),
}
# models.recipe.data.render_scenes(2, seed) at 512x384, the training recipe's scenes
RECIPE_SEEDS = (20261129, 20261202)
RECIPE_DIGESTS = {
    20261129: ("9f29d83d4f67f6b3", "c415bfc4987448d0"),
    20261202: ("c0328f83eaa69c9f", "97f80c6f6d2cde3e"),
}


def _cpu() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "?"
    return next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), "?")


def _machine() -> str:
    return f"{platform.machine()} {_cpu()} numpy {np.__version__} opencv {cv2.__version__}"


def _digest(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


def _round(value: object) -> object:
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_round(v) for v in value]
    return value


def scene_digests(name: str) -> tuple[str, str]:
    seed, width, height, options = SCENE_CASES[name]
    image, dice = render_scene(seed, width, height, **options)
    labels = json.dumps(_round([dataclasses.asdict(d) for d in dice]), sort_keys=True)
    ok, png = cv2.imencode(".png", image)
    assert ok
    return _digest(labels), _digest(png.tobytes())


def recipe_digests(seed: int) -> tuple[str, str]:
    scenes = render_scenes(2, seed)
    rows = [[s.dice.tolist(), s.values, s.source, s.hard.tolist()] for s in scenes]
    pictures = b"".join(s.encoded.tobytes() for s in scenes)
    return _digest(json.dumps(_round(rows))), _digest(pictures)


def _check(name: str, got: tuple[str, str], pinned: tuple[str, str]) -> None:
    assert got[0] == pinned[0], f"{name}: the default labels changed ({got[0]})"
    if _machine() != PINNED_ON:
        return  # other CPUs and library builds may round a pixel differently: labels only
    assert got[1] == pinned[1], f"{name}: the default picture changed ({got[1]})"


@pytest.mark.parametrize("name", sorted(SCENE_CASES))
def test_default_scene_is_byte_for_byte_as_before(name: str) -> None:
    _check(name, scene_digests(name), SCENE_DIGESTS[name])


@pytest.mark.parametrize("seed", RECIPE_SEEDS)
def test_training_recipe_scenes_are_byte_for_byte_as_before(seed: int) -> None:
    _check(f"render_scenes seed {seed}", recipe_digests(seed), RECIPE_DIGESTS[seed])


if __name__ == "__main__":  # print the digests (only ever on the commit before a change)
    print(_machine())
    for case in sorted(SCENE_CASES):
        print(f'    "{case}": {scene_digests(case)},')
    for recipe_seed in RECIPE_SEEDS:
        print(f"    {recipe_seed}: {recipe_digests(recipe_seed)},")
