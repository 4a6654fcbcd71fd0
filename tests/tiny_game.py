"""A game registered in-process for one test, to check that what lists games reads the
registry (`companion.rules.registry`) rather than a list of its own."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from companion.rules import registry

TINY = "tiny_trial"


@contextmanager
def tiny_game_registered(monkeypatch: pytest.MonkeyPatch, like: str = "qwixx") -> Iterator[str]:
    """Inside the block, "tiny_trial" ("Tiny Trial", the rules and dice of `like` under
    another name, with no page, help or calibration of its own) is a registered game; its
    name is yielded. Afterwards `find_game`'s cache forgets it."""

    class Tiny(type(registry.find_game(like))):  # type: ignore[misc]
        name = TINY
        title = "Tiny Trial"

    module = types.ModuleType(f"companion.rules.{TINY}")
    module.GAME = Tiny()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(registry, "GAME_NAMES", (*registry.GAME_NAMES, TINY))
    try:
        yield TINY
    finally:
        registry.find_game.cache_clear()
