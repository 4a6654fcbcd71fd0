"""Colour of each die, and assignment of the found dice to a known dice set.

Stage: locate -> classify -> **colour** -> settle. For each die the body colour is measured
from the middle of its box: the pixels there are split into two clusters in CIE Lab (body
and pips; the body is the larger one, pips cover at most about a fifth of a face), and the
body colour is the per-channel median of its cluster after dropping glare, so a few odd
pixels do not move it. A basic colour name (white, black, grey, red, orange, yellow, green,
blue, teal, purple, pink, brown) comes from the nearest colour prototypes, with a
confidence from how much nearer the best name is than the next one.

With a dice set (a shipped standard set such as calibration/qwixx-default.json, a
calibration file, see `parse_dice_set`, or the colours a game declares, which the server
passes in: vision knows no games), the found dice are assigned to the set's dice all at once: an optimal
assignment (Hungarian method) over colour distances, each set die used once (so Qwixx's two
white dice take the two whitest dice), dice beyond the set flagged "extra", set dice not
found reported as missing.

Lab values everywhere are CIE L*a*b* (L 0-100, a/b about -128..127), from OpenCV's float
conversion of sRGB.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from companion.assets import asset_dir, calibration_dir
from companion.vision.types import BASIC_COLOURS, DieBox, DieReading

logger = logging.getLogger(__name__)

CALIBRATION_FORMAT = "companion-dice-set/1"
DEFAULT_CALIBRATION_DIR = calibration_dir()  # where calibrations are saved (companion.assets)

# Dice assigned to a set die further than this (Lab distance) are flagged: the die found
# does not look like the set die it was given to.
SET_MISMATCH_DISTANCE = 45.0


# ----------------------------------------------------------------------------------------
# Measuring a die's body colour


@dataclass(frozen=True, slots=True)
class BodyColour:
    """The measured colour of one die: body and pip Lab medians, and the share of the
    sampled pixels that belong to the body cluster."""

    lab: tuple[float, float, float]
    pip_lab: tuple[float, float, float] | None
    body_share: float


def to_lab(bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 pixels (any shape ending in 3) to CIE Lab float32."""
    pixels = np.asarray(bgr, dtype=np.uint8).reshape(-1, 1, 3)
    lab = cv2.cvtColor(pixels.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    return lab.reshape(*np.asarray(bgr).shape[:-1], 3)


def sample_die(image: np.ndarray, box: DieBox, samples: int = 24) -> np.ndarray:
    """BGR pixels of the middle of the die: a disc of radius 0.34 x the box's shorter side
    (inside the top face for any rotation of a die in its box), resampled to about
    `samples` x `samples` pixels. Returns an (N, 3) uint8 array, empty if the box lies
    outside the image."""
    radius = 0.34 * min(box.w, box.h)
    if radius < 1 or image.size == 0:
        return np.zeros((0, 3), np.uint8)
    scale = samples / (2 * radius)
    matrix = np.array(
        [[scale, 0, samples / 2 - box.cx * scale], [0, scale, samples / 2 - box.cy * scale]],
        np.float32,
    )
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    patch = cv2.warpAffine(
        image,
        matrix,
        (samples, samples),
        flags=interp,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0, 0, 0),
    )
    # keep the disc, and only pixels that came from inside the image
    grid = (np.arange(samples, dtype=np.float32) + 0.5 - samples / 2) / scale
    xs, ys = np.meshgrid(grid + box.cx, grid + box.cy)
    h, w = image.shape[:2]
    keep = (
        ((xs - box.cx) ** 2 + (ys - box.cy) ** 2 <= radius**2)
        & (xs >= 0)
        & (xs <= w - 1)
        & (ys >= 0)
        & (ys <= h - 1)
    )
    # the stubs type a mask index of warpAffine's result as Any; it is an (N, 3) array
    pixels: np.ndarray = patch[keep]
    return pixels


