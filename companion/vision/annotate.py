"""Annotated pictures of a FrameReading: each die's outline (its rotated square), value,
colour and confidence; unreadable or doubtful dice in a warning colour, extra dice (beyond
the dice set) dashed. Used by `companion read --annotate` and the camera page."""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.types import UNREADABLE, DieReading, FrameReading, whole_pixels

READ_BGR = (60, 200, 60)  # green: read with confidence
WARN_BGR = (0, 140, 255)  # orange: unreadable, low confidence or colour doubtful
EXTRA_BGR = (200, 80, 200)  # magenta: a die the dice set has no place for


def die_outline(reading: DieReading) -> np.ndarray:
    """The die's rotated square as 4 corner points (float32, pixels)."""
    box = reading.where
    return cv2.boxPoints(((box.cx, box.cy), (box.w, box.h), box.angle)).astype(np.float32)


def is_doubtful(reading: DieReading) -> bool:
    """Unreadable, flagged or low-confidence: drawn in the warning colour."""
    return (
        reading.value is None
        or UNREADABLE in reading.flags
        or any(f in reading.flags for f in ("low_confidence", "colour_mismatch"))
    )


def label_of(reading: DieReading) -> str:
    value = "?" if reading.value is None else str(reading.value)
    colour = reading.colour or "?"
    return f"{value} {colour} {reading.confidence:.2f}"


def annotate(image: np.ndarray, reading: FrameReading) -> np.ndarray:
    """A copy of the BGR picture with the reading drawn on it (the picture is not
    changed). A picture that is not BGR uint8 is converted first."""
    from companion.vision.pipeline import check_image

    picture, _ = check_image(image)
    if picture is None:
        return np.zeros((max(reading.height, 1), max(reading.width, 1), 3), np.uint8)
    out = picture.copy()
    scale = max(0.35, min(out.shape[:2]) / 900)
    thickness = max(1, int(round(scale * 2)))
    for die in reading.dice:
        colour = EXTRA_BGR if "extra" in die.flags else WARN_BGR if is_doubtful(die) else READ_BGR
        corners = np.round(die_outline(die)).astype(np.int32)
        if "extra" in die.flags:
            _dashed_polygon(out, corners, colour, thickness)
        else:
            cv2.polylines(out, [corners], True, colour, thickness, cv2.LINE_AA)
        text = label_of(die)
        (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
        x = int(np.clip(corners[:, 0].min(), 0, max(0, out.shape[1] - tw)))
        y = int(corners[:, 1].min()) - 4
        if y - th < 0:
            y = int(corners[:, 1].max()) + th + 4
        cv2.rectangle(out, (x, y - th - 2), (x + tw, y + base), (0, 0, 0), -1)
        cv2.putText(
            out, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thickness, cv2.LINE_AA
        )
    notes = list(reading.problems)
    if reading.missing and reading.dice:  # an empty table misses every die: no news
        notes.append("missing: " + ", ".join(reading.missing))
    for k, note in enumerate(notes):
        cv2.putText(
            out,
            note,
            (6, int(20 * scale / 0.5) * (k + 1)),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            WARN_BGR,
            thickness,
            cv2.LINE_AA,
        )
    return out


def _dashed_polygon(
    image: np.ndarray, corners: np.ndarray, colour: tuple[int, int, int], thickness: int
) -> None:
    for k in range(len(corners)):
        a, b = corners[k].astype(float), corners[(k + 1) % len(corners)].astype(float)
        length = float(np.linalg.norm(b - a))
        steps = max(2, int(math.ceil(length / 8)))
        for s in range(0, steps, 2):
            p = a + (b - a) * s / steps
            q = a + (b - a) * min(s + 1, steps) / steps
            cv2.line(image, whole_pixels(p), whole_pixels(q), colour, thickness, cv2.LINE_AA)
