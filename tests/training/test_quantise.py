"""The int8 finder (models/recipe/quantise.py): quantising a float finder (the shipped
finder's own source, kept in its training state folder) on a few photos gives a file the
app loads with its manifest checks, whose heads stay float, whose manifest names the file
it came from, and whose centre heat on a photo stays close to the float finder's; an
unreadable photo is left out, not fatal; a finder that is int8 already is refused. Needs
onnx (the `test` extra)."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from companion.synth import render_scene
from companion.vision.adapt_finder import AdaptedFinder
from companion.vision.datasets import LabelledImage
from companion.vision.finder import FINDER_FILE, DiceFinder
from companion.vision.model import parse_manifest, sha256_of
from models.recipe.finder_features import main as make_features
from models.recipe.quantise import last_conv, quantise_finder
from tests.images import read_image

MODELS = Path(__file__).resolve().parents[2] / "models"


def float_source() -> Path:
    """The folder under models/training of the float file the shipped int8 finder was
    quantised from (its manifest's quantised.from_sha256): it must be committed, so the
    shipped file can be made again (models/recipe/ship.py checks it too)."""
    wanted = parse_manifest(MODELS / "dice_finder.json").raw["quantised"]["from_sha256"]
    for path in sorted((MODELS / "training").glob(f"**/{FINDER_FILE}")):
        if sha256_of(path) == wanted:
            return path.parent
    raise AssertionError(f"no float finder under models/training has sha256 {wanted}")


FLOAT = float_source()


def photos(folder: Path, count: int) -> list[LabelledImage]:
    rng = np.random.default_rng(11)
    out = []
    for number in range(count):
        image = render_scene(rng, 640, 480, dice_set="qwixx", size=60)[0]
        path = folder / f"scene{number}.png"
        cv2.imwrite(str(path), image)
        out.append(LabelledImage(path, "rendered", 640, 480, ()))
    return out


@pytest.fixture(scope="module")
def quantised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[LabelledImage]]:
    root = tmp_path_factory.mktemp("quantise")
    calibration = photos(root, 4)
    broken = root / "broken.png"
    broken.write_bytes(b"not a picture")
    calibration.append(LabelledImage(broken, "rendered", 640, 480, ()))
    out = root / "int8"
    quantise_finder(FLOAT, out, calibration)
    return out, calibration


def test_the_int8_finder_loads_and_keeps_its_heads_float(
    quantised: tuple[Path, list[LabelledImage]],
) -> None:
    out, _ = quantised
    DiceFinder.load(out)  # the runtime's manifest and graph checks
    manifest = parse_manifest(out / "dice_finder.json")
    assert manifest.raw["quantised"]["from_sha256"] == sha256_of(FLOAT / FINDER_FILE)
    model = onnx.load(str(out / FINDER_FILE))
    ops = {node.op_type for node in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    weights = {init.name: init for init in model.graph.initializer}
    head = next(node for node in model.graph.node if node.name == last_conv(model))
    assert numpy_helper.to_array(weights[head.input[1]]).dtype == np.float32
    assert (out / FINDER_FILE).stat().st_size < (FLOAT / FINDER_FILE).stat().st_size / 2


def test_the_int8_heat_follows_the_float_finders(
    quantised: tuple[Path, list[LabelledImage]], tmp_path: Path
) -> None:
    out, _ = quantised
    float_finder, int8_finder = DiceFinder.load(FLOAT), DiceFinder.load(out)
    image = read_image(photos(tmp_path, 6)[-1].path)  # a scene it was not calibrated on
    batch, _ = float_finder.prepare(image, float_finder.long_side)
    heat_float = float_finder.maps(batch)[0]
    heat_int8 = int8_finder.maps(batch)[0]
    assert np.corrcoef(heat_float.ravel(), heat_int8.ravel())[0, 1] > 0.95
    assert abs(float(heat_float.max()) - float(heat_int8.max())) < 0.15


def test_the_source_folder_and_the_working_folder_are_left_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    working = tmp_path / "working"
    working.mkdir()
    monkeypatch.chdir(working)
    source = tmp_path / "source"
    shutil.copytree(FLOAT, source)
    before = sha256_of(source / FINDER_FILE)
    quantise_finder(source, tmp_path / "int8", photos(tmp_path, 2))
    assert sha256_of(source / FINDER_FILE) == before
    assert list(working.iterdir()) == []  # no scratch file of onnxruntime's left behind


def test_nodes_named_by_a_prefix_stay_float_and_an_unknown_prefix_is_refused(
    tmp_path: Path,
) -> None:
    calibration = photos(tmp_path, 2)
    out = tmp_path / "int8-heads-float"
    quantise_finder(FLOAT, out, calibration, ("/net/head/",))
    DiceFinder.load(out)
    model = onnx.load(str(out / FINDER_FILE))
    weights = {init.name: init for init in model.graph.initializer}
    heads = [n for n in model.graph.node if n.op_type == "Conv" and n.name.startswith("/net/head/")]
    assert len(heads) == 2
    for node in heads:  # float weights straight into the Conv, no DequantizeLinear between
        assert numpy_helper.to_array(weights[node.input[1]]).dtype == np.float32
    others = [n for n in model.graph.node if n.op_type == "Conv" and n not in heads]
    assert others and all(n.input[1] not in weights for n in others)  # theirs are dequantised
    assert (
        "/net/head/* float" in parse_manifest(out / "dice_finder.json").raw["quantised"]["format"]
    )
    with pytest.raises(SystemExit, match="/net/nowhere/"):
        quantise_finder(FLOAT, tmp_path / "never", calibration, ("/net/nowhere/",))


def test_a_setup_can_adapt_the_int8_finders_heat(
    quantised: tuple[Path, list[LabelledImage]], tmp_path: Path
) -> None:
    # the features file (issue 24's finder head) is made from an int8 finder as from the
    # float one: its head stays a float 1x1 Conv over the same features, maps unchanged
    out, _ = quantised
    folder = tmp_path / "int8"
    shutil.copytree(out, folder)
    assert make_features(["--models", str(folder)]) == 0
    finder = DiceFinder.load(folder)
    adapted = AdaptedFinder.load(finder, None, folder)
    image = read_image(photos(tmp_path, 2)[-1].path)
    batch, _ = finder.prepare(image, finder.long_side)
    maps, features = adapted.run_both(batch)
    assert np.array_equal(maps, finder.model.run(batch)[0][0])
    assert features.shape[0] == 24 and features.shape[1:] == maps.shape[1:]


def test_the_shipped_finder_is_int8_from_the_kept_float_source_and_is_not_quantised_again(
    tmp_path: Path,
) -> None:
    shipped = parse_manifest(MODELS / "dice_finder.json").raw["quantised"]
    assert shipped["from_sha256"] == sha256_of(FLOAT / FINDER_FILE)
    with pytest.raises(SystemExit, match="int8 already"):
        quantise_finder(MODELS, tmp_path / "twice", photos(tmp_path, 1))
    assert not (tmp_path / "twice" / FINDER_FILE).exists()
