"""Things on the table that are not six-sided dice (the fancy style): other polyhedral
dice (d4, d8, d10, d12, d20: faceted silhouettes with a printed number), poker chips,
number tokens (a printed number and dots: pip-like), hex tokens and coins.

They are drawn under the camera's perspective as the dice are (foreshortened towards the
vertical vanishing point, their height showing on the vanishing point's side), before
the dice, with cast shadows. Their labels (`RenderedOther`) never join the dice's: the
training uses them as hard negatives, places the finder must learn to leave alone."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import cv2
import numpy as np

from .description import BGR, Camera, Distractor
from .fancy_dice import finish_texture
from .texture import colour_tuple, fill

POLYHEDRA = ("d4", "d8", "d10", "d12", "d20")
TOKENS = ("chip", "number_token", "hex_token", "coin")
KINDS = POLYHEDRA + TOKENS
# how high each stands, as a share of its width
HEIGHT = {
    "d4": 0.4, "d8": 0.5, "d10": 0.5, "d12": 0.55, "d20": 0.55,
    "chip": 0.1, "number_token": 0.06, "hex_token": 0.06, "coin": 0.05,
}  # fmt: skip


@dataclass(frozen=True)
class RenderedOther:
    """Ground truth of one thing that is not a d6 die: its kind, where it lies in the
    picture (centre, width in pixels) and the axis-aligned box around what shows."""

    kind: str
    cx: float
    cy: float
    side: float
    box: tuple[float, float, float, float]


def _regular(n: int, radius: float, turn: float = -math.pi / 2) -> np.ndarray:
    a = turn + np.arange(n) * 2 * math.pi / n
    return np.stack([np.cos(a), np.sin(a)], axis=1) * radius


def facets(kind: str) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """(outline, side facets, top face) of a kind in -1..1, seen straight from above."""
    if kind == "d4":
        outer = _regular(3, 1.0)
        centre = np.zeros((1, 2))
        sides = [np.array([centre[0], outer[k], outer[(k + 1) % 3]]) for k in range(3)]
        return outer, sides, sides[0]
    if kind in ("d8", "d20", "d12"):
        n_top = 5 if kind == "d12" else 3
        outer = _regular(2 * n_top, 1.0)
        top = _regular(n_top, 0.62 if kind == "d12" else (0.55 if kind == "d8" else 0.5))
        sides = []
        for j in range(n_top):
            a, b = top[j], top[(j + 1) % n_top]
            p0, p1, p2 = outer[2 * j], outer[2 * j + 1], outer[(2 * j + 2) % (2 * n_top)]
            if kind == "d12":
                sides.append(np.array([a, p0, p1, p2, b]))
            else:
                sides += [np.array([a, p0, p1]), np.array([a, p1, b]), np.array([b, p1, p2])]
        return outer, sides, top
    if kind == "d10":
        outer = np.array([[0, -1], [0.75, -0.25], [0.6, 0.55], [0, 0.85], [-0.6, 0.55],
                          [-0.75, -0.25]], np.float64)  # fmt: skip
        top = np.array([[0, -0.8], [0.45, -0.1], [0, 0.6], [-0.45, -0.1]], np.float64)
        sides = [np.array([top[k % 4], outer[j], outer[(j + 1) % 6], top[(k + 1) % 4]])
                 for k, j in ((0, 0), (1, 2), (2, 3), (3, 5))]  # fmt: skip
        return outer, sides, top
    if kind == "hex_token":
        outer = _regular(6, 1.0, 0.0)
        return outer, [], outer
    outer = _regular(40, 1.0)  # chips, number tokens, coins
    return outer, [], outer


def projection(d: Distractor, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """The 2x2 map from the kind's -1..1 frame to the picture (turn, size, the camera's
    foreshortening) and the shift of its base from its top (its height's look)."""
    pos = np.array([d.cx, d.cy])
    to_v = np.array(camera.vanish) - pos
    dist = float(np.linalg.norm(to_v))
    direction = to_v / dist if dist > 1e-3 else np.array([0.0, 1.0])
    tilt = camera.tilt
    lean = min(0.85, math.sin(math.radians(tilt)) + 0.6 * dist / camera.focal * (tilt < 1))
    squash = math.sqrt(max(0.05, 1 - lean**2))
    a = math.radians(d.angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * d.size / 2
    foreshorten = np.eye(2) - (1 - squash) * np.outer(direction, direction)
    return foreshorten @ rot, direction * d.size * HEIGHT[d.kind] * lean


def outline_in_picture(d: Distractor, camera: Camera) -> np.ndarray:
    """Everything of it that shows (top and the extruded base), N x 2 picture points."""
    m, extrude = projection(d, camera)
    top = facets(d.kind)[0] @ m.T + [d.cx, d.cy]
    hull = cv2.convexHull(np.concatenate([top, top + extrude]).astype(np.float32))
    return hull.reshape(-1, 2)


def label_of(d: Distractor, camera: Camera, width: int, height: int) -> RenderedOther:
    hull = outline_in_picture(d, camera)
    (x0, y0), (x1, y1) = hull.min(axis=0), hull.max(axis=0)
    box = (float(max(0, x0)), float(max(0, y0)), float(min(width, x1)), float(min(height, y1)))
    return RenderedOther(d.kind, float(d.cx), float(d.cy), float(d.size), box)


def draw_distractor(
    img: np.ndarray, shadow: np.ndarray, d: Distractor, camera: Camera, light: tuple[float, float]
) -> None:
    """Draw `d` onto float `img` (and its cast shadow into `shadow`)."""
    hull = outline_in_picture(d, camera)
    fill(shadow, hull + np.array(light) * d.size * 0.25, 1.0)
    h, w = img.shape[:2]
    x0, y0 = (int(v) for v in np.clip(np.floor(hull.min(axis=0)) - 2, 0, None))
    x1, y1 = int(min(w, np.ceil(hull[:, 0].max()) + 3)), int(min(h, np.ceil(hull[:, 1].max()) + 3))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    m, _ = projection(d, camera)  # where it lies in the whole picture
    # drawn in the window around it, in the window's coordinates
    local = dataclasses.replace(d, cx=d.cx - x0, cy=d.cy - y0)
    _draw_in(img[y0:y1, x0:x1], local, m, light, hull - [x0, y0])


def _draw_in(
    view: np.ndarray, d: Distractor, m: np.ndarray, light: tuple[float, float], hull: np.ndarray
) -> None:
    """Draw `d` (its centre in `view`'s coordinates, `m` its projection) onto `view`."""
    centre = np.array([d.cx, d.cy])
    _, sides, top = facets(d.kind)
    body = np.array(d.body, np.float32)
    fill(view, hull, colour_tuple(body * 0.55))  # its flanks, in shade
    rng = np.random.default_rng(d.seed)
    albedo = _albedo(view.shape[:2], d, m, rng)
    for k, facet in enumerate(sides):
        lit = float(np.array(light) @ facet.mean(axis=0))
        _paint(view, albedo, facet @ m.T + centre, 0.8 - 0.25 * lit + 0.04 * (k % 2))
    _paint(view, albedo, top @ m.T + centre, 1.05)
    edges = colour_tuple(body * 0.4)
    for facet in sides:
        pts = ((facet @ m.T + centre) * 4).astype(np.int32)
        cv2.polylines(view, [pts], True, edges, 1, cv2.LINE_AA, 2)
    _print(view, d, m, centre, top, rng)


def _albedo(
    shape: tuple[int, ...], d: Distractor, m: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The material over the whole picture's frame (only its footprint is used): a fancy
    set's finish, a coin's metal or a token's printed card."""
    size = int(np.clip(d.size * 1.2, 24, 300))
    body = np.array(d.body, np.float32)
    if d.look is not None:
        tex = finish_texture(rng, d.look, body, size)
    else:
        tex = np.empty((size, size, 3), np.float32)
        tex[:] = body
        tex += rng.standard_normal(tex.shape).astype(np.float32) * 3
    # the texture's square onto the kind's -1..1 square in the picture
    src = np.array([[0, 0], [size - 1, 0], [0, size - 1]], np.float32)
    corners = np.array([[-1, -1], [1, -1], [-1, 1]]) @ m.T + [d.cx, d.cy]
    affine = cv2.getAffineTransform(src, corners.astype(np.float32))
    h, w = shape
    warped: np.ndarray = cv2.warpAffine(
        tex, affine, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return warped


def _paint(img: np.ndarray, albedo: np.ndarray, polygon: np.ndarray, shade: float) -> None:
    x0, y0 = np.floor(polygon.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(polygon.max(axis=0)).astype(int) + 2
    h, w = img.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 1 or y1 - y0 < 1:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    fill(mask, polygon - [x0, y0], 1.0)
    a = mask[..., None]
    roi = img[y0:y1, x0:x1]
    roi[:] = roi * (1 - a) + albedo[y0:y1, x0:x1] * shade * a


def _print(
    img: np.ndarray,
    d: Distractor,
    m: np.ndarray,
    centre: np.ndarray,
    top: np.ndarray,
    rng: np.random.Generator,
) -> None:
    """What is printed on its top: a number (polyhedra, number tokens with their dots), a
    chip's edge spots and inner ring, a coin's rim and relief."""
    ink = colour_tuple(np.array(d.ink, np.float32))
    if d.kind == "chip":
        ring = _regular(40, 0.68) @ m.T + centre
        cv2.polylines(img, [(ring * 4).astype(np.int32)], True, ink, 2, cv2.LINE_AA, 2)
        for k in range(int(rng.integers(4, 9))):
            a = 2 * math.pi * k / 8
            spot = np.array([[math.cos(a - 0.15), math.sin(a - 0.15)],
                             [math.cos(a + 0.15), math.sin(a + 0.15)],
                             [0.8 * math.cos(a + 0.12), 0.8 * math.sin(a + 0.12)],
                             [0.8 * math.cos(a - 0.12), 0.8 * math.sin(a - 0.12)]])  # fmt: skip
            fill(img, spot @ m.T + centre, ink)
        return
    if d.kind == "coin":
        rim = _regular(40, 0.86) @ m.T + centre
        cv2.polylines(img, [(rim * 4).astype(np.int32)], True, colour_tuple(np.array(d.body) * 0.7),
                      max(1, int(d.size / 30)), cv2.LINE_AA, 2)  # fmt: skip
        return
    text = str(d.number)
    scale = 0.32 if d.kind in ("d4", "d20", "d8") else 0.42
    _rotated_text(img, text, centre + top.mean(axis=0) @ m.T, d.size * scale, d.angle, ink)
    if d.kind == "number_token":  # the chance dots under the number: like pips
        dots = int(rng.integers(1, 6))
        for k in range(dots):
            p = np.array([(k - (dots - 1) / 2) * 0.16, 0.5]) @ m.T + centre
            cv2.circle(img, (int(p[0] * 16), int(p[1] * 16)), int(d.size * 0.04 * 16) + 8, ink,
                       -1, cv2.LINE_AA, 4)  # fmt: skip


def _rotated_text(
    img: np.ndarray, text: str, at: np.ndarray, height: float, angle: float, ink: tuple[float, ...]
) -> None:
    """`text` about `height` px tall, centred at `at`, turned by `angle` degrees."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(height, 4.0) / 22.0
    thickness = max(1, int(round(height / 9)))
    (tw, th), base = cv2.getTextSize(text, font, scale, thickness)
    pad = int(max(tw, th) * 0.8) + 4
    patch = np.zeros((2 * pad, 2 * pad), np.uint8)
    cv2.putText(
        patch, text, (pad - tw // 2, pad + th // 2), font, scale, 255, thickness, cv2.LINE_AA
    )
    turn = cv2.getRotationMatrix2D((pad, pad), -angle, 1.0)
    turn[:, 2] += np.array(at) - pad
    h, w = img.shape[:2]
    mask = cv2.warpAffine(patch, turn, (w, h)).astype(np.float32)[..., None] / 255
    img[:] = img * (1 - mask) + np.array(ink, np.float32) * mask


def distractor_colours(rng: np.random.Generator, kind: str) -> tuple[BGR, BGR]:
    """Body and ink of a token or coin (a polyhedral die takes its set's colours)."""
    if kind == "coin":
        metal = [[150, 150, 155], [60, 140, 190], [70, 100, 160], [90, 160, 200]]
        base = np.array(metal[int(rng.integers(0, len(metal)))], np.float32)
        return _bgr(base * rng.uniform(0.8, 1.15)), _bgr(base * 0.6)
    if kind == "number_token":
        return _bgr(np.array([150, 200, 225]) * rng.uniform(0.85, 1.1)), _bgr([30, 30, 160])
    card = rng.uniform(30, 230, 3)
    ink = np.array([235, 235, 235]) if card.mean() < 130 else np.array([25, 25, 25])
    return _bgr(card), _bgr(ink)


def _bgr(values: np.ndarray | list[int]) -> BGR:
    b, g, r = (float(v) for v in np.clip(np.asarray(values, np.float64), 0, 255))
    return b, g, r
