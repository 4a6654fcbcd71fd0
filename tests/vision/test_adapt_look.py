"""A setup's value head reads only dice that look like the setup's own (companion.vision.
adapt_look): the chroma signature of a crop, the floor of a setup's looks, the likeness
that gates by look (and its saved arrays), and end to end with the real classifier and
store: the fixture table's head reads its own grey dice adapted and leaves the same dice on
a green cloth to the shipped head, across a restart; the no-forgetting check then judges
it only on other tables' dice that look like the setup's."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.adapt import AdaptedClassifier, likeness_from
from companion.vision.adapt_anchor import read_anchor
from companion.vision.adapt_files import load_head
from companion.vision.adapt_fit import Likeness
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner, anchor_for
from companion.vision.adapt_look import (
    LEAST_FLOOR,
    LOOK_SHARE,
    LOOK_SIZE,
    LOOK_WIDTH,
    chroma_signature,
    crop_looks,
    look_floor,
)
from companion.vision.adapt_store import CROP_SIZE, SetupStore
from companion.vision.classifier import PipClassifier, symmetric_views
from companion.vision.types import DieBox

Mosaic = tuple[np.ndarray, list[DieBox], np.ndarray]


@pytest.fixture(scope="module")
def classifier() -> PipClassifier:
    return PipClassifier.load()


def coloured_crop(seed: int) -> np.ndarray:
    """A 64 px crop: a reddish die with white pips on green felt, some noise."""
    rng = np.random.default_rng(seed)
    crop = np.full((64, 64, 3), (40, 120, 30), np.uint8)  # BGR green cloth
    cv2.rectangle(crop, (14, 14), (50, 50), (30, 30, 180), -1)
    cv2.circle(crop, (32, 32), 5, (250, 250, 250), -1)
    noise = rng.integers(-6, 7, crop.shape)
    return np.clip(crop.astype(int) + noise, 0, 255).astype(np.uint8)


def on_green_cloth(image: np.ndarray) -> np.ndarray:
    """The fixture's grey mosaic as seen on a green cloth under warm light: the same pips,
    another table's colours."""
    tint = np.array([0.55, 1.0, 0.75], np.float32)  # B, G, R
    return np.clip(image.astype(np.float32) * tint, 0, 255).astype(np.uint8)


