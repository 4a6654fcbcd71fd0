"""The shipped int8 files read alike on every x86 CPU: no weight can make onnxruntime's
int8 kernels saturate where the CPU has no VNNI (models/recipe/quantise.py, WEIGHTS).

Without VNNI (AVX2, AVX-512 before VNNI) those kernels add pairs of uint8 x int8 products in
16 bits with saturation. Classifier 2.0.1 and finder 1.7.2 stored full-range int8 weights
and, on such a CPU, counted 529 pooled dice wrong against 213 on VNNI cores
(models/README.md, "The int8 files on a CPU without VNNI"). Weights in 7 bits keep every
pair under 32767 (255 x 64 x 2 = 32640), so the sums are exact on any CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from companion.vision.model import default_models_dir

SHIPPED = ("dice_finder.onnx", "dice_finder_features.onnx", "pip_classifier.onnx")
MAX_SAFE_WEIGHT = 64  # |w| <= 64: 255 x 64 x 2 < 32767


def quantised_weights(path: Path) -> dict[str, np.ndarray]:
    """The 8-bit tensors a file's DequantizeLinear nodes turn into weights (by name)."""
    model = onnx.load(str(path))
    tensors = {t.name: t for t in model.graph.initializer}
    weights = {}
    for node in model.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in tensors:
            continue
        tensor = tensors[node.input[0]]
        if tensor.data_type in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8):
            weights[tensor.name] = numpy_helper.to_array(tensor)
    return weights


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_int8_weights_cannot_saturate_without_vnni(name: str) -> None:
    weights = quantised_weights(default_models_dir() / name)
    assert weights, f"{name}: no 8-bit weights found (not an int8 file any more?)"
    # uint8 weights are widened to 16 bits before they multiply: safe at any value
    signed = {k: v for k, v in weights.items() if v.dtype == np.int8}
    too_big = {k: int(np.abs(v.astype(np.int16)).max()) for k, v in signed.items()}
    too_big = {k: v for k, v in too_big.items() if v > MAX_SAFE_WEIGHT}
    assert not too_big, f"{name}: weights beyond 7 bits (saturate without VNNI): {too_big}"


def test_the_check_sees_full_range_weights(tmp_path: Path) -> None:
    """The check above can fail: a file with a full-range int8 weight is caught."""
    weight = numpy_helper.from_array(np.array([[-128, 5], [127, 0]], np.int8), "w_q")
    scale = numpy_helper.from_array(np.array(0.1, np.float32), "w_scale")
    node = onnx.helper.make_node("DequantizeLinear", ["w_q", "w_scale"], ["w"])
    graph = onnx.helper.make_graph(
        [node], "g", [], [onnx.helper.make_tensor_value_info("w", onnx.TensorProto.FLOAT, None)],
        [weight, scale],
    )  # fmt: skip
    path = tmp_path / "full.onnx"
    onnx.save(onnx.helper.make_model(graph), str(path))
    found = quantised_weights(path)
    assert int(np.abs(found["w_q"].astype(np.int16)).max()) == 128 > MAX_SAFE_WEIGHT