def measure_body(pixels_bgr: np.ndarray) -> BodyColour | None:
    """Split die pixels into body and pips and return the body's robust Lab colour; None
    when there are too few pixels to say."""
    if len(pixels_bgr) < 8:
        return None
    lab = to_lab(pixels_bgr).reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    # kmeans' random start comes from OpenCV's global RNG: seed it so the same pixels
    # always give the same colour
    cv2.setRNGSeed(12345)
    # OpenCV takes None for bestLabels (it allocates the labels); its stubs ask for an array
    _, labels, centres = cv2.kmeans(lab, 2, None, criteria, 2, cv2.KMEANS_PP_CENTERS)  # type: ignore[call-overload]
    labels = labels.ravel()
    counts = np.bincount(labels, minlength=2)
    body_k = int(np.argmax(counts))
    separation = float(np.linalg.norm(centres[0] - centres[1]))
    if separation < 12.0:
        # no pips in view (or pips the body's colour): one cluster
        body, pips = lab, None
    else:
        body, pips = lab[labels == body_k], lab[labels != body_k]
    # glare: drop the brightest, least saturated tail of the body pixels
    median = np.median(body, axis=0)
    distance = np.linalg.norm(body - median, axis=1)
    core = body[distance <= max(np.percentile(distance, 80), 1e-3)]
    body_lab = np.median(core if len(core) >= 4 else body, axis=0)
    pip_lab = None if pips is None or len(pips) == 0 else np.median(pips, axis=0)
    share = float(len(body)) / len(lab)
    return BodyColour(
        lab=tuple(float(v) for v in body_lab),  # type: ignore[arg-type]
        pip_lab=None if pip_lab is None else tuple(float(v) for v in pip_lab),  # type: ignore[arg-type]
        body_share=share,
    )


def measure_die(image: np.ndarray, box: DieBox) -> BodyColour | None:
    """The body colour of the die in `box` of a BGR image (None if it cannot be
    measured)."""
    return measure_body(sample_die(image, box))


# ----------------------------------------------------------------------------------------
# Naming a colour

# Lightness counts half as much as a and b when comparing colours: the light over a table
# changes brightness far more than hue.
LIGHTNESS_WEIGHT = 0.5

# Colour prototypes (CIE Lab) per basic name: k-means centres (4 per source) of body
# colours measured with `measure_die` on (1) the training part of
# shared/data/byler-d6-train (colours.csv labels; the validation fifth, images 4, 9, 14 ...
# by sorted name, never used) and (2) dice rendered by companion.synth under
# random light. Names absent from the real photos (grey, orange, pink) come from (2) only.
# A centre nearer another name's median than its own is left out (white dice under the
# dimmest light look grey).
# Regenerate with `bench/vision_colour.py --prototypes`.
_PROTOTYPES: dict[str, tuple[tuple[float, float, float], ...]] = {
    "white": (
        (77.8, 0.5, -0.3),
        (74.1, -0.9, 11.0),
        (85.9, -1.6, 7.6),
        (74.8, -1.1, 8.4),
        (95.0, 2.2, -0.8),
        (71.3, 3.3, 0.9),
        (77.7, -5.0, 5.6),
    ),
    "black": (
        (18.9, 4.6, 4.0),
        (12.4, 1.8, 0.9),
        (13.2, -0.0, 2.9),
        (12.3, 2.2, 0.4),
        (8.1, 0.5, 0.4),
        (15.5, 1.6, 12.7),
    ),
    "grey": (
        (58.7, 0.8, -0.7),
        (33.5, 0.9, 0.1),
        (46.2, -1.3, 3.3),
        (41.9, 2.7, -5.0),
    ),
    "red": (
        (29.8, 39.6, 25.4),
        (26.6, 27.0, 9.6),
        (34.0, 48.3, 34.0),
        (37.6, 47.8, 19.0),
        (30.2, 40.4, 26.3),
        (39.0, 52.3, 35.3),
        (24.0, 26.1, 13.3),
    ),
    "orange": (
        (47.4, 22.9, 43.7),
        (70.2, 26.4, 66.4),
        (53.5, 44.1, 55.4),
    ),
    "yellow": (
        (64.7, -6.9, 59.2),
        (72.2, -14.3, 64.5),
        (63.7, 6.0, 62.3),
        (74.9, -21.1, 68.1),
        (68.0, -10.1, 55.1),
        (83.5, -15.0, 72.2),
        (69.2, 3.5, 62.2),
    ),
    "green": (
        (40.9, -42.7, 30.0),
        (41.0, -40.2, 25.5),
        (40.3, -37.9, 22.8),
        (43.9, -43.5, 27.6),
        (48.0, -43.4, 30.8),
        (38.2, -35.4, 23.2),
        (48.8, -49.8, 41.9),
    ),
    "blue": (
        (30.3, -0.3, -27.5),
        (12.0, 26.3, -42.5),
        (19.9, 3.2, -17.3),
        (24.0, -1.7, -21.7),
        (23.5, 14.3, -40.7),
        (18.2, 7.5, -29.8),
        (33.7, 2.2, -33.6),
    ),
    "teal": (
        (30.3, -17.8, 9.8),
        (36.8, -23.3, 5.2),
        (37.2, -23.3, 14.5),
        (30.3, -14.0, 2.7),
        (28.3, -17.8, -2.6),
        (48.7, -33.3, 6.2),
        (39.5, -25.2, 1.4),
        (41.0, -19.6, -9.4),
    ),
    "purple": (
        (10.1, 12.0, -9.4),
        (19.2, 34.7, -22.9),
        (20.6, 27.8, -21.3),
        (13.1, 17.0, -14.0),
        (21.7, 31.4, -27.3),
        (14.8, 22.3, -19.4),
    ),
    "pink": (
        (37.2, 25.3, -4.5),
        (60.5, 41.9, -2.7),
        (54.9, 37.4, -12.0),
        (65.5, 59.4, -20.1),
    ),
    "brown": (
        (45.8, 6.7, 38.2),
        (31.6, 6.6, 21.8),
        (22.8, 5.4, 12.8),
        (38.6, 8.1, 29.7),
        (20.7, 5.3, 12.9),
        (33.4, 17.5, 26.5),
        (29.0, 8.9, 21.3),
        (22.3, 13.6, 14.5),
    ),
}

