"""`companion calibrate NAME --dice-set qwixx|sixto (--camera N | --video FILE | --images
DIR | IMAGE...) [--frames K] [--play-area x0,y0,x1,y1|auto]`

Shows the dice set to the camera and writes calibration/NAME.json (or --out FILE): each
die's colour under this table's light, the die size, and the play area (the one given;
with auto the region the dice lie in; default the whole picture). Prints what the camera
read and the file written.
`companion calibrate --check FILE` validates a calibration file and prints it.
`companion calibrate NAME --teach ROUNDS [--data-dir DIR] [--yes]` then runs the teaching
round (companion/vision/adapt_cli.py): throw all the dice, confirm or correct what the
camera read, repeat; an existing calibration/NAME.json is taught without measuring again.

Exit status: 0 written (or valid), 2 a bad file, argument, model, or a die never seen."""

from __future__ import annotations

import argparse
import json
import sys
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from companion.vision.calibration import TableCalibration

# cv2, numpy and the pipeline are imported inside the functions: `companion --help` and
# `companion replay` build this parser and must not load the vision stack


def parse_area(text: str) -> tuple[float, float, float, float] | Literal["auto"]:
    if text == "auto":
        return "auto"
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"play area {text!r}: four numbers x0,y0,x1,y1") from exc
    if len(parts) != 4 or not (0 <= parts[0] < parts[2] <= 1 and 0 <= parts[1] < parts[3] <= 1):
        raise argparse.ArgumentTypeError(
            f"play area {text!r}: fractions 0..1 as x0,y0,x1,y1 with x0 < x1 and y0 < y1"
        )
    return (parts[0], parts[1], parts[2], parts[3])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="calibration name (file calibration/NAME.json)")
    parser.add_argument("--dice-set", default="qwixx",
                        help="the set shown: a game's name (qwixx, sixto, sixes ...)")  # fmt: skip
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, default=None, metavar="N", help="webcam index")
    source.add_argument("--video", default=None, metavar="FILE", help="a video file")
    source.add_argument("--images", default=None, metavar="DIR", help="a folder of images")
    source.add_argument("--image", action="extend", nargs="+", default=None, metavar="FILE",
                        help="one or more images (--image A B, or --image A --image B)")  # fmt: skip
    parser.add_argument("--frames", type=int, default=10, help="frames to measure (1-100)")
    parser.add_argument("--play-area", type=parse_area, default=None,
                        help="x0,y0,x1,y1 as fractions, or auto: around the dice in view; "
                        "default: the whole picture")  # fmt: skip
    parser.add_argument("--out", default=None, help="write here instead of calibration/NAME.json")
    parser.add_argument("--check", default=None, metavar="FILE", help="validate a file and exit")
    parser.add_argument("--teach", type=int, default=0, metavar="ROUNDS",
                        help="teaching rounds after calibrating: throw, confirm, repeat")  # fmt: skip
    parser.add_argument("--data-dir", default="companion-data",
                        help="where the taught dice are kept (the server's --data-dir)")  # fmt: skip
    parser.add_argument("--yes", action="store_true", help="teaching: confirm every round as read")
    parser.add_argument("--sheet", default=None, help="teaching: write the dice picture here")


def _frames(args: argparse.Namespace) -> list[Any]:
    import cv2

    from companion.vision.colour import CalibrationError
    from companion.vision.sources import CameraSource, FolderSource, FrameSource, VideoSource

    count = max(1, min(int(args.frames), 100))
    if args.image:
        images = []
        for path in args.image:
            image = cv2.imread(path)
            if image is None:
                raise CalibrationError(f"{path}: not a readable image")
            images.append(image)
        return images
    source: FrameSource
    if args.video:
        source = VideoSource(Path(args.video))
    elif args.images:
        source = FolderSource(Path(args.images))
    else:
        source = CameraSource(args.camera if args.camera is not None else 0)
    frames = [f.image for f in islice(iter(source), count)]
    if not frames:
        raise CalibrationError(f"{source.describe()}: no picture ({source.status.problem})")
    return frames


def run_calibrate(args: argparse.Namespace) -> int:
    from companion.vision.calibration import (
        calibration_path,
        load_calibration,
        measure,
        save_calibration,
    )
    from companion.vision.colour import CalibrationError, DiceSet, builtin_dice_set
    from companion.vision.model import ModelError
    from companion.vision.pipeline import DiceReader

    try:
        if args.check:
            calibration = load_calibration(Path(args.check))
            print(json.dumps(calibration.to_json("checked"), indent=2))
            return 0
        if not args.name:
            print("companion calibrate: give a NAME (or --check FILE)", file=sys.stderr)
            return 2
        path = Path(args.out) if args.out else calibration_path(args.name)
        if args.teach and path.is_file():
            return _teach(args, load_calibration(path))
        # companion/cli.py hands a game's dice as a DiceSet; a name is a shipped set
        given = args.dice_set
        reference = given if isinstance(given, DiceSet) else builtin_dice_set(given)
        frames = _frames(args)
        reader = DiceReader.load()
        calibration, notes = measure(frames, reader, reference, args.name, args.play_area)
        for note in notes[:10]:
            print(f"  note: {note}")
        save_calibration(calibration, path)
    except (CalibrationError, ModelError) as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 2
    print(f"measured {len(frames)} frames of the {reference.name} set")
    for die in calibration.dice_set.dice:
        print(f"  {die.colour:<7} Lab {', '.join(f'{v:.1f}' for v in die.lab)}")
    area = ", ".join(f"{v:.2f}" for v in calibration.play_area)
    side = f"{calibration.die_side:.1f} px" if calibration.die_side else "not measured"
    print(f"play area {area}; die side {side}")
    print(f"wrote {path}")
    return _teach(args, calibration) if args.teach else 0


def _teach(args: argparse.Namespace, calibration: TableCalibration) -> int:
    from companion.vision.adapt_cli import run_teaching, teaching_frames
    from companion.vision.colour import CalibrationError
    from companion.vision.model import ModelError

    if not 1 <= args.teach <= 100:
        print("companion calibrate: --teach takes 1 to 100 rounds", file=sys.stderr)
        return 2
    print(f"teaching {calibration.name}: {args.teach} rounds")
    try:
        frames, stills = teaching_frames(args)
        return run_teaching(args, calibration, frames, stills, None if args.yes else input)
    except (CalibrationError, ModelError) as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 2
    except EOFError:
        print("companion calibrate: no answer on the input: stopped (--yes confirms as read)")
        return 0
