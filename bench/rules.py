"""Random complete 4-player games per second, per game, on one core.

    .venv/bin/python bench/rules.py [--seconds S] [--games NAME ...]

Each game is played with random legal moves and random rolls (companion.simulate) until its
end; Sixes is played with 4 players and 20 roller turns, never choosing the voluntary
`end_game`, so every game runs its full length. Prints one line per game and a
final summary line per game `games_per_second_<name>: X`. Time is the process's CPU time,
so other work on the machine does not distort the figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.rules.registry import GAME_NAMES, find_game  # noqa: E402
from companion.simulate import play_random_game  # noqa: E402

AVOID = {"sixes": frozenset({"end_game"})}


def bench_options(name: str) -> object:
    game = find_game(name)
    options = game.options_for(4)
    if name == "sixes" and any(f.name == "rollers" for f in dataclasses.fields(options)):
        options = dataclasses.replace(options, rollers=20)
    return options


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per game")
    parser.add_argument("--games", nargs="*", default=list(GAME_NAMES))
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    results = {}
    for name in args.games:
        game = find_game(name)
        options = bench_options(name)
        rng = random.Random(1)
        games = actions = 0
        start = time.process_time()
        while time.process_time() - start < args.seconds:
            _, count = play_random_game(game, options, rng, avoid=AVOID.get(name, frozenset()))
            games += 1
            actions += count
        elapsed = time.process_time() - start
        results[name] = games / elapsed
        print(
            f"{name:7s} {games:6d} games in {elapsed:5.2f} s cpu  "
            f"{games / elapsed:8.1f} games/s  {actions / games:7.1f} actions/game",
            flush=True,
        )
    for name, rate in results.items():
        print(f"games_per_second_{name}: {rate:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
