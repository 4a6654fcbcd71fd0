"""The classifier stage option small=S (models/README.md, "Stage 32, planned"): that share
of the crops gets the look of a die of 8-26 px blown up to the classifier's input, as the
runtime blows up rune55-webcams' small dice. Needs torch (the batches are tensors)."""

from __future__ import annotations

import cv2
import numpy as np
import torch

from models.recipe import data as recipe_data
from models.recipe.manifests import CLASSIFIER_SIZE, CROP_MARGIN
from models.recipe.training import ClassifierBatches, classifier_pool


def fine_detail(crops: np.ndarray) -> float:
    """Mean absolute Laplacian: how much pixel-scale detail (pips of 1-3 px) a crop holds."""
    return float(
        np.mean([np.abs(cv2.Laplacian(c.astype(np.float32), cv2.CV_32F)).mean() for c in crops])
    )


def sharp_crop(size: int = 48) -> np.ndarray:
    """A crop of 3 px black and white squares: detail a 40 px die keeps and a 10 px die
    cannot."""
    cells = (np.indices((size, size)) // 3).sum(axis=0) % 2
    return np.repeat((cells * 255).astype(np.uint8)[:, :, None], 3, axis=2)


def test_the_look_blurs_a_small_dies_pixels_and_keeps_the_crops_shape() -> None:
    crop = sharp_crop()
    looked = [
        recipe_data.small_die_look(crop, CROP_MARGIN, np.random.default_rng(seed))
        for seed in range(20)
    ]
    assert all(c.shape == crop.shape and c.dtype == np.uint8 for c in looked)
    assert fine_detail(np.stack(looked)) < 0.5 * fine_detail(crop[None])
    # the mean grey stays: the die is the same die, only seen with fewer pixels
    assert abs(float(np.mean(looked)) - float(crop.mean())) < 10


def test_a_die_already_smaller_than_the_look_is_left_as_it_is() -> None:
    crop = sharp_crop()
    # margin 8: the die is 6 px of the 48, smaller than any side the look draws (8-26)
    assert np.array_equal(recipe_data.small_die_look(crop, 8.0, np.random.default_rng(1)), crop)


def batches_detail(share: float) -> float:
    rng = np.random.default_rng(5)
    count = 64
    bank = recipe_data.CropBank(
        np.repeat(sharp_crop(recipe_data.BANK_SIZE)[None], count, axis=0),
        rng.integers(0, 6, count).astype(np.int64),
        np.full(count, 180.0, np.float32),
        np.ones(count, bool),
    )
    batches = ClassifierBatches(bank, classifier_pool(bank, 1), 7, 0, 4, share)
    crops = torch.cat([x for x, _ in batches]).permute(0, 2, 3, 1).numpy()
    assert crops.shape[1:3] == (CLASSIFIER_SIZE, CLASSIFIER_SIZE)
    return fine_detail(crops)


def test_a_stage_with_small_dice_trains_on_blurrier_crops_than_one_without() -> None:
    assert batches_detail(1.0) < 0.7 * batches_detail(0.0)
