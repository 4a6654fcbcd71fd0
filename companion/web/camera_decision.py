"""Whether the camera is sure of a matching roll, as the hub asks it (issue 14 item 4).

The vision models decide (companion.vision.confidence, the models' calibrated confidence):
a die's confidence is the probability that it is read right, a roll's the product of its
dice's, and a roll whose confidence clears the classifier's shipped auto-apply threshold
(at most one wrong roll in 500 on the calibration part) is applied without a tap;
otherwise the question names only the fewest dice without which the rest would clear it,
the least sure first, each with its two likeliest values. `verdict` turns that decision
into the hub's `RollVerdict` (companion.web.held_reading).

Until the calibrated models are installed (`decide_roll` and the manifest's threshold: the
`models` work of issue 14), `decide_roll_here` applies the same rule to the confidences the
reader gives; a classifier without a shipped threshold makes no promise, so nothing is sure
and every die is asked about (the rule's answer for a missing threshold).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, cast

from companion.vision.types import DieReading
from companion.web.held_reading import Decide, RollVerdict, UnsureDie


class UnsureLike(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def choices(self) -> tuple[int, int]: ...


class DecisionLike(Protocol):
    """What `companion.vision.confidence.RollDecision` gives (and `Decision` here)."""

    @property
    def apply(self) -> bool: ...
    @property
    def roll_confidence(self) -> float: ...
    @property
    def unsure(self) -> Sequence[UnsureLike]: ...


DecideRoll = Callable[[Sequence[DieReading], int, float | None], DecisionLike]


@dataclass(frozen=True, slots=True)
class Decision:
    apply: bool
    roll_confidence: float
    unsure: tuple[UnsureDie, ...] = ()


def die_confidence(die: DieReading) -> float:
    """A die's probability of being right in a roll: its confidence, 0 when unreadable."""
    return 0.0 if die.value is None else float(die.confidence)


def two_likeliest(die: DieReading) -> tuple[int, int]:
    """The die's two likeliest values by its class probabilities when the reader gives
    them, else its value and the opposite face's."""
    faces = getattr(die, "probabilities", None)
    if faces is not None:
        first, second = sorted(range(6), key=lambda k: (-float(faces[k]), k))[:2]
        return first + 1, second + 1
    value = die.value or 1
    return value, 7 - value


def decide_roll_here(
    dice: Sequence[DieReading], expected: int, threshold: float | None
) -> Decision:
    """The decision rule of the module docstring on the reader's confidences."""
    confidence = math.prod(die_confidence(d) for d in dice) if len(dice) == expected else 0.0
    if threshold is not None and len(dice) == expected and dice and confidence >= threshold:
        return Decision(True, confidence)
    remaining = sorted(range(len(dice)), key=lambda k: (die_confidence(dice[k]), k))
    goal = 1.01 if threshold is None else threshold  # no threshold: nothing is sure
    named: list[int] = []
    while remaining and math.prod(die_confidence(dice[k]) for k in remaining) < goal:
        named.append(remaining.pop(0))
    return Decision(False, confidence, tuple(UnsureDie(k, two_likeliest(dice[k])) for k in named))


def models_decide_roll() -> DecideRoll:
    """The models' `decide_roll` where it is installed, else `decide_roll_here`."""
    try:
        module = importlib.import_module("companion.vision.confidence")
    except ImportError:
        return decide_roll_here
    return cast(DecideRoll, module.decide_roll)


def verdict(
    dice: Sequence[DieReading], on_table: int, threshold: float | None, decide_roll: DecideRoll
) -> RollVerdict:
    """The hub's verdict on a matching roll of `on_table` dice."""
    decision = decide_roll(dice, on_table, threshold)
    unsure = tuple(UnsureDie(u.index, (u.choices[0], u.choices[1])) for u in decision.unsure)
    return RollVerdict(decision.apply, unsure, float(decision.roll_confidence))


def decider(threshold: float | None) -> Decide:
    """The verdict function for a reader whose shipped threshold is `threshold`."""
    return partial(verdict, threshold=threshold, decide_roll=models_decide_roll())


def shipped_threshold(reader: object) -> float | None:
    """The auto-apply threshold the reader's classifier ships (its manifest's calibrated
    confidence map), or None: an uncalibrated model, of which no roll is sure."""
    direct = getattr(reader, "auto_apply_threshold", None)
    if direct is not None:
        return float(direct)
    classifier = getattr(reader, "classifier", None)
    confidence_map = getattr(classifier, "confidence_map", None)
    threshold = getattr(confidence_map, "threshold", None)
    return None if threshold is None else float(threshold)
