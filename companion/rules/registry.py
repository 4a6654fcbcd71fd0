"""The registry of games: name -> Game instance. Each game lives in its own module that
defines `GAME`, an instance of its `Game` subclass."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from companion.rules.base import Game, Reason, Rejection

GAME_NAMES: tuple[str, ...] = ("qwixx", "sixto", "sixis", "sixmix", "sixes")


class GameRegistrationError(RuntimeError):
    """A name in GAME_NAMES whose module cannot be imported or defines no `GAME`: a fault
    of the installation or of a game being written, never of a player's request."""


@cache
def find_game(name: str) -> Game[Any, Any]:
    """The game called `name`; raises Rejection(BAD_OPTIONS) for an unknown name."""
    if name not in GAME_NAMES:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "unknown_game",
            f"unknown game {name!r}; known games: {', '.join(GAME_NAMES)}",
        )
    module_name = f"companion.rules.{name}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        message = f"game {name!r} is registered, but its module {module_name} cannot be imported"
        raise GameRegistrationError(f"{message}: {exc}") from exc
    game = getattr(module, "GAME", None)
    if not isinstance(game, Game):
        message = f"game {name!r} is registered, but its module {module_name} defines no GAME"
        raise GameRegistrationError(message)
    return game


def all_games() -> list[Game[Any, Any]]:
    """Every registered game, read from GAME_NAMES when asked (a game registered later in
    the process is listed); raises GameRegistrationError for a broken registration."""
    return [find_game(name) for name in GAME_NAMES]


def standard_dice_sets() -> dict[str, tuple[str, ...]]:
    """The standard dice sets by game name: the dice each game declares with its default
    options (`Game.dice_colours`: Qwixx's six, Sixto's default colours); games whose dice
    change from roll to roll are left out."""
    sets = {}
    for game in all_games():
        colours = game.dice_colours(game.options_for(game.players.low))
        if colours is not None:
            sets[game.name] = colours
    return sets
