"""Settle stage: decide when thrown dice have come to rest and report each throw once.

Feed `Settler.feed` every (Frame, FrameReading) pair in order. It reports a `RollEvent`
only when, for `stable_frames` consecutive frames,
  - nothing moves near the dice (inside a square of twice the die side around every die of
    this and the previous reading, at most `die_motion_max` of the pixels differ by more than
    `pixel_threshold` grey levels from every pixel of their 5x5 neighbourhood in the previous
    frame on a copy at most 320 px wide, which lets a camera shake of two pixels there - four
    in a 640 px frame - pass; a tumbling die moves far more) and nothing big moves over the play area
    (`scene_motion_max`: a hand over the table), and
  - the reading stays the same: the same count, the same (colour, value) of every die, and
    every die within `position_tolerance` of a die side of where it lay when the streak began.

A throw is reported once. After an event the next one needs a different layout: a die that
appeared, vanished or moved, or - only after motion near the dice (a hand turned a cocked die
flat) - a die that now reads differently. A value that flickers on still dice is the
classifier's noise, not a new throw, and is ignored; a hand that passes and leaves the dice as
they were reports nothing; an empty table (dice picked up) reports nothing, and neither does
a table where some dice of the last roll were picked up and the rest lie untouched.

Defaults: at 30 fps, 8 stable frames is about 270 ms after the dice stop
(`SettleConfig.for_fps` derives the count for another frame rate)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from companion.vision.types import DieReading, Frame, FrameReading

logger = logging.getLogger(__name__)

# The motion map is computed on a copy at most this wide: enough to see a die of 20 px
# (10 px here) and cheap (about 0.2 ms per frame).
MOTION_WIDTH = 320


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
        description="largest fraction of moved pixels around any one die on a still frame",
    )
    scene_motion_max: float = Field(
        default=0.08,
        ge=0.0,
        le=1.0,
        description="largest fraction of moved pixels over the play area on a still frame",
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


@dataclass(frozen=True, slots=True)
class RollEvent:
    """Dice that came to rest: the reading of the frame that completed the stable streak
    (`frame_index`, `timestamp`) and the first frame of that streak (`rest_index`,
    `rest_timestamp`), so the delay from rest to report is their difference. `image` is
    that frame's picture: the event carries its own evidence (the roll's photo, the held
    picture), whatever frames the camera reads after it."""

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
    """How much moved between two frames: the largest fraction of moved pixels around one
    die, and the fraction over the play area. `known` is False on a first frame."""

    die: float
    scene: float
    known: bool = True


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


class MotionMeter:
    """Frame differences on a small blurred grey copy; remembers the previous frame."""

    def __init__(self, config: SettleConfig) -> None:
        self.config = config
        self._previous: np.ndarray | None = None
        self._scale = 1.0

    def reset(self) -> None:
        self._previous = None

    def measure(
        self, image: np.ndarray, dice: Sequence[DieReading], previous_dice: Sequence[DieReading]
    ) -> Motion:
        small, scale = self._prepare(image)
        previous = self._previous
        self._previous = small
        if previous is None or previous.shape != small.shape:
            return Motion(1.0, 1.0, known=False)
        # a pixel moved when it is far from every pixel around it in the previous frame: a
        # camera shake of two pixels moves nothing, a tumbling die still shows
        threshold = self.config.pixel_threshold
        kernel = np.ones((5, 5), np.uint8)
        upper = cv2.dilate(previous, kernel).astype(np.int16) + threshold
        lower = cv2.erode(previous, kernel).astype(np.int16) - threshold
        current = small.astype(np.int16)
        moved = (current > upper) | (current < lower)
        h, w = moved.shape
        x0, y0, x1, y1 = self.config.play_area
        area = moved[
            int(y0 * h) : max(int(y1 * h), int(y0 * h) + 1),
            int(x0 * w) : max(int(x1 * w), int(x0 * w) + 1),
        ]
        scene = float(area.mean()) if area.size else 0.0
        die = 0.0
        for d in (*dice, *previous_dice):
            # a square twice the die's side: the die, its shadow and where it came from
            half = max(d.where.w, d.where.h, 4.0) * scale
            cx, cy = d.where.cx * scale, d.where.cy * scale
            region = moved[
                max(int(cy - half), 0) : max(int(cy + half), 0),
                max(int(cx - half), 0) : max(int(cx + half), 0),
            ]
            if region.size:
                die = max(die, float(region.mean()))
        return Motion(die, scene)

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
        self._previous_dice: tuple[DieReading, ...] = ()
        self._streak_start: tuple[DieReading, ...] | None = None
        self._streak_length = 0
        self._streak_index = 0
        self._streak_timestamp = 0.0
        self._last_event: RollEvent | None = None
        self._moved_since_event = True
        self.last_motion = Motion(1.0, 1.0, known=False)

    @property
    def state(self) -> str:
        """A word for the status line: moving, settling, settled or empty."""
        if self._streak_length == 0:
            return "moving"
        if self._streak_start is not None and len(self._streak_start) < self.config.min_dice:
            return "empty"
        if self._streak_length < self.config.stable_frames:
            return "settling"
        return "settled"

    @property
    def last_event(self) -> RollEvent | None:
        return self._last_event

    def feed(self, frame: Frame, reading: FrameReading) -> RollEvent | None:
        """Take the next frame and its reading; a RollEvent when a throw just came to rest."""
        dice = reading.dice
        motion = self.meter.measure(frame.image, dice, self._previous_dice)
        self.last_motion = motion
        self._previous_dice = dice
        still = (
            motion.known
            and motion.die <= self.config.die_motion_max
            and motion.scene <= self.config.scene_motion_max
        )
        last = self._last_event
        if not still and last is not None and motion.die > self.config.die_motion_max:
            self._moved_since_event = True
        if not still:
            self._streak_length = 0
            self._streak_start = None
            return None
        tol = self.config.position_tolerance
        if (
            self._streak_start is None
            or reading_signature(self._streak_start) != reading_signature(dice)
            or not same_places(self._streak_start, dice, tol)
        ):
            self._streak_start = dice
            self._streak_length = 1
            self._streak_index = frame.index
            self._streak_timestamp = frame.timestamp
        else:
            self._streak_length += 1
        if self._streak_length < self.config.stable_frames or len(dice) < self.config.min_dice:
            return None
        if last is not None and not self._is_new_throw(last.dice, dice):
            return None
        event = RollEvent(
            dice=dice,
            frame_index=frame.index,
            timestamp=frame.timestamp,
            rest_index=self._streak_index,
            rest_timestamp=self._streak_timestamp,
            width=reading.width,
            height=reading.height,
            image=frame.image,
        )
        self._last_event = event
        self._moved_since_event = False
        logger.debug("roll settled at frame %s: %s", frame.index, reading_signature(dice))
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
