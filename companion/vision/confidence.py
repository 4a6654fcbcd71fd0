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

**More evidence than one softmax** (issue 23): a map may carry a `LookModel`; then its
input is not the raw top probability but a score of the die's independent looks
(LOOK_FEATURES: the worst of its eight symmetric views, a crop at a second margin, the
finder's peak against its sure band, the OOD score of its embedding (`OodModel`), its
size), combined by a logistic model fitted on the calibration sources. The map and the
look model are fitted leaving one source out for the threshold
(models/recipe/confidence_fit.py), so that the threshold carries the shift a new table
brings, and the threshold is chosen with an upper confidence bound
(`choose_bounded_threshold`, `upper_bound`: Clopper-Pearson), not a point estimate:
0 wrong of 300 rolls is not yet 1 in 500. `choose_threshold` is the point-estimate rule
of the first maps.

**The looks only where they can change a decision**: the looks cost 9 crops a die. A die
whose *ceiling* (`LookModel.ceiling`: the most any views and wide crop could give it,
beside what its first reading already tells) is under the threshold is named by every
question whatever its looks, so the reader skips them (`ConfidenceMap.may_be_sure`;
with no threshold, every die) and shows `ConfidenceMap.without_looks_confidence`: the
lower of the raw-probability map's (``without_looks``, fitted on the same dice) and the
ceiling, which keeps it under every die that could be sure: the same dice are asked about.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
    # with a look model the map's input is the die's look score, not its raw probability
    looks: LookModel | None = None
    # with a look model: the map of the raw probability alone, fitted on the same dice, for
    # a die read without its looks (`without_looks_confidence`; None: such a die scores 0)
    without_looks: ConfidenceMap | None = None

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

    @property
    def needs_looks(self) -> bool:
        """Whether the map scores a die by its independent looks (the pipeline takes them)."""
        return self.looks is not None

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {
            "method": self.method,
            "points": [[round(x, 6), round(y, 6)] for x, y in zip(self.xs, self.ys, strict=True)],
            "auto_apply_threshold": self.threshold,
        }
        if self.looks is not None:
            body["looks"] = self.looks.to_json()
        if self.without_looks is not None:
            body["without_looks"] = {
                "points": [
                    [round(x, 6), round(y, 6)]
                    for x, y in zip(self.without_looks.xs, self.without_looks.ys, strict=True)
                ]
            }
        return body

    def may_be_sure(
        self,
        raw: np.ndarray,
        values: np.ndarray,
        peaks: np.ndarray,
        sides: np.ndarray,
        embeddings: np.ndarray | None,
    ) -> np.ndarray:
        """Per die (N): whether its looks could bring its confidence to the auto-apply
        threshold, judged from what is known before the looks are taken (`LookModel.ceiling`).
        A die that cannot is named by every question whatever its looks say (a roll's
        confidence is at most its least sure die's), so its looks change no decision. No
        threshold (None), an unreadable die (value 0) or a map without looks: False."""
        n = len(values)
        if self.threshold is None or self.looks is None or not n:
            return np.zeros(n, bool)
        ceiling = self.looks.ceiling(raw, values, peaks, sides, embeddings, self)
        return np.asarray((ceiling >= self.threshold) & (np.asarray(values) > 0), bool)

    def without_looks_confidence(
        self,
        raw: np.ndarray,
        values: np.ndarray,
        peaks: np.ndarray,
        sides: np.ndarray,
        embeddings: np.ndarray | None,
    ) -> np.ndarray:
        """The confidence of dice read without their looks (a look map): the lower of the
        raw-probability map's (``without_looks``, calibrated on the same dice: the share of
        dice read right at that raw probability) and the highest the looks could have given
        (`LookModel.ceiling`, the OOD cap included). The ceiling keeps such a die below
        every die that could be sure, so the question names the same dice; the raw map
        keeps it honest. Without a raw map: 0 (never sure, as before)."""
        n = len(values)
        if self.looks is None or self.without_looks is None or not n:
            return np.zeros(n)
        ceiling = self.looks.ceiling(raw, values, peaks, sides, embeddings, self)
        return np.asarray(np.minimum(self.without_looks.apply(raw), ceiling), np.float64)

    @classmethod
    def from_json(cls, data: object) -> ConfidenceMap:
        """The map of a manifest's ``confidence`` field; raises ConfidenceError."""
        if not isinstance(data, Mapping):
            raise ConfidenceError("'confidence' must be an object")
        try:
            points = [(float(x), float(y)) for x, y in data["points"]]
            threshold = data.get("auto_apply_threshold")
            looks = data.get("looks")
            without = data.get("without_looks")
            plain = None
            if without is not None:
                raw_points = [(float(x), float(y)) for x, y in without["points"]]
                plain = cls(tuple(x for x, _ in raw_points), tuple(y for _, y in raw_points))
            return cls(
                tuple(x for x, _ in points),
                tuple(y for _, y in points),
                None if threshold is None else float(threshold),
                str(data.get("method", ISOTONIC)),
                None if looks is None else LookModel.from_json(looks),
                plain,
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfidenceError):
                raise
            raise ConfidenceError(
                f"'confidence' needs points [[raw, calibrated], ...] ({exc})"
            ) from exc


