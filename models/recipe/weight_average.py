"""A model whose weights lie between a base model and a model continued from it.

    .venv/bin/python -m models.recipe.weight_average --base DIR --tuned DIR --share 0.5 \
        --out DIR [--model pip_classifier]
    .venv/bin/python -m models.recipe.weight_average --points DIR DIR DIR ... \
        --out DIR [--model dice_finder]

The second form is the equal weight mean of several end points of one trajectory (the
lite0 finder's stages: models/README.md, "Stage 26 result"), in one step and with every
point's sha256 recorded, where chaining the first form needs shares of 1/2, 1/3, 1/4 ...
and records only the last two files.

Every classifier continued from 1.4.0 on rune55-webcams and the fancy renders read the
validation parts better and the measure-only casino dice worse (models/README.md, "Stage
21 result"): the continuation learns what the new data shows and forgets some of what made
the base robust on dice it never saw. Averaging the weights of a fine-tuned net with the
net it started from keeps much of the gain on the new data and gives back robustness
under a shift of distribution (Wortsman et al. 2022, "Robust fine-tuning of zero-shot
models", weight-space ensembles), for the cost of nothing at reading time: it is one net
of the same graph.

That is possible here only when both files hold the same graph: a continuation from an
exported file trains the folded net (BatchNorm folded into the convolutions and frozen,
`recipe/from_onnx.py`), so its export has the base's nodes and initialisers, name for name
and shape for shape. Anything else is refused. ``share`` is the tuned model's weight
(0: the base, 1: the tuned model). The manifest is the tuned model's with the averaging
recorded and the new file's sha256; its confidence map and figures are refitted by the
judging that follows (`bench/model_pairs.py`), like any candidate's."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from companion.vision.model import parse_manifest, save_manifest, sha256_of

logger = logging.getLogger("weight_average")


class GraphMismatch(ValueError):
    """The two files are not the same net: their weights cannot be averaged."""


def same_graph(base: onnx.ModelProto, tuned: onnx.ModelProto) -> None:
    """Raise GraphMismatch naming the first difference of nodes or initialisers."""
    # every node as it is serialised: type, inputs, outputs and attributes (a Constant's
    # value among them), so two graphs that differ anywhere but their initialisers differ
    base_ops = [node.SerializeToString(deterministic=True) for node in base.graph.node]
    tuned_ops = [node.SerializeToString(deterministic=True) for node in tuned.graph.node]
    if base_ops != tuned_ops:
        raise GraphMismatch("the two graphs have different nodes")
    base_weights = {init.name: init for init in base.graph.initializer}
    tuned_weights = {init.name: init for init in tuned.graph.initializer}
    if set(base_weights) != set(tuned_weights):
        missing = sorted(set(base_weights) ^ set(tuned_weights))
        raise GraphMismatch(f"initialisers differ: {', '.join(missing[:5])}")
    for name, init in base_weights.items():
        other = tuned_weights[name]
        if tuple(init.dims) != tuple(other.dims) or init.data_type != other.data_type:
            raise GraphMismatch(
                f"initialiser {name}: {tuple(init.dims)} against {tuple(other.dims)}"
            )


def average(base: onnx.ModelProto, tuned: onnx.ModelProto, share: float) -> onnx.ModelProto:
    """The tuned graph with every float initialiser (1 - share) x base + share x tuned;
    integer initialisers (shapes, indices) must agree and are kept."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in 0..1, not {share}")
    same_graph(base, tuned)
    base_weights = {init.name: numpy_helper.to_array(init) for init in base.graph.initializer}
    averaged = onnx.ModelProto()
    averaged.CopyFrom(tuned)
    for init in averaged.graph.initializer:
        mine = numpy_helper.to_array(init)
        theirs = base_weights[init.name]
        if np.issubdtype(mine.dtype, np.floating):
            mixed = (
                (1.0 - share) * theirs.astype(np.float64) + share * mine.astype(np.float64)
            ).astype(mine.dtype)
        elif np.array_equal(mine, theirs):
            mixed = mine
        else:
            raise GraphMismatch(f"integer initialiser {init.name} differs between the two files")
        init.CopyFrom(numpy_helper.from_array(mixed, init.name))
    return averaged


