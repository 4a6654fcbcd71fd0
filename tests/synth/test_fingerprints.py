"""Stored fingerprints of a few rendered scenes: any change to what the renderer samples
or draws shows here, so it is made on purpose.

Two checks per scene: a digest of its description and labels (exact numbers, so it does
not depend on the machine), and its picture against a stored PNG (a tolerance of a few
pixels two grey levels off: OpenCV's vectorised float code may round the last bit
differently on another CPU). After a deliberate change, rewrite both and say why in the
commit:

    .venv/bin/python -m tests.synth.test_fingerprints --write
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.synth import SceneKeywords, draw_scene, sample_scene

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "synth"

SCENES: dict[str, tuple[int, int, int, SceneKeywords]] = {
    "random": (1, 192, 144, {}),
    "qwixx-default-light": (2, 192, 144, {"dice_set": "qwixx", "light": "default", "size": 30}),
    "translucent-tilted": (3, 192, 144, {"translucent": 1.0, "camera_tilt": 30.0, "n_dice": 5}),
    "unreadable-cluttered": (4, 192, 144, {"unreadable": 1.0, "clutter": 1.0, "n_dice": 6}),
}

DIGESTS = {
    "qwixx-default-light": "93c673d211d36963",
    "random": "f11651e6c061528e",
    "translucent-tilted": "ca03a3deddb0cc69",
    "unreadable-cluttered": "9c200615d7904eaa",
}


def _canonical(value: object) -> object:
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def _without_fancy(scene: dict[str, object]) -> dict[str, object]:
    """The description less the fancy style's fields (issue 22), which a default scene
    leaves empty: the digests of the scenes from before them still hold."""
    assert scene.pop("distractors") == ()
    for die in scene["dice"]:  # type: ignore[attr-defined]
        assert die.pop("look") is None
    return scene


def _render(name: str) -> tuple[str, np.ndarray]:
    seed, width, height, options = SCENES[name]
    scene = sample_scene(seed, width, height, **options)
    image, dice = draw_scene(scene)
    record = {
        "scene": _without_fancy(dataclasses.asdict(scene)),
        "labels": [dataclasses.asdict(d) for d in dice],
    }
    text = json.dumps(_canonical(record), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16], image


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_is_as_stored(name: str) -> None:
    digest, image = _render(name)
    assert digest == DIGESTS[name], (
        f"{name}: the description or labels changed (digest {digest}); if on purpose, "
        "rewrite: .venv/bin/python -m tests.synth.test_fingerprints --write"
    )
    stored = cv2.imread(str(FIXTURES / f"{name}.png"), cv2.IMREAD_COLOR)
    assert stored is not None and stored.shape == image.shape
    off = np.abs(stored.astype(np.int16) - image.astype(np.int16)).max(axis=2)
    assert (off > 2).mean() < 0.002, f"{name}: {(off > 2).sum()} pixels differ from the stored"


def _write() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in sorted(SCENES):
        digest, image = _render(name)
        cv2.imwrite(str(FIXTURES / f"{name}.png"), image, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(f'    "{name}": "{digest}",')


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
