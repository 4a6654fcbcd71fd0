"""Training samples for both models, made with numpy/OpenCV from the real training part
(companion.vision.datasets, never the validation part) and synthetic scenes from
companion.synth."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.classifier import crop_square
from companion.vision.datasets import LabelledDie, LabelledImage

from .augment import camera_look, photometric

if TYPE_CHECKING:
    from companion.synth import SceneKeywords

logger = logging.getLogger(__name__)

# Classifier context crops are stored at CONTEXT x the die's side so that rotation, scale
# and shift augmentation never runs out of pixels.
CONTEXT = 2.2
BANK_SIZE = 88
# Folders photographed obliquely: side faces show below the top face, so crops keep
# "up" roughly up (the runtime turns a crop by at most 45 deg, the box angle mod 90).
OBLIQUE_FOLDERS = ("epanemu-dice3",)
OBLIQUE_ROTATION = 45.0
# An oblique photo's labelled box holds the top face and the side faces below it; each
# such die also gives a crop centred on its top face: OBLIQUE_TOP_SHIFT x the box height
# up, OBLIQUE_TOP_SIDE x its side (side-face pips were the classifier's errors there).
OBLIQUE_TOP_SHIFT = 0.15
OBLIQUE_TOP_SIDE = 0.85
UNREADABLE = 6  # class index of "unreadable"
# share of finder windows placed around a mined hard negative (when the scene has any)
HARD_NEGATIVE_CHANCE = 0.3


@dataclass
class Scene:
    """One training picture: encoded image bytes plus dice as rows of
    (cx, cy, side, angle_degrees, has_angle), and for synthetic scenes each die's value
    (None = unreadable)."""

    encoded: np.ndarray
    dice: np.ndarray
    source: str
    values: list[int | None] = field(default_factory=list)
    # hard negatives: rows of (cx, cy, side) where a previous finder saw a die that is not
    # there (e.g. byler's holder-bar knobs); windows are sometimes placed around them
    hard: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))

    def image(self) -> np.ndarray:
        image = cv2.imdecode(self.encoded, cv2.IMREAD_COLOR)
        assert image is not None
        return image


def scene_from_labelled(labelled: LabelledImage, hard: np.ndarray | None = None) -> Scene:
    encoded = np.fromfile(str(labelled.path), dtype=np.uint8)
    rows = [(d.cx, d.cy, d.side, 0.0, 0.0) for d in labelled.dice]
    scene = Scene(encoded, np.asarray(rows, np.float32), labelled.folder)
    if hard is not None and len(hard):
        scene.hard = np.asarray(hard, np.float32).reshape(-1, 3)
    return scene


# one die in ten of see-through plastic, common in sets sold in shops (train.py
# --translucent; from 2026-11-30: models 1.3.0 and before never saw a translucent die)
TRANSLUCENT = 0.1


def render_scenes(
    count: int,
    seed: int,
    translucent: float = TRANSLUCENT,
    width: int = 512,
    height: int = 384,
    options: SceneKeywords | None = None,
    fancy: float = 0.0,
) -> list[Scene]:
    """Synthetic scenes (top-face centre, side and angle are exact, so has_angle = 1).
    `options` are more of companion.synth's scene options (SceneKeywords, for every
    scene): the webcam conditions are chances per scene, 0 by default (greyscale,
    infrared, fisheye, vignetting, container, strong_glare, pile), `sizes` the range of
    the dice's sizes (companion/synth/options.py says what each does). `fancy` is the
    share of scenes in the fancy style (companion/synth/fancy.py; train.py --fancy):
    their things that are not d6 dice (other polyhedral dice, tokens, coins) become the
    scene's hard negatives, rows of (cx, cy, side), never dice. With `fancy` 0 the
    scenes are byte for byte those from before it (tests/synth/test_default_renders.py)."""
    from companion.synth import render_scene_and_others

    chosen: SceneKeywords = {"translucent": translucent, **(options or {})}
    if fancy > 0:
        chosen["fancy"] = fancy
    rng = np.random.default_rng(seed)
    scenes = []
    for _ in range(count):
        image, dice, others = render_scene_and_others(rng, width, height, **chosen)
        rows = [(d.cx, d.cy, d.side, d.angle, 1.0) for d in dice]
        ok, encoded = cv2.imencode(".png", image)
        assert ok
        rows_array = np.asarray(rows, np.float32).reshape(-1, 5)
        scene = Scene(encoded, rows_array, "synthetic", [d.value for d in dice])
        if others:
            scene.hard = np.asarray([(o.cx, o.cy, o.side) for o in others], np.float32)
        scenes.append(scene)
    return scenes


# ----------------------------------------------------------------------------------------
# Classifier bank: upright context crops with labels 0..5 (value - 1) or 6 (unreadable)


@dataclass
class CropBank:
    crops: np.ndarray  # N x BANK_SIZE x BANK_SIZE x 3 uint8, die centred, side = BANK/CONTEXT
    labels: np.ndarray  # N int64
    # N floats: how far a crop may be turned. Real top-down photos: any angle (180);
    # real oblique photos: +-45 deg, since the top face is the upper one in the picture;
    # synthetic crops are already upright: small errors plus quarter turns (-1).
    max_rotation: np.ndarray
    # N bools: a real photo's die or a hard negative (not synthetic, not a random
    # background patch): what `real=N` shows N times per epoch
    real_die: np.ndarray | None = None
    # N strings: the real folder a crop came from ("" for synthetic crops and background
    # patches): what a stage's per-folder repeat (`rune55-webcams=1`) weighs
    folder: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.labels)


def _background_patches(
    image: np.ndarray, dice: np.ndarray, rng: np.random.Generator, count: int
) -> list[np.ndarray]:
    """Context crops of places with no die: the "unreadable" class must include table,
    clutter and board print, at die-like sizes."""
    h, w = image.shape[:2]
    sides = dice[:, 2] if len(dice) else np.array([40.0])
    patches = []
    for _ in range(count * 4):
        side = float(np.median(sides) * rng.uniform(0.7, 1.4))
        cx, cy = rng.uniform(side / 2, w - side / 2), rng.uniform(side / 2, h - side / 2)
        if len(dice) and np.any(
            np.hypot(dice[:, 0] - cx, dice[:, 1] - cy) < 0.8 * (dice[:, 2] + side)
        ):
            continue
        patches.append(crop_square(image, cx, cy, side * CONTEXT, BANK_SIZE, 0.0))
        if len(patches) >= count:
            break
    return patches


def build_crop_bank(
    real: list[LabelledImage],
    synthetic: list[Scene],
    seed: int,
    hard: dict[Path, np.ndarray] | None = None,
    single_dice: list[LabelledImage] | None = None,
) -> CropBank:
    """Context crops of every labelled and rendered die (and of oblique dice's top faces),
    background patches and, when given, ``hard`` negatives ((cx, cy, side) rows per
    training photo: places a finder took for dice) as "unreadable": the classifier is the
    second opinion on weak finder peaks, so it must know the board print and table marks
    the finder falls for. ``single_dice``: single-die crops (tomitomi's), for the
    classifier only, turned freely (a top-down camera)."""
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    labels: list[int] = []
    rotation: list[float] = []
    real_die: list[bool] = []
    folder: list[str] = []
    for labelled in real:
        image = labelled.load()
        oblique = labelled.folder in OBLIQUE_FOLDERS
        turn = OBLIQUE_ROTATION if oblique else 180.0
        for die in labelled.dice:
            crops.append(crop_square(image, die.cx, die.cy, die.side * CONTEXT, BANK_SIZE))
            labels.append(die.value - 1)
            rotation.append(turn)
            real_die.append(True)
            folder.append(labelled.folder)
            if oblique:
                cx, cy, side = top_face(die)
                crops.append(crop_square(image, cx, cy, side * CONTEXT, BANK_SIZE))
                labels.append(die.value - 1)
                rotation.append(turn)
                real_die.append(True)
                folder.append(labelled.folder)
        rows = np.asarray([(d.cx, d.cy, d.side) for d in labelled.dice], np.float32)
        for patch in _background_patches(image, rows, rng, 1):
            crops.append(patch)
            labels.append(UNREADABLE)
            rotation.append(180.0)
            real_die.append(False)
            folder.append("")
        for cx, cy, side in (hard or {}).get(labelled.path, ()):
            crops.append(crop_square(image, cx, cy, side * CONTEXT, BANK_SIZE, 0.0))
            labels.append(UNREADABLE)
            rotation.append(180.0)
            real_die.append(True)
            folder.append(labelled.folder)
    for labelled in single_dice or ():
        image = labelled.load()
        for die in labelled.dice:
            crops.append(crop_square(image, die.cx, die.cy, die.side * CONTEXT, BANK_SIZE))
            labels.append(die.value - 1)
            rotation.append(180.0)
            real_die.append(True)
            folder.append(labelled.folder)
    for scene in synthetic:
        image = scene.image()
        for row, value in zip(scene.dice, scene.values, strict=True):
            cx, cy, side, angle, _ = (float(v) for v in row)
            crops.append(crop_square(image, cx, cy, side * CONTEXT, BANK_SIZE, angle))
            labels.append(UNREADABLE if value is None else value - 1)
            rotation.append(-1.0)
        for patch in _background_patches(image, scene.dice, rng, 2):
            crops.append(patch)
            labels.append(UNREADABLE)
            rotation.append(180.0)
        # the fancy style's things that are not d6 dice (none in the default style)
        for cx, cy, side in scene.hard:
            crops.append(crop_square(image, cx, cy, side * CONTEXT, BANK_SIZE, 0.0))
            labels.append(UNREADABLE)
            rotation.append(180.0)
    real_die += [False] * (len(labels) - len(real_die))  # the synthetic crops
    folder += [""] * (len(labels) - len(folder))
    bank = CropBank(
        np.stack(crops),
        np.asarray(labels, np.int64),
        np.asarray(rotation, np.float32),
        np.asarray(real_die, bool),
        np.asarray(folder, object),
    )
    counts = np.bincount(bank.labels, minlength=7)
    logger.info("crop bank: %d crops, per class %s", len(bank), counts.tolist())
    return bank


def top_face(die: LabelledDie) -> tuple[float, float, float]:
    """(cx, cy, side) of an oblique die's top face, estimated from its labelled box (the
    camera looks from above and in front, so the top face is the upper part of the box)."""
    return die.cx, die.cy - OBLIQUE_TOP_SHIFT * die.h, die.side * OBLIQUE_TOP_SIDE


# a small die's side in the frame, px: the runtime blows a die this small up to the
# classifier's input (rune55-webcams' heaps: 10-25 px dice in 640 px frames)
SMALL_DIE_SIDES = (8.0, 26.0)


def small_die_look(crop: np.ndarray, margin: float, rng: np.random.Generator) -> np.ndarray:
    """``crop`` as the runtime would cut it from a frame where the die is only 8-26 px:
    the die's pixels (area-averaged down to that side) blown up again bilinearly, as
    crop_square blows up a small die's pixels to the classifier's input. The bank's crops
    are cut from dice of 40 px and more in the rendered scenes, sharper than any small
    die ever reaches the classifier."""
    size = crop.shape[0]
    side = math.exp(rng.uniform(math.log(SMALL_DIE_SIDES[0]), math.log(SMALL_DIE_SIDES[1])))
    shrunk = max(4, round(side * margin))  # the crop is margin x the die's side
    if shrunk >= size:
        return crop
    small = cv2.resize(crop, (shrunk, shrunk), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (size, size), interpolation=cv2.INTER_LINEAR)


def classifier_sample(
    bank: CropBank,
    index: int,
    size: int,
    margin: float,
    rng: np.random.Generator,
    small_share: float = 0.0,
) -> tuple[np.ndarray, int]:
    """One augmented size x size crop framed like the runtime frames a found die
    (square of ``margin`` x side around the box centre, turned by the box angle), with
    the finder's typical errors (centre, side, angle) and photometric changes; some
    positives are shifted far off centre and relabelled unreadable (a partial die), and
    ``small_share`` of them get a small die's look (small_die_look)."""
    source = bank.crops[index]
    label = int(bank.labels[index])
    die_px = BANK_SIZE / CONTEXT
    turn = float(bank.max_rotation[index])
    if turn < 0:
        angle = rng.normal(0, 8) + 90 * int(rng.integers(0, 4))
    else:
        angle = rng.uniform(-turn, turn)
    side = die_px * margin * math.exp(rng.normal(0, 0.12))
    shift = rng.normal(0, 0.06, size=2) * die_px
    if label != UNREADABLE and rng.random() < 0.06:
        direction = rng.uniform(0, 2 * math.pi)
        shift = (
            np.array([math.cos(direction), math.sin(direction)]) * die_px * rng.uniform(0.65, 0.9)
        )
        label = UNREADABLE
    centre = BANK_SIZE / 2
    crop = crop_square(source, centre + shift[0], centre + shift[1], side, size, angle)
    # drawn only when asked for, so a stage without it makes the same crops as before
    if small_share > 0 and rng.random() < small_share:
        crop = small_die_look(crop, margin, rng)
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
    if rng.random() < 0.1:
        crop = 255 - crop  # light pips on dark bodies and the reverse
    crop = camera_look(np.ascontiguousarray(crop), rng)
    crop = photometric(crop, rng, strength=0.5, blur_chance=0.5)
    return crop, label


# ----------------------------------------------------------------------------------------
# Finder samples: a square window of the picture at a random scale with heat/size/offset/
# rotation targets at stride 4


def finder_sample(
    scene: Scene, size: int, stride: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(BGR window, targets [6, size/stride, size/stride], mask [3, ...]).

    The scale is drawn so the dice are 6-110 px in the network's input, which covers
    20-150 px dice in 640-1920 px frames once the runtime shrinks the long side to 512."""
    image = scene.image()
    dice = scene.dice.copy()
    median_side = float(np.median(dice[:, 2])) if len(dice) else 40.0
    target_side = math.exp(rng.uniform(math.log(6), math.log(110)))
    scale = float(np.clip(target_side / median_side, 0.08, 4.0))
    h, w = image.shape[:2]
    if scale < 1:  # shrink the whole picture properly (area averaging, no aliasing)
        new_w, new_h = max(8, int(round(w * scale))), max(8, int(round(h * scale)))
        image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA)
        scale_x, scale_y, zoom = new_w / w, new_h / h, 1.0
    else:  # enlarge only the window's pixels, inside warpAffine below
        new_w, new_h = int(round(w * scale)), int(round(h * scale))
        scale_x = scale_y = zoom = scale
    dice[:, 0] *= scale_x
    dice[:, 1] *= scale_y
    dice[:, 2] *= math.sqrt(scale_x * scale_y)

    # window origin: sometimes around a hard negative, usually around a die, else anywhere
    if len(scene.hard) and rng.random() < HARD_NEGATIVE_CHANCE:
        pick = scene.hard[int(rng.integers(len(scene.hard)))] * np.array(
            [scale_x, scale_y, 1.0], np.float32
        )
        ox = pick[0] - rng.uniform(0.15, 0.85) * size
        oy = pick[1] - rng.uniform(0.15, 0.85) * size
    elif len(dice) and rng.random() < 0.8:
        pick = dice[int(rng.integers(len(dice)))]
        ox = pick[0] - rng.uniform(0.15, 0.85) * size
        oy = pick[1] - rng.uniform(0.15, 0.85) * size
    else:
        ox = rng.uniform(min(0, new_w - size), max(0, new_w - size))
        oy = rng.uniform(min(0, new_h - size), max(0, new_h - size))
    ox, oy = int(round(ox)), int(round(oy))
    fill = image[::16, ::16].reshape(-1, 3).mean(axis=0) + rng.normal(0, 20, 3)
    matrix = np.array([[zoom, 0, -ox], [0, zoom, -oy]], np.float32)
    window = cv2.warpAffine(
        image,
        matrix,
        (size, size),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=tuple(float(v) for v in np.clip(fill, 0, 255)),
    )
    dice[:, 0] -= ox
    dice[:, 1] -= oy

    # flips and quarter turns: a square die is unchanged, its angle (mod 90) mirrors
    if rng.random() < 0.5:
        window = window[:, ::-1]
        dice[:, 0] = size - dice[:, 0]
        dice[:, 3] = -dice[:, 3]
    if rng.random() < 0.5:
        window = window[::-1]
        dice[:, 1] = size - dice[:, 1]
        dice[:, 3] = -dice[:, 3]
    window = photometric(np.ascontiguousarray(window), rng)

    cells = size // stride
    targets = np.zeros((6, cells, cells), np.float32)
    mask = np.zeros((3, cells, cells), np.float32)  # size+offset, rotation, (unused)
    for cx, cy, side, angle, has_angle in dice:
        # a die whose centre is outside the window is not a target; one cut by the window
        # edge but centred inside still is (the runtime sees dice at the frame edge)
        if not (0 <= cx < size and 0 <= cy < size) or side < 2:
            continue
        gx, gy = cx / stride, cy / stride
        sigma = max(0.6, side / stride / 6)
        reach = int(math.ceil(3 * sigma))
        x0, x1 = max(0, int(gx) - reach), min(cells, int(gx) + reach + 1)
        y0, y1 = max(0, int(gy) - reach), min(cells, int(gy) + reach + 1)
        xs = np.arange(x0, x1, dtype=np.float32)[None, :]
        ys = np.arange(y0, y1, dtype=np.float32)[:, None]
        blob = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * sigma**2))
        np.maximum(targets[0, y0:y1, x0:x1], blob, out=targets[0, y0:y1, x0:x1])
        ix, iy = min(int(gx), cells - 1), min(int(gy), cells - 1)
        targets[0, iy, ix] = 1.0
        targets[1, iy, ix] = math.log(side)
        targets[2, iy, ix] = gx - ix
        targets[3, iy, ix] = gy - iy
        mask[0, iy, ix] = 1.0
        if has_angle:
            targets[4, iy, ix] = math.cos(math.radians(4 * angle))
            targets[5, iy, ix] = math.sin(math.radians(4 * angle))
            mask[1, iy, ix] = 1.0
    return window, targets, mask
