"""Calibrated confidence (companion.vision.confidence): the isotonic map fitted and checked,
the map in the classifier's manifest applied by the pipeline and checked on the fixture
crops, a roll's confidence, the auto-apply threshold, and the decision to apply a roll or
to ask about its unsure dice only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from companion.vision.classifier import PipClassifier
from companion.vision.confidence import (
    CalibrationRoll,
    ConfidenceError,
    ConfidenceMap,
    choose_threshold,
    decide_roll,
    expected_calibration_error,
    fit_confidence_map,
    reliability_bins,
    roll_confidence,
)
from companion.vision.model import ModelError, default_models_dir
from companion.vision.pipeline import DiceReader, calibrate, classify, read_dice, take_looks
from companion.vision.types import DieBox, DieReading
from tests.images import read_image

REPO = Path(__file__).resolve().parents[2]
CROPS = REPO / "tests" / "fixtures" / "crops"
FIXTURE_DIE_SIDE = 26.0  # as written by models/recipe/make_fixtures.py


def _overconfident_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw probabilities whose true chance of being right is raw ** 3."""
    rng = np.random.default_rng(seed)
    raw = rng.uniform(0.3, 1.0, n)
    return raw, rng.random(n) < raw**3


def test_the_fitted_map_turns_raw_probabilities_into_calibrated_ones() -> None:
    raw, right = _overconfident_sample(4000, 1)
    fitted = fit_confidence_map(list(raw), list(right))
    assert all(b >= a for a, b in zip(fitted.ys, fitted.ys[1:], strict=False))  # monotone
    assert max(fitted.ys) < 1.0  # no block claims certainty
    fresh_raw, fresh_right = _overconfident_sample(4000, 2)  # checked on other dice
    assert expected_calibration_error(list(fresh_raw), list(fresh_right)) > 0.1
    assert expected_calibration_error(list(fitted.apply(fresh_raw)), list(fresh_right)) < 0.02
    assert fitted(0.9) == pytest.approx(0.9**3, abs=0.05)


def test_a_block_without_an_error_is_shrunk_below_certainty() -> None:
    fitted = fit_confidence_map([0.9] * 9 + [0.99] * 40, [False] + [True] * 48)
    assert fitted(1.0) == pytest.approx(40.5 / 41)
    assert fitted(0.9) == pytest.approx(8.5 / 10)


def test_reliability_bins_and_the_calibration_error() -> None:
    bins = reliability_bins([0.05, 0.95, 0.95, 1.0], [False, True, False, True], bins=10)
    assert [b.count for b in bins] == [1] + [0] * 8 + [3]
    assert bins[-1].accuracy == pytest.approx(2 / 3)
    assert bins[-1].confidence == pytest.approx((0.95 + 0.95 + 1.0) / 3)
    ece = expected_calibration_error([0.05, 0.95, 0.95, 1.0], [False, True, False, True])
    assert ece == pytest.approx(0.25 * 0.05 + 0.75 * abs(2 / 3 - 2.9 / 3))


def test_a_map_goes_through_json_and_a_broken_one_is_refused() -> None:
    confidence_map = ConfidenceMap((0.2, 0.9), (0.1, 0.95), threshold=0.8)
    assert ConfidenceMap.from_json(confidence_map.to_json()) == confidence_map
    for bad in (
        {"points": [[0.2, 0.9], [0.9, 0.5]]},  # decreasing
        {"points": [[0.9, 0.5], [0.2, 0.9]]},  # xs out of order
        {"points": [[0.2, 1.5]]},
        {"points": "none"},
        {"points": [[0.2, 0.5]], "auto_apply_threshold": 0},
    ):
        with pytest.raises(ConfidenceError):
            ConfidenceMap.from_json(bad)


def test_a_classifier_manifest_with_a_broken_map_fails_at_load(tmp_path: Path) -> None:
    for suffix in (".onnx", ".json"):
        shutil.copy(default_models_dir() / f"pip_classifier{suffix}", tmp_path)
    path = tmp_path / "pip_classifier.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    body["confidence"]["points"] = [[0.5, 0.9], [0.6, 0.2]]
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ModelError, match="manifest 'confidence': .*monotone"):
        PipClassifier.load(tmp_path)


# ----------------------------------------------------------------------------------------
# The shipped map, applied


def _fixture_frame() -> tuple[np.ndarray, list[DieBox], list[int]]:
    paths = sorted(CROPS.glob("*.png"))
    frame = np.hstack([read_image(p) for p in paths])
    boxes = [DieBox(20 + 40 * i, 20, FIXTURE_DIE_SIDE, FIXTURE_DIE_SIDE) for i in range(len(paths))]
    return frame, boxes, [int(p.name.split("_")[0]) for p in paths]