_PROTO_NAMES: tuple[str, ...] = tuple(n for n, ps in _PROTOTYPES.items() for _ in ps)
_PROTO_LAB = np.array([p for ps in _PROTOTYPES.values() for p in ps], np.float32)
_WEIGHTS = np.array([LIGHTNESS_WEIGHT, 1.0, 1.0], np.float32)


def colour_distance(
    lab1: Sequence[float] | np.ndarray, lab2: Sequence[float] | np.ndarray
) -> float:
    """Distance between two Lab colours with lightness down-weighted (see
    LIGHTNESS_WEIGHT)."""
    diff = (np.asarray(lab1, dtype=np.float32) - np.asarray(lab2, dtype=np.float32)) * _WEIGHTS
    return float(np.linalg.norm(diff))


def prototype_distance(lab: Sequence[float] | np.ndarray, name: str) -> float:
    """The distance (`colour_distance`) of a Lab colour to the nearest prototype of `name`
    (a setup's own colours are named beside the prototypes: companion.vision.adapt)."""
    mine = np.array([n == name for n in _PROTO_NAMES])
    if not mine.any():
        return math.inf
    diff = (_PROTO_LAB[mine] - np.asarray(lab, dtype=np.float32)) * _WEIGHTS
    return float(np.linalg.norm(diff, axis=1).min())


@dataclass(frozen=True, slots=True)
class ColourName:
    """A basic colour name with a confidence 0..1 and the runner-up name."""

    name: str
    confidence: float
    runner_up: str


def name_colour(lab: Sequence[float]) -> ColourName:
    """The basic colour name of a Lab body colour: the name of the nearest prototype.
    Confidence compares the nearest prototype of the best name (d1) with that of the
    next-best name (d2): (d2 - d1) / d2, reduced when even d1 is far."""
    distances = np.linalg.norm((_PROTO_LAB - np.asarray(lab, dtype=np.float32)) * _WEIGHTS, axis=1)
    best_by_name: dict[str, float] = {}
    for name, distance in zip(_PROTO_NAMES, distances, strict=True):
        if distance < best_by_name.get(name, math.inf):
            best_by_name[name] = float(distance)
    ranked = sorted(best_by_name.items(), key=lambda item: item[1])
    (name, d1), (runner_up, d2) = ranked[0], ranked[1]
    confidence = (d2 - d1) / max(d2, 1e-6)
    confidence *= math.exp(-max(0.0, d1 - 15.0) / 25.0)
    return ColourName(name, float(np.clip(confidence, 0.0, 1.0)), runner_up)


# ----------------------------------------------------------------------------------------
# Dice sets and calibration files


class CalibrationError(ValueError):
    """A dice-set calibration file that is missing or does not follow the format."""


