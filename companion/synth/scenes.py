"""The renderer's entry points: whole scenes, roll clips and classifier crops."""

from __future__ import annotations

from typing import Unpack

import cv2
import numpy as np

from .distractors import RenderedOther
from .draw import draw_scene, other_labels
from .fancy import sample_scene
from .labels import RenderedDie
from .options import DieSpec, SceneKeywords
from .seeds import SeedLike


def render_scene(
    seed: SeedLike, width: int = 640, height: int = 480, **options: Unpack[SceneKeywords]
) -> tuple[np.ndarray, list[RenderedDie]]:
    """Render one table scene with dice; returns the BGR uint8 image and the dice (in the
    order asked for; a die that found no room on the table is left out).

    `seed` is an int or a numpy Generator (one draw of it becomes the scene's seed).
    The options are `SceneOptions`' (options.py)."""
    return draw_scene(sample_scene(seed, width, height, **options))


def render_scene_and_others(
    seed: SeedLike, width: int = 640, height: int = 480, **options: Unpack[SceneKeywords]
) -> tuple[np.ndarray, list[RenderedDie], list[RenderedOther]]:
    """`render_scene`, and the things in the picture that are not d6 dice (the fancy
    style's other polyhedral dice, tokens and coins; none in the default style): what a
    finder must learn to leave alone."""
    scene = sample_scene(seed, width, height, **options)
    image, dice = draw_scene(scene)
    return image, dice, other_labels(scene)


def render_roll_clip(
    rng: np.random.Generator,
    width: int = 640,
    height: int = 480,
    *,
    frames_rolling: int = 8,
    frames_still: int = 12,
    **options: Unpack[SceneKeywords],
) -> list[tuple[np.ndarray, list[RenderedDie]]]:
    """Frames of a roll for a demo clip: the dice tumbling (smear shrinking frame by frame,
    values None), then lying still (values readable), on one unchanging table. Options go
    to `render_scene` (e.g. dice_set="qwixx", values=[...])."""
    seed = int(rng.integers(0, 2**62))
    frames = []
    total = frames_rolling + frames_still
    for k in range(total):
        strength = 1.6 * (1 - k / max(frames_rolling, 1)) + 0.3 if k < frames_rolling else 0.0
        options["tumbling"], options["tumble_seed"] = strength, k
        image, dice = render_scene(seed, width, height, **options)
        # a little sensor noise differs from frame to frame, as in a real clip
        grain = np.random.default_rng([seed % 2**32, k]).normal(0, 1.5, image.shape)
        frames.append((np.clip(image + grain, 0, 255).astype(np.uint8), dice))
    return frames


def render_die_crop(
    rng: np.random.Generator,
    value: int | None,
    body: str,
    pips: str,
    size: int = 64,
    *,
    margin: float = 0.25,
    jitter: float = 0.08,
    **options: object,
) -> np.ndarray:
    """A size x size BGR crop of one die, framed as the pipeline frames a found die: the
    die's box enlarged by `margin` on each side (as a fraction of the box), shifted by up
    to `jitter`. value None renders an unreadable die (cocked or half hidden). Other
    options go to `render_scene` (surface, light, camera_tilt, blur, noise ...); some
    crops get a touching neighbour."""
    die_px = float(rng.uniform(28, 110))
    extent = int(die_px * 3.2)
    state = "" if value is not None else ("cocked" if rng.random() < 0.5 else "hidden")
    first = DieSpec(value if value is not None else int(rng.integers(1, 7)), body, pips, state)
    specs = [first] + [DieSpec() for _ in range(int(rng.choice([0, 0, 1, 2])))]
    chosen: dict[str, object] = {"size": die_px, "touching": 0.9, "clutter": 0.3}
    chosen.update(options)
    chosen["dice"] = specs
    img, dice = render_scene(rng, extent, extent, **chosen)  # type: ignore[arg-type]
    if not dice or dice[0].body != body:  # no room for the die: keep the crop defined
        return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
    x0, y0, x1, y1 = dice[0].box
    side = max(x1 - x0, y1 - y0) * (1 + 2 * margin)
    cx = (x0 + x1) / 2 + rng.uniform(-jitter, jitter) * side
    cy = (y0 + y1) / 2 + rng.uniform(-jitter, jitter) * side
    m = np.array(
        [
            [size / side, 0, size / 2 - cx * size / side],
            [0, size / side, size / 2 - cy * size / side],
        ],
        np.float32,
    )
    return cv2.warpAffine(
        img, m, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
