"""The training set in one file, so that a long run can move to a machine with a GPU and
its ONNX files come back here to be evaluated (models/train.py --pack / --from-pack).

A pack is a zip file (stored, not compressed again) of at most about 50 MB:

- ``pack.json``: the format, when and from what it was made, every training image with its
  folder, part (``train``: scenes for both models; ``train_crops``: single-die crops for
  the classifier only), size and labelled dice (cx, cy, w, h, value in pixels, exactly as
  companion.vision.datasets read them), and the synthetic scenes as their recipe: count,
  seed, translucent share and the sha256 of the first scene rendered, so that a machine
  whose renderer draws other scenes from the same seed is told so;
- ``images/<folder>/<n>.webp`` (scene photos, re-encoded: WebP quality 45 changes them by
  about 2.5 grey levels on average (55: 2.3; every 25th training photo, 2026-12-02), well
  under the training's own JPEG 25-90 augmentation, and keeps the pack under 50 MB: with
  rune55-webcams' 944 training photos quality 55 made 56.8 MB, epanemu's 756 busy
  photos alone 34 MB) and ``images/<folder>/<n>.<ext>`` (single-die crops, their bytes as
  they are, 8.1 MB);
- ``validation_crops.webp``: the validation part's labelled dice as 48 x 48 crops, 40 to a
  row (labels in pack.json), for the per-epoch accuracy in the log. The validation and
  calibration photos themselves are not
  packed: choosing the peak rule, fitting the confidence map and measuring happen here
  (`train.py --only evaluate`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.datasets import DatasetError, LabelledDie, LabelledImage

logger = logging.getLogger(__name__)

PACK_FORMAT = "table-companion-training-pack/1"
WEBP_QUALITY = 45
MOSAIC_COLUMNS = 40
MOSAIC_QUALITY = 95
PACK_LIMIT_BYTES = 55_000_000  # "at most about 50 MB": refuse to write well over it


@dataclass(frozen=True)
class SyntheticRecipe:
    """How the rendered scenes of the first stage are made again from their seed."""

    count: int
    seed: int
    translucent: float
    first_scene_sha256: str
    # the share of scenes in the fancy style (train.py --fancy; packs from before it: 0)
    fancy: float = 0.0


@dataclass(frozen=True)
class Pack:
    """A pack read back: images extracted under a folder that lives as long as the run."""

    train: tuple[LabelledImage, ...]
    train_crops: tuple[LabelledImage, ...]
    validation_crops: tuple[np.ndarray, np.ndarray]
    synthetic: SyntheticRecipe
    made: dict[str, object]


def _image_entry(labelled: LabelledImage, part: str, file: str) -> dict[str, object]:
    return {
        "file": file,
        "folder": labelled.folder,
        "part": part,
        "source": labelled.path.name,
        "width": labelled.width,
        "height": labelled.height,
        "dice": [[d.cx, d.cy, d.w, d.h, d.value] for d in labelled.dice],
    }


def _encoded(labelled: LabelledImage, single_die: bool) -> tuple[bytes, str]:
    if single_die:
        return labelled.path.read_bytes(), labelled.path.suffix.lower()
    ok, encoded = cv2.imencode(".webp", labelled.load(), [cv2.IMWRITE_WEBP_QUALITY, WEBP_QUALITY])
    if not ok:
        raise DatasetError(f"{labelled.path}: could not be encoded for the pack")
    return encoded.tobytes(), ".webp"


def write_pack(
    path: Path,
    train: Sequence[LabelledImage],
    train_crops: Sequence[LabelledImage],
    validation_crops: tuple[np.ndarray, np.ndarray],
    synthetic: SyntheticRecipe,
    made: dict[str, object],
) -> int:
    """Write the pack; returns its size in bytes. Raises DatasetError over the limit."""
    entries = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as pack:
        for part, images in (("train", train), ("train_crops", train_crops)):
            for k, labelled in enumerate(images):
                data, suffix = _encoded(labelled, part == "train_crops")
                file = f"images/{labelled.folder}/{part}_{k:05d}{suffix}"
                pack.writestr(file, data)
                entries.append(_image_entry(labelled, part, file))
            logger.info("pack: %d %s images", len(images), part)
        pack.writestr("validation_crops.webp", mosaic(validation_crops[0]))
        body = {
            "format": PACK_FORMAT,
            "made": {**made, "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M")},
            "synthetic": synthetic.__dict__,
            "images": entries,
            "validation_labels": [int(v) for v in validation_crops[1]],
            "crop_size": int(validation_crops[0].shape[1]) if len(validation_crops[0]) else 48,
        }
        pack.writestr("pack.json", json.dumps(body, indent=1))
    size = path.stat().st_size
    if size > PACK_LIMIT_BYTES:
        path.unlink()
        raise DatasetError(f"{path}: {size / 1e6:.1f} MB is over the pack's limit")
    return size


def read_pack(path: Path, into: Path | None = None) -> Pack:
    """Read a pack, extracting its images under ``into`` (default: a new temporary folder
    kept until the process ends). Raises DatasetError naming what is wrong."""
    if not zipfile.is_zipfile(path):
        raise DatasetError(f"{path}: not a training pack (not a zip file)")
    folder = into or Path(tempfile.mkdtemp(prefix="training-pack-"))
    with zipfile.ZipFile(path) as pack:
        try:
            body = json.loads(pack.read("pack.json"))
        except (KeyError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{path}: no readable pack.json ({exc})") from exc
        if body.get("format") != PACK_FORMAT:
            raise DatasetError(f"{path}: format {body.get('format')!r}, expected {PACK_FORMAT}")
        pack.extractall(folder)
    labels = np.asarray(body["validation_labels"], np.int64)
    crops = tiles(folder / "validation_crops.webp", len(labels), int(body["crop_size"]))
    validation = (crops, labels)
    parts: dict[str, list[LabelledImage]] = {"train": [], "train_crops": []}
    for entry in body["images"]:
        dice = tuple(LabelledDie(cx, cy, w, h, int(v)) for cx, cy, w, h, v in entry["dice"])
        labelled = LabelledImage(
            folder / entry["file"], entry["folder"], entry["width"], entry["height"], dice
        )
        parts[entry["part"]].append(labelled)
    return Pack(
        tuple(parts["train"]),
        tuple(parts["train_crops"]),
        validation,
        SyntheticRecipe(**body["synthetic"]),
        body["made"],
    )


def mosaic(crops: np.ndarray) -> bytes:
    """N equal square crops as one WebP picture, MOSAIC_COLUMNS to a row."""
    count, size = len(crops), crops.shape[1] if len(crops) else 48
    rows = max(1, -(-count // MOSAIC_COLUMNS))
    picture = np.zeros((rows * size, MOSAIC_COLUMNS * size, 3), np.uint8)
    for k, crop in enumerate(crops):
        y, x = divmod(k, MOSAIC_COLUMNS)
        picture[y * size : (y + 1) * size, x * size : (x + 1) * size] = crop
    ok, encoded = cv2.imencode(".webp", picture, [cv2.IMWRITE_WEBP_QUALITY, MOSAIC_QUALITY])
    if not ok:
        raise DatasetError("the validation crops could not be encoded for the pack")
    return encoded.tobytes()


def tiles(path: Path, count: int, size: int) -> np.ndarray:
    """The ``count`` crops of a `mosaic`."""
    picture = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if picture is None:
        raise DatasetError(f"{path}: the pack's validation crops cannot be read")
    out = np.zeros((count, size, size, 3), np.uint8)
    for k in range(count):
        y, x = divmod(k, MOSAIC_COLUMNS)
        out[k] = picture[y * size : (y + 1) * size, x * size : (x + 1) * size]
    return out


def scene_sha256(encoded_png: np.ndarray) -> str:
    """The sha256 of a rendered scene's PNG bytes (the pack's renderer check)."""
    return hashlib.sha256(encoded_png.tobytes()).hexdigest()
