"""An int8 copy of an exported finder or classifier, for speed on a table's CPU.

    .venv/bin/python -m models.recipe.quantise --finder DIR --out DIR [--photos 48]
    .venv/bin/python -m models.recipe.quantise --classifier DIR --out DIR [--photos 48]

The lite0 finder (models/recipe/lite_finder.py) reads a 512x288 input in about 14 ms on
one thread against the small finder's 5 ms, which puts the read of a resting frame over
its 20 ms target; onnxruntime's static quantisation (QDQ, int8 weights per channel, uint8
activations) runs it in about 8.5 ms on this machine's VNNI cores. The activation ranges
are calibrated on photos of the training part only (never a calibration or validation
part), prepared exactly as the finder prepares a frame. The last convolution (the heads)
stays float, so the centre heat, sizes and offsets keep their precision. The manifest is
the source's with the quantisation recorded and the new file's sha256; its peak rule is
re-chosen by the judging that follows (`bench/model_pairs.py`), like any candidate's.

The wide classifier (`--classifier-net wide`, four times the small one's multiply-adds)
reads six dice in 6.3 ms on one thread against the small one's 1.9, which puts a frame's
read over 20 ms; its int8 copy reads them in 2.2 ms. Its activation ranges come from the
crops of the training photos' labelled dice, cut as the classifier cuts a found die; its
last layer (the Gemm from the embedding to the seven classes) stays float, as the finder's
heads do.

The weights are stored so that the file reads alike on every x86 CPU (`--weights`, WEIGHTS
below; default 7-bit int8): the files up to classifier 2.0.1 and finder 1.7.2 stored
full-range int8 weights and, on a CPU without VNNI, read 529 pooled dice wrong against 213
(models/README.md, "The int8 files on a CPU without VNNI")."""

from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.datasets import LabelledImage, load_split
from companion.vision.finder import FINDER_FILE, DiceFinder
from companion.vision.model import parse_manifest, save_manifest, sha256_of
from companion.vision.types import DieBox

logger = logging.getLogger("quantise")

CLASSIFIER_FLOAT_TAIL = "the last Gemm (embedding -> classes) and the Softmax float"


