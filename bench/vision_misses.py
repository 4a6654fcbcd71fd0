"""Where the pipeline loses the labelled dice it does not report, stage by stage.

    .venv/bin/python bench/vision_misses.py ../shared/data/epanemu-dice3/valid [--list]

For every labelled die of a YOLO-labelled folder (the folders of bench/vision_eval.py, with
the same options) that the pipeline does not report, the stage that lost it
(companion.vision.scoring.where_lost), earliest first:

- no peak: the finder's heat map has no peak near the die even at --floor (default 0.05);
- peak under the rule's floor: a peak, too weak for any band of the finder's PeakRule;
- suppressed by a stronger peak: within reach of a stronger peak, taken for the same die;
- dropped by the box filters: drop_nested / drop_undersized took it for a pip or a double;
- dropped by the peak rule: read, but not with the confidence its band asks;
- its box matched a neighbour: a reported box lies near it but was paired with another
  labelled die (one box for two touching dice).

Prints the count and the die sides per stage; --list prints every lost die with its peak
score and reading. A maintainer's tool: it says which model or stage to work on next.

--rule-headroom also scores every candidate peak rule (models.recipe.evaluate.
PeakRuleCandidates, the ones train.py chooses from on training images) on this folder:
the shipped rule's missed + false + misread dice, its rank, and the best candidate's in
hindsight. A small gap says the dice the peak rule drops are not the rule's fault but the
models' (choosing the rule here instead would be tuning on the folder; this only measures).
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import (
    LabelledImage,
    corrected,
    has_pip_pattern_boxes,
    read_label_corrections,
    read_labelled_folder,
)
from companion.vision.finder import DiceFinder
from companion.vision.pipeline import DiceTrace, check_image, read_dice, trace_dice
from companion.vision.scoring import LOST_STAGES, MATCH_RADIUS, match, where_lost
from companion.vision.types import DieBox

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the candidate peak rules

from models.recipe.evaluate import (  # noqa: E402
    PeakRuleCandidates,
    peak_rule_cost,
    peak_rule_costs,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--pip-boxes", action="store_true", help="as bench/vision_eval.py")
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument(
        "--floor", type=float, default=0.05, help="lowest finder peak looked at (default 0.05)"
    )
    parser.add_argument(
        "--corrections",
        default="",
        help="a label_corrections.csv to apply first (default: the folder as labelled)",
    )
    parser.add_argument("--list", action="store_true", help="print every lost die")
    parser.add_argument(
        "--rule-headroom",
        action="store_true",
        help="score every candidate peak rule on the folder (a few minutes)",
    )
    args = parser.parse_args(argv)
    pip_boxes = args.pip_boxes or has_pip_pattern_boxes(args.folder)
    images = read_labelled_folder(args.folder, pip_boxes)
    images = [im for k, im in enumerate(images) if k % args.every == args.offset % args.every]
    if not images:
        print(f"{args.folder}: no labelled images", file=sys.stderr)
        return 1
    corrections = read_label_corrections(Path(args.corrections)) if args.corrections else {}
    finder = DiceFinder.load(args.models)
    classifier = PipClassifier.load(args.models)
    lost: dict[str, list[float]] = collections.defaultdict(list)
    labelled = 0
    for number, original in enumerate(images, start=1):
        truth, _ = corrected(original, corrections)
        if truth is None:
            continue
        picture, problems = check_image(truth.load())
        if picture is None:
            print(f"{truth.path.name}: not read ({'; '.join(problems)})", file=sys.stderr)
            continue
        labelled += len(truth.dice)
        trace = trace_dice(picture, finder, classifier)
        found = {i for i, _ in match(truth, trace.kept)}
        low_peaks = finder.candidates(picture, args.floor)
        for i, die in enumerate(truth.dice):
            if i in found:
                continue
            stage = where_lost((die.cx, die.cy, die.side), trace, low_peaks)
            lost[stage].append(die.side)
            if args.list:
                print(
                    f"{truth.path.name} die {i} ({die.side:.0f} px, value {die.value}): "
                    f"{stage}{_detail(die.cx, die.cy, die.side, trace, low_peaks)}"
                )
        if number % 25 == 0 or number == len(images):
            print(f"  {number}/{len(images)} images traced", flush=True)
    missed = sum(len(sides) for sides in lost.values())
    print(f"images: {len(images)}, labelled dice: {labelled}, missed: {missed}")
    for stage in LOST_STAGES:
        sides = sorted(round(s) for s in lost.get(stage, ()))
        print(f"{stage}: {len(sides)}" + (f"  (sides px: {sides})" if sides else ""))
    if args.rule_headroom:
        rule_headroom(
            [im for im in (corrected(im, corrections)[0] for im in images) if im is not None],
            finder,
            classifier,
        )
    return 0


def rule_headroom(
    images: Sequence[LabelledImage], finder: DiceFinder, classifier: PipClassifier
) -> None:
    """The shipped peak rule against every candidate rule on these images."""
    shipped = finder.peak_rule
    shipped_cost = sum(
        peak_rule_cost(shipped, im, read_dice(im.load(), finder, classifier)) for im in images
    )
    costs = peak_rule_costs(images, finder, classifier, PeakRuleCandidates())
    best_cost, best = min(costs, key=lambda cost_rule: cost_rule[0])
    rank = 1 + sum(cost < shipped_cost for cost, _ in costs)
    print(f"shipped peak rule: {shipped}")
    print(f"shipped_rule_missed_false_misread: {shipped_cost} (rank {rank} of {len(costs)})")
    print(f"best candidate in hindsight: {best}")
    print(f"best_rule_missed_false_misread: {best_cost}")


def _detail(
    cx: float, cy: float, side: float, trace: DiceTrace, low_peaks: Sequence[DieBox]
) -> str:
    """The strongest peak near the die and, when it was read, its reading."""
    reach = MATCH_RADIUS * side
    near = [b for b in low_peaks if math.hypot(b.cx - cx, b.cy - cy) <= reach]
    if not near:
        return ""
    text = f"; strongest peak {max(b.score for b in near):.2f}"
    read = [r for r in trace.readings if math.hypot(r.where.cx - cx, r.where.cy - cy) <= reach]
    if read:
        best = max(read, key=lambda r: r.where.score)
        text += f", read {best.value} at {best.confidence:.2f}"
    return text


if __name__ == "__main__":
    sys.exit(main())
