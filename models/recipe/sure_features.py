"""What the pipeline saw of every die of a folder, computed once and kept in .cache/.

The confidence fit (models/recipe/confidence_fit.py) and bench/auto_apply.py judge many
maps, gates and thresholds on the same dice; reading a folder of photos through the
pipeline takes minutes, fitting a gate milliseconds. So each folder is read once per
finder + classifier pair with every look the runtime can take (`pipeline.trace_dice` with
``looks``: the eight symmetric views, the crop at the second margin, the finder's peak,
the embedding), and the result is kept as one .npz under ``.cache/sure/`` named by the
two models' sha256 and the folder's images: a new model pair or other photos read again.

`Features` holds one row per die the pipeline reports (unreadable dice included: they
make a roll unsure) and one row per photo (a roll of its labelled dice count). A folder
of single-die crops is read by the classifier alone on its labelled box (the box is the
crop), one die per photo, its peak NaN (no finder looked).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledImage
from companion.vision.finder import DiceFinder
from companion.vision.model import sha256_of
from companion.vision.pipeline import classify, trace_dice
from companion.vision.scoring import match
from companion.vision.types import DieBox, DieReading

logger = logging.getLogger(__name__)

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "sure"
ARRAYS = (
    "photo", "value", "right", "raw", "views", "wide", "peak", "side", "embedding",
    "truth", "labelled", "found", "whole",
)  # fmt: skip


@dataclass(frozen=True)
class Features:
    """Per die (index d): ``photo`` its photo's index, ``value`` read (0: unreadable),
    ``right`` (on a labelled die and its value), ``raw`` the classifier's top probability
    after its second look, ``views`` 8 x 7 probabilities, ``wide`` 7 probabilities at the
    second margin, ``peak`` the finder's peak score (NaN for a crop), ``side`` the box's
    side in pixels, ``embedding``,
    ``truth`` the labelled value of the die it lies on (0: a false die). Per photo (index
    p): ``labelled`` dice, ``found`` dice reported, ``whole`` read entirely right."""

    source: str
    photo: np.ndarray
    value: np.ndarray
    right: np.ndarray
    raw: np.ndarray
    views: np.ndarray
    wide: np.ndarray
    peak: np.ndarray
    side: np.ndarray
    embedding: np.ndarray
    truth: np.ndarray
    labelled: np.ndarray
    found: np.ndarray
    whole: np.ndarray

    @property
    def dice(self) -> int:
        return len(self.value)

    @property
    def photos(self) -> int:
        return len(self.labelled)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            path, source=np.array(self.source), **{k: getattr(self, k) for k in ARRAYS}
        )

    @classmethod
    def load(cls, path: Path) -> Features:
        with np.load(path) as data:
            return cls(str(data["source"]), *(data[k] for k in ARRAYS))

    @classmethod
    def concat(cls, source: str, parts: Sequence[Features]) -> Features:
        """Several folders as one (photo indices renumbered)."""
        offsets = np.cumsum([0, *(p.photos for p in parts)])[:-1]
        arrays = {k: np.concatenate([getattr(p, k) for p in parts]) for k in ARRAYS if k != "photo"}
        photo = np.concatenate([p.photo + o for p, o in zip(parts, offsets, strict=True)])
        return cls(source, photo, **arrays)


def die_rows(truth: LabelledImage, readings: Sequence[DieReading]) -> list[tuple[int, bool, int]]:
    """(value read or 0, right, labelled value or 0) per reading."""
    pairs = {j: i for i, j in match(truth, readings)}
    rows = []
    for j, r in enumerate(readings):
        labelled = truth.dice[pairs[j]].value if j in pairs else 0
        rows.append((r.value or 0, r.value is not None and r.value == labelled, labelled))
    return rows


def read_features(
    source: str,
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    crops: bool = False,
) -> Features:
    """Every photo through the pipeline with every look (crops: the classifier alone)."""
    cols: dict[str, list[object]] = {k: [] for k in ARRAYS}
    dim = classifier.model.manifest.raw["outputs"].get("shapes", {}).get("embedding", [0, 0])[1]
    for p, truth in enumerate(images):
        picture = truth.load()
        if crops:
            boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0, float("nan")) for d in truth.dice]
            readings = classify(classifier, picture, boxes, looks=True)
        else:
            readings = trace_dice(picture, finder, classifier, looks=True).kept
        rows = die_rows(truth, readings)
        for r, (value, right, labelled) in zip(readings, rows, strict=True):
            assert r.views is not None and r.wide is not None
            cols["photo"].append(p)
            cols["value"].append(value)
            cols["right"].append(right)
            cols["raw"].append(r.confidence)
            cols["views"].append(r.views)
            cols["wide"].append(r.wide)
            cols["peak"].append(r.where.score)
            cols["side"].append(max(r.where.w, r.where.h))
            cols["embedding"].append(
                np.zeros(dim, np.float32) if r.embedding is None else r.embedding
            )
            cols["truth"].append(labelled)
        found_ids = {j for _, j in match(truth, readings)}
        all_right = sum(right for _, right, _ in rows) == len(truth.dice)
        cols["labelled"].append(len(truth.dice))
        cols["found"].append(len(readings))
        cols["whole"].append(all_right and len(found_ids) == len(readings))
        if (p + 1) % 100 == 0:
            logger.info("%s: %d/%d photos read", source, p + 1, len(images))
    return Features(
        source,
        np.asarray(cols["photo"], np.int32),
        np.asarray(cols["value"], np.int8),
        np.asarray(cols["right"], bool),
        np.asarray(cols["raw"], np.float64),
        np.asarray(cols["views"], np.float32).reshape(-1, 8, 7),
        np.asarray(cols["wide"], np.float32).reshape(-1, 7),
        np.asarray(cols["peak"], np.float64),
        np.asarray(cols["side"], np.float64),
        np.asarray(cols["embedding"], np.float32).reshape(-1, dim),
        np.asarray(cols["truth"], np.int8),
        np.asarray(cols["labelled"], np.int32),
        np.asarray(cols["found"], np.int32),
        np.asarray(cols["whole"], bool),
    )


def cached_features(
    source: str,
    images: Sequence[LabelledImage],
    finder: DiceFinder,
    classifier: PipClassifier,
    crops: bool = False,
) -> Features:
    """`read_features`, from .cache/sure/ when this model pair read these photos before."""
    key = hashlib.sha256()
    for part in (sha256_of(finder.model.path), sha256_of(classifier.model.path), str(crops)):
        key.update(part.encode())
    key.update(repr(finder.peak_rule).encode())
    key.update(f"{classifier.wide_margin} {ARRAYS}".encode())
    for image in images:
        key.update(f"{image.path}:{len(image.dice)}".encode())
    path = CACHE / f"{source}-{key.hexdigest()[:16]}.npz"
    if path.is_file():
        return Features.load(path)
    logger.info("%s: reading %d photos (cached in %s)", source, len(images), path)
    features = read_features(source, images, finder, classifier, crops)
    features.save(path)
    return features


RUNE55 = "rune55-webcams"  # never trained on by models up to 1.4.0 / 1.3.1


def calibration_sources(data: Path | None = None) -> dict[str, tuple[list[LabelledImage], bool]]:
    """The photos the confidence is fitted on, per source, and whether they are single-die
    crops: the calibration parts of the training folders (companion.vision.datasets) and
    rune55-webcams' (its calibration part when the split names one; else, while the split
    trains on none of it, the whole folder: no model has seen it; else none)."""
    from companion.vision.datasets import (
        CROP_DIE_SHARE,
        default_data_root,
        load_split,
        read_labelled_folder,
    )

    split = load_split(data)
    sources = {
        name: (list(images), name in CROP_DIE_SHARE) for name, images in split.calibration.items()
    }
    trained_on = any(RUNE55 in im.path.parts for im in (*split.train, *split.train_crops))
    folder = (data or default_data_root()) / RUNE55
    if RUNE55 not in sources and trained_on:
        # a split that trains on rune55 without naming its calibration part: its photos
        # may be training photos, so none is used here
        logger.warning("%s: trained on, and no calibration part named: left out", RUNE55)
    elif RUNE55 not in sources and folder.is_dir():
        sources[RUNE55] = (read_labelled_folder(folder), False)
    return sources
