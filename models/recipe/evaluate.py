"""Measuring the shipped models through the runtime wrappers (onnxruntime, exactly what the
pipeline runs: finder, box filters, classifier, peaks confirmed by the PeakRule) on labelled images.

Scored by companion.vision.scoring, as bench/vision_eval.py scores: a found die matches a
labelled die when its centre lies within 0.6 x the labelled die's side of the labelled
centre (closest pairs first, each used once)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledImage
from companion.vision.finder import DiceFinder, PeakRule
from companion.vision.pipeline import read_dice
from companion.vision.scoring import Figures, confusion_key, ratio, score
from companion.vision.types import DieBox, DieReading


@dataclass
class LabelledBoxes:
    """The classifier alone on the labelled boxes: what it reads when the finder is right."""

    dice: int = 0
    correct: int = 0
    unreadable: int = 0
    confusions: dict[str, int] = field(default_factory=dict)


@dataclass
class Validation:
    """One folder's figures: the whole pipeline (None without a finder) and the classifier
    alone on the labelled boxes."""

    images: int
    pipeline: Figures | None
    boxes: LabelledBoxes

    def summary(self) -> dict[str, object]:
        """The figures as written into the manifests ("confusions": labelled boxes)."""
        out: dict[str, object] = {"images": self.images, "dice": self.boxes.dice}
        if self.pipeline is not None:
            out.update(self.pipeline.summary())
        out.update(
            classifier_accuracy_on_labelled_boxes=ratio(self.boxes.correct, self.boxes.dice),
            classifier_unreadable_on_labelled_boxes=ratio(self.boxes.unreadable, self.boxes.dice),
            confusions=self.boxes.confusions,
        )
        return out


def evaluate(
    images: Sequence[LabelledImage], finder: DiceFinder | None, classifier: PipClassifier
) -> Validation:
    """The pipeline's figures (when a finder is given; scored as bench/vision_eval.py
    does) and the classifier alone on the labelled boxes."""
    boxes = LabelledBoxes()
    rows = []
    for labelled in images:
        image = labelled.load()
        boxes.dice += len(labelled.dice)
        truth_boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0) for d in labelled.dice]
        for die, (value, _, _) in zip(
            labelled.dice, classifier.read(image, truth_boxes), strict=True
        ):
            boxes.correct += value == die.value
            boxes.unreadable += value is None
            if value != die.value:
                key = confusion_key(die.value, value)
                boxes.confusions[key] = boxes.confusions.get(key, 0) + 1
        if finder is not None:
            rows.append((labelled, read_dice(image, finder, classifier), ()))
    return Validation(len(images), score(rows) if finder is not None else None, boxes)


@dataclass(frozen=True)
class PeakRuleCandidates:
    """The values each band of the PeakRule is chosen from (train.py's evaluate stage).
    Ties go to the rule listed first by `rules`: thresholds alone, then with a weak band,
    then with a middle band too, each in the order of the values below."""

    thresholds: tuple[float, ...] = (0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.7, 0.3, 0.75, 0.8)
    weak_thresholds: tuple[float, ...] = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
    confidences: tuple[float, ...] = (0.98, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5)
    sure_thresholds: tuple[float, ...] = (0.6, 0.7, 0.8, 0.9, 1.01)
    middle_confidences: tuple[float, ...] = (0.3, 0.5, 0.7)

    def rules(self) -> list[PeakRule]:
        """Every candidate: one threshold alone; with a weak band (a weak threshold under
        it, kept at a confidence); and each of those with a middle band (a sure threshold
        over the threshold, under which a peak needs a face read at a middle confidence)."""
        bands: list[tuple[float, float | None, float]] = [(t, None, 1.0) for t in self.thresholds]
        bands += [
            (t, w, c)
            for t in self.thresholds
            for w in self.weak_thresholds
            if w < t
            for c in self.confidences
        ]
        rules = [PeakRule(t, t, 0.0, w, c) for t, w, c in bands]
        rules += [
            PeakRule(t, sure, middle, w, c)
            for t, w, c in bands
            for sure in self.sure_thresholds
            if sure > t
            for middle in self.middle_confidences
        ]
        return rules


@contextmanager
def rule_applied(finder: DiceFinder, rule: PeakRule) -> Iterator[DiceFinder]:
    """The finder with ``rule`` in place of its manifest's peak rule for the block, and
    its own rule back afterwards (even when the block raises)."""
    # the finder keeps its rule as attributes of the same names as PeakRule's fields
    names = [f.name for f in fields(PeakRule)]
    saved = {name: getattr(finder, name) for name in names}
    try:
        for name in names:
            setattr(finder, name, getattr(rule, name))
        yield finder
    finally:
        for name, value in saved.items():
            setattr(finder, name, value)


def peak_rule_errors(
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    candidates: PeakRuleCandidates | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, list[PeakRule]]:
    """(photos x rules missed + false + misread dice, the rules in the candidates' order):
    every peak from the lowest candidate floor up is read once per photo, and each rule
    then picks from those readings. (The pipeline itself only looks at the peaks from its
    rule's floor up, and fewer boxes can change what the box filters drop, so a rule's
    cost here can differ by a die or so from its cost through the pipeline.) ``progress``
    is told (photos read, photos) after each photo."""
    candidates = candidates or PeakRuleCandidates()
    rules = candidates.rules()
    floor = min([*candidates.thresholds, *candidates.weak_thresholds])
    errors = np.zeros((len(images), len(rules)), np.int64)
    with rule_applied(finder, PeakRule(floor, floor)):
        for row, labelled in enumerate(images):
            readings = read_dice(labelled.load(), finder, classifier)
            errors[row] = [peak_rule_cost(rule, labelled, readings) for rule in rules]
            if progress is not None:
                progress(row + 1, len(images))
    return errors, rules


def peak_rule_costs(
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    candidates: PeakRuleCandidates | None = None,
) -> list[tuple[int, PeakRule]]:
    """(missed + false + misread dice on ``images``, rule) for every candidate rule, in
    the candidates' order (`peak_rule_errors` summed over the photos)."""
    errors, rules = peak_rule_errors(images, finder, classifier, candidates)
    return [(int(total), rule) for total, rule in zip(errors.sum(axis=0), rules, strict=True)]


def best_peak_rule(
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    candidates: PeakRuleCandidates | None = None,
) -> PeakRule:
    """The finder's PeakRule with the fewest missed + false + misread dice on ``images``
    (training images: the validation part never tunes anything). Misreads count because
    without them the cheapest rule keeps every misread die of a real die (a kept misread
    die scored as a hit, a dropped one as a miss), which pushed min_confidence down; a
    misread die is worse at the table than a missing one, which is flagged as a mismatch.
    Ties go to the rule listed first (PeakRuleCandidates)."""
    costs = peak_rule_costs(images, finder, classifier, candidates)
    # min keeps the first of equal costs
    return min(costs, key=lambda cost_rule: cost_rule[0])[1]


def peak_rule_cost(rule: PeakRule, labelled: LabelledImage, readings: Sequence[DieReading]) -> int:
    """Missed + false + misread dice on one image when ``rule`` picks from ``readings``
    (every peak, read). An unreadable reading of a labelled die counts as misread."""
    kept = [r for r in readings if rule.keeps(r.where.score, r.value, r.confidence)]
    return score([(labelled, kept, ())]).errors
