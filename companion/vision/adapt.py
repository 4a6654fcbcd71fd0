"""Adapting the reader to one setup (a camera with a dice set) from the dice it confirmed.

Every roll a table confirms is a labelled photo of exactly this table, camera, light and
dice set. Small heads, fitted in numpy in well under a second, turn them into a reader
that knows this setup:

- **values** (`ValueHead`): a logistic regression on the pip classifier's embedding (its
  pooled features, the second ONNX output), anchored at the shipped final layer with the
  penalty LAMBDA x ||W - W_shipped||^2 (companion.vision.adapt_fit), over the faces the
  setup has seen. A few examples shift the shipped decision boundary rather than vote
  against it. Each confirmed die teaches with its crop's eight symmetric views (turned by
  0, 90, 180, 270 degrees, and mirrored: its pip count is the same in all eight), so 25
  photos give eight times the examples at no cost when reading (fewer views per die
  past MAX_ROWS rows, to bound the fit's time).
  It reads only the crops like the setup's own dice (`likeness_of`: as like one of them
  as the least typical of its dice is like the nearest die of another of its photos, and
  looking like them: the chroma of the table around the die and of the die,
  companion.vision.adapt_look); a die of another kind keeps the shipped reading
  (companion.vision.adapt_fit, "Only dice like the setup's").
- **whether it reads** (`check_folds`, issue 24): the head is fitted once per fold of
  the setup's photos (k-fold by photo, every photo left out once, at most MAX_FOLDS
  folds) and reads the left-out photos' dice; it takes over from the shipped head only
  when it makes fewer errors there by a margin a one-sided sign test over the folds
  supports, reads no confirmed face worse, and reads the no-forgetting sample of other
  tables' dice no worse (companion.vision.adapt_gate). Where the shipped head reads this
  setup right already, or a few dice of one colour would teach "red means 4", the
  shipped head keeps reading alone, and the verdict says why.
- **how sure** (`ValueHead.confidence`): a die whose two likeliest faces the setup has
  fewer than MIN_FACE_EXAMPLES examples of is no surer than the shipped head was of its
  value, so a half-taught head does not push wrong readings past the auto-apply threshold.
- **colours**: each die of the set gets the setup's own colour, the median Lab of the
  dice confirmed as that set die, blended with the calibrated colour (which counts as
  COLOUR_PRIOR_EXAMPLES dice; `adapted_dice_set`); without a set, every confirmed die's
  colour is a prototype of its name beside the shipped ones (`OwnColours`).

**A wrong tap must not poison it.** `held_back` finds the examples whose value disagrees
strongly with the rest of their face: with that example left out, the setup's other dice
of that value are much less like it than the dice of another value (the class-mean
probability of its value under HOLD_BACK_BELOW), or the shipped head refuses the value
and no other die of the face vouches for it; and the shipped head does not vouch for it
either (its probability of that value under SHIPPED_VOUCHES). Those are left out of the
fit and shown to the host, who deletes or keeps each one (a kept one is never held back
again). A wrong tap that slips through is one example among many, and the check on the
left-out photos judges the head with the wrong ones too.

How this was chosen (issue 15, with the check it had then: fitted three times without a
third of the photos, reading on any gain; bench/adapt_heads.py, docs/benchmarks/adapt.md;
the fold check that replaced it is measured in docs/BENCHMARKS.md, "Adaptation judged by
its folds"): on the calibration
parts (the photos held back from training for choosing such things,
companion/vision/datasets.py; never the measure-only folders) and tomitomi-dish-crops'
training blocks as six setups (classifier 1.3.1 never trained on that folder), the
remaining photos' dice misread after K = 5, 10, 25, 50 confirmed photos: cold 279, 273,
248, 196; this head 224, 48, 15, 10; without the views 216, 176, 66, 18; without the
check 125, 50, 29, 16 (dearer at 5 photos, but without it epanemu-dice3's calibration
dice, which the classifier trained on, were misread 20 times after 25 photos where the
shipped head misread 6). Where the classifier trained on a folder, the check keeps the
shipped head and the dice read exactly as cold. The class-mean head this replaces gave up
nearly all of its gain to stay no worse than the shipped head.

Nothing here does I/O: the examples come from companion.vision.adapt_store."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from companion.vision.adapt_fit import Delta, Likeness, Rows, fit, softmax, unit_rows
from companion.vision.adapt_gate import (
    MAX_FOLDS,
    Judged,
    Verdict,
    decide,
    fold_map,
    fold_of_photos,
)
from companion.vision.adapt_look import LOOK_WIDTH, crop_looks, look_floor
from companion.vision.classifier import Classified, PipClassifier, symmetric_views
from companion.vision.colour import (
    LIGHTNESS_WEIGHT,
    DiceSet,
    SetDie,
    name_colour,
    prototype_distance,
)
from companion.vision.confidence import ConfidenceMap
from companion.vision.types import DieBox, DieReading

FACES = 6  # classes 0..5 are the values 1..6; class 6, "unreadable", stays the shipped head's
CLASSES = 7
VIEWS = 8  # a crop and its seven symmetric views (classifier.symmetric_views)
LAMBDA = 1.0  # the pull of the shipped final layer (the penalty on the change of weights)
MAX_ROWS = 2048  # training rows at most: fewer views per die past MAX_ROWS / VIEWS dice
GATE_MIN_PHOTOS = 5  # fewer folds than this: the sign test cannot reach its alpha (1/32)
MIN_FACE_EXAMPLES = 3  # fewer of a die's two likeliest faces: no surer than the shipped head
SIMILARITY_SCALE = 20.0  # cosine similarity -> logit scale of the held-back check's means
HOLD_BACK_BELOW = 0.05  # class-mean probability of its value under which an example is suspect
SHIPPED_VOUCHES = 0.5  # ... unless the shipped head gives its value at least this much
SHIPPED_REFUSES = 0.05  # the shipped head's probability of a value it refuses
OWN_VOUCHES = 0.5  # ... which the rest of the face overrules from this class-mean probability
COLOUR_PRIOR_EXAMPLES = 2.0  # the calibrated colour counts as this many confirmed dice
MAX_PROTOTYPES = 512  # the setup's dice a crop is compared with, at most (evenly spread)

Lab = tuple[float, float, float]


@dataclass(frozen=True)
class Example:
    """One confirmed die of a setup, as the heads need it: its value 1-6, its embedding
    (D floats, the crop as cut), the shipped head's 7 probabilities when it was read
    (after its second look; None: not read by the camera, e.g. a die the host added), the
    embeddings and shipped probabilities of its VIEWS symmetric views (V x D and V x 7,
    the first the crop as cut; None: not made yet), its body colour (Lab, None when not
    measured), its colour name and set die, whether the host looked at it and kept it, and
    its crop's look (companion.vision.adapt_look's chroma signature; None: not measured)."""

    value: int
    embedding: np.ndarray = field(repr=False)
    probabilities: np.ndarray | None = field(default=None, repr=False)
    lab: Lab | None = None
    colour: str | None = None
    set_index: int | None = None
    kept_by_host: bool = False
    photo: str | None = None  # the photo it came from (None: a photo of its own)
    views: np.ndarray | None = field(default=None, repr=False)
    view_probabilities: np.ndarray | None = field(default=None, repr=False)
    look: np.ndarray | None = field(default=None, repr=False)

    def first_view(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The crop as cut: its shipped probabilities (before any second look) and its
        embedding; None when neither the views nor the camera's reading say."""
        if self.views is not None and self.view_probabilities is not None:
            return self.view_probabilities[0], self.views[0]
        if self.probabilities is not None:
            return self.probabilities, self.embedding
        return None


