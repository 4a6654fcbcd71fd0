"""Fit the classifier's confidence (look model, map, auto-apply threshold) for a finder +
classifier pair and write it into the classifier's manifest (its ``confidence`` field).

    .venv/bin/python -m models.recipe.confidence_fit --models DIR [--data DIR]

One command for whatever pair ships: it reads the photos with the models in DIR (default
models/; each folder once per pair, kept in .cache/sure/: models/recipe/sure_features.py),
fits, and rewrites DIR/pip_classifier.json. What is fitted (companion.vision.confidence
has the why):

- the OOD model: class means and one shared covariance of the classifier's embeddings of
  the training part's labelled dice (what it was trained on);
- per die of the calibration sources (the calibration parts of byler, epanemu, matteop65,
  tomitomi and rune55-webcams; never a validation part, never a measure-only folder): its
  looks (top probability, the worst of its eight views, the wide crop, how many views
  agree, the finder's peak against its sure band, the OOD score), right when it lies on a
  labelled die and shows its value; a logistic model combines the looks into one score,
  the isotonic map turns the score into the probability of being right, and the OOD
  threshold is the 99th percentile of the right dice's OOD score, per face read
  (`confidence.fit_face_offsets`: a one's right dice lie closer together than a five's);
- **leave one source out**: each source's dice are scored by a look model and map fitted
  on the other sources only, so that the pooled rolls carry the shift a new table
  brings; each scene photo is one roll of its labelled dice count, its confidence the
  product of its dice's (0 for another count or an unreadable die);
- the threshold: the lowest roll confidence at which those pooled rolls applied hold at
  most 1 wrong in 500 with the 95 % Clopper-Pearson upper bound under 1 in 250
  (`choose_bounded_threshold`; --per and --upper-per change the two);
- what ships: the look model and map fitted on every source, with that threshold.
- for the dice the reader reads without their looks (those that cannot reach the
  threshold: companion.vision.pipeline.take_looks), the isotonic map of the raw top
  probability alone on the same dice (``without_looks``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.confidence import (
    BOUND_LEVEL,
    CONFIDENCE_KEY,
    LOOK_FEATURES,
    UPPER_BOUND_PER,
    VIEWS_AGREE_FLOOR,
    WRONG_ROLLS_PER,
    CalibrationRoll,
    ConfidenceMap,
    OodModel,
    choose_bounded_threshold,
    expected_calibration_error,
    fit_confidence_map,
    fit_face_offsets,
    fit_look_model,
    fit_ood,
    look_features,
    risk_coverage,
    upper_bound,
)
from companion.vision.datasets import load_split
from companion.vision.finder import DiceFinder
from companion.vision.model import default_models_dir, sha256_of
from models.recipe.sure_features import Features, cached_features, calibration_sources

logger = logging.getLogger(__name__)

OOD_QUANTILE = 0.99  # the OOD threshold: this quantile of the right calibration dice's score
COMMAND = "python -m models.recipe.confidence_fit --models DIR"


def fit_die_confidence(
    sources: Sequence[Features], ood: OodModel | None, sure_peak: float
) -> ConfidenceMap:
    """The look model and map fitted on the readable dice of ``sources`` (no threshold)."""
    readable = [(f, f.value > 0) for f in sources]
    right = np.concatenate([f.right[m] for f, m in readable])
    if ood is not None:
        embeddings = np.concatenate([f.embedding[m] for f, m in readable])
        values = np.concatenate([f.value[m] for f, m in readable])
        ood = fit_face_offsets(ood, embeddings, values, right, OOD_QUANTILE)
        beyond = right[ood.score(embeddings, values) > ood.threshold]
        ood = dataclasses.replace(ood, unfamiliar_confidence=shrunk_share(beyond))
    features = np.concatenate([die_features(f, ood, sure_peak)[m] for f, m in readable])
    looks = fit_look_model(features, right, sure_peak, ood)
    disagree = right[features[:, LOOK_FEATURES.index("views_agree")] < VIEWS_AGREE_FLOOR]
    looks = dataclasses.replace(looks, disagree_confidence=shrunk_share(disagree))
    fitted = fit_confidence_map(list(looks.score(features)), list(right))
    # for the dice the reader reads without their looks (they cannot be sure: pipeline.
    # take_looks): the map of the raw probability alone, on the same dice
    raw = np.concatenate([f.raw[m] for f, m in readable])
    return dataclasses.replace(
        fitted, looks=looks, without_looks=fit_confidence_map(list(raw), list(right))
    )


def shrunk_share(right: np.ndarray) -> float:
    """The share of these dice read right, pulled towards 1/2 by one die (a cap fitted on
    few dice must not reach 0 or 1)."""
    return (float(right.sum()) + 0.5) / (len(right) + 1.0)


def die_features(f: Features, ood: OodModel | None, sure_peak: float) -> np.ndarray:
    """LOOK_FEATURES of every die of ``f``."""
    scores = np.zeros(f.dice) if ood is None else ood.score(f.embedding, f.value)
    return look_features(f.raw, f.value, f.views, f.wide, f.peak, f.side, sure_peak, scores)


def die_confidences(f: Features, confidence_map: ConfidenceMap) -> np.ndarray:
    """Each die's calibrated confidence under ``confidence_map`` (0 when unreadable), as
    the pipeline's calibrate stage computes it."""
    looks = confidence_map.looks
    assert looks is not None
    features = looks.features(f.raw, f.value, f.views, f.wide, f.peak, f.side, f.embedding)
    confidence = looks.confidence(features, confidence_map)
    return np.where(f.value > 0, confidence, 0.0)