def test_a_grey_crop_has_no_chroma_and_a_look_is_the_same_in_every_view() -> None:
    grey = cv2.cvtColor(cv2.cvtColor(coloured_crop(0), cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    assert np.allclose(chroma_signature(grey), 0.0, atol=1e-6)
    crop = coloured_crop(1)
    look = chroma_signature(crop)
    assert look.shape == (LOOK_WIDTH,) and np.abs(look[:4]).max() > 2  # chroma, not noise
    for view in symmetric_views(crop[None]):
        assert np.allclose(chroma_signature(view), look, atol=1e-4)


def test_the_floor_covers_the_share_of_a_setups_dice_and_needs_two_photos() -> None:
    looks = np.stack([chroma_signature(coloured_crop(seed)) for seed in range(40)])
    photos = [f"roll {k // 2}" for k in range(40)]
    assert look_floor(looks[:2], photos[:2]) is None  # one photo: no gate by look
    floor = look_floor(looks, photos)
    assert floor is not None and floor >= LEAST_FLOOR
    distance = np.linalg.norm(looks[:, None] - looks[None], axis=2)
    same = np.array([[a == b for b in photos] for a in photos])
    nearest = np.where(same, np.inf, distance).min(axis=1)
    assert np.mean(nearest <= floor + 1e-9) >= LOOK_SHARE
    grey = np.zeros((10, LOOK_WIDTH), np.float32)
    assert look_floor(grey, [f"roll {k}" for k in range(10)]) == LEAST_FLOOR


def test_a_likeness_with_looks_reads_only_crops_that_look_like_the_setups() -> None:
    rng = np.random.default_rng(3)
    embeddings = rng.normal(size=(12, 16)).astype(np.float32)
    photos = [f"roll {k // 3}" for k in range(12)]
    grey = np.zeros((12, LOOK_WIDTH), np.float32)
    like = likeness_from(embeddings, photos, grey)
    assert like is not None and like.looks is not None
    green = np.tile(chroma_signature(coloured_crop(5)), (12, 1))
    assert like.mask(embeddings, grey).all()
    assert not like.mask(embeddings, green).any()  # the same dice, another table
    assert not like.mask(embeddings).any()  # looks not measured: the shipped head reads
    unknown = grey.copy()
    unknown[0] = np.nan
    assert like.mask(embeddings, unknown).tolist() == [False] + [True] * 11
    # a likeness made without looks (a head saved before them) gates by embedding alone
    old = likeness_from(embeddings, photos)
    assert old is not None and old.looks is None and old.mask(embeddings, green).all()


def test_a_likeness_keeps_its_looks_through_its_saved_arrays() -> None:
    rng = np.random.default_rng(4)
    embeddings = rng.normal(size=(8, 16)).astype(np.float32)
    looks = rng.normal(size=(8, LOOK_WIDTH)).astype(np.float32)
    like = likeness_from(embeddings, [f"p{k % 4}" for k in range(8)], looks)
    assert like is not None and like.looks is not None
    again = Likeness.from_arrays(like.arrays(), 16)
    assert again.look_floor == pytest.approx(like.look_floor)
    assert again.looks is not None and np.allclose(again.looks, like.looks)
    assert np.array_equal(again.mask(embeddings, looks), like.mask(embeddings, looks))
    narrow = {**like.arrays(), "looks": looks[:, :3]}
    with pytest.raises(ValueError, match="wide"):
        Likeness.from_arrays(narrow, 16)


def test_the_fixture_tables_head_reads_its_own_dice_and_not_the_same_dice_on_green_cloth(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    image, boxes, values = mosaic
    taught = list(range(0, len(boxes), 2))
    learner = SetupLearner(SetupStore(tmp_path), "kitchen", classifier)
    for k in taught:
        learner.record(image, [ConfirmedDie(boxes[k], int(values[k]))], photo=f"cell {k}", throw=k)
    head = learner.refresh().head
    assert head.active and head.reads_by_look, head.gate.words()
    read = [boxes[k] for k in range(1, len(boxes), 2)]
    adapted = AdaptedClassifier(classifier, head)
    own = adapted.classify(image, read).probabilities
    assert not np.allclose(own, classifier.classify(image, read).probabilities, atol=1e-4)
    green = on_green_cloth(image)
    assert np.abs(crop_looks(green, read, classifier.margin)[:, :4]).max() > 2
    shipped = classifier.classify(green, read).probabilities
    assert np.allclose(adapted.classify(green, read).probabilities, shipped, atol=1e-6)

    # a restart reads the saved head with the same gate
    saved = load_head(learner.folder, classifier)
    assert saved is not None and saved.head.reads_by_look
    restarted = AdaptedClassifier(classifier, saved.head)
    assert np.allclose(restarted.classify(image, read).probabilities, own, atol=1e-6)
    assert np.allclose(restarted.classify(green, read).probabilities, shipped, atol=1e-6)


def test_the_no_forgetting_sample_is_judged_on_the_dice_that_look_like_the_setups(
    classifier: PipClassifier,
) -> None:
    crops, _ = read_anchor()
    anchor = anchor_for(classifier)
    assert anchor is not None and anchor.looks is not None
    assert anchor.looks.shape == (len(crops), LOOK_WIDTH)
    grey = np.array([np.abs(chroma_signature(c)).max() < 1e-6 for c in crops])
    # the sample holds greyscale cameras' dice and colour photos' dice: a grey table's head
    # is judged on the first, a coloured table's on dice like its own
    assert 40 <= grey.sum() <= len(crops) - 40
    assert all(c.shape == (CROP_SIZE, CROP_SIZE, 3) for c in crops)
    assert LOOK_SIZE == CROP_SIZE  # a live die's look is measured on the crop the store keeps
