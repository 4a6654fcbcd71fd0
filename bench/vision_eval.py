"""Accuracy of the whole dice-reading pipeline on a YOLO-labelled folder.

    .venv/bin/python bench/vision_eval.py ../shared/data/epanemu-dice3/valid [--limit N]
    .venv/bin/python bench/vision_eval.py ../shared/data/matteop65-d6/valid

DIR holds images/ and labels/ (epanemu, byler), or images with their .txt labels side by
side (matteop65). matteop65 boxes enclose only the pip pattern: they are enlarged to the
whole die (--pip-boxes, on automatically for a folder whose path names matteop65).
--every K --offset J keeps images J, J+K, J+2K ... by sorted name (byler's validation
fifth: --every 5 --offset 4).

A prediction matches a labelled die when its centre lies within 0.6 x the die's side of the
labelled centre (closest pairs first, each used once). Prints recall, false dice per 100
images, value accuracy of matched dice, images read entirely right and the confusion
matrix (true value x read value, "-" = read as unreadable); then recall and value accuracy
again for the labelled dice of 20-150 px (the sizes the pipeline is built for; epanemu's
board photos hold many smaller ones).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from companion.vision.datasets import LabelledImage, read_yolo_folder
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieReading

MATCH_RADIUS = 0.6  # of the labelled die's side
SIZE_RANGE = (20, 150)  # the die sides (px) the vision issue asks for


def labelled_images(folder: Path, pip_boxes: bool) -> list[LabelledImage]:
    if (folder / "images").is_dir():
        images, labels = folder / "images", folder / "labels"
    else:
        images = labels = folder
    return read_yolo_folder(images, labels, folder.name, pip_pattern_boxes=pip_boxes)


def match(truth: LabelledImage, found: tuple[DieReading, ...]) -> list[tuple[int, int]]:
    """(labelled index, found index) pairs: closest first, within the radius, each once."""
    pairs = []
    for i, die in enumerate(truth.dice):
        for j, reading in enumerate(found):
            distance = math.hypot(reading.where.cx - die.cx, reading.where.cy - die.cy)
            if distance <= MATCH_RADIUS * die.side:
                pairs.append((distance, i, j))
    used_i: set[int] = set()
    used_j: set[int] = set()
    out = []
    for _, i, j in sorted(pairs):
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            out.append((i, j))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument(
        "--pip-boxes",
        action="store_true",
        help="labels box only the pips (default: auto for matteop65)",
    )
    parser.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)

    pip_boxes = args.pip_boxes or "matteop65" in str(args.folder.resolve())
    images = labelled_images(args.folder, pip_boxes)
    images = [im for k, im in enumerate(images) if k % args.every == args.offset % args.every]
    if args.limit is not None:
        images = images[: args.limit]
    if not images:
        print(f"{args.folder}: no labelled images", file=sys.stderr)
        return 1
    reader = DiceReader.load(args.models)
    print(f"{args.folder}: {len(images)} images, pip-pattern boxes: {pip_boxes}", flush=True)

    labelled = matched = right = false = whole = 0
    # the same for the dice within the size range (20-150 px on a side)
    in_range = in_range_matched = in_range_right = 0
    confusion = np.zeros((6, 7), int)  # true 1-6 x read 1-6 / unreadable
    started = time.perf_counter()
    for k, truth in enumerate(images, start=1):
        reading = reader.read(truth.load())
        pairs = match(truth, reading.dice)
        labelled += len(truth.dice)
        matched += len(pairs)
        extra = len(reading.dice) - len(pairs)
        false += extra
        correct = 0
        for i, j in pairs:
            value = reading.dice[j].value
            confusion[truth.dice[i].value - 1, 6 if value is None else value - 1] += 1
            correct += value == truth.dice[i].value
        right += correct
        for i, die in enumerate(truth.dice):
            if SIZE_RANGE[0] <= die.side <= SIZE_RANGE[1]:
                in_range += 1
                j = dict(pairs).get(i)
                in_range_matched += j is not None
                in_range_right += j is not None and reading.dice[j].value == die.value
        whole += correct == len(truth.dice) and extra == 0
        if k % 25 == 0 or k == len(images):
            print(f"  {k}/{len(images)} images, recall so far {matched / labelled:.3f}", flush=True)
    seconds = time.perf_counter() - started
    print("confusion (rows: true 1-6; columns: read 1 2 3 4 5 6 -):")
    for value, row in enumerate(confusion, start=1):
        print(f"  {value}: " + " ".join(f"{n:4d}" for n in row))
    print(f"images: {len(images)}, labelled dice: {labelled}, seconds: {seconds:.1f}")
    print(f"recall: {matched / labelled:.4f}")
    print(f"false_dice_per_100_images: {100.0 * false / len(images):.1f}")
    print(f"value_accuracy_of_found: {right / max(matched, 1):.4f}")
    print(f"images_entirely_right: {whole / len(images):.4f}")
    low, high = SIZE_RANGE
    print(f"dice of {low}-{high} px: {in_range} of {labelled}")
    print(f"recall_{low}_{high}px: {in_range_matched / max(in_range, 1):.4f}")
    print(
        f"value_accuracy_of_found_{low}_{high}px: {in_range_right / max(in_range_matched, 1):.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