def rolls_of(f: Features, confidence: np.ndarray) -> list[CalibrationRoll]:
    """Each photo of ``f`` as a roll of its labelled dice count."""
    product = np.ones(f.photos)
    np.multiply.at(product, f.photo, confidence)
    product = np.where(f.found == f.labelled, product, 0.0)
    product[f.found == 0] = 0.0
    return [CalibrationRoll(float(c), bool(w)) for c, w in zip(product, f.whole, strict=True)]


@dataclass
class Loso:
    """Leave one source out: per source its dice's confidences and its rolls, each scored
    by the map fitted without that source."""

    confidences: dict[str, np.ndarray]
    rolls: dict[str, list[CalibrationRoll]]

    def pooled_rolls(self, scenes: Sequence[str]) -> list[CalibrationRoll]:
        return [r for name in scenes for r in self.rolls[name]]


def leave_one_source_out(
    sources: Mapping[str, Features], ood: OodModel | None, sure_peak: float
) -> Loso:
    result = Loso({}, {})
    for name, held_out in sources.items():
        others = [f for other, f in sources.items() if other != name]
        confidence = die_confidences(held_out, fit_die_confidence(others, ood, sure_peak))
        result.confidences[name] = confidence
        result.rolls[name] = rolls_of(held_out, confidence)
    return result


def read_sources(
    finder: DiceFinder, classifier: PipClassifier, data: Path | None
) -> tuple[dict[str, Features], list[str]]:
    """The calibration sources' features and the names of the scene sources (rolls)."""
    sources, scenes = {}, []
    for name, (images, crops) in calibration_sources(data).items():
        sources[name] = cached_features(name, images, finder, classifier, crops)
        if not crops:
            scenes.append(name)
    return sources, scenes


def training_ood(
    finder: DiceFinder, classifier: PipClassifier, data: Path | None
) -> OodModel | None:
    """The OOD model of the classifier's embeddings of the training part's labelled dice
    (None for a classifier without the ``embedding`` output: no OOD look)."""
    if classifier.embedding_index is None:
        return None
    split = load_split(data)
    images = [*split.train, *split.train_crops]
    f = cached_features("train-boxes", images, finder, classifier, crops=True)
    return fit_ood(f.embedding, f.truth)


