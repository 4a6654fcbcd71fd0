"""Table calibration: the dice set's colours under this table's light, the play area and the
die size, in one named file under calibration/.

The file is the dice-set format of companion.vision.colour (`companion-dice-set/1`) with two
optional keys, so every older file stays valid and `companion read --dice-set FILE` reads a
new one:

    "play_area": [x0, y0, x1, y1]     # the table's part of the frame, fractions 0..1, x0 < x1
    "die_size": {"side_px": 44.0,     # a die's side in pixels, median of the dice measured
                 "frame": [640, 480]} # in frames of this size

`measure(frames, reader, reference)` builds a calibration from frames showing the dice:
every die's body colour (median over the frames, each die assigned to the set by
colour_distance), the median die side, and the play area (given, or detected: the region
the dice lay in, widened by two die sides). `load_calibration(path)` validates a file and
raises CalibrationError naming the file and the bad key."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from companion.vision.colour import (
    DEFAULT_CALIBRATION_DIR,
    CalibrationError,
    DiceSet,
    SetDie,
    assign_to_set,
    dice_set_to_json,
    measure_die,
    name_colour,
    parse_dice_set,
    read_calibration_json,
)
from companion.vision.types import DieReading, FrameReading

FULL_FRAME = (0.0, 0.0, 1.0, 1.0)
# \Z, not $: "$" also matches before a final line break ("kitchen\n" named a file)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}\Z")


class Reader(Protocol):
    def read(self, image: object, frame_index: int = 0) -> FrameReading: ...


@dataclass(frozen=True, slots=True)
class TableCalibration:
    """A dice set with its table: colours, play area (fractions) and die side (pixels, or
    None when not measured), and the frame size the side was measured in."""

    dice_set: DiceSet
    play_area: tuple[float, float, float, float] = FULL_FRAME
    die_side: float | None = None
    frame: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.dice_set.name

    def to_json(self, light: str) -> dict[str, Any]:
        data: dict[str, Any] = dice_set_to_json(self.dice_set, light)
        data["play_area"] = [round(v, 4) for v in self.play_area]
        if self.die_side is not None:
            data["die_size"] = {
                "side_px": round(self.die_side, 1),
                "frame": list(self.frame) if self.frame else None,
            }
        return data


def parse_calibration(data: object, source: str = "<data>") -> TableCalibration:
    """Validate a calibration document (see the module docstring); raises
    CalibrationError."""
    dice_set = parse_dice_set(data, source)
    assert isinstance(data, dict)  # parse_dice_set refused anything else
    play_area = FULL_FRAME
    if "play_area" in data:
        area = data["play_area"]
        if (
            not isinstance(area, list)
            or len(area) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in area)
        ):
            raise CalibrationError(f"{source}: 'play_area' must be four numbers [x0, y0, x1, y1]")
        x0, y0, x1, y1 = (float(v) for v in area)
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise CalibrationError(
                f"{source}: 'play_area' {area} must be fractions 0..1 with x0 < x1 and y0 < y1"
            )
        play_area = (x0, y0, x1, y1)
    side: float | None = None
    frame: tuple[int, int] | None = None
    if "die_size" in data:
        size = data["die_size"]
        if not isinstance(size, dict) or not set(size) <= {"side_px", "frame"}:
            raise CalibrationError(
                f"{source}: 'die_size' must be an object with 'side_px' (and 'frame')"
            )
        raw = size.get("side_px")
        if not isinstance(raw, int | float) or isinstance(raw, bool) or not 4 <= raw <= 2000:
            raise CalibrationError(f"{source}: 'die_size.side_px' must be 4 to 2000 pixels")
        side = float(raw)
        shape = size.get("frame")
        if shape is not None:
            if (
                not isinstance(shape, list)
                or len(shape) != 2
                or not all(isinstance(v, int) and 16 <= v <= 20000 for v in shape)
            ):
                raise CalibrationError(
                    f"{source}: 'die_size.frame' must be [width, height] in pixels"
                )
            frame = (shape[0], shape[1])
    return TableCalibration(dice_set, play_area, side, frame)


def load_calibration(path: Path) -> TableCalibration:
    """Read and validate a calibration file."""
    return parse_calibration(read_calibration_json(path), str(path))


def calibration_path(name: str, folder: Path = DEFAULT_CALIBRATION_DIR) -> Path:
    """The file of calibration `name` (letters, digits, - and _); raises CalibrationError
    for a name that could escape the folder."""
    if not NAME_PATTERN.match(name):
        raise CalibrationError(f"calibration name {name!r}: use 1-48 letters, digits, '-' or '_'")
    return folder / f"{name}.json"


def list_calibrations(folder: Path = DEFAULT_CALIBRATION_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.json"))


def save_calibration(
    calibration: TableCalibration, path: Path, light: str = "measured by companion calibrate"
) -> Path:
    """Write the file (validated by reading it back before it replaces an older one)."""
    data = calibration.to_json(light)
    parse_calibration(data, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


def detect_play_area(
    readings: Sequence[FrameReading], margin_sides: float = 2.0
) -> tuple[float, float, float, float]:
    """The region the dice lay in over `readings`, widened by `margin_sides` die sides on
    every side; the full frame when no die was seen."""
    xs: list[float] = []
    ys: list[float] = []
    sides: list[float] = []
    width = height = 0
    for reading in readings:
        width, height = max(width, reading.width), max(height, reading.height)
        for d in reading.dice:
            xs.append(d.where.cx)
            ys.append(d.where.cy)
            sides.append(max(d.where.w, d.where.h))
    if not xs or width <= 0 or height <= 0:
        return FULL_FRAME
    pad = float(np.median(sides)) * margin_sides
    return (
        max(0.0, (min(xs) - pad) / width),
        max(0.0, (min(ys) - pad) / height),
        min(1.0, (max(xs) + pad) / width),
        min(1.0, (max(ys) + pad) / height),
    )


# how sure the colour naming must be that a measured die is another colour before a note
# says so (a die under a warm lamp shades towards its neighbour, and is still its colour)
UNLIKE_NAME_CONFIDENCE = 0.3


def unlike_their_names(dice_set: DiceSet) -> list[str]:
    """Notes on measured dice whose colour is clearly another basic colour than their
    slot's (a purple die measured as the set's red: a die of the set not in view and
    another in its place, or a set unlike the standard one); the file is still saved."""
    notes = []
    for die in dice_set.dice:
        named = name_colour(die.lab)
        if named.name != die.colour and named.confidence >= UNLIKE_NAME_CONFIDENCE:
            notes.append(
                f"the die measured as {die.colour} looks {named.name}: check that the set's "
                f"{die.colour} die is in view and no die of another set is"
            )
    return notes


def _dice_within(
    reading: FrameReading, area: tuple[float, float, float, float]
) -> list[DieReading]:
    """The dice of `reading` whose centres lie in `area` (fractions x0, y0, x1, y1)."""
    x0, y0, x1, y1 = area
    return [
        d
        for d in reading.dice
        if x0 <= d.where.cx / max(reading.width, 1) <= x1
        and y0 <= d.where.cy / max(reading.height, 1) <= y1
    ]


def _play_area_of(
    readings: Sequence[FrameReading], detect: bool, notes: list[str]
) -> tuple[float, float, float, float]:
    """The play area of a calibration given none: the whole picture, or (`detect`) the
    region the dice lie in, noted. Guessed only when asked: a cluster laid out to be
    measured is smaller than where throws land, and a die outside is never read."""
    if not detect:
        return FULL_FRAME
    area = detect_play_area(readings)
    where = ",".join(f"{v:.2f}" for v in area)
    notes.append(
        f"play area detected around the dice in view, {where}: a die thrown outside it is not read"
    )
    return area


def measure(
    frames: Sequence[np.ndarray],
    reader: Reader,
    reference: DiceSet,
    name: str,
    play_area: tuple[float, float, float, float] | Literal["auto"] | None = None,
) -> tuple[TableCalibration, list[str]]:
    """A calibration of `reference`'s dice from frames that show them all; returns it and
    notes for the person calibrating. `play_area`: the fractions given; None, the whole
    picture; "auto", the region the dice lie in now (detect_play_area: dice thrown
    outside it later are not read, so the person spreads them over the whole area first).
    Raises CalibrationError when a die of the set was never seen (its colour cannot be
    measured)."""
    given = play_area if isinstance(play_area, tuple) else None
    labs: dict[int, list[tuple[float, float, float]]] = {}
    sides: list[float] = []
    readings: list[FrameReading] = []
    notes: list[str] = []
    frame_size: tuple[int, int] | None = None
    for index, image in enumerate(frames):
        reading = reader.read(image, index)
        readings.append(reading)
        frame_size = (reading.width, reading.height)
        dice = _dice_within(reading, given or FULL_FRAME)
        measured = [measure_die(image, d.where) for d in dice]
        assignment = assign_to_set([m.lab if m else None for m in measured], reference)
        for die, body, j in zip(dice, measured, assignment.set_index, strict=True):
            sides.append(max(die.where.w, die.where.h))
            if body is not None and j is not None:
                labs.setdefault(j, []).append(body.lab)
        if len(dice) != len(reference.dice):
            notes.append(f"frame {index}: {len(dice)} dice seen, the set has {len(reference.dice)}")
    unseen = [reference.dice[j].colour for j in range(len(reference.dice)) if j not in labs]
    if unseen:
        raise CalibrationError(
            f"not seen by the camera: {', '.join(unseen)}; lay every die of the set in view"
        )
    dice_set = DiceSet(
        name,
        tuple(
            SetDie(
                reference.dice[j].colour,
                tuple(float(v) for v in np.median(np.float32(labs[j]), axis=0)),  # type: ignore[arg-type]
            )
            for j in range(len(reference.dice))
        ),
        "measured",
    )
    notes.extend(unlike_their_names(dice_set))
    area = given or _play_area_of(readings, play_area == "auto", notes)
    side = float(np.median(sides)) if sides else None
    return TableCalibration(dice_set, area, side, frame_size), notes
