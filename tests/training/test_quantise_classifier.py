"""The int8 classifier (models/recipe/quantise.py, `--classifier`): quantising the wide
classifier's committed export (stage 39's candidate) on the crops of a few labelled photos
gives a file the app loads with its manifest checks, whose last Gemm stays float, whose
manifest names the file it came from, and which reads rendered dice as its float source
does; an unreadable photo is left out, not fatal; a classifier that is int8 already is
refused; `--float` (finder nodes) is refused for a classifier. Needs onnx (the `test`
extra)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from companion.synth import render_scene
from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.datasets import LabelledDie, LabelledImage
from companion.vision.model import parse_manifest, sha256_of
from companion.vision.types import DieBox
from models.recipe.quantise import main, quantise_classifier

WIDE = (
    Path(__file__).resolve().parents[2]
    / "models/training/stage39-wide-classifier/classifier/candidate"
)


def labelled_scenes(folder: Path, count: int, seed: int) -> list[LabelledImage]:
    """Rendered photos with their readable dice labelled, as the data loaders label them."""
    rng = np.random.default_rng(seed)
    out = []
    for number in range(count):
        image, dice = render_scene(rng, 640, 480, dice_set="qwixx", size=60)
        path = folder / f"scene{seed}-{number}.png"
        cv2.imwrite(str(path), image)
        labels = tuple(
            LabelledDie(d.cx, d.cy, d.side, d.side, d.value) for d in dice if d.value is not None
        )
        out.append(LabelledImage(path, "rendered", 640, 480, labels))
    return out


@pytest.fixture(scope="module")
def quantised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("quantise-classifier")
    calibration = labelled_scenes(root, 6, seed=5)
    broken = root / "broken.png"
    broken.write_bytes(b"not a picture")
    calibration.append(LabelledImage(broken, "rendered", 640, 480, ()))
    out = root / "int8"
    quantise_classifier(WIDE, out, calibration)
    return out


def test_the_int8_classifier_loads_and_keeps_its_last_layer_float(quantised: Path) -> None:
    PipClassifier.load(quantised)  # the runtime's manifest and graph checks
    manifest = parse_manifest(quantised / "pip_classifier.json")
    assert manifest.raw["quantised"]["from_sha256"] == sha256_of(WIDE / CLASSIFIER_FILE)
    assert "Gemm" in manifest.raw["quantised"]["format"]
    model = onnx.load(str(quantised / CLASSIFIER_FILE))
    assert {"QuantizeLinear", "DequantizeLinear"} <= {node.op_type for node in model.graph.node}
    weights = {init.name: init for init in model.graph.initializer}
    gemm = next(node for node in model.graph.node if node.op_type == "Gemm")
    assert numpy_helper.to_array(weights[gemm.input[1]]).dtype == np.float32
    convs = [node for node in model.graph.node if node.op_type == "Conv"]
    assert convs and all(node.input[1] not in weights for node in convs)  # dequantised int8
    assert (quantised / CLASSIFIER_FILE).stat().st_size < (
        WIDE / CLASSIFIER_FILE
    ).stat().st_size / 2


def test_the_int8_reads_follow_the_float_classifiers(quantised: Path, tmp_path: Path) -> None:
    float_classifier, int8_classifier = PipClassifier.load(WIDE), PipClassifier.load(quantised)
    agree = total = 0
    for photo in labelled_scenes(tmp_path, 4, seed=77):  # scenes it was not calibrated on
        image = photo.load()
        boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0) for d in photo.dice]
        before = float_classifier.classify(image, boxes).probabilities
        after = int8_classifier.classify(image, boxes).probabilities
        agree += int(np.sum(before.argmax(axis=1) == after.argmax(axis=1)))
        total += len(boxes)
        assert np.abs(before - after).max() < 0.5
    assert total >= 10 and agree >= total - 1


def test_an_int8_classifier_is_not_quantised_again(quantised: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="int8 already"):
        quantise_classifier(quantised, tmp_path / "twice", labelled_scenes(tmp_path, 1, seed=3))
    assert not (tmp_path / "twice" / CLASSIFIER_FILE).exists()


def test_the_command_refuses_finder_nodes_and_its_own_folder(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--float names finder nodes"):
        main(["--classifier", str(WIDE), "--out", str(tmp_path / "x"), "--float", "/net/"])
    with pytest.raises(SystemExit, match="another folder"):
        main(["--classifier", str(WIDE), "--out", str(WIDE)])
    with pytest.raises(SystemExit):  # one of --finder and --classifier, not both
        main(["--classifier", str(WIDE), "--finder", str(WIDE), "--out", str(tmp_path / "y")])