def mean_of(points: list[onnx.ModelProto]) -> onnx.ModelProto:
    """The last point's graph with every float initialiser the equal weight mean of all
    points' (accumulated in float64); integer initialisers must agree and are kept."""
    if len(points) < 2:
        raise ValueError(f"a mean needs at least two points, not {len(points)}")
    for other in points[:-1]:
        same_graph(other, points[-1])
    sums: dict[str, np.ndarray] = {}
    for point in points:
        for init in point.graph.initializer:
            array = numpy_helper.to_array(init)
            if not np.issubdtype(array.dtype, np.floating):
                if init.name in sums and not np.array_equal(sums[init.name], array):
                    raise GraphMismatch(f"integer initialiser {init.name} differs between files")
                sums[init.name] = array
                continue
            sums[init.name] = sums.get(init.name, 0.0) + array.astype(np.float64)
    mean = onnx.ModelProto()
    mean.CopyFrom(points[-1])
    for init in mean.graph.initializer:
        array = numpy_helper.to_array(init)
        if np.issubdtype(array.dtype, np.floating):
            mixed = (sums[init.name] / len(points)).astype(array.dtype)
            init.CopyFrom(numpy_helper.from_array(mixed, init.name))
    return mean


def write_mean(point_dirs: list[Path], out_dir: Path, model: str) -> Path:
    """Write out_dir/MODEL.onnx, the equal weight mean of the points, and its manifest (the
    last point's, with every point's sha256 recorded); returns the file."""
    files = [folder / f"{model}.onnx" for folder in point_dirs]
    mean = mean_of([onnx.load(str(path)) for path in files])
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{model}.onnx"
    onnx.save(mean, str(target))
    manifest = parse_manifest(files[-1].with_suffix(".json"))
    record = {
        "points_sha256": [sha256_of(path) for path in files],
        "how": f"every float weight the equal weight mean of {len(files)} files; the same graph",
    }
    save_manifest(manifest.with_fields(weight_average=record), target)
    return target


def write_average(base_dir: Path, tuned_dir: Path, share: float, out_dir: Path, model: str) -> Path:
    """Write out_dir/MODEL.onnx and its manifest; returns the file."""
    base_file, tuned_file = base_dir / f"{model}.onnx", tuned_dir / f"{model}.onnx"
    averaged = average(onnx.load(str(base_file)), onnx.load(str(tuned_file)), share)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{model}.onnx"
    onnx.save(averaged, str(target))
    manifest = parse_manifest(tuned_file.with_suffix(".json"))
    record = {
        "base_sha256": sha256_of(base_file),
        "tuned_sha256": sha256_of(tuned_file),
        "share_of_tuned": share,
        "how": "every float weight (1 - share) x base + share x tuned; the same graph",
    }
    save_manifest(manifest.with_fields(weight_average=record), target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="folder of the model continued from")
    parser.add_argument("--tuned", type=Path, help="folder of the continued model")
    parser.add_argument("--share", type=float, help="the tuned model's weight, 0..1 (default 0.5)")
    parser.add_argument(
        "--points", type=Path, nargs="+", help="folders of two or more models: their equal mean"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", default="pip_classifier", help="file name without .onnx")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if args.points is not None and (args.base or args.tuned or args.share is not None):
        parser.error("give either --points (an equal mean) or --base, --tuned and --share")
    sources = args.points if args.points is not None else [args.base, args.tuned]
    if None in sources:
        parser.error("--base and --tuned are both needed (or --points)")
    if args.out.resolve() in {source.resolve() for source in sources}:
        raise SystemExit("--out must be another folder: every source is kept")
    try:
        if args.points is not None:
            target = write_mean(args.points, args.out, args.model)
        else:
            share = 0.5 if args.share is None else args.share
            target = write_average(args.base, args.tuned, share, args.out, args.model)
    except (GraphMismatch, ValueError) as error:
        raise SystemExit(f"cannot average {', '.join(map(str, sources))}: {error}") from error
    logger.info("wrote %s from %d files", target, len(sources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
