"""The wide nets (issue 22 item 4's "wider net from scratch"): the small finder and
classifier with more channels, from random weights. They are what the command line names,
they train from scratch and resume (tests/training/test_resume.py for the finder), and an
export keeps the app's contract: the app loads it and reads, the classifier's embedding is
as wide as its manifest says, and a later stage starts from the export with the same
outputs. Needs torch (the `test` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from companion.vision.classifier import PipClassifier
from companion.vision.finder import DiceFinder
from companion.vision.types import DieBox
from models.recipe import manifests
from models.recipe.from_onnx import load_folded_onnx
from models.recipe.nets import (
    FINDER_HEADS,
    WIDE_CLASSIFIER_WIDTHS,
    ClassifierExport,
    ClassifierNet,
    FinderExport,
)
from models.recipe.training import (
    ClassifierStage,
    make_classifier_net,
    make_finder_net,
)
from models.train import (
    export_classifier,
    export_finder,
    first_stage_starts_afresh,
    parse_args,
    save_manifest,
)
from tests.training.test_resume import same_weights, through_and_resumed

SEED = 20261205


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def exported_finder(net: torch.nn.Module, folder: Path, trained_on: dict[str, object]) -> Path:
    """folder/dice_finder.onnx exported from ``net`` with its manifest."""
    path = folder / "dice_finder.onnx"
    export_finder(net, path)
    manifest = manifests.finder_manifest(
        created="2026-12-05", command="test", seed=4, trained_on=trained_on, heads=FINDER_HEADS
    )
    save_manifest(manifest, path)
    return path


def parameters(net: torch.nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


def test_the_command_line_names_the_wide_nets() -> None:
    args = parse_args(["--finder-net", "wide", "--classifier-net", "wide"])
    assert (args.finder_net, args.classifier_net) == ("wide", "wide")
    # wider than the small nets, the same kind of net: more channels, not more layers
    small_finder, wide_finder = make_finder_net("small"), make_finder_net("wide")
    assert 2 * parameters(small_finder) < parameters(wide_finder) < 3 * parameters(small_finder)
    small, wide = make_classifier_net("small", 7), make_classifier_net("wide", 7)
    assert 3 * parameters(small) < parameters(wide) < 5 * parameters(small)
    assert len(list(small.modules())) == len(list(wide.modules()))
    assert wide.fc.in_features == WIDE_CLASSIFIER_WIDTHS[-1]


def test_a_wide_classifier_trains_from_scratch_and_resumes_from_its_state(
    tmp_path: Path,
) -> None:
    stage = ClassifierStage(epochs=2, seed=SEED, max_lr=3e-3, workers=0, net="wide")
    torch.manual_seed(SEED)
    untrained = make_classifier_net("wide", 7)
    through, resumed = through_and_resumed(stage, tmp_path)
    assert isinstance(through, ClassifierNet)
    assert through.fc.in_features == WIDE_CLASSIFIER_WIDTHS[-1]
    moved = (through.fc.weight.detach() - untrained.fc.weight).abs().max()
    assert float(moved) > 0  # it trained
    same_weights(through, resumed)


def test_an_exported_wide_classifier_keeps_the_classifiers_contract(tmp_path: Path) -> None:
    torch.manual_seed(2)
    net = make_classifier_net("wide", 7).eval()
    width = WIDE_CLASSIFIER_WIDTHS[-1]
    path = tmp_path / "pip_classifier.onnx"
    export_classifier(net, path)
    save_manifest(
        manifests.classifier_manifest(
            created="2026-12-05", command="test", seed=2, trained_on={}, embedding_width=width
        ),
        path,
    )
    read = PipClassifier.load(tmp_path).classify(
        np.random.default_rng(3).integers(0, 255, (480, 640, 3), dtype=np.uint8),
        [DieBox(200.0, 150.0, 60.0, 60.0), DieBox(400.0, 300.0, 24.0, 24.0)],
    )
    assert read.probabilities.shape == (2, 7)
    assert read.embeddings is not None and read.embeddings.shape == (2, width)
    again = make_classifier_net("wide", 7)
    load_folded_onnx(again, path)
    x = torch.randn(3, 3, 48, 48)
    with torch.no_grad():
        for a, b in zip(ClassifierExport(net)(x), ClassifierExport(again.eval())(x), strict=True):
            assert torch.allclose(a, b, atol=1e-4)
    with pytest.raises(ValueError, match="shape"):  # the small net cannot hold the wide weights
        load_folded_onnx(make_classifier_net("small", 7), path)


def test_an_exported_wide_finder_keeps_the_finders_contract(tmp_path: Path) -> None:
    torch.manual_seed(4)
    net = make_finder_net("wide").eval()
    path = exported_finder(net, tmp_path, {})
    frame = np.random.default_rng(5).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    assert isinstance(DiceFinder.load(tmp_path).find(frame), list)
    again = make_finder_net("wide")
    load_folded_onnx(again, path)
    x = torch.randn(1, 3, 96, 128)
    with torch.no_grad():
        assert torch.allclose(FinderExport(again.eval())(x), FinderExport(net)(x), atol=1e-4)


def test_a_wide_run_from_the_shipped_finder_starts_from_random_weights_and_mines_its_boxes(
    tmp_path: Path,
) -> None:
    shipped = Path(__file__).resolve().parents[2] / "models" / "dice_finder.onnx"  # lite0
    # the shipped finder only gives the first stage its false boxes to mine
    assert first_stage_starts_afresh("wide", shipped, shipped)
    assert first_stage_starts_afresh("lite0", shipped, shipped) is False  # continues it
    assert first_stage_starts_afresh("small", shipped, shipped) is False  # refused later
    # a wide run continued from a wide export starts from that export
    wide = exported_finder(make_finder_net("wide").eval(), tmp_path, {"finder_net": "wide"})
    assert first_stage_starts_afresh("wide", wide, wide) is False
    # a later stage's export is never a fresh start
    assert first_stage_starts_afresh("wide", tmp_path / "stage0.onnx", shipped) is False
