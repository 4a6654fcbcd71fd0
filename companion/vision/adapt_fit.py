"""A regularised logistic regression on the pip classifier's embedding, anchored at the
shipped final layer: the setup's value head (companion.vision.adapt).

The shipped head is ``probabilities = softmax(embedding x W^T + b)`` (the manifest says
so). A setup's head is ``W + dW``, ``b + db``, fitted on its confirmed dice by minimising

    sum over rows of cross-entropy  +  lam x (||dW||^2 + ||db||^2)

so that a few examples shift the shipped decision boundary instead of voting against it,
and many examples move it as far as they agree. The shipped weights are never read: the
log of the shipped probabilities of a crop is its logits up to a constant that the softmax
ignores, so each row carries its shipped log-probabilities as an offset and only dW, db
are fitted. That is exactly the anchored regression, for any classifier whose manifest
declares the embedding (no weights file, no ONNX parsing).

**Only the faces seen.** The softmax runs over the faces the setup has examples of
(`seen`): its examples say which of those faces a die shows, nothing about the faces it
has not seen or about "unreadable". So the head shares out, among the seen faces, only
the probability the shipped head gives them together (`apply`); the other faces keep the
shipped head's probability. Without that, five photos of 1s, 4s and 5s teach the head that
no die is ever a 6.

**Only dice like the setup's** (`Likeness`). A head learns what separates this table's
dice; on a die of another kind it moves a decision boundary it has no evidence about (a
setup taught ringed ones, which the shipped net calls 2, pushed every 2-like die away from
2, and one borderline 2 of another table flipped to 4). So the head reads only the crops
whose embedding is at least as like one of the setup's confirmed dice as its own dice are
like each other (the floor, companion.vision.adapt `likeness_of`), and which look like
them: their chroma signature lies near one of theirs (companion.vision.adapt_look: the
embedding alone let nearly every die of other tables through); any other crop keeps the
shipped probabilities.

**The solver** is a majorise-minimise Newton iteration with Nesterov momentum: the
Hessian of the multinomial cross-entropy is bounded by 1/2 (I - 11^T/C) (x) X^T X
(Boehning, 1992), so one inverse of a (D+1) x (D+1) matrix per fit preconditions every
step. Its products run in blocks of BLOCK_ROWS rows (GRAM_ROWS for X^T X): OpenBLAS threads
a product above about 262,000 multiply-adds, and on a busy two-core machine its threads
spin against each other (measured: a 1,024-row X^T X took 48 ms threaded, 0.6 ms in one
thread; the blocked one 2.6 ms either way).

Pure numpy (a look's distances from companion.vision.adapt_look), no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from companion.vision.adapt_look import LOOK_WIDTH, nearest_distance

BLOCK_ROWS = 256  # rows per block of the logits and gradient products (256 x 97 x 6 < 262k)
GRAM_ROWS = 16  # rows per block of X^T X (97 x 16 x 97 < 262k)
MAX_ITERATIONS = 60
TOLERANCE = 1e-4  # largest change of a weight between two steps that ends the fit
LOG_FLOOR = 1e-30  # probabilities are floored here before the log (float32 underflow)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class Rows:
    """Training rows: N x D features, N x 7 shipped probabilities of the same crops (the
    offsets), N classes 0..5."""

    features: np.ndarray = field(repr=False)
    shipped: np.ndarray = field(repr=False)
    labels: np.ndarray


@dataclass(frozen=True)
class Likeness:
    """Which crops are like the setup's own dice (module docstring, "Only dice like the
    setup's"): M x D unit rows, the embeddings of its confirmed dice, and the cosine
    similarity to the nearest of them from which a crop counts as one of the setup's; and
    their looks (M x LOOK_WIDTH chroma signatures, companion.vision.adapt_look) with the
    distance within which a crop looks like theirs (None: no gate by look)."""

    prototypes: np.ndarray = field(repr=False)
    floor: float
    looks: np.ndarray | None = field(default=None, repr=False)
    look_floor: float = 0.0

    def mask(self, features: np.ndarray, looks: np.ndarray | None = None) -> np.ndarray:
        """N booleans: the crop whose embedding is row n (and whose look is row n of
        ``looks``) is like the setup's dice. With a gate by look, a crop whose look is not
        given or not known (NaN) is like none."""
        if not len(features):
            return np.zeros(0, bool)
        like = nearest_similarity(features, self.prototypes) >= self.floor
        if self.looks is None:
            return np.asarray(like)
        if looks is None:
            return np.zeros(len(features), bool)
        with np.errstate(invalid="ignore"):
            near = nearest_distance(looks, self.looks) <= self.look_floor
        return np.asarray(like & near)

    def arrays(self) -> dict[str, np.ndarray]:
        """The likeness as the arrays `from_arrays` reads (saved beside a head or a net)."""
        saved = {"prototypes": self.prototypes, "floor": np.array(self.floor)}
        if self.looks is not None:
            saved |= {"looks": self.looks, "look_floor": np.array(self.look_floor)}
        return saved

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray], width: int) -> Likeness:
        """The likeness saved as arrays ``prototypes`` and ``floor`` (with a value head's
        weights, or beside a fine-tuned net), and ``looks`` and ``look_floor`` where it
        gates by look; ValueError when its prototypes do not fit an embedding ``width``
        wide or its looks are not LOOK_WIDTH wide."""
        looks = np.asarray(data["looks"], np.float32) if "looks" in data else None
        like = cls(
            np.asarray(data["prototypes"], np.float32),
            float(data["floor"]),
            looks,
            float(data["look_floor"]) if looks is not None else 0.0,
        )
        if like.prototypes.ndim != 2 or like.prototypes.shape[1] != width:
            raise ValueError(
                f"prototypes {like.prototypes.shape} do not fit embedding width {width}"
            )
        if looks is not None and (looks.ndim != 2 or looks.shape[1] != LOOK_WIDTH):
            raise ValueError(f"looks {looks.shape} are not {LOOK_WIDTH} wide")
        return like


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1, as float32 (a zero row stays zero)."""
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.asarray(matrix / np.maximum(norms, 1e-12), np.float32)


