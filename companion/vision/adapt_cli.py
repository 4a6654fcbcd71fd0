"""The teaching round of `companion calibrate NAME --teach ROUNDS` (issue 15): throw all
the dice, confirm what the camera read (or correct it), repeat.

Each round takes one picture of the dice at rest: from --image/--images one picture per
round, from a camera or a video the first frame whose reading has stayed the same for
STILL_FRAMES frames. It prints the dice read, numbered, and asks::

    Enter: right as read · "3=5 6=2": die 3 shows 5, die 6 shows 2 · s: skip · q: stop

(`--yes` confirms every round as read, for a script). The confirmed dice go to the
setup's store in the data directory (companion.vision.adapt_store, the server's too), the
heads are refreshed, and a bar per face and per die of the set shows how sure the reader
has become; the crops of every stored die are written as one picture, a row per face
(`--sheet`, default DATA_DIR/setups/NAME-dice.png)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt_learn import ConfirmedDie, SetupLearner, SetupSummary
from companion.vision.adapt_store import CROP_SIZE, SetupStore
from companion.vision.calibration import TableCalibration
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieReading

STILL_FRAMES = 5  # a camera's reading unchanged this many frames: the dice lie still
MAX_FRAMES_PER_ROUND = 900  # 30 s at 30 fps without the dice coming to rest: give up
BAR_WIDTH = 24
CORRECTION = re.compile(r"^(\d+)=([1-6])$")

Ask = Callable[[str], str]


def parse_corrections(text: str, count: int) -> dict[int, int]:
    """'3=5 6=2' -> {2: 5, 5: 2} (0-based die index -> value); ValueError naming the part
    that is not ``DIE=VALUE`` with DIE 1..count and VALUE 1..6."""
    out: dict[int, int] = {}
    for part in text.replace(",", " ").split():
        found = CORRECTION.match(part)
        if found is None or not 1 <= int(found.group(1)) <= count:
            raise ValueError(f"{part!r}: write DIE=VALUE, DIE 1 to {count} and VALUE 1 to 6")
        out[int(found.group(1)) - 1] = int(found.group(2))
    return out


def bar(share: float, count: int, label: str) -> str:
    filled = round(BAR_WIDTH * max(0.0, min(1.0, share)))
    return f"  {label:<8} [{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {100 * share:3.0f} %  ({count} dice)"


def progress_lines(summary: SetupSummary) -> list[str]:
    """A bar per face and per die of the set: how sure the reader is of such a die."""
    lines = [f"{summary.setup}: learnt from {summary.used} confirmed dice"
             + (f", {len(summary.held)} held back for a look" if summary.held else "")]  # fmt: skip
    if summary.verdict:
        lines.append(f" {summary.verdict}")
    lines.append(" each face:")
    for k, (count, sure) in enumerate(zip(summary.faces, summary.face_sureness, strict=True)):
        lines.append(bar(sure, count, f"face {k + 1}"))
    if summary.set_colours:
        lines.append(" each die of the set:")
        for colour, count, sure in zip(summary.set_colours, summary.set_dice, summary.set_die_sureness, strict=True):  # fmt: skip
            lines.append(bar(sure, count, colour))
    return lines


def contact_sheet(store: SetupStore, setup: str, path: Path, per_row: int = 16) -> Path:
    """Every stored die of the setup as one picture: a row per face (its newest
    `per_row` dice), the face's value written at the row's start."""
    rows = []
    for value in range(1, 7):
        crops = [
            crop
            for s in store.examples(setup)
            if s.example.value == value
            if (crop := store.crop(setup, s.example_id)) is not None
        ][-per_row:]
        row = np.full((CROP_SIZE, CROP_SIZE * (per_row + 1), 3), 255, np.uint8)
        cv2.putText(row, str(value), (18, 44), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (40, 40, 40), 2)
        for k, crop in enumerate(crops):
            row[:, CROP_SIZE * (k + 1) : CROP_SIZE * (k + 2)] = crop
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(rows))
    return path


def still_pictures(
    frames: Iterator[np.ndarray], reader: DiceReader
) -> Iterator[tuple[np.ndarray, tuple[DieReading, ...]]]:
    """From a camera or video: each picture whose dice have read the same (count, colour
    and value of each) for STILL_FRAMES frames in a row, then the next once they change."""
    last: tuple[object, ...] | None = None
    streak = 0
    reported = False
    for image in frames:
        dice = reader.read(image).dice
        key = tuple(sorted((str(d.colour), d.value or 0) for d in dice))
        streak = streak + 1 if key == last else 1
        if key != last:
            reported = False
        last = key
        if dice and streak >= STILL_FRAMES and not reported:
            reported = True
            yield image, dice


def describe(dice: tuple[DieReading, ...]) -> str:
    return "   ".join(
        f"{k + 1}: {d.colour or '?'} {d.value if d.value is not None else '?'}"
        for k, d in enumerate(dice)
    )


def teach(
    pictures: Iterator[tuple[np.ndarray, tuple[DieReading, ...]]],
    learner: SetupLearner,
    rounds: int,
    ask: Ask | None,
    say: Callable[[str], None] = print,
) -> int:
    """Run the rounds; returns how many were confirmed. `ask` None: confirm as read."""
    confirmed = 0
    for number, (image, read) in enumerate(islice(pictures, rounds), start=1):
        dice = tuple(d for d in read if d.value is not None)
        say(f"round {number}: {describe(dice) or 'no die read'}")
        values = _confirm(dice, ask, say)
        if values is None:
            break
        if not values:
            continue
        learner.record(image, [ConfirmedDie(d.where, v, "taught" if v == d.value else "corrected", d.colour, d.set_index)
                               for d, v in zip(dice, values, strict=True)],
                       photo=f"calibrate round {number}", throw=number)  # fmt: skip
        learner.refresh()
        confirmed += 1
        for line in progress_lines(learner.summary()):
            say(line)
    return confirmed


def _confirm(
    dice: tuple[DieReading, ...], ask: Ask | None, say: Callable[[str], None]
) -> list[int] | None:
    """The values confirmed for the dice: [] to skip the round, None to stop."""
    read = [int(d.value or 0) for d in dice]
    if not dice:
        return []
    if ask is None:
        return read
    while True:
        answer = (
            ask('Enter: right as read · "3=5": die 3 shows 5 · s: skip · q: stop > ')
            .strip()
            .lower()
        )
        if answer == "q":
            return None
        if answer == "s":
            return []
        try:
            fixes = parse_corrections(answer, len(dice))
        except ValueError as exc:
            say(f"  {exc}")
            continue
        return [fixes.get(k, v) for k, v in enumerate(read)]


def teaching_frames(args: argparse.Namespace) -> tuple[Iterator[np.ndarray], bool]:
    """The pictures of the rounds and whether each is a still (a round each: --image,
    --images) or a frame of a camera or video (`still_pictures` finds the rounds)."""
    from companion.vision.colour import CalibrationError
    from companion.vision.sources import CameraSource, FolderSource, FrameSource, VideoSource

    if args.image:
        images: list[np.ndarray] = []
        for path in args.image:
            image = cv2.imread(path)
            if image is None:
                raise CalibrationError(f"{path}: not a readable image")
            images.append(np.asarray(image))
        return iter(images), True
    source: FrameSource
    if args.images:
        source = FolderSource(Path(args.images))
    elif args.video:
        source = VideoSource(Path(args.video))
    else:
        source = CameraSource(args.camera if args.camera is not None else 0)
    frames = (f.image for f in islice(iter(source), MAX_FRAMES_PER_ROUND * int(args.teach)))
    return frames, bool(args.images)


def run_teaching(
    args: argparse.Namespace,
    calibration: TableCalibration,
    frames: Iterator[np.ndarray],
    from_stills: bool,
    ask: Ask | None,
) -> int:
    """The rounds of `companion calibrate NAME --teach ROUNDS` (module docstring)."""
    reader = DiceReader.load(dice_set=calibration.dice_set)
    store = SetupStore(Path(args.data_dir))
    try:
        learner = SetupLearner(store, calibration.name, reader.classifier, calibration.dice_set)
        if from_stills:
            pictures: Iterator[tuple[np.ndarray, tuple[DieReading, ...]]] = (
                (f, reader.read(f).dice) for f in frames
            )
        else:
            pictures = still_pictures(frames, reader)
        done = teach(pictures, learner, int(args.teach), ask)
        sheet = (
            Path(args.sheet)
            if args.sheet
            else Path(args.data_dir) / "setups" / f"{calibration.name}-dice.png"
        )
        print(
            f"{done} rounds taught; the dice it learnt from: {contact_sheet(store, calibration.name, sheet)}"
        )
    finally:
        store.close()
    return 0