def calibration_photos(images: tuple[LabelledImage, ...], count: int) -> list[LabelledImage]:
    """``count`` training photos spread evenly over the list (its folders in turn)."""
    if not images:
        raise SystemExit("no training photos to calibrate the quantisation on")
    step = max(1, len(images) // count)
    return list(images[::step][:count])


class Inputs(CalibrationDataReader):
    """The calibration batches onnxruntime asks for, one at a time, under the model's
    input name."""

    def __init__(self, batches: Iterator[np.ndarray], input_name: str) -> None:
        self.batches = batches
        self.input_name = input_name

    def get_next(self) -> dict[str, np.ndarray] | None:
        batch = next(self.batches, None)
        return None if batch is None else {self.input_name: batch}


def finder_batches(finder: DiceFinder, photos: list[LabelledImage]) -> Iterator[np.ndarray]:
    """The finder's first-pass input of each photo."""
    for image, _ in readable(photos):
        batch, _ = finder.prepare(image, finder.first_pass_long_side(max(image.shape[:2])))
        yield batch


def classifier_batches(
    classifier: PipClassifier, photos: list[LabelledImage]
) -> Iterator[np.ndarray]:
    """The classifier's input for each photo's labelled dice, cut as it cuts found dice (a
    photo without labelled dice gives none)."""
    for image, photo in readable(photos):
        boxes = [DieBox(d.cx, d.cy, d.side, d.side, 0.0) for d in photo.dice]
        if boxes:
            yield classifier.model.normalise(classifier.crops(image, boxes))


def readable(photos: list[LabelledImage]) -> Iterator[tuple[np.ndarray, LabelledImage]]:
    """(BGR pixels, photo) of each photo that decodes; the others are logged and left out."""
    for number, photo in enumerate(photos, start=1):
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        if number % 10 == 0:
            logger.info("calibration: %d/%d photos", number, len(photos))
        if image is None:
            logger.warning("%s: not readable, left out", photo.path)
            continue
        yield image, photo


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


def refuse_int8(source: Path) -> None:
    already = parse_manifest(source.with_suffix(".json")).raw.get("quantised")
    if already:
        # onnxruntime would write a graph that does not load (its QDQ node names collide)
        raise SystemExit(
            f"{source} is int8 already (quantised from sha256 {already['from_sha256'][:12]}): "
            "quantise its float source"
        )


# How the weights are stored. onnxruntime's int8 kernels on x86 without VNNI (AVX2, AVX-512
# before VNNI) add pairs of uint8 x int8 products in 16 bits with saturation: with full-range
# int8 weights (255 x 127 x 2 > 32767) a file reads differently there than on VNNI cores.
# "7bit": int8 weights in 7 bits (255 x 64 x 2 < 32767); "u8": uint8 weights, which those
# kernels widen to 16 bits first; "s8": full-range int8 (the files up to classifier 2.0.1
# and finder 1.7.2: right on VNNI cores only).
@dataclass(frozen=True)
class WeightStorage:
    """One way of storing the weights: onnxruntime's settings and the manifest's words."""

    weight_type: QuantType
    reduce_range: bool
    words: str


WEIGHTS = {
    "7bit": WeightStorage(
        QuantType.QInt8, True, "int8 weights in 7 bits per channel (no saturation without VNNI)"
    ),
    "u8": WeightStorage(
        QuantType.QUInt8, False, "uint8 weights per channel (no saturation without VNNI)"
    ),
    "s8": WeightStorage(QuantType.QInt8, False, "int8 weights per channel"),
}
DEFAULT_WEIGHTS = "7bit"


def quantised_format(weights: str, tail: str) -> str:
    """The manifest's words for how a file was quantised."""
    return (
        f"onnxruntime static quantisation, QDQ, {WEIGHTS[weights].words}, uint8 activations; {tail}"
    )


def quantise_file(
    source: Path,
    target: Path,
    inputs: CalibrationDataReader,
    keep_float: list[str],
    record: dict[str, str],
    weights: str = DEFAULT_WEIGHTS,
) -> None:
    """Write the int8 copy of ``source`` to ``target`` with its manifest: the source's with
    ``record`` as its "quantised" field (and the source's sha256)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    original = onnx.load(str(source))
    source, target = source.resolve(), target.resolve()
    # onnxruntime's pre-processing leaves scratch files in the working folder: run it in one
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
        prepared = Path(scratch) / "prepared.onnx"
        # symbolic shape inference cannot follow the dynamic height and width: skipped
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_static(
            str(prepared), str(target), inputs,
            quant_format=QuantFormat.QDQ, per_channel=True,
            activation_type=QuantType.QUInt8, nodes_to_exclude=keep_float,
            weight_type=WEIGHTS[weights].weight_type, reduce_range=WEIGHTS[weights].reduce_range,
        )  # fmt: skip
    quantised = onnx.load(str(target))
    del quantised.metadata_props[:]
    quantised.metadata_props.extend(original.metadata_props)  # the labels the loader checks
    onnx.save(quantised, str(target))
    manifest = parse_manifest(source.with_suffix(".json"))
    save_manifest(
        manifest.with_fields(quantised={"from_sha256": sha256_of(source), **record}), target
    )


def quantise_finder(
    source_dir: Path,
    out_dir: Path,
    photos: list[LabelledImage],
    keep_float: tuple[str, ...] = (),
    weights: str = DEFAULT_WEIGHTS,
) -> Path:
    """Write out_dir/dice_finder.onnx (int8) and its manifest; returns the file.
    ``keep_float``: name prefixes of nodes left float besides the last Conv."""
    source = source_dir / FINDER_FILE
    refuse_int8(source)
    finder = DiceFinder.load(source_dir)
    original = onnx.load(str(source))
    record = {
        "format": quantised_format(weights, "the last Conv (the heads) float")
        + "".join(f", nodes {prefix}* float" for prefix in keep_float),
        "calibration": f"{len(photos)} photos of the training part, first-pass input",
    }
    inputs = Inputs(finder_batches(finder, photos), original.graph.input[0].name)
    target = out_dir / FINDER_FILE
    quantise_file(source, target, inputs, float_nodes(original, keep_float), record, weights)
    return target


def quantise_classifier(
    source_dir: Path, out_dir: Path, photos: list[LabelledImage], weights: str = DEFAULT_WEIGHTS
) -> Path:
    """Write out_dir/pip_classifier.onnx (int8, its last Gemm float) and its manifest;
    returns the file."""
    source = source_dir / CLASSIFIER_FILE
    refuse_int8(source)
    classifier = PipClassifier.load(source_dir)
    target = out_dir / CLASSIFIER_FILE
    calibration = f"{len(photos)} photos of the training part, their labelled dice's crops"
    batches = classifier_batches(classifier, photos)
    quantise_classifier_file(source, target, batches, calibration, weights)
    return target


def quantise_classifier_file(
    source: Path,
    target: Path,
    batches: Iterable[np.ndarray],
    calibration: str,
    weights: str = DEFAULT_WEIGHTS,
) -> None:
    """A classifier file's int8 copy, the last Gemm (embedding -> classes) and the Softmax
    float (quantised, the probabilities came in steps of 1/255 and the logits in steps of
    their range over 255: the surest dice, on which a sure roll rests, tied), its
    activation ranges from ``batches`` (the classifier's input, as it reads), described in
    the manifest as ``calibration``: the one way both the shipped file and a setup's
    fine-tuned one (models/recipe/adapt_deep.py) are quantised."""
    original = onnx.load(str(source))
    heads = [node.name for node in original.graph.node if node.op_type in ("Gemm", "Softmax")]
    record = {
        "format": quantised_format(weights, CLASSIFIER_FLOAT_TAIL),
        "calibration": calibration,
    }
    inputs = Inputs(iter(batches), original.graph.input[0].name)
    quantise_file(source, target, inputs, heads, record, weights)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--finder", type=Path, help="folder with dice_finder.onnx")
    which.add_argument("--classifier", type=Path, help="folder with pip_classifier.onnx")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--photos", type=int, default=48)
    parser.add_argument(
        "--float", action="append", default=[], metavar="PREFIX",
        help="the finder only: keep the nodes whose names start with PREFIX float too "
        "(repeatable; e.g. /net/head/ for both head convolutions, /net/fuse4/ for the "
        "stride-4 fuse)",
    )  # fmt: skip
    parser.add_argument(
        "--weights", choices=sorted(WEIGHTS), default=DEFAULT_WEIGHTS,
        help=f"how the weights are stored (default {DEFAULT_WEIGHTS}; see WEIGHTS)",
    )  # fmt: skip
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    source = args.finder if args.finder is not None else args.classifier
    if source.resolve() == args.out.resolve():
        raise SystemExit("--out must be another folder: the float file is kept")
    if args.classifier is not None and args.float:
        raise SystemExit("--float names finder nodes: the classifier keeps its last Gemm float")
    photos = calibration_photos(load_split(args.data).train, args.photos)
    if args.finder is not None:
        target = quantise_finder(source, args.out, photos, tuple(args.float), args.weights)
        other = CLASSIFIER_FILE
    else:
        target = quantise_classifier(source, args.out, photos, args.weights)
        other = FINDER_FILE
    for path in (source / other, (source / other).with_suffix(".json")):
        if path.is_file() and not (args.out / path.name).exists():  # a pair folder stays a pair
            shutil.copy2(path, args.out / path.name)
    logger.info("wrote %s (%.2f MB)", target, target.stat().st_size / 1e6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
