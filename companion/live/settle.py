"""Settle stage: decide when thrown dice have come to rest and report each throw once.

Two steps per frame, so that a frame whose dice still move is never read:

1. `Settler.look(frame)` measures motion on the frame alone (no reading): the difference
   from the previous frame on a small blurred grey copy (at most 320 px wide; 0.4 ms for a
   640x480 frame, 0.9 ms at 1280x720).
   A pixel has *moved* when it differs by more than `pixel_threshold` grey levels from every
   pixel of its 5x5 neighbourhood in the previous frame (which lets a camera shake of two
   pixels there - four in a 640 px frame - pass; a tumbling die moves far more); it has
   *changed* when it differs from the same pixel by that much (no shake allowance). It
   answers a `Stillness`:
   - MOVING: over `die_motion_max` of the pixels moved in some square of two die sides
     anywhere in the play area (a die rolling, one the finder would miss included) or around
     a die read last, or over `scene_motion_max` of the play area (a hand over the table).
     Such a frame cannot end a throw: the camera worker does not read it.
   - SURE: still, and not even `sure_change_max` of the pixels changed in any such square,
     both since the previous frame and since the frame before the run of sure frames began
     (a die creeping a pixel a frame adds up): nothing moves at all.
   - STILL: neither (sensor noise, a pixel of camera shake, flickering light).
2. `Settler.settle(frame, reading)` takes the reading of a frame `look` did not call moving.
   A `RollEvent` is reported when, for `stable_frames` consecutive still frames - or only
   `sure_frames` consecutive sure ones, where the motion measure is sure - nothing moved
   around the dice read and the reading stayed the same: the same count, the same (colour,
   value) of every die, every die within `position_tolerance` of a die side of where it lay
   when the streak began. On the sure path a frame unchanged since the frame read last needs
   no reading of its own (`reading_stands`: `settle(frame, None)`): a roll is read once.

Once a streak is complete (the throw reported, or the table read empty or unchanged), only
motion can bring a new throw: `Settler.can_end_throw` turns False until something moves, and
the camera worker then reads still frames only now and then (for its preview).
`Settler.feed(frame, reading)` does both steps for a reading made beforehand (tests, tools).

A throw is reported once. After an event the next one needs a different layout: a die that
appeared, vanished or moved, or - only after motion near the dice (a hand turned a cocked die
flat) - a die that now reads differently. A value that flickers on still dice is the
classifier's noise, not a new throw, and is ignored; a hand that passes and leaves the dice as
they were reports nothing; an empty table (dice picked up) reports nothing, and neither does
a table where some dice of the last roll were picked up and the rest lie untouched.

Defaults: at 30 fps, 8 stable frames is about 270 ms after the dice stop
(`SettleConfig.for_fps` derives the count for another frame rate); `sure_frames` is off
unless set (`sure_frames_for(fps)`: two frames at 30 fps, the live table's choice)."""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from companion.vision.types import DieReading, Frame, FrameReading

logger = logging.getLogger(__name__)

# The motion map is computed on a copy at most this wide: enough to see a die of 20 px
# (10 px here) and cheap (0.4 ms for a 640x480 frame, the whole measure).
MOTION_WIDTH = 320

# How long nothing may change at all before a roll is reported on the sure path: two frame
# intervals at 30 fps (three identical frames: the dice lay still for 67 ms).
SURE_SECONDS = 1 / 15


