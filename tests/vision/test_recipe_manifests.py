"""The training recipe's manifests (models/recipe/manifests.py) are built from the runtime's
own Manifest type and pass its checks at load; stages parse as the command line gives
them; the training pack (models/recipe/pack.py) gives back what went in. None of it needs
torch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.classifier import PipClassifier
from companion.vision.datasets import TOMITOMI, DatasetError, default_data_root, load_split
from companion.vision.finder import DiceFinder, PeakRule
from companion.vision.model import Manifest, default_models_dir, parse_manifest, save_manifest
from models.recipe import pack as packing
from models.recipe.manifests import (
    FINDER_HEADS,
    Stage,
    StageError,
    classifier_manifest,
    finder_manifest,
    parse_stages,
    with_figures,
    with_peak_rule,
)

MODELS = default_models_dir()


def test_stages_parse_with_their_options() -> None:
    assert parse_stages("400:4e-3:7:real=3:hard:min=180, 60:1e-3:8") == [
        Stage(400, 4e-3, 7, hard=True, real_repeat=3, minutes=180.0),
        Stage(60, 1e-3, 8),
    ]
    assert parse_stages("") == []
    assert Stage(38, 7e-4, 20261134, real_repeat=3).describe(
        38, "epochs", {Path("a"): np.zeros((358, 3))}
    ) == ("38 epochs lr 0.0007 seed 20261134 hard negatives 358 real x3")
    weighed = parse_stages("300:3e-4:9:real=3:rune55-webcams=1:min=75")[0]
    assert weighed.folder_repeat == (("rune55-webcams", 1),)
    assert (weighed.repeat_for("rune55-webcams"), weighed.repeat_for("byler-d6-train")) == (1, 3)
    assert weighed.describe(5, "epochs", {}) == (
        "5 epochs lr 0.0003 seed 9 real x3 rune55-webcams x1"
    )
    small = parse_stages("300:3e-4:9:small=0.3:real=3")[0]
    assert (small.small_share, small.real_repeat, small.folder_repeat) == (0.3, 3, ())
    assert small.describe(2, "epochs", {}) == "2 epochs lr 0.0003 seed 9 real x3 small dice 0.3"
    for bad, message in (
        ("400:4e-3", "expected COUNT:LR:SEED"),
        ("400:4e-3:7:fast", "unknown option 'fast'"),
        ("x:4e-3:7", "stage 'x:4e-3:7'"),
        ("4:1e-3:7:real=two", "stage '4:1e-3:7:real=two'"),
        ("4:1e-3:7:rune55-webcams=-1", "repeat must be >= 0"),
        ("4:1e-3:7:=2", "unknown option '=2'"),
        ("4:1e-3:7:small=1.5", "small=1.5 is not a share 0-1"),
        ("4:1e-3:7:small=some", "stage '4:1e-3:7:small=some'"),
    ):
        with pytest.raises(StageError, match=message):
            parse_stages(bad)


def _built_classifier() -> Manifest:
    return classifier_manifest(
        created="2026-12-01", command="python models/train.py", seed=1,
        trained_on={"real": {}}, embedding_width=192,  # the wide net of classifier 2.0.0
    )  # fmt: skip


def test_the_classifier_manifest_is_the_runtimes_contract(tmp_path: Path) -> None:
    built = _built_classifier()
    shipped = parse_manifest(MODELS / "pip_classifier.json")
    for name in ("input", "output_names", "output_shapes", "labels"):
        assert getattr(built, name) == getattr(shipped, name), name
    # the shipped weights with the built manifest load through the runtime's checks
    shutil.copy(MODELS / "pip_classifier.onnx", tmp_path)
    written = save_manifest(built, tmp_path / "pip_classifier.onnx")  # type: ignore[arg-type]
    assert written.sha256 == shipped.sha256
    assert parse_manifest(tmp_path / "pip_classifier.json").to_json() == written.to_json()
    PipClassifier.load(tmp_path)


def test_the_finder_manifest_with_its_peak_rule_loads(tmp_path: Path) -> None:
    built = finder_manifest(
        created="2026-12-01", command="c", seed=1, trained_on={}, heads=FINDER_HEADS
    )
    shipped = parse_manifest(MODELS / "dice_finder.json")
    for name in ("input", "output_names", "labels"):
        assert getattr(built, name) == getattr(shipped, name), name
    rule = PeakRule(0.5, 0.8, 0.3, 0.3, 0.9)
    ruled = with_peak_rule(built, rule)
    options = ruled.raw["options"]
    assert (options["threshold"], options["sure_threshold"], options["weak_threshold"]) == (
        0.5, 0.8, 0.3
    )  # fmt: skip
    assert "sure_threshold" not in with_peak_rule(ruled, PeakRule(0.4, 0.4)).raw["options"]
    shutil.copy(MODELS / "dice_finder.onnx", tmp_path)
    save_manifest(ruled, tmp_path / "dice_finder.onnx")
    finder = DiceFinder.load(tmp_path)
    assert finder.peak_rule == rule


def test_figures_go_to_the_model_they_judge() -> None:
    figures: dict[str, dict[str, object]] = {
        "byler-d6-train": {"images": 40, "recall": 1.0, "confusions": {"5->4": 2}},
        TOMITOMI: {"images": 256, "classifier_accuracy_on_labelled_boxes": 0.9},
    }
    classifier = with_figures(_built_classifier(), figures, tuple(figures))
    assert classifier.raw["validation"]["byler-d6-train"] == {
        "images": 40,
        "confusions": {"5->4": 2},
    }
    assert classifier.raw["validation"][TOMITOMI]["classifier_accuracy_on_labelled_boxes"] == 0.9
    finder = finder_manifest(created="d", command="c", seed=1, trained_on={}, heads=FINDER_HEADS)
    judged = with_figures(finder, figures, ("byler-d6-train",))
    assert judged.raw["validation"]["byler-d6-train"] == {"images": 40, "recall": 1.0}
    assert TOMITOMI not in judged.raw["validation"]


# ----------------------------------------------------------------------------------------
# The training pack


def test_a_pack_gives_back_its_images_labels_and_scene_recipe(tmp_path: Path) -> None:
    split = load_split(default_data_root())
    train = [split.train[0], split.train[-1]]
    crops = list(split.train_crops[:3])
    val = (np.zeros((2, 48, 48, 3), np.uint8) + 7, np.asarray([2, 5]))
    recipe = packing.SyntheticRecipe(700, 9, 0.1, "ab" * 32)
    size = packing.write_pack(tmp_path / "p.zip", train, crops, val, recipe, {"command": "t"})
    assert size == (tmp_path / "p.zip").stat().st_size
    back = packing.read_pack(tmp_path / "p.zip", tmp_path / "out")
    assert back.synthetic == recipe and back.made["command"] == "t"
    assert [(im.folder, im.dice) for im in back.train] == [(im.folder, im.dice) for im in train]
    assert [im.dice for im in back.train_crops] == [im.dice for im in crops]
    for original, packed in zip(train, back.train, strict=True):
        difference = np.abs(original.load().astype(int) - packed.load().astype(int))
        assert packed.load().shape == original.load().shape and difference.mean() < 4
    assert all(
        p.path.read_bytes() == o.path.read_bytes()
        for p, o in zip(back.train_crops, crops, strict=True)
    )
    assert np.abs(back.validation_crops[0].astype(int) - val[0]).max() <= 3
    assert list(back.validation_crops[1]) == [2, 5]


def test_a_broken_or_oversized_pack_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "not.zip").write_bytes(b"nothing")
    with pytest.raises(DatasetError, match="not a training pack"):
        packing.read_pack(tmp_path / "not.zip")
    import zipfile

    with zipfile.ZipFile(tmp_path / "other.zip", "w") as other:
        other.writestr("pack.json", json.dumps({"format": "something/9"}))
    with pytest.raises(DatasetError, match="format 'something/9'"):
        packing.read_pack(tmp_path / "other.zip")
    monkeypatch.setattr(packing, "PACK_LIMIT_BYTES", 1000)
    picture = tmp_path / "a.png"
    cv2.imwrite(str(picture), np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8))
    from companion.vision.datasets import LabelledDie, LabelledImage

    image = LabelledImage(picture, "x", 64, 64, (LabelledDie(32, 32, 20, 20, 3),))
    val = (np.zeros((0, 48, 48, 3), np.uint8), np.zeros(0, np.int64))
    recipe = packing.SyntheticRecipe(1, 1, 0.0, "")
    with pytest.raises(DatasetError, match="over the pack's limit"):
        packing.write_pack(tmp_path / "big.zip", [image], [], val, recipe, {})
    assert not (tmp_path / "big.zip").exists()