@dataclass(frozen=True)
class ValueHead:
    """The setup's value head: what the regression adds to the shipped head (None: the
    shipped head reads alone), the example count of each face and the fold check's
    verdict (companion.vision.adapt_gate).
    `adjust` applies it to the shipped head's probabilities."""

    delta: Delta | None
    counts: np.ndarray
    gate: Verdict = Verdict()
    # the map of its raw confidence refitted on the fold check's left-out dice (None: the
    # shipped map scores its dice); read only while the head is active
    confidence_map: ConfidenceMap | None = None

    @property
    def examples(self) -> int:
        return int(self.counts.sum())

    @property
    def active(self) -> bool:
        return self.delta is not None

    @property
    def reads_by_look(self) -> bool:
        """Whether the head reads only crops that look like the setup's (then `adjust`
        needs their looks, companion.vision.adapt_look)."""
        like = None if self.delta is None else self.delta.like
        return like is not None and like.looks is not None

    def adjust(
        self,
        probabilities: np.ndarray,
        embeddings: np.ndarray | None,
        looks: np.ndarray | None = None,
    ) -> np.ndarray:
        """N x 7 probabilities of crops (the shipped head's, before a second look) with
        the setup's head applied; unchanged without embeddings or an active head."""
        if self.delta is None or embeddings is None or not len(probabilities):
            return probabilities
        return self.delta.apply(probabilities, embeddings, looks)

    def confidence(self, adjusted: np.ndarray, shipped: np.ndarray) -> np.ndarray:
        """N raw confidences of dice read as ``adjusted`` (N x 7, this head's) whose
        shipped probabilities (before a second look) are ``shipped``: the top probability,
        but where the setup has fewer than MIN_FACE_EXAMPLES examples of either of the
        die's two likeliest faces, no more than the shipped head gave that value. A head
        taught two 1s and five 2s may read this table's 1s as 2s more surely than the
        shipped head did, without having seen enough 1s to know; so such a die is asked
        about unless the shipped head was sure of it too. Chosen on the calibration parts
        (bench/adapt_heads.py): after 10 photos, 22 of 1,054 rolls applied without a tap
        went in wrong, with the cap 6 of 902 (cold: 33 of 798); with a fifth of the taps
        wrong, 147 of 2,900 became 52 of 2,421 (cold 99 of 2,394). The values read stay
        the same."""
        top = adjusted.max(axis=1)
        if self.delta is None or not len(adjusted):
            return np.asarray(top)
        likeliest = np.argsort(-adjusted[:, :FACES], axis=1)[:, :2]
        known = self.counts[likeliest].min(axis=1) >= MIN_FACE_EXAMPLES
        rows = np.arange(len(adjusted))
        capped = np.minimum(top, shipped[rows, adjusted.argmax(axis=1)])
        return np.asarray(np.where(known, top, capped))


