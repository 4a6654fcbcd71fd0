"""The whole dice-reading pipeline on rendered scenes, per webcam condition.

    .venv/bin/python bench/vision_conditions.py [--scenes 30] [--models DIR]
                                                [--only NAME[,NAME...]]

The held-out photos of issue 14 show cameras, tables and dice that training lacks. For
each such condition the renderer can draw (companion.synth's options: greyscale and
near-infrared webcams, fisheye and vignetting, small and big dice, dice in a dish, tray
or cup, strong glare, piles, translucent dice, and a webcam mix of several) this renders
1280x720 scenes with the renderer's usual random dice, tables, light and tilt plus the
condition, reads each with the shipped models and prints recall, value accuracy of the
found readable dice and false dice per 100 scenes; "baseline" is the renderer's usual
scenes (what the models trained on). The seeds (910000 + 1000 x condition + k) are far
from the training seeds, so these scenes were never trained on.

Matching as in bench/vision_surfaces.py: a reading matches a die when its centre lies
within 0.6 x the die's visible side of the centre of the die's visible box
(companion.vision.scoring); an unreadable die (cocked, hidden, under a pile's other
dice, wiped out by glare: value None) need not be found, and a reading of it is not
false. The last line is `worst_condition: NAME recall R value V false F`.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.synth import RenderedDie, SceneKeywords, render_scene
from companion.vision.pipeline import DiceReader
from companion.vision.scoring import pair_closest

SEED_BASE = 910_000

CONDITIONS: dict[str, SceneKeywords] = {
    "baseline": {},
    "greyscale": {"greyscale": 1.0},
    "infrared": {"infrared": 1.0},
    "fisheye": {"fisheye": 1.0},
    "vignetting": {"vignetting": 1.0},
    "dice 15-30 px": {"sizes": (15.0, 30.0)},
    "dice 120-250 px": {"sizes": (120.0, 250.0)},
    "dish": {"container": 1.0, "containers": ("dish",)},
    "tray": {"container": 1.0, "containers": ("tray",)},
    "cup": {"container": 1.0, "containers": ("cup",)},
    "strong glare": {"strong_glare": 1.0},
    "pile": {"pile": 1.0},
    "translucent": {"translucent": 1.0},
    "webcam mix": {
        "greyscale": 0.5,
        "infrared": 0.2,
        "fisheye": 0.5,
        "vignetting": 0.3,
        "container": 0.3,
        "sizes": (15.0, 250.0),
    },
}


@dataclass
class Tally:
    readable: int = 0
    found: int = 0
    right: int = 0
    false: int = 0
    scenes: int = 0

    @property
    def recall(self) -> float:
        return self.found / max(self.readable, 1)

    @property
    def value_accuracy(self) -> float:
        return self.right / max(self.found, 1)

    @property
    def false_per_100(self) -> float:
        return 100.0 * self.false / max(self.scenes, 1)


def score_scene(
    reader: DiceReader, image: np.ndarray, dice: list[RenderedDie], tally: Tally
) -> None:
    """Read one scene and add what was found, read right and made up to `tally`."""
    readings = list(reader.read(image).dice)
    rows = [
        ((x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0))
        for x0, y0, x1, y1 in (die.box for die in dice)
    ]
    pairs = pair_closest(rows, [r.where for r in readings])
    for i, j in pairs:
        if dice[i].value is not None:
            tally.found += 1
            tally.right += readings[j].value == dice[i].value
    tally.readable += sum(1 for die in dice if die.value is not None)
    tally.false += len(readings) - len(pairs)
    tally.scenes += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=int, default=30, help="scenes per condition")
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--only", default="", help="comma-separated condition names")
    args = parser.parse_args(argv)
    chosen = [c.strip() for c in args.only.split(",") if c.strip()] or list(CONDITIONS)
    unknown = [c for c in chosen if c not in CONDITIONS]
    if unknown:
        parser.error(f"unknown condition(s) {unknown}; known: {', '.join(CONDITIONS)}")
    reader = DiceReader.load(args.models)
    started = time.perf_counter()
    worst: tuple[float, str, Tally] | None = None
    print(f"{'condition':<16} {'dice':>5} {'recall':>7} {'value acc':>10} {'false/100':>10}")
    for c, name in enumerate(CONDITIONS):
        if name not in chosen:
            continue
        tally = Tally()
        for k in range(args.scenes):
            rng = np.random.default_rng(SEED_BASE + 1000 * c + k)
            image, dice = render_scene(rng, 1280, 720, **CONDITIONS[name])
            score_scene(reader, image, dice, tally)
        print(
            f"{name:<16} {tally.readable:>5} {tally.recall:>7.3f} {tally.value_accuracy:>10.4f} "
            f"{tally.false_per_100:>10.1f}",
            flush=True,
        )
        badness = (1 - tally.recall) + (1 - tally.value_accuracy) + tally.false_per_100 / 100
        if worst is None or badness > worst[0]:
            worst = (badness, name, tally)
    print(f"seconds: {time.perf_counter() - started:.0f}")
    if worst is not None:
        _, name, t = worst
        print(
            f"worst_condition: {name} recall {t.recall:.3f} value {t.value_accuracy:.4f} "
            f"false {t.false_per_100:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
