"""Accuracy of the whole dice-reading pipeline on a YOLO-labelled folder.

    .venv/bin/python bench/vision_eval.py ../shared/data/epanemu-dice3/valid [--limit N]
    .venv/bin/python bench/vision_eval.py ../shared/data/matteop65-d6/valid

DIR holds images/ and labels/ (epanemu, byler), or images with their .txt labels side by
side (matteop65). matteop65 boxes enclose only the pip pattern: they are enlarged to the
whole die (--pip-boxes, on automatically for a folder whose path names matteop65).
--every K --offset J keeps images J, J+K, J+2K ... by sorted name (byler's validation
fifth: --every 5 --offset 4).

A prediction matches a labelled die when its centre lies within 0.6 x the die's side of the
labelled centre (closest pairs first, each used once; companion.vision.scoring, which the
training recipe's figures use too). Prints recall, false dice per 100
images, value accuracy of matched dice, images read entirely right and the confusion
matrix (true value x read value, "-" = read as unreadable), and missed + false + misread
dice (the count a new finder is judged by, models/README.md); then recall and value accuracy
again for the labelled dice of 20-150 px (the sizes the pipeline is built for; epanemu's
board photos hold many smaller ones).

Each folder is also read by the classifier alone on its labelled boxes (no finder): for a
folder of single-die crops (tomitomi-dish-crops, chase-casino-crops: the box is the whole
crop) that is how the crops are read as single dice; the pipeline then reads each crop as
`companion read` does.

    .venv/bin/python bench/vision_eval.py --suite

reads every validation part (companion.vision.datasets.load_split: byler's every 5th image,
epanemu valid/, matteop65 valid/, tomitomi's validation blocks) and the measure-only
folders (skovy-catan-webcam, chase-casino-crops; never trained or tuned on) and prints one
table of them, the measure-only folders beside the validation parts.

Some labels are wrong (an unlabelled die, a wrong value, a photo with every die labelled
the same). bench/label_corrections.csv lists the faults found and checked by eye; when any
applies to the folder, the figures are printed a second time with them applied (names
ending in _corrected). The first block is always the folder exactly as labelled.
--show-corrections DIR draws each corrected photo so that a person can check it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.vision.confidence import expected_calibration_error, reliability_bins
from companion.vision.datasets import (
    CROP_DIE_SHARE,
    LabelCorrection,
    LabelledImage,
    corrected,
    every_nth,
    has_pip_pattern_boxes,
    is_crop_folder,
    load_measure_only,
    load_split,
    read_label_corrections,
    read_labelled_folder,
)
from companion.vision.pipeline import DiceReader, calibrate_for, classify
from companion.vision.scoring import SIZE_RANGE, Figures, ratio, read_outcomes, score
from companion.vision.types import DieBox, DieReading

REPO = Path(__file__).resolve().parents[1]


@dataclass
class FolderResult:
    """One folder's figures: the pipeline's and the classifier's alone on labelled boxes."""

    name: str
    pipeline: Figures
    boxes: Figures
    seconds: float
    readings: list[tuple[DieReading, ...]]  # the pipeline's, per image
    # (calibrated confidence, right) per die read with a value: the pipeline's dice and
    # the classifier alone on the labelled boxes
    outcomes: list[tuple[float, bool]] = field(default_factory=list)
    box_outcomes: list[tuple[float, bool]] = field(default_factory=list)
    crops: bool = False  # a folder of single-die crops

    def calibration_outcomes(self) -> tuple[str, list[tuple[float, bool]]]:
        """What the folder's calibration is measured on: the classifier alone for a folder
        of single-die crops (how such crops are read), else the pipeline's dice."""
        if self.crops:
            return "classifier alone", self.box_outcomes
        return "pipeline", self.outcomes


def read_folder(
    name: str, images: Sequence[LabelledImage], reader: DiceReader, crops: bool = False
) -> FolderResult:
    """Every image through the pipeline (as `companion read` reads it) and its labelled
    boxes through the classifier alone; progress every 25 images."""
    started = time.perf_counter()
    rows, box_rows = [], []
    outcomes, box_outcomes = [], []
    for k, truth in enumerate(images, start=1):
        picture = truth.load()
        found = reader.read(picture).dice
        boxes = read_labelled_boxes(reader, picture, truth)
        rows.append((truth, found, ()))
        box_rows.append((truth, boxes, ()))
        outcomes += read_outcomes(truth, found)
        box_outcomes += read_outcomes(truth, boxes)
        if k % 25 == 0 or k == len(images):
            print(f"  {name}: {k}/{len(images)} images read", flush=True)
    seconds = time.perf_counter() - started
    readings = [tuple(found) for _, found, _ in rows]
    return FolderResult(
        name, score(rows), score(box_rows), seconds, readings, outcomes, box_outcomes, crops
    )


