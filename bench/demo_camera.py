"""How the shipped models read the demo camera's throws, per game.

    .venv/bin/python bench/demo_camera.py [--throws N] [--seed S]

The demo camera (companion.live.demo.DemoThrows) throws the dice of the roll a game expects,
rendered on the fly. For each game's first roll (its declared dice, from the engine's Turn;
Sixis with two saved dice lying beside four thrown ones) this renders --throws throws as
the demo camera does, reads the last still frame with the shipped pipeline (finder,
classifier, calibrated confidence, colours with the game's dice set) and prints, per game:
the throws read as exactly the roll that was thrown (live.match, every colour and value),
those the calibrated decision would apply without a tap at the shipped threshold
(companion.vision.confidence.decide_roll, camera mode "sure"), and those applied wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.live import demo  # noqa: E402
from companion.live.match import match_roll  # noqa: E402
from companion.rules.base import DiceSpec, Die, Roll, describe_colours  # noqa: E402
from companion.rules.registry import GAME_NAMES, find_game  # noqa: E402
from companion.table.camera_decision import shipped_threshold  # noqa: E402
from companion.table.camera_feed import dice_set_for  # noqa: E402
from companion.vision.confidence import decide_roll  # noqa: E402
from companion.vision.pipeline import DiceReader  # noqa: E402

SIXIS_KEPT = (6, 6)  # two saved dice on the table beside the four thrown


def first_roll(name: str) -> tuple[DiceSpec, object]:
    """The dice of the game's first roll (Sixis: as a later roll with two saved sixes)."""
    game = find_game(name)
    options = game.options_for(max(game.players.low, 3 if name == "sixes" else 2))
    turn = game.turn(game.setup(options))
    assert turn.dice is not None, name
    spec = turn.dice
    if name == "sixis":
        colour = spec.colours[0]
        spec = DiceSpec(spec.colours[len(SIXIS_KEPT) :], tuple(Die(colour, v) for v in SIXIS_KEPT))
    return spec, options


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--throws", type=int, default=20, help="throws per game")
    parser.add_argument("--seed", type=int, default=500)
    args = parser.parse_args()
    reader = DiceReader.load()
    threshold = shipped_threshold(reader)
    print(f"shipped auto-apply threshold: {threshold}")
    print(f"{'game':8} {'dice':42} {'read right':>11} {'sure':>6} {'sure wrong':>11}")
    for name in GAME_NAMES:
        spec, options = first_roll(name)
        reader.dice_set = dice_set_for(find_game(name), options, None)
        kept = tuple((d.colour, d.value) for d in spec.kept)
        right = sure = wrong = 0
        started = time.perf_counter()
        for k in range(args.throws):
            rng = np.random.default_rng(args.seed + k)
            table = demo._demo_table(rng, args.seed + k, 640, 480, 44.0, "cardboard", 1.5)
            frames = list(demo._one_throw(rng, table, spec.colours, 0, kept))
            rest = [f for f in frames if f.phase == "rest"][-1]
            reading = reader.read(rest.image)
            thrown = sorted((d.colour, d.value) for d in rest.dice[: len(spec.colours)])
            roll = match_roll(reading.dice, spec)
            is_right = (
                isinstance(roll, Roll) and sorted((d.colour, d.value) for d in roll.dice) == thrown
            )
            right += is_right
            decision = decide_roll(reading.dice, len(spec.colours) + len(spec.kept), threshold)
            if decision.apply:
                sure += 1
                wrong += not is_right
        dice = describe_colours(spec.colours) + (f" + {len(kept)} kept" if kept else "")
        seconds = time.perf_counter() - started
        print(
            f"{name:8} {dice[:42]:42} {right:>5}/{args.throws:<5} {sure:>3}/{args.throws:<3}"
            f" {wrong:>6}   ({seconds:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