IDENTITY = ConfidenceMap((0.0, 1.0), (0.0, 1.0))


# ----------------------------------------------------------------------------------------
# The independent looks at a die, and the score they make together

FACES = 6
LOOK_FEATURES = (
    "raw",  # logit of the classifier's top probability after its second look
    "worst_view",  # logit of the lowest probability of the value read over the 8 views
    "wide",  # logit of the value's probability in the crop at the second margin
    "views_agree",  # the share of the 8 views whose likeliest value is the value read
    "wide_agrees",  # 1 when the wide crop's likeliest value is the value read
    "peak",  # the finder's peak score minus its sure band's lower end, in [-0.5, 0.5]
    "ood",  # ln(1 + Mahalanobis^2 / D) of the embedding to the read value's class
    "side",  # ln of the die's side in pixels (a small die shows its pips in few pixels)
)
UNFAMILIAR = "unfamiliar"  # flag: the die's embedding lies beyond the OOD threshold
# A die read one way whose own turned and mirrored views read it otherwise more than twice
# in eight is capped (`LookModel.disagree_confidence`), whatever weight the look model's
# fit gave the views: the fit sees few such dice, and it may lean on the other looks
# (finder 1.5.0's pair weighs the worst view at 0.08 and 1.7.0's at -0.24, where 1.4.0's
# did at 0.55).
VIEWS_AGREE_FLOOR = 0.75
EPSILON = 1e-4  # probabilities are clipped to [EPSILON, 1 - EPSILON] before a logit
# the looks a die's first reading does not give (`LookModel.ceiling`), each feature's range
_SURE_LOGIT = math.log((1.0 - EPSILON) / EPSILON)
UNKNOWN_LOOKS = {
    "worst_view": (-_SURE_LOGIT, _SURE_LOGIT),
    "wide": (-_SURE_LOGIT, _SURE_LOGIT),
    "views_agree": (0.0, 1.0),
    "wide_agrees": (0.0, 1.0),
}


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, np.float64), EPSILON, 1.0 - EPSILON)
    return np.asarray(np.log(q / (1.0 - q)), np.float64)


