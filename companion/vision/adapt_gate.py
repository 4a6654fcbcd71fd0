"""Whether a setup's adapted reader may read in place of the shipped one (issue 24): a
k-fold check by photo, a one-sided sign test over the folds, and a check that it does not
forget what the shipped reader reads right elsewhere.

**The folds.** The setup's confirmed photos, in the order first seen, go round-robin into
k = min(photos, MAX_FOLDS) folds, so every photo is left out exactly once (with up to
MAX_FOLDS photos, each fold is one photo). For each fold the value head is fitted on the
other folds' dice (companion.vision.adapt_fit, the same fit the reader gets) and reads the
left-out dice as the camera would: the crop as cut, and the mean of its eight symmetric
views where the top probability is under the second-look threshold (the classifier's own,
``second_look_below`` of its manifest, PipClassifier.second_look_below). The shipped head reads
the same dice. An error is a die not read as its confirmed value (misread, or read
"unreadable": then the camera flags or drops it). Dice the host added (the finder missed
them; no camera reading) train the head but are not judged: with the finder unchanged they
are missed by both readers alike, and so are the false dice the host removed.

**The sign test.** Per fold, the shipped errors minus the adapted ones: a fold the adapted
head reads with fewer errors is a win, with more a loss, ties say nothing. Under "the
adapted head is no better", wins among the untied folds are Binomial(n, 1/2); the head is
adopted only when its errors over all folds are fewer and P(X >= wins) <= SIGN_ALPHA
(one-sided, 0.05). So at least five untied folds, all won, or 9 of 10, 15 of 20 ...
(the old check, 151 vs 149 right on three folds, would not pass).

**No face worse.** The left-out dice of every face the setup confirmed are read with no
more errors by the adapted head than by the shipped one: a setup of 44 ones and 6 twos
must not learn "a black die is a 1" at the cost of its twos (tomitomi-dish-crops'
validation blocks, a quarter of the taps wrong: 1 error against 9 over the folds, p 0.011,
yet three more twos misread on the remaining photos; its one lost fold was a two).

**No forgetting.** The head fitted on all the setup's dice reads a fixed sample of dice
from the calibration parts (photos the shipped models were not trained on, of other tables:
models/adapt_anchor.*, companion.vision.adapt_anchor) with no more errors than the shipped
head reads them with. Without a sample (unit tests on literal embeddings) this check is
not made, and the verdict says so.

Pure numpy, no I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import cached_property

import numpy as np

from companion.vision.adapt_fit import Delta
from companion.vision.confidence import ConfidenceMap, fit_confidence_map, upper_bound
from companion.vision.types import DieReading

SIGN_ALPHA = 0.05
MAX_FOLDS = 25
MIN_MAP_DICE = 30  # left-out dice read as a value before the folds refit the confidence map
MAP_DECIMALS = 6  # a confidence map's points as its JSON keeps them (ConfidenceMap.to_json)
# why a head is or is not adopted, in the words the host's page and the CLI show
REASONS = {
    "adopted": "what it learnt read this camera setup's dice better on photos kept out of its "
    "learning, by enough to trust, and reads other tables' dice no worse",
    "too_few": "too few confirmed photos yet to tell whether what it learnt helps",
    "no_gain": "what it learnt read this camera setup's dice no better on photos kept out of "
    "its learning",
    "not_significant": "what it learnt read this camera setup's dice a little better on photos kept "
    "out of its learning, not yet by enough to trust",
    "face_worse": "what it learnt read some number worse on photos kept out of its learning",
    "forgets": "what it learnt reads other tables' dice worse",
}

# the finder's reasons in its own verbs (Verdict.finder_words): it finds dice, the
# classifier reads them
FINDER_VERBS = (
    ("read this camera setup's dice", "found this camera setup's dice"),
    ("reads other tables' dice", "finds other tables' dice"),
    ("already read all", "already found all"),
    ("read some number worse", "found some number worse"),
)


def counted(count: int, thing: str) -> str:
    """`count` of `thing` as said: "1 error", "2 errors", "0 folds", "1 die", "3 dice"."""
    if count == 1:
        return f"1 {thing}"
    return f"{count} {'dice' if thing == 'die' else thing + 's'}"


@dataclass(frozen=True)
class Verdict:
    """The check's figures and its decision: folds, dice judged, errors of each reader on
    the left-out photos, the folds won and lost by the adapted head, the sign test's
    p-value at ``alpha``, and the no-forgetting sample's dice and errors (0 dice: not
    checked)."""

    reason: str = "too_few"
    folds: int = 0
    dice: int = 0
    shipped_errors: int = 0
    adapted_errors: int = 0
    wins: int = 0
    losses: int = 0
    p_value: float = 1.0
    alpha: float = SIGN_ALPHA
    anchor_dice: int = 0
    anchor_shipped_errors: int = 0
    anchor_adapted_errors: int = 0
    worse_faces: tuple[int, ...] = ()  # faces 1-6 with more errors adapted than shipped

    @property
    def adopted(self) -> bool:
        return self.reason == "adopted"

    @cached_property  # read on every frame an adopted head reads; a bisection to compute
    def ceiling(self) -> float:
        """How sure a die read by the adopted head may be said to be: the one-sided 95 %
        Clopper-Pearson lower bound on the share of the left-out dice it read right (1.0
        when not adopted: the shipped head reads, under the map fitted for it). The
        shipped map was fitted on the shipped head's probabilities; for a head fitted on
        one table it would vouch for a reader it never saw, so the folds bound it (issue
        24: the map for the adapted pair from the same folds). 150 left-out dice all right
        bound it at 0.980, 1,500 at 0.998."""
        if not self.adopted:
            return 1.0
        return 1.0 - upper_bound(self.adapted_errors, self.dice)

    def vouch(self, readings: tuple[DieReading, ...]) -> tuple[DieReading, ...]:
        """Each read die no surer than `ceiling` (unchanged when not adopted): what an
        adopted reader of the setup, head or fine-tuned net, may claim."""
        ceiling = self.ceiling
        return tuple(
            r if r.value is None or r.confidence <= ceiling else replace(r, confidence=ceiling)
            for r in readings
        )

    @property
    def reason_words(self) -> str:
        """Why, in the host's words. Where the shipped models read every left-out die
        right, "no better" read as if the learning had failed: it says there was nothing
        to improve."""
        forgot = self.anchor_adapted_errors > self.anchor_shipped_errors and self.anchor_dice
        if self.reason == "no_gain" and self.dice and not self.shipped_errors:
            # where nothing was missed, a learner worse on the no-forgetting sample alone
            # (the skovy finder, 3 errors against 2) said only "nothing to improve"
            return (
                f"they already read all {self.dice} of this camera setup's dice "
                "right on photos kept out of its learning: nothing to improve yet"
                + (", and " + REASONS["forgets"] if forgot else "")
            )
        reason = REASONS[self.reason]
        # the rule refuses at its first failed test; the sentence says what the figures
        # show: "no better" where the learner made more errors read as if it had tied
        if self.reason == "no_gain" and self.adapted_errors > self.shipped_errors:
            reason = reason.replace("dice no better", "dice worse")
        if forgot and self.reason in ("no_gain", "not_significant", "face_worse"):
            reason += ", and " + REASONS["forgets"].removeprefix("what it learnt ")
        return reason

    def finder_words(self) -> str:
        """The finder's line: it finds the dice (`words` with its verbs); "finder: ...
        read this table's dice" was a word of the code with a verb of the classifier's."""
        reason = self.reason_words
        for reads, finds in FINDER_VERBS:
            reason = reason.replace(reads, finds)
        return "finding the dice: " + self.words(reason)

    def words(self, reason: str | None = None) -> str:
        """One line for the host: the decision, why (`reason_words` unless given), and
        the figures behind it."""
        head = "learnt and in use" if self.adopted else "reads with the models it came with"
        figures = (
            f"left-out photos ({counted(self.folds, 'fold')}, {counted(self.dice, 'die')}): "
            f"{counted(self.adapted_errors, 'error')} adapted against {self.shipped_errors} "
            f"shipped, {counted(self.wins, 'fold')} won, {self.losses} lost, "
            f"sign test p = {self.p_value:.3f} (alpha {self.alpha})"
        )
        anchor = (
            f"; other tables' dice: {counted(self.anchor_adapted_errors, 'error')} against "
            f"{self.anchor_shipped_errors} of {self.anchor_dice}"
            if self.anchor_dice
            else "; other tables' dice not checked"
        )
        faces = (
            f"; read worse: {', '.join(f'{v}s' for v in self.worse_faces)}"
            if self.worse_faces
            else ""
        )
        bound = f"; its dice read at most {self.ceiling:.3f} sure" if self.adopted else ""
        why = self.reason_words if reason is None else reason
        return f"{head}: {why} ({figures}{faces}{anchor}){bound}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = asdict(self)
        out["adopted"] = self.adopted
        out["words"] = self.words()
        return out

    @classmethod
    def from_json(cls, raw: dict[str, object]) -> Verdict:
        fields = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        fields["worse_faces"] = tuple(int(v) for v in raw.get("worse_faces", ()))  # type: ignore[attr-defined]
        verdict = cls(**fields)  # type: ignore[arg-type]
        if verdict.reason not in REASONS:
            raise ValueError(f"verdict reason {verdict.reason!r} is not one of {sorted(REASONS)}")
        return verdict


def fold_map(raw: Sequence[float], right: Sequence[bool]) -> ConfidenceMap | None:
    """The confidence map of an adopted reader (value head or fine-tuned net) refitted on
    its folds (issue 24 item 2): the isotonic fit of "read right" on the raw confidence of
    the left-out dice it read as a value (`fit_confidence_map`, each block shrunk by half a
    die each way), with no auto-apply threshold of its own; None under MIN_MAP_DICE such
    dice (the shipped map then scores its dice). Either way the folds' `Verdict.ceiling`
    bounds them after it.

    The fit says nothing below the least sure left-out die, and a fit of a few dozen dice
    often pools them all into one block (all read right: one point near the top): flat
    beyond its ends, it would vouch for a die read at 0.3 as for one read at 0.99. So from
    that die's raw confidence down the map falls in a straight line to 0 at raw 0: a die
    read less surely than any the folds saw is vouched for less, not more."""
    if len(raw) < MIN_MAP_DICE:
        return None
    fitted = fit_confidence_map(list(raw), list(right))
    xs: list[float] = []
    ys: list[float] = []
    # on the grid the map is saved on (ConfidenceMap.to_json: 6 decimals), so that points
    # closer than that (a least sure die at raw 1e-8, tied raws) cannot collide when read back
    for x, y in zip(fitted.xs, fitted.ys, strict=True):
        x = round(x, MAP_DECIMALS)
        if xs and x <= xs[-1]:
            ys[-1] = max(ys[-1], y)
            continue
        xs.append(x)
        ys.append(y)
    lowest = round(float(min(raw)), MAP_DECIMALS)
    if lowest < xs[0]:
        xs, ys = [lowest, *xs], [ys[0], *ys]
    if xs[0] > 0.0:
        xs, ys = [0.0, *xs], [0.0, *ys]
    return ConfidenceMap(tuple(xs), tuple(ys))


def sign_test(wins: int, losses: int) -> float:
    """One-sided sign test: P(X >= wins), X ~ Binomial(wins + losses, 1/2) (1.0 with no
    untied fold)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(wins, n + 1)) / 2**n


