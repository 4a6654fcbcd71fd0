"""Adapting the dice finder to one setup from its confirmed photos (issue 24, item 1): the
heat head refitted in numpy on the finder's own stride-4 features.

The finder's heads are one 1x1 convolution over 24 stride-4 feature channels (models/
README.md); ``models/dice_finder_features.onnx`` is the shipped finder with those features
as a second output (models/recipe/finder_features.py: same weights, the same maps). A
setup's finder head adds to the shipped heat logit a linear function of the features,

    heat = sigmoid(logit(shipped heat) + features . w + b),

fitted by an anchored logistic regression (the shipped logit as each cell's offset, the
penalty LAMBDA x ||(w, b)||^2, so that a few photos shift the shipped heat rather than
replace it) on three kinds of cells of each confirmed photo's first pass:

- **a die**: the cell of each confirmed die's centre (the strongest shipped cell within
  one cell of it), target 1, whether the finder found it or the host added it (a missed
  die);
- **a false die**: every shipped peak from the peak rule's floor up that is not within
  EXCLUDE x side of a confirmed die (what the host removed, or the classifier had to veto),
  target 0;
- **the table**: BACKGROUND_CELLS cells drawn (seeded) away from the dice, target 0: they
  hold the rest of the map where the shipped finder had it.

Only the heat changes; the side, offset and angle maps are the shipped ones. Whether the
head reads is decided as for the value head (companion.vision.adapt_gate): k-fold by photo,
each photo's missed + false + misread dice through the whole pipeline with the head fitted
without it against the shipped finder's, a one-sided sign test, and no more errors on the
no-forgetting sample (`AdaptedFinder` with head None reads exactly as the shipped finder).

Reading costs the shipped finder's net (the same graph, one more output) and a 25-wide
dot product per cell (about 12,000 cells for a 512 x 384 input)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.vision.finder import DiceFinder, local_maxima
from companion.vision.model import ModelError, OnnxModel, default_models_dir

FEATURES_FILE = "dice_finder_features.onnx"
FEATURES_OUTPUT = "features"
LAMBDA = 1.0
BACKGROUND_CELLS = 256
EXCLUDE = 0.6  # x a die's side: cells this near a confirmed die are no false die, no table
HARD_TABLE = 0.1  # shipped peaks away from the dice from this heat up are taught as no die
HEAT_FLOOR = 1e-6  # heat clipped to [floor, 1 - floor] before the logit
NEWTON_STEPS = 30
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Spot:
    """A confirmed die of a photo, where the finder is taught it: centre and side in
    pixels of the photo."""

    cx: float
    cy: float
    side: float


@dataclass(frozen=True)
class FinderHead:
    """What a setup adds to the shipped heat logit: C weights and a bias (C + 1)."""

    weights: np.ndarray = field(repr=False)

    def heat(self, heat: np.ndarray, features: np.ndarray) -> np.ndarray:
        """The adapted heat (H x W) of a shipped heat map and its features (C x H x W)."""
        # float32 throughout: this runs on every cell of every frame
        clipped = np.clip(np.asarray(heat, np.float32), HEAT_FLOOR, 1 - HEAT_FLOOR)
        weights = self.weights.astype(np.float32)
        logit = np.log(clipped / (1 - clipped))
        logit += np.tensordot(weights[:-1], features, axes=1) + weights[-1]
        return np.asarray(1 / (1 + np.exp(-logit)), np.float32)


@dataclass(frozen=True)
class FinderRows:
    """Training cells: N x C features, N shipped logits (offsets), N targets 0/1."""

    features: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    targets: np.ndarray = field(repr=False)

    @classmethod
    def join(cls, parts: Sequence[FinderRows]) -> FinderRows:
        if not parts:
            return cls(np.zeros((0, 0)), np.zeros(0), np.zeros(0))
        return cls(
            np.vstack([p.features for p in parts]),
            np.concatenate([p.offsets for p in parts]),
            np.concatenate([p.targets for p in parts]),
        )


class AdaptedFinder(DiceFinder):
    """The shipped finder's settings and peak rule over the features file, its heat
    changed by a setup's head (None: the shipped finder's maps, to the bit)."""

    def __init__(self, base: DiceFinder, features: OnnxModel, head: FinderHead | None) -> None:
        derived = features.manifest.raw.get("derived_from", {})
        if derived.get("sha256") != base.model.manifest.sha256:
            raise ModelError(
                f"{features.path}: 'derived_from.sha256' is not the finder's "
                f"{base.model.manifest.sha256[:12]}... (made for another finder)"
            )
        if FEATURES_OUTPUT not in features.manifest.output_names:
            raise ModelError(f"{features.path}: no '{FEATURES_OUTPUT}' output ('outputs.names')")
        self.__dict__.update(base.__dict__)
        self.model = features
        self.base = base
        self.head = head
        self._features_index = features.manifest.output_names.index(FEATURES_OUTPUT)
        shape = features.manifest.output_shapes.get(FEATURES_OUTPUT)
        width = shape[1] if shape and len(shape) > 1 else None
        if not isinstance(width, int):
            raise ModelError(f"{features.path}: 'outputs.shapes.{FEATURES_OUTPUT}' has no width")
        self.features_width = width

    @classmethod
    def load(  # type: ignore[override]
        cls, base: DiceFinder, head: FinderHead | None = None, models_dir: Path | None = None
    ) -> AdaptedFinder:
        directory = models_dir if models_dir is not None else default_models_dir()
        return cls(base, OnnxModel.load(directory / FEATURES_FILE), head)

    def with_head(self, head: FinderHead | None) -> AdaptedFinder:
        """The same finder (one ONNX session) with another head."""
        other = AdaptedFinder.__new__(AdaptedFinder)
        other.__dict__.update(self.__dict__)
        other.head = head
        return other

    def maps(self, batch: np.ndarray) -> np.ndarray:
        if self.head is None:
            return self.base.maps(batch)
        maps, features = self.run_both(batch)
        maps[0] = self.head.heat(maps[0], features)
        return maps

    def run_both(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The shipped maps (6 x H x W) and the features (C x H x W) of one prepared input."""
        outputs = self.model.run(batch)
        return np.array(outputs[0][0], copy=True), np.asarray(outputs[self._features_index][0])

    def photo_rows(
        self, image: np.ndarray, dice: Sequence[Spot], seed: int, aside: Sequence[Spot] = ()
    ) -> FinderRows:
        """The training cells of one confirmed photo (module docstring), first pass only;
        the cells near a spot ``aside`` (a die the host deleted: likely a real die) are
        learnt neither as a die nor as the table."""
        height, width = image.shape[:2]
        batch, factor = self.prepare(image, self.first_pass_long_side(max(height, width)))
        maps, features = self.run_both(batch)
        heat = maps[0]
        scale = factor / self.stride
        inside = np.zeros(heat.shape, bool)
        inside[: math.ceil(height * scale), : math.ceil(width * scale)] = True
        near = _near_dice(heat.shape, [*dice, *aside], scale)
        die_cells = [_peak_cell(heat, d.cx * scale, d.cy * scale) for d in dice]
        false = local_maxima(heat) & (heat >= HARD_TABLE) & inside & ~near
        free = np.flatnonzero((inside & ~near & ~false).ravel())
        rng = np.random.default_rng(seed)
        table = rng.choice(free, min(BACKGROUND_CELLS, len(free)), replace=False)
        ys = np.concatenate(
            [[y for y, _ in die_cells], np.nonzero(false)[0], table // heat.shape[1]]
        )
        xs = np.concatenate(
            [[x for _, x in die_cells], np.nonzero(false)[1], table % heat.shape[1]]
        )
        ys, xs = ys.astype(np.int64), xs.astype(np.int64)
        targets = np.zeros(len(ys))
        targets[: len(die_cells)] = 1.0
        clipped = np.clip(heat[ys, xs].astype(np.float64), HEAT_FLOOR, 1 - HEAT_FLOOR)
        return FinderRows(
            features[:, ys, xs].T.astype(np.float64), np.log(clipped / (1 - clipped)), targets
        )


def _near_dice(shape: tuple[int, ...], dice: Sequence[Spot], scale: float) -> np.ndarray:
    """Cells within EXCLUDE x side (at least 1.5 cells) of a die's centre."""
    ys, xs = np.mgrid[0 : shape[0], 0 : shape[1]]
    near = np.zeros(shape, bool)
    for d in dice:
        radius = max(1.5, EXCLUDE * d.side * scale)
        near |= np.hypot(xs + 0.5 - d.cx * scale, ys + 0.5 - d.cy * scale) <= radius
    return near


def _peak_cell(heat: np.ndarray, x: float, y: float) -> tuple[int, int]:
    """The strongest cell within one cell of (x, y) in cell units."""
    cy = int(np.clip(math.floor(y), 0, heat.shape[0] - 1))
    cx = int(np.clip(math.floor(x), 0, heat.shape[1] - 1))
    y0, x0 = max(cy - 1, 0), max(cx - 1, 0)
    window = heat[y0 : cy + 2, x0 : cx + 2]
    dy, dx = np.unravel_index(int(np.argmax(window)), window.shape)
    return y0 + int(dy), x0 + int(dx)


def fit_finder_head(rows: FinderRows, lam: float = LAMBDA) -> FinderHead | None:
    """The anchored logistic regression of the module docstring (Newton steps on C + 1
    weights); None without a die to learn from."""
    if not len(rows.targets) or not rows.targets.any():
        return None
    x = np.hstack([rows.features, np.ones((len(rows.targets), 1))])
    weights = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-(rows.offsets + x @ weights)))
        gradient = x.T @ (p - rows.targets) + 2 * lam * weights
        hessian = (x * (p * (1 - p))[:, None]).T @ x + 2 * lam * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.abs(step).max()) < TOLERANCE:
            break
    return FinderHead(weights)