class SettleConfig(BaseModel):
    """Thresholds of the settle stage; see the module docstring for what each one gates."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # each default as `default=`: type checkers take only that keyword as making a field
    # optional, so a positional default would make SettleConfig() look like it lacks them
    stable_frames: int = Field(
        default=8,
        ge=1,
        le=300,
        description="consecutive still frames with the same reading before a roll is reported",
    )
    sure_frames: int | None = Field(
        default=None,
        ge=1,
        le=300,
        description="consecutive sure frames (nothing changed at all) with the same reading"
        " that report a roll sooner; None: always stable_frames",
    )
    pixel_threshold: int = Field(
        default=18,
        ge=1,
        le=255,
        description="grey-level change (0-255, after a light blur) that counts a pixel as moved;"
        " above sensor noise and JPEG artefacts",
    )
    die_motion_max: float = Field(
        default=0.04,
        ge=0.0,
        le=1.0,
        description="largest fraction of moved pixels in a square of two die sides (around a"
        " die, or anywhere over the play area) on a still frame",
    )
    scene_motion_max: float = Field(
        default=0.08,
        ge=0.0,
        le=1.0,
        description="largest fraction of moved pixels over the play area on a still frame",
    )
    sure_change_max: float = Field(
        default=0.005,
        ge=0.0,
        le=1.0,
        description="largest fraction of changed pixels (no shake allowance) in a square of"
        " two die sides over the play area on a sure frame",
    )
    die_side: float = Field(
        default=0.09,
        gt=0.0,
        le=1.0,
        description="die side assumed for the motion squares before any die was read, as a"
        " fraction of the frame's shorter side",
    )
    position_tolerance: float = Field(
        default=0.35,
        gt=0.0,
        le=5.0,
        description="how far (in die sides) a die may lie from its earlier place and count as"
        " the same die",
    )
    min_dice: int = Field(default=1, ge=1, description="fewest dice a reported roll has")
    play_area: tuple[float, float, float, float] = Field(
        default=(0.0, 0.0, 1.0, 1.0),
        description="part of the frame the table occupies, as fractions (x0, y0, x1, y1)",
    )

    @classmethod
    def for_fps(cls, fps: float, react_seconds: float = 0.27, **other: object) -> SettleConfig:
        """A config whose stable streak lasts about `react_seconds` at `fps` (at least two
        frames, so one frame's agreement is never enough)."""
        frames = max(2, round(fps * react_seconds)) if fps > 0 else 8
        return cls.model_validate({"stable_frames": frames, **other})


def sure_frames_for(fps: float) -> int:
    """The sure streak at `fps`: about SURE_SECONDS, at least two frames (so the dice were
    seen identical in three frames in a row)."""
    return max(2, round(fps * SURE_SECONDS)) if fps > 0 else 2


@dataclass(frozen=True, slots=True)
class RollEvent:
    """Dice that came to rest: the reading that completed the stable streak in frame
    `frame_index` (`timestamp`) and the first frame of that streak (`rest_index`,
    `rest_timestamp`), so the delay from rest to report is their difference. `image` is
    the picture of the frame that reading was made of (that frame, or on the sure path an
    earlier one nothing changed since): the event carries its own evidence (the roll's
    photo, the held picture), whatever frames the camera reads after it."""

    dice: tuple[DieReading, ...]
    frame_index: int
    timestamp: float
    rest_index: int
    rest_timestamp: float
    width: int = 0
    height: int = 0
    image: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "dice": [d.to_json() for d in self.dice],
            "frame_index": self.frame_index,
            "timestamp": self.timestamp,
            "rest_index": self.rest_index,
            "rest_timestamp": self.rest_timestamp,
            "width": self.width,
            "height": self.height,
        }


@dataclass(frozen=True, slots=True)
class Motion:
    """How much moved between two frames, as fractions of pixels: `die` the most around one
    known die, `scene` over the play area, `peak` the most in any square of two die sides
    over the play area; `change` is `peak` for pixels changed at all (no shake allowance),
    since the previous frame and since the sure run's anchor. `known` is False on a first
    frame."""

    die: float
    scene: float
    peak: float = 0.0
    change: float = 0.0
    known: bool = True


UNKNOWN_MOTION = Motion(1.0, 1.0, 1.0, 1.0, known=False)


class Stillness(StrEnum):
    """What the motion measure says of a frame before it is read (module docstring)."""

    MOVING = "moving"
    STILL = "still"
    SURE = "sure"


def stillness(motion: Motion, config: SettleConfig) -> Stillness:
    """MOVING, STILL or SURE for `motion` under `config`'s thresholds."""
    if (
        not motion.known
        or max(motion.die, motion.peak) > config.die_motion_max
        or motion.scene > config.scene_motion_max
    ):
        return Stillness.MOVING
    if motion.change <= config.sure_change_max:
        return Stillness.SURE
    return Stillness.STILL


def die_key(die: DieReading) -> tuple[str, int]:
    """What a die reads as: (colour, value), with "" and 0 for unknown."""
    return (die.colour or "", die.value or 0)


def reading_signature(dice: Sequence[DieReading]) -> tuple[tuple[str, int], ...]:
    """Count, colours and values of a reading, independent of order."""
    return tuple(sorted(die_key(d) for d in dice))


