"""Settle stage on rendered frame sequences: one event per throw, none while dice tumble,
a hand passes or dice are picked up; still frames with noise and camera shake settle."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from companion.live.demo import ClipFrame, TruthDie, render_throws
from companion.live.match import match_roll
from companion.live.settle import RollEvent, SettleConfig, Settler, reading_signature
from companion.rules.base import DiceSpec, Die, Roll
from companion.rules.registry import standard_dice_sets
from companion.vision.types import (
    UNREADABLE,
    DieBox,
    DieReading,
    Frame,
    FrameReading,
)

MODELS = Path(__file__).resolve().parents[2] / "models"
SMALL = {"width": 320, "height": 240, "side": 24.0}


AS_DRAWN = -1


def die_reading(d: TruthDie, value: int | None = AS_DRAWN) -> DieReading:
    """A perfect reading of a drawn die, or one that reads `value` (None: unreadable)."""
    value = d.value if value == AS_DRAWN else value
    return DieReading(
        where=DieBox(d.cx, d.cy, d.side, d.side, d.angle),
        value=value,
        confidence=0.99 if value is not None else 0.6,
        colour=d.colour,
        flags=() if value is not None else (UNREADABLE,),
    )


def oracle(clip: ClipFrame, index: int) -> tuple[Frame, FrameReading]:
    """The frame and a perfect reading of it: tumbling dice unreadable, others read."""
    h, w = clip.image.shape[:2]
    dice = tuple(die_reading(d) for d in clip.dice)
    return Frame(clip.image, index, index / 10.0), FrameReading(w, h, dice, frame_index=index)


def run(settler: Settler, pairs: Iterable[tuple[Frame, FrameReading]]) -> list[RollEvent]:
    return [e for frame, reading in pairs if (e := settler.feed(frame, reading)) is not None]


@pytest.fixture(scope="module")
def clip() -> list[ClipFrame]:
    return list(render_throws(seed=7, throws=2, **SMALL))  # type: ignore[arg-type]


def test_one_event_per_throw_and_none_while_moving(clip: list[ClipFrame]) -> None:
    config = SettleConfig(stable_frames=5)
    settler = Settler(config)
    events = run(settler, (oracle(c, i) for i, c in enumerate(clip)))
    assert len(events) == 2
    for throw, event in enumerate(events):
        shown = clip[event.frame_index]
        assert shown.phase == "rest" and shown.throw == throw
        assert reading_signature(event.dice) == reading_signature(
            [die_reading(d) for d in shown.dice]
        )
        first_rest = next(i for i, c in enumerate(clip) if c.throw == throw and c.phase == "rest")
        # the first rest frame differs from the last tumbling one, so rest begins there or
        # one frame later; the streak then needs stable_frames frames
        assert first_rest <= event.rest_index <= first_rest + 1
        assert event.frame_index == event.rest_index + config.stable_frames - 1


def test_tumbling_alone_reports_nothing(clip: list[ClipFrame]) -> None:
    tumbling = [(i, c) for i, c in enumerate(clip) if c.phase == "tumble"]
    # even a reading that claims values while the dice move must not settle
    pairs = []
    for i, c in tumbling:
        frame, reading = oracle(c, i)
        read = tuple(die_reading(d, value=3) for d in c.dice)
        pairs.append((frame, dataclasses.replace(reading, dice=read)))
    assert run(Settler(SettleConfig(stable_frames=2)), pairs) == []


def test_hand_over_the_dice_and_pick_up_report_nothing_more(clip: list[ClipFrame]) -> None:
    settler = Settler(SettleConfig(stable_frames=5))
    first_throw = [(i, c) for i, c in enumerate(clip) if c.throw == 0]
    rest = [(i, c) for i, c in first_throw if c.phase == "rest"]
    assert len(run(settler, (oracle(c, i) for i, c in rest))) == 1
    # a hand passes over the resting dice, hiding some, and leaves them as they were
    hand_pass = [(i, c) for i, c in first_throw if c.phase == "hand"][:3]
    assert any(len(c.dice) < 6 for _, c in hand_pass)
    replay = [*hand_pass, *reversed(hand_pass), *rest]
    index = len(clip)
    after = []
    for k, (_i, c) in enumerate(replay):
        after.append(oracle(c, index + k))
    assert run(settler, after) == []
    # then the hand picks the dice up: the table empties, nothing is reported
    pick_up = [(i, c) for i, c in first_throw if c.phase in ("hand", "empty")]
    assert run(settler, (oracle(c, i) for i, c in pick_up)) == []


def test_dice_picked_up_one_by_one_report_nothing(clip: list[ClipFrame]) -> None:
    settler = Settler(SettleConfig(stable_frames=3))
    rest = next(c for c in clip if c.phase == "rest")
    events = run(settler, (oracle(rest, i) for i in range(5)))
    assert len(events) == 1
    # each die taken away in turn, the others untouched, with long still pauses between
    empty = next(c for c in clip if c.phase == "empty")
    index = 5
    for taken in range(1, 6):
        left = rest.dice[taken:]
        image = _draw_only(rest, empty, left)
        frames = [
            (Frame(image, index + k, 0.0), FrameReading(320, 240, tuple(map(die_reading, left))))
            for k in range(8)
        ]
        index += 8
        assert run(settler, frames) == []


def _draw_only(rest: ClipFrame, empty: ClipFrame, keep: Sequence[TruthDie]) -> np.ndarray:
    """The rest frame with every die not in `keep` replaced by bare table."""
    image = rest.image.copy()
    for d in rest.dice:
        if d in keep:
            continue
        half = int(d.side)
        y0, x0 = max(int(d.cy) - half, 0), max(int(d.cx) - half, 0)
        image[y0 : int(d.cy) + half, x0 : int(d.cx) + half] = empty.image[
            y0 : int(d.cy) + half, x0 : int(d.cx) + half
        ]
    return image


@pytest.mark.parametrize("shake", [0, 1])
def test_noise_and_camera_shake_on_still_dice_settle_once(
    clip: list[ClipFrame], shake: int
) -> None:
    rng = np.random.default_rng(3)
    rest = next(c for c in clip if c.phase == "rest")
    pairs = []
    for i in range(60):
        noisy = rest.image.astype(np.float32) + rng.normal(0, 4.0, rest.image.shape)
        image = np.clip(noisy, 0, 255).astype(np.uint8)
        if shake:
            image = np.roll(image, (int(rng.integers(-shake, shake + 1)),) * 2, axis=(0, 1))
        pairs.append(oracle(dataclasses.replace(rest, image=image), i))
    settler = Settler(SettleConfig(stable_frames=8))
    events = run(settler, pairs)
    assert len(events) == 1
    assert events[0].frame_index == 8  # frame 0 has no predecessor, frames 1-8 are still
    assert settler.last_motion.die < settler.config.die_motion_max


def test_flickering_value_on_still_dice_is_not_a_new_roll(clip: list[ClipFrame]) -> None:
    rest = next(c for c in clip if c.phase == "rest")
    settler = Settler(SettleConfig(stable_frames=4))
    assert len(run(settler, (oracle(rest, i) for i in range(6)))) == 1
    wrong = tuple(die_reading(d, value=(d.value or 1) % 6 + 1) for d in rest.dice)
    flicker = [(Frame(rest.image, 6 + k, 0.0), FrameReading(320, 240, wrong)) for k in range(12)]
    assert run(settler, flicker) == []


def test_a_die_turned_in_place_after_motion_is_a_new_roll(clip: list[ClipFrame]) -> None:
    """A cocked die set flat by hand: the dice stay put, one reads differently."""
    rest = next(c for c in clip if c.phase == "rest")
    empty = next(c for c in clip if c.phase == "empty")
    settler = Settler(SettleConfig(stable_frames=4))
    cocked = (die_reading(rest.dice[0], value=None), *map(die_reading, rest.dice[1:]))
    before = [(Frame(rest.image, k, 0.0), FrameReading(320, 240, cocked)) for k in range(6)]
    [first] = run(settler, before)
    assert first.dice[0].value is None
    # a finger over the first die for two frames (it moves there), then the die lies flat
    touched = _draw_only(rest, empty, rest.dice[1:])
    touch = [(Frame(touched, 6 + k, 0.0), FrameReading(320, 240, cocked[1:])) for k in range(2)]
    flat = tuple(map(die_reading, rest.dice))
    after = [(Frame(rest.image, 8 + k, 0.0), FrameReading(320, 240, flat)) for k in range(6)]
    [second] = run(settler, [*touch, *after])
    assert second.dice[0].value == rest.dice[0].value


def test_same_values_in_new_places_are_a_new_roll(clip: list[ClipFrame]) -> None:
    rest = next(c for c in clip if c.phase == "rest")
    settler = Settler(SettleConfig(stable_frames=3))
    assert len(run(settler, (oracle(rest, i) for i in range(4)))) == 1
    moved = tuple(dataclasses.replace(d, cx=d.cx + 40) for d in rest.dice)
    shifted = np.roll(rest.image, 40, axis=1)
    pairs = [
        (Frame(shifted, 4 + k, 0.0), FrameReading(320, 240, tuple(map(die_reading, moved))))
        for k in range(5)
    ]
    assert len(run(settler, pairs)) == 1


def test_unstable_reading_never_settles(clip: list[ClipFrame]) -> None:
    rest = next(c for c in clip if c.phase == "rest")
    settler = Settler(SettleConfig(stable_frames=3))
    good = tuple(map(die_reading, rest.dice))
    bad = (die_reading(rest.dice[0], value=None), *good[1:])
    pairs = [
        (Frame(rest.image, k, 0.0), FrameReading(320, 240, good if k % 2 else bad))
        for k in range(20)
    ]
    assert run(settler, pairs) == []
    assert settler.state == "settling"


def test_config_for_frame_rate_and_bounds() -> None:
    assert SettleConfig.for_fps(30).stable_frames == 8
    assert SettleConfig.for_fps(10).stable_frames == 3
    assert SettleConfig.for_fps(2).stable_frames == 2
    with pytest.raises(ValidationError):
        SettleConfig(stable_frames=0)
    with pytest.raises(ValidationError):
        SettleConfig(bogus=1)  # type: ignore[call-arg]


def test_real_dice_reader_on_a_rendered_throw() -> None:
    """The real finder and classifier on rendered throws (demo clip style, another seed):
    one event per throw, and it reads the roll on the table."""
    from companion.vision.pipeline import DiceReader

    onnx = sorted(MODELS.glob("*.onnx"))
    assert onnx, f"no ONNX models in {MODELS}: train them (models/train.py) first"
    reader = DiceReader.load(dice_set="qwixx")
    clip = list(render_throws(seed=11, throws=2))
    settler = Settler(SettleConfig(stable_frames=4))
    events = []
    for i, c in enumerate(clip):
        reading = reader.read(c.image, i)
        event = settler.feed(Frame(c.image, i, i / 10.0), reading)
        if event is not None:
            events.append(event)
    assert [clip[e.frame_index].phase for e in events] == ["rest", "rest"]
    assert [clip[e.frame_index].throw for e in events] == [0, 1]
    # and the settled reading is the roll on the table (the whole camera chain)
    spec = DiceSpec(standard_dice_sets()["qwixx"])
    for event in events:
        roll = match_roll(event.dice, spec)
        assert isinstance(roll, Roll), roll
        shown = clip[event.frame_index].dice
        assert sorted(roll.dice, key=repr) == sorted(
            (Die(d.colour, d.value or 0) for d in shown), key=repr
        )