def read_labelled_boxes(
    reader: DiceReader, picture: np.ndarray, truth: LabelledImage
) -> tuple[DieReading, ...]:
    """The classifier alone (with its second look) on each labelled die's square box, its
    confidences calibrated as the pipeline calibrates them."""
    # no finder looked: the peak is unknown (NaN), as the confidence fit reads such boxes
    boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0, float("nan")) for d in truth.dice]
    confidence_map = reader.classifier.confidence_map
    looks = confidence_map is not None and confidence_map.needs_looks
    return calibrate_for(reader.classifier, classify(reader.classifier, picture, boxes, looks))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument(
        "--suite",
        action="store_true",
        help="every validation part and the measure-only folders, one table",
    )
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument(
        "--pip-boxes",
        action="store_true",
        help="labels box only the pips (default: auto for matteop65)",
    )
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument(
        "--diagram",
        type=Path,
        default=None,
        help="draw the reliability diagram here (--suite default: "
        ".cache/benchmarks/vision-reliability.png, out of the repository)",
    )
    parser.add_argument(
        "--corrections",
        default=str(Path(__file__).with_name("label_corrections.csv")),
        help="label faults checked by eye: figures are printed again with them applied "
        "(an empty value leaves them out)",
    )
    parser.add_argument(
        "--show-corrections",
        type=Path,
        metavar="DIR",
        help="write a picture of every corrected photo (labels, corrections, readings)",
    )
    args = parser.parse_args(argv)
    if args.suite and args.folder is not None:
        parser.error("give a folder or --suite, not both")
    if not args.suite and args.folder is None:
        parser.error("give a labelled folder (e.g. ../shared/data/matteop65-d6/valid) or --suite")
    reader = DiceReader.load(args.models)
    if args.suite:
        # a figure of the moment, not a document: it stays out of git unless asked for
        diagram = args.diagram or REPO / ".cache" / "benchmarks" / "vision-reliability.png"
        return run_suite(reader, args.data, args.limit, diagram)
    return run_folder(reader, args)


def run_suite(reader: DiceReader, data: Path | None, limit: int | None, diagram: Path) -> int:
    """The validation parts, then the measure-only folders, then one table and the
    reliability diagram."""
    split = load_split(data)
    folders = [(name, "validation", images) for name, images in split.validation.items()]
    folders += [(name, "measure only", images) for name, images in load_measure_only(data).items()]
    results = []
    for folder, part, images in folders:
        picked = list(images)[:limit]
        name = f"{folder} ({part})"
        result = read_folder(name, picked, reader, crops=folder in CROP_DIE_SHARE)
        print(f"{name}: {len(picked)} images, {result.seconds:.1f} s")
        report(result.pipeline, boxes=result.boxes)
        report_calibration(result)
        print()
        results.append(result)
    print_table(results)
    draw_reliability(results, diagram)
    print(f"wrote {diagram}")
    return 0


def print_table(results: Sequence[FolderResult]) -> None:
    """One markdown row per folder, the columns of docs/BENCHMARKS.md."""
    print(
        "| folder | images / dice | recall | false dice per 100 images | value accuracy of "
        "found | images entirely right | missed + false + misread | classifier alone on "
        "labelled boxes | expected calibration error |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        f, b = r.pipeline, r.boxes
        print(
            f"| {r.name} | {f.images} / {f.labelled} | {100 * ratio(f.matched, f.labelled):.1f} % "
            f"| {100 * f.false / max(1, f.images):.1f} | {100 * ratio(f.right, f.matched):.1f} % "
            f"| {100 * ratio(f.whole, f.images):.1f} % | {f.missed} + {f.false} + {f.misread} = "
            f"{f.errors} | {100 * ratio(b.right, b.labelled):.1f} % ({b.right} of {b.labelled}) "
            f"| {ece_text(r)} |"
        )


def ece_text(result: FolderResult) -> str:
    kind, outcomes = result.calibration_outcomes()
    confidence, right = [c for c, _ in outcomes], [r for _, r in outcomes]
    return f"{100 * expected_calibration_error(confidence, right):.1f} % ({kind}, {len(outcomes)} dice)"


def report_calibration(result: FolderResult) -> None:
    """Expected calibration error of the pipeline's dice and of the classifier alone."""
    for name, outcomes in (("", result.outcomes), ("_labelled_boxes", result.box_outcomes)):
        confidence, right = [c for c, _ in outcomes], [r for _, r in outcomes]
        ece = expected_calibration_error(confidence, right)
        print(f"expected_calibration_error{name}: {ece:.4f} ({len(outcomes)} dice read)")


PANEL, MARGIN, TOP = 320, 40, 76  # the reliability diagram's plot side, border, title, px
BLACK = (0, 0, 0)


def draw_reliability(results: Sequence[FolderResult], path: Path) -> None:
    """One panel per folder, three to a row (`reliability_panel`)."""
    pictures = [reliability_panel(result) for result in results]
    columns = 3
    while len(pictures) % columns:
        pictures.append(np.full_like(pictures[0], 255))
    rows = [np.hstack(pictures[k : k + columns]) for k in range(0, len(pictures), columns)]
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(rows))


