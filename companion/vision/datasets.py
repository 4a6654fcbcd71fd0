"""Reading the real labelled dice photos of ../shared/data (see its README.md) and the fixed
train/validation split used to train and measure the dice finder and the pip classifier.

Label format (all folders): YOLO text files, one line per die, ``cls xc yc w h`` normalised
to the image size; the die's value is ``cls + 1``.

The split is fixed and never random, so a figure measured on the validation part is always
measured on pictures the models never saw:

- ``epanemu-dice3``: ``train/`` is trained on; all of ``valid/`` is validation.
- ``byler-d6-train``: images sorted by name; every 5th (index 4, 9, 14, ...) is validation.
- ``matteop65-d6``: its frames come from a few webcam sessions and neighbours are
  near-duplicates, so a random split would leak. ``train/`` (one session per value) is
  trained on; ``valid/`` (a separate session, frames valid_1..valid_86 with mixed values) is
  the held-out contiguous block.

matteop65-d6 boxes enclose only the pip pattern, not the die: they are enlarged to a square
of 1.5x the longer side (2x for a single pip, whose box hugs one pip) so that every folder
yields boxes that frame the whole die. Images whose label file is empty are skipped (known
defect: they show dice nobody labelled).

Some labels are wrong: a die nobody labelled, a value that is not the one on top, a photo
whose dice all carry one value. `read_label_corrections` reads a list of such faults, each
checked by eye against the photo, so that a benchmark can report its figures both as the
folder labels them and corrected (bench/label_corrections.csv, `bench/vision_eval.py`).
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

logger = logging.getLogger(__name__)

BYLER = "byler-d6-train"
EPANEMU = "epanemu-dice3"
MATTEO = "matteop65-d6"
FOLDERS = (BYLER, EPANEMU, MATTEO)

# Every BYLER_VALIDATION_EVERY-th byler image (by sorted name) is held out.
BYLER_VALIDATION_EVERY = 5
# matteop65 pip-pattern boxes -> whole-die squares (see the module docstring).
MATTEO_DIE_FACTOR = 1.5
MATTEO_SINGLE_PIP_FACTOR = 2.0

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


class DatasetError(ValueError):
    """A data folder or label file that cannot be read as documented."""


def default_data_root() -> Path:
    """``../shared/data`` beside the repository root (where CI and the team keep it)."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


@dataclass(frozen=True, slots=True)
class LabelledDie:
    """One labelled die in pixels of its image: centre, width/height of its axis-aligned
    box (already enlarged to the whole die for matteop65) and its value 1-6."""

    cx: float
    cy: float
    w: float
    h: float
    value: int

    @property
    def side(self) -> float:
        """The die's size: the longer side of its box."""
        return max(self.w, self.h)


@dataclass(frozen=True, slots=True)
class LabelledImage:
    """One photo with its labelled dice; ``folder`` names the data folder (e.g.
    ``"byler-d6-train"``) so that figures can be reported per folder."""

    path: Path
    folder: str
    width: int
    height: int
    dice: tuple[LabelledDie, ...]

    def load(self) -> np.ndarray:
        """The photo as BGR uint8 pixels; raises DatasetError when it cannot be decoded."""
        image = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
        if image is None:
            raise DatasetError(f"{self.path}: not a readable image")
        return image


@dataclass(frozen=True, slots=True)
class DatasetSplit:
    """The fixed split: ``train`` may be trained on, ``validation`` (per folder) never."""

    train: tuple[LabelledImage, ...]
    validation: dict[str, tuple[LabelledImage, ...]]

    def all_validation(self) -> tuple[LabelledImage, ...]:
        return tuple(image for images in self.validation.values() for image in images)


def parse_label_file(
    path: Path, width: int, height: int, *, pip_pattern_boxes: bool = False
) -> tuple[LabelledDie, ...]:
    """Read one YOLO label file into dice in pixels; raises DatasetError naming the line."""
    dice: list[LabelledDie] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            cls, xc, yc, bw, bh = int(parts[0]), *(float(p) for p in parts[1:5])
        except (ValueError, IndexError) as exc:
            raise DatasetError(f"{path}:{number}: not 'cls xc yc w h': {line!r}") from exc
        if not 0 <= cls <= 5 or len(parts) != 5:
            raise DatasetError(f"{path}:{number}: class must be 0-5 (pips - 1): {line!r}")
        w, h = bw * width, bh * height
        if pip_pattern_boxes:
            factor = MATTEO_SINGLE_PIP_FACTOR if cls == 0 else MATTEO_DIE_FACTOR
            w = h = max(w, h) * factor
        dice.append(LabelledDie(xc * width, yc * height, w, h, cls + 1))
    return tuple(dice)


