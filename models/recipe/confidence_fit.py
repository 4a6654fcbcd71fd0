"""Fit the classifier's confidence map and the auto-apply threshold on the calibration part
and write them into the classifier's manifest (its ``confidence`` field).

    .venv/bin/python -m models.recipe.confidence_fit [--models DIR] [--data DIR]

What is fitted (companion.vision.confidence has the why):

- every die the pipeline reports on the calibration photos (finder, box filters,
  classifier with its second look, the peak rule: `read_dice`, raw confidences), right
  when it lies on a labelled die and shows its value, wrong otherwise (a misread die and a
  false die alike), and every tomitomi calibration crop read by the classifier alone;
  dice read as unreadable are left out (they are always asked about);
- the isotonic map from the raw top probability to the share read right;
- the threshold: each calibration photo is one roll of its labelled dice count, its
  confidence the product of the calibrated dice (0 when another count was found), right
  when every die was found and read right with no false die; the lowest confidence at
  which the rolls applied hold at most one wrong roll in 500.

Never the validation parts, never the measure-only folders (the loaders keep them apart).
The models measured are the ones in DIR (default models/): the map belongs to that finder
and classifier pair, and the manifest says which finder it was fitted with.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from companion.vision.classifier import PipClassifier
from companion.vision.confidence import (
    CONFIDENCE_KEY,
    CalibrationRoll,
    ConfidenceMap,
    choose_threshold,
    expected_calibration_error,
    fit_confidence_map,
    roll_confidence,
)
from companion.vision.datasets import FOLDERS, LabelledImage, load_split
from companion.vision.finder import DiceFinder
from companion.vision.model import default_models_dir, sha256_of
from companion.vision.pipeline import calibrate, classify, read_dice
from companion.vision.scoring import read_outcomes, score
from companion.vision.types import DieBox, DieReading

logger = logging.getLogger(__name__)


@dataclass
class Outcomes:
    """Raw confidence and right / wrong per read die, its folder; per photo its readings,
    its labelled dice count and whether the whole roll was right."""

    raw: list[float] = field(default_factory=list)
    right: list[bool] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    photos: list[tuple[tuple[DieReading, ...], int, bool]] = field(default_factory=list)

    def add(self, truth: LabelledImage, readings: Sequence[DieReading]) -> None:
        for confidence, right in read_outcomes(truth, readings):
            self.raw.append(confidence)
            self.right.append(right)
            self.folders.append(truth.folder)


def die_outcomes(
    photos: Sequence[LabelledImage],
    crops: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
) -> Outcomes:
    """The pipeline on ``photos`` (rolls too) and the classifier alone on ``crops``."""
    outcomes = Outcomes()
    for k, truth in enumerate(photos, start=1):
        readings = read_dice(truth.load(), finder, classifier)
        outcomes.add(truth, readings)
        whole = score([(truth, readings, ())]).whole == 1
        outcomes.photos.append((readings, len(truth.dice), whole))
        if k % 50 == 0:
            logger.info("confidence: %d/%d calibration photos read", k, len(photos))
    for truth in crops:
        boxes = [DieBox(d.cx, d.cy, d.side, d.side) for d in truth.dice]
        outcomes.add(truth, classify(classifier, truth.load(), boxes))
    return outcomes


def calibration_rolls(outcomes: Outcomes, confidence_map: ConfidenceMap) -> list[CalibrationRoll]:
    """Each calibration photo as a roll of its labelled dice count, calibrated."""
    return [
        CalibrationRoll(roll_confidence(calibrate(readings, confidence_map), expected), whole)
        for readings, expected, whole in outcomes.photos
    ]


def fit(models_dir: Path, data: Path | None = None) -> tuple[ConfidenceMap, dict[str, object]]:
    """The map and threshold for the models in ``models_dir`` and what to record of the
    fit (counts, calibration error before and after, the share of rolls applied)."""
    finder = DiceFinder.load(models_dir)
    classifier = PipClassifier.load(models_dir)
    split = load_split(data)
    photos = [im for name in FOLDERS for im in split.calibration[name]]
    crops = [
        im for name, images in split.calibration.items() if name not in FOLDERS for im in images
    ]
    outcomes = die_outcomes(photos, crops, finder, classifier)
    fitted = fit_confidence_map(outcomes.raw, outcomes.right)
    rolls = calibration_rolls(outcomes, fitted)
    threshold = choose_threshold(rolls)
    confidence_map = ConfidenceMap(fitted.xs, fitted.ys, threshold)
    applied = [r for r in rolls if threshold is not None and r.confidence >= threshold]
    calibrated = list(fitted.apply(outcomes.raw))
    record: dict[str, object] = {
        "raw": "the classifier's top probability after its second look (PipClassifier.read)",
        "fitted_on": {
            name: {
                "images": len(split.calibration[name]),
                "dice_read": outcomes.folders.count(name),
            }
            for name in split.calibration
        },
        "fitted_with_finder": f"{finder.model.manifest.name} {finder.model.manifest.version} "
        f"(sha256 {sha256_of(finder.model.path)[:12]})",
        "ece_raw": round(expected_calibration_error(outcomes.raw, outcomes.right), 4),
        "ece_calibrated": round(expected_calibration_error(calibrated, outcomes.right), 4),
        "rolls": len(rolls),
        "rolls_applied": len(applied),
        "rolls_applied_wrong": sum(not r.right for r in applied),
        "rolls_right": sum(r.right for r in rolls),
        "threshold_rule": "the lowest roll confidence at which the calibration photos "
        "applied hold at most 1 wrong roll in 500 (none under 500 applied)",
        "fitted": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m models.recipe.confidence_fit",
    }
    return confidence_map, record


def write_into_manifest(
    models_dir: Path, confidence_map: ConfidenceMap, record: dict[str, object]
) -> Path:
    """The classifier's manifest with its ``confidence`` field replaced (the .onnx and its
    sha256 stay as they are)."""
    path = models_dir / "pip_classifier.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    body[CONFIDENCE_KEY] = {**confidence_map.to_json(), **record}
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=None, help="default models/")
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    models_dir = args.models or default_models_dir()
    confidence_map, record = fit(models_dir, args.data)
    path = write_into_manifest(models_dir, confidence_map, record)
    print(json.dumps({**confidence_map.to_json(), **record}, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