def _at(x: float, y: float) -> tuple[int, int]:
    """A point of the unit square in the panel's pixels (y up)."""
    return int(MARGIN + x * PANEL), int(TOP + PANEL - y * PANEL)


def _text(canvas: np.ndarray, text: str, where: tuple[int, int], scale: float = 0.42) -> None:
    cv2.putText(canvas, text, where, cv2.FONT_HERSHEY_SIMPLEX, scale, BLACK, 1, cv2.LINE_AA)


def reliability_panel(result: FolderResult) -> np.ndarray:
    """Per confidence bin, the share of its dice read right (bar) against the bin's mean
    confidence (dot on the diagonal): a calibrated model's bars reach their dots. Each
    bar's count above it."""
    kind, outcomes = result.calibration_outcomes()
    confidence, right = [c for c, _ in outcomes], [r for _, r in outcomes]
    canvas = np.full((TOP + PANEL + MARGIN, PANEL + 2 * MARGIN, 3), 255, np.uint8)
    cv2.rectangle(canvas, _at(0, 1), _at(1, 0), (120, 120, 120), 1)
    cv2.line(canvas, _at(0, 0), _at(1, 1), (160, 160, 160), 1, cv2.LINE_AA)
    for b in reliability_bins(confidence, right):
        if b.count:
            cv2.rectangle(
                canvas, _at(b.low + 0.01, b.accuracy), _at(b.high - 0.01, 0), (200, 140, 60), -1
            )
            cv2.circle(canvas, _at(b.confidence, b.confidence), 3, (40, 40, 200), -1, cv2.LINE_AA)
            _text(canvas, str(b.count), _at(b.low + 0.01, b.accuracy + 0.015), 0.33)
    ece = expected_calibration_error(confidence, right)
    _text(canvas, result.name, (8, 16))
    _text(canvas, f"{kind}: {len(outcomes)} dice, ECE {100 * ece:.1f} %", (8, 32))
    _text(canvas, "bars: share read right, dots: mean confidence (per tenth)", (8, 48), 0.36)
    _text(canvas, "confidence", _at(0.38, -0.08), 0.4)
    return canvas


def run_folder(reader: DiceReader, args: argparse.Namespace) -> int:
    """One folder as given (--every, --offset, --limit), with its label corrections."""
    pip_boxes = args.pip_boxes or has_pip_pattern_boxes(args.folder)
    images = read_labelled_folder(args.folder, pip_boxes)
    images = every_nth(images, args.every, args.offset)
    if args.limit is not None:
        images = images[: args.limit]
    if not images:
        print(f"{args.folder}: no labelled images", file=sys.stderr)
        return 1
    crops = is_crop_folder(args.folder)
    print(
        f"{args.folder}: {len(images)} images, pip-pattern boxes: {pip_boxes}, "
        f"single-die crops: {crops}",
        flush=True,
    )
    result = read_folder(args.folder.name, images, reader, crops)
    print(f"images: {len(images)}, seconds: {result.seconds:.1f}")
    report(result.pipeline, boxes=result.boxes)
    report_calibration(result)
    if args.diagram:
        draw_reliability([result], args.diagram)
        print(f"wrote {args.diagram}")
    report_corrections(args, images, result.readings)
    return 0


def report_corrections(
    args: argparse.Namespace,
    images: Sequence[LabelledImage],
    readings: Sequence[tuple[DieReading, ...]],
) -> None:
    """The figures again with the label corrections that apply to these images."""
    corrections = read_label_corrections(Path(args.corrections)) if args.corrections else {}
    fixed = []
    changed = 0
    for truth, found in zip(images, readings, strict=True):
        better, ignore = corrected(truth, corrections)
        changed += better != truth or bool(ignore)
        if better is not None:
            fixed.append((better, found, ignore))
    if changed:
        print()
        print(
            f"with the label corrections of {args.corrections} "
            f"({changed} photos; each checked by eye):"
        )
        report(score(fixed), suffix="_corrected")
    if args.show_corrections:
        show_corrections(list(images), list(readings), corrections, args.show_corrections)


