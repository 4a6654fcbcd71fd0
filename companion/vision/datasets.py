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
"""

from __future__ import annotations

import logging
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


def load_split(data_root: Path | None = None) -> DatasetSplit:
    """The documented train/validation split of every folder under ``data_root``."""
    root = data_root if data_root is not None else default_data_root()
    if not root.is_dir():
        raise DatasetError(f"{root}: no data folder (expected ../shared/data)")

    byler = read_yolo_folder(root / BYLER / "images", root / BYLER / "labels", BYLER)
    byler_train = [im for i, im in enumerate(byler) if i % BYLER_VALIDATION_EVERY != 4]
    byler_valid = [im for i, im in enumerate(byler) if i % BYLER_VALIDATION_EVERY == 4]

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
