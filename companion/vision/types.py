"""The typed values that flow through the vision stages:
source -> locate (DieBox) -> classify (value) -> colour -> settle.
Each stage takes and returns these types; nothing here imports rules or web. Which dice a
game throws is the game's declaration (`Game.dice_colours`); the server hands it to the
colour stage as a dice set (companion.vision.colour)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from companion.colours import DIE_COLOURS

UNREADABLE = "unreadable"  # flag: the classifier saw no readable top face


@dataclass(frozen=True, slots=True)
class Frame:
    """One picture from a source: BGR uint8 pixels (H x W x 3)."""

    image: np.ndarray
    index: int
    timestamp: float
    source: str = ""


@dataclass(frozen=True, slots=True)
class DieBox:
    """Where a die lies: centre, side lengths of its (rotated) square and rotation in
    degrees, in pixels of the original image, plus the finder's confidence."""

    cx: float
    cy: float
    w: float
    h: float
    angle: float = 0.0
    score: float = 1.0

    @property
    def box(self) -> tuple[int, int, int, int]:
        """Axis-aligned box [x0, y0, x1, y1] around the die."""
        return (
            int(round(self.cx - self.w / 2)),
            int(round(self.cy - self.h / 2)),
            int(round(self.cx + self.w / 2)),
            int(round(self.cy + self.h / 2)),
        )


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die read: value 1-6 or None when unreadable, colour name, confidences, flags
    (e.g. "unreadable", "low_confidence", "edge"), and its index in the dice set when a
    set was given."""

    where: DieBox
    value: int | None
    confidence: float
    colour: str | None = None
    colour_confidence: float = 0.0
    flags: tuple[str, ...] = ()
    set_index: int | None = None
    # the classifier's pooled features of this die's crop (PipClassifier, models 1.3.1 on;
    # None without): what adapting to a new table builds on. Not compared, not in JSON.
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    # the classifier's 7 probabilities ("1".."6", "unreadable") after its second look: the
    # question about an unsure die offers its two likeliest values. Not compared.
    probabilities: np.ndarray | None = field(default=None, compare=False, repr=False)
    # the independent looks at this die when the pipeline took them (a classifier whose
    # confidence map asks for them): 8 x 7 probabilities of its eight symmetric views and 7
    # of its crop at the second margin (companion.vision.confidence). Not compared.
    views: np.ndarray | None = field(default=None, compare=False, repr=False)
    wide: np.ndarray | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "colour": self.colour,
            "confidence": round(float(self.confidence), 4),
            "box": list(self.where.box),
            "angle": round(float(self.where.angle), 1),
            "flags": list(self.flags),
        }


@dataclass(frozen=True, slots=True)
class FrameReading:
    """Everything read from one frame."""

    width: int
    height: int
    dice: tuple[DieReading, ...]
    ms: float = 0.0
    frame_index: int = 0
    problems: tuple[str, ...] = field(default=())
    # with a dice set: its name and the colours of its dice that were not found
    dice_set: str | None = None
    missing: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "width": self.width,
            "height": self.height,
            "ms": round(float(self.ms), 1),
            "dice": [d.to_json() for d in self.dice],
            "problems": list(self.problems),
            "dice_set": self.dice_set,
            "missing": list(self.missing),
        }


# The basic colour names the vision stages use for die bodies (companion/colours.py).
BASIC_COLOURS: tuple[str, ...] = DIE_COLOURS


def whole_pixels(point: np.ndarray) -> tuple[int, int]:
    """A point as whole pixels for OpenCV's drawing calls, cut towards zero (as a cast to
    int32 cuts)."""
    x, y = point.astype(np.int32)
    return int(x), int(y)
