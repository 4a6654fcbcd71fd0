"""The finder's heat head (companion.vision.adapt_finder, issue 24) with the real finder
(onnxruntime): the features file made by models/recipe/finder_features.py passes the
model load checks and gives the shipped maps to the bit; without a head the adapted finder
finds exactly what the shipped one finds; a head fitted on rendered photos separates their
dice from their table more than the shipped logits did; a features file made for another
finder is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from companion.synth import render_scene
from companion.vision.adapt_finder import (
    FEATURES_FILE,
    AdaptedFinder,
    FinderRows,
    Spot,
    fit_finder_head,
)
from companion.vision.finder import DiceFinder
from companion.vision.model import ModelError, OnnxModel, default_models_dir
from models.recipe.finder_features import features_current
from models.recipe.finder_features import main as make_features


@pytest.fixture(scope="module")
def features_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("finder-features")
    for name in ("dice_finder.onnx", "dice_finder.json"):
        shutil.copy(default_models_dir() / name, folder / name)
    assert make_features(["--models", str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def shipped() -> DiceFinder:
    return DiceFinder.load()


def scene(seed: int) -> tuple[np.ndarray, list[Spot]]:
    image, dice = render_scene(np.random.default_rng(seed), 640, 480)
    return image, [Spot(d.cx, d.cy, d.side) for d in dice]


def test_the_features_file_passes_the_load_checks_and_reads_as_shipped(
    features_dir: Path, shipped: DiceFinder
) -> None:
    model = OnnxModel.load(features_dir / FEATURES_FILE)  # manifest, sha256, contract, warm-up
    assert model.manifest.output_names == ("maps", "features")
    assert model.manifest.raw["derived_from"]["sha256"] == shipped.model.manifest.sha256
    image, _ = scene(3)
    batch, _ = shipped.prepare(image)
    maps, features = model.run(batch)
    assert np.array_equal(maps, shipped.model.run(batch)[0])
    assert features.shape[1] == 24 and features.shape[2:] == maps.shape[2:]


def test_without_a_head_the_adapted_finder_finds_what_the_shipped_one_finds(
    features_dir: Path, shipped: DiceFinder
) -> None:
    finder = AdaptedFinder.load(shipped, None, features_dir)
    for seed in (1, 2):
        image, _ = scene(seed)
        assert finder.find(image, include_weak=True) == shipped.find(image, include_weak=True)


def test_a_head_taught_the_dice_raises_their_heat_and_lowers_the_rest(
    features_dir: Path, shipped: DiceFinder
) -> None:
    finder = AdaptedFinder.load(shipped, None, features_dir)
    photos = [scene(seed) for seed in range(4)]
    rows = FinderRows.join(
        [finder.photo_rows(image, dice, k) for k, (image, dice) in enumerate(photos)]
    )
    assert rows.targets.sum() == sum(len(d) for _, d in photos)
    head = fit_finder_head(rows, lam=0.01)
    assert head is not None and head.weights.shape == (25,)
    logits = (
        rows.offsets + np.hstack([rows.features, np.ones((len(rows.targets), 1))]) @ head.weights
    )
    dice, table = rows.targets == 1, rows.targets == 0
    # the fit moves the taught cells the way their targets say, more than the shipped logits
    assert (
        logits[dice].mean() - logits[table].mean()
        > rows.offsets[dice].mean() - rows.offsets[table].mean()
    )
    assert (
        fit_finder_head(FinderRows(rows.features[table], rows.offsets[table], rows.targets[table]))
        is None
    )


def test_a_features_file_made_for_another_finder_is_refused(
    features_dir: Path, shipped: DiceFinder, tmp_path: Path
) -> None:
    for name in (FEATURES_FILE, FEATURES_FILE.replace(".onnx", ".json")):
        shutil.copy(features_dir / name, tmp_path / name)
    manifest_path = tmp_path / FEATURES_FILE.replace(".onnx", ".json")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["derived_from"]["sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ModelError, match="derived_from.sha256"):
        AdaptedFinder.load(shipped, None, tmp_path)


def test_the_features_file_is_made_again_unless_both_files_match(tmp_path: Path) -> None:
    """models/recipe/finder_features.py writes each file in one rename (no temporary left);
    `features_current` says a folder needs making again when either file is missing, the
    manifest does not match the .onnx (a crash between the two writes), or the finder
    beside them is another than the one they were made from."""
    for name in ("dice_finder.onnx", "dice_finder.json"):
        shutil.copy(default_models_dir() / name, tmp_path / name)
    assert not features_current(tmp_path)
    assert make_features(["--models", str(tmp_path)]) == 0
    assert features_current(tmp_path) and not list(tmp_path.glob("*.tmp"))
    assert not list(tmp_path.glob(".*"))
    manifest = tmp_path / FEATURES_FILE.replace(".onnx", ".json")
    kept = manifest.read_bytes()
    manifest.unlink()
    assert not features_current(tmp_path)
    manifest.write_bytes(kept)
    assert features_current(tmp_path)
    onnx_file = tmp_path / FEATURES_FILE
    good = onnx_file.read_bytes()
    onnx_file.write_bytes(good[:-16])  # the manifest of one file, the .onnx of another
    assert not features_current(tmp_path)
    onnx_file.unlink()
    assert not features_current(tmp_path)
    assert make_features(["--models", str(tmp_path)]) == 0
    assert features_current(tmp_path) and onnx_file.read_bytes() == good
    shipped = tmp_path / "dice_finder.json"  # the finder beside them changed
    raw = json.loads(shipped.read_text(encoding="utf-8"))
    raw["sha256"] = "0" * 64
    shipped.write_text(json.dumps(raw), encoding="utf-8")
    assert not features_current(tmp_path)
