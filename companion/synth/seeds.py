"""Named child seeds: every part of a scene draws from its own generator.

A scene has one root seed. Each part (the camera, the table, each die, the clutter, the
light ...) gets a child seed derived from the root and the part's name (and index), not
from its position in a sequence of draws, so a new kind of draw in one part, or a new
part, never changes what any other part draws."""

from __future__ import annotations

import zlib

import numpy as np

SeedLike = int | np.random.Generator


def root_seed(seed: SeedLike) -> int:
    """The scene's root seed: an int as given, or one draw from a caller's generator (so
    a caller that renders many scenes from one generator advances it by exactly one draw
    per scene, whatever the scenes contain)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"a scene seed is a non-negative int or a numpy Generator: {seed!r}")
    return int(seed)


def _sequence(root: int, part: str, index: tuple[int, ...]) -> np.random.SeedSequence:
    return np.random.SeedSequence(root, spawn_key=(zlib.crc32(part.encode()), *index))


def part_rng(root: int, part: str, *index: int) -> np.random.Generator:
    """The generator of one part of the scene with root seed `root`."""
    return np.random.default_rng(_sequence(root, part, index))


def part_seed(root: int, part: str, *index: int) -> int:
    """A plain int seed for one part (kept in a scene description: a texture drawn from
    it is the same whenever the description is drawn)."""
    return int(_sequence(root, part, index).generate_state(1, np.uint64)[0] >> np.uint64(1))
