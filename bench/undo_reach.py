"""Undo cost in a long step without a roll: a 3-player Sixis game in its second round, whose
opening seat 1 hands to seat 2, then seats 2 and 0 hand back and forth (`Starter`) N
times. Measures what each change at such a table costs to work out who may undo what
(`Session.undo_offers`, in every Table snapshot, on the event loop) and what one undo
request of seat 1 costs (its hand-on lies N actions back), the best of 5 each.

    PYTHONPATH=$PWD .venv/bin/python bench/undo_reach.py [--steps 1000 10000 50000]

PYTHONPATH picks the code measured (another checkout's folder for a before figure).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable

from companion.rules.base import Die, Rejection, Roll
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.rules.sixis import SIXIS, Starter, TakeCard


def best_ms(work: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        with contextlib.suppress(Rejection):  # seat 1's undo is refused: its cost counts
            work()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    args = parser.parse_args()
    game = find_game("sixis")
    session = Session(game, game.parse_options({"players": 3, "rounds": 2, "deal_seed": 7}))
    colours = session.turn().dice.colours  # type: ignore[union-attr]
    session.act(Roll(dice=tuple(Die(colour, 4) for colour in colours)), by="0")
    session.act(TakeCard(0, SIXIS))  # round 2: seat 1 opens, before its first roll
    session.act(Starter(1, 2))
    done = 0
    for steps in sorted(args.steps):
        for _ in range(steps - done):
            opener = session.state.starter
            session.act(Starter(opener, 0 if opener == 2 else 2))
        done = steps
        offers = best_ms(session.undo_offers)
        undo = best_ms(lambda: session.propose_undo("1"))
        print(f"{steps:>7} hand-ons: undo_offers {offers:7.2f} ms, seat 1's undo {undo:7.2f} ms")


if __name__ == "__main__":
    main()
