"""Write the no-forgetting sample of the adaptation check (issue 24,
companion.vision.adapt_gate): PER_FOLDER dice from each calibration part of
companion/vision/datasets.py (photos the shipped models were not trained on; never a
validation part, never a measure-only folder), drawn with a fixed seed, as one PNG
mosaic of 64 px crops (companion.vision.adapt_store's framing: a square of the
classifier's crop margin x the die's side) and a CSV naming each cell's value and source.

    .venv/bin/python -m models.recipe.adapt_anchor            # writes models/adapt_anchor.*
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt_anchor import ANCHOR_CSV, ANCHOR_PNG, COLUMNS
from companion.vision.adapt_store import CROP_SIZE
from companion.vision.classifier import PipClassifier, crop_square
from companion.vision.datasets import load_split

PER_FOLDER = 40
SEED = 20261224


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    margin = PipClassifier.load().margin
    rng = np.random.default_rng(SEED)
    cells: list[tuple[np.ndarray, int, str]] = []
    for folder, images in sorted(load_split().calibration.items()):
        dice = [(image, k) for image in images for k in range(len(image.dice))]
        for j in sorted(rng.choice(len(dice), min(PER_FOLDER, len(dice)), replace=False)):
            image, k = dice[int(j)]
            die = image.dice[k]
            crop = crop_square(image.load(), die.cx, die.cy, die.side * margin, CROP_SIZE)
            cells.append((crop, die.value, f"{folder}/{image.path.name}#{k}"))
    rows = -(-len(cells) // COLUMNS)
    mosaic = np.zeros((rows * CROP_SIZE, COLUMNS * CROP_SIZE, 3), np.uint8)
    with open(args.out / ANCHOR_CSV, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["cell", "value", "source"])
        for k, (crop, value, source) in enumerate(cells):
            y, x = divmod(k, COLUMNS)
            mosaic[y * CROP_SIZE : (y + 1) * CROP_SIZE, x * CROP_SIZE : (x + 1) * CROP_SIZE] = crop
            writer.writerow([k, value, source])
    cv2.imwrite(str(args.out / ANCHOR_PNG), mosaic, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"wrote {len(cells)} dice to {args.out / ANCHOR_PNG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
