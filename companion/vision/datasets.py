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

Three more folders (see ../shared/data/README.md):

- ``tomitomi-dish-crops``: single-die greyscale crops, for the pip classifier only (never the
  finder: a crop is not a scene). Its label box is the whole 128 px crop, but the die fills
  only part of it, so a crop's die is given a side of ``CROP_DIE_SHARE`` x the crop. 219
  crops have a near-twin somewhere else in the folder, so it is split by blocks of file
  numbers, and a crop with a near-twin in another part moves to the training part
  together with its twin (`near_twin_groups`).
- ``skovy-catan-webcam`` and ``chase-casino-crops``: **measure only**, never trained or
  tuned on (`load_measure_only`; `load_split` never reads them). chase-casino-crops are
  single-die crops too (the box is the whole crop, the die fills it).

The calibration part (`DatasetSplit.calibration`) is held back from the training folders
for what must be fitted on photos the models never trained on but that must not be the
validation part: the confidence map, the auto-apply threshold and the finder's peak rule.
New models never train on it (models trained before 2026-12 did: see models/README.md):

- ``byler-d6-train``: every 5th image by sorted name from index 1 (1, 6, 11, ...);
- ``epanemu-dice3``: every 8th photo of ``train/`` (by sorted photo name, from index 3) with
  all of its augmented copies (``NAME_jpg.rf.HASH.jpg`` are copies of one photo);
- ``matteop65-d6``: the session of ``train/`` whose frames are named ``six_*`` (a whole
  webcam session, so no neighbouring frame is left in training; it holds every value);
- ``tomitomi-dish-crops``: blocks 3 and 11 of each value (blocks of 25 file numbers), and
  blocks 7 and 15 are its validation part.

``rune55-webcams`` (greyscale webcams: white boards and paper from above, a fisheye
dice-tower camera) is split by groups of similar photos, never by single photo
(`rune55_group`): Roboflow's copies of one photo share its name (``NAME_jpg.rf.HASH``),
so they are one group; the tower camera's frames are numbered (``00117``) and a block of
ten neighbouring numbers is one group, as are the ``IMG_0654``-style phone sequences. Of
the groups sorted by key, every 5th from index 4 is validation and every 5th from index 1
the calibration part; the rest is trained on.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

logger = logging.getLogger(__name__)

BYLER = "byler-d6-train"
EPANEMU = "epanemu-dice3"
MATTEO = "matteop65-d6"
RUNE55 = "rune55-webcams"
FOLDERS = (BYLER, EPANEMU, MATTEO, RUNE55)  # the labelled scene folders the models train on
TOMITOMI = "tomitomi-dish-crops"  # single-die crops: the classifier trains on them
SKOVY = "skovy-catan-webcam"  # measure only
CHASE = "chase-casino-crops"  # measure only: single-die crops
MEASURE_ONLY = (SKOVY, CHASE)
# Folders of single-die crops, whose label box is the whole crop: the die's side as a
# share of the crop's side (tomitomi's die fills 40-65 % of its crop turned, about 0.38 of
# it as a side; a chase crop is cut tight around its die).
CROP_DIE_SHARE = {TOMITOMI: 0.38, CHASE: 1.0}
CROP_BOX_TOLERANCE = 1e-3  # how far "cls 0.5 0.5 1 1" may be from exact in a crop label

