"""Scoring readings against labelled dice: one match rule for every measurement of the
vision models (bench/vision_eval.py, bench/vision_surfaces.py, the training recipe's
validation figures and its choice of peak rule), and one set of counts for the labelled
photos (vision_eval and the recipe), so that their figures agree.

Match rule: a reading matches a labelled die when its centre lies within MATCH_RADIUS x
the die's side of the labelled centre; closest pairs first, each die and each reading
used once. A matched die read as unreadable counts as misread.

And, for a labelled die the pipeline did not report, the stage that lost it (`where_lost`,
from the pipeline's `trace_dice`): bench/vision_misses.py."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from companion.vision.datasets import LabelledImage
from companion.vision.types import DieBox, DieReading

if TYPE_CHECKING:
    from companion.vision.pipeline import DiceTrace

MATCH_RADIUS = 0.6  # of the labelled die's side
SIZE_RANGE = (20, 150)  # the die sides (px) the vision issue asks for

# a die nobody labelled that has no readable value: (cx, cy, side)
IgnoreRegion = tuple[float, float, float]


def within_reach(box: DieBox, cx: float, cy: float, side: float) -> bool:
    """Whether a box's centre lies within MATCH_RADIUS x ``side`` of a die's centre: the
    reach of the match rule."""
    return math.hypot(box.cx - cx, box.cy - cy) <= MATCH_RADIUS * side


def pair_closest(
    dice: Sequence[tuple[float, float, float]], found: Sequence[DieBox]
) -> list[tuple[int, int]]:
    """(die index, found index) pairs for dice given as (cx, cy, side): closest first,
    within MATCH_RADIUS x the die's side, each die and each found box used once."""
    pairs = []
    for i, (cx, cy, side) in enumerate(dice):
        for j, box in enumerate(found):
            if within_reach(box, cx, cy, side):
                pairs.append((math.hypot(box.cx - cx, box.cy - cy), i, j))
    used_i: set[int] = set()
    used_j: set[int] = set()
    out = []
    for _, i, j in sorted(pairs):
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            out.append((i, j))
    return out


def off_dice(dice: Sequence[tuple[float, float, float]], found: Sequence[DieBox]) -> list[DieBox]:
    """The found boxes that `pair_closest` pairs with none of the dice: false dice."""
    paired = {j for _, j in pair_closest(dice, found)}
    return [box for j, box in enumerate(found) if j not in paired]


def match(truth: LabelledImage, found: Sequence[DieReading]) -> list[tuple[int, int]]:
    """(labelled index, found index) pairs for one photo."""
    return pair_closest([(d.cx, d.cy, d.side) for d in truth.dice], [r.where for r in found])


@dataclass
class Figures:
    """Counts over a set of photos; the ratios are properties."""

    images: int = 0
    labelled: int = 0
    matched: int = 0
    right: int = 0
    false: int = 0
    whole: int = 0  # photos with every die found and read right and no false die
    in_range: int = 0  # labelled dice within the size range (20-150 px)
    in_range_matched: int = 0
    in_range_right: int = 0
    # true 1-6 x read 1-6 / unreadable
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((6, 7), int))

    @property
    def missed(self) -> int:
        return self.labelled - self.matched

    @property
    def misread(self) -> int:
        return self.matched - self.right

    @property
    def unreadable(self) -> int:
        return int(self.confusion[:, 6].sum())

    @property
    def errors(self) -> int:
        """Missed + false + misread dice: the count the finder (and a finder and
        classifier pair) is judged by, models/README.md."""
        return self.missed + self.false + self.misread

    def summary(self) -> dict[str, float | int]:
        """The figures as written into the model manifests."""
        return {
            "images": self.images,
            "dice": self.labelled,
            "recall": ratio(self.matched, self.labelled),
            "false_dice_per_100_images": round(100 * self.false / max(1, self.images), 2),
            "value_accuracy_of_found": ratio(self.right, self.matched),
            "unreadable_rate_of_found": ratio(self.unreadable, self.matched),
            "missed_false_misread": self.errors,
        }

    def confusions(self) -> dict[str, int]:
        """The off-diagonal confusion cells as {"true->read": n} (read None: unreadable)."""
        out = {}
        for true, row in enumerate(self.confusion, start=1):
            for column, n in enumerate(row):
                read = None if column == 6 else column + 1
                if n and read != true:
                    out[confusion_key(true, read)] = int(n)
        return out


