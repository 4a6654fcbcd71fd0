"""A weight-space average of two classifiers continued from one model
(models/recipe/weight_average.py), on the real files: classifier 1.5.0 (stage 32's
candidate, byte for byte) and stage 21's candidate, both continued from 1.4.0 with the same
folded graph. At share 0 and 1 the average is each of them weight for weight; at 0.5 each weight is the midpoint;
the file loads with the runtime's manifest checks and reads crops; nets of other graphs (the
finder) and shares outside 0..1 are refused. The equal mean of several points (the lite0
finder's stages) is the chained two-file average, and records every point. Needs onnx (the
`test` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.finder import DiceFinder
from companion.vision.model import parse_manifest, sha256_of
from companion.vision.types import DieBox
from models.recipe.weight_average import (
    GraphMismatch,
    average,
    main,
    mean_of,
    write_average,
)
from tests.images import read_image

MODELS = Path(__file__).resolve().parents[2] / "models"
TUNED = MODELS / "training" / "stage21-classifier" / "classifier" / "candidate"
BASE = MODELS / "training" / "stage32-classifier" / "classifier" / "candidate"  # 1.5.0
STAGES = MODELS / "training"
FINDER_POINTS = [
    STAGES / f"stage{number}-lite-finder" / "finder" / "candidate" for number in (22, 24, 26)
]
CROPS = Path(__file__).resolve().parents[1] / "fixtures" / "crops"


def weights(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}


def probabilities(models_dir: Path) -> np.ndarray:
    classifier = PipClassifier.load(models_dir)
    crops = sorted(CROPS.glob("*.png"))[:12]
    out = []
    for path in crops:
        image = read_image(path)
        height, width = image.shape[:2]
        box = DieBox(width / 2, height / 2, width / 1.3, height / 1.3)
        out.append(classifier.probabilities(image, [box])[0])
    return np.array(out)


def test_the_ends_are_the_two_models_and_the_middle_their_midpoint() -> None:
    base = onnx.load(str(BASE / CLASSIFIER_FILE))
    tuned = onnx.load(str(TUNED / CLASSIFIER_FILE))
    base_weights, tuned_weights = weights(base), weights(tuned)
    differing = [
        name for name in base_weights if not np.array_equal(base_weights[name], tuned_weights[name])
    ]
    assert differing, "stage 21 should differ from the net it continued"
    for share, expected in ((0.0, base_weights), (1.0, tuned_weights)):
        mixed = weights(average(base, tuned, share))
        for name in differing:
            np.testing.assert_allclose(mixed[name], expected[name], rtol=0, atol=1e-7)
    middle = weights(average(base, tuned, 0.5))
    for name in differing:
        np.testing.assert_allclose(
            middle[name], (base_weights[name] + tuned_weights[name]) / 2, atol=1e-6
        )


def test_the_written_average_loads_with_its_checks_and_reads_between_its_sources(
    tmp_path: Path,
) -> None:
    target = write_average(BASE, TUNED, 0.5, tmp_path, "pip_classifier")
    manifest = parse_manifest(target.with_suffix(".json"))
    assert manifest.sha256 == sha256_of(target)
    record = manifest.raw["weight_average"]
    assert record["base_sha256"] == sha256_of(BASE / CLASSIFIER_FILE)
    assert record["tuned_sha256"] == sha256_of(TUNED / CLASSIFIER_FILE)
    assert record["share_of_tuned"] == 0.5
    mixed = probabilities(tmp_path)
    base, tuned = probabilities(BASE), probabilities(TUNED)
    assert mixed.shape == base.shape == (12, 7)
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, atol=1e-4)
    # an average of two nets that agree on these validation crops reads them as both do
    agreed = base.argmax(axis=1) == tuned.argmax(axis=1)
    assert agreed.sum() >= 10
    assert (mixed.argmax(axis=1)[agreed] == base.argmax(axis=1)[agreed]).all()
    # share 0 reads exactly as the base
    write_average(BASE, TUNED, 0.0, tmp_path / "zero", "pip_classifier")
    np.testing.assert_allclose(probabilities(tmp_path / "zero"), base, atol=1e-5)


def test_other_graphs_and_shares_outside_the_range_are_refused(tmp_path: Path) -> None:
    base = onnx.load(str(BASE / CLASSIFIER_FILE))
    finder = onnx.load(str(MODELS / "dice_finder.onnx"))
    with pytest.raises(GraphMismatch):
        average(base, finder, 0.5)
    with pytest.raises(ValueError, match="share"):
        average(base, base, 1.5)
    finder_only = tmp_path / "finder"
    finder_only.mkdir()
    (finder_only / CLASSIFIER_FILE).write_bytes((MODELS / "dice_finder.onnx").read_bytes())
    with pytest.raises(SystemExit, match="cannot average"):
        main(["--base", str(BASE), "--tuned", str(finder_only), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out" / CLASSIFIER_FILE).exists()


def test_the_mean_of_points_is_the_chained_average_and_records_every_point(
    tmp_path: Path,
) -> None:
    base = onnx.load(str(BASE / CLASSIFIER_FILE))
    tuned = onnx.load(str(TUNED / CLASSIFIER_FILE))
    for points, share in (([base, tuned], 0.5), ([base, base, tuned], 1 / 3)):
        mean, chained = weights(mean_of(points)), weights(average(base, tuned, share))
        for name, value in chained.items():
            np.testing.assert_allclose(mean[name], value, rtol=0, atol=1e-6)
    # the shipped finder's float source was made by chaining shares 0.5 and 0.333 over
    # stages 22, 24 and 26: the mean in one step is it, to the rounding of 0.333
    out = tmp_path / "mean"
    arguments = ["--model", "dice_finder", "--points", *map(str, FINDER_POINTS), "--out", str(out)]
    assert main(arguments) == 0
    mean = weights(onnx.load(str(out / "dice_finder.onnx")))
    committed = weights(
        onnx.load(str(STAGES / "stage26-lite-finder" / "average" / "dice_finder.onnx"))
    )
    assert mean.keys() == committed.keys()
    for name, value in committed.items():
        scale = float(np.abs(value).max()) if value.size else 0.0
        np.testing.assert_allclose(mean[name], value, rtol=0, atol=1e-3 * scale + 1e-7)
    record = parse_manifest(out / "dice_finder.json").raw["weight_average"]
    assert record["points_sha256"] == [
        sha256_of(folder / "dice_finder.onnx") for folder in FINDER_POINTS
    ]
    DiceFinder.load(out)
    with pytest.raises(ValueError, match="two points"):
        mean_of([base])
    with pytest.raises(SystemExit, match="cannot average"):
        # the shipped finder is int8: not the graph of its float points
        main(
            [
                "--model",
                "dice_finder",
                "--points",
                str(MODELS),
                str(FINDER_POINTS[0]),
                "--out",
                str(tmp_path / "bad"),
            ]
        )