# Every BYLER_VALIDATION_EVERY-th byler image (by sorted name) is held out.
BYLER_VALIDATION_EVERY = 5
BYLER_CALIBRATION_OFFSET = 1  # ... and every 5th from index 1 is the calibration part
EPANEMU_CALIBRATION_EVERY, EPANEMU_CALIBRATION_OFFSET = 8, 3  # photos of train/
EPANEMU_COPY_MARK = "_jpg.rf."  # NAME_jpg.rf.HASH.jpg: an augmented copy of photo NAME
MATTEO_CALIBRATION_SESSION = "six"  # train/six_*.jpg
RUNE55_EVERY, RUNE55_VALIDATION_OFFSET, RUNE55_CALIBRATION_OFFSET = 5, 4, 1  # of its groups
RUNE55_BLOCK = 10  # neighbouring frame numbers of one camera: one group
TOMITOMI_BLOCK = 25  # file numbers per block
TOMITOMI_CALIBRATION_BLOCKS = (3, 11)
TOMITOMI_VALIDATION_BLOCKS = (7, 15)
NEAR_TWIN_BITS = 10  # dHash (16 x 16 gradients) distance of a near-twin, as the README's
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
    """The fixed split: ``train`` (scenes: both models) and ``train_crops`` (single-die
    crops: the classifier only) may be trained on; ``calibration`` (per folder) is for
    fitting the confidence map and choosing thresholds, never trained on by new models;
    ``validation`` (per folder) is never trained on nor used to tune anything."""

    train: tuple[LabelledImage, ...]
    validation: dict[str, tuple[LabelledImage, ...]]
    calibration: dict[str, tuple[LabelledImage, ...]] = dataclasses.field(default_factory=dict)
    train_crops: tuple[LabelledImage, ...] = ()

    def all_validation(self) -> tuple[LabelledImage, ...]:
        return tuple(image for images in self.validation.values() for image in images)

    def all_calibration(self) -> tuple[LabelledImage, ...]:
        return tuple(image for images in self.calibration.values() for image in images)

    def scene_validation(self) -> dict[str, tuple[LabelledImage, ...]]:
        """The validation parts of the scene folders (those a finder is measured on)."""
        return {name: images for name, images in self.validation.items() if name in FOLDERS}


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


def is_crop_folder(folder: Path) -> bool:
    """Whether a folder holds single-die crops whose label box is the whole crop
    (tomitomi-dish-crops, chase-casino-crops, named in its path)."""
    return crop_folder_name(folder) is not None


def crop_folder_name(folder: Path) -> str | None:
    parts = folder.resolve().parts
    return next((name for name in CROP_DIE_SHARE if name in parts), None)


def read_crop_folder(folder: Path, name: str | None = None) -> list[LabelledImage]:
    """Single-die crops (images/ and labels/ inside): each label file must hold one line
    ``cls 0.5 0.5 1 1``, the box being the whole crop; the die is centred, its side
    ``CROP_DIE_SHARE`` x the crop's (1.0 for an unknown folder). Raises DatasetError naming
    the file whose label breaks that convention."""
    name = name or crop_folder_name(folder) or folder.name
    share = CROP_DIE_SHARE.get(name, 1.0)
    images = read_yolo_folder(folder / "images", folder / "labels", name)
    result = []
    for labelled in images:
        label = (folder / "labels" / labelled.path.stem).with_suffix(".txt")
        if len(labelled.dice) != 1:
            raise DatasetError(f"{label}: a crop's label holds one die, not {len(labelled.dice)}")
        (die,) = labelled.dice
        width, height = labelled.width, labelled.height
        whole = (die.cx / width, die.cy / height, die.w / width, die.h / height)
        if any(
            abs(a - b) > CROP_BOX_TOLERANCE for a, b in zip(whole, (0.5, 0.5, 1, 1), strict=True)
        ):
            raise DatasetError(f"{label}: a crop's box must be the whole crop (0.5 0.5 1 1)")
        centred = LabelledDie(width / 2, height / 2, width * share, height * share, die.value)
        result.append(dataclasses.replace(labelled, dice=(centred,)))
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
    if is_crop_folder(folder):
        return read_crop_folder(folder)
    if (folder / "images").is_dir():
        images, labels = folder / "images", folder / "labels"
    else:
        images = labels = folder
    return read_yolo_folder(images, labels, folder.name, pip_pattern_boxes=pip_pattern_boxes)


def every_nth(images: Sequence[LabelledImage], every: int, offset: int) -> list[LabelledImage]:
    """Images offset, offset + every, offset + 2 x every ... of a sorted folder (byler's
    validation fifth: every 5, offset 4)."""
    return [image for k, image in enumerate(images) if k % every == offset % every]


def named_like(images: Sequence[LabelledImage], pattern: str | None) -> list[LabelledImage]:
    """The images whose file name matches the regular expression (all when None): one
    camera of a folder that holds several, e.g. rune55-webcams' dice tower '^[0-9]+_jpg'."""
    if pattern is None:
        return list(images)
    return [image for image in images if re.search(pattern, image.path.name)]


