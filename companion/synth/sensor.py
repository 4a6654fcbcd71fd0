"""What the camera's sensor sees: colour, greyscale, or near-infrared.

A greyscale webcam records brightness only. A near-infrared webcam (a night mode with IR
LEDs beside the lens, about 850 nm) sees materials differently: most dyes pass the near
infrared, so coloured plastic, felt and cloth look light grey whatever their colour,
while carbon black (black dice, black pips, dark print) stays dark and skin looks pale
and waxy. Painted pips keep their contrast with the body (dark pips on a light body,
light pips on a dark one: a die a camera cannot read is of no use on a table). The LEDs
light the middle of the picture most."""

from __future__ import annotations

import math

import numpy as np

from .description import BGR, Die, Sensor

# near-infrared brightness (0-255) of the dice's body plastics
BODY_NIR: dict[str, float] = {
    "white": 228.0,
    "black": 48.0,  # carbon black absorbs the near infrared too
    "grey": 150.0,
    "red": 206.0,
    "orange": 214.0,
    "yellow": 222.0,
    "green": 170.0,
    "blue": 146.0,
    "teal": 160.0,
    "purple": 178.0,
    "pink": 216.0,
    "brown": 128.0,
}
SKIN_NIR = 212.0


def _luma(bgr: np.ndarray) -> np.ndarray:
    out: np.ndarray = bgr[..., 0] * 0.114 + bgr[..., 1] * 0.587 + bgr[..., 2] * 0.299
    return out


def nir_of_scene(img: np.ndarray) -> np.ndarray:
    """Near-infrared look of the table, clutter and container (float BGR -> 3 equal
    channels): brightness lifted and evened out (dyes pass the infrared), the darkest
    (carbon) things still dark."""
    red_heavy = img[..., 0] * 0.2 + img[..., 1] * 0.35 + img[..., 2] * 0.45
    lifted = 255.0 * np.power(np.clip(red_heavy, 0, 255) / 255.0, 0.7)
    grey = 0.72 * lifted + 0.28 * 175.0
    return np.repeat(grey[..., None].astype(np.float32), 3, axis=2)


def die_colours(die: Die, sensor: Sensor) -> tuple[BGR, BGR, BGR | None]:
    """A die's body, pip and marbling colours as the sensor sees them (a greyscale
    sensor's are made grey with the whole picture)."""
    if sensor.kind != "ir":
        return die.body_bgr, die.pip_bgr, die.marble
    # the die's own jitter around its colour's typical brightness carries over
    typical = _luma_of(_nominal(die.body))
    level = BODY_NIR[die.body] * (_luma_of(die.body_bgr) / max(typical, 1.0)) ** 0.5
    level = float(np.clip(level, 25, 245))
    pip_luma = _luma_of(die.pip_bgr)
    if level >= 128:  # dark paint on light plastic
        pip = float(np.clip(28 + pip_luma * 0.15, 20, 70))
    else:
        pip = float(np.clip(190 + pip_luma * 0.2, 180, 245))
    marble = None
    if die.marble is not None:
        grain = 0.72 * _luma_of(die.marble) + 0.28 * 175
        marble = (grain, grain, grain)
    return (level, level, level), (pip, pip, pip), marble


def _luma_of(colour: BGR) -> float:
    return float(_luma(np.array(colour, np.float32)))


def cover_colour(kind: str, colour: BGR, sensor: Sensor) -> BGR:
    """A card's, hand's or lid's colour as the sensor sees it."""
    if sensor.kind != "ir":
        return colour
    luma = _luma_of(colour)
    level = SKIN_NIR + 0.1 * (luma - 150) if kind == "hand" else 0.72 * luma + 0.28 * 175
    return (level, level, level)


def _nominal(body: str) -> BGR:
    from .palette import BODY_BGR

    b, g, r = BODY_BGR[body]
    return float(b), float(g), float(r)


def to_sensor(img: np.ndarray, sensor: Sensor) -> np.ndarray:
    """The picture in the sensor's own terms: grey for a greyscale or infrared sensor
    (with its contrast, gamma and, in the infrared, the LEDs' bright middle)."""
    if sensor.kind == "colour":
        return img
    grey = _luma(img)
    if sensor.kind == "ir" and sensor.hotspot > 0:
        h, w = grey.shape
        yy, xx = np.ogrid[0:h, 0:w]
        spread = sensor.hotspot_spread * math.hypot(w, h) / 2
        cx, cy = sensor.hotspot_centre
        r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / (spread * spread)
        grey = grey * (1 - sensor.hotspot + sensor.hotspot * 1.6 * np.exp(-r2)).astype(np.float32)
    level = np.clip(grey, 0, 255) / 255.0
    grey = 255.0 * np.power(level, sensor.gamma)
    grey = (grey - 128.0) * sensor.contrast + 128.0
    return np.repeat(grey[..., None].astype(np.float32), 3, axis=2)
