"""The pip classifier's second output, ``embedding`` (the pooled features before the final
linear layer): declared by the manifest and checked at load, returned by PipClassifier
from the same batch call, carried by the pipeline's readings; adding it to a classifier
exported without it (models/recipe/embedding.py) changes no weight and no reading."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort  # type: ignore[import-untyped]
import pytest
from onnx import helper, numpy_helper

from companion.vision.classifier import EMBEDDING_OUTPUT, PipClassifier
from companion.vision.model import ModelError, default_models_dir
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieBox
from models.recipe.embedding import (
    GraphError,
    embedding_size,
    final_linear,
    with_embedding_output,
    without_embedding_output,
)
from tests.images import read_image

REPO = Path(__file__).resolve().parents[2]
CROPS = REPO / "tests" / "fixtures" / "crops"
FIXTURE_DIE_SIDE = 26.0  # as written by models/recipe/make_fixtures.py
SHIPPED = default_models_dir() / "pip_classifier.onnx"


@pytest.fixture(scope="module")
def classifier() -> PipClassifier:
    return PipClassifier.load()


def _frame_and_boxes() -> tuple[np.ndarray, list[DieBox]]:
    crops = [read_image(p) for p in sorted(CROPS.glob("*.png"))]
    frame = np.hstack(crops)
    boxes = [DieBox(20 + 40 * i, 20, FIXTURE_DIE_SIDE, FIXTURE_DIE_SIDE) for i in range(len(crops))]
    return frame, boxes


def _run(model: onnx.ModelProto, batch: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, {"image": batch}))


def test_the_manifest_declares_the_embedding_and_the_classifier_returns_it(
    classifier: PipClassifier,
) -> None:
    manifest = classifier.model.manifest
    assert manifest.output_names == ("probabilities", EMBEDDING_OUTPUT)
    width = manifest.output_shapes[EMBEDDING_OUTPUT][1]
    frame, boxes = _frame_and_boxes()
    readings, embeddings = classifier.read_with_embeddings(frame, boxes)
    assert embeddings is not None and embeddings.shape == (len(boxes), width)
    assert readings == classifier.read(frame, boxes)
    # the features of each crop as cut (one batch), whatever the second look did after
    crops = classifier.model.normalise(classifier.crops(frame, boxes))
    assert np.allclose(embeddings, classifier.model.run(crops)[1], atol=1e-6)
    assert len({tuple(np.round(e, 3)) for e in embeddings}) == len(boxes)  # not a constant


def test_probabilities_are_the_softmax_of_the_final_layer_over_the_embedding(
    classifier: PipClassifier,
) -> None:
    graph = onnx.load(str(SHIPPED)).graph
    gemm = final_linear(graph)
    weights = {w.name: numpy_helper.to_array(w) for w in graph.initializer}
    weight, bias = weights[gemm.input[1]], weights[gemm.input[2]]
    frame, boxes = _frame_and_boxes()
    probabilities, embeddings = classifier.model.run(
        classifier.model.normalise(classifier.crops(frame, boxes))
    )
    logits = embeddings @ weight.T + bias
    by_hand = np.exp(logits - logits.max(axis=1, keepdims=True))
    by_hand /= by_hand.sum(axis=1, keepdims=True)
    # an int8 file (models.recipe.quantise) keeps the final layer and the softmax float, on
    # the embedding output as given: the same arithmetic
    assert np.allclose(by_hand, probabilities, atol=1e-5)


def test_the_embedding_output_changes_no_reading_and_no_weight(classifier: PipClassifier) -> None:
    shipped = onnx.load(str(SHIPPED))
    stripped = without_embedding_output(shipped)
    assert [o.name for o in stripped.graph.output] == ["probabilities"]
    assert list(stripped.graph.initializer) == list(shipped.graph.initializer)
    frame, boxes = _frame_and_boxes()
    batch = classifier.model.normalise(classifier.crops(frame, boxes))
    (alone,) = _run(stripped, batch)
    both = _run(with_embedding_output(stripped), batch)
    assert np.array_equal(alone, both[0])
    assert np.array_equal(both[0], _run(shipped, batch)[0])
    derived = classifier.model.manifest.raw.get("derived_from") or {}
    if "embedding.py" in str(derived.get("edit", "")):  # a graph edited by the tool (1.3.1):
        # without the output it is the file it came from (a fine-tune, 1.4.0, is not)
        assert hashlib.sha256(stripped.SerializeToString()).hexdigest() == derived["sha256"]
        assert with_embedding_output(stripped) == shipped


def _tiny_classifier(softmax_input: str = "logits") -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    init = [
        numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "conv_w"),
        numpy_helper.from_array(rng.normal(size=(7, 4)).astype(np.float32), "fc_w"),
        numpy_helper.from_array(rng.normal(size=7).astype(np.float32), "fc_b"),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv_w"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", [softmax_input], ["probabilities"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("image", onnx.TensorProto.FLOAT, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, ["batch", 7])],
        init,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_adding_the_output_to_a_graph_gives_the_pooled_features() -> None:
    model = _tiny_classifier()
    edited = with_embedding_output(model)
    assert [o.name for o in edited.graph.output] == ["probabilities", EMBEDDING_OUTPUT]
    assert embedding_size(edited.graph) == 4
    assert with_embedding_output(edited) == edited  # once only
    batch = np.random.default_rng(1).normal(size=(3, 3, 8, 8)).astype(np.float32)
    probabilities, embedding = _run(edited, batch)
    assert embedding.shape == (3, 4)
    assert np.array_equal(probabilities, _run(model, batch)[0])
    conv = np.maximum(_run(_only_output(model, "relu"), batch)[0], 0)
    assert np.allclose(embedding, conv.mean(axis=(2, 3)), atol=1e-6)


def _only_output(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.output[:]
    copy.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return copy


def test_a_graph_without_the_final_linear_layer_is_refused() -> None:
    with pytest.raises(GraphError, match="does not read a Gemm"):
        with_embedding_output(_tiny_classifier(softmax_input="flat"))


def _copy(tmp_path: Path) -> Path:
    for suffix in (".onnx", ".json"):
        shutil.copy(SHIPPED.with_suffix(suffix), tmp_path / f"pip_classifier{suffix}")
    return tmp_path


def _edit(directory: Path, edit) -> None:  # type: ignore[no-untyped-def]
    path = directory / "pip_classifier.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    edit(body["outputs"])
    path.write_text(json.dumps(body), encoding="utf-8")


def test_a_manifest_that_does_not_declare_the_output_is_refused(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    _edit(directory, lambda o: (o.update(names=["probabilities"]), o.pop("shapes")))
    with pytest.raises(ModelError, match="model outputs .* != manifest"):
        PipClassifier.load(directory)


def test_a_wrong_embedding_width_in_the_manifest_is_refused(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    _edit(directory, lambda o: o["shapes"].update(embedding=["batch", 95]))
    with pytest.raises(ModelError, match="output 'embedding' shape"):
        PipClassifier.load(directory)


def test_the_pipeline_readings_carry_the_embedding() -> None:
    from companion.synth import DieSpec, render_scene

    reader = DiceReader.load()
    image, _ = render_scene(
        np.random.default_rng(3), 640, 480, dice=[DieSpec(v, "white", "black") for v in (1, 4)]
    )
    dice = reader.read(image).dice
    # the width the shipped manifest declares (96: the small net, 192: the wide one)
    width = reader.classifier.model.manifest.raw["outputs"]["shapes"]["embedding"][1]
    assert width in (96, 192)
    assert dice and all(d.embedding is not None and d.embedding.shape == (width,) for d in dice)
    assert "embedding" not in dice[0].to_json()