def pair_dice(
    before: Sequence[DieReading],
    after: Sequence[DieReading],
    tolerance: float,
    subset: bool = False,
) -> list[tuple[DieReading, DieReading]] | None:
    """Pair every die of `after` with a die of `before` lying within `tolerance` die sides
    (greedy, nearest first), or None when some die has no partner or the counts differ
    (with `subset`, `before` may hold more dice than `after`)."""
    if len(before) != len(after) and not (subset and len(after) < len(before)):
        return None
    candidates = []
    for i, a in enumerate(after):
        for j, b in enumerate(before):
            side = max(a.where.w, a.where.h, b.where.w, b.where.h, 1.0)
            distance = math.hypot(a.where.cx - b.where.cx, a.where.cy - b.where.cy) / side
            if distance <= tolerance:
                candidates.append((distance, i, j))
    candidates.sort()
    used_after: set[int] = set()
    used_before: set[int] = set()
    pairs = []
    for _distance, i, j in candidates:
        if i in used_after or j in used_before:
            continue
        used_after.add(i)
        used_before.add(j)
        pairs.append((before[j], after[i]))
    return pairs if len(pairs) == len(after) else None


def same_places(before: Sequence[DieReading], after: Sequence[DieReading], tol: float) -> bool:
    """Every die lies where a die lay before (values ignored)."""
    return pair_dice(before, after, tol) is not None


def same_layout(
    before: Sequence[DieReading], after: Sequence[DieReading], tol: float, subset: bool = False
) -> bool:
    """Every die lies where a die lay before and reads the same (with `subset`, some dice
    of `before` may be gone)."""
    pairs = pair_dice(before, after, tol, subset)
    return pairs is not None and all(die_key(a) == die_key(b) for a, b in pairs)


def moved_pixels(previous: np.ndarray, current: np.ndarray, threshold: int) -> np.ndarray:
    """Pixels far from every pixel around them in the previous frame: a camera shake of two
    pixels moves nothing, a tumbling die still shows."""
    kernel = np.ones((5, 5), np.uint8)
    upper = cv2.dilate(previous, kernel).astype(np.int16) + threshold
    lower = cv2.erode(previous, kernel).astype(np.int16) - threshold
    now = current.astype(np.int16)
    moved: np.ndarray = (now > upper) | (now < lower)
    return moved


def changed_pixels(before: np.ndarray, current: np.ndarray, threshold: int) -> np.ndarray:
    """Pixels that differ from the same pixel of `before` by more than `threshold`."""
    changed: np.ndarray = cv2.absdiff(before, current) > threshold
    return changed


def window_peak(mask: np.ndarray, side: int) -> float:
    """The largest fraction of set pixels in any `side` x `side` square inside `mask`
    (a summed-area table: every placement, at no more cost than two passes)."""
    h, w = mask.shape[:2]
    if h == 0 or w == 0:
        return 0.0
    k = max(1, min(side, h, w))
    sums = cv2.integral(mask.astype(np.uint8))
    windows = sums[k:, k:] - sums[:-k, k:] - sums[k:, :-k] + sums[:-k, :-k]
    return float(windows.max()) / (k * k)


def around_dice(mask: np.ndarray, dice: Sequence[DieReading], scale: float) -> float:
    """The largest fraction of set pixels in a square of twice a die's side around any of
    `dice` (the die, its shadow and where it came from); 0 with no dice."""
    most = 0.0
    for d in dice:
        half = max(d.where.w, d.where.h, 4.0) * scale
        cx, cy = d.where.cx * scale, d.where.cy * scale
        region = mask[
            max(int(cy - half), 0) : max(int(cy + half), 0),
            max(int(cx - half), 0) : max(int(cx + half), 0),
        ]
        if region.size:
            most = max(most, float(region.mean()))
    return most