@dataclass(frozen=True)
class Judged:
    """Dice to read: per die its views' embeddings (N x V x D, the first the crop as cut)
    and shipped probabilities (N x V x 7), its confirmed class 0..5, and its crop's look
    (N x LOOK_WIDTH, the same in every view, companion.vision.adapt_look; None: not
    measured, so a head that reads by look leaves these dice to the shipped one)."""

    views: np.ndarray
    probabilities: np.ndarray
    truth: np.ndarray
    looks: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.truth)

    def reads(self, delta: Delta | None, second_look_below: float) -> np.ndarray:
        """N x 7: each die as the reader reads it (the crop, or its views' mean when its top
        probability is under the classifier's ``second_look_below``, its manifest's), with
        the head's delta applied (None: the shipped head)."""
        n, v, width = self.probabilities.shape
        flat = self.probabilities.reshape(n * v, width)
        if delta is not None and n:
            looks = None if self.looks is None else np.repeat(self.looks, v, axis=0)
            flat = delta.apply(flat, self.views.reshape(n * v, -1), looks)
        per_view = flat.reshape(n, v, width)
        out = np.array(per_view[:, 0], np.float64, copy=True)
        unsure = out.max(axis=1) < second_look_below
        out[unsure] = per_view[unsure].mean(axis=1)
        return out

    def errors(self, delta: Delta | None, second_look_below: float) -> np.ndarray:
        """N booleans: read as something else than its confirmed value."""
        if not len(self):
            return np.zeros(0, bool)
        return np.asarray(self.reads(delta, second_look_below).argmax(axis=1) != self.truth)

    def subset(self, rows: np.ndarray) -> Judged:
        looks = None if self.looks is None else self.looks[rows]
        return Judged(self.views[rows], self.probabilities[rows], self.truth[rows], looks)


