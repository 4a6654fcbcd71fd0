"""One conformance test over every registered game (after OpenSpiel's games_sim_test):
seeded random games with random legal moves and random rolls; JSON round-trip of state and
move at every step; the game ends within a bound; nobody may act after the end; totals equal
their breakdown; each game's own invariants hold after every action; and what the Turn
declares holds: a move begins a step or is one more of it (`moves_in_step`), a throw's
implied moves (with or without automatic passes) lead to the roll and roller it names, a
step that ends by hand declares no throw, a roll needs only dice the game declares; who
leads now (`Game.leaders`, a host's end) is on the top total, and at the end the winners."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from companion.rules.base import Game, Move, Roll
from companion.rules.registry import GAME_NAMES, find_game
from companion.simulate import play_random_game

GAMES_PER_RULESET = 200
MAX_ACTIONS = 5000


@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_games_conform(name: str) -> None:
    game = find_game(name)
    low = game.players.low
    high = game.players.high or low + 3
    lengths = []
    for seed in range(GAMES_PER_RULESET):
        rng = random.Random(seed)
        players = low + seed % (high - low + 1)
        options = game.options_for(players)

        def after_each(before: object, move: Move, after: object, options: Any = options) -> None:
            assert game.move_from_json(game.move_to_json(move)) == move
            assert game.state_from_json(game.state_to_json(after)) == after
            game.invariants(after)
            scores = game.scores(after)
            for score in scores:
                assert score.total == sum(points for _, points in score.breakdown)
            # who wins were the host to end the game now: some of those on the top total
            top = max(score.total for score in scores)
            leaders = game.leaders(after)
            assert leaders and all(scores[seat].total == top for seat in leaders)
            check_turn_declarations(game, options, before, after)

        final, count = play_random_game(game, options, rng, MAX_ACTIONS, after_each)
        lengths.append(count)
        outcome = game.outcome(final)
        assert outcome is not None
        assert outcome.winners, f"{name} seed {seed}: a finished game names its winner(s)"
        # the ranking a host's end uses is the game's own, tie-breaks included
        assert game.leaders(final) == outcome.winners == game.winners(final, ended_early=True)
        scores = game.scores(final)
        assert len(scores) == players
        for seat in range(players):
            assert game.legal_moves(final, seat) == [], f"{name}: seat {seat} may act after the end"
        turn = game.turn(final)
        assert not turn.players
        assert not turn.chance
    assert max(lengths) < MAX_ACTIONS


def check_turn_declarations(game: Game[Any, Any], options: Any, before: Any, after: Any) -> None:
    was, now = game.turn(before), game.turn(after)
    assert now.moves_in_step in (0, was.moves_in_step + 1), (was, now)
    if now.ends_by_hand:  # players act by hand first: no roll is declared to close it
        assert now.throw is None and not now.chance and now.players, now
    for close_step in (True, False):
        throw = now.on_throw(close_step)
        if throw is None:
            continue
        if not close_step:
            assert not throw.closes
        state = after
        for move in throw.implied:
            state = game.play(state, move)
        expected = game.turn(state)
        assert expected.chance and expected.dice == throw.dice, (now, expected)
        assert expected.active == throw.roller, (now, expected)
    dice = game.dice_colours(options)
    if dice is not None and now.chance and now.dice is not None:
        needed = Counter(now.dice.colours) + Counter(d.colour for d in now.dice.kept)
        assert not needed - Counter(dice), f"{game.name} rolls dice it does not declare"


@pytest.mark.parametrize("name", GAME_NAMES)
def test_roll_is_refused_when_not_expected_or_wrong(name: str) -> None:
    game = find_game(name)
    state = game.setup(game.options_for(game.players.low))
    turn = game.turn(state)
    if turn.chance:
        assert turn.dice is not None
        wrong = Roll(dice=())
        with pytest.raises(Exception) as info:
            game.check(state, wrong)
        assert getattr(info.value, "reason", None) is not None