def report(f: Figures, suffix: str = "", boxes: Figures | None = None) -> None:
    """The pipeline's figures (and with ``boxes`` the classifier's alone on the labelled
    boxes) as name: value lines."""
    print("confusion (rows: true 1-6; columns: read 1 2 3 4 5 6 -):")
    for value, row in enumerate(f.confusion, start=1):
        print(f"  {value}: " + " ".join(f"{n:4d}" for n in row))
    print(f"images: {f.images}, labelled dice: {f.labelled}")
    summary = f.summary()  # the figures as the manifests hold them
    print(f"recall{suffix}: {summary['recall']:.4f}")
    print(f"false_dice_per_100_images{suffix}: {summary['false_dice_per_100_images']:.1f}")
    print(f"value_accuracy_of_found{suffix}: {summary['value_accuracy_of_found']:.4f}")
    print(f"images_entirely_right{suffix}: {ratio(f.whole, f.images):.4f}")
    print(
        f"missed {f.missed} + false {f.false} + misread {f.misread} "
        f"(unreadable {f.unreadable}) = missed_false_misread{suffix}: {f.errors}"
    )
    low, high = SIZE_RANGE
    print(f"dice of {low}-{high} px: {f.in_range} of {f.labelled}")
    print(f"recall_{low}_{high}px{suffix}: {ratio(f.in_range_matched, f.in_range):.4f}")
    print(
        f"value_accuracy_of_found_{low}_{high}px{suffix}: "
        f"{ratio(f.in_range_right, f.in_range_matched):.4f}"
    )
    if boxes is not None:
        print("classifier alone on the labelled boxes (no finder), confusion:")
        for value, row in enumerate(boxes.confusion, start=1):
            print(f"  {value}: " + " ".join(f"{n:4d}" for n in row))
        print(
            f"classifier_accuracy_on_labelled_boxes{suffix}: "
            f"{ratio(boxes.right, boxes.labelled):.4f} ({boxes.right} of {boxes.labelled}, "
            f"unreadable {boxes.unreadable})"
        )


def show_corrections(
    images: list[LabelledImage],
    readings: list[tuple[DieReading, ...]],
    corrections: dict[str, tuple[LabelCorrection, ...]],
    out: Path,
) -> None:
    """One picture per corrected photo: the folder's labels in green, the corrections in
    orange, the pipeline's readings in magenta, so that a person can check each one."""
    out.mkdir(parents=True, exist_ok=True)
    for truth, found in zip(images, readings, strict=True):
        mine = corrections.get(truth.path.name)
        if not mine:
            continue
        picture = truth.load()
        for die in truth.dice:
            _outline(picture, die.cx, die.cy, die.side, str(die.value), (0, 200, 0), above=True)
        for reading in found:
            value = "?" if reading.value is None else str(reading.value)
            _outline(
                picture,
                reading.where.cx,
                reading.where.cy,
                reading.where.w,
                value,
                (255, 0, 255),
                above=False,
            )
        for c in mine:
            label = f"{c.kind} {c.value or ''}".strip()
            if c.kind == "drop":
                cv2.putText(
                    picture,
                    f"dropped: {c.reason}",
                    (8, 24),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.5,
                    (0, 140, 255),
                    2,
                    cv2.LINE_AA,
                )
            else:
                _outline(picture, c.cx, c.cy, c.side or 30, label, (0, 140, 255), above=True)
        target = out / (Path(truth.path.name).stem + ".png")
        cv2.imwrite(str(target), picture)
        print(f"wrote {target}")


def _outline(
    picture: np.ndarray,
    cx: float,
    cy: float,
    side: float,
    text: str,
    colour: tuple[int, int, int],
    above: bool,
) -> None:
    half = side / 2
    top_left = (int(cx - half), int(cy - half))
    cv2.rectangle(picture, top_left, (int(cx + half), int(cy + half)), colour, 2)
    y = int(cy - half) - 4 if above else int(cy + half) + 16
    cv2.putText(
        picture, text, (int(cx - half), y), cv2.FONT_HERSHEY_SIMPLEX, 0.55, colour, 2, cv2.LINE_AA
    )


if __name__ == "__main__":
    sys.exit(main())
