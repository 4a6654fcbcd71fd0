"""Classify stage: read the top face of every found die with the pip-classifier ONNX model.

Each die is cropped as a square of ``crop_margin`` x its side around its centre, turned by
the box angle so its edges are upright, resized to the manifest's input size and
normalised as the manifest says; all crops of a frame go through the model as one batch.
Labels are "1".."6" and "unreadable" (cocked, tilted, half-hidden, shadowed or no die):
an unreadable die gets value None and the flag "unreadable" instead of a guess, and a
reading below the manifest's confidence threshold gets the flag "low_confidence".

A die read with less than that confidence gets a second look: its crop turned by 90, 180
and 270 degrees and mirrored (a face's pip count does not change under any of the eight),
all eight views averaged. Only the unsure dice pay for it, so a frame of clearly read dice
costs one small batch.

The manifest's ``confidence`` map (companion.vision.confidence) turns the raw top
probability into the probability of being right; the pipeline applies it after the peak
rule (`pipeline.calibrate`): `read` itself gives the raw probability.

A classifier whose manifest declares the output ``embedding`` (1.3.1 on) also gives each
crop's pooled features before the final linear layer, from the same batch call: what the
adaptation to a new table builds on. They are the features of the crop as cut (the first
view), never averaged over the second look, so that one die always gives like features."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.confidence import CONFIDENCE_KEY, ConfidenceError, ConfidenceMap
from companion.vision.finder import as_bgr_uint8
from companion.vision.model import ModelError, OnnxModel, default_models_dir
from companion.vision.types import UNREADABLE, DieBox, DieReading

logger = logging.getLogger(__name__)

CLASSIFIER_FILE = "pip_classifier.onnx"
LOW_CONFIDENCE = "low_confidence"
EXPECTED_LABELS = ("1", "2", "3", "4", "5", "6", UNREADABLE)
PROBABILITIES_OUTPUT = "probabilities"
EMBEDDING_OUTPUT = "embedding"
# the second look at a die for its confidence: a crop of this many times its side (the
# first is ``crop_margin``, 1.3): the die framed with more of the table around it
WIDE_MARGIN = 1.6

Reading = tuple[int | None, float, tuple[str, ...]]


@dataclass(frozen=True)
class Classified:
    """One batch of crops read: N x 7 probabilities (second look applied) and, when the
    model has the output, N x D embeddings (None otherwise); ``confidence``: N raw
    confidences where a die's is not its top probability (a setup's value head that has
    seen too few dice of a die's two likeliest faces: companion.vision.adapt), None where
    every die's is."""

    probabilities: np.ndarray
    embeddings: np.ndarray | None
    confidence: np.ndarray | None = None
    # with ``looks``: N x 8 x 7 probabilities of the eight symmetric views (view 0 the crop
    # as cut) and N x 7 of the crop at the second margin (`PipClassifier.wide_margin`)
    views: np.ndarray | None = None
    wide: np.ndarray | None = None

    def with_rows(self, rows: np.ndarray, other: Classified) -> Classified:
        """These dice, those at ``rows`` as ``other`` read them (one row of ``other`` per
        row named, in order): every per-die array both readings have; the embeddings stay
        these (they say which net read the die)."""
        probabilities = _spliced(self.probabilities, rows, other.probabilities)
        assert probabilities is not None
        return Classified(
            probabilities,
            self.embeddings,
            _spliced(self.confidence, rows, other.confidence),
            _spliced(self.views, rows, other.views),
            _spliced(self.wide, rows, other.wide),
        )


def _spliced(
    mine: np.ndarray | None, rows: np.ndarray, theirs: np.ndarray | None
) -> np.ndarray | None:
    if mine is None or theirs is None:
        return mine
    out = mine.copy()
    out[rows] = theirs
    return out


