"""The training recipe's measuring (models/recipe/evaluate.py): the cost that chooses the
finder's PeakRule on training photos (missed + false + misread dice, so that a rule gains
nothing by keeping a real die it reads wrong), the candidate rules it is chosen from (with
the real models on a few real photos) and the figures written into manifests."""

from __future__ import annotations

from pathlib import Path

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledDie, LabelledImage, read_yolo_folder
from companion.vision.finder import DiceFinder, PeakRule
from companion.vision.scoring import score
from companion.vision.types import DieBox, DieReading
from models.recipe.evaluate import (
    LabelledBoxes,
    PeakRuleCandidates,
    Validation,
    best_peak_rule,
    peak_rule_cost,
    peak_rule_costs,
    rule_applied,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "byler-d6-train"

PHOTO = LabelledImage(
    Path("/data/byler-d6-train/images/a.jpg"),
    "byler-d6-train",
    640,
    480,
    (LabelledDie(100, 100, 40, 40, 5), LabelledDie(300, 100, 40, 40, 2)),
)


def _peak(cx: float, score: float, value: int | None, confidence: float) -> DieReading:
    return DieReading(DieBox(cx, 100, 40, 40, 0.0, score), value, confidence)


RIGHT = _peak(100, 0.9, 5, 0.99)  # the five, read right
UNSURE_WRONG = _peak(302, 0.5, 3, 0.40)  # the two, read as 3 without confidence
FALSE = _peak(500, 0.5, 4, 0.45)  # a peak where no die lies

STRICT = PeakRule(threshold=0.45, sure_threshold=0.6, min_confidence=0.5)
LOOSE = PeakRule(threshold=0.45, sure_threshold=0.6, min_confidence=0.3)


def test_every_die_found_and_read_right_costs_nothing() -> None:
    right_two = _peak(298, 0.9, 2, 0.97)
    assert peak_rule_cost(STRICT, PHOTO, [RIGHT, right_two]) == 0


def test_a_misread_die_costs_as_much_kept_as_dropped() -> None:
    # kept by the loose rule: found but misread; dropped by the strict rule: missed
    assert peak_rule_cost(LOOSE, PHOTO, [RIGHT, UNSURE_WRONG]) == 1
    assert peak_rule_cost(STRICT, PHOTO, [RIGHT, UNSURE_WRONG]) == 1


def test_false_dice_and_misses_add_up() -> None:
    # loose: the false peak kept (1) and the two misread (1); strict: the two missed (1)
    assert peak_rule_cost(LOOSE, PHOTO, [RIGHT, UNSURE_WRONG, FALSE]) == 2
    assert peak_rule_cost(STRICT, PHOTO, [RIGHT, UNSURE_WRONG, FALSE]) == 1
    assert peak_rule_cost(STRICT, PHOTO, []) == 2


def test_an_unreadable_die_kept_by_the_sure_band_counts_as_misread() -> None:
    cocked = _peak(300, 0.8, None, 0.9)
    assert peak_rule_cost(STRICT, PHOTO, [RIGHT, cocked]) == 1


PIPELINE_KEYS = {
    "recall",
    "false_dice_per_100_images",
    "value_accuracy_of_found",
    "unreadable_rate_of_found",
    "missed_false_misread",
}
CLASSIFIER_KEYS = {
    "images",
    "dice",
    "classifier_accuracy_on_labelled_boxes",
    "classifier_unreadable_on_labelled_boxes",
    "confusions",
}


def test_manifest_figures_with_and_without_a_finder() -> None:
    boxes = LabelledBoxes(dice=2, correct=1, unreadable=0, confusions={"2->3": 1})
    alone = Validation(1, None, boxes).summary()
    assert set(alone) == CLASSIFIER_KEYS  # --only classifier: no pipeline figures
    assert alone["classifier_accuracy_on_labelled_boxes"] == 0.5
    pipeline = score([(PHOTO, [RIGHT, UNSURE_WRONG, FALSE], ())])
    both = Validation(1, pipeline, boxes).summary()
    assert set(both) == CLASSIFIER_KEYS | PIPELINE_KEYS
    assert (both["images"], both["dice"], both["recall"]) == (1, 2, 1.0)
    assert both["missed_false_misread"] == 2  # the two misread, the false peak
    assert both["confusions"] == {"2->3": 1}  # the classifier's, on the labelled boxes


def test_the_candidate_rules_cover_every_band_and_list_the_simple_ones_first() -> None:
    grid = PeakRuleCandidates(
        thresholds=(0.5, 0.4),
        weak_thresholds=(0.3, 0.45),
        confidences=(0.9,),
        sure_thresholds=(0.8,),
        middle_confidences=(0.5,),
    )
    rules = grid.rules()
    # 2 thresholds alone, 3 weak bands (0.45 only under 0.5), each again with a middle band
    assert len(rules) == 2 + 3 + 5
    assert rules[:2] == [PeakRule(0.5, 0.5), PeakRule(0.4, 0.4)]
    assert PeakRule(0.5, 0.5, 0.0, 0.45, 0.9) in rules
    assert PeakRule(0.4, 0.4, 0.0, 0.45, 0.9) not in rules  # a weak band under its threshold
    assert rules[-1] == PeakRule(0.4, 0.8, 0.5, 0.3, 0.9)
    assert len(set(rules)) == len(rules)


def test_the_default_candidates_are_the_7464_rules_train_py_chooses_from() -> None:
    rules = PeakRuleCandidates().rules()
    assert len(rules) == len(set(rules)) == 7464  # the count docs/BENCHMARKS.md cites
    shipped = DiceFinder.load().peak_rule
    assert shipped in rules  # chosen from these by train.py


def test_the_best_rule_is_the_first_cheapest_on_real_photos() -> None:
    """Through the real models on a few real photos: best_peak_rule returns the first rule
    of the lowest cost that peak_rule_costs gives (ties go to the rule listed first), and
    leaves the finder's own rule in place."""
    images = read_yolo_folder(DATA / "images", DATA / "labels", "byler-d6-train")[4:40:12]
    finder, classifier = DiceFinder.load(), PipClassifier.load()
    before = finder.peak_rule
    grid = PeakRuleCandidates(
        thresholds=(0.5, 0.95, 0.45),
        weak_thresholds=(0.3,),
        confidences=(0.9,),
        sure_thresholds=(),
    )
    costs = peak_rule_costs(images, finder, classifier, grid)
    assert [rule for _, rule in costs] == grid.rules()
    cheapest = min(cost for cost, _ in costs)
    first_cheapest = next(rule for cost, rule in costs if cost == cheapest)
    assert best_peak_rule(images, finder, classifier, grid) == first_cheapest
    # a threshold of 0.95 alone drops most real dice: it cannot be the cheapest
    assert dict((rule, cost) for cost, rule in costs)[PeakRule(0.95, 0.95)] > cheapest
    assert finder.peak_rule == before


def test_a_rule_is_applied_for_a_block_and_the_finders_own_comes_back() -> None:
    finder = DiceFinder.load()
    own = finder.peak_rule
    other = PeakRule(0.9, 0.95, 0.4, 0.2, 0.6)
    with rule_applied(finder, other):
        assert finder.peak_rule == other
    assert finder.peak_rule == own
    try:
        with rule_applied(finder, other):
            raise RuntimeError("a failed measurement")
    except RuntimeError:
        pass
    assert finder.peak_rule == own