def bench_photos(
    folder: Path,
    part: str | None = None,
    names: str | None = None,
    pip_pattern_boxes: bool | None = None,
) -> list[LabelledImage]:
    """A folder's labelled images as the benches' FOLDER [--part P] [--names REGEX] take
    them: with `part` ("calibration", "validation") only that part of the fixed split of
    the folder's source (sorted by file name: e.g. rune55-webcams' validation groups,
    never trained on), else the whole folder (`read_labelled_folder`); then `named_like`."""
    if part:
        chosen = getattr(load_split(folder.parent), part)[folder.name]
        images = sorted(chosen, key=lambda image: image.path.name)
    else:
        images = read_labelled_folder(folder, pip_pattern_boxes)
    return named_like(images, names)


def load_split(data_root: Path | None = None) -> DatasetSplit:
    """The documented train / calibration / validation split of every training folder
    under ``data_root`` (the measure-only folders are not read: `load_measure_only`).
    Read once per folder and process (it decodes every image for its size)."""
    root = data_root if data_root is not None else default_data_root()
    return _load_split(root.resolve())


@functools.lru_cache(maxsize=4)
def _load_split(root: Path) -> DatasetSplit:
    if not root.is_dir():
        raise DatasetError(f"{root}: no data folder (expected ../shared/data)")
    parts = [_byler_parts(root), _epanemu_parts(root), _matteo_parts(root)]
    parts.append(_rune55_parts(root) if (root / RUNE55).is_dir() else ([], [], []))
    if (root / TOMITOMI).is_dir():
        parts.append(_tomitomi_parts(root))
    train: list[LabelledImage] = []
    crops: list[LabelledImage] = []
    calibration: dict[str, tuple[LabelledImage, ...]] = {}
    validation: dict[str, tuple[LabelledImage, ...]] = {}
    for name, (trained, held_back, valid) in zip((*FOLDERS, TOMITOMI), parts, strict=False):
        if not (trained or held_back or valid) and name == RUNE55:
            continue  # a data root without the folder (older copies of ../shared/data)
        (crops if name in CROP_DIE_SHARE else train).extend(trained)
        calibration[name] = tuple(held_back)
        validation[name] = tuple(valid)
    return DatasetSplit(tuple(train), validation, calibration, tuple(crops))


Parts = tuple[list[LabelledImage], list[LabelledImage], list[LabelledImage]]


def _byler_parts(root: Path) -> Parts:
    byler = read_yolo_folder(root / BYLER / "images", root / BYLER / "labels", BYLER)
    valid = every_nth(byler, BYLER_VALIDATION_EVERY, offset=BYLER_VALIDATION_EVERY - 1)
    held_back = every_nth(byler, BYLER_VALIDATION_EVERY, offset=BYLER_CALIBRATION_OFFSET)
    trained = [im for im in byler if im not in valid and im not in held_back]
    return trained, held_back, valid


def epanemu_photo(path: Path) -> str:
    """The photo an epanemu image is a copy of: NAME of NAME_jpg.rf.HASH.jpg."""
    return path.name.split(EPANEMU_COPY_MARK)[0]


def _epanemu_parts(root: Path) -> Parts:
    folder = root / EPANEMU
    train = read_yolo_folder(folder / "train/images", folder / "train/labels", EPANEMU)
    valid = read_yolo_folder(folder / "valid/images", folder / "valid/labels", EPANEMU)
    photos = sorted({epanemu_photo(im.path) for im in train})
    chosen = set(every_nth_name(photos, EPANEMU_CALIBRATION_EVERY, EPANEMU_CALIBRATION_OFFSET))
    held_back = [im for im in train if epanemu_photo(im.path) in chosen]
    return [im for im in train if epanemu_photo(im.path) not in chosen], held_back, valid


def every_nth_name(names: Sequence[str], every: int, offset: int) -> list[str]:
    return [name for k, name in enumerate(names) if k % every == offset % every]


def _matteo_parts(root: Path) -> Parts:
    folder = root / MATTEO
    train = read_yolo_folder(folder / "train", folder / "train", MATTEO, pip_pattern_boxes=True)
    valid = read_yolo_folder(folder / "valid", folder / "valid", MATTEO, pip_pattern_boxes=True)
    session = f"{MATTEO_CALIBRATION_SESSION}_"
    held_back = [im for im in train if im.path.name.startswith(session)]
    return [im for im in train if not im.path.name.startswith(session)], held_back, valid