def crop_square(
    image: np.ndarray, cx: float, cy: float, side: float, size: int, angle: float = 0.0
) -> np.ndarray:
    """A ``size`` x ``size`` crop of the square of ``side`` pixels centred on (cx, cy),
    turned by ``angle`` degrees (DieBox convention) so that a die at that angle comes out
    with upright edges; pixels outside the image repeat the border. Training crops are
    made with this same function, so training and runtime frame dice alike."""
    scale = size / max(side, 1e-3)
    matrix = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    matrix[0, 2] += size / 2 - cx
    matrix[1, 2] += size / 2 - cy
    return cv2.warpAffine(
        image,
        matrix,
        (size, size),
        flags=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )


def crop_die(image_bgr: np.ndarray, box: DieBox, margin: float, size: int) -> np.ndarray:
    """The die's square (``margin`` x its side) turned upright, as size x size BGR."""
    return crop_square(image_bgr, box.cx, box.cy, max(box.w, box.h, 1.0) * margin, size, box.angle)


def symmetric_views(crops: np.ndarray) -> np.ndarray:
    """The other seven views of N x H x W x C square crops under the square's symmetries
    (turned by 90, 180, 270 degrees; mirrored and turned by 0, 90, 180, 270), stacked view
    by view: 7N crops."""
    mirrored = crops[:, :, ::-1]
    views = [np.rot90(crops, k, axes=(1, 2)) for k in (1, 2, 3)]
    views += [np.rot90(mirrored, k, axes=(1, 2)) for k in (0, 1, 2, 3)]
    return np.ascontiguousarray(np.concatenate(views))