def read_outcomes(truth: LabelledImage, found: Sequence[DieReading]) -> list[tuple[float, bool]]:
    """(confidence, right) for every reading with a value: right when it is matched to a
    labelled die (the match rule) and shows its value; a false die is wrong. What a
    confidence map is fitted on and measured by (companion.vision.confidence)."""
    pairs = {j: i for i, j in match(truth, found)}
    return [
        (r.confidence, j in pairs and truth.dice[pairs[j]].value == r.value)
        for j, r in enumerate(found)
        if r.value is not None
    ]


def ratio(part: int, whole: int) -> float:
    """part / whole to four places, 0.0 for nothing counted."""
    return round(part / whole, 4) if whole else 0.0


def confusion_key(true: int, read: int | None) -> str:
    """How a confusion is named in the manifests: "6->3", "1->None" (read unreadable)."""
    return f"{true}->{read}"


def score(
    rows: Sequence[tuple[LabelledImage, Sequence[DieReading], Sequence[IgnoreRegion]]],
) -> Figures:
    """Figures over (labels, readings, ignore regions) per photo. A reading left unmatched
    near an ignore region (a die nobody labelled) is not counted false; each region
    excuses one reading, so a die found twice still counts once false."""
    figures = Figures()
    for truth, found, ignore in rows:
        figures.images += 1
        pairs = match(truth, found)
        figures.labelled += len(truth.dice)
        figures.matched += len(pairs)
        used = {j for _, j in pairs}
        extra = 0
        excused: set[int] = set()
        for j, reading in enumerate(found):
            if j in used:
                continue
            near = [
                k
                for k, (cx, cy, side) in enumerate(ignore)
                if k not in excused and within_reach(reading.where, cx, cy, side)
            ]
            if near:
                excused.add(near[0])
            else:
                extra += 1
        figures.false += extra
        correct = 0
        for i, j in pairs:
            value = found[j].value
            figures.confusion[truth.dice[i].value - 1, 6 if value is None else value - 1] += 1
            correct += value == truth.dice[i].value
        figures.right += correct
        by_label = dict(pairs)
        for i, die in enumerate(truth.dice):
            if SIZE_RANGE[0] <= die.side <= SIZE_RANGE[1]:
                figures.in_range += 1
                hit = by_label.get(i)
                figures.in_range_matched += hit is not None
                figures.in_range_right += hit is not None and found[hit].value == die.value
        figures.whole += correct == len(truth.dice) and extra == 0
    return figures


class LostAt(StrEnum):
    """Where the pipeline lost a labelled die it did not report (`where_lost`), earliest
    stage first; bench/vision_misses.py counts them."""

    NO_PEAK = "no peak"
    UNDER_FLOOR = "peak under the rule's floor"
    SUPPRESSED = "suppressed by a stronger peak"
    FILTERED = "dropped by the box filters"
    PEAK_RULE = "dropped by the peak rule"
    TO_NEIGHBOUR = "its box matched a neighbour"


def where_lost(
    die: tuple[float, float, float], trace: DiceTrace, candidates: Sequence[DieBox]
) -> LostAt:
    """The stage that lost a labelled die (cx, cy, side) the pipeline did not report, from
    the pipeline's `trace_dice` of the photo and the finder's candidates (every peak
    before suppression, `DiceFinder.candidates`) from a floor at or under the trace's.
    The last stage with something within reach of the die names it: a kept reading near
    an unmatched die went to a neighbour (one box for two touching dice); a reading the
    rule did not keep was dropped by the rule; and so on back to no peak at all."""
    cx, cy, side = die

    def near(box: DieBox) -> bool:
        return within_reach(box, cx, cy, side)

    if any(near(r.where) for r in trace.kept):
        return LostAt.TO_NEIGHBOUR
    if any(near(r.where) for r in trace.readings):
        return LostAt.PEAK_RULE
    if any(near(box) for box in trace.located):
        return LostAt.FILTERED
    if any(near(box) for box in candidates if box.score >= trace.floor):
        return LostAt.SUPPRESSED
    if any(near(box) for box in candidates):
        return LostAt.UNDER_FLOOR
    return LostAt.NO_PEAK
