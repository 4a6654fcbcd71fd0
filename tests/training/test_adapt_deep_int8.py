"""A setup's fine-tune follows whichever classifier ships (models/recipe/adapt_deep.py): the
wide net (`--classifier-net wide`, twice the small one's channels) and its int8 copy
(models/recipe/quantise.py), as well as the small float net of 1.5.0. The int8 copy's
weights are read back through its DequantizeLinear nodes, and the fine-tuned net is
written int8 again, calibrated on the setup's own crops, so a setup never reads slower
than the shipped net (issue 24 item 3). With the real committed wide classifier of stage
43, onnxruntime's quantisation and the adaptation fixture's crops. Needs torch (the
`train` extra, which the test setup installs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch

from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.model import parse_manifest, sha256_of
from companion.vision.types import DieBox
from models.recipe.adapt_deep import (
    DeepSettings,
    calibration_batches,
    classifier_net_for,
    errors_of,
    export_adapted,
    fine_tune,
    store_crops,
)
from models.recipe.from_onnx import load_folded_onnx
from models.recipe.quantise import quantise_classifier_file

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "models"
WIDE = REPO / "models/training/stage43-wide-classifier/classifier/candidate"
SMALL = REPO / "models/training/stage32-classifier/classifier/candidate"  # 1.5.0's file


@pytest.fixture(scope="module")
def cells(
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The adaptation fixture's 256 cells as stored crops, and their values."""
    image, boxes, values = fine_tune_mosaic
    return store_crops(PipClassifier.load(MODELS), image, boxes), values


@pytest.fixture(scope="module")
def wide_int8(
    tmp_path_factory: pytest.TempPathFactory, cells: tuple[np.ndarray, np.ndarray]
) -> Path:
    """Stage 43's wide classifier and its int8 copy, calibrated on the fixture's crops (as
    `python -m models.recipe.quantise --classifier` does on training photos)."""
    folder = tmp_path_factory.mktemp("wide-int8")
    float_dir = folder / "float"
    float_dir.mkdir()
    for name in (CLASSIFIER_FILE, Path(CLASSIFIER_FILE).with_suffix(".json").name):
        shutil.copy(WIDE / name, float_dir / name)
    batches = calibration_batches(PipClassifier.load(float_dir), cells[0][:128])
    int8_dir = folder / "int8"
    target = int8_dir / CLASSIFIER_FILE
    quantise_classifier_file(float_dir / CLASSIFIER_FILE, target, batches, "the fixture's crops")
    return int8_dir


def test_the_wide_net_is_built_with_the_files_channels() -> None:
    wide = classifier_net_for(WIDE / CLASSIFIER_FILE)
    small = classifier_net_for(SMALL / CLASSIFIER_FILE)
    assert wide.fc.in_features == 192 and small.fc.in_features == 96
    load_folded_onnx(wide, WIDE / CLASSIFIER_FILE)  # raises on any shape that differs


def test_an_int8_files_weights_are_its_float_sources_within_half_a_step(
    wide_int8: Path,
) -> None:
    from_float = classifier_net_for(WIDE / CLASSIFIER_FILE)
    load_folded_onnx(from_float, WIDE / CLASSIFIER_FILE)
    from_int8 = classifier_net_for(wide_int8 / CLASSIFIER_FILE)
    load_folded_onnx(from_int8, wide_int8 / CLASSIFIER_FILE)
    convs = [
        (a.weight, b.weight)
        for a, b in zip(from_float.modules(), from_int8.modules(), strict=True)
        if isinstance(a, torch.nn.Conv2d)
    ]
    assert len(convs) == 7
    for exact, read_back in convs:
        assert isinstance(read_back, torch.Tensor)  # the int8 net's Conv2d at the same place
        # per output channel, int8 in 7 bits, [-64, 64] (models/recipe/quantise.py, WEIGHTS):
        # a step is the channel's largest |w| / 64
        step = exact.abs().flatten(1).amax(dim=1) / 64
        error = (exact - read_back).abs().flatten(1).amax(dim=1)
        assert bool((error <= step * 0.51 + 1e-7).all())
        assert not torch.equal(exact, read_back)  # really read through the int8 integers


def test_a_fine_tune_of_an_int8_source_is_written_int8_and_reads_as_well(
    tmp_path: Path, wide_int8: Path, cells: tuple[np.ndarray, np.ndarray]
) -> None:
    crops, values = cells
    taught, read = np.arange(0, len(values), 2), np.arange(1, len(values), 2)
    settings = DeepSettings(steps=6, batch=16)
    net = fine_tune(wide_int8, crops[taught], values[taught], settings)
    export_adapted(net, wide_int8, tmp_path, {"dice": len(taught)}, crops[taught])
    graph = onnx.load(str(tmp_path / CLASSIFIER_FILE)).graph
    assert sum(node.op_type == "DequantizeLinear" for node in graph.node) >= 14
    manifest = parse_manifest(tmp_path / "pip_classifier.json")
    assert manifest.raw["quantised"]["calibration"] == "128 of the setup's confirmed crops"
    assert manifest.raw["deep_adapted"]["from_sha256"] == sha256_of(wide_int8 / CLASSIFIER_FILE)
    adapted = PipClassifier.load(tmp_path)  # the runtime's load checks
    shipped = PipClassifier.load(wide_int8)
    cold = int(errors_of(shipped, crops[read], values[read]).sum())
    assert int(errors_of(adapted, crops[read], values[read]).sum()) <= cold + 3
