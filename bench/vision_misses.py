"""Where the pipeline loses the labelled dice it does not report, stage by stage.

    .venv/bin/python bench/vision_misses.py ../shared/data/epanemu-dice3/valid [--list]

For every labelled die of a YOLO-labelled folder (the folders bench/vision_eval.py takes;
--every, --offset and --pip-boxes as there; --part validation reads only that part of a
training folder, e.g. rune55-webcams' validation groups; --names REGEX only the photos whose
file name matches, e.g. its dice-tower camera '^[0-9]+_jpg') that the pipeline does not report,
the stage that lost it (companion.vision.scoring.where_lost), earliest first:

- no peak: the finder's heat map has no peak near the die even at --floor (default 0.05);
- peak under the rule's floor: a peak, too weak for any band of the finder's PeakRule;
- suppressed by a stronger peak: within reach of a stronger peak, taken for the same die;
- dropped by the box filters: drop_nested / drop_undersized took it for a pip or a double;
- dropped by the peak rule: read, but not with the confidence its band asks;
- its box matched a neighbour: a reported box lies near it but was paired with another
  labelled die (one box for two touching dice).

Prints the count and the die sides per stage; --list prints every lost die with its
strongest peak and reading. A maintainer's tool: it says which model or stage to work on
next. The folder is taken as labelled unless --corrections names a label_corrections.csv.

--rule-headroom also scores every candidate peak rule (models.recipe.evaluate.
PeakRuleCandidates, the ones train.py chooses from on training images) on this folder, the
way train.py scores them (every peak from the lowest candidate floor read once): the
shipped rule's missed + false + misread dice among them and its rank; then the shipped
rule and the best candidate in hindsight each through the pipeline itself. A small gap
says the dice the peak rule drops are not the rule's fault but the models' (choosing the
rule here would be tuning on the folder; this only measures). The corrections' ignore
regions (unlabelled dice) are left out of these counts: every reading off a labelled die
counts as false.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Sequence
from pathlib import Path

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import (
    LabelledImage,
    bench_photos,
    corrected,
    every_nth,
    read_label_corrections,
)
from companion.vision.finder import DiceFinder
from companion.vision.pipeline import DiceTrace, check_image, read_dice, trace_dice
from companion.vision.scoring import LostAt, match, score, where_lost, within_reach
from companion.vision.types import DieBox, DieReading

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the candidate peak rules

from models.recipe.evaluate import (  # noqa: E402
    peak_rule_costs,
    rule_applied,
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
        "--names", default=None, metavar="REGEX",
        help="only the photos whose file name matches (e.g. '^[0-9]+_jpg' for rune55's tower camera)",
    )  # fmt: skip
    parser.add_argument(
        "--part", choices=("calibration", "validation"), default=None,
        help="only that part of a training folder (companion/vision/datasets.py's split)",
    )  # fmt: skip
    parser.add_argument(
        "--floor",
        type=float,
        default=0.05,
        help="lowest finder peak looked at (default 0.05; never above the peak rule's floor)",
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
    # --part: e.g. rune55-webcams' validation groups; --names: one camera of a folder
    images = bench_photos(args.folder, args.part, args.names, args.pip_boxes or None)
    images = every_nth(images, args.every, args.offset)
    corrections = read_label_corrections(Path(args.corrections)) if args.corrections else {}
    images = [im for im in (corrected(im, corrections)[0] for im in images) if im is not None]
    if not images:
        print(f"{args.folder}: no labelled images", file=sys.stderr)
        return 1
    finder = DiceFinder.load(args.models)
    classifier = PipClassifier.load(args.models)
    # a floor over the rule's would hide the peaks between the two: "no peak" for a die
    # that was suppressed or under the floor
    floor = min(args.floor, finder.peak_rule.floor)
    lost: dict[LostAt, list[float]] = collections.defaultdict(list)
    kept: list[tuple[LabelledImage, tuple[DieReading, ...]]] = []
    for number, truth in enumerate(images, start=1):
        picture, problems = check_image(truth.load())
        if picture is None:
            print(f"{truth.path.name}: not read ({'; '.join(problems)})", file=sys.stderr)
            continue
        trace = trace_dice(picture, finder, classifier)
        kept.append((truth, trace.kept))
        found = {i for i, _ in match(truth, trace.kept)}
        candidates = finder.candidates(picture, floor)
        for i, die in enumerate(truth.dice):
            if i in found:
                continue
            stage = where_lost((die.cx, die.cy, die.side), trace, candidates)
            lost[stage].append(die.side)
            if args.list:
                print(
                    f"{truth.path.name} die {i} ({die.side:.0f} px, value {die.value}): "
                    f"{stage}{_detail(die.cx, die.cy, die.side, trace, candidates)}"
                )
        if number % 25 == 0 or number == len(images):
            print(f"  {number}/{len(images)} images traced", flush=True)
    labelled = sum(len(truth.dice) for truth, _ in kept)
    missed = sum(len(sides) for sides in lost.values())
    print(f"images: {len(kept)}, labelled dice: {labelled}, missed: {missed}")
    for stage in LostAt:
        sides = sorted(round(s) for s in lost.get(stage, ()))
        print(f"{stage}: {len(sides)}" + (f"  (sides px: {sides})" if sides else ""))
    if args.rule_headroom:
        rule_headroom(kept, finder, classifier)
    return 0


def rule_headroom(
    kept: Sequence[tuple[LabelledImage, tuple[DieReading, ...]]],
    finder: DiceFinder,
    classifier: PipClassifier,
) -> None:
    """The shipped peak rule against every candidate rule on these images: ranked the way
    train.py ranks them, then the shipped and the best rule each through the pipeline."""
    images = [truth for truth, _ in kept]
    shipped = finder.peak_rule
    costs = peak_rule_costs(images, finder, classifier)
    best_cost, best = min(costs, key=lambda cost_rule: cost_rule[0])
    print(f"shipped peak rule: {shipped}")
    in_grid = [cost for cost, rule in costs if rule == shipped]
    if in_grid:
        rank = 1 + sum(cost < in_grid[0] for cost, _ in costs)
        print(
            f"among the {len(costs)} candidates as train.py scores them: shipped rule "
            f"{in_grid[0]} (rank {rank}), best {best_cost}"
        )
    else:
        print(f"the shipped rule is none of the {len(costs)} candidates; best {best_cost}")
    print(f"best candidate in hindsight: {best}")
    through_pipeline = score([(truth, readings, ()) for truth, readings in kept]).errors
    print(f"shipped_rule_missed_false_misread: {through_pipeline}")
    with rule_applied(finder, best):
        rows = [(truth, read_dice(truth.load(), finder, classifier), ()) for truth in images]
    print(f"best_rule_missed_false_misread: {score(rows).errors}")


def _detail(
    cx: float, cy: float, side: float, trace: DiceTrace, candidates: Sequence[DieBox]
) -> str:
    """The strongest peak near the die and, when it was read, its reading."""
    near = [box for box in candidates if within_reach(box, cx, cy, side)]
    if not near:
        return ""
    text = f"; strongest peak {max(box.score for box in near):.2f}"
    read = [r for r in trace.readings if within_reach(r.where, cx, cy, side)]
    if read:
        best = max(read, key=lambda r: r.where.score)
        text += f", read {best.value} at {best.confidence:.2f}"
    return text


if __name__ == "__main__":
    sys.exit(main())
