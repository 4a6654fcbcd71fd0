"""Annotated pictures of a FrameReading: each die's outline (its rotated square), value,
colour and confidence; unreadable or doubtful dice in a warning colour, extra dice (beyond
the dice set) dashed. Used by `companion read --annotate` and the camera page."""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.types import UNREADABLE, DieReading, FrameReading, whole_pixels

READ_BGR = (60, 200, 60)  # green: read with confidence
WARN_BGR = (0, 150, 255)  # orange: unreadable, low confidence or colour doubtful
EXTRA_BGR = (255, 140, 255)  # magenta: a die the dice set has no place for
# every line is drawn over a casing, dark under a light line and light under a dark one:
# on any table one of the two stands out at 3:1 (WCAG 1.4.11). It holds for a line at
# least this light on a dark casing, or at most DARK_LINE on a light one (WCAG luminance)
LIGHT_LINE = 0.4
DARK_LINE = 0.0667
DARK_CASING = (0, 0, 0)
LIGHT_CASING = (255, 255, 255)


def luminance(bgr: tuple[int, int, int]) -> float:
    """WCAG 2's relative luminance of a BGR colour."""
    b, g, r = (c / 255 for c in bgr)
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def casing_of(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    """The casing a line of `colour` is drawn over (see LIGHT_LINE)."""
    shade = luminance(colour)
    if shade >= LIGHT_LINE:
        return DARK_CASING
    if shade <= DARK_LINE:
        return LIGHT_CASING
    raise ValueError(f"{colour} is neither light nor dark enough for a cased line")


def cased_thickness(thickness: int) -> int:
    """The casing's width: the line's, with at least two pixels showing on either side (the outer one smoothed)."""
    return thickness + 2 * max(2, thickness // 2)


def cased_polyline(
    image: np.ndarray, corners: np.ndarray, colour: tuple[int, int, int], thickness: int
) -> None:
    """A closed outline through `corners` in `colour`, over its casing."""
    cv2.polylines(
        image, [corners], True, casing_of(colour), cased_thickness(thickness), cv2.LINE_AA
    )
    cv2.polylines(image, [corners], True, colour, thickness, cv2.LINE_AA)


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
    # a 1 pixel outline, smoothed, never reaches its own colour: it would not stand out
    outline = max(2, thickness)
    for die in reading.dice:
        colour = EXTRA_BGR if "extra" in die.flags else WARN_BGR if is_doubtful(die) else READ_BGR
        corners = np.round(die_outline(die)).astype(np.int32)
        if "extra" in die.flags:
            _dashed_polygon(out, corners, colour, outline)
        else:
            cased_polyline(out, corners, colour, outline)
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
            ends = (whole_pixels(p), whole_pixels(q))
            cv2.line(image, *ends, casing_of(colour), cased_thickness(thickness), cv2.LINE_AA)
            cv2.line(image, *ends, colour, thickness, cv2.LINE_AA)
