"""Write the no-forgetting sample of the adaptation check (issue 24,
companion.vision.adapt_gate): PER_FOLDER dice from each calibration part of
companion/vision/datasets.py (photos the shipped models were not trained on; never a
validation part, never a measure-only folder), drawn with a fixed seed, as one PNG
mosaic of 64 px crops (companion.vision.adapt_store's framing: a square of the
classifier's crop margin x the die's side) and a CSV naming each cell's value and source;
and the finder's sample: PHOTOS_PER_FOLDER calibration photos of each scene folder (evenly
spaced by name), copied byte for byte into models/adapt_anchor_photos/ with labels.csv (each
labelled die's box in the photo's pixels and its value).

    .venv/bin/python -m models.recipe.adapt_anchor            # writes models/adapt_anchor.*
    .venv/bin/python -m models.recipe.adapt_anchor --photos   # only the finder's photos
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt_anchor import (
    ANCHOR_CSV,
    ANCHOR_PNG,
    COLUMNS,
    PHOTO_COLUMNS,
    PHOTOS_CSV,
    PHOTOS_DIR,
)
from companion.vision.adapt_store import CROP_SIZE
from companion.vision.classifier import PipClassifier, crop_square
from companion.vision.datasets import EPANEMU, FOLDERS, LabelledImage, epanemu_photo, load_split

PER_FOLDER = 40
SEED = 20261224
PHOTOS_PER_FOLDER = 4  # the finder's sample: 16 photos, 650 kB
NOTICE = """Photos of published datasets, copied unchanged, kept under their own licences
(the full texts are beside each folder in ../shared/data/ of the repository's checkout):
byler-d6-train-*: BSD 3-Clause, (c) 2019 Nell Byler;
epanemu-dice3-*: CC BY 4.0, Roboflow Universe; rune55-webcams-*: CC BY 4.0, Roboflow
Universe (workspace rune-zkmvl, project rune55); matteop65-d6-*: MIT, (c) 2021 Matteo Anthony Penlington.
The no-forgetting sample of a setup's finder head (companion.vision.adapt_anchor),
written by `python -m models.recipe.adapt_anchor --photos`.
"""


def write_photos(out: Path) -> int:
    """The finder's no-forgetting photos and their labels (module docstring); returns how
    many photos."""
    folder = out / PHOTOS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    calibration = load_split().calibration
    chosen = []
    for name in FOLDERS:
        # evenly spaced by name: neighbours are often copies of one photo (epanemu's
        # augmented copies, rune55's frames of one video)
        images = sorted(calibration[name], key=lambda i: i.path.name)
        step = max(1, len(images) // PHOTOS_PER_FOLDER)
        chosen += images[step // 2 :: step][:PHOTOS_PER_FOLDER]
    with open(folder / PHOTOS_CSV, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(PHOTO_COLUMNS)
        for image in chosen:
            file = f"{image.folder}-{image.path.name}"
            (folder / file).write_bytes(image.path.read_bytes())
            for die in image.dice:
                writer.writerow([file, image.folder, image.width, image.height,
                                 f"{die.cx:.2f}", f"{die.cy:.2f}", f"{die.w:.2f}",
                                 f"{die.h:.2f}", die.value])  # fmt: skip
    (folder / "NOTICE.txt").write_text(NOTICE, encoding="utf-8")
    print(f"wrote {len(chosen)} photos to {folder}")
    return len(chosen)


def one_copy_of_each_photo(folder: str, images: Sequence[LabelledImage]) -> list[LabelledImage]:
    """The images, in their order, with one copy of each photo (the first met): epanemu's
    training part holds three augmented copies of each photo, and a die drawn from two
    copies would count twice in the sample; the other folders hold one copy of each."""
    if folder != EPANEMU:
        return list(images)
    first: dict[str, LabelledImage] = {}
    for image in images:
        first.setdefault(epanemu_photo(image.path), image)
    return list(first.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--photos", action="store_true", help="only the finder's photos")
    args = parser.parse_args(argv)
    write_photos(args.out)
    if args.photos:
        return 0
    margin = PipClassifier.load().margin
    rng = np.random.default_rng(SEED)
    cells: list[tuple[np.ndarray, int, str]] = []
    for folder, every_copy in sorted(load_split().calibration.items()):
        images = one_copy_of_each_photo(folder, every_copy)
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