class PipClassifier:
    """Reads dice values from found boxes; see the module docstring."""

    def __init__(self, model: OnnxModel) -> None:
        manifest = model.manifest
        if manifest.labels != EXPECTED_LABELS:
            raise ModelError(
                f"{model.path}: labels {manifest.labels} are not the expected {EXPECTED_LABELS}"
            )
        names = manifest.output_names
        if PROBABILITIES_OUTPUT not in names:
            raise ModelError(f"{model.path}: outputs {names} lack {PROBABILITIES_OUTPUT!r}")
        self.model = model
        self.probabilities_index = names.index(PROBABILITIES_OUTPUT)
        self.embedding_index = names.index(EMBEDDING_OUTPUT) if EMBEDDING_OUTPUT in names else None
        self.size = manifest.input.size
        self.margin = float(manifest.option("crop_margin", 1.3))
        self.min_confidence = float(manifest.option("min_confidence", 0.7))
        self.second_look_below = float(manifest.option("second_look_below", self.min_confidence))
        # the second crop margin of the independent looks (companion.vision.confidence)
        self.wide_margin = float(manifest.option("wide_margin", WIDE_MARGIN))
        # raw top probability -> probability of being right (None: the manifest has none)
        self.confidence_map: ConfidenceMap | None = None
        if CONFIDENCE_KEY in manifest.raw:
            try:
                self.confidence_map = ConfidenceMap.from_json(manifest.raw[CONFIDENCE_KEY])
            except ConfidenceError as exc:
                raise ModelError(f"{model.path}: manifest '{CONFIDENCE_KEY}': {exc}") from exc

    @classmethod
    def load(
        cls, models_dir: Path | None = None, *, intra_op_num_threads: int = 1
    ) -> PipClassifier:
        """Load and check models_dir/pip_classifier.onnx (default: the repo's models/)."""
        directory = models_dir if models_dir is not None else default_models_dir()
        model = OnnxModel.load(
            directory / CLASSIFIER_FILE, intra_op_num_threads=intra_op_num_threads
        )
        return cls(model)

    def crops(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox], margin: float | None = None
    ) -> np.ndarray:
        """N x H x W x 3 uint8 crops in the model's colour order (``margin`` x the die's
        side; default the manifest's crop margin)."""
        height, width = self.size
        margin = self.margin if margin is None else margin
        crops = np.stack([crop_die(image_bgr, box, margin, width) for box in boxes])
        if height != width:
            crops = np.stack([cv2.resize(c, (width, height)) for c in crops])
        if self.model.manifest.input.colour_order == "RGB":
            crops = crops[..., ::-1]
        return crops

    def classify(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox], looks: bool = False
    ) -> Classified:
        """N x 7 class probabilities ("1".."6", "unreadable") and the embeddings: one
        batch, then the second look (module docstring) for the dice read under
        ``second_look_below``. With ``looks`` every die's eight views and its crop at the
        second margin go through in that one batch (9N crops), and the second look reuses
        them: the probabilities are the same as without."""
        crops = self.crops(image_bgr, boxes)
        if looks:
            return self._classify_looks(image_bgr, boxes, crops)
        outputs = self.model.run(self.model.normalise(crops))
        probabilities = outputs[self.probabilities_index]
        embeddings = None if self.embedding_index is None else outputs[self.embedding_index]
        unsure = np.flatnonzero(probabilities.max(axis=1) < self.second_look_below)
        if len(unsure):
            views = symmetric_views(crops[unsure])
            others = self.model.run(self.model.normalise(views))[self.probabilities_index]
            others = others.reshape(-1, len(unsure), probabilities.shape[1])
            probabilities[unsure] = (probabilities[unsure] + others.sum(axis=0)) / (1 + len(others))
        return Classified(probabilities, embeddings)

    def _classify_looks(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox], crops: np.ndarray
    ) -> Classified:
        count = len(crops)
        wide = self.crops(image_bgr, boxes, self.wide_margin)
        batch = np.concatenate([crops, symmetric_views(crops), wide])
        outputs = self.model.run(self.model.normalise(batch))
        everything = outputs[self.probabilities_index]
        # views[k, v]: die k seen in view v (view 0 as cut, then symmetric_views' order)
        views = np.ascontiguousarray(everything[: 8 * count].reshape(8, count, -1).swapaxes(0, 1))
        probabilities = views[:, 0].copy()
        unsure = probabilities.max(axis=1) < self.second_look_below
        probabilities[unsure] = views[unsure].mean(axis=1)
        embeddings = None
        if self.embedding_index is not None:
            embeddings = outputs[self.embedding_index][:count]
        return Classified(probabilities, embeddings, None, views, everything[8 * count :])

    def probabilities(self, image_bgr: np.ndarray, boxes: Sequence[DieBox]) -> np.ndarray:
        """N x 7 class probabilities, second look applied (`classify`)."""
        return self.classify(image_bgr, boxes).probabilities

    def read(self, image_bgr: np.ndarray, boxes: Sequence[DieBox]) -> list[Reading]:
        """Per box: (value 1-6 or None, confidence 0..1, flags)."""
        return self.read_with_embeddings(image_bgr, boxes)[0]

    def read_with_embeddings(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox]
    ) -> tuple[list[Reading], np.ndarray | None]:
        """`read` and the N x D embeddings of the same batch (None when the model has no
        embedding output, or the picture is not one)."""
        if not boxes:
            return [], None
        image = as_bgr_uint8(image_bgr)
        if image is None:
            return [(None, 0.0, (UNREADABLE,)) for _ in boxes], None
        classified = self.classify(image, boxes)
        sure = classified.confidence
        readings = [
            self.reading(probs, None if sure is None else float(sure[k]))
            for k, probs in enumerate(classified.probabilities)
        ]
        return readings, classified.embeddings

    def vouched(self, readings: tuple[DieReading, ...]) -> tuple[DieReading, ...]:
        """Calibrated readings (pipeline.calibrate) as this classifier can vouch for them:
        unchanged, since the manifest's map was fitted for this very head (a setup's adapted
        head caps them: companion.vision.adapt.AdaptedClassifier.vouched)."""
        return readings

    def reading(self, probabilities: np.ndarray, confidence: float | None = None) -> Reading:
        """One die's (value, confidence, flags) from its 7 probabilities; its confidence
        is its top probability unless given (`Classified.confidence`)."""
        best = int(np.argmax(probabilities))
        confidence = float(probabilities[best]) if confidence is None else confidence
        flags: list[str] = []
        value: int | None = best + 1
        if EXPECTED_LABELS[best] == UNREADABLE:
            value = None
            flags.append(UNREADABLE)
        if confidence < self.min_confidence:
            flags.append(LOW_CONFIDENCE)
        return value, confidence, tuple(flags)
