"""The registry of games: name -> Game instance. Each game lives in its own module that
defines `GAME`, an instance of its `Game` subclass."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from companion.rules.base import Game, Reason, Rejection

GAME_NAMES: tuple[str, ...] = ("qwixx", "sixto", "sixis", "sixmix", "sixes")


@cache
def find_game(name: str) -> Game[Any, Any]:
    """The game called `name`; raises Rejection(BAD_OPTIONS) for an unknown name."""
    if name not in GAME_NAMES:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "unknown_game",
            f"unknown game {name!r}; known games: {', '.join(GAME_NAMES)}",
        )
    module = importlib.import_module(f"companion.rules.{name}")
    game: Game[Any, Any] = module.GAME
    return game


def all_games() -> list[Game[Any, Any]]:
    return [find_game(name) for name in GAME_NAMES]