@dataclass(frozen=True, slots=True)
class SetDie:
    """One die of a set: its colour name and its Lab colour under the table's light."""

    colour: str
    lab: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class DiceSet:
    """A named set of dice, e.g. Qwixx: white, white, red, yellow, green, blue."""

    name: str
    dice: tuple[SetDie, ...]
    source: str = ""

    @property
    def colours(self) -> tuple[str, ...]:
        return tuple(d.colour for d in self.dice)


def parse_dice_set(data: object, source: str = "<data>") -> DiceSet:
    """Validate a calibration document and build its DiceSet; raises CalibrationError
    naming the problem and where it is.

    Format (JSON object)::

        {
          "format": "companion-dice-set/1",
          "name": "qwixx",                      # set name, non-empty text
          "light": "how and under which light the colours were measured",  # optional
          "dice": [                             # 1-12 dice, in the set's order
            {"colour": "white", "lab": [L, a, b]},   # basic colour name; CIE Lab,
            ...                                      # L 0-100, a and b -128..127
          ]
        }

    Two dice may share a colour (Qwixx has two white dice). Unknown keys are refused so a
    misspelt key does not pass silently."""
    if not isinstance(data, dict):
        raise CalibrationError(f"{source}: a dice-set file must hold a JSON object")
    # play_area and die_size belong to a table calibration (companion.vision.calibration
    # validates them); a dice set alone ignores them
    unknown = set(data) - {
        "format",
        "name",
        "light",
        "description",
        "dice",
        "play_area",
        "die_size",
    }
    if unknown:
        raise CalibrationError(f"{source}: unknown key(s) {sorted(unknown)}")
    if data.get("format") != CALIBRATION_FORMAT:
        raise CalibrationError(
            f"{source}: 'format' must be {CALIBRATION_FORMAT!r}, got {data.get('format')!r}"
        )
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CalibrationError(f"{source}: 'name' must be a non-empty string")
    dice = data.get("dice")
    if not isinstance(dice, list) or not 1 <= len(dice) <= 12:
        raise CalibrationError(f"{source}: 'dice' must be a list of 1 to 12 dice")
    parsed = tuple(_parse_set_die(die, f"{source}: dice[{i}]") for i, die in enumerate(dice))
    return DiceSet(name.strip(), parsed, source)


def _parse_set_die(die: object, where: str) -> SetDie:
    """One die of a dice-set file: {"colour": basic colour name, "lab": [L, a, b]}."""
    if not isinstance(die, dict) or set(die) != {"colour", "lab"}:
        raise CalibrationError(f"{where}: must be an object with exactly 'colour' and 'lab'")
    colour = die["colour"]
    if colour not in BASIC_COLOURS:
        raise CalibrationError(
            f"{where}: colour {colour!r} is not one of {', '.join(BASIC_COLOURS)}"
        )
    lab = die["lab"]
    if (
        not isinstance(lab, list)
        or len(lab) != 3
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in lab)
    ):
        raise CalibrationError(f"{where}: 'lab' must be three numbers [L, a, b]")
    if not 0 <= lab[0] <= 100 or not all(-128 <= v <= 128 for v in lab[1:]):
        raise CalibrationError(f"{where}: lab {lab} outside L 0..100, a/b -128..128")
    return SetDie(colour, (float(lab[0]), float(lab[1]), float(lab[2])))