def _image_size(path: Path) -> tuple[int, int]:
    # cv2 has no header-only reader, so the size comes from decoding the image.
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise DatasetError(f"{path}: not a readable image")
    return image.shape[1], image.shape[0]


def read_yolo_folder(
    images_dir: Path, labels_dir: Path, folder: str, *, pip_pattern_boxes: bool = False
) -> list[LabelledImage]:
    """All labelled images of one folder, sorted by file name; images without a label
    file or with an empty one are skipped (and counted in the log)."""
    if not images_dir.is_dir():
        raise DatasetError(f"{images_dir}: no such image folder")
    result: list[LabelledImage] = []
    skipped = 0
    for image_path in sorted(images_dir.iterdir()):
        if image_path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        label_path = labels_dir / (image_path.stem + ".txt")
        if not label_path.is_file() or label_path.stat().st_size == 0:
            skipped += 1
            continue
        width, height = _image_size(image_path)
        dice = parse_label_file(label_path, width, height, pip_pattern_boxes=pip_pattern_boxes)
        if not dice:
            skipped += 1
            continue
        result.append(LabelledImage(image_path, folder, width, height, dice))
    logger.info("%s: %d labelled images, %d skipped", images_dir, len(result), skipped)
    return result


def has_pip_pattern_boxes(folder: Path) -> bool:
    """Whether a folder's labels box only the pip pattern (matteop65-d6, named in its
    path), so that they need enlarging to the whole die."""
    return MATTEO in str(folder.resolve())


def read_labelled_folder(
    folder: Path, pip_pattern_boxes: bool | None = None
) -> list[LabelledImage]:
    """The labelled images of a folder as the benchmarks take it: images/ and labels/
    inside (epanemu, byler) or images with their .txt labels side by side (matteop65).
    ``pip_pattern_boxes`` None: as `has_pip_pattern_boxes` says for the folder."""
    if pip_pattern_boxes is None:
        pip_pattern_boxes = has_pip_pattern_boxes(folder)
    if (folder / "images").is_dir():
        images, labels = folder / "images", folder / "labels"
    else:
        images = labels = folder
    return read_yolo_folder(images, labels, folder.name, pip_pattern_boxes=pip_pattern_boxes)


def every_nth(images: Sequence[LabelledImage], every: int, offset: int) -> list[LabelledImage]:
    """Images offset, offset + every, offset + 2 x every ... of a sorted folder (byler's
    validation fifth: every 5, offset 4)."""
    return [image for k, image in enumerate(images) if k % every == offset % every]


def load_split(data_root: Path | None = None) -> DatasetSplit:
    """The documented train/validation split of every folder under ``data_root``."""
    root = data_root if data_root is not None else default_data_root()
    if not root.is_dir():
        raise DatasetError(f"{root}: no data folder (expected ../shared/data)")

    byler = read_yolo_folder(root / BYLER / "images", root / BYLER / "labels", BYLER)
    byler_valid = every_nth(byler, BYLER_VALIDATION_EVERY, offset=BYLER_VALIDATION_EVERY - 1)
    byler_train = [im for im in byler if im not in byler_valid]

    epanemu = root / EPANEMU
    epanemu_train = read_yolo_folder(epanemu / "train/images", epanemu / "train/labels", EPANEMU)
    epanemu_valid = read_yolo_folder(epanemu / "valid/images", epanemu / "valid/labels", EPANEMU)

    matteo = root / MATTEO
    matteo_train = read_yolo_folder(
        matteo / "train", matteo / "train", MATTEO, pip_pattern_boxes=True
    )
    matteo_valid = read_yolo_folder(
        matteo / "valid", matteo / "valid", MATTEO, pip_pattern_boxes=True
    )
    return DatasetSplit(
        train=tuple(byler_train + epanemu_train + matteo_train),
        validation={
            BYLER: tuple(byler_valid),
            EPANEMU: tuple(epanemu_valid),
            MATTEO: tuple(matteo_valid),
        },
    )


# ----------------------------------------------------------------------------------------
# Label corrections: faults in the folders' labels, each found and checked by eye

