"""Adapting the reader to one setup (a camera with a dice set) from the dice it confirmed.

Every roll a table confirms is a labelled photo of exactly this table, camera, light and
dice set. Two small heads, fitted in numpy in well under a second, turn them into a reader
that knows this setup:

- **values** (`ValueHead`): a nearest-class-mean head on the pip classifier's embedding
  (its pooled features, the second ONNX output). Each face's mean is the mean of the
  L2-normalised embeddings of the setup's dice confirmed with that value; a die's
  similarity to each mean (cosine, scaled by TEMPERATURE) gives the setup's own class
  probabilities, softmax over the faces it has seen. They are blended with the shipped
  head's, face by face, by how many examples that face has: weight n / (n + prior) for a
  face with n examples. The setup's head only shares out the probability the shipped head
  gives the faces it has seen: a face it has no example of, and "unreadable", keep the
  shipped head's probability.
- **how much it counts** (`choose_prior`): the prior is chosen per setup, on its own dice:
  the largest of PRIOR_CHOICES under which the blend, with each photo's dice left out of
  the face means, reads the most of the setup's dice right. So the setup's head gets a
  say only once it reads right dice of a new photo that the shipped head misreads (dice a
  tap corrected); until then (and with fewer than MIN_EXAMPLES_TO_CHOOSE dice) the prior
  is the largest and the shipped head keeps the say.
- **colours** (`adapted_dice_set`): each die of the set gets the setup's own colour, the
  median Lab of the dice confirmed as that set die, blended with the calibrated colour
  (which counts as COLOUR_PRIOR_EXAMPLES dice); without a set, `own_prototypes` gives each
  colour name the median Lab of its confirmed dice, named beside the shipped prototypes
  (`name_with`).

**A wrong tap must not poison it.** `held_back` finds the examples whose value disagrees
strongly with the rest of their face: with that example left out, the setup's other dice
of that value are much less like it than the dice of another value (own-head probability
of its value under HOLD_BACK_BELOW), or the shipped head refuses the value and no other
die of the face vouches for it; and the shipped head does not vouch for it either (its
probability of that value under SHIPPED_VOUCHES). Those are left out of the fit and
shown to the host, who deletes or keeps each one (a kept one is never held back again).

How this was chosen, on the calibration parts only (the photos held back from training
for fitting such things, companion/vision/datasets.py; never the validation parts or the
measure-only folders): after K confirmed photos (K = 5, 10, 25, 50) the shipped head
misread 33, 33, 33, 29 of the remaining dice of the four parts; a regularised logistic
regression on the embeddings with the shipped head as its offset (lambda 10) 32, 32, 33, 27; the
class means at a fixed prior of 4 37, 35, 28, 21 (better with many dice, worse with few,
and worse than the shipped head on byler-d6-train's mixed bag of dice sets); the class
means with the prior chosen as above 33, 32, 32, 29, never worse than the shipped head.
docs/benchmarks/adapt.md has the figures.

Nothing here does I/O: the examples come from companion.vision.adapt_store."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from companion.vision.classifier import Classified, PipClassifier
from companion.vision.colour import (
    LIGHTNESS_WEIGHT,
    DiceSet,
    SetDie,
    name_colour,
    prototype_distance,
)
from companion.vision.types import DieBox

FACES = 6  # classes 0..5 are the values 1..6; class 6, "unreadable", stays the shipped head's
CLASSES = 7
TEMPERATURE = 20.0  # cosine similarity -> logit scale of the class-mean head
PRIOR_EXAMPLES = 4.0  # fit_value_head's default prior: 4 dice of a face count half and half
# the priors `choose_prior` chooses from; the last is the shipped head keeping the say
PRIOR_CHOICES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 256.0)
MIN_EXAMPLES_TO_CHOOSE = 4
HOLD_BACK_BELOW = 0.05  # own-head probability of its value under which an example is suspect
SHIPPED_VOUCHES = 0.5  # ... unless the shipped head gives its value at least this much
SHIPPED_REFUSES = 0.05  # the shipped head's probability of a value it refuses
OWN_VOUCHES = 0.5  # ... which the rest of the face overrules from this own-head probability
COLOUR_PRIOR_EXAMPLES = 2.0  # the calibrated colour counts as this many confirmed dice

Lab = tuple[float, float, float]


@dataclass(frozen=True)
class Example:
    """One confirmed die of a setup, as the heads need it: its value 1-6, its embedding
    (D floats), the shipped head's 7 probabilities when it was read (None: not read by the
    camera, e.g. a die the host added), its body colour (Lab, None when not measured), its
    colour name and set die, and whether the host looked at it and kept it."""

    value: int
    embedding: np.ndarray = field(repr=False)
    probabilities: np.ndarray | None = field(default=None, repr=False)
    lab: Lab | None = None
    colour: str | None = None
    set_index: int | None = None
    kept_by_host: bool = False
    photo: str | None = None  # the photo it came from (None: a photo of its own)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.asarray(matrix / np.maximum(norms, 1e-12), np.float32)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=1, keepdims=True))


@dataclass(frozen=True)
class ValueHead:
    """The setup's face means (FACES x D, unit length; zero rows for faces without an
    example) and the example count of each face. `adjust` blends it with the shipped head."""

    means: np.ndarray = field(repr=False)
    counts: np.ndarray
    prior: float = PRIOR_EXAMPLES

    @property
    def examples(self) -> int:
        return int(self.counts.sum())

    def weights(self) -> np.ndarray:
        """How much the setup's head counts for each face: n / (n + prior)."""
        counts = self.counts.astype(np.float64)
        return counts / (counts + self.prior)

    def own_probabilities(self, embeddings: np.ndarray) -> np.ndarray:
        """N x FACES: the setup's own probabilities over the faces it has seen (0 for the
        others)."""
        seen = self.counts > 0
        logits = np.full((len(embeddings), FACES), -np.inf)
        logits[:, seen] = TEMPERATURE * (unit_rows(embeddings) @ self.means[seen].T)
        return _softmax(logits) if seen.any() else np.zeros_like(logits)

    def adjust(self, probabilities: np.ndarray, embeddings: np.ndarray | None) -> np.ndarray:
        """The shipped head's N x 7 probabilities blended with the setup's (module
        docstring); unchanged without embeddings or examples."""
        if embeddings is None or not len(probabilities) or self.examples == 0:
            return probabilities
        return blend(probabilities, self.own_probabilities(embeddings), self.weights())


