"""How well a peak rule chosen on the calibration photos carries to photos it was not
chosen on: each calibration source left out in turn.

    .venv/bin/python bench/peak_rule_choice.py --models .cache/pairs/fnow+c15 \\
        [--models .cache/pairs/fnow+s37 ...] [--data ../shared/data]

A pair's peak rule (companion.vision.finder.PeakRule) is chosen by `train.py --only
evaluate` on the calibration photos of the four scene sources: of some 4,000 candidate
rules (models.recipe.evaluate.PeakRuleCandidates), the one with the fewest missed + false
+ misread dice. Three draws of one classifier recipe land 24 pooled validation dice apart,
and their rules differ more than their readings of the labelled boxes do (models/README.md,
"Stage 37 result"): the choice may be fitting the calibration photos' noise.

This measures it on the calibration photos alone (the validation parts are never read):
every photo is read once with every peak from the lowest candidate floor, every
candidate's errors counted per photo (models.recipe.evaluate.peak_rule_errors, which
train.py's choice sums); then for each source left out,
a rule is chosen on the other three by each way below and its errors on the left-out
source counted, and the four counts summed:

- ``fewest``: the rule with the fewest errors (train.py's way, models.recipe.evaluate.
  best_peak_rule);
- ``simplest near the fewest``: of the rules whose errors exceed the fewest by no more
  than one standard error of the per-photo difference (the spread one photo more or less
  makes), the first in the candidates' order: a threshold alone before a weak band, before
  a middle band; the one-standard-error rule of model selection;
- ``best in hindsight``: the left-out source's own best rule (a floor no choice reaches).

Prints, per pair, each way's left-out errors per source and summed, and the rules chosen.
A way that leaves fewer errors on the left-out sources carries better to photos it never
saw; only then is it worth a change to train.py's choice (and a ship of its own).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the candidate peak rules

from companion.vision.classifier import PipClassifier  # noqa: E402
from companion.vision.datasets import FOLDERS, load_split  # noqa: E402
from companion.vision.finder import DiceFinder, PeakRule  # noqa: E402
from models.recipe.evaluate import peak_rule_errors  # noqa: E402

# (photos' per-rule errors: photos x rules) -> the chosen rule's index
Choice = Callable[[np.ndarray], int]


def photos_read(done: int, total: int) -> None:
    if done % 50 == 0 or done == total:
        print(f"  read {done} of {total} photos", file=sys.stderr, flush=True)


def fewest(errors: np.ndarray) -> int:
    """The first rule with the fewest errors (best_peak_rule's tie-break)."""
    return int(np.argmin(errors.sum(axis=0)))


def simplest_near_fewest(errors: np.ndarray) -> int:
    """The first rule, in the candidates' order, within one standard error of the fewest."""
    totals = errors.sum(axis=0)
    best = int(np.argmin(totals))
    difference = errors - errors[:, [best]]  # photos x rules, against the best rule
    photos = len(errors)
    standard_error = np.sqrt(photos) * difference.std(axis=0)
    near = np.flatnonzero(totals - totals[best] <= standard_error)
    return int(near[0])


CHOICES: dict[str, Choice] = {"fewest": fewest, "simplest near the fewest": simplest_near_fewest}


def left_out(errors: np.ndarray, sources: np.ndarray, choice: Choice) -> dict[str, tuple[int, int]]:
    """For each source: (the rule chosen on the others, its errors on that source)."""
    result = {}
    for source in sorted(set(sources)):
        held = sources == source
        rule = choice(errors[~held])
        result[source] = (rule, int(errors[held, rule].sum()))
    return result


def describe(rule: PeakRule) -> str:
    weak = (
        ""
        if rule.weak_threshold is None
        else (f", weak {rule.weak_threshold:g} at {rule.weak_min_confidence:g}")
    )
    middle = (
        ""
        if rule.sure_threshold == rule.threshold
        else (f", sure {rule.sure_threshold:g}, read at {rule.min_confidence:g}")
    )
    return f"threshold {rule.threshold:g}{middle}{weak}"


def report(name: str, errors: np.ndarray, sources: np.ndarray, rules: list[PeakRule]) -> None:
    names = sorted(set(sources))
    print(f"\n{name}: {len(errors)} calibration photos, {len(rules)} candidate rules")
    print("| way of choosing | " + " | ".join(names) + " | summed |")
    print("|---|" + "---|" * (len(names) + 1))
    for label, choice in CHOICES.items():
        chosen = left_out(errors, sources, choice)
        counts = [chosen[n][1] for n in names]
        print(f"| {label} | " + " | ".join(map(str, counts)) + f" | **{sum(counts)}** |")
    hindsight = [int(errors[sources == n].sum(axis=0).min()) for n in names]
    print("| best in hindsight | " + " | ".join(map(str, hindsight)) + f" | {sum(hindsight)} |")
    for label, choice in CHOICES.items():
        print(f"  {label}, on all four sources: {describe(rules[choice(errors)])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", type=Path, action="append", required=True,
        help="a folder holding a finder and a classifier (e.g. .cache/pairs/NAME); repeat",
    )  # fmt: skip
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    args = parser.parse_args(argv)
    split = load_split(args.data)
    images = [im for name in FOLDERS for im in split.calibration.get(name, ())]
    if not images:
        raise SystemExit("no calibration photos found: is ../shared/data beside the checkout?")
    sources = np.array([im.folder for im in images])
    for folder in args.models:
        finder, classifier = DiceFinder.load(folder), PipClassifier.load(folder)
        errors, rules = peak_rule_errors(images, finder, classifier, progress=photos_read)
        report(str(folder), errors, sources, rules)
    return 0


if __name__ == "__main__":
    sys.exit(main())
