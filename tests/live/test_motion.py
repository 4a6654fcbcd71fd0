"""The settle stage's motion measure on stored frames, and the decisions it drives.

tests/live/data/motion/ holds eight frames of the bundled demo clip as it was made
(companion/live/data/demo_qwixx, 640x480 JPEG): frames 6 and 7 with dice tumbling, 8 the
first in which all dice rest, 9-11 resting, 22-23 a hand reaching over the dice; truth.json
has the dice drawn in each (colour, value or null while the die tumbles, centre, side,
angle), from companion.live.demo.render_throws(seed=DEMO_SEED)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.live.settle import (
    MotionMeter,
    RollEvent,
    SettleConfig,
    Settler,
    Stillness,
    stillness,
    sure_frames_for,
    window_peak,
)
from companion.vision.types import UNREADABLE, DieBox, DieReading, Frame, FrameReading

DATA = Path(__file__).resolve().parent / "data" / "motion"
TRUTH = json.loads((DATA / "truth.json").read_text(encoding="utf-8"))
SIDE = 44.0  # the clip's die side in pixels
SURE = SettleConfig(stable_frames=6, sure_frames=2)


def image(index: int) -> np.ndarray:
    found = cv2.imread(str(DATA / f"frame_{index:04d}.jpg"))
    assert found is not None, f"fixture frame {index} missing"
    return found


def truth(index: int, value_of: dict[int, int] | None = None) -> FrameReading:
    """A perfect reading of a stored frame (tumbling dice unreadable); `value_of` changes
    the value read for some dice (by their place in truth.json)."""
    dice = []
    for k, (colour, value, cx, cy, side, angle) in enumerate(
        TRUTH[f"frame_{index:04d}.jpg"]["dice"]
    ):
        value = (value_of or {}).get(k, value)
        flags = () if value else (UNREADABLE,)
        dice.append(DieReading(DieBox(cx, cy, side, side, angle), value, 0.99, colour, flags=flags))
    return FrameReading(640, 480, tuple(dice), frame_index=index)


def verdicts(images: Sequence[np.ndarray], config: SettleConfig = SURE) -> list[Stillness]:
    """The verdict on each image after the first, with no reading at all."""
    meter = MotionMeter(config)
    meter.measure(images[0], (), SIDE)
    return [stillness(meter.measure(img, (), SIDE), config) for img in images[1:]]


def shaken(img: np.ndarray, dx: int, dy: int) -> np.ndarray:
    return np.roll(img, (dy, dx), axis=(0, 1))


def test_stored_frames_have_their_phases() -> None:
    assert [TRUTH[f"frame_{i:04d}.jpg"]["phase"] for i in (6, 7, 8, 9, 11, 22, 23)] == [
        "tumble",
        "tumble",
        "rest",
        "rest",
        "rest",
        "hand",
        "hand",
    ]
    assert any(d[1] is None for d in TRUTH["frame_0007.jpg"]["dice"])  # still tumbling


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        ((6, 7), Stillness.MOVING),  # dice tumbling
        ((7, 8), Stillness.MOVING),  # the last dice arriving at their places
        ((22, 23), Stillness.MOVING),  # a hand reaching over the dice
        ((9, 10), Stillness.SURE),  # resting: noise and JPEG only
        ((10, 11), Stillness.SURE),
        ((8, 9), Stillness.SURE),  # the first rest frame, then the next
    ],
)
def test_the_measure_tells_tumbling_from_resting_without_a_reading(
    frames: tuple[int, int], expected: Stillness
) -> None:
    assert verdicts([image(i) for i in frames]) == [expected]


def test_numbers_of_the_measure_on_stored_frames() -> None:
    meter = MotionMeter(SURE)
    meter.measure(image(6), (), SIDE)
    tumbling = meter.measure(image(7), (), SIDE)
    meter.measure(image(9), (), SIDE)
    resting = meter.measure(image(10), (), SIDE)
    # a tumbling die moves far more than the thresholds in some square of two die sides
    assert tumbling.peak > 5 * SURE.die_motion_max and tumbling.change > tumbling.peak
    assert resting.peak == 0.0 and resting.change <= SURE.sure_change_max
    assert resting.scene == 0.0 and resting.known
    # the first frame of a stream has no motion to tell
    assert not MotionMeter(SURE).measure(image(9), (), SIDE).known


def test_camera_shake_is_still_but_not_sure() -> None:
    """A pixel or two of shake in the 320 px copy is allowed as still (the stable path),
    never as sure: the short path needs frames that did not change at all."""
    rest = image(9)
    frames = [rest, shaken(rest, 2, 0), rest, shaken(rest, 0, 2), shaken(rest, 2, 2)]
    assert verdicts(frames) == [Stillness.STILL] * 4


def test_sensor_noise_stays_sure() -> None:
    rng = np.random.default_rng(1)
    rest = image(10).astype(np.float32)
    noisy = [np.clip(rest + rng.normal(0, 4.0, rest.shape), 0, 255).astype(np.uint8)]
    noisy += [np.clip(rest + rng.normal(0, 4.0, rest.shape), 0, 255).astype(np.uint8)]
    assert verdicts(noisy) == [Stillness.SURE]


def creeping(rest: np.ndarray, box: tuple[int, int, int, int], steps: int) -> list[np.ndarray]:
    """The rest frame with the part in `box` (x0, y0, x1, y1) moved one pixel right per
    frame: a die creeping to a stop."""
    x0, y0, x1, y1 = box
    out = []
    for step in range(steps):
        img = rest.copy()
        img[y0:y1, x0 + step : x1 + step] = rest[y0:y1, x0:x1]
        out.append(img)
    return out


def test_a_die_creeping_a_pixel_a_frame_never_takes_the_sure_path() -> None:
    """One pixel per frame in a 640 px frame is half a pixel in the measure's copy: often
    too little to see between two frames, but a sure run also compares with the frame
    before it began, so no two creeping frames in a row are sure; the creep is within the
    shake allowance, so the stable count (as before there was a sure path) decides."""
    rest = image(9)
    green = next(d for d in truth(9).dice if d.colour == "green")
    cx, cy = int(green.where.cx), int(green.where.cy)
    frames = creeping(rest, (cx - 30, cy - 30, cx + 30, cy + 30), 12)[1:]
    settler = Settler(SURE)
    seen, events = [], []
    for k, img in enumerate([rest, *frames]):
        frame = Frame(img, k, k / 30)
        if settler.look(frame) is not Stillness.MOVING:
            events.append(settler.settle(frame, truth(9)))
        seen.append(settler.last_stillness)
    creep = seen[1:]
    assert Stillness.STILL in creep and Stillness.MOVING not in creep
    assert all(not (a is b is Stillness.SURE) for a, b in zip(creep, creep[1:], strict=False))
    [event] = [e for e in events if e is not None]
    assert event.frame_index - event.rest_index == SURE.stable_frames - 1


def test_window_peak_finds_the_densest_square() -> None:
    mask = np.zeros((40, 60), bool)
    mask[10:14, 30:34] = True  # 16 pixels
    assert window_peak(mask, 8) == pytest.approx(16 / 64)
    assert window_peak(mask, 4) == 1.0
    assert window_peak(np.zeros((0, 5), bool), 4) == 0.0
    assert window_peak(mask, 100) == pytest.approx(16 / (40 * 40))  # clamped to the mask


def run_like_the_worker(
    settler: Settler, stream: Sequence[tuple[np.ndarray, FrameReading]]
) -> tuple[list[RollEvent], list[int]]:
    """The camera worker's decisions (without its idle reads): look, then read only where
    it can end a throw; the events and the indices of the frames read."""
    events, read = [], []
    for k, (img, reading) in enumerate(stream):
        frame = Frame(img, k, k / 30)
        if settler.look(frame) is Stillness.MOVING or not settler.can_end_throw:
            continue
        if settler.reading_stands:
            event = settler.settle(frame, None)
        else:
            read.append(k)
            event = settler.settle(frame, reading)
        if event is not None:
            events.append(event)
    return events, read


def throw_stream() -> list[tuple[np.ndarray, FrameReading]]:
    indices = (6, 7, 8, 9, 10, 11, 11, 11)
    return [(image(i), truth(i)) for i in indices]


def test_sure_frames_settle_after_two_frames_reading_one() -> None:
    events, read = run_like_the_worker(Settler(SURE), throw_stream())
    [event] = events
    # frame 2 (the clip's 8) moved from the one before; 3 is the first still frame, read;
    # 4 did not change at all since: the roll goes out there, two frames after the rest
    assert (event.rest_index, event.frame_index) == (3, 4)
    assert read == [3]
    assert event.image is not None and np.array_equal(event.image, image(9))
    assert Counter(d.value for d in event.dice) == Counter(
        d[1] for d in TRUTH["frame_0009.jpg"]["dice"]
    )


def test_without_the_sure_path_the_stable_count_holds() -> None:
    events, read = run_like_the_worker(Settler(SettleConfig(stable_frames=4)), throw_stream())
    [event] = events
    assert (event.rest_index, event.frame_index) == (3, 6)
    assert read == [3, 4, 5, 6]  # every still frame is read


def test_shaky_still_frames_take_the_stable_count() -> None:
    rest = image(9)
    stream = [(image(8), truth(8))] + [(shaken(rest, k % 2 * 2, 0), truth(9)) for k in range(10)]
    events, read = run_like_the_worker(Settler(SURE), stream)
    [event] = events
    assert event.frame_index - event.rest_index == SURE.stable_frames - 1
    assert read == list(range(1, 1 + SURE.stable_frames))


def test_readings_that_disagree_on_sure_frames_do_not_settle() -> None:
    """feed() reads every still frame: the reading must stay the same over the sure run."""
    settler = Settler(SURE)
    flicker = [truth(9), truth(9, {0: 1}), truth(9), truth(9, {0: 1})]
    pairs = [(image(8), truth(8))] + [(image(9), r) for r in flicker]
    events = [settler.feed(Frame(img, k, 0.0), r) for k, (img, r) in enumerate(pairs)]
    assert events == [None] * 5
    steady = settler.feed(Frame(image(10), 5, 0.0), truth(9, {0: 1}))
    assert steady is not None and steady.rest_index == 4


def test_no_reading_while_settled_until_something_moves() -> None:
    settler = Settler(SURE)
    events, _read = run_like_the_worker(settler, throw_stream())
    assert len(events) == 1 and not settler.can_end_throw
    settler.look(Frame(image(22), 20, 0.0))
    assert settler.look(Frame(image(23), 21, 0.0)) is Stillness.MOVING
    assert settler.can_end_throw


def pushed(rest: np.ndarray, die: DieReading, dx: int) -> np.ndarray:
    """The rest frame with `die` moved `dx` pixels to the right (bare table behind it)."""
    reach = int(die.where.w * 0.75)
    x0, y0 = int(die.where.cx) - reach, int(die.where.cy) - reach
    x1, y1 = x0 + 2 * reach, y0 + 2 * reach
    img = rest.copy()
    patch = rest[y0:y1, x0:x1].copy()
    img[y0:y1, x0:x1] = np.median(rest.reshape(-1, 3), axis=0).astype(np.uint8)
    img[y0:y1, x0 + dx : x1 + dx] = patch
    return img


def test_a_die_nudged_after_rest_is_a_new_roll_once() -> None:
    """A die pushed a die side further after the roll was reported: frames with motion at
    the die, then the dice still again in their new places: one new event, and nothing
    more while they lie there."""
    rest, reading = image(9), truth(9)
    green = next(k for k, d in enumerate(reading.dice) if d.colour == "green")
    die = reading.dice[green]
    side = int(die.where.w)
    there = dataclasses.replace(die, where=dataclasses.replace(die.where, cx=die.where.cx + side))
    moved = dataclasses.replace(
        reading, dice=tuple(there if k == green else d for k, d in enumerate(reading.dice))
    )
    stream = throw_stream() + [
        (pushed(rest, die, side // 2), reading),
        *[(pushed(rest, die, side), moved)] * 5,
    ]
    settler = Settler(SURE)
    events, _read = run_like_the_worker(settler, stream)
    assert len(events) == 2
    assert events[1].frame_index - events[1].rest_index == 1  # two sure frames again
    assert next(d for d in events[1].dice if d.colour == "green").where.cx == there.where.cx


def test_sure_frames_for_the_frame_rate() -> None:
    assert sure_frames_for(30) == 2
    assert sure_frames_for(10) == 2
    assert sure_frames_for(60) == 4
    assert sure_frames_for(0) == 2