def views_per_die(count: int) -> int:
    """How many of each die's views train the head: all VIEWS up to MAX_ROWS rows."""
    return int(min(VIEWS, max(1, MAX_ROWS // max(count, 1))))


def example_rows(examples: Sequence[Example]) -> Rows:
    """The training rows of examples: `views_per_die` views of each (spread over the
    eight: turned and mirrored alike), each with its shipped probabilities; an example
    with neither views nor a reading teaches nothing (no offset to anchor it)."""
    usable = [e for e in examples if e.first_view() is not None]
    wanted = views_per_die(len(usable))
    features, shipped, labels = [], [], []
    for e in usable:
        if e.views is not None and e.view_probabilities is not None:
            pick = np.linspace(0, len(e.views), wanted, endpoint=False).astype(int)
            features.append(e.views[pick])
            shipped.append(e.view_probabilities[pick])
        else:
            first = e.first_view()
            assert first is not None
            shipped.append(first[0][None])
            features.append(first[1][None])
        labels += [e.value - 1] * len(features[-1])
    if not features:
        width = examples[0].embedding.shape[0] if examples else 0
        return Rows(np.zeros((0, width)), np.zeros((0, CLASSES)), np.zeros(0, np.int64))
    return Rows(np.vstack(features), np.vstack(shipped), np.array(labels, np.int64))


def face_counts(examples: Sequence[Example]) -> np.ndarray:
    """How many examples each face 1..6 has."""
    values = np.array([e.value for e in examples], np.int64)
    return np.bincount(values - 1, minlength=FACES)[:FACES].astype(np.int64)


def likeness_of(examples: Sequence[Example]) -> Likeness | None:
    """Which crops the head fitted on the examples reads (`likeness_from` on their crops as
    cut, and their looks)."""
    usable = [e for e in examples if e.first_view() is not None]
    photos = [("die", k) if e.photo is None else e.photo for k, e in enumerate(usable)]
    if not usable:
        return None
    embeddings = np.stack([first[1] for e in usable if (first := e.first_view()) is not None])
    return likeness_from(embeddings, photos, example_looks(usable))


def example_looks(examples: Sequence[Example]) -> np.ndarray | None:
    """N x LOOK_WIDTH looks of the examples (NaN rows where not measured); None when none
    was measured (examples made before looks were: no gate by look)."""
    if all(e.look is None for e in examples):
        return None
    unknown = np.full(LOOK_WIDTH, np.nan, np.float32)
    return np.stack([unknown if e.look is None else np.asarray(e.look) for e in examples])


def likeness_from(
    embeddings: np.ndarray, photos: Sequence[object], looks: np.ndarray | None = None
) -> Likeness | None:
    """adapt_fit.Likeness of a setup's dice (N x D embeddings, each die's photo, and its
    look, N x LOOK_WIDTH or None): a crop is like them when it is at least as like one of
    them as every one of them is like the nearest die of another photo (the least typical
    die sets the floor, so every die of the setup's kind reads adapted), and looks like
    them (companion.vision.adapt_look `look_floor`); None under two photos (a head or a
    fine-tune on fewer is never adopted: GATE_MIN_PHOTOS)."""
    if len(set(photos)) < 2:
        return None
    rows = unit_rows(embeddings)
    similarity = rows @ rows.T
    codes = np.unique(np.array([str(p) for p in photos]), return_inverse=True)[1]
    similarity[codes[:, None] == codes[None, :]] = -1.0  # another photo's dice only
    floor = float(similarity.max(axis=1).min())
    keep = np.linspace(0, len(rows), min(len(rows), MAX_PROTOTYPES), endpoint=False)
    like = Likeness(rows[keep.astype(int)], floor)
    limit = None if looks is None else look_floor(looks, photos)
    if looks is None or limit is None:
        return like
    known = np.asarray(looks, np.float32)[~np.isnan(looks).any(axis=1)]
    spread = np.linspace(0, len(known), min(len(known), MAX_PROTOTYPES), endpoint=False)
    return replace(like, looks=known[spread.astype(int)], look_floor=limit)


def fitted(examples: Sequence[Example]) -> Delta:
    """The anchored regression on the examples, reading only crops like them."""
    return replace(fit(example_rows(examples), LAMBDA), like=likeness_of(examples))


def fit_value_head(examples: Sequence[Example], gate: Verdict | None = None) -> ValueHead:
    """The setup's head on the examples: the regression, unless a verdict is given that
    does not adopt it (then the shipped head reads alone)."""
    counts = face_counts(examples)
    if not examples or (gate is not None and not gate.adopted):
        return ValueHead(None, counts, gate or Verdict())
    return ValueHead(fitted(examples), counts, gate or Verdict())


def judged_dice(examples: Sequence[Example]) -> Judged:
    """The examples as dice to read (adapt_gate.Judged): their eight views, or the crop as
    cut eight times where the views were not kept (the mean of a view with itself is it)."""
    views, probabilities = [], []
    looks = example_looks(examples)
    for e in examples:
        if e.views is not None and e.view_probabilities is not None:
            views.append(e.views)
            probabilities.append(e.view_probabilities)
            continue
        first = e.first_view()
        assert first is not None
        views.append(np.repeat(first[1][None], VIEWS, axis=0))
        probabilities.append(np.repeat(first[0][None], VIEWS, axis=0))
    truth = np.array([e.value - 1 for e in examples], np.int64)
    if not examples:
        return Judged(np.zeros((0, VIEWS, 0)), np.zeros((0, VIEWS, CLASSES)), truth)
    return Judged(np.stack(views), np.stack(probabilities), truth, looks)


@dataclass(frozen=True)
class FoldCheck:
    """What `check_folds` found: the verdict, per example how sure a reader fitted without
    its photo is of its value (the adapted head's when adopted, else the shipped head's;
    NaN: no reading of it), the head fitted on all the examples (None: too few), and the
    confidence map refitted on the folds' left-out dice (`adapt_gate.fold_map`; None under
    MIN_MAP_DICE of them)."""

    verdict: Verdict
    sureness: tuple[float, ...]
    delta: Delta | None
    fold_map: ConfidenceMap | None = None


@dataclass
class _FoldReads:
    """Every judged die as the head fitted without its photo reads it."""

    errors: np.ndarray  # per readable example: read as another value
    sure: list[float]  # per example: that head's probability of its confirmed value
    raw: list[float] = field(default_factory=list)  # dice read as a value: the raw confidence
    right: list[bool] = field(default_factory=list)  # ... and whether it was their value


def _read_folds(
    examples: Sequence[Example],
    folds: np.ndarray,
    readable: list[int],
    dice: Judged,
    below: float,
    sure: list[float],
) -> _FoldReads:
    """Per fold: the head fitted on the other folds reads the fold's dice as the camera
    would, with the raw confidence the reader would give them (`ValueHead.confidence`)."""
    out = _FoldReads(np.zeros(len(readable), bool), list(sure))
    part_of = folds[readable]
    judged = np.array([examples[k].probabilities is not None for k in readable], bool)
    for part in range(int(folds.max()) + 1):
        rest = [e for e, f in zip(examples, folds, strict=True) if f != part]
        delta = fitted(rest)
        rows = np.flatnonzero(part_of == part)
        mine = dice.subset(rows)
        reads = mine.reads(delta, below)
        read_as = reads.argmax(axis=1)
        out.errors[rows] = read_as != mine.truth
        firsts = delta.apply(mine.probabilities[:, 0], mine.views[:, 0], mine.looks)
        raw = ValueHead(delta, face_counts(rest)).confidence(reads, mine.probabilities[:, 0])
        for j, row in enumerate(rows):
            out.sure[readable[row]] = float(firsts[j, dice.truth[row]])
            if judged[row] and read_as[j] < FACES:
                out.raw.append(float(raw[j]))
                out.right.append(bool(read_as[j] == mine.truth[j]))
    return out


def check_folds(
    examples: Sequence[Example], anchor: Judged | None = None, *, second_look_below: float
) -> FoldCheck:
    """The fold check of companion.vision.adapt_gate on the examples (held-back ones
    already out), the no-forgetting sample `anchor` read by the head fitted on all; the
    dice read with the second look of the classifier that made the examples
    (``second_look_below``: PipClassifier.second_look_below, from its manifest)."""
    below = second_look_below
    readable = [k for k, e in enumerate(examples) if e.first_view() is not None]
    judged = [k for k in readable if examples[k].probabilities is not None]
    shipped_sure = [math.nan] * len(examples)
    for k in readable:
        first = examples[k].first_view()
        assert first is not None
        shipped_sure[k] = float(first[0][examples[k].value - 1])
    photos = [e.photo if e.photo is not None else ("die", k) for k, e in enumerate(examples)]
    faces = {examples[k].value for k in judged}
    if len(set(photos)) < GATE_MIN_PHOTOS or len(faces) < 2:
        return FoldCheck(Verdict(dice=len(judged)), tuple(shipped_sure), None)
    folds = fold_of_photos(photos, min(len(set(photos)), MAX_FOLDS))
    dice = judged_dice([examples[k] for k in readable])
    is_judged = np.array([examples[k].probabilities is not None for k in readable])
    part_of = folds[readable]
    shipped_errors = dice.errors(None, below)
    reads = _read_folds(examples, folds, readable, dice, below, shipped_sure)
    count = int(folds.max()) + 1
    per_fold = (
        np.bincount(part_of[is_judged], shipped_errors[is_judged], count),
        np.bincount(part_of[is_judged], reads.errors[is_judged], count),
    )
    full = fitted(examples)
    checked = None
    if anchor is not None and len(anchor):
        shipped_anchor, adapted_anchor = anchor.errors(None, below), anchor.errors(full, below)
        checked = (len(anchor), int(shipped_anchor.sum()), int(adapted_anchor.sum()))
    truth = dice.truth[is_judged]
    worse = tuple(
        int(face) + 1
        for face in np.unique(truth)
        if reads.errors[is_judged][truth == face].sum()
        > shipped_errors[is_judged][truth == face].sum()
    )
    verdict = replace(decide(*per_fold, checked, worse), dice=int(is_judged.sum()))
    sureness = tuple(reads.sure if verdict.adopted else shipped_sure)
    return FoldCheck(verdict, sureness, full, fold_map(reads.raw, reads.right))


def leave_one_out(embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
    """N x FACES: each example's class-mean probabilities with the example left out of its
    face's mean (a face's only example sees that face as unseen: probability 0)."""
    values = np.asarray(values, np.int64)
    units = unit_rows(embeddings).astype(np.float64)
    sums = np.zeros((FACES, units.shape[1]))
    np.add.at(sums, values - 1, units)
    counts = np.bincount(values - 1, minlength=FACES)[:FACES]
    similarity = units @ unit_rows(sums).T.astype(np.float64)  # N x FACES
    rows = np.arange(len(values))
    rest = unit_rows(sums[values - 1] - units)  # the example's face without it
    similarity[rows, values - 1] = np.einsum("ij,ij->i", units, rest)
    logits = np.where(counts > 0, SIMILARITY_SCALE * similarity, -np.inf)
    alone = counts[values - 1] < 2
    logits[rows[alone], values[alone] - 1] = -np.inf
    probabilities = np.zeros_like(logits)
    some = np.isfinite(logits).any(axis=1)
    probabilities[some] = softmax(logits[some])
    return probabilities


def leave_one_out_own(embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
    """N: each example's leave-one-out class-mean probability of its value (NaN for a face's
    only example: nobody else to compare it with)."""
    values = np.asarray(values, np.int64)
    probabilities = leave_one_out(embeddings, values)
    result = probabilities[np.arange(len(values)), values - 1]
    counts = np.bincount(values - 1, minlength=FACES)
    result[counts[values - 1] < 2] = np.nan
    return np.asarray(result)


def held_back(examples: Sequence[Example]) -> list[int]:
    """Indices of the examples to leave out of the fit and show the host (module
    docstring). Two passes, so that a face with several wrong examples is judged again
    once the worst are out."""
    candidates = list(range(len(examples)))
    suspect: list[int] = []
    for _ in range(2):
        if not candidates:
            break
        embeddings = np.stack([examples[k].embedding for k in candidates])
        values = np.array([examples[k].value for k in candidates])
        own = leave_one_out_own(embeddings, values)
        found = [k for k, p in zip(candidates, own, strict=True) if _suspect(examples[k], float(p))]
        if not found:
            break
        suspect += found
        candidates = [k for k in candidates if k not in set(found)]
    return sorted(suspect)


def _suspect(example: Example, own: float) -> bool:
    """Held back: the host did not keep it, the shipped head does not vouch for its value,
    and either the rest of its face finds it unlike them (`own` under HOLD_BACK_BELOW) or
    the shipped head refuses its value and the rest of its face (if any) does not vouch
    for it (`own` NaN: it is its face's only example)."""
    if example.kept_by_host:
        return False
    shipped = example.probabilities
    shipped_p = None if shipped is None else float(shipped[example.value - 1])
    if shipped_p is not None and shipped_p >= SHIPPED_VOUCHES:
        return False
    if own < HOLD_BACK_BELOW:
        return True
    refused = shipped_p is not None and shipped_p < SHIPPED_REFUSES
    return refused and not own >= OWN_VOUCHES  # NaN compares false: nobody vouches


# ----------------------------------------------------------------------------------------
# Colour


def _median_lab(labs: Sequence[Lab]) -> Lab:
    median = np.median(np.asarray(labs, np.float64), axis=0)
    return (float(median[0]), float(median[1]), float(median[2]))


def adapted_dice_set(dice_set: DiceSet, examples: Sequence[Example]) -> DiceSet:
    """The set with each die's colour moved to the setup's own: the median Lab of the
    examples confirmed as that set die, blended with the calibrated Lab (which counts as
    COLOUR_PRIOR_EXAMPLES dice) by how many there are."""
    dice = []
    for j, die in enumerate(dice_set.dice):
        labs = [e.lab for e in examples if e.set_index == j and e.lab is not None]
        if not labs:
            dice.append(die)
            continue
        own = np.asarray(_median_lab(labs))
        w = len(labs) / (len(labs) + COLOUR_PRIOR_EXAMPLES)
        lab = (1 - w) * np.asarray(die.lab) + w * own
        dice.append(SetDie(die.colour, (float(lab[0]), float(lab[1]), float(lab[2]))))
    return DiceSet(dice_set.name, tuple(dice), dice_set.source or "adapted")


@dataclass(frozen=True)
class OwnColours:
    """The setup's confirmed dice as colour prototypes: each die's name and body colour
    (N x 3 Lab). A mixed bag of dice holds several dice of one name that look nothing
    alike (a translucent blue and an opaque one), so each die counts on its own, not a
    name's median."""

    names: tuple[str, ...] = ()
    labs: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)), repr=False)

    def name(self, lab: Sequence[float]) -> str:
        """A body colour's name: the nearest confirmed die's name when that die is nearer
        than the shipped name's nearest prototype, else the shipped name."""
        shipped = name_colour(lab).name
        if not self.names:
            return shipped
        weights = np.array([LIGHTNESS_WEIGHT, 1.0, 1.0])
        distances = np.linalg.norm((self.labs - np.asarray(lab, np.float64)) * weights, axis=1)
        nearest = int(np.argmin(distances))
        if distances[nearest] <= prototype_distance(lab, shipped):
            return self.names[nearest]
        return shipped


def own_colours(examples: Sequence[Example]) -> OwnColours:
    """The examples confirmed with a colour name and a measured body colour."""
    named = [(e.colour, e.lab) for e in examples if e.colour is not None and e.lab is not None]
    if not named:
        return OwnColours()
    return OwnColours(tuple(n for n, _ in named), np.array([lab for _, lab in named], np.float64))


# ----------------------------------------------------------------------------------------
# The adapted reader


@dataclass(frozen=True)
class Adaptation:
    """What a setup's examples made: the value head, the adapted dice set (None without a
    set), the own colours, which examples were held back (indices into the examples
    given), and per used example how sure the adapted reader would be of its value on a
    new photo (`sureness`, NaN where it cannot say)."""

    head: ValueHead
    dice_set: DiceSet | None
    colours: OwnColours
    held: tuple[int, ...]
    used: int
    sureness: tuple[float, ...] = ()


def adapt(
    examples: Sequence[Example],
    dice_set: DiceSet | None = None,
    anchor: Judged | None = None,
    *,
    second_look_below: float,
) -> Adaptation:
    """Fit the setup's heads on its examples, the suspect ones held back; the value head
    reads only when the fold check adopts it (companion.vision.adapt_gate), `anchor` the
    no-forgetting sample (None: not checked), the dice read with the second look of the
    classifier that made the examples (its ``second_look_below``)."""
    held = held_back(examples)
    skip = set(held)
    used = [e for k, e in enumerate(examples) if k not in skip]
    check = check_folds(used, anchor, second_look_below=second_look_below)
    adopted = check.verdict.adopted
    delta = check.delta if adopted else None
    head = ValueHead(delta, face_counts(used), check.verdict, check.fold_map if adopted else None)
    adapted = adapted_dice_set(dice_set, used) if dice_set is not None else None
    return Adaptation(head, adapted, own_colours(used), tuple(held), len(used), check.sureness)


class AdaptedClassifier(PipClassifier):
    """The shipped pip classifier (the same ONNX session) with a setup's value head
    applied to each crop's probabilities: a few hundred multiply-adds per die. Its second
    look is the shipped one's (classifier.PipClassifier.classify) with the head applied to
    every view, and asked for by the adapted probabilities: a die the setup's head reads
    surely needs no second look, one it doubts gets one. Each die's confidence is the
    head's (`ValueHead.confidence`)."""

    def __init__(self, base: PipClassifier, head: ValueHead) -> None:
        super().__init__(base.model)
        self.base = base
        self.head = head
        self.second_look_below = base.second_look_below  # the base's, set or from its manifest
        if head.active and head.confidence_map is not None:
            # the shipped map scores the shipped head's probabilities (and its looks); an
            # adopted head's dice are scored by the map its own folds refitted, under the
            # shipped map's auto-apply threshold (the roll's rule stays the shipped one's)
            shipped_threshold = base.confidence_map.threshold if base.confidence_map else None
            self.confidence_map = replace(head.confidence_map, threshold=shipped_threshold)

    def classify(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox], looks: bool = False
    ) -> Classified:
        if not self.head.active or self.embedding_index is None:
            return super().classify(image_bgr, boxes, looks)
        if looks:  # the shipped model's independent looks beside the head's reading
            seen = super().classify(image_bgr, boxes, looks=True)
            adapted = self.classify(image_bgr, boxes)
            return dataclasses.replace(adapted, views=seen.views, wide=seen.wide)
        crops = self.crops(image_bgr, boxes)
        outputs = self.model.run(self.model.normalise(crops))
        embeddings = outputs[self.embedding_index]
        shipped = outputs[self.probabilities_index]
        # each die cut a second time, at the store's size: its look is the stored crops' (the
        # floor is theirs), and neither cut can stand for the other (demo clip, 98 dice: the
        # look of the 48 px cut is up to 0.28 off, over a greyscale floor of 0.125; the 48 px
        # crop shrunk from the 64 px one reads a die otherwise); the cut costs ~20 us a die
        chroma = crop_looks(image_bgr, boxes, self.margin) if self.head.reads_by_look else None
        probabilities = self.head.adjust(shipped, embeddings, chroma)
        unsure = np.flatnonzero(probabilities.max(axis=1) < self.second_look_below)
        if len(unsure):
            views = self.model.run(self.model.normalise(symmetric_views(crops[unsure])))
            turned = None if chroma is None else np.tile(chroma[unsure], (VIEWS - 1, 1))
            others = self.head.adjust(
                views[self.probabilities_index], views[self.embedding_index], turned
            )  # a look is the same in every view (adapt_look.chroma_signature)
            others = others.reshape(-1, len(unsure), probabilities.shape[1])
            probabilities[unsure] = (probabilities[unsure] + others.sum(axis=0)) / (1 + len(others))
        return Classified(probabilities, embeddings, self.head.confidence(probabilities, shipped))

    def vouched(self, readings: tuple[DieReading, ...]) -> tuple[DieReading, ...]:
        """Each read die no surer than the adopted head proved on the setup's left-out
        photos (`Verdict.ceiling`), whatever the shipped map makes of its probabilities."""
        return self.head.gate.vouch(readings) if self.head.active else readings
