"""`companion read IMAGE|FOLDER... [--json] [--dice-set qwixx|sixto|FILE] [--dice N] [--annotate DIR]`.

Reads the dice in each image (a folder: its images, in name order) with the whole pipeline.
With --json, one line of JSON per image::

    {"image": PATH, "width": W, "height": H, "ms": T,
     "dice": [{"value": 1-6 or null, "colour": NAME, "confidence": 0..1,
               "box": [x0, y0, x1, y1], "flags": [...], ...}],
     "expected_dice": N, "roll_confidence": 0..1, "sure": true/false,
     "unsure": [{"index": I, "confidence": 0..1, "choices": [V1, V2]}], ...}

boxes in pixels of the original image; a file that cannot be read gives
{"image": PATH, "error": "..."} instead. Without --json, one readable line per image.
--annotate DIR writes DIR/<image name>.annotated.png per image.

A die's confidence is the probability that it is read right (calibrated,
companion.vision.confidence). Each image is taken as one roll of N dice (--dice N, else
the dice set's size, else as many as were found): ``roll_confidence`` is the probability
that every die of it is right (0 when another count was found), ``sure`` whether the roll
would be applied without a tap at the shipped threshold (the shipped map names none yet,
`auto_apply_threshold` null: no roll is sure), and ``unsure`` the dice a
question would ask about (indices into ``dice``, each with its two likeliest values).

Exit status: 0 when every file could be read (an image with no dice is fine), 1 when a
file could not be read, 2 when the models or the dice set cannot be loaded.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import cv2

from companion.vision.confidence import RollDecision, decide_roll
from companion.vision.types import DieReading, FrameReading

if TYPE_CHECKING:
    from companion.vision.pipeline import DiceReader

logger = logging.getLogger(__name__)


def reading_to_json(
    path: str, reading: FrameReading, decision: RollDecision | None = None, expected: int = 0
) -> dict[str, object]:
    """The JSON line of one image (see the module docstring)."""
    dice = []
    for die in reading.dice:
        entry = die.to_json()
        entry["colour_confidence"] = round(float(die.colour_confidence), 4)
        entry["set_index"] = die.set_index
        dice.append(entry)
    out: dict[str, object] = {
        "image": path,
        "width": reading.width,
        "height": reading.height,
        "ms": round(float(reading.ms), 1),
        "dice": dice,
    }
    if reading.problems:
        out["problems"] = list(reading.problems)
    if reading.dice_set is not None:
        out["dice_set"] = reading.dice_set
        out["missing"] = list(reading.missing)
    if decision is not None:
        out["expected_dice"] = expected
        out["roll_confidence"] = round(decision.roll_confidence, 4)
        out["sure"] = decision.apply
        out["unsure"] = [
            {"index": u.index, "confidence": round(u.confidence, 4), "choices": list(u.choices)}
            for u in decision.unsure
        ]
    return out


def expected_dice(args: argparse.Namespace, reader: DiceReader, reading: FrameReading) -> int:
    """The roll's dice count: --dice, else the dice set's size, else the dice found."""
    if getattr(args, "dice", None):
        return int(args.dice)
    if reader.dice_set is not None:
        return len(reader.dice_set.dice)
    return len(reading.dice)


def decide(
    args: argparse.Namespace, reader: DiceReader, reading: FrameReading
) -> tuple[RollDecision, int]:
    """The auto-apply decision on one image taken as a roll (module docstring)."""
    confidence_map = reader.classifier.confidence_map
    threshold = confidence_map.threshold if confidence_map is not None else None
    expected = expected_dice(args, reader, reading)
    return decide_roll(reading.dice, expected, threshold), expected


def describe_die(die: DieReading) -> str:
    value = "?" if die.value is None else str(die.value)
    colour = die.colour or "?"
    flags = f" [{', '.join(die.flags)}]" if die.flags else ""
    return f"{colour} {value} ({die.confidence:.2f}){flags}"


def reading_to_text(path: str, reading: FrameReading, decision: RollDecision | None = None) -> str:
    """One readable line per image."""
    head = f"{path}: {reading.width}x{reading.height}, {reading.ms:.0f} ms, "
    if not reading.dice:
        body = "no dice found"
    else:
        body = f"{len(reading.dice)} dice: " + "; ".join(describe_die(d) for d in reading.dice)
    if reading.missing:
        body += f"; missing from {reading.dice_set}: {', '.join(reading.missing)}"
    if reading.problems:
        body += f" ({'; '.join(reading.problems)})"
    if decision is not None and reading.dice:
        verdict = "sure" if decision.apply else f"ask about {len(decision.unsure)}"
        body += f"; roll {decision.roll_confidence:.3f}, {verdict}"
    return head + body


def run_read(args: argparse.Namespace) -> int:
    """The `companion read` command (arguments from companion/cli.py)."""
    from companion.vision.colour import CalibrationError
    from companion.vision.model import ModelError
    from companion.vision.pipeline import DiceReader

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if getattr(args, "dice", None) is not None and args.dice < 1:
        print(f"companion read: --dice must be 1 or more, not {args.dice}", file=sys.stderr)
        return 2
    try:
        reader = DiceReader.load(dice_set=args.dice_set)
    except (ModelError, CalibrationError, OSError) as exc:
        print(f"companion read: {exc}", file=sys.stderr)
        return 2
    annotate_dir = Path(args.annotate) if args.annotate else None
    if annotate_dir is not None:
        try:
            annotate_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"companion read: cannot create {annotate_dir}: {exc}", file=sys.stderr)
            return 2
    return _read_all(args, reader, annotate_dir)  # a closed pipe: companion.cli.main


def _read_all(args: argparse.Namespace, reader: DiceReader, annotate_dir: Path | None) -> int:
    from companion.vision.sources import read_image

    failed = 0
    written: set[str] = set()
    for index, name in enumerate(_image_names(args.images)):
        path = Path(name)
        error = _unreadable_reason(path)
        image = None if error else read_image(path)
        if error is None and image is None:
            error = "not a readable image (corrupt or unsupported format)"
        if error is not None:
            failed += 1
            if args.json:
                print(json.dumps({"image": name, "error": error}), flush=True)
            else:
                print(f"companion read: {name}: {error}", file=sys.stderr, flush=True)
            continue
        reading = reader.read(image, frame_index=index)
        decision, expected = decide(args, reader, reading)
        if args.json:
            print(json.dumps(reading_to_json(name, reading, decision, expected)), flush=True)
        else:
            print(reading_to_text(name, reading, decision), flush=True)
        if annotate_dir is not None:
            _write_annotation(annotate_dir, _annotation_name(path, written), image, reading)
    return 1 if failed else 0


def _image_names(given: list[str]) -> list[str]:
    """The images to read: each name given, a folder's images in their sorted order (not
    its subfolders'); an empty folder stays itself, to be reported."""
    from companion.vision.sources import FolderSource

    names: list[str] = []
    for name in given:
        inside = FolderSource(name).paths() if Path(name).is_dir() else []
        names.extend([str(p) for p in inside] or [name])
    return names


def _annotation_name(path: Path, written: set[str]) -> str:
    """<stem>.annotated.png, with -2, -3 ... when two images share a stem."""
    name = f"{path.stem}.annotated.png"
    count = 1
    while name in written:
        count += 1
        name = f"{path.stem}-{count}.annotated.png"
    written.add(name)
    return name


def _unreadable_reason(path: Path) -> str | None:
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "a folder with no images"
    try:
        if path.stat().st_size == 0:
            return "empty file"
    except OSError as exc:
        return f"cannot read ({exc.strerror})"
    return None


def _write_annotation(folder: Path, name: str, image: object, reading: FrameReading) -> None:
    from companion.vision.annotate import annotate

    target = folder / name
    picture = annotate(image, reading)  # type: ignore[arg-type]
    if not cv2.imwrite(str(target), picture):
        print(f"companion read: could not write {target}", file=sys.stderr)
