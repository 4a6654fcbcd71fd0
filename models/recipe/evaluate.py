"""Measuring the shipped models through the runtime wrappers (onnxruntime, exactly what the
pipeline runs: finder, box filters, classifier, peaks confirmed by the PeakRule) on labelled images.

Match rule: a found die matches a labelled die when its centre lies within 0.6 x the
labelled die's side of the labelled centre (each found die matches at most one die)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledImage
from companion.vision.finder import DiceFinder, PeakRule
from companion.vision.pipeline import classify, confirm_weak, drop_nested, drop_undersized, locate
from companion.vision.types import DieBox, DieReading

MATCH_DISTANCE = 0.6


@dataclass
class Tally:
    images: int = 0
    labelled: int = 0
    found: int = 0
    matched: int = 0
    false_dice: int = 0
    value_correct: int = 0
    unreadable: int = 0
    gt_correct: int = 0
    gt_unreadable: int = 0
    confusions: dict[str, int] = field(default_factory=dict)

    def figures(self) -> dict[str, float | int]:
        def ratio(a: int, b: int) -> float:
            return round(a / b, 4) if b else 0.0

        return {
            "images": self.images,
            "dice": self.labelled,
            "recall": ratio(self.matched, self.labelled),
            "false_dice_per_100_images": round(100 * self.false_dice / max(1, self.images), 2),
            "value_accuracy_of_found": ratio(self.value_correct, self.matched),
            "unreadable_rate_of_found": ratio(self.unreadable, self.matched),
            "classifier_accuracy_on_labelled_boxes": ratio(self.gt_correct, self.labelled),
            "classifier_unreadable_on_labelled_boxes": ratio(self.gt_unreadable, self.labelled),
        }


def match(truth: Sequence[tuple[float, float, float]], found: Sequence[DieBox]) -> list[int]:
    """For each labelled die (cx, cy, side), the index of its matched found die or -1;
    greedy by distance."""
    pairs = []
    for i, (cx, cy, side) in enumerate(truth):
        for j, box in enumerate(found):
            distance = math.hypot(box.cx - cx, box.cy - cy)
            if distance <= MATCH_DISTANCE * side:
                pairs.append((distance / side, i, j))
    assignment = [-1] * len(truth)
    used: set[int] = set()
    for _, i, j in sorted(pairs):
        if assignment[i] == -1 and j not in used:
            assignment[i] = j
            used.add(j)
    return assignment


def evaluate(
    images: Sequence[LabelledImage], finder: DiceFinder | None, classifier: PipClassifier
) -> Tally:
    """Finder recall/false dice and value accuracy of found dice (when a finder is given),
    plus the classifier alone on the labelled boxes."""
    tally = Tally()
    for labelled in images:
        image = labelled.load()
        tally.images += 1
        tally.labelled += len(labelled.dice)
        truth_boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0) for d in labelled.dice]
        for die, (value, _, _) in zip(
            labelled.dice, classifier.read(image, truth_boxes), strict=True
        ):
            tally.gt_correct += value == die.value
            tally.gt_unreadable += value is None
            if value != die.value:
                key = f"{die.value}->{value}"
                tally.confusions[key] = tally.confusions.get(key, 0) + 1
        if finder is None:
            continue
        # the dice the pipeline reports: finder, box filters, classifier, weak peaks confirmed
        found = read_dice(image, finder, classifier)
        tally.found += len(found)
        assignment = match([(d.cx, d.cy, d.side) for d in labelled.dice], [r.where for r in found])
        matched = [
            (die, found[j]) for die, j in zip(labelled.dice, assignment, strict=True) if j >= 0
        ]
        tally.matched += len(matched)
        tally.false_dice += len(found) - len(matched)
        for die, reading in matched:
            tally.value_correct += reading.value == die.value
            tally.unreadable += reading.value is None
    return tally


def read_dice(
    image: np.ndarray, finder: DiceFinder, classifier: PipClassifier
) -> tuple[DieReading, ...]:
    """The pipeline's dice for one photo (companion.vision.pipeline, colour aside)."""
    boxes = drop_undersized(drop_nested(locate(finder, image)))
    readings = classify(classifier, image, boxes) if boxes else ()
    return confirm_weak(readings, finder.peak_rule)


def best_peak_rule(
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    thresholds: Sequence[float],
    weak_thresholds: Sequence[float],
    confidences: Sequence[float],
    sure_thresholds: Sequence[float] = (),
    middle_confidences: Sequence[float] = (),
) -> PeakRule:
    """The finder's PeakRule with the fewest missed + false + misread dice on ``images``
    (training images: the validation part never tunes anything). Misreads count because
    without them the cheapest rule keeps every misread die of a real die (a kept misread
    die scored as a hit, a dropped one as a miss), which pushed min_confidence down; a
    misread die is worse at the table than a missing one, which is flagged as a mismatch.

    Candidates: one threshold alone; with a weak band (``weak_thresholds`` under it, kept at ``confidences``); and each of
    those with a middle band (``sure_thresholds`` over the threshold, where a peak needs a
    face read at ``middle_confidences``). Ties go to the simpler, stricter rule (listed
    first)."""
    # every peak from the lowest candidate up, read once; each rule then picks from them
    names = ("threshold", "sure_threshold", "min_confidence", "weak_threshold")
    saved = {name: getattr(finder, name) for name in names}
    floor = min([*thresholds, *weak_thresholds])
    for name, value in zip(names, (floor, floor, 0.0, None), strict=True):
        setattr(finder, name, value)
    outputs = [(labelled, read_dice(labelled.load(), finder, classifier)) for labelled in images]
    for name, value in saved.items():
        setattr(finder, name, value)

    bands: list[tuple[float, float | None, float]] = [(t, None, 1.0) for t in thresholds]
    bands += [(t, w, c) for t in thresholds for w in weak_thresholds if w < t for c in confidences]
    rules = [PeakRule(t, t, 0.0, w, c) for t, w, c in bands]
    rules += [
        PeakRule(t, sure, middle, w, c)
        for t, w, c in bands
        for sure in sure_thresholds
        if sure > t
        for middle in middle_confidences
    ]
    # min keeps the first of equal costs
    return min(rules, key=lambda rule: sum(peak_rule_cost(rule, *output) for output in outputs))


def peak_rule_cost(rule: PeakRule, labelled: LabelledImage, readings: Sequence[DieReading]) -> int:
    """Missed + false + misread dice on one image when ``rule`` picks from ``readings``
    (every peak, read). An unreadable reading of a labelled die counts as misread."""
    kept = [r for r in readings if rule.keeps(r.where.score, r.value, r.confidence)]
    assignment = match([(d.cx, d.cy, d.side) for d in labelled.dice], [r.where for r in kept])
    hits = sum(1 for j in assignment if j >= 0)
    misread = sum(
        1
        for die, j in zip(labelled.dice, assignment, strict=True)
        if j >= 0 and kept[j].value != die.value
    )
    return (len(labelled.dice) - hits) + (len(kept) - hits) + misread
