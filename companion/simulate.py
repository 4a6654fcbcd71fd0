"""Random complete games through any registered game: the conformance test and
bench/rules.py drive the engine with this. Randomness lives here, never in the rules."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from companion.rules.base import Die, Game, Move, Roll, Turn


def random_roll(turn: Turn, rng: random.Random) -> Roll:
    assert turn.dice is not None
    return Roll(dice=tuple(Die(c, rng.randint(1, 6)) for c in turn.dice.colours))


def random_action(
    game: Game[Any, Any], state: Any, rng: random.Random, avoid: frozenset[str] = frozenset()
) -> Move:
    """A random legal action: a roll when only the chance player may act, otherwise a
    random legal move of a random player who may act (or a roll, when both may). Move kinds
    in `avoid` are chosen only when nothing else is legal (the benchmark plays Sixes to its
    full length by avoiding the voluntary `end_game`)."""
    turn = game.turn(state)
    candidates: list[Move] = []
    avoided: list[Move] = []
    players = list(turn.players)
    rng.shuffle(players)
    for player in players:
        moves = game.legal_moves(state, player)
        candidates = [m for m in moves if m.kind not in avoid]
        avoided = avoided or [m for m in moves if m.kind in avoid]
        if candidates:
            break
    if turn.chance and (not candidates or rng.random() < 0.5):
        return random_roll(turn, rng)
    candidates = candidates or avoided
    if not candidates:
        raise RuntimeError(
            f"{game.name}: nobody can act in step {turn.step!r} and no roll expected"
        )
    return rng.choice(candidates)


def play_random_game(
    game: Game[Any, Any],
    options: Any,
    rng: random.Random,
    max_actions: int = 5000,
    after_each: Callable[[Any, Move, Any], None] | None = None,
    avoid: frozenset[str] = frozenset(),
) -> tuple[Any, int]:
    """Play one game to its end; returns the final state and the number of actions.
    Raises RuntimeError when the game has not ended after `max_actions` actions."""
    state = game.setup(options)
    for count in range(max_actions):
        if game.outcome(state) is not None:
            return state, count
        move = random_action(game, state, rng, avoid)
        new_state = game.play(state, move)
        if after_each is not None:
            after_each(state, move, new_state)
        state = new_state
    if game.outcome(state) is not None:
        return state, max_actions
    raise RuntimeError(f"{game.name}: no end after {max_actions} actions")
