"""The dice finder with a second output, ``features``: the stride-4 features its last 1x1
convolution (the heads) reads, so that a setup can fit the heads in numpy (issue 24,
companion.vision.adapt_finder). The shipped file is not touched: the edit is written as a
file of its own beside it (models/dice_finder_features.onnx and .json), with the same
weights and every node unchanged, one Identity node from the final Conv's input to the new
output; its ``maps`` are the shipped finder's to the bit (tests/vision/test_adapt_finder.py).
Each of the two files is written in one rename (a unique temporary file, synced); a crash
between them leaves a manifest whose sha256 is not the .onnx's, which the load checks
refuse and `features_current` reports, so a caller (bench/adapt.py) makes them again.

    .venv/bin/python -m models.recipe.finder_features   # writes models/dice_finder_features.*
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import onnx
from onnx import helper

from companion.vision.adapt_files import atomic_write
from companion.vision.model import sha256_of

MAPS = "maps"
FEATURES = "features"
SOURCE = "dice_finder"
TARGET = "dice_finder_features"


class GraphError(ValueError):
    """A graph that is not the finder's documented shape."""


def head_conv(graph: onnx.GraphProto) -> onnx.NodeProto:
    """The last Conv before ``maps``: 1x1, six output channels (the heads)."""
    convs = [n for n in graph.node if n.op_type == "Conv"]
    if not convs:
        raise GraphError("no Conv node")
    last = convs[-1]
    weight = next((w for w in graph.initializer if w.name == last.input[1]), None)
    if weight is None or list(weight.dims)[0] != 6 or list(weight.dims)[2:] != [1, 1]:
        raise GraphError("the last Conv is not the 1x1 six-channel head")
    return last


def with_features_output(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """A copy of ``model`` with ``features`` (batch x C x H/4 x W/4) after ``maps``, and C."""
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    graph = edited.graph
    conv = head_conv(graph)
    weight = next(w for w in graph.initializer if w.name == conv.input[1])
    channels = int(weight.dims[1])
    dims = [d.dim_param or d.dim_value for d in graph.output[0].type.tensor_type.shape.dim]
    graph.node.append(helper.make_node("Identity", [conv.input[0]], [FEATURES], name=FEATURES))
    shape = [dims[0], channels, dims[2], dims[3]]
    graph.output.append(helper.make_tensor_value_info(FEATURES, onnx.TensorProto.FLOAT, shape))
    onnx.checker.check_model(edited)
    return edited, channels


def features_manifest(shipped: dict[str, object], channels: int, sha: str) -> dict[str, object]:
    """The shipped manifest with the second output declared and where it came from."""
    out = dict(shipped)
    declared = shipped["outputs"]
    outputs: dict[str, object] = dict(declared) if isinstance(declared, dict) else {}
    outputs["names"] = [MAPS, FEATURES]
    outputs["shapes"] = {
        MAPS: ["batch", 6, "height", "width"],
        FEATURES: ["batch", channels, "height", "width"],
    }
    outputs["meaning"] = str(outputs.get("meaning", "")) + (
        f"; features: batch x {channels} x H/4 x W/4, the stride-4 features the heads (one 1x1 "
        "convolution) read: maps = heads(features), heat through a sigmoid"
    )
    out["outputs"] = outputs
    out["derived_from"] = {
        "file": f"{SOURCE}.onnx",
        "version": shipped["version"],
        "sha256": shipped["sha256"],
        "edit": "models/recipe/finder_features.py added the features output (one Identity "
        "node from the last Conv's input to a new graph output); weights and every other node "
        "unchanged, maps identical",
    }
    out["sha256"] = sha
    return out


def features_current(models: Path) -> bool:
    """Whether ``models`` holds a features file and manifest that belong together and to
    the finder beside them: both files there, the manifest's sha256 the .onnx's, its
    ``derived_from.sha256`` the finder's (its manifest's and its file's)."""
    target, manifest_path = models / f"{TARGET}.onnx", models / f"{TARGET}.json"
    source, source_manifest = models / f"{SOURCE}.onnx", models / f"{SOURCE}.json"
    if not all(p.is_file() for p in (target, manifest_path, source, source_manifest)):
        return False
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        shipped = json.loads(source_manifest.read_text(encoding="utf-8"))
        derived = manifest["derived_from"]["sha256"]
        return bool(
            manifest["sha256"] == sha256_of(target)
            and derived == shipped["sha256"] == sha256_of(source)
        )
    except (ValueError, KeyError, TypeError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    edited, channels = with_features_output(onnx.load(str(args.models / f"{SOURCE}.onnx")))
    target = args.models / f"{TARGET}.onnx"
    data = edited.SerializeToString()
    shipped = json.loads((args.models / f"{SOURCE}.json").read_text(encoding="utf-8"))
    manifest = features_manifest(shipped, channels, hashlib.sha256(data).hexdigest())
    # each file in one rename, the .onnx first: a crash between the two leaves a manifest
    # that does not match the .onnx, which the load checks (and features_current) refuse
    atomic_write(target, data)
    atomic_write(args.models / f"{TARGET}.json", (json.dumps(manifest, indent=1) + "\n").encode())
    print(f"wrote {target} ({FEATURES}: {channels} channels), sha256 {manifest['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