def blend(shipped: np.ndarray, own: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per face k the setup has seen: (1 - w_k) x shipped_k + w_k x own_k x M, where M is
    the probability the shipped head gives all the seen faces together (the setup's head
    shares out only that); the other faces and "unreadable" keep the shipped head's."""
    seen = weights > 0
    out = np.array(shipped, np.float64, copy=True)
    mass = out[:, :FACES][:, seen].sum(axis=1, keepdims=True)
    w = weights[seen]
    out[:, :FACES][:, seen] = (1 - w) * out[:, :FACES][:, seen] + w * own[:, seen] * mass
    return np.asarray(out, shipped.dtype)


def face_means(embeddings: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FACES x D unit means of the unit embeddings of each value, and the counts."""
    units = unit_rows(embeddings)
    sums = np.zeros((FACES, units.shape[1]), np.float64)
    np.add.at(sums, values - 1, units)
    counts = np.bincount(values - 1, minlength=FACES)[:FACES]
    return unit_rows(sums), counts


def fit_value_head(
    embeddings: np.ndarray, values: np.ndarray, prior: float = PRIOR_EXAMPLES
) -> ValueHead:
    """The class-mean head of N examples (N x D embeddings, values 1-6)."""
    if not len(values):
        width = embeddings.shape[1] if embeddings.ndim == 2 else 0
        return ValueHead(np.zeros((FACES, width), np.float32), np.zeros(FACES, np.int64), prior)
    means, counts = face_means(embeddings, np.asarray(values, np.int64))
    return ValueHead(means, counts, prior)


def leave_one_out(embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
    """N x FACES: each example's own-head probabilities with the example left out of its
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
    logits = np.where(counts > 0, TEMPERATURE * similarity, -np.inf)
    alone = counts[values - 1] < 2
    logits[rows[alone], values[alone] - 1] = -np.inf
    probabilities = np.zeros_like(logits)
    some = np.isfinite(logits).any(axis=1)
    probabilities[some] = _softmax(logits[some])
    return probabilities


def leave_photo_out(
    embeddings: np.ndarray, values: np.ndarray, photos: Sequence[object]
) -> np.ndarray:
    """N x FACES: each example's own-head probabilities with every example of its photo
    left out of the face means (a new photo is what the head will be asked about; the
    other dice of the same photo share its light and would flatter it)."""
    values = np.asarray(values, np.int64)
    units = unit_rows(embeddings).astype(np.float64)
    sums = np.zeros((FACES, units.shape[1]))
    np.add.at(sums, values - 1, units)
    counts = np.bincount(values - 1, minlength=FACES)[:FACES]
    out = np.zeros((len(values), FACES))
    groups: dict[object, list[int]] = {}
    for k, photo in enumerate(photos):
        groups.setdefault(photo if photo is not None else ("die", k), []).append(k)
    for members in groups.values():
        mine = np.array(members)
        rest_sums = sums.copy()
        np.add.at(rest_sums, values[mine] - 1, -units[mine])
        rest_counts = counts - np.bincount(values[mine] - 1, minlength=FACES)[:FACES]
        seen = rest_counts > 0
        if not seen.any():
            continue
        logits = np.full((len(mine), FACES), -np.inf)
        logits[:, seen] = TEMPERATURE * (units[mine] @ unit_rows(rest_sums[seen]).T)
        out[mine] = _softmax(logits)
    return out


def leave_one_out_own(embeddings: np.ndarray, values: np.ndarray) -> np.ndarray:
    """N: each example's leave-one-out own-head probability of its value (NaN for a face's
    only example: nobody else to compare it with)."""
    values = np.asarray(values, np.int64)
    probabilities = leave_one_out(embeddings, values)
    result = probabilities[np.arange(len(values)), values - 1]
    counts = np.bincount(values - 1, minlength=FACES)
    result[counts[values - 1] < 2] = np.nan
    return np.asarray(result)


def choose_prior(examples: Sequence[Example]) -> float:
    """The largest prior (PRIOR_CHOICES) among those under which the blend of the shipped
    head and the own head fitted without the example's photo (`leave_photo_out`) reads
    the most of the setup's examples right: the setup's head gets a say only as far as it
    earns it on the setup's own dice, by reading right dice of a new photo that the
    shipped head misreads (which the taps that corrected them have shown). Where the
    shipped head reads this setup's dice right, a face's mean has nothing to add and only
    risks misreading a die unlike those seen (a mixed bag of dice sets), so the shipped
    head keeps the say; so too while fewer than MIN_EXAMPLES_TO_CHOOSE examples were read
    by the camera (nothing to judge the means by)."""
    read = [e for e in examples if e.probabilities is not None]
    if len(read) < MIN_EXAMPLES_TO_CHOOSE:
        return PRIOR_CHOICES[-1]
    values = np.array([e.value for e in read])
    embeddings = np.stack([e.embedding for e in read])
    own = leave_photo_out(embeddings, values, [e.photo for e in read])
    shipped = np.stack([e.probabilities for e in read if e.probabilities is not None])
    counts = np.bincount(values - 1, minlength=FACES)[:FACES].astype(np.float64)
    informed = own.sum(axis=1) > 0  # a photo holding every example of the seen faces: no say
    if informed.sum() < MIN_EXAMPLES_TO_CHOOSE:
        return PRIOR_CHOICES[-1]
    own, shipped, values = own[informed], shipped[informed], values[informed]
    best, best_right = PRIOR_CHOICES[-1], -1
    for prior in sorted(PRIOR_CHOICES, reverse=True):
        blended = blend(shipped.astype(np.float64), own, counts / (counts + prior))
        right = int((blended[:, :FACES].argmax(axis=1) == values - 1).sum())
        if right > best_right:  # a smaller prior only for more dice read right
            best, best_right = prior, right
    return best


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


def own_prototypes(examples: Sequence[Example]) -> dict[str, Lab]:
    """Per colour name the median Lab of the examples confirmed with that name."""
    by_name: dict[str, list[Lab]] = {}
    for e in examples:
        if e.colour is not None and e.lab is not None:
            by_name.setdefault(e.colour, []).append(e.lab)
    return {name: _median_lab(labs) for name, labs in by_name.items()}


def name_with(lab: Sequence[float], own: Mapping[str, Lab]) -> str:
    """A body colour's name with the setup's own prototypes beside the shipped ones: the
    nearest of its own prototypes when that is nearer than the shipped name's nearest."""
    shipped = name_colour(lab)
    if not own:
        return shipped.name
    weights = np.array([LIGHTNESS_WEIGHT, 1.0, 1.0])
    point = np.asarray(lab, np.float64)
    names = list(own)
    distances = [float(np.linalg.norm((np.asarray(own[n]) - point) * weights)) for n in names]
    best = int(np.argmin(distances))
    return (
        names[best] if distances[best] <= prototype_distance(point, shipped.name) else shipped.name
    )


# ----------------------------------------------------------------------------------------
# The adapted reader


@dataclass(frozen=True)
class Adaptation:
    """What a setup's examples made: the value head, the adapted dice set (None without a
    set), the own colour prototypes, which examples were held back (indices into the
    examples given), and per used example how sure the adapted reader would be of its
    value on a new photo (`sureness`, NaN where it cannot say)."""

    head: ValueHead
    dice_set: DiceSet | None
    prototypes: dict[str, Lab]
    held: tuple[int, ...]
    used: int
    sureness: tuple[float, ...] = ()

    def face_progress(self) -> list[float]:
        """Per face 1-6 how far the setup's head counts (0..1): n / (n + prior)."""
        return [float(w) for w in self.head.weights()]


def sureness(examples: Sequence[Example], head: ValueHead) -> tuple[float, ...]:
    """Per example, the probability the adapted reader gives its value when its photo is
    new to the head (the shipped head's probabilities blended with face means fitted
    without that photo): how sure the reader has become of such a die. NaN for a die the
    camera did not read (added by the host: no shipped probabilities)."""
    if not examples:
        return ()
    values = np.array([e.value for e in examples])
    own = leave_photo_out(
        np.stack([e.embedding for e in examples]), values, [e.photo for e in examples]
    )
    out = []
    for k, e in enumerate(examples):
        if e.probabilities is None:
            out.append(math.nan)
            continue
        blended = blend(
            np.asarray(e.probabilities, np.float64)[None], own[k : k + 1], head.weights()
        )
        out.append(float(blended[0, e.value - 1]))
    return tuple(out)


def adapt(examples: Sequence[Example], dice_set: DiceSet | None = None) -> Adaptation:
    """Fit the setup's heads on its examples, the suspect ones held back."""
    held = held_back(examples)
    skip = set(held)
    used = [e for k, e in enumerate(examples) if k not in skip]
    if used:
        embeddings = np.stack([e.embedding for e in used])
        head = fit_value_head(embeddings, np.array([e.value for e in used]), choose_prior(used))
    else:
        width = examples[0].embedding.shape[0] if examples else 0
        head = fit_value_head(np.zeros((0, width), np.float32), np.zeros(0, np.int64))
    adapted = adapted_dice_set(dice_set, used) if dice_set is not None else None
    return Adaptation(
        head, adapted, own_prototypes(used), tuple(held), len(used), sureness(used, head)
    )


class AdaptedClassifier(PipClassifier):
    """The shipped pip classifier (the same ONNX session) with a setup's value head
    applied to its probabilities: a few hundred multiply-adds per die."""

    def __init__(self, base: PipClassifier, head: ValueHead) -> None:
        super().__init__(base.model)
        self.base = base
        self.head = head

    def classify(self, image_bgr: np.ndarray, boxes: Sequence[DieBox]) -> Classified:
        classified = super().classify(image_bgr, boxes)
        adjusted = self.head.adjust(classified.probabilities, classified.embeddings)
        return Classified(adjusted, classified.embeddings)
