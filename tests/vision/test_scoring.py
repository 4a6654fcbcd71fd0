"""companion.vision.scoring: the one match rule and the counts that every vision figure
(bench/vision_eval.py, bench/vision_surfaces.py, the recipe's manifests) is made of."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from companion.vision.datasets import LabelledDie, LabelledImage
from companion.vision.pipeline import DiceTrace
from companion.vision.scoring import LostAt, off_dice, pair_closest, score, where_lost, within_reach
from companion.vision.types import DieBox, DieReading


def _photo(*dice: LabelledDie) -> LabelledImage:
    return LabelledImage(Path("/data/x/images/a.jpg"), "x", 640, 480, dice)


def _read(cx: float, cy: float, value: int | None, side: float = 40) -> DieReading:
    return DieReading(DieBox(cx, cy, side, side), value, 0.9)


def test_closest_pairs_win_and_each_box_is_used_once() -> None:
    dice = [(100.0, 100.0, 40.0), (130.0, 100.0, 40.0)]
    found = [DieBox(128, 100, 40, 40), DieBox(104, 100, 40, 40)]
    assert sorted(pair_closest(dice, found)) == [(0, 1), (1, 0)]
    # one box between two dice goes to the nearer one only
    assert pair_closest(dice, [DieBox(112, 100, 40, 40)]) == [(0, 0)]
    # beyond 0.6 x the side is no match
    assert pair_closest(dice[:1], [DieBox(125, 100, 40, 40)]) == []


def test_off_dice_are_the_boxes_no_die_pairs_with() -> None:
    dice = [(100.0, 100.0, 40.0)]
    near, second, far = DieBox(104, 100, 40, 40), DieBox(110, 100, 40, 40), DieBox(300, 80, 40, 40)
    # the die takes its nearest box; a second box on it and one far away are false dice
    assert off_dice(dice, [second, near, far]) == [second, far]
    assert off_dice([], [near]) == [near] and off_dice(dice, []) == []


def test_counts_missed_false_and_misread_dice() -> None:
    photo = _photo(
        LabelledDie(100, 100, 40, 40, 5),
        LabelledDie(300, 100, 40, 40, 2),
        LabelledDie(500, 100, 40, 40, 6),
        LabelledDie(100, 300, 10, 10, 1),  # under 20 px: outside the size range
    )
    found = [_read(102, 98, 5), _read(300, 100, 3), _read(500, 104, None), _read(400, 400, 4)]
    figures = score([(photo, found, ())])
    assert (figures.labelled, figures.matched, figures.right) == (4, 3, 1)
    assert (figures.missed, figures.false, figures.misread, figures.unreadable) == (1, 1, 2, 1)
    assert figures.errors == 4
    assert figures.confusions() == {"2->3": 1, "6->None": 1}
    assert (figures.in_range, figures.in_range_matched, figures.in_range_right) == (3, 3, 1)
    assert figures.whole == 0
    summary = figures.summary()
    assert summary["recall"] == 0.75
    assert summary["false_dice_per_100_images"] == 100.0
    assert summary["value_accuracy_of_found"] == 0.3333
    assert summary["missed_false_misread"] == 4


def test_a_photo_read_entirely_right_counts_whole() -> None:
    photo = _photo(LabelledDie(100, 100, 40, 40, 3))
    figures = score([(photo, [_read(100, 100, 3)], ()), (photo, [], ())])
    assert (figures.images, figures.whole, figures.errors) == (2, 1, 1)


def _trace(
    located: Sequence[DieBox] = (),
    filtered: Sequence[DieBox] = (),
    readings: Sequence[DieReading] = (),
    kept: Sequence[DieReading] = (),
) -> DiceTrace:
    return DiceTrace(tuple(located), tuple(filtered), tuple(readings), tuple(kept), floor=0.3)


def test_a_missed_die_is_traced_to_the_stage_that_lost_it() -> None:
    """where_lost names the last stage with something near the die (within 0.6 x its side):
    kept reading, reading, finder peak, candidate over the floor, candidate under it."""
    die = (100.0, 100.0, 40.0)
    near = DieBox(105, 100, 40, 40, score=0.4)
    far = DieBox(300, 300, 40, 40, score=0.9)
    strong = DieBox(126, 100, 40, 40, score=0.9)  # 26 px from the die, 21 from near
    reading = DieReading(near, 4, 0.5)
    assert where_lost(die, _trace([near], [near], [reading], [reading]), [near]) == (
        LostAt.TO_NEIGHBOUR
    )
    assert where_lost(die, _trace([near], [near], [reading]), [near]) == LostAt.PEAK_RULE
    assert where_lost(die, _trace([near]), [near]) == LostAt.FILTERED
    # over the floor among the candidates, but not a peak of its own: a stronger one took it
    assert where_lost(die, _trace([strong]), [strong, near]) == LostAt.SUPPRESSED
    weak = DieBox(105, 100, 40, 40, score=0.1)
    assert where_lost(die, _trace([far]), [far, weak]) == LostAt.UNDER_FLOOR
    assert where_lost(die, _trace([far]), [far]) == LostAt.NO_PEAK


def test_the_reach_and_the_floor_are_inclusive() -> None:
    """0.6 x 40 = 24 px is the reach, as for matching: a box 24 px away is near the die and
    one 25 px away is not; a candidate scored exactly at the trace's floor is over it."""
    die = (100.0, 100.0, 40.0)
    at_reach = DieReading(DieBox(124, 100, 40, 40, score=0.9), 4, 0.9)
    beyond = DieReading(DieBox(125, 100, 40, 40, score=0.9), 4, 0.9)
    assert within_reach(at_reach.where, *die) and not within_reach(beyond.where, *die)
    one = [at_reach.where]
    assert where_lost(die, _trace(one, one, [at_reach], [at_reach]), []) == LostAt.TO_NEIGHBOUR
    two = [beyond.where]
    assert where_lost(die, _trace(two, two, [beyond], [beyond]), []) == LostAt.NO_PEAK
    at_floor = DieBox(100, 100, 40, 40, score=0.3)
    assert where_lost(die, _trace([beyond.where]), [at_floor]) == LostAt.SUPPRESSED
    under = DieBox(100, 100, 40, 40, score=0.2999)
    assert where_lost(die, _trace([beyond.where]), [under]) == LostAt.UNDER_FLOOR