@dataclass(frozen=True)
class OodModel:
    """How far a die's embedding lies from what the classifier was trained on: the
    Mahalanobis distance to the mean of the read value's class, one covariance shared by
    the six classes (fitted on the training part's labelled dice: `fit_ood`), so
    ``distance^2 = |whiten @ (x - means[value - 1])|^2``. ``threshold``: the score above
    which a die is unfamiliar (fitted on the calibration parts); an unfamiliar die's
    confidence is at most ``unfamiliar_confidence``, the share of the calibration dice
    beyond the threshold read right (shrunk as the map's blocks are): it is asked about.
    ``face_offsets``: subtracted from each face's score, so that one threshold stands for
    a threshold per face (`fit_face_offsets`): a one shows few features and its right
    dice lie close together, so a thing that is no die but is read as a one (a ring, a
    coin) is unfamiliar at a distance that is usual for a five. Zero for every face in
    manifests written before 2026-12-02 (one threshold for all)."""

    means: np.ndarray = field(repr=False)  # 6 x D
    # D x D, upper triangular: a Cholesky factor of the precision
    whiten: np.ndarray = field(repr=False)
    threshold: float = float("inf")
    unfamiliar_confidence: float = 1.0
    face_offsets: tuple[float, ...] = (0.0,) * FACES

    def distance_score(self, embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
        """ln(1 + distance^2 / D) per die (values 1-6; 0, unreadable, scores as 1), before
        the face's offset."""
        x = np.asarray(embeddings, np.float64)
        index = np.clip(np.asarray(values, int) - 1, 0, FACES - 1)
        delta = (x - self.means[index]) @ self.whiten.T
        return np.asarray(np.log1p((delta**2).sum(axis=1) / x.shape[1]), np.float64)

    def score(self, embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
        """`distance_score` less the read face's offset: above ``threshold``, unfamiliar."""
        index = np.clip(np.asarray(values, int) - 1, 0, FACES - 1)
        offsets = np.asarray(self.face_offsets, np.float64)[index]
        return np.asarray(self.distance_score(embeddings, values) - offsets, np.float64)

    def to_json(self) -> dict[str, object]:
        return {
            "means": np.round(self.means, 5).tolist(),
            "whiten": np.round(self.whiten, 5).tolist(),
            "threshold": round(self.threshold, 6),
            "unfamiliar_confidence": round(self.unfamiliar_confidence, 6),
            "face_offsets": [round(o, 6) for o in self.face_offsets],
        }

    def gate(self, confidence: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """The confidences with an unfamiliar die's capped (`unfamiliar_confidence`)."""
        capped = np.minimum(confidence, self.unfamiliar_confidence)
        return np.asarray(np.where(scores > self.threshold, capped, confidence), np.float64)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> OodModel:
        means = np.asarray(data["means"], np.float64)
        whiten = np.asarray(data["whiten"], np.float64)
        if means.ndim != 2 or means.shape[0] != FACES or whiten.shape != (means.shape[1],) * 2:
            raise ConfidenceError("'ood' needs 6 x D means and a D x D whitening matrix")
        offsets = tuple(float(o) for o in data.get("face_offsets", (0.0,) * FACES))  # type: ignore[attr-defined]
        if len(offsets) != FACES or not all(math.isfinite(o) for o in offsets):
            raise ConfidenceError("'ood.face_offsets' needs 6 finite numbers, one per face")
        return cls(
            means,
            whiten,
            float(data["threshold"]),  # type: ignore[arg-type]
            float(data.get("unfamiliar_confidence", 1.0)),  # type: ignore[arg-type]
            offsets,
        )


def fit_ood(embeddings: np.ndarray, values: np.ndarray, shrink: float = 0.05) -> OodModel:
    """Class means and one shared covariance (shrunk by ``shrink`` towards its mean
    variance, so that directions the training dice never varied in do not explode) of
    labelled dice's embeddings (values 1-6); its threshold is set by `with_threshold`."""
    x = np.asarray(embeddings, np.float64)
    v = np.asarray(values, int)
    means = np.stack([x[v == k].mean(axis=0) for k in range(1, FACES + 1)])
    centred = x - means[v - 1]
    covariance = centred.T @ centred / max(1, len(x) - FACES)
    dim = covariance.shape[0]
    covariance = (1 - shrink) * covariance + shrink * np.trace(covariance) / dim * np.eye(dim)
    whiten = np.linalg.cholesky(np.linalg.inv(covariance)).T
    return OodModel(means, whiten, float("inf"))


FACE_OFFSET_PRIOR = 100  # dice: a face with this many right ones gets half its own offset


def fit_face_offsets(
    ood: OodModel, embeddings: np.ndarray, values: np.ndarray, right: np.ndarray, quantile: float
) -> OodModel:
    """``ood`` with per-face offsets and the threshold they share, from the dice of the
    calibration parts (values 1-6, ``right``: read right): each face's offset is its right
    dice's ``quantile`` of `distance_score` less that of all the right dice, shrunk
    towards 0 by n / (n + FACE_OFFSET_PRIOR) for a face with n right dice (a face the
    calibration dice rarely show keeps nearly the common threshold); the threshold is then
    the ``quantile`` of the offset scores of all the right dice."""
    v = np.asarray(values, int)
    ok = np.asarray(right, bool)
    distance = ood.distance_score(embeddings, v)
    pooled = float(np.quantile(distance[ok], quantile))
    offsets = []
    for face in range(1, FACES + 1):
        own = distance[ok & (v == face)]
        if not len(own):
            offsets.append(0.0)
            continue
        weight = len(own) / (len(own) + FACE_OFFSET_PRIOR)
        offsets.append(weight * (float(np.quantile(own, quantile)) - pooled))
    offset_model = dataclasses.replace(ood, face_offsets=tuple(offsets))
    threshold = float(np.quantile(offset_model.score(embeddings, v)[ok], quantile))
    return dataclasses.replace(offset_model, threshold=threshold)


@dataclass(frozen=True)
class LookModel:
    """The die's looks (LOOK_FEATURES) combined into one score by a logistic model fitted
    on the calibration part (`fit_look_model`): the score the confidence map then maps.
    ``sure_peak``: the lower end of the finder's sure band it was fitted with."""

    weights: tuple[float, ...]
    bias: float
    centre: tuple[float, ...]
    scale: tuple[float, ...]
    sure_peak: float
    ood: OodModel | None = None
    # the share of the calibration dice under VIEWS_AGREE_FLOOR read right (shrunk); 1.0
    # in manifests written before 2026-12-03 (no cap)
    disagree_confidence: float = 1.0

    def features(
        self,
        raw: np.ndarray,
        values: np.ndarray,
        views: np.ndarray,
        wide: np.ndarray,
        peaks: np.ndarray,
        sides: np.ndarray,
        embeddings: np.ndarray | None,
    ) -> np.ndarray:
        """N x len(LOOK_FEATURES) (`look_features`); without embeddings or an OOD model,
        ood is 0."""
        scores = self.ood_scores(embeddings, values)
        return look_features(raw, values, views, wide, peaks, sides, self.sure_peak, scores)

    def ood_scores(self, embeddings: np.ndarray | None, values: np.ndarray) -> np.ndarray:
        if self.ood is None or embeddings is None or not len(values):
            return np.zeros(len(values))
        return self.ood.score(embeddings, values)

    def ceiling(
        self,
        raw: np.ndarray,
        values: np.ndarray,
        peaks: np.ndarray,
        sides: np.ndarray,
        embeddings: np.ndarray | None,
        points: ConfidenceMap,
    ) -> np.ndarray:
        """The highest confidence each die's looks could give it, from what is known before
        they are taken: its raw probability, finder peak, size and OOD score (the embedding
        comes with the first batch); the looks themselves (UNKNOWN_LOOKS) each at the end of
        their range its weight favours. The score is increasing in every feature towards
        that end and the map and the OOD cap are monotone, so no views, no wide crop can
        give more."""
        n = len(values)
        scores = self.ood_scores(embeddings, values)
        # a stand-in for the unknown looks (views of value probability 1/2); set below
        views = np.full((n, 8, FACES + 1), 0.5)
        wide = np.full((n, FACES + 1), 0.5)
        features = look_features(raw, values, views, wide, peaks, sides, self.sure_peak, scores)
        for name, (low, high) in UNKNOWN_LOOKS.items():
            column = LOOK_FEATURES.index(name)
            features[:, column] = high if self.weights[column] >= 0 else low
        # views not yet taken may all agree: no views cap in a ceiling
        return self.confidence(features, points, views_seen=False)

    def confidence(
        self, features: np.ndarray, points: ConfidenceMap, views_seen: bool = True
    ) -> np.ndarray:
        """Each die's calibrated confidence: its score through the map ``points``, an
        unfamiliar die's capped (`OodModel.gate`), and one whose views disagree
        (VIEWS_AGREE_FLOOR) capped at ``disagree_confidence``."""
        confidence = points.apply(self.score(features))
        if views_seen:
            disagree = features[:, LOOK_FEATURES.index("views_agree")] < VIEWS_AGREE_FLOOR
            capped = np.minimum(confidence, self.disagree_confidence)
            confidence = np.asarray(np.where(disagree, capped, confidence), np.float64)
        if self.ood is None:
            return confidence
        return self.ood.gate(confidence, features[:, LOOK_FEATURES.index("ood")])

    def score(self, features: np.ndarray) -> np.ndarray:
        """The logistic model's probability that each die is read right."""
        z = (features - np.asarray(self.centre)) / np.asarray(self.scale)
        return np.asarray(1.0 / (1.0 + np.exp(-(z @ np.asarray(self.weights) + self.bias))))

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(LOOK_FEATURES),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "centre": [round(c, 6) for c in self.centre],
            "scale": [round(c, 6) for c in self.scale],
            "sure_peak": self.sure_peak,
            "ood": None if self.ood is None else self.ood.to_json(),
            "disagree_confidence": round(self.disagree_confidence, 6),
        }

    @classmethod
    def from_json(cls, data: object) -> LookModel:
        if not isinstance(data, Mapping):
            raise ConfidenceError("'looks' must be an object")
        try:
            if tuple(data["features"]) != LOOK_FEATURES:
                raise ConfidenceError(f"'looks' features must be {list(LOOK_FEATURES)}")
            ood = data.get("ood")
            return cls(
                tuple(float(w) for w in data["weights"]),
                float(data["bias"]),
                tuple(float(c) for c in data["centre"]),
                tuple(float(c) for c in data["scale"]),
                float(data["sure_peak"]),
                None if ood is None else OodModel.from_json(ood),
                float(data.get("disagree_confidence", 1.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfidenceError):
                raise
            raise ConfidenceError(f"'looks' is not a look model ({exc})") from exc


def look_features(
    raw: np.ndarray,
    values: np.ndarray,
    views: np.ndarray,
    wide: np.ndarray,
    peaks: np.ndarray,
    sides: np.ndarray,
    sure_peak: float,
    ood: np.ndarray,
) -> np.ndarray:
    """LOOK_FEATURES per die from arrays: raw (N), values (N, 1-6; 0 unreadable), views
    (N x 8 x 7), wide (N x 7), peaks (N; NaN, a box not from the finder, counts as 0.1
    inside the sure band), sides (N, pixels), ood scores (N)."""
    n = len(values)
    index = np.clip(np.asarray(values, int) - 1, 0, FACES - 1)
    rows = np.arange(n)
    views = np.asarray(views, np.float64).reshape(n, 8, -1)
    wide = np.asarray(wide, np.float64).reshape(n, -1)
    of_value = views[rows, :, index]  # N x 8
    peak = np.where(np.isnan(peaks), sure_peak + 0.1, np.asarray(peaks, np.float64))
    return np.column_stack(
        [
            _logit(raw),
            _logit(of_value.min(axis=1)),
            _logit(wide[rows, index]),
            (views.argmax(axis=2) == index[:, None]).mean(axis=1),
            (wide.argmax(axis=1) == index).astype(np.float64),
            np.clip(peak - sure_peak, -0.5, 0.5),
            np.asarray(ood, np.float64),
            np.log(np.maximum(np.asarray(sides, np.float64), 1.0)),
        ]
    )


def fit_look_model(
    features: np.ndarray,
    right: np.ndarray,
    sure_peak: float,
    ood: OodModel | None,
    ridge: float = 1.0,
) -> LookModel:
    """A logistic regression of ``right`` on the standardised features (L2 penalty
    ``ridge``, Newton's method): the weight of each look is what the calibration dice say
    it is worth."""
    x = np.asarray(features, np.float64)
    y = np.asarray(right, np.float64)
    centre = x.mean(axis=0)
    scale = np.where(x.std(axis=0) > 1e-9, x.std(axis=0), 1.0)
    z = np.column_stack([(x - centre) / scale, np.ones(len(x))])
    w = np.zeros(z.shape[1])
    penalty = ridge * np.eye(z.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LookModel(
        tuple(float(v) for v in w[:-1]),
        float(w[-1]),
        tuple(float(c) for c in centre),
        tuple(float(c) for c in scale),
        float(sure_peak),
        ood,
    )


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
    confidence: Sequence[float] | np.ndarray,
    right: Sequence[bool] | np.ndarray,
    bins: int = RELIABILITY_BINS,
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
    confidence: Sequence[float] | np.ndarray,
    right: Sequence[bool] | np.ndarray,
    bins: int = RELIABILITY_BINS,
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


# ----------------------------------------------------------------------------------------
# The threshold with an upper confidence bound

UPPER_BOUND_PER = 250  # the target: the 95 % upper bound under 1 wrong roll in 250
BOUND_LEVEL = 0.95


def upper_bound(wrong: int, applied: int, level: float = BOUND_LEVEL) -> float:
    """The one-sided Clopper-Pearson upper confidence bound (``level``) on the share of
    wrong rolls when ``wrong`` of ``applied`` were: the p at which seeing at most ``wrong``
    has probability 1 - level (found by bisection on the binomial distribution)."""
    if applied <= 0:
        return 1.0
    if wrong >= applied:
        return 1.0

    def at_most(p: float) -> float:  # P(X <= wrong) for X ~ Binomial(applied, p)
        ks = np.arange(wrong + 1)
        log_choose = math.lgamma(applied + 1) - np.array(
            [math.lgamma(k + 1) + math.lgamma(applied - k + 1) for k in ks]
        )
        terms = log_choose + ks * math.log(p) + (applied - ks) * math.log1p(-p)
        return float(np.exp(terms).sum())

    low, high = 0.0, 1.0
    for _ in range(80):
        middle = (low + high) / 2
        if middle <= 0.0 or at_most(middle) > 1.0 - level:
            low = middle
        else:
            high = middle
    return high


@dataclass(frozen=True)
class RiskPoint:
    """Rolls at least ``threshold`` sure: how many are applied, how many of them wrong,
    and the upper bound on the wrong share."""

    threshold: float
    applied: int
    wrong: int
    upper: float


def risk_coverage(rolls: Sequence[CalibrationRoll], level: float = BOUND_LEVEL) -> list[RiskPoint]:
    """One point per distinct roll confidence (> 0), surest first: the risk-coverage
    curve."""
    ordered = sorted((r for r in rolls if r.confidence > 0.0), key=lambda r: -r.confidence)
    points: list[RiskPoint] = []
    wrong = 0
    for k, roll in enumerate(ordered):
        wrong += not roll.right
        last = k + 1 == len(ordered) or ordered[k + 1].confidence < roll.confidence
        if last:
            points.append(
                RiskPoint(roll.confidence, k + 1, wrong, upper_bound(wrong, k + 1, level))
            )
    return points


def choose_bounded_threshold(
    rolls: Sequence[CalibrationRoll],
    per: int = WRONG_ROLLS_PER,
    upper_per: int = UPPER_BOUND_PER,
    level: float = BOUND_LEVEL,
) -> float | None:
    """The lowest roll confidence at which the rolls applied hold at most one wrong roll in
    ``per`` and the ``level`` upper bound on their wrong share is under 1 in ``upper_per``
    (so 0 wrong of 300 is not yet enough: its bound is 1 in 100). None when no level is
    (too few rolls, or too many wrong among the surest)."""
    best: float | None = None
    for point in risk_coverage(rolls, level):
        if point.wrong <= point.applied // per and point.upper < 1.0 / upper_per:
            best = point.threshold
    return best
