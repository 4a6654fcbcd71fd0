"""Calibrated confidence, and the decision to apply a roll without a tap.

**A die's confidence is a probability**: among dice read at confidence p, a fraction p is
read right (the die is there and shows the value read). The classifier's own top
probability is not that: the nets are trained with label smoothing on photos much like
the validation parts and are sure of dice they misread on other tables. `ConfidenceMap`
maps the raw top probability (after the second look) to the calibrated one: a monotone,
piecewise-linear map fitted by isotonic regression (`fit_confidence_map`, pool adjacent
violators) on the calibration part (companion.vision.datasets: held back from training;
never the validation parts, never the measure-only folders). It ships in the classifier's
manifest (``confidence``) with the auto-apply threshold, and the pipeline applies it
(`pipeline.calibrate`) after the peak rule, which is chosen on raw probabilities.

A found die that is no die at all (a false die) counts as read wrong when the map is
fitted, so the map also prices in the finder's mistakes at that raw probability.

**A roll's confidence** is the probability that every die in it is right: the product of
its dice's confidences when as many dice were found as the game expects, else 0 (a die
read as unreadable has confidence 0 here). A roll whose confidence clears the threshold is
applied without a tap (`decide_roll`); otherwise the question names only the fewest dice
that keep it from clearing it, the least sure first, each with its two likeliest values.
The threshold is chosen on the calibration part (`choose_threshold`) for at most one
wrong roll in 500 applied.

`expected_calibration_error` and `reliability_bins` measure a map on other photos
(bench/vision_eval.py draws the reliability diagram).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from companion.vision.types import DieReading

CONFIDENCE_KEY = "confidence"  # the manifest's field
ISOTONIC = "isotonic"
# at most one wrong roll in WRONG_ROLLS_PER applied (issue 14's target)
WRONG_ROLLS_PER = 500
RELIABILITY_BINS = 10


class ConfidenceError(ValueError):
    """A confidence map in a manifest that is not a monotone map of [0, 1] into [0, 1]."""


@dataclass(frozen=True)
class ConfidenceMap:
    """Raw top probability -> probability that the die is read right: straight lines
    between the points (``xs`` increasing, ``ys`` not decreasing), flat beyond the ends.
    ``threshold``: a roll of at least this confidence is applied without a tap (None: no
    roll is; an uncalibrated model makes no promise)."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    threshold: float | None = None
    method: str = ISOTONIC

    def __post_init__(self) -> None:
        if len(self.xs) != len(self.ys) or not self.xs:
            raise ConfidenceError("a confidence map needs as many xs as ys, at least one")
        if any(not 0.0 <= v <= 1.0 for v in (*self.xs, *self.ys)):
            raise ConfidenceError("a confidence map's points lie in [0, 1] x [0, 1]")
        if any(b <= a for a, b in zip(self.xs, self.xs[1:], strict=False)):
            raise ConfidenceError("a confidence map's xs must increase")
        if any(b < a for a, b in zip(self.ys, self.ys[1:], strict=False)):
            raise ConfidenceError("a confidence map's ys must not decrease (monotone)")
        if self.threshold is not None and not 0.0 < self.threshold <= 1.0:
            raise ConfidenceError("the auto-apply threshold lies in (0, 1]")

    def __call__(self, raw: float) -> float:
        return float(np.interp(raw, self.xs, self.ys))

    def apply(self, raw: np.ndarray) -> np.ndarray:
        """The map over an array of raw probabilities."""
        return np.asarray(np.interp(raw, self.xs, self.ys), np.float64)

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "points": [[round(x, 6), round(y, 6)] for x, y in zip(self.xs, self.ys, strict=True)],
            "auto_apply_threshold": self.threshold,
        }

    @classmethod
    def from_json(cls, data: object) -> ConfidenceMap:
        """The map of a manifest's ``confidence`` field; raises ConfidenceError."""
        if not isinstance(data, Mapping):
            raise ConfidenceError("'confidence' must be an object")
        try:
            points = [(float(x), float(y)) for x, y in data["points"]]
            threshold = data.get("auto_apply_threshold")
            return cls(
                tuple(x for x, _ in points),
                tuple(y for _, y in points),
                None if threshold is None else float(threshold),
                str(data.get("method", ISOTONIC)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfidenceError):
                raise
            raise ConfidenceError(
                f"'confidence' needs points [[raw, calibrated], ...] ({exc})"
            ) from exc


IDENTITY = ConfidenceMap((0.0, 1.0), (0.0, 1.0))


def fit_confidence_map(raw: Sequence[float], right: Sequence[bool]) -> ConfidenceMap:
    """The isotonic (monotone, least-squares) fit of ``right`` on ``raw`` by pool adjacent
    violators. Each pooled block's rate is shrunk towards 1/2 by half a die each way
    ((right + 0.5) / (n + 1)), so that a block with no error never claims certainty, and
    becomes one point at the block's mean raw probability."""
    if len(raw) != len(right) or not raw:
        raise ValueError("fit_confidence_map needs as many outcomes as probabilities, >= 1")
    values, inverse = np.unique(np.asarray(raw, np.float64), return_inverse=True)
    hits = np.bincount(inverse, weights=np.asarray(right, np.float64))
    counts = np.bincount(inverse).astype(np.float64)
    blocks: list[list[float]] = []  # [sum of x, sum of y, count], ties pooled first
    for x, y, n in zip(values, hits, counts, strict=True):
        blocks.append([x * n, y, n])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            last = blocks.pop()
            for k in range(3):
                blocks[-1][k] += last[k]
    points_x = [sum_x / count for sum_x, _, count in blocks]
    points_y = [
        float(v)
        for v in np.maximum.accumulate(
            [(sum_y + 0.5) / (count + 1.0) for _, sum_y, count in blocks]
        )
    ]
    return ConfidenceMap(
        tuple(float(np.clip(x, 0, 1)) for x in points_x),
        tuple(float(y) for y in points_y),
    )


@dataclass(frozen=True)
class ReliabilityBin:
    """Dice read at a confidence in [low, high): how many, their mean confidence and the
    share of them read right."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


def reliability_bins(
    confidence: Sequence[float], right: Sequence[bool], bins: int = RELIABILITY_BINS
) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1] (the last one closed)."""
    values = np.asarray(confidence, np.float64)
    outcomes = np.asarray(right, np.float64)
    index = np.minimum((values * bins).astype(int), bins - 1)
    out = []
    for k in range(bins):
        mask = index == k
        count = int(mask.sum())
        out.append(
            ReliabilityBin(
                k / bins,
                (k + 1) / bins,
                count,
                float(values[mask].mean()) if count else 0.0,
                float(outcomes[mask].mean()) if count else 0.0,
            )
        )
    return out


def expected_calibration_error(
    confidence: Sequence[float], right: Sequence[bool], bins: int = RELIABILITY_BINS
) -> float:
    """Sum over the bins of (share of dice in the bin) x |accuracy - mean confidence|."""
    total = len(confidence)
    if not total:
        return 0.0
    return sum(
        b.count / total * abs(b.accuracy - b.confidence)
        for b in reliability_bins(confidence, right, bins)
    )


# ----------------------------------------------------------------------------------------
# Rolls


def die_confidence(die: DieReading) -> float:
    """A die's probability of being right in a roll: its confidence, 0 when unreadable."""
    return 0.0 if die.value is None else float(die.confidence)


def roll_confidence(dice: Sequence[DieReading], expected: int | None = None) -> float:
    """The probability that every die of the roll is right: the product of the dice's
    confidences when ``expected`` dice were found (None: as many as found), else 0."""
    if expected is not None and len(dice) != expected:
        return 0.0
    return math.prod(die_confidence(d) for d in dice) if dice else 0.0


@dataclass(frozen=True)
class UnsureDie:
    """A die the question asks about: its index among the reading's dice, its confidence
    and its two likeliest values (the likeliest first)."""

    index: int
    confidence: float
    choices: tuple[int, int]


@dataclass(frozen=True)
class RollDecision:
    """Apply the roll at once, or ask: about the ``unsure`` dice only, and about the dice
    count when ``missing`` or ``extra`` is not 0 (found fewer or more than expected)."""

    apply: bool
    roll_confidence: float
    threshold: float | None
    unsure: tuple[UnsureDie, ...] = ()
    missing: int = 0
    extra: int = 0


def two_likeliest(die: DieReading) -> tuple[int, int]:
    """The die's two likeliest values 1-6 by its class probabilities (unreadable left
    out); without probabilities, its value and the value of the opposite face."""
    if die.probabilities is not None:
        faces = np.asarray(die.probabilities[:6], np.float64)
        first, second = (int(k) + 1 for k in np.argsort(-faces, kind="stable")[:2])
        return first, second
    value = die.value or 1
    return value, 7 - value


def decide_roll(dice: Sequence[DieReading], expected: int, threshold: float | None) -> RollDecision:
    """Apply a roll of ``expected`` dice without a tap when as many were found and its
    confidence reaches ``threshold`` (None: an uncalibrated model, never applied and every
    die named); otherwise name the fewest dice, least sure first, without which the rest
    would reach it: those are the dice a player confirms. A die read as unreadable is
    always named."""
    confidence = roll_confidence(dice, expected)
    missing, extra = max(0, expected - len(dice)), max(0, len(dice) - expected)
    if threshold is not None and not missing and not extra and confidence >= threshold:
        return RollDecision(True, confidence, threshold)
    remaining = sorted(range(len(dice)), key=lambda k: (die_confidence(dice[k]), k))
    named: list[int] = []
    goal = 1.01 if threshold is None else threshold  # None: nothing is sure enough
    while remaining and math.prod(die_confidence(dice[k]) for k in remaining) < goal:
        named.append(remaining.pop(0))
    unsure = tuple(UnsureDie(k, die_confidence(dice[k]), two_likeliest(dice[k])) for k in named)
    return RollDecision(False, confidence, threshold, unsure, missing, extra)


@dataclass(frozen=True)
class CalibrationRoll:
    """One photo of the calibration part taken as a roll: its confidence with the labelled
    dice count expected, and whether every die was found and read right with no false die."""

    confidence: float
    right: bool


def choose_threshold(rolls: Sequence[CalibrationRoll], per: int = WRONG_ROLLS_PER) -> float | None:
    """The lowest roll confidence at which the calibration rolls applied (those at least
    that sure) hold at most one wrong roll in ``per`` (none while fewer than ``per`` are
    applied). None when no confidence level would do (the surest roll is wrong, or no
    roll has any confidence)."""
    levels = sorted({r.confidence for r in rolls if r.confidence > 0.0}, reverse=True)
    best: float | None = None
    for level in levels:
        applied = [r for r in rolls if r.confidence >= level]
        wrong = sum(not r.right for r in applied)
        if wrong <= len(applied) // per:
            best = level
    return best
