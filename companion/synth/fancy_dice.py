"""The faces of fancy dice (the fancy style, fancy.py): marbled, speckled, glitter,
two-tone and metallic plastic; gold, silver, coloured and engraved pips; a symbol in place
of the one or the six.

`fancy_face_texture` is `dice.face_texture` for a die with a `Look`: the same size, the
same rounded alpha and the same pip grid (palette.pip_layout, the face's spacing and
radius), so a fancy face's labels are exactly a plain face's. Only dice with a look come
here: the default style never draws any of it."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from .description import Face, Look
from .dice import SUBPIXEL, FaceTexture, face_bevel, finish_face
from .palette import pip_layout
from .texture import colour_tuple, smooth_noise

FINISHES = ("marbled", "speckled", "glitter", "two_tone", "metallic", "plain")
PIP_STYLES = ("paint", "metal", "engraved")
SYMBOLS = ("star", "ring", "diamond", "heart", "cross", "sun")


def fancy_face_texture(
    face: Face,
    body: np.ndarray,
    pips: np.ndarray,
    size: int,
    corner: float,
    look: Look,
    clear: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One face of a fancy die as (size x size float BGR, alpha), as dice.face_texture."""
    rng = np.random.default_rng([face.seed % 2**63, look.seed % 2**63])
    tex = finish_texture(rng, look, body, size)
    tex += rng.standard_normal(tex.shape, dtype=np.float32) * np.float32(2.0)
    paint = np.zeros((size, size), np.float32)
    if look.symbol and face.value == look.symbol_face:
        draw_symbol(tex, paint, look, body, pips, size, rng)
    else:
        draw_fancy_pips(tex, paint, face, look, body, pips, size)
    return finish_face(tex, face, corner, size, clear, paint)


