"""The pip classifier's second output, ``embedding``: the pooled features of a crop before
the final linear layer (what the adaptation to a new table builds on, issue 15).

New exports (models/train.py, `nets.ClassifierExport`) have it natively. A classifier
exported before it (1.3.0) gets it by editing the graph: one Identity node from the input
of the final Gemm (the Softmax before ``probabilities`` reads that Gemm) to a new graph
output; no weight or other node changes, so its readings stay exactly the same.

    .venv/bin/python -m models.recipe.embedding models/pip_classifier.onnx

rewrites the file in place (a file that has the output already is left alone) and prints
its new sha256; the manifest beside it is then updated by hand or by `manifest_outputs`.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import onnx
from onnx import helper

PROBABILITIES = "probabilities"
EMBEDDING = "embedding"


class GraphError(ValueError):
    """A graph that is not the classifier's documented shape."""


QDQ = ("QuantizeLinear", "DequantizeLinear")  # an int8 file's pairs around a float tensor


def producer(graph: onnx.GraphProto, tensor: str) -> onnx.NodeProto | None:
    """The node that makes ``tensor``, looking through the QuantizeLinear / DequantizeLinear
    pairs an int8 file (models.recipe.quantise) puts around it."""
    node = next((n for n in graph.node if tensor in n.output), None)
    while node is not None and node.op_type in QDQ:
        source = node.input[0]
        node = next((n for n in graph.node if source in n.output), None)
    return node


def final_linear(graph: onnx.GraphProto) -> onnx.NodeProto:
    """The Gemm whose output the Softmax producing ``probabilities`` reads (in an int8
    file, through their quantise-dequantise pairs)."""
    softmax = producer(graph, PROBABILITIES)
    if softmax is None or softmax.op_type != "Softmax":
        raise GraphError(f"no Softmax node produces {PROBABILITIES!r}")
    gemm = producer(graph, softmax.input[0])
    if gemm is None or gemm.op_type != "Gemm":
        raise GraphError("the Softmax does not read a Gemm (the final linear layer)")
    return gemm


def embedding_size(graph: onnx.GraphProto) -> int:
    """The final linear layer's input width (its weight is out x in, transB = 1)."""
    gemm = final_linear(graph)
    weight = next((w for w in graph.initializer if w.name == gemm.input[1]), None)
    trans_b = next((a.i for a in gemm.attribute if a.name == "transB"), 0)
    if weight is None or len(weight.dims) != 2:
        raise GraphError("the final Gemm's weight is not a 2-d initializer")
    return int(weight.dims[1] if trans_b else weight.dims[0])


def with_embedding_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` with the ``embedding`` output (batch x features) added after
    ``probabilities``; a model that has it already comes back unchanged."""
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    graph = edited.graph
    if any(o.name == EMBEDDING for o in graph.output):
        return edited
    gemm = final_linear(graph)
    batch = graph.output[0].type.tensor_type.shape.dim[0].dim_param or "batch"
    # a native export (models/train.py) names the Gemm's input ``embedding`` itself: only
    # the graph output is missing then
    if gemm.input[0] != EMBEDDING:
        graph.node.append(
            helper.make_node("Identity", [gemm.input[0]], [EMBEDDING], name=EMBEDDING)
        )
    graph.output.append(
        helper.make_tensor_value_info(
            EMBEDDING, onnx.TensorProto.FLOAT, [batch, embedding_size(graph)]
        )
    )
    onnx.checker.check_model(edited)
    return edited


def without_embedding_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """The inverse of `with_embedding_output` (for checking an edit left all else alone)."""
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    graph = stripped.graph
    for k in reversed(range(len(graph.output))):
        if graph.output[k].name == EMBEDDING:
            del graph.output[k]
    for k in reversed(range(len(graph.node))):
        node = graph.node[k]
        if node.op_type == "Identity" and list(node.output) == [EMBEDDING]:
            del graph.node[k]
    return stripped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("onnx_file", type=Path)
    args = parser.parse_args(argv)
    model = onnx.load(str(args.onnx_file))
    edited = with_embedding_output(model)
    if edited == model:
        print(f"{args.onnx_file}: has its {EMBEDDING} output already")
        return 0
    onnx.save(edited, str(args.onnx_file))
    digest = hashlib.sha256(args.onnx_file.read_bytes()).hexdigest()
    print(f"{args.onnx_file}: {EMBEDDING} output added ({embedding_size(edited.graph)} wide)")
    print(f"sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
