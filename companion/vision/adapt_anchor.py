"""The no-forgetting sample of the adaptation check (companion.vision.adapt_gate): dice of
other tables, from the calibration parts (photos no shipped model trained on), that a
setup's adapted reader must read no worse than the shipped one. Shipped beside the models
(models/adapt_anchor.png, a mosaic of 64 px crops in the setup store's framing, and
models/adapt_anchor.csv, each cell's value and source), made by
`python -m models.recipe.adapt_anchor`."""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt_gate import Judged
from companion.vision.model import default_models_dir

ANCHOR_PNG = "adapt_anchor.png"
ANCHOR_CSV = "adapt_anchor.csv"
COLUMNS = 16
CELL = 64  # companion.vision.adapt_store.CROP_SIZE


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


def anchor_dice(views: np.ndarray, probabilities: np.ndarray, values: np.ndarray) -> Judged:
    """The sample as dice to read: N x V x D embeddings, N x V x 7 shipped probabilities."""
    return Judged(views, probabilities, np.asarray(values, np.int64) - 1)