class MotionMeter:
    """Frame differences on a small blurred grey copy; remembers the previous frame, the
    one before it, and the sure run's anchor (`anchor`)."""

    def __init__(self, config: SettleConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._previous: np.ndarray | None = None
        self._prior: np.ndarray | None = None
        self._anchor: np.ndarray | None = None
        self._moved: np.ndarray | None = None
        self._scale = 1.0

    def anchor(self) -> None:
        """From now on also count changes from the frame before the last one measured (the
        frame before a sure run's first frame)."""
        self._anchor = self._prior

    def release(self) -> None:
        """Stop counting changes from the anchor."""
        self._anchor = None

    def measure(self, image: np.ndarray, near: Sequence[DieReading], die_side: float) -> Motion:
        """The motion of `image` against the previous frame; `near` are dice whose
        surroundings count on their own (`Motion.die`), `die_side` (pixels of `image`) sizes
        the squares of `peak` and `change`."""
        small, scale = self._prepare(image)
        previous, self._previous, self._prior = self._previous, small, self._previous
        if previous is None or previous.shape != small.shape:
            self._moved = None
            return UNKNOWN_MOTION
        threshold = self.config.pixel_threshold
        moved = moved_pixels(previous, small, threshold)
        changed = changed_pixels(previous, small, threshold)
        if self._anchor is not None and self._anchor.shape == small.shape:
            changed |= changed_pixels(self._anchor, small, threshold)
        self._moved, self._scale = moved, scale
        area = self._play_area(moved.shape)
        square = max(2, round(2 * die_side * scale))
        return Motion(
            die=around_dice(moved, near, scale),
            scene=float(moved[area].mean()) if moved[area].size else 0.0,
            peak=window_peak(moved[area], square),
            change=window_peak(changed[area], square),
        )

    def around(self, dice: Sequence[DieReading]) -> float:
        """`Motion.die` of the last measured frame for `dice` (read after measuring); 1.0
        when that frame's motion was unknown."""
        if self._moved is None:
            return 1.0
        return around_dice(self._moved, dice, self._scale)

    def _play_area(self, shape: tuple[int, ...]) -> tuple[slice, slice]:
        h, w = shape[:2]
        x0, y0, x1, y1 = self.config.play_area
        return (
            slice(int(y0 * h), max(int(y1 * h), int(y0 * h) + 1)),
            slice(int(x0 * w), max(int(x1 * w), int(x0 * w) + 1)),
        )

    def _prepare(self, image: np.ndarray) -> tuple[np.ndarray, float]:
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        h, w = grey.shape[:2]
        scale = min(1.0, MOTION_WIDTH / max(w, 1))
        if scale < 1.0:
            grey = cv2.resize(
                grey,
                (max(1, round(w * scale)), max(1, round(h * scale))),
                interpolation=cv2.INTER_AREA,
            )
        # the blur keeps noise and a pixel of camera shake below the threshold
        return cv2.GaussianBlur(grey, (5, 5), 1.2), scale


class Settler:
    """The settle stage; see the module docstring. Not thread-safe: one per frame stream."""

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self.meter = MotionMeter(self.config)
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new source, a reopened camera)."""
        self.meter.reset()
        self._last_read: tuple[Frame, FrameReading] | None = None
        self._reading_stands = False  # nothing changed since the frame read last
        self._die_side: float | None = None
        self._streak_start: tuple[DieReading, ...] | None = None
        self._streak_length = 0
        self._sure_length = 0
        self._streak_index = 0
        self._streak_timestamp = 0.0
        self._last_event: RollEvent | None = None
        self._moved_since_event = True
        self.last_motion = UNKNOWN_MOTION
        self.last_stillness = Stillness.MOVING

    @property
    def state(self) -> str:
        """A word for the status line: moving, settling, settled or empty."""
        if self._streak_length == 0:
            return "moving"
        if self._streak_start is not None and len(self._streak_start) < self.config.min_dice:
            return "empty"
        if not self._streak_complete():
            return "settling"
        return "settled"

    @property
    def last_event(self) -> RollEvent | None:
        return self._last_event

    @property
    def can_end_throw(self) -> bool:
        """Whether a still frame now could end a throw: not once the streak is complete
        (the throw was reported, or the table read empty or unchanged): from then on only
        motion brings a new throw, so still frames need no reading until something moves."""
        return not self._streak_complete()

    @property
    def reading_stands(self) -> bool:
        """On the sure path (`sure_frames` set): whether the frame just looked at is surely
        unchanged since the frame read last, so that reading stands for it (`settle` it
        with None; reading it again would only cost time)."""
        return self._reading_stands

    def feed(self, frame: Frame, reading: FrameReading) -> RollEvent | None:
        """Both steps for a frame read beforehand: a RollEvent when a throw just came to
        rest (the reading of a moving frame is not looked at)."""
        if self.look(frame) is Stillness.MOVING:
            return None
        return self.settle(frame, reading)

    def look(self, frame: Frame) -> Stillness:
        """Step one: the frame's motion, measured without reading it. A MOVING frame ends
        the streak and cannot end a throw (do not read it, do not `settle` it)."""
        near = (self._last_read[1].dice if self._last_read else ()) + (
            self._last_event.dice if self._last_event else ()
        )
        motion = self.meter.measure(frame.image, near, self._side_in(frame))
        verdict = stillness(motion, self.config)
        self.last_motion, self.last_stillness = motion, verdict
        if verdict is not Stillness.SURE:
            self._reading_stands = False
        if verdict is Stillness.MOVING:
            self._moving(motion.die)
        return verdict

    def settle(self, frame: Frame, reading: FrameReading | None) -> RollEvent | None:
        """Step two, for a frame `look` did not call moving, with its reading (None where
        `reading_stands`: the last reading counts for it): a RollEvent when a throw just
        came to rest."""
        if reading is None:
            if not self._reading_stands or self._last_read is None:
                return None  # nothing read that could stand for this frame
            read_frame, reading = self._last_read
        else:
            read_frame = frame
            self._remember(frame, reading)
        dice = reading.dice
        around = self.meter.around(dice)
        if around > self.config.die_motion_max:  # motion right at a die just read
            self._moving(around)
            return None
        self._extend_streak(frame, dice)
        if not self._streak_complete() or len(dice) < self.config.min_dice:
            return None
        last = self._last_event
        if last is not None and not self._is_new_throw(last.dice, dice):
            return None
        return self._report(frame, read_frame, reading)

    def _side_in(self, frame: Frame) -> float:
        """The die side (pixels) for the motion squares: the dice read last, else the
        config's share of the frame."""
        if self._die_side is not None:
            return self._die_side
        h, w = frame.image.shape[:2]
        return self.config.die_side * min(h, w)

    def _remember(self, frame: Frame, reading: FrameReading) -> None:
        dice = reading.dice
        self._last_read = (frame, reading)
        self._reading_stands = self.config.sure_frames is not None
        if dice:
            self._die_side = statistics.median(max(d.where.w, d.where.h) for d in dice)

    def _moving(self, die_motion: float) -> None:
        """Something moved: the streak ends; motion at the dice marks the last throw's
        dice as touched (a die turned in place may then be a new roll)."""
        if self._last_event is not None and die_motion > self.config.die_motion_max:
            self._moved_since_event = True
        self._streak_length = 0
        self._sure_length = 0
        self._streak_start = None
        self._reading_stands = False
        self.meter.release()

    def _extend_streak(self, frame: Frame, dice: tuple[DieReading, ...]) -> None:
        """Count this still frame into the streak (a new streak when the reading or the
        dice's places changed), and into the run of sure frames."""
        tol = self.config.position_tolerance
        if (
            self._streak_start is None
            or reading_signature(self._streak_start) != reading_signature(dice)
            or not same_places(self._streak_start, dice, tol)
        ):
            self._streak_start = dice
            self._streak_length = 0
            self._sure_length = 0
            self._streak_index = frame.index
            self._streak_timestamp = frame.timestamp
        self._streak_length += 1
        if self.last_stillness is not Stillness.SURE:
            self._sure_length = 0
            self.meter.release()
            return
        if self._sure_length == 0:
            self.meter.anchor()  # the run's changes count from the frame before it
        self._sure_length += 1

    def _streak_complete(self) -> bool:
        sure = self.config.sure_frames
        return self._streak_length >= self.config.stable_frames or (
            sure is not None and self._sure_length >= sure
        )

    def _report(self, frame: Frame, read_frame: Frame, reading: FrameReading) -> RollEvent:
        """The event of the throw `frame` completed; the reading and its picture are those of
        `read_frame` (`frame` itself, or an earlier one surely unchanged since)."""
        event = RollEvent(
            dice=reading.dice,
            frame_index=frame.index,
            timestamp=frame.timestamp,
            rest_index=self._streak_index,
            rest_timestamp=self._streak_timestamp,
            width=reading.width,
            height=reading.height,
            image=read_frame.image,
        )
        self._last_event = event
        self._moved_since_event = False
        logger.debug("roll settled at frame %s: %s", frame.index, reading_signature(event.dice))
        return event

    def _is_new_throw(self, before: Sequence[DieReading], now: Sequence[DieReading]) -> bool:
        tol = self.config.position_tolerance
        if len(now) < len(before) and same_layout(before, now, tol, subset=True):
            return False  # some dice picked up (or hidden by a still hand), none moved
        if not same_places(before, now, tol):
            return True  # a die appeared, vanished or moved
        # touched in place (e.g. a cocked die set flat): motion near the dice, then a
        # different reading; without motion a changed value is the classifier flickering
        return self._moved_since_event and not same_layout(before, now, tol)