def nearest_similarity(features: np.ndarray, prototypes: np.ndarray) -> np.ndarray:
    """Per row of ``features``: its cosine similarity to the nearest prototype (unit rows)."""
    return np.asarray((unit_rows(features) @ prototypes.T).max(axis=1))


@dataclass(frozen=True)
class Delta:
    """What a fit adds to the shipped head: per seen face (class index, increasing) a row
    of D weights and a bias, (len(seen)) x (D + 1); and which crops it reads (``like``:
    None, every crop)."""

    seen: tuple[int, ...]
    weights: np.ndarray = field(repr=False)
    like: Likeness | None = None

    def apply(
        self, shipped: np.ndarray, features: np.ndarray, looks: np.ndarray | None = None
    ) -> np.ndarray:
        """N x 7 probabilities: the shipped ones with the seen faces' share given out by
        the adapted logits (module docstring); a crop unlike the setup's dice keeps the
        shipped ones. ``shipped``: N x 7 probabilities of the crops whose features (N x D)
        and looks (N x LOOK_WIDTH, adapt_look; None: not measured) these are."""
        if len(self.seen) < 2 or not len(shipped):
            return shipped
        if self.like is not None:
            like = self.like.mask(features, looks)
            out = np.array(shipped, copy=True)
            if like.any():
                out[like] = self._adapted(np.asarray(shipped)[like], np.asarray(features)[like])
            return out
        return self._adapted(shipped, features)

    def _adapted(self, shipped: np.ndarray, features: np.ndarray) -> np.ndarray:
        seen = list(self.seen)
        part = np.asarray(shipped, np.float64)[:, seen]
        logits = np.log(np.maximum(part, LOG_FLOOR))
        logits += np.asarray(features, np.float64) @ self.weights[:, :-1].T + self.weights[:, -1]
        out = np.array(shipped, np.float64, copy=True)
        out[:, seen] = part.sum(axis=1, keepdims=True) * softmax(logits)
        return np.asarray(out, shipped.dtype)


def _blocks(matrix: np.ndarray, rows: int) -> np.ndarray:
    """``matrix`` (N x K) as B x rows x K, zero rows added at the end."""
    pad = (-len(matrix)) % rows
    padded = np.vstack([matrix, np.zeros((pad, matrix.shape[1]), matrix.dtype)])
    return padded.reshape(-1, rows, matrix.shape[1])


def fit(rows: Rows, lam: float) -> Delta:
    """The anchored regression of the module docstring over the faces the rows show;
    a Delta that changes nothing when they show fewer than two."""
    labels = np.asarray(rows.labels, np.int64)
    seen = tuple(int(c) for c in np.unique(labels))
    width = rows.features.shape[1] + 1
    if len(seen) < 2:
        return Delta(seen, np.zeros((len(seen), width)))
    index = np.searchsorted(np.array(seen), labels)
    features = np.hstack([np.asarray(rows.features, np.float64), np.ones((len(labels), 1))])
    offsets = np.log(np.maximum(np.asarray(rows.shipped, np.float64)[:, list(seen)], LOG_FLOOR))
    targets = np.zeros((len(labels), len(seen)))
    targets[np.arange(len(labels)), index] = 1.0
    x = _blocks(features, BLOCK_ROWS)
    gram = np.matmul(_blocks(features, GRAM_ROWS).transpose(0, 2, 1), _blocks(features, GRAM_ROWS))
    bound = np.linalg.inv(0.5 * gram.sum(axis=0) + 2 * lam * np.eye(width))
    weights = _solve(x, _blocks(offsets, BLOCK_ROWS), _blocks(targets, BLOCK_ROWS), bound, lam)
    return Delta(seen, weights)


def _solve(
    x: np.ndarray, offsets: np.ndarray, targets: np.ndarray, bound: np.ndarray, lam: float
) -> np.ndarray:
    """Majorise-minimise steps with Nesterov momentum (module docstring). The padding
    rows are zero, the bias column too, so they add nothing to the gradient."""
    classes, width = targets.shape[2], x.shape[2]
    delta = np.zeros((classes, width))
    ahead, momentum = delta.copy(), 1.0
    for _ in range(MAX_ITERATIONS):
        residual = softmax(offsets + x @ ahead.T) - targets
        gradient = np.matmul(residual.transpose(0, 2, 1), x).sum(axis=0) + 2 * lam * ahead
        mean = gradient.mean(axis=0, keepdims=True)
        step = (gradient - mean) @ bound + mean / (2 * lam)
        new = ahead - step
        following = (1 + np.sqrt(1 + 4 * momentum * momentum)) / 2
        ahead = new + (momentum - 1) / following * (new - delta)
        change = float(np.abs(new - delta).max())
        delta, momentum = new, following
        if change < TOLERANCE:
            break
    return delta