CORRECTION_KINDS = ("value", "missing", "ignore", "drop")
_CORRECTION_COLUMNS = ("folder", "image", "kind", "cx", "cy", "side", "value", "reason")


@dataclass(frozen=True, slots=True)
class LabelCorrection:
    """One fault in a folder's labels, in pixels of the original image:
    - ``value``: the labelled die nearest (cx, cy) shows ``value``, not its label;
    - ``missing``: a die showing ``value`` at (cx, cy, side) that nobody labelled;
    - ``ignore``: a die nobody labelled that cannot be given a value (cut by the picture's
      edge, seen from the side): a reading there is neither required nor counted false;
    - ``drop``: the photo's labels are unusable as a whole; the photo is left out."""

    folder: str
    image: str
    kind: str
    cx: float
    cy: float
    side: float
    value: int | None
    reason: str
    line: int


def read_label_corrections(path: Path) -> dict[str, tuple[LabelCorrection, ...]]:
    """The corrections in a CSV file (columns: folder, image, kind, cx, cy, side, value,
    reason), by image file name; raises DatasetError naming the line of a broken row."""
    by_image: dict[str, list[LabelCorrection]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(row for row in handle if row.strip() and not row.startswith("#"))
        header = next(rows, None)
        if header is None or tuple(h.strip() for h in header) != _CORRECTION_COLUMNS:
            raise DatasetError(f"{path}: the first row must be {','.join(_CORRECTION_COLUMNS)}")
        for number, row in enumerate(rows, start=2):
            where = f"{path}: correction {number - 1}"
            if len(row) != len(_CORRECTION_COLUMNS):
                raise DatasetError(f"{where}: {len(row)} fields, expected 8: {row!r}")
            folder, image, kind, cx, cy, side, value, reason = (f.strip() for f in row)
            if folder not in FOLDERS:
                raise DatasetError(f"{where}: unknown folder {folder!r}")
            if kind not in CORRECTION_KINDS:
                raise DatasetError(f"{where}: kind must be one of {', '.join(CORRECTION_KINDS)}")
            if not reason:
                raise DatasetError(f"{where}: a correction needs its reason")
            try:
                x, y, size = (float(v) if v else 0.0 for v in (cx, cy, side))
                die_value = int(value) if value else None
            except ValueError as exc:
                raise DatasetError(f"{where}: cx, cy, side and value must be numbers") from exc
            if kind in ("value", "missing") and die_value not in range(1, 7):
                raise DatasetError(f"{where}: a {kind} correction needs a value 1-6")
            if kind in ("missing", "ignore") and size <= 0:
                raise DatasetError(f"{where}: a {kind} correction needs the die's side")
            by_image.setdefault(image, []).append(
                LabelCorrection(folder, image, kind, x, y, size, die_value, reason, number)
            )
    return {image: tuple(items) for image, items in by_image.items()}


def corrected(
    labelled: LabelledImage, corrections: dict[str, tuple[LabelCorrection, ...]]
) -> tuple[LabelledImage | None, tuple[tuple[float, float, float], ...]]:
    """``labelled`` with its corrections applied (None when its photo is dropped) and its
    ignore regions as (cx, cy, side) rows. A correction applies to a photo of the same
    file name inside a folder of the correction's data folder."""
    mine = [
        c
        for c in corrections.get(labelled.path.name, ())
        if c.folder in labelled.path.parts or c.folder == labelled.folder
    ]
    if any(c.kind == "drop" for c in mine):
        return None, ()
    dice = list(labelled.dice)
    ignore: list[tuple[float, float, float]] = []
    for c in mine:
        if c.kind == "value" and c.value is not None:
            near = [
                (math.hypot(d.cx - c.cx, d.cy - c.cy), k)
                for k, d in enumerate(dice)
                if math.hypot(d.cx - c.cx, d.cy - c.cy) <= 0.6 * d.side
            ]
            if not near:
                raise DatasetError(
                    f"correction {c.line - 1}: no labelled die near ({c.cx:.0f}, {c.cy:.0f}) "
                    f"in {labelled.path.name}"
                )
            k = min(near)[1]
            dice[k] = dataclasses.replace(dice[k], value=c.value)
        elif c.kind == "missing":
            dice.append(LabelledDie(c.cx, c.cy, c.side, c.side, int(c.value or 0)))
        elif c.kind == "ignore":
            ignore.append((c.cx, c.cy, c.side))
    return dataclasses.replace(labelled, dice=tuple(dice)), tuple(ignore)
