"""The vision pipeline for one frame: check -> locate -> classify -> colour.

Each stage is a small function over the typed values of companion.vision.types, so the
pipeline reads top to bottom and each stage can be tested on stored images:

- `check_image`: any array -> BGR uint8 picture, or None with a problem note;
- `locate`: picture -> DieBoxes (the dice finder model);
- `drop_nested`, `drop_undersized`: boxes -> boxes without pips, specks or doubles
  taken for dice;
- `classify`: picture + boxes -> DieReadings with values (the pip classifier model);
- `confirm_weak`: readings -> readings without the finder peaks that its PeakRule does not
  keep once read (a weak or middling peak the classifier did not read as a face with
  enough confidence);
- `read_dice`: the four stages above in order (what the training recipe measures);
  `trace_dice` keeps each stage's output (where a missed die was lost);
- `take_looks`: readings -> the same readings, with the independent looks (eight views, a
  wide crop) of the dice that could reach the auto-apply threshold (a look map only);
- `calibrate`: readings -> the same readings, each confidence the probability that the die
  is read right (companion.vision.confidence; the classifier manifest's map);
- `colour_readings` (companion.vision.colour): readings -> colour names, and with a dice set
  the set die of each reading, extra dice and missing set dice.

`DiceReader.read` never raises on a bad picture: it returns an empty FrameReading whose
`problems` say what was wrong. Settling readings over several frames happens later, in the
caller (the camera loop), not here.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.colour import DiceSet, colour_readings, resolve_dice_set, to_lab
from companion.vision.confidence import UNFAMILIAR, ConfidenceMap
from companion.vision.finder import DiceFinder, PeakRule, as_bgr_uint8
from companion.vision.types import DieBox, DieReading, FrameReading

logger = logging.getLogger(__name__)

# Pictures smaller than this on a side cannot show a die of the supported sizes (>= 20 px).
MIN_SIDE = 16


def check_image(image: object) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """The picture as BGR uint8 (grey and BGRA converted), or None and why not."""
    if image is None:
        return None, ("no image",)
    if not isinstance(image, np.ndarray):
        return None, (f"not an image array ({type(image).__name__})",)
    if image.size == 0:
        return None, (f"empty image (shape {image.shape})",)
    picture = as_bgr_uint8(image)
    if picture is None:
        return None, (f"not a picture (shape {image.shape}, dtype {image.dtype})",)
    if min(picture.shape[:2]) < MIN_SIDE:
        h, w = picture.shape[:2]
        return None, (f"image too small to hold a die ({w}x{h})",)
    return picture, ()


def locate(finder: DiceFinder, picture: np.ndarray) -> list[DieBox]:
    """The finder stage: every die's box, strongest first, weak peaks included (the
    classifier confirms or drops them: `confirm_weak`)."""
    return finder.find(picture, include_weak=True)


def drop_nested(boxes: Sequence[DieBox]) -> list[DieBox]:
    """Two dice cannot overlap: a box whose centre lies inside a bigger box and that is
    much smaller (a pip or a face detail taken for a die), or that nearly coincides with
    a stronger box of similar size (the same die found twice), is dropped. Order kept."""
    kept: list[DieBox] = []
    by_size = sorted(boxes, key=lambda b: (-max(b.w, b.h), -b.score))
    for box in by_size:
        side = max(box.w, box.h)
        if not any(_covers(big, box, side) for big in kept):
            kept.append(box)
    keep_ids = {id(b) for b in kept}
    return [b for b in boxes if id(b) in keep_ids]


def drop_undersized(boxes: Sequence[DieBox]) -> list[DieBox]:
    """The dice on one table are of a size (one set, one camera distance): with three or
    more boxes, one under 0.4 x the typical side (the 75th percentile of the frame's box
    sides) is a pip or a speck taken for a die, and is dropped. Order kept."""
    if len(boxes) < 3:
        return list(boxes)
    typical = float(np.percentile([max(b.w, b.h) for b in boxes], 75))
    return [b for b in boxes if max(b.w, b.h) >= 0.4 * typical]


def _covers(big: DieBox, small: DieBox, small_side: float) -> bool:
    big_side = max(big.w, big.h)
    distance = math.hypot(big.cx - small.cx, big.cy - small.cy)
    if small_side < 0.6 * big_side:
        return distance < 0.5 * big_side  # inside the bigger die
    return distance < 0.35 * min(big_side, small_side)  # the same die twice


def classify(
    classifier: PipClassifier, picture: np.ndarray, boxes: Sequence[DieBox], looks: bool = False
) -> tuple[DieReading, ...]:
    """The classify stage: a value (or None), the classifier's raw confidence, flags, its
    probabilities and its embedding per box (one batch); with ``looks`` also each die's
    eight views and its crop at the second margin, in that same batch."""
    if not boxes:
        return ()
    classified = classifier.classify(picture, list(boxes), looks=looks)
    sure = classified.confidence
    readings = []
    for k, box in enumerate(boxes):
        given = None if sure is None else float(sure[k])
        value, confidence, flags = classifier.reading(classified.probabilities[k], given)
        readings.append(
            DieReading(
                where=box,
                value=value,
                confidence=confidence,
                flags=flags,
                embedding=None if classified.embeddings is None else classified.embeddings[k],
                probabilities=classified.probabilities[k],
                views=None if classified.views is None else classified.views[k],
                wide=None if classified.wide is None else classified.wide[k],
            )
        )
    return tuple(readings)


def confirm_weak(readings: Sequence[DieReading], rule: PeakRule) -> tuple[DieReading, ...]:
    """The readings the finder's peak rule keeps: sure peaks all stay (an unreadable sure
    peak is a cocked or hidden die, flagged, not dropped); the others only when the
    classifier read a face there with the confidence their band asks."""
    return tuple(r for r in readings if rule.keeps(r.where.score, r.value, r.confidence))


def calibrate(
    readings: Sequence[DieReading], confidence_map: ConfidenceMap | None
) -> tuple[DieReading, ...]:
    """The calibrate stage: each read die's confidence becomes the probability that it is
    read right (the classifier manifest's map; companion.vision.confidence). It runs after
    the peak rule, which is chosen on the raw probabilities. A die read as unreadable keeps
    the classifier's probability of "unreadable"; without a map nothing changes."""
    if confidence_map is None:
        return tuple(readings)
    if confidence_map.looks is not None:
        return calibrate_looks(readings, confidence_map)
    return tuple(
        r if r.value is None else dataclasses.replace(r, confidence=confidence_map(r.confidence))
        for r in readings
    )


def calibrate_for(
    classifier: PipClassifier, readings: Sequence[DieReading]
) -> tuple[DieReading, ...]:
    """`calibrate` with the classifier's own map, then no surer than the classifier vouches
    for (`PipClassifier.vouched`: a setup's adapted head is bounded by its folds). Every
    reader of calibrated dice goes through here: DiceReader and the benches alike."""
    return classifier.vouched(calibrate(readings, classifier.confidence_map))


def calibrate_looks(
    readings: Sequence[DieReading], confidence_map: ConfidenceMap
) -> tuple[DieReading, ...]:
    """`calibrate` for a map over the looks (companion.vision.confidence.LookModel): each
    read die's looks scored and mapped; a die whose embedding lies beyond the OOD
    threshold is flagged ``unfamiliar`` and its confidence capped (`OodModel.gate`). A die
    read without its looks (`take_looks` found they could change no decision, or a caller
    did not ask for them) gets `ConfidenceMap.without_looks_confidence`: the lower of the
    raw-probability map's confidence and the highest its looks could have given (0 when
    the manifest ships no raw map: never sure)."""
    looks = confidence_map.looks
    assert looks is not None
    read = [k for k, r in enumerate(readings) if r.value is not None]
    out = list(readings)
    if not read:
        return tuple(out)
    dice = [readings[k] for k in read]
    values = np.array([d.value for d in dice])
    raw = np.array([d.confidence for d in dice])
    peaks = np.array([d.where.score for d in dice])
    sides = np.array([max(d.where.w, d.where.h) for d in dice])
    embeddings = None
    if all(d.embedding is not None for d in dice):
        embeddings = np.stack([np.asarray(d.embedding) for d in dice])
    seen = np.array([d.views is not None and d.wide is not None for d in dice])
    confidence = confidence_map.without_looks_confidence(raw, values, peaks, sides, embeddings)
    if seen.any():
        with_looks = [d for d, s in zip(dice, seen, strict=True) if s]
        features = looks.features(
            raw[seen],
            values[seen],
            np.stack([np.asarray(d.views) for d in with_looks]),
            np.stack([np.asarray(d.wide) for d in with_looks]),
            peaks[seen],
            sides[seen],
            None if embeddings is None else embeddings[seen],
        )
        confidence[seen] = looks.confidence(features, confidence_map)
    ood = looks.ood_scores(embeddings, values)
    unfamiliar = looks.ood is not None and embeddings is not None
    for j, k in enumerate(read):
        flags = readings[k].flags
        if unfamiliar and looks.ood is not None and ood[j] > looks.ood.threshold:
            flags = (*flags, UNFAMILIAR)
        out[k] = dataclasses.replace(readings[k], confidence=float(confidence[j]), flags=flags)
    return tuple(out)


def take_looks(
    classifier: PipClassifier,
    picture: np.ndarray,
    readings: Sequence[DieReading],
    confidence_map: ConfidenceMap,
) -> tuple[DieReading, ...]:
    """The readings with their independent looks (eight views, the wide crop) taken, in one
    batch, for the dice whose looks could change a decision: those that could reach the
    auto-apply threshold (`ConfidenceMap.may_be_sure`; none while the manifest ships no
    threshold). Every other die is named by every question whatever its looks, so it keeps
    its first reading (`calibrate_looks` gives it the confidence without looks). Values and
    raw probabilities are the first reading's either way (`PipClassifier.classify`)."""
    read = [k for k, r in enumerate(readings) if r.value is not None]
    if not read or confidence_map.threshold is None:
        return tuple(readings)
    dice = [readings[k] for k in read]
    embeddings = None
    if all(d.embedding is not None for d in dice):
        embeddings = np.stack([np.asarray(d.embedding) for d in dice])
    may = confidence_map.may_be_sure(
        np.array([d.confidence for d in dice]),
        np.array([d.value for d in dice]),
        np.array([d.where.score for d in dice]),
        np.array([max(d.where.w, d.where.h) for d in dice]),
        embeddings,
    )
    chosen = [k for k, m in zip(read, may, strict=True) if m]
    if not chosen:
        return tuple(readings)
    seen = classifier.classify(picture, [readings[k].where for k in chosen], looks=True)
    assert seen.views is not None and seen.wide is not None
    out = list(readings)
    for j, k in enumerate(chosen):
        out[k] = dataclasses.replace(readings[k], views=seen.views[j], wide=seen.wide[j])
    return tuple(out)


class DiceReader:
    """Finder -> classifier -> colour (-> set assignment) for single frames."""

    def __init__(
        self, finder: DiceFinder, classifier: PipClassifier, dice_set: DiceSet | None = None
    ) -> None:
        self.finder = finder
        self.classifier = classifier
        self.dice_set = dice_set
        # dice read with their independent looks so far (`take_looks`; most frames need none)
        self.looks_taken = 0

    @classmethod
    def load(
        cls,
        models_dir: Path | None = None,
        dice_set: str | Path | DiceSet | None = None,
        threads: int = 1,
    ) -> DiceReader:
        """Load both models (checked against their manifests) and the dice set: a built-in
        name ("qwixx", "sixto"), a calibration file or a DiceSet. Raises ModelError or
        CalibrationError with a clear message when either is wrong."""
        finder = DiceFinder.load(models_dir, intra_op_num_threads=threads)
        classifier = PipClassifier.load(models_dir, intra_op_num_threads=threads)
        # OpenCV builds its Lab tables on the first conversion (about half a second):
        # pay that at start-up, not on the first frame
        to_lab(np.zeros((1, 1, 3), np.uint8))
        return cls(finder, classifier, resolve_dice_set(dice_set))

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        """Read one frame; never raises for a bad picture (empty reading + problem)."""
        started = time.perf_counter()
        picture, problems = check_image(image)
        height, width = _size_of(image)
        if picture is None:
            logger.info("frame %d not read: %s", frame_index, "; ".join(problems))
            return FrameReading(
                width,
                height,
                (),
                _ms(started),
                frame_index,
                problems,
                dice_set=self.dice_set.name if self.dice_set else None,
                missing=self.dice_set.colours if self.dice_set else (),
            )
        try:
            confidence_map = self.classifier.confidence_map
            readings = self._read_dice(picture, confidence_map)
            readings = calibrate_for(self.classifier, readings)
            readings, missing = colour_readings(picture, readings, self.dice_set)
        except Exception as exc:  # a model failure must not take the camera loop down
            logger.exception("frame %d: reading failed", frame_index)
            return FrameReading(
                width, height, (), _ms(started), frame_index, (f"reading failed: {exc}",)
            )
        return FrameReading(
            width=width,
            height=height,
            dice=readings,
            ms=_ms(started),
            frame_index=frame_index,
            problems=problems,
            dice_set=self.dice_set.name if self.dice_set else None,
            missing=tuple(self.dice_set.dice[j].colour for j in missing) if self.dice_set else (),
        )

    def _read_dice(
        self, picture: np.ndarray, confidence_map: ConfidenceMap | None
    ) -> tuple[DieReading, ...]:
        """`read_dice`, with the looks a look map scores taken only for the dice whose
        looks could change a decision (`take_looks`); a look map without a raw map for the
        other dice (an older manifest) gets every die's looks, as it was fitted."""
        if confidence_map is None or confidence_map.looks is None:
            return read_dice(picture, self.finder, self.classifier)
        if confidence_map.without_looks is None:
            return read_dice(picture, self.finder, self.classifier, looks=True)
        readings = read_dice(picture, self.finder, self.classifier)
        readings = take_looks(self.classifier, picture, readings, confidence_map)
        self.looks_taken += sum(r.views is not None for r in readings)
        return readings


def read_dice(
    picture: np.ndarray, finder: DiceFinder, classifier: PipClassifier, looks: bool = False
) -> tuple[DieReading, ...]:
    """The dice of one checked picture before colour: finder, box filters, classifier,
    peaks confirmed by the finder's PeakRule. The training recipe measures exactly this.
    ``looks``: the classifier's independent looks too (`classify`; same values)."""
    return trace_dice(picture, finder, classifier, looks).kept


@dataclass(frozen=True)
class DiceTrace:
    """What each stage of `read_dice` made of one picture, kept so that a die the
    pipeline missed can be traced to the stage that lost it (bench/vision_misses.py)."""

    located: tuple[DieBox, ...]  # the finder's peaks, one per die, weak ones included
    filtered: tuple[DieBox, ...]  # after drop_nested and drop_undersized
    readings: tuple[DieReading, ...]  # every filtered box, read
    kept: tuple[DieReading, ...]  # the readings the peak rule keeps: the dice
    floor: float  # the lowest peak score the finder stage let through (the rule's floor)


def trace_dice(
    picture: np.ndarray, finder: DiceFinder, classifier: PipClassifier, looks: bool = False
) -> DiceTrace:
    """`read_dice` with every stage's output kept."""
    located = tuple(locate(finder, picture))
    filtered = tuple(drop_undersized(drop_nested(located)))
    readings = classify(classifier, picture, filtered, looks) if filtered else ()
    rule = finder.peak_rule
    return DiceTrace(located, filtered, readings, confirm_weak(readings, rule), rule.floor)


def _size_of(image: object) -> tuple[int, int]:
    shape = getattr(image, "shape", None)
    if isinstance(shape, tuple) and len(shape) >= 2:
        return int(shape[0]), int(shape[1])
    return 0, 0


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
