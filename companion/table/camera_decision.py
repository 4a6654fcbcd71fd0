"""The one decision on a settled throw (`decide_throw`): the roll to apply, or the reading
to hold as a question, by matching it to the roll the game expects (companion.live.match),
then, in mode "sure" (and to mark the unsure dice in mode "confirm"), by whether the
camera is sure of it (issue 14 item 4). A function of its input: the hub hands the throw
in and passes what comes out to the intake (companion.table.roll_intake).

The vision models decide (companion.vision.confidence, the calibrated confidence): a die's
confidence is the probability that it is read right, a roll's the product of its dice's,
and a roll whose confidence clears the classifier's shipped auto-apply threshold (at most
one wrong roll in 500 on the calibration part) is applied without a tap; otherwise the
question names only the fewest dice without which the rest would clear it, the least sure
first, each with its two likeliest values (`decide_roll`). A classifier without a shipped
threshold makes no promise: nothing is sure and every die is asked about.

`verdict` turns that decision into a `RollVerdict` (companion.table.held_reading);
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

from companion.live.settle import RollEvent
from companion.rules.base import Throw
from companion.table.held_reading import (
    CameraRoll,
    Decide,
    HeldReading,
    Mode,
    RollVerdict,
    UnsureDie,
    judge_throw,
)
from companion.vision.confidence import decide_roll
from companion.vision.types import DieReading


def decide_throw(
    event: RollEvent,
    throw: Throw,
    state_id: int,
    table_id: str,
    mode: Mode,
    held_id: str,
    threshold: float | None,
) -> CameraRoll | HeldReading:
    """A settled throw on state `state_id` of `table_id`, whose meaning the engine declared
    (`throw`), in the table's camera `mode`, with the classifier's shipped auto-apply
    `threshold`: the roll to apply (`CameraRoll`) or the question to hold (`HeldReading`,
    id `held_id`: a mismatch, a roll to confirm, or one with unsure dice)."""
    return judge_throw(
        event, throw, state_id, table_id, mode, held_id, decider_for(mode, threshold)
    )


def decider_for(mode: Mode, threshold: float | None) -> Decide | None:
    """How sure the camera is of a roll: in mode "sure" always (no shipped threshold:
    nothing is sure); in mode "confirm" only to mark the unsure dice of a calibrated model;
    not needed in mode "auto"."""
    if mode == "sure" or (mode == "confirm" and threshold is not None):
        return decider(threshold)
    return None


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
