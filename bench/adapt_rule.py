"""Would a setup's own peak rule help? The finder's PeakRule chosen on a setup's confirmed
photos, checked as a setup's adapted reader is (issue 24).

    .venv/bin/python bench/adapt_rule.py ../shared/data/rune55-webcams --part validation \\
        --names '^(?![0-9]+_jpg)' [--shots 10,25,50] [--shuffle 24 --shuffle 1 ...]

The shipped peak rule (companion.vision.finder.PeakRule) was chosen on the calibration
photos of every source together. A table whose dice the rule drops (the white board's
heaps of small dice: found, read with too little confidence for their band) might keep
them under a rule chosen on its own photos. This measures that before any such learner is
built: the folder is taken as one setup, every photo read once with every peak from the
lowest candidate floor (models.recipe.evaluate.peak_rule_errors: each photo's missed +
false + misread dice under each of the candidate rules, with the shipped pair, as cold);
then, for each K and each seeded order of the photos, the first K are the confirmed ones:

- **the folds**: as the value head's check (companion.vision.adapt_gate: k = min(K,
  MAX_FOLDS) folds by photo), each fold's rule chosen on the other folds' photos and its
  left-out errors set against the shipped rule's, the sign test and verdict of
  `adapt_gate.decide` (no no-forgetting photos: a rule that passed would still face them);
- **the rest**: the rule chosen on all K read on the photos not confirmed, against the
  shipped rule there: what adopting it would have done, whatever the verdict.

Two ways of choosing: ``fewest`` (the rule with the fewest errors; the shipped one on a
tie) and ``clearly fewer`` (the shipped rule unless the fewest beats it by more than one
standard error of the per-photo difference). Prints one row per seed and K."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the candidate peak rules

from companion.vision.adapt_gate import MAX_FOLDS, decide, fold_of_photos  # noqa: E402
from companion.vision.classifier import PipClassifier  # noqa: E402
from companion.vision.datasets import bench_photos  # noqa: E402
from companion.vision.finder import DiceFinder  # noqa: E402
from models.recipe.evaluate import peak_rule_errors  # noqa: E402

# (confirmed photos' per-rule errors: photos x rules, the shipped rule's index) -> a rule
Choice = Callable[[np.ndarray, int], int]


def fewest(errors: np.ndarray, shipped: int) -> int:
    """The rule with the fewest errors; the shipped one when it ties them."""
    totals = errors.sum(axis=0)
    return shipped if totals[shipped] == totals.min() else int(np.argmin(totals))


def clearly_fewer(errors: np.ndarray, shipped: int) -> int:
    """The rule with the fewest errors when it beats the shipped one by more than one
    standard error of the per-photo difference; else the shipped rule."""
    best = fewest(errors, shipped)
    difference = errors[:, shipped] - errors[:, best]
    standard_error = np.sqrt(len(errors)) * difference.std()
    return best if difference.sum() > standard_error else shipped


CHOICES: dict[str, Choice] = {"fewest": fewest, "clearly fewer": clearly_fewer}


@dataclass(frozen=True)
class RuleCheck:
    """One setup's figures: the fold check's verdict and errors, and the remaining photos'
    errors under the rule chosen on all confirmed photos and under the shipped rule."""

    reason: str
    fold_adapted: int
    fold_shipped: int
    wins: int
    losses: int
    p_value: float
    rest_chosen: int
    rest_shipped: int


def check_setup_rule(
    errors: np.ndarray, shipped: int, confirmed: Sequence[int], choice: Choice
) -> RuleCheck:
    """The module docstring's check for the photos (rows of `errors`) in `confirmed`, in
    the order first seen; every other row is the rest."""
    rows = np.asarray(confirmed, np.int64)
    folds = fold_of_photos(list(rows), min(len(rows), MAX_FOLDS))
    parts = int(folds.max()) + 1 if len(rows) else 0
    by_shipped = np.zeros(parts, np.int64)
    by_chosen = np.zeros(parts, np.int64)
    for part in range(parts):
        rule = choice(errors[rows[folds != part]], shipped)
        by_shipped[part] = errors[rows[folds == part], shipped].sum()
        by_chosen[part] = errors[rows[folds == part], rule].sum()
    verdict = decide(by_shipped, by_chosen, None)
    rest = np.setdiff1d(np.arange(len(errors)), rows)
    rule = choice(errors[rows], shipped)
    return RuleCheck(
        verdict.reason,
        int(by_chosen.sum()),
        int(by_shipped.sum()),
        verdict.wins,
        verdict.losses,
        verdict.p_value,
        int(errors[rest, rule].sum()),
        int(errors[rest, shipped].sum()),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--part", choices=("calibration", "validation"), default=None)
    parser.add_argument("--names", default=None, metavar="REGEX")
    parser.add_argument("--shots", default="10,25,50", help="K confirmed photos, e.g. 10,25")
    parser.add_argument(
        "--shuffle", type=int, action="append", metavar="SEED",
        help="an order of the photos (repeat; default seeds 24, 1, 2, 3)",
    )  # fmt: skip
    parser.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)
    images = bench_photos(args.folder, args.part, args.names)
    if not images:
        print(f"{args.folder}: no labelled images", file=sys.stderr)
        return 1
    finder, classifier = DiceFinder.load(args.models), PipClassifier.load(args.models)
    errors, rules = peak_rule_errors(images, finder, classifier)
    shipped = rules.index(finder.peak_rule)
    dice = np.array([len(image.dice) for image in images])
    print(
        f"{args.folder}: {len(images)} photos, {dice.sum()} dice; shipped rule "
        f"{errors[:, shipped].sum()} errors, best in hindsight {errors.sum(axis=0).min()}"
    )
    print("| choice | seed | K | fold errors, chosen / shipped | won-lost, p | verdict | "
          "rest: errors chosen / shipped (dice) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for label, choice in CHOICES.items():
        for seed in args.shuffle or [24, 1, 2, 3]:
            order = np.random.default_rng(seed).permutation(len(images))
            for k in sorted({int(part) for part in args.shots.split(",")}):
                if not 0 < k < len(images):
                    continue
                check = check_setup_rule(errors, shipped, order[:k].tolist(), choice)
                print(
                    f"| {label} | {seed} | {k} | {check.fold_adapted} / {check.fold_shipped} | "
                    f"{check.wins}-{check.losses}, {check.p_value:.3f} | {check.reason} | "
                    f"{check.rest_chosen} / {check.rest_shipped} ({dice[order[k:]].sum()}) |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
