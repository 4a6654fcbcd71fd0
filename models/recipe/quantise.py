"""An int8 copy of an exported finder, for speed on a table's CPU.

    .venv/bin/python -m models.recipe.quantise --finder DIR --out DIR [--photos 48]

The lite0 finder (models/recipe/lite_finder.py) reads a 512x288 input in about 14 ms on
one thread against the small finder's 5 ms, which puts the read of a resting frame over
its 20 ms target; onnxruntime's static quantisation (QDQ, int8 weights per channel, uint8
activations) runs it in about 8.5 ms on this machine's VNNI cores. The activation ranges
are calibrated on photos of the training part only (never a calibration or validation
part), prepared exactly as the finder prepares a frame. The last convolution (the heads)
stays float, so the centre heat, sizes and offsets keep their precision. The manifest is
the source's with the quantisation recorded and the new file's sha256; its peak rule is
re-chosen by the judging that follows (`bench/model_pairs.py`), like any candidate's."""

from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from companion.vision.datasets import LabelledImage, load_split
from companion.vision.finder import FINDER_FILE, DiceFinder
from companion.vision.model import parse_manifest, save_manifest, sha256_of

logger = logging.getLogger("quantise")


def calibration_photos(images: tuple[LabelledImage, ...], count: int) -> list[LabelledImage]:
    """``count`` training photos spread evenly over the list (its folders in turn)."""
    if not images:
        raise SystemExit("no training photos to calibrate the quantisation on")
    step = max(1, len(images) // count)
    return list(images[::step][:count])


class FinderInputs(CalibrationDataReader):
    """The finder's first-pass input of each photo, one at a time."""

    def __init__(self, finder: DiceFinder, photos: list[LabelledImage], input_name: str) -> None:
        self.batches = self._batches(finder, photos)
        self.input_name = input_name

    @staticmethod
    def _batches(finder: DiceFinder, photos: list[LabelledImage]) -> Iterator[np.ndarray]:
        for number, photo in enumerate(photos, start=1):
            image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
            if image is None:
                logger.warning("%s: not readable, left out", photo.path)
                continue
            long_side = finder.first_pass_long_side(max(image.shape[:2]))
            batch, _ = finder.prepare(image, long_side)
            if number % 10 == 0:
                logger.info("calibration: %d/%d photos", number, len(photos))
            yield batch

    def get_next(self) -> dict[str, np.ndarray] | None:
        batch = next(self.batches, None)
        return None if batch is None else {self.input_name: batch}


def last_conv(model: onnx.ModelProto) -> str:
    return [node.name for node in model.graph.node if node.op_type == "Conv"][-1]


def float_nodes(model: onnx.ModelProto, prefixes: tuple[str, ...]) -> list[str]:
    """The nodes kept float: the last Conv (the heads' outputs) and every node whose name
    starts with one of ``prefixes`` (e.g. ``/net/head/``: both head convolutions)."""
    named = [n.name for n in model.graph.node if any(n.name.startswith(p) for p in prefixes)]
    unknown = [p for p in prefixes if not any(n.startswith(p) for n in named)]
    if unknown:
        raise SystemExit(f"--float {unknown[0]}: no node of the finder's graph is named so")
    return sorted({last_conv(model), *named})


def quantise_finder(
    source_dir: Path, out_dir: Path, photos: list[LabelledImage], keep_float: tuple[str, ...] = ()
) -> Path:
    """Write out_dir/dice_finder.onnx (int8) and its manifest; returns the file.
    ``keep_float``: name prefixes of nodes left float besides the last Conv."""
    source = source_dir / FINDER_FILE
    finder = DiceFinder.load(source_dir)
    already = finder.model.manifest.raw.get("quantised")
    if already:
        # onnxruntime would write a graph that does not load (its QDQ node names collide)
        raise SystemExit(
            f"{source} is int8 already (quantised from sha256 {already['from_sha256'][:12]}): "
            "quantise its float source"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / FINDER_FILE
    original = onnx.load(str(source))
    source, target = source.resolve(), target.resolve()
    # onnxruntime's pre-processing leaves scratch files in the working folder: run it in one
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
        prepared = Path(scratch) / "prepared.onnx"
        # symbolic shape inference cannot follow the dynamic height and width: skipped
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared), str(target),
            FinderInputs(finder, photos, original.graph.input[0].name),
            quant_format=QuantFormat.QDQ, per_channel=True,
            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
            nodes_to_exclude=float_nodes(original, keep_float),
        )  # fmt: skip
    quantised = onnx.load(str(target))
    del quantised.metadata_props[:]
    quantised.metadata_props.extend(original.metadata_props)  # the labels the loader checks
    onnx.save(quantised, str(target))
    manifest = parse_manifest(source.with_suffix(".json"))
    record = {
        "from_sha256": sha256_of(source),
        "format": "onnxruntime static quantisation, QDQ, int8 weights per channel, "
        "uint8 activations; the last Conv (the heads) float"
        + "".join(f", nodes {prefix}* float" for prefix in keep_float),
        "calibration": f"{len(photos)} photos of the training part, first-pass input",
    }
    save_manifest(manifest.with_fields(quantised=record), target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--finder", type=Path, required=True, help="folder with dice_finder.onnx")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--photos", type=int, default=48)
    parser.add_argument(
        "--float", action="append", default=[], metavar="PREFIX",
        help="keep the nodes whose names start with PREFIX float too (repeatable; e.g. "
        "/net/head/ for both head convolutions, /net/fuse4/ for the stride-4 fuse)",
    )  # fmt: skip
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if args.finder.resolve() == args.out.resolve():
        raise SystemExit("--out must be another folder: the float finder is kept")
    photos = calibration_photos(load_split(args.data).train, args.photos)
    target = quantise_finder(args.finder, args.out, photos, tuple(args.float))
    for name in ("pip_classifier.onnx", "pip_classifier.json"):  # a pair folder stays a pair
        if (args.finder / name).is_file() and not (args.out / name).exists():
            shutil.copy2(args.finder / name, args.out / name)
    logger.info("wrote %s (%.2f MB)", target, target.stat().st_size / 1e6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