def test_the_shipped_map_is_applied_and_holds_on_the_fixture_crops() -> None:
    classifier = PipClassifier.load()
    confidence_map = classifier.confidence_map
    assert confidence_map is not None
    frame, boxes, values = _fixture_frame()
    raw = classify(classifier, frame, boxes, looks=confidence_map.needs_looks)
    calibrated = calibrate(raw, confidence_map)
    for before, after in zip(raw, calibrated, strict=True):
        if before.value is None:
            assert after.confidence == before.confidence
        elif confidence_map.looks is None:
            assert after.confidence == pytest.approx(confidence_map(before.confidence))
        else:  # the looks' score through the map: within the map's range
            assert min(confidence_map.ys) <= after.confidence <= max(confidence_map.ys)
        assert after.value == before.value and after.where == before.where
    # the crops are of validation photos (never fitted on): the mean confidence of the dice
    # read with a value is close to the share of them read right
    read = [
        (d.confidence, d.value == v) for d, v in zip(calibrated, values, strict=True) if d.value
    ]
    mean_confidence = np.mean([c for c, _ in read])
    accuracy = np.mean([r for _, r in read])
    assert abs(mean_confidence - accuracy) <= 0.06, (mean_confidence, accuracy)


def test_the_pipeline_reports_calibrated_confidences() -> None:
    from companion.synth import DieSpec, render_scene

    reader = DiceReader.load()
    image, _ = render_scene(
        np.random.default_rng(8), 640, 480, dice=[DieSpec(v, "white", "black") for v in (2, 6, 3)]
    )
    confidence_map = reader.classifier.confidence_map
    assert confidence_map is not None
    raw = read_dice(image, reader.finder, reader.classifier)
    if confidence_map.needs_looks:  # the looks of the dice that could be sure (none now)
        raw = take_looks(reader.classifier, image, raw, confidence_map)
    reported = reader.read(image).dice
    assert [d.value for d in reported] == [d.value for d in raw]
    expected = calibrate(raw, reader.classifier.confidence_map)
    assert [d.confidence for d in reported] == pytest.approx([d.confidence for d in expected])


# ----------------------------------------------------------------------------------------
# Rolls


def _die(value: int | None, confidence: float, second: int = 1) -> DieReading:
    probabilities = np.full(7, 0.01)
    probabilities[(value or 7) - 1] = confidence
    probabilities[second - 1] = max(probabilities[second - 1], (1 - confidence) * 0.8)
    return DieReading(DieBox(0, 0, 10, 10), value, confidence, probabilities=probabilities)


def test_a_rolls_confidence_is_the_chance_that_every_die_is_right() -> None:
    dice = [_die(3, 0.99), _die(5, 0.9), _die(None, 0.8)]
    assert roll_confidence(dice[:2]) == pytest.approx(0.891)
    assert roll_confidence(dice[:2], expected=2) == pytest.approx(0.891)
    assert roll_confidence(dice[:2], expected=3) == 0.0  # a die is missing
    assert roll_confidence(dice) == 0.0  # an unreadable die


def test_a_sure_roll_is_applied_at_once() -> None:
    dice = [_die(v, 0.999) for v in (1, 2, 3, 4, 5)]
    decision = decide_roll(dice, expected=5, threshold=0.99)
    assert decision.apply and decision.unsure == ()
    assert decision.roll_confidence == pytest.approx(0.999**5)


def test_a_roll_with_one_unsure_die_asks_about_that_die_only() -> None:
    dice = [_die(6, 0.999), _die(4, 0.62, second=5), _die(1, 0.998), _die(2, 0.999)]
    decision = decide_roll(dice, expected=4, threshold=0.99)
    assert not decision.apply
    assert [u.index for u in decision.unsure] == [1]
    (unsure,) = decision.unsure
    assert unsure.choices == (4, 5) and unsure.confidence == pytest.approx(0.62)
    assert (decision.missing, decision.extra) == (0, 0)


def test_the_question_names_the_fewest_dice_least_sure_first() -> None:
    # each die alone clears 0.9, the roll does not: the two least sure are named
    dice = [_die(v, c) for v, c in ((1, 0.97), (2, 0.95), (3, 0.99), (4, 0.96))]
    decision = decide_roll(dice, expected=4, threshold=0.95)
    assert [u.index for u in decision.unsure] == [1, 3]


def test_a_wrong_dice_count_or_an_unreadable_die_is_never_applied() -> None:
    dice = [_die(v, 0.999) for v in (1, 2, 3)]
    missing = decide_roll(dice, expected=4, threshold=0.9)
    assert not missing.apply and missing.missing == 1 and missing.unsure == ()
    extra = decide_roll(dice, expected=2, threshold=0.9)
    assert not extra.apply and extra.extra == 1
    cocked = decide_roll([*dice, _die(None, 0.9)], expected=4, threshold=0.5)
    assert not cocked.apply and [u.index for u in cocked.unsure] == [3]
    uncalibrated = decide_roll(dice, expected=3, threshold=None)
    assert not uncalibrated.apply and len(uncalibrated.unsure) == 3


def test_the_threshold_allows_at_most_one_wrong_roll_in_500() -> None:
    rolls = [CalibrationRoll(c, r) for c, r in ((0.99, True), (0.98, True), (0.95, False),
                                                 (0.9, True), (0.5, False))]  # fmt: skip
    assert choose_threshold(rolls) == 0.98
    assert choose_threshold([CalibrationRoll(0.99, True), CalibrationRoll(0.7, True)]) == 0.7
    assert choose_threshold([CalibrationRoll(0.99, False), CalibrationRoll(0.7, True)]) is None
    many = [CalibrationRoll(0.999 - k * 1e-5, True) for k in range(600)]
    many.insert(10, CalibrationRoll(0.9989, False))  # one wrong among 600 applied
    assert choose_threshold(many) == pytest.approx(0.999 - 599 * 1e-5)
