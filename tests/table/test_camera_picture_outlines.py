"""The outlines drawn on the camera's held picture (the big picture the host fixes dice on)
stand out from whatever the table looks like: non-text contrast of at least 3:1 (WCAG
1.4.11) against the picture around them, on any background."""

from __future__ import annotations

import numpy as np
import pytest

from companion.table.camera_pictures import mark_problems
from companion.vision.types import DieBox, DieReading

# tables as the camera sees them (BGR): every grey, felts, wood, and the colours the
# outlines are drawn in, so no outline vanishes into its own colour
BACKGROUNDS = [(v, v, v) for v in range(0, 256, 15)] + [
    (60, 110, 40),  # green felt
    (40, 40, 140),  # red felt
    (60, 110, 160),  # wood
    (150, 90, 40),  # blue cloth
    (60, 200, 60),
    (0, 140, 255),
    (40, 40, 230),
    (200, 80, 200),
]
DIE = DieBox(cx=100, cy=100, w=40, h=40)


def luminance(bgr: np.ndarray) -> float:
    """WCAG 2's relative luminance of one BGR pixel."""
    b, g, r = (float(c) / 255 for c in bgr)
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: np.ndarray, b: np.ndarray) -> float:
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def best_contrast_across(
    picture: np.ndarray, x: int, y0: int, y1: int, around: np.ndarray
) -> float:
    """The strongest contrast with `around` of the pixels crossed going down column `x`
    from `y0` to `y1` (across a horizontal stretch of outline)."""
    return max(contrast(picture[y, x], around) for y in range(y0, y1))


@pytest.mark.parametrize("background", BACKGROUNDS)
@pytest.mark.parametrize(
    ("flags", "value"),
    [((), 4), (("low_confidence",), 4), (("extra",), 4), ((), None)],
    ids=["read", "doubtful", "extra", "unreadable"],
)
def test_every_outline_stands_out_at_3_to_1_on_any_table(
    background: tuple[int, int, int], flags: tuple[str, ...], value: int | None
) -> None:
    """Green (read), orange (doubtful), magenta (extra) and the problem dice's red were
    drawn bare: on a mid-grey table the red outline was 1.1:1 and the green 1.9:1, on dark
    felt the red 2.2:1. Each line has a casing now (dark under a light line, light under a
    dark one), so one of the two stands out from any table at 3:1 or more."""
    image = np.full((200, 200, 3), background, np.uint8)
    die = DieReading(DIE, value, 0.9, "red", 0.9, flags)
    marked = mark_problems(image, (die,), [DIE] if not flags else [])
    around = np.array(background, np.uint8)
    x = int(DIE.cx)  # the bottom edge's middle: no label is written there
    bottom = int(DIE.cy + DIE.h / 2)
    assert best_contrast_across(marked, x, bottom - 4, bottom + 5, around) >= 3
    if not flags:  # the problem die's own outline, drawn further out
        pad = max(3, int(0.15 * DIE.h))
        assert best_contrast_across(marked, x, bottom + pad - 5, bottom + pad + 6, around) >= 3
