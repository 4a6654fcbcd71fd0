"""A setup that fine-tunes its whole classifier in a background process
(companion.vision.adapt_deep_learn), end to end: the real store (SQLite, crops on disk),
the real child process (`python -m models.recipe.adapt_deep`, torch) and the real
classifier through onnxruntime, on the adaptation fixture (tests/fixtures/adapt: the ringed
ones classifier 1.4 misreads about half the time). Taught the even cells as 16 rolls of 8
dice, the fine-tuned net is adopted, reads the odd cells better than the shipped one and
vouches for no more than its folds showed; it is not fine-tuned again before new rolls
come; a restart reads it back; forgetting the setup removes it."""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.adapt_deep_learn import DEEP_DIR, DeepClassifier, available
from companion.vision.adapt_files import ADAPTED_DIR
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import SetupStore
from companion.vision.classifier import PipClassifier
from companion.vision.types import DieBox, DieReading

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "adapt"
CELL = 48
COLUMNS = 16
PER_ROLL = 8


def test_the_test_setup_can_fine_tune() -> None:
    assert available(), "torch (the `train` extra) is part of the test setup"


@pytest.fixture(scope="module")
def mosaic() -> tuple[np.ndarray, list[DieBox], np.ndarray]:
    image = cv2.imread(str(FIXTURE / "tomitomi_validation.png"), cv2.IMREAD_COLOR)
    assert image is not None
    with open(FIXTURE / "labels.csv", newline="", encoding="utf-8") as handle:
        values = np.array([int(row["value"]) for row in csv.DictReader(handle)])
    side = CELL / PipClassifier.load().margin
    boxes = [
        DieBox((k % COLUMNS) * CELL + CELL / 2, (k // COLUMNS) * CELL + CELL / 2, side, side)
        for k in range(len(values))
    ]
    return image, boxes, values


def errors(
    classifier: PipClassifier, image: np.ndarray, boxes: list[DieBox], values: np.ndarray
) -> int:
    readings = classifier.read(image, boxes)
    return sum(value != int(truth) for (value, _, _), truth in zip(readings, values, strict=True))


def test_a_setup_fine_tunes_in_a_child_process_adopts_on_evidence_and_keeps_it(
    tmp_path: Path, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    classifier = PipClassifier.load()
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, "kitchen", classifier, deep=True)
    assert learner.deep_learner is not None and learner.deep_classifier() is None
    taught = list(range(0, len(boxes), 2))
    for roll in range(0, len(taught), PER_ROLL):
        cells = taught[roll : roll + PER_ROLL]
        dice = [ConfirmedDie(boxes[k], int(values[k])) for k in cells]
        learner.record(image, dice, photo=f"roll {roll // PER_ROLL}", throw=roll // PER_ROLL)
    learner.refresh()

    assert learner.refresh_deep()  # the child process ran and its verdict was kept
    verdict = learner.deep_learner.verdict
    assert verdict is not None and verdict.adopted, verdict
    deep = learner.reader_classifier()
    assert isinstance(deep, DeepClassifier)
    read = list(range(1, len(boxes), 2))
    held_boxes, held_values = [boxes[k] for k in read], values[read]
    cold = errors(classifier, image, held_boxes, held_values)
    assert cold >= 8, f"the shipped net misreads only {cold}: re-choose the fixture"
    assert errors(deep, image, held_boxes, held_values) <= cold // 2
    # no die surer than the folds vouch for
    sure = tuple(
        DieReading(box, int(value), 0.9999)
        for box, value in zip(held_boxes[:4], held_values[:4], strict=True)
    )
    assert all(r.confidence == pytest.approx(verdict.ceiling) for r in deep.vouched(sure))
    assert verdict.ceiling < 0.999
    # nothing new confirmed: not fine-tuned again
    assert not learner.refresh_deep()

    again = SetupLearner(SetupStore(tmp_path), "kitchen", classifier, deep=True)
    restored = again.deep_classifier()
    assert restored is not None and restored.verdict == verdict
    assert errors(restored, image, held_boxes, held_values) == errors(
        deep, image, held_boxes, held_values
    )
    summary = again.summary()
    assert summary.deep_adopted and summary.deep_verdict.startswith("fine-tuned classifier: ")

    again.forget()
    assert again.deep_classifier() is None
    assert not (store.crops_dir / "kitchen" / ADAPTED_DIR / DEEP_DIR).exists()
    assert isinstance(
        SetupLearner(SetupStore(tmp_path), "kitchen", classifier, deep=True).reader_classifier(),
        PipClassifier,
    )


def test_a_setup_without_fine_tuning_asked_for_has_no_deep_half(tmp_path: Path) -> None:
    learner = SetupLearner(SetupStore(tmp_path), "kitchen", PipClassifier.load())
    assert learner.deep_learner is None and not learner.refresh_deep()
    assert learner.summary().deep_verdict == ""