def rune55_group(path: Path) -> str:
    """The group of similar photos a rune55 image belongs to: the photo's name before
    Roboflow's ``_jpg.rf.HASH`` (its copies), with a trailing frame number taken in blocks
    of ``RUNE55_BLOCK`` (neighbouring frames of one camera look alike)."""
    name = re.split(r"_(?:jpe?g|png)\.rf\.", path.name)[0]
    name = re.sub(r"_(?:jpe?g|png)$", "", name)  # IMG_0662_jpeg_jpg.rf.HASH
    numbered = re.fullmatch(r"([^\d]*_)?(\d+)", name)  # 00117, IMG_0662; not random ids
    if numbered is None:
        return name
    return f"{numbered.group(1) or ''}{int(numbered.group(2)) // RUNE55_BLOCK:05d}"


def _rune55_parts(root: Path) -> Parts:
    images = read_yolo_folder(root / RUNE55 / "images", root / RUNE55 / "labels", RUNE55)
    groups = sorted({rune55_group(im.path) for im in images})
    valid = set(every_nth_name(groups, RUNE55_EVERY, RUNE55_VALIDATION_OFFSET))
    held_back = set(every_nth_name(groups, RUNE55_EVERY, RUNE55_CALIBRATION_OFFSET))
    part = [
        2 * (rune55_group(im.path) in valid) + (rune55_group(im.path) in held_back) for im in images
    ]
    return tuple(  # type: ignore[return-value]
        [im for im, p in zip(images, part, strict=True) if p == wanted] for wanted in (0, 1, 2)
    )


def tomitomi_block(path: Path) -> int:
    """The block of a tomitomi crop: its file number (p<pips>_<number>.jpg) // 25."""
    try:
        return int(path.stem.split("_")[1]) // TOMITOMI_BLOCK
    except (IndexError, ValueError) as exc:
        raise DatasetError(f"{path}: not named p<pips>_<number>") from exc


def _tomitomi_parts(root: Path) -> Parts:
    crops = read_crop_folder(root / TOMITOMI, TOMITOMI)
    part = []
    for labelled in crops:
        block = tomitomi_block(labelled.path) % 16
        part.append(
            1 if block in TOMITOMI_CALIBRATION_BLOCKS else 2 * (block in TOMITOMI_VALIDATION_BLOCKS)
        )
    # near-twins in different parts would leak: their whole group trains
    for group in near_twin_groups([im.path for im in crops]):
        if len({part[k] for k in group}) > 1:
            for k in group:
                part[k] = 0
    return tuple(  # type: ignore[return-value]
        [im for im, p in zip(crops, part, strict=True) if p == wanted] for wanted in (0, 1, 2)
    )


def dhash(image_grey: np.ndarray) -> np.ndarray:
    """A 256-bit difference hash: the signs of horizontal gradients of the picture shrunk
    to 17 x 16, packed into 32 bytes."""
    small = cv2.resize(image_grey, (17, 16), interpolation=cv2.INTER_AREA).astype(np.int16)
    return np.packbits(small[:, 1:] > small[:, :-1])


def near_twin_groups(paths: Sequence[Path], bits: int = NEAR_TWIN_BITS) -> list[list[int]]:
    """Groups (indices into ``paths``, two or more each) of pictures joined by chains of
    near-twins: dHash distance <= ``bits``."""
    hashes = []
    for path in paths:
        grey = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
        if grey is None:
            raise DatasetError(f"{path}: not a readable image")
        hashes.append(dhash(grey))
    packed = np.stack(hashes) if hashes else np.zeros((0, 32), np.uint8)
    ones = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)
    parent = list(range(len(paths)))

    def root_of(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k in range(len(paths)):
        distance = ones[packed[k + 1 :] ^ packed[k]].sum(axis=1)
        for j in np.flatnonzero(distance <= bits) + k + 1:
            parent[root_of(int(j))] = root_of(k)
    groups: dict[int, list[int]] = {}
    for k in range(len(paths)):
        groups.setdefault(root_of(k), []).append(k)
    return [group for group in groups.values() if len(group) > 1]


def load_measure_only(data_root: Path | None = None) -> dict[str, tuple[LabelledImage, ...]]:
    """The measure-only folders (never trained or tuned on: report on them only), each as
    its labels say: skovy-catan-webcam's scenes, chase-casino-crops' single-die crops."""
    root = data_root if data_root is not None else default_data_root()
    skovy = read_yolo_folder(root / SKOVY / "images", root / SKOVY / "labels", SKOVY)
    return {SKOVY: tuple(skovy), CHASE: tuple(read_crop_folder(root / CHASE, CHASE))}


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
