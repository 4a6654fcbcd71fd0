"""Whether the camera is sure of a matching roll, as the hub asks it (issue 14 item 4).

The vision models decide (companion.vision.confidence, the calibrated confidence): a die's
confidence is the probability that it is read right, a roll's the product of its dice's,
and a roll whose confidence clears the classifier's shipped auto-apply threshold (at most
one wrong roll in 500 on the calibration part) is applied without a tap; otherwise the
question names only the fewest dice without which the rest would clear it, the least sure
first, each with its two likeliest values (`decide_roll`). A classifier without a shipped
threshold makes no promise: nothing is sure and every die is asked about.

`verdict` turns that decision into the hub's `RollVerdict` (companion.web.held_reading);
`mode_line` is what the table page says the camera does with a matching roll. A die's
confidence is the one the reader calibrated (companion.vision.pipeline.calibrate: its
eight views, its wide crop, the finder's peak, its OOD score, through the classifier's
look model), so the live table decides exactly as bench/auto_apply.py measures. The reader
takes the views and the wide crop only of the dice that could reach the threshold
(pipeline.take_looks: none while no threshold ships); the others are asked about whatever
their looks, so the decisions are the same (bench/looks_skip.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from companion.vision.confidence import decide_roll
from companion.vision.types import DieReading
from companion.web.held_reading import Decide, Mode, RollVerdict, UnsureDie


def verdict(dice: Sequence[DieReading], on_table: int, threshold: float | None) -> RollVerdict:
    """The hub's verdict on a matching roll of `on_table` dice (the kept ones included)."""
    decision = decide_roll(dice, on_table, threshold)
    unsure = tuple(UnsureDie(u.index, u.choices) for u in decision.unsure)
    return RollVerdict(decision.apply, unsure, decision.roll_confidence)


def decider(threshold: float | None) -> Decide:
    """The verdict function for a classifier whose shipped threshold is `threshold`."""
    return partial(verdict, threshold=threshold)


def shipped_threshold(reader: object) -> float | None:
    """The auto-apply threshold the reader's classifier ships with its calibrated
    confidence map (the classifier manifest's ``confidence``), or None: an uncalibrated
    model (or no reader), of which no roll is sure."""
    classifier = getattr(reader, "classifier", None)
    confidence_map = getattr(classifier, "confidence_map", None)
    threshold = getattr(confidence_map, "threshold", None)
    return None if threshold is None else float(threshold)


def mode_line(mode: Mode, threshold: float | None) -> str:
    """What the table page says the camera does with a roll that matches the game's."""
    if mode == "auto":
        return "The camera applies every roll that matches the game at once."
    if mode == "confirm":
        return (
            "The camera reads each roll; it counts once the active player taps "
            "\u201cUse this roll\u201d."
        )
    if threshold is None:
        return (
            "The camera applies only rolls it is sure of, and these models are sure of "
            "none: the active player answers every die."
        )
    return (
        "The camera applies a roll it is sure of (on tables it never saw, at most 1 such "
        "roll in 500 was wrong) and otherwise asks the active player about the unsure dice "
        "only."
    )
