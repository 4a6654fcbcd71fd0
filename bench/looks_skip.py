"""The looks only where they can change a decision: how many dice need them, and whether
any decision moves, on every folder read so far.

    .venv/bin/python bench/looks_skip.py [--models M] [--thresholds 0.99 0.9945 ...]

The reader takes a die's independent looks (eight views, the wide crop: 9 crops) only
when its looks could bring it to the auto-apply threshold (companion.vision.pipeline.
take_looks, `ConfidenceMap.may_be_sure`); the others get the raw map's confidence, capped
by the highest their looks could give (`ConfidenceMap.without_looks_confidence`). For the
folders kept in .cache/sure/ (models/recipe/sure_features.py: every die's looks, as
bench/auto_apply.py reads them; `--models`' pair only) and each threshold (the shipped
one, and the given ones as if they shipped), it prints the share of dice read with their
looks, and the photos (each a roll of its labelled dice count, companion.vision.
confidence.decide_roll) whose decision differs from the one every look gives: apply or
ask, and which dice are asked about. The last line is `decisions_changed: N` (0).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.confidence import ConfidenceMap, decide_roll
from companion.vision.types import DieBox, DieReading

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the cached features

from models.recipe.confidence_fit import die_confidences  # noqa: E402
from models.recipe.sure_features import CACHE, Features  # noqa: E402

THRESHOLDS = (0.95, 0.99, 0.9945, 0.998)


def skipped_confidences(
    f: Features, confidence_map: ConfidenceMap
) -> tuple[np.ndarray, np.ndarray]:
    """Each die's confidence as the reader gives it, and whether its looks were taken."""
    every = die_confidences(f, confidence_map)
    embeddings = f.embedding if len(f.embedding) else None
    values = f.value.astype(int)
    taken = confidence_map.may_be_sure(f.raw, values, f.peak, f.side, embeddings)
    without = confidence_map.without_looks_confidence(f.raw, values, f.peak, f.side, embeddings)
    confidence = np.where(taken, every, without)
    return np.where(values > 0, confidence, 0.0), taken


def changed_decisions(f: Features, ours: np.ndarray, every: np.ndarray, threshold: float) -> int:
    """Photos whose decision (apply, the dice asked about) differs."""
    box = DieBox(0.0, 0.0, 1.0, 1.0)
    changed = 0
    for p in range(f.photos):
        index = np.flatnonzero(f.photo == p)
        values = [int(v) or None for v in f.value[index]]

        def roll(confidence: np.ndarray, idx: np.ndarray = index, vs: list = values) -> list:
            return [DieReading(box, v, float(c)) for v, c in zip(vs, confidence[idx], strict=True)]

        a = decide_roll(roll(ours), int(f.labelled[p]), threshold)
        b = decide_roll(roll(every), int(f.labelled[p]), threshold)
        if a.apply != b.apply or {u.index for u in a.unsure} != {u.index for u in b.unsure}:
            changed += 1
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--thresholds", type=float, nargs="*", default=list(THRESHOLDS))
    args = parser.parse_args(argv)
    classifier = PipClassifier.load(args.models)
    shipped = classifier.confidence_map
    if shipped is None or shipped.looks is None or shipped.without_looks is None:
        print("the classifier's confidence has no looks and raw map: every die is read alike")
        return 0
    folders = sorted(p for p in CACHE.glob("*.npz") if not p.name.startswith("train-boxes"))
    sources = [(p.stem, Features.load(p)) for p in folders]
    total_changed = 0
    for threshold in (shipped.threshold, *args.thresholds):
        confidence_map = ConfidenceMap(
            shipped.xs, shipped.ys, threshold, shipped.method, shipped.looks, shipped.without_looks
        )
        dice = taken_all = changed_all = 0
        for name, f in sources:
            if not f.dice:
                continue
            every = np.where(f.value > 0, die_confidences(f, confidence_map), 0.0)
            ours, taken = skipped_confidences(f, confidence_map)
            changed = 0 if threshold is None else changed_decisions(f, ours, every, threshold)
            dice += f.dice
            taken_all += int(taken.sum())
            changed_all += changed
            print(
                f"  threshold {threshold}: {name}: {f.dice} dice, {taken.mean():.1%} read with "
                f"their looks; {changed} of {f.photos} decisions changed",
                flush=True,
            )
        print(
            f"threshold {threshold}: {dice} dice, {taken_all / max(dice, 1):.1%} read with their "
            f"looks; {changed_all} decisions changed"
        )
        total_changed += changed_all
    print(f"decisions_changed: {total_changed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