def fold_of_photos(photos: Sequence[object], folds: int) -> np.ndarray:
    """Per item its fold 0..folds-1: its photo's rank (first seen first) modulo folds."""
    ranks: dict[object, int] = {}
    return np.array([ranks.setdefault(p, len(ranks)) % folds for p in photos], np.int64)


def decide(
    shipped: np.ndarray,
    adapted: np.ndarray,
    anchor: tuple[int, int, int] | None,
    worse_faces: tuple[int, ...] = (),
) -> Verdict:
    """The verdict from per-fold error counts of each reader (K each), the faces the
    adapted reader read worse on the left-out photos, and the no-forgetting sample's
    (dice, shipped errors, adapted errors), None when not checked."""
    wins = int((adapted < shipped).sum())
    losses = int((adapted > shipped).sum())
    p = sign_test(wins, losses)
    shipped_total, adapted_total = int(shipped.sum()), int(adapted.sum())
    dice, anchor_shipped, anchor_adapted = anchor or (0, 0, 0)
    if adapted_total >= shipped_total:
        reason = "no_gain"
    elif p > SIGN_ALPHA:
        reason = "not_significant"
    elif worse_faces:
        reason = "face_worse"
    elif anchor is not None and anchor_adapted > anchor_shipped:
        reason = "forgets"
    else:
        reason = "adopted"
    return Verdict(
        reason, len(shipped), 0, shipped_total, adapted_total, wins, losses, round(p, 6),
        SIGN_ALPHA, dice, anchor_shipped, anchor_adapted, tuple(worse_faces),
    )  # fmt: skip
