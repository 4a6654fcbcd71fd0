"""What a rendered scene says about its dice: one `RenderedDie` per die."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RenderedDie:
    """Ground truth of one rendered die. cx, cy, side and angle describe the top face
    (centre, mean edge length in pixels, rotation in degrees); value is None when the die
    cannot be read (cocked, half hidden, tumbling). `box` is the axis-aligned box
    (x0, y0, x1, y1) around everything visible of the die, side faces included, as a
    YOLO label would draw it. `visible` is the share of the top face left to see (other
    dice of a pile, a card, a container's wall or the picture's edge cover the rest); a
    die with less than 0.8 of its top face visible is unreadable ("hidden")."""

    cx: float
    cy: float
    side: float
    angle: float
    value: int | None
    body: str
    pips: str
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    reason: str = ""  # why value is None: "cocked", "hidden", "tumbling", "glare"
    visible: float = 1.0
