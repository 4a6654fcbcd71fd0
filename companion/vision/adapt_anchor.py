"""The no-forgetting sample of the adaptation check (companion.vision.adapt_gate): dice of
other tables, from the calibration parts (photos no shipped model trained on), that a
setup's adapted reader must read no worse than the shipped one. Shipped beside the models
(models/adapt_anchor.png, a mosaic of 64 px crops in the setup store's framing, and
models/adapt_anchor.csv, each cell's value and source), made by
`python -m models.recipe.adapt_anchor`; and the finder's sample, 16 whole photos of the
same calibration parts with their labelled dice (models/adapt_anchor_photos/, the photos
as published and labels.csv), which a setup's finder head must read no worse
(companion.vision.adapt_finder_check)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt_gate import Judged
from companion.vision.adapt_look import looks_of
from companion.vision.datasets import DatasetError, LabelledDie, LabelledImage
from companion.vision.model import default_models_dir

ANCHOR_PNG = "adapt_anchor.png"
ANCHOR_CSV = "adapt_anchor.csv"
COLUMNS = 16
CELL = 64  # companion.vision.adapt_store.CROP_SIZE
PHOTOS_DIR = "adapt_anchor_photos"
PHOTOS_CSV = "labels.csv"
PHOTO_COLUMNS = ("photo", "folder", "width", "height", "cx", "cy", "w", "h", "value")


def read_anchor_photos(models_dir: Path | None = None) -> list[LabelledImage]:
    """The finder's no-forgetting photos with their labelled dice, in the order of the
    labels file ([] when the folder is not there: the check is then not made); a label
    naming a missing photo raises DatasetError."""
    folder = (default_models_dir() if models_dir is None else Path(models_dir)) / PHOTOS_DIR
    labels = folder / PHOTOS_CSV
    if not labels.is_file():
        return []
    photos: dict[str, tuple[str, int, int, list[LabelledDie]]] = {}
    with open(labels, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            name = row["photo"]
            if Path(name).name != name or not (folder / name).is_file():
                raise DatasetError(f"{labels}: photo {name!r} is not a file beside it")
            entry = photos.setdefault(
                name, (row["folder"], int(row["width"]), int(row["height"]), [])
            )
            entry[3].append(
                LabelledDie(
                    float(row["cx"]),
                    float(row["cy"]),
                    float(row["w"]),
                    float(row["h"]),
                    int(row["value"]),
                )  # fmt: skip
            )
    return [
        LabelledImage(folder / name, source, width, height, tuple(dice))
        for name, (source, width, height, dice) in photos.items()
    ]


def read_anchor(models_dir: Path | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """The sample's 64 px BGR crops and their values 1-6 (empty when the files are not
    there: the check is then not made)."""
    folder = default_models_dir() if models_dir is None else Path(models_dir)
    mosaic = cv2.imread(str(folder / ANCHOR_PNG), cv2.IMREAD_COLOR)
    if mosaic is None or not (folder / ANCHOR_CSV).is_file():
        return [], np.zeros(0, np.int64)
    with open(folder / ANCHOR_CSV, newline="", encoding="utf-8") as handle:
        values = np.array([int(row["value"]) for row in csv.DictReader(handle)], np.int64)
    crops = []
    for k in range(len(values)):
        y, x = divmod(k, COLUMNS)
        crops.append(mosaic[y * CELL : (y + 1) * CELL, x * CELL : (x + 1) * CELL].copy())
    return crops, values


def anchor_dice(
    views: np.ndarray,
    probabilities: np.ndarray,
    values: np.ndarray,
    crops: Sequence[np.ndarray] = (),
) -> Judged:
    """The sample as dice to read: N x V x D embeddings, N x V x 7 shipped probabilities,
    and the looks of its 64 px crops (companion.vision.adapt_look; none given: not
    measured)."""
    looks = looks_of(crops) if len(crops) else None
    return Judged(views, probabilities, np.asarray(values, np.int64) - 1, looks)