def texture_for(look: Look, infrared: bool = False) -> FaceTexture:
    """dice.draw_die's face drawer for a die of `look` (under a near-infrared sensor the
    second colour is seen as grey, as the body is)."""
    if infrared:
        grey = float(np.dot(look.second, (0.114, 0.587, 0.299))) * 0.72 + 0.28 * 175
        look = dataclasses.replace(look, second=(grey, grey, grey))

    def draw(
        face: Face,
        body: np.ndarray,
        pips: np.ndarray,
        size: int,
        corner: float,
        marble: np.ndarray | None,
        clear: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        return fancy_face_texture(face, body, pips, size, corner, look, clear)

    return draw


# ----------------------------------------------------------------------------------------
# The plastic (or metal)


def finish_texture(rng: np.random.Generator, look: Look, body: np.ndarray, size: int) -> np.ndarray:
    """The bare material of one face (no pips), size x size float BGR, darkened towards
    the rounded rim. Also the facets of a polyhedral distractor of the same set."""
    tex = np.empty((size, size, 3), np.float32)
    tex[:] = body
    second = np.array(look.second, np.float32)
    if look.finish == "marbled":
        tex = _marbled(rng, tex, second, size)
    elif look.finish == "speckled":
        _speckled(rng, tex, second, size)
    elif look.finish == "glitter":
        tex = _glitter(rng, tex, second, size)
    elif look.finish == "two_tone":
        tex = _two_tone(rng, tex, second, size, look.seed)
    elif look.finish == "metallic":
        tex = _metallic(rng, tex, size, look.seed)
    result: np.ndarray = tex * face_bevel(size)
    return result


def _marbled(
    rng: np.random.Generator, tex: np.ndarray, second: np.ndarray, size: int
) -> np.ndarray:
    """Swirled veins and clouds of a second colour (marbled, pearl-swirl dice)."""
    broad = smooth_noise(rng, size, size, max(4, size // 3))
    fine = smooth_noise(rng, size, size, max(3, size // 9))
    veins = np.abs(np.sin((broad * 2.2 + fine * 0.7) * math.pi))
    vein = np.clip(1.0 - veins / float(rng.uniform(0.25, 0.5)), 0, 1) ** 1.5
    cloud = np.clip(0.5 + broad * float(rng.uniform(0.4, 0.9)), 0, 1) * 0.45
    mix = np.maximum(vein, cloud)[..., None]
    out: np.ndarray = tex * (1 - mix) + second * mix
    return out


def _speckled(rng: np.random.Generator, tex: np.ndarray, second: np.ndarray, size: int) -> None:
    """Small flecks of a second colour over the whole face (speckled, granite dice)."""
    count = int(size * size * float(rng.uniform(0.003, 0.012)))
    xy = rng.uniform(0, size, (count, 2)) * SUBPIXEL
    radii = rng.uniform(0.005, 0.018, count) * size * SUBPIXEL
    shades = rng.uniform(0.7, 1.15, count)
    for (x, y), r, shade in zip(xy.astype(int), radii.astype(int), shades, strict=True):
        colour = colour_tuple(np.clip(second * shade, 0, 255))
        cv2.circle(tex, (int(x), int(y)), max(int(r), SUBPIXEL // 2), colour, -1, cv2.LINE_AA, 4)


def _glitter(
    rng: np.random.Generator, tex: np.ndarray, second: np.ndarray, size: int
) -> np.ndarray:
    """Deep, cloudy plastic with sparkles that catch the light (glitter dice)."""
    depth = 0.75 + 0.25 * smooth_noise(rng, size, size, max(4, size // 4))
    out: np.ndarray = tex * depth[..., None]
    sparks = (rng.random((size, size)) < float(rng.uniform(0.01, 0.04))).astype(np.float32)
    sparks *= rng.uniform(0.3, 1.0, (size, size)).astype(np.float32)
    soft: np.ndarray = cv2.GaussianBlur(sparks, (0, 0), max(0.5, size / 160))
    glints = soft / max(float(soft.max()), 1e-6)
    glint = np.clip(second * 0.6 + 120, 0, 255)
    out += glints[..., None] * glint * float(rng.uniform(0.8, 1.6))
    return out


def _two_tone(
    rng: np.random.Generator, tex: np.ndarray, second: np.ndarray, size: int, seed: int
) -> np.ndarray:
    """Two colours meeting along a wavy, soft border (two-tone, 'gemini' dice); the border
    lies the same way on every face of the die."""
    lie = np.random.default_rng(seed % 2**63)
    angle = float(lie.uniform(0, 2 * math.pi))
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1) - 0.5
    along = xx * math.cos(angle) + yy * math.sin(angle) + float(lie.uniform(-0.25, 0.25))
    along += smooth_noise(rng, size, size, max(4, size // 3)) * 0.18
    sharpness = float(lie.uniform(6, 30))
    mix = (1.0 / (1.0 + np.exp(-along * sharpness)))[..., None]
    out: np.ndarray = tex * (1 - mix) + second * mix
    return out


def _metallic(rng: np.random.Generator, tex: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Polished or brushed metal: the room mirrored as broad bright and dark bands, fine
    brushing streaks."""
    lie = np.random.default_rng(seed % 2**63)
    angle = float(lie.uniform(0, math.pi)) + float(rng.normal(0, 0.4))
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1) - 0.5
    along = xx * math.cos(angle) + yy * math.sin(angle)
    bands = 0.5 + 0.5 * np.sin(along * float(rng.uniform(3, 9)) + float(rng.uniform(0, 6.3)))
    reflection = 0.45 + 0.85 * bands**1.5
    streaks = cv2.GaussianBlur(rng.standard_normal((size, size)).astype(np.float32), (0, 0), 0.6)
    streaks = cv2.blur(streaks, (max(3, size // 6), 1))
    out: np.ndarray = tex * (reflection + 0.12 * streaks)[..., None]
    return out


# ----------------------------------------------------------------------------------------
# Pips and symbols


def draw_fancy_pips(
    tex: np.ndarray,
    paint: np.ndarray,
    face: Face,
    look: Look,
    body: np.ndarray,
    pips: np.ndarray,
    size: int,
) -> None:
    """The face's pips in the look's style onto `tex`; their mask into `paint` (where a
    translucent die's ink is solid: engraved pits have none)."""
    r = face.pip_radius * size
    for col, row in pip_layout(face.value, face.orientation):
        px = (0.5 + col * face.pip_spacing) * size
        py = (0.5 + row * face.pip_spacing) * size
        draw_pit(tex, paint, px, py, r, look.pip_style, body, pips)


def draw_pit(
    tex: np.ndarray,
    paint: np.ndarray,
    px: float,
    py: float,
    r: float,
    style: str,
    body: np.ndarray,
    pips: np.ndarray,
) -> None:
    """One pip at (px, py) of radius r: ink, metal paint (a bright and a dark side) or an
    engraved pit (its far wall in shadow, its near wall lit, no ink)."""

    def disc(x: float, y: float, radius: float, colour: np.ndarray, target: np.ndarray) -> None:
        centre = (int(x * SUBPIXEL), int(y * SUBPIXEL))
        value: tuple[float, ...] | float = colour_tuple(np.clip(colour, 0, 255))
        if target.ndim == 2:
            value = float(colour[0])
        cv2.circle(target, centre, int(radius * SUBPIXEL), value, -1, cv2.LINE_AA, 4)

    if style == "engraved":
        disc(px, py, r, body * 0.45, tex)
        disc(px + 0.22 * r, py + 0.22 * r, r * 0.85, body * 0.8, tex)
        disc(px + 0.05 * r, py + 0.05 * r, r * 0.6, body * 0.92, tex)
        return
    disc(px, py, r, body * 0.55, tex)
    disc(px + 0.12 * r, py + 0.12 * r, r * 0.9, pips, tex)
    if style == "metal":
        disc(px + 0.3 * r, py + 0.3 * r, r * 0.45, pips * 0.7, tex)
        disc(px - 0.15 * r, py - 0.15 * r, r * 0.35, np.clip(pips * 1.3 + 60, 0, 255), tex)
    disc(px, py, r, np.ones(1, np.float32), paint)


def symbol_polygon(name: str, points: int = 48) -> np.ndarray:
    """A symbol's outline in -1..1 (N x 2)."""
    t = np.linspace(0, 2 * math.pi, points, endpoint=False)
    if name == "star":
        radius = np.where(np.arange(10) % 2 == 0, 1.0, 0.42)
        a = np.linspace(-math.pi / 2, 1.5 * math.pi, 10, endpoint=False)
        return np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    if name == "sun":
        radius = np.where(np.arange(24) % 2 == 0, 1.0, 0.7)
        a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
        return np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    if name == "diamond":
        return np.array([[0, -1], [0.65, 0], [0, 1], [-0.65, 0]], np.float64)
    if name == "heart":
        x = 16 * np.sin(t) ** 3
        y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
        return np.stack([x, y + 2.5], axis=1) / 17.0
    if name == "cross":
        w = 0.3
        return np.array(
            [[-w, -1], [w, -1], [w, -w], [1, -w], [1, w], [w, w], [w, 1], [-w, 1], [-w, w],
             [-1, w], [-1, -w], [-w, -w]],
            np.float64,
        )  # fmt: skip
    return np.stack([np.cos(t), np.sin(t)], axis=1)  # "ring" (and any other: a disc)


def draw_symbol(
    tex: np.ndarray,
    paint: np.ndarray,
    look: Look,
    body: np.ndarray,
    pips: np.ndarray,
    size: int,
    rng: np.random.Generator,
) -> None:
    """A symbol in place of the face's pips: small for the one, big for the six (a maker's
    logo, a star), in the look's pip style."""
    big = look.symbol_face == 6
    radius = size * (float(rng.uniform(0.3, 0.4)) if big else float(rng.uniform(0.17, 0.27)))
    turn = float(rng.uniform(-0.2, 0.2))
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    outline = symbol_polygon(look.symbol) @ rot.T * radius + size / 2
    pts = [np.round(outline * SUBPIXEL).astype(np.int32)]
    if look.pip_style == "engraved":
        cv2.polylines(tex, pts, True, colour_tuple(body * 0.45), max(1, size // 40), cv2.LINE_AA, 4)
        shifted = [np.round((outline + size * 0.012) * SUBPIXEL).astype(np.int32)]
        cv2.fillPoly(tex, shifted, colour_tuple(body * 0.85), cv2.LINE_AA, 4)
        return
    cv2.fillPoly(tex, pts, colour_tuple(np.clip(pips, 0, 255)), cv2.LINE_AA, 4)
    cv2.fillPoly(paint, pts, 1.0, cv2.LINE_AA, 4)
    if look.symbol == "ring":  # a ring: the body shows in its middle
        inner = [np.round((symbol_polygon("ring") * radius * 0.55 + size / 2) * SUBPIXEL)]
        cv2.fillPoly(tex, [inner[0].astype(np.int32)], colour_tuple(body), cv2.LINE_AA, 4)
        cv2.fillPoly(paint, [inner[0].astype(np.int32)], 0.0, cv2.LINE_AA, 4)