def fit(
    models_dir: Path,
    data: Path | None = None,
    per: int = WRONG_ROLLS_PER,
    upper_per: int = UPPER_BOUND_PER,
) -> tuple[ConfidenceMap, dict[str, object]]:
    """The map and threshold for the models in ``models_dir`` and what to record of the
    fit (per source: dice, ECE under leave one source out; the pooled rolls applied)."""
    finder = DiceFinder.load(models_dir)
    classifier = PipClassifier.load(models_dir)
    sure_peak = finder.peak_rule.sure_threshold
    sources, scenes = read_sources(finder, classifier, data)
    ood = training_ood(finder, classifier, data)
    loso = leave_one_source_out(sources, ood, sure_peak)
    pooled = loso.pooled_rolls(scenes)
    threshold = choose_bounded_threshold(pooled, per, upper_per)
    shipped = dataclasses.replace(
        fit_die_confidence(list(sources.values()), ood, sure_peak), threshold=threshold
    )
    applied = [r for r in pooled if threshold is not None and r.confidence >= threshold]
    wrong = sum(not r.right for r in applied)
    clean = [p for p in risk_coverage(pooled) if p.wrong == 0]
    record: dict[str, object] = {
        "score": "the look model's score (confidence.looks: LOOK_FEATURES combined by a "
        "logistic model), mapped by the isotonic points",
        "fitted_on": {
            name: {
                "photos": f.photos,
                "dice_read": int((f.value > 0).sum()),
                "ece_raw": round(
                    expected_calibration_error(f.raw[f.value > 0], f.right[f.value > 0]), 4
                ),
                "ece_leave_one_source_out": round(
                    expected_calibration_error(
                        loso.confidences[name][f.value > 0], f.right[f.value > 0]
                    ),
                    4,
                ),
            }
            for name, f in sources.items()
        },
        "fitted_with_finder": f"{finder.model.manifest.name} {finder.model.manifest.version} "
        f"(sha256 {sha256_of(finder.model.path)[:12]})",
        "rolls": len(pooled),  # every calibration photo, scored leaving its source out
        "rolls_applied": len(applied),
        "rolls_applied_wrong": wrong,
        "rolls_applied_upper_bound": round(upper_bound(wrong, len(applied)), 5),
        "curve_last_point_with_none_wrong": None
        if not clean
        else {
            "threshold": round(clean[-1].threshold, 6),
            "rolls_applied": clean[-1].applied,
            "upper_bound": round(clean[-1].upper, 5),
        },
        "threshold_rule": f"the lowest roll confidence at which the calibration sources' "
        f"rolls, each scored leaving its source out, applied hold at most 1 wrong roll in "
        f"{per} with the {BOUND_LEVEL:.0%} Clopper-Pearson upper bound under 1 in {upper_per}",
        "fitted": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": COMMAND,
    }
    return shipped, record


def write_into_manifest(
    models_dir: Path, confidence_map: ConfidenceMap, record: dict[str, object]
) -> Path:
    """The classifier's manifest with its ``confidence`` field replaced (the .onnx and its
    sha256 stay as they are)."""
    path = models_dir / "pip_classifier.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    mark = "\u0000confidence\u0000"  # the rest of the manifest keeps its layout
    body[CONFIDENCE_KEY] = mark
    confidence = json.dumps({**confidence_map.to_json(), **record}, indent=2)
    text = json.dumps(body, indent=2).replace(
        json.dumps(mark), compact_numbers(confidence).replace("\n", "\n  ")
    )
    path.write_text(text + "\n", encoding="utf-8")
    return path


NUMBER_LIST = re.compile(r"\[\s*(-?[0-9][-+0-9.eE]*(?:,\s*-?[0-9][-+0-9.eE]*)*)\s*\]")


def compact_numbers(text: str) -> str:
    """Indented JSON with every list of plain numbers on one line (the OOD model's 96 x 96
    matrix would take a line per number; only the ``confidence`` field is written so)."""
    return NUMBER_LIST.sub(lambda m: "[" + ", ".join(re.split(r",\s*", m.group(1))) + "]", text)


def summary(confidence_map: ConfidenceMap, record: dict[str, object]) -> str:
    """What the fit prints: the record without the big arrays."""
    return json.dumps({"auto_apply_threshold": confidence_map.threshold, **record}, indent=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=None, help="default models/")
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument("--per", type=int, default=WRONG_ROLLS_PER)
    parser.add_argument("--upper-per", type=int, default=UPPER_BOUND_PER)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    models_dir = args.models or default_models_dir()
    confidence_map, record = fit(models_dir, args.data, args.per, args.upper_per)
    path = write_into_manifest(models_dir, confidence_map, record)
    print(summary(confidence_map, record))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