def read_calibration_json(path: Path) -> object:
    """The JSON of a calibration file; CalibrationError naming the file when it is missing,
    unreadable or not JSON (the table calibration reads the same files)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CalibrationError(f"{path}: no such calibration file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read ({exc})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{path}: not JSON ({exc})") from exc


def load_dice_set(path: Path) -> DiceSet:
    """Read and validate a calibration file (see parse_dice_set)."""
    return parse_dice_set(read_calibration_json(path), str(path))


def dice_set_to_json(dice_set: DiceSet, light: str) -> dict[str, object]:
    """The calibration document of a set (what `parse_dice_set` reads)."""
    return {
        "format": CALIBRATION_FORMAT,
        "name": dice_set.name,
        "light": light,
        "dice": [{"colour": d.colour, "lab": [round(v, 1) for v in d.lab]} for d in dice_set.dice],
    }


def builtin_dice_set_names() -> tuple[str, ...]:
    """The standard sets shipped as calibration/<name>-default.json (e.g. qwixx, sixto)."""
    return tuple(sorted(_default_files()))


def _default_files() -> dict[str, Path]:
    """Each standard set's <name>-default.json: the one the package ships (companion.assets;
    the checkout's calibration/ itself), or the calibration folder's own re-measured one
    (an installed companion's ./calibration)."""
    suffix = "-default.json"
    files: dict[str, Path] = {}
    for folder in (asset_dir("calibration"), DEFAULT_CALIBRATION_DIR):
        for path in sorted(folder.glob(f"*{suffix}")):
            files[path.name.removesuffix(suffix)] = path
    return files


def builtin_dice_set(name: str, colours: Sequence[str] | None = None) -> DiceSet:
    """The standard set `name`: its shipped calibration/<name>-default.json; or, given
    `colours` (a game's declared dice, passed in by the caller) that the file does not
    hold, or no file, a set of those colours at each colour's typical Lab (the mean of its
    name's prototypes). CalibrationError for a name with neither."""
    known = builtin_dice_set_names()
    if name in known:
        shipped = _shipped_dice_set(name)
        if colours is None or sorted(shipped.colours) == sorted(colours):
            return shipped
    if colours is None:
        raise CalibrationError(f"unknown dice set {name!r}; built in: {', '.join(known)}")
    unknown = [c for c in colours if c not in _PROTOTYPES]
    if unknown or not colours:
        raise CalibrationError(f"dice set {name!r}: no basic colour {unknown or 'given'}")
    dice = tuple(SetDie(c, typical_lab(c)) for c in colours)
    return DiceSet(name, dice, "built-in prototypes")


@cache
def _shipped_dice_set(name: str) -> DiceSet:
    # read once per process: the camera asks every second, the renderer for every scene
    return load_dice_set(_default_files()[name])


def typical_lab(colour: str) -> tuple[float, float, float]:
    """A representative Lab of a basic colour name (mean of its prototypes)."""
    mean = np.mean(np.array(_PROTOTYPES[colour], np.float32), axis=0)
    return (float(mean[0]), float(mean[1]), float(mean[2]))


def resolve_dice_set(spec: str | Path | DiceSet | None) -> DiceSet | None:
    """A dice set from a built-in name, a calibration file path or a DiceSet."""
    if spec is None or isinstance(spec, DiceSet):
        return spec
    text = str(spec)
    known = builtin_dice_set_names()
    if text in known:
        return builtin_dice_set(text)
    path = Path(text)
    if not path.exists() and path.suffix == "" and len(path.parts) == 1:
        raise CalibrationError(
            f"unknown dice set {text!r}: give {' or '.join(known)}, "
            "or a calibration file (calibration/*.json)"
        )
    return load_dice_set(path)


# ----------------------------------------------------------------------------------------
# Assignment to a set


@dataclass(frozen=True, slots=True)
class SetAssignment:
    """Which set die each found die is: `set_index[i]` for found die i (None = extra
    die), the distance of each pairing (after the light shift), the set dice nobody was
    assigned to, and the Lab shift of the light that was taken out."""

    set_index: tuple[int | None, ...]
    distance: tuple[float | None, ...]
    missing: tuple[int, ...]
    light_shift: tuple[float, float, float] = (0.0, 0.0, 0.0)


def assign_to_set(labs: Sequence[Sequence[float] | None], dice_set: DiceSet) -> SetAssignment:
    """Assign measured dice to the set's dice at once: the assignment that minimises the
    summed colour distance (each set die used at most once). Dice without a measurement
    cost the same against every set die, so they take what the others leave.

    The light over the table shifts every die's colour alike (a warm lamp, a dim room),
    so after a first assignment the median shift between measured and set colours is
    taken out and the dice are assigned again (with four or more measured dice)."""
    n, m = len(labs), len(dice_set.dice)
    if n == 0:
        return SetAssignment((), (), tuple(range(m)))
    shift = np.zeros(3, np.float32)
    cost, pairs = _assign(labs, dice_set, shift)
    diffs = [
        np.asarray(lab, dtype=np.float32) - np.asarray(dice_set.dice[j].lab, dtype=np.float32)
        for i, j in pairs
        if (lab := labs[i]) is not None
    ]
    if len(diffs) >= 4:  # one difference per measured die
        shift = np.median(np.stack(diffs), axis=0)
        cost, pairs = _assign(labs, dice_set, shift)
    set_index: list[int | None] = [None] * n
    distance: list[float | None] = [None] * n
    for i, j in pairs:
        set_index[i] = j
        distance[i] = None if labs[i] is None else float(cost[i, j])
    used = {j for _, j in pairs}
    return SetAssignment(
        tuple(set_index),
        tuple(distance),
        tuple(j for j in range(m) if j not in used),
        (float(shift[0]), float(shift[1]), float(shift[2])),
    )


def _assign(
    labs: Sequence[Sequence[float] | None], dice_set: DiceSet, shift: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    cost = np.full((len(labs), len(dice_set.dice)), 200.0)
    for i, lab in enumerate(labs):
        if lab is None:
            continue
        corrected = np.asarray(lab, dtype=np.float32) - shift
        for j, die in enumerate(dice_set.dice):
            cost[i, j] = colour_distance(corrected, die.lab)
    return cost, hungarian(cost)


def hungarian(cost: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-cost assignment of rows to columns of a rectangular cost matrix (each row
    and column used at most once, min(rows, cols) pairs); the Hungarian method with
    potentials (Kuhn 1955, Munkres 1957), O(n^2 m)."""
    rows, cols = cost.shape
    transposed = rows > cols
    c = cost.T if transposed else cost
    n, m = c.shape  # n <= m
    inf = math.inf
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    match = [0] * (m + 1)  # match[j] = row (1-based) assigned to column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        min_v = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], inf, 0
            for j in range(1, m + 1):
                if used[j]:
                    continue
                cur = float(c[i0 - 1, j - 1]) - u[i0] - v[j]
                if cur < min_v[j]:
                    min_v[j], way[j] = cur, j0
                if min_v[j] < delta:
                    delta, j1 = min_v[j], j
            for j in range(m + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    min_v[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    pairs = [(match[j] - 1, j - 1) for j in range(1, m + 1) if match[j]]
    if transposed:
        pairs = [(j, i) for i, j in pairs]
    return sorted(pairs)


# ----------------------------------------------------------------------------------------
# The colour stage


def colour_readings(
    image: np.ndarray, readings: Sequence[DieReading], dice_set: DiceSet | None = None
) -> tuple[tuple[DieReading, ...], tuple[int, ...]]:
    """The colour stage: each reading gets its body colour name and confidence; with a
    dice set, its set die (set_index), the set die's colour, and the flag "extra" when the
    set has no die left for it ("colour_mismatch" when its colour is far from the set
    die's). Returns the readings and the indices of set dice not found."""
    measured = [measure_die(image, r.where) for r in readings]
    named = [None if m is None else name_colour(m.lab) for m in measured]
    if dice_set is None:
        out = tuple(
            replace(r, colour=n.name if n else None, colour_confidence=n.confidence if n else 0.0)
            for r, n in zip(readings, named, strict=True)
        )
        return out, ()
    labs = [None if m is None else m.lab for m in measured]
    assignment = assign_to_set(labs, dice_set)
    shift = np.array(assignment.light_shift, np.float32)
    out_list: list[DieReading] = []
    for i, reading in enumerate(readings):
        j = assignment.set_index[i]
        if j is None:
            n = named[i]
            out_list.append(
                replace(
                    reading,
                    colour=n.name if n else None,
                    colour_confidence=n.confidence if n else 0.0,
                    flags=(*reading.flags, "extra"),
                )
            )
            continue
        set_die = dice_set.dice[j]
        flags = reading.flags
        distance = assignment.distance[i]
        lab = labs[i]
        confidence = 0.0
        if distance is not None and lab is not None:  # a distance only where a lab was measured
            others = [
                colour_distance(np.asarray(lab, dtype=np.float32) - shift, d.lab)
                for d in dice_set.dice
                if d.colour != set_die.colour
            ]
            nearest_other = min(others) if others else distance + 50.0
            confidence = float(np.clip((nearest_other - distance) / max(nearest_other, 1e-6), 0, 1))
            if distance > SET_MISMATCH_DISTANCE:
                flags = (*flags, "colour_mismatch")
        out_list.append(
            replace(
                reading,
                colour=set_die.colour,
                colour_confidence=confidence,
                set_index=j,
                flags=flags,
            )
        )
    return tuple(out_list), assignment.missing
