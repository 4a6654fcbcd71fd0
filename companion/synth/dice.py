"""One die: its outline under the camera's perspective and its drawing.

A die is a rounded cube. Seen from a camera that looks obliquely, its vertical edges
point at the camera's vertical vanishing point, so the side faces turned to the camera
show (with their own pips) below the top face; a cocked die tips towards its own
direction and shows two faces; a translucent die shows the table, and the face it lies
on, through its body."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from .description import BGR, Camera, Die, Face, Glare
from .palette import pip_layout
from .texture import colour_tuple, fill, rounded_square, smooth_noise

SUBPIXEL = 16  # cv2 shift of 4 bits: sub-pixel, anti-aliased circles and polygons
# face_texture's signature: (face, body, pips, size, corner, marble, clear) -> (tex, alpha)
FaceTexture = Callable[
    [Face, np.ndarray, np.ndarray, int, float, np.ndarray | None, float],
    tuple[np.ndarray, np.ndarray],
]


@dataclass(frozen=True)
class DieShape:
    """Where a die lies in the picture: the top face quad (TL, TR, BR, BL of the face
    texture), the same quad moved down to the table, the visible side quads with the
    index of the side face each shows, the outline (convex hull of all of it), and the
    top face's centre and its side as labelled."""

    top: np.ndarray
    bottom: np.ndarray
    sides: tuple[tuple[int, np.ndarray], ...]
    hull: np.ndarray
    cx: float
    cy: float
    side: float


def top_quad(
    cx: float, cy: float, side: float, angle_deg: float, squash_dir: np.ndarray, squash: float
) -> np.ndarray:
    """Corners (TL, TR, BR, BL of the face texture) of the top face: a square of `side`
    rotated by `angle_deg`, foreshortened by `squash` along unit vector `squash_dir`."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], np.float32)
    square = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]], np.float32) * side
    pts = square @ rot.T
    d = squash_dir.astype(np.float32)
    along = pts @ d
    pts = pts - np.outer(along * (1 - squash), d)
    return pts + np.array([cx, cy], np.float32)


def die_shape(die: Die, camera: Camera, lift: float = 1.0) -> DieShape:
    """The outline of `die` under `camera`. `lift` scales the die for its height over
    the table (a die lying on another is nearer the camera)."""
    pos = np.array([die.cx, die.cy], np.float32)
    vanish = np.array(camera.vanish, np.float32)
    to_v = vanish - pos
    dist = float(np.linalg.norm(to_v))
    direction = to_v / dist if dist > 1e-3 else np.array([0.0, 1.0], np.float32)
    tilt, focal = camera.tilt, camera.focal
    scale = 1.0
    if tilt >= 1:  # far dice look smaller under an oblique camera
        depth = die.cy - camera.vanish[1] + focal / max(math.tan(math.radians(tilt)), 1e-3)
        scale = 1.0 + 0.5 * math.sin(math.radians(tilt)) * depth / focal
    side = die.side * float(np.clip(scale, 0.6, 1.4)) * lift
    lean = min(0.85, math.sin(math.radians(tilt)) + 0.6 * dist / focal * (tilt < 1))
    squash_dir = direction
    if die.state == "cocked":  # resting on an edge: two faces show
        squash_dir = np.array(
            [math.cos(die.tip_direction), math.sin(die.tip_direction)], np.float32
        )
        lean = die.tip_lean
    squash = math.sqrt(max(0.05, 1 - lean**2))
    top = top_quad(die.cx, die.cy, side, die.angle, squash_dir, squash)
    extrude = squash_dir * side * lean
    bottom = top + extrude
    centre = top.mean(axis=0)
    sides: list[tuple[int, np.ndarray]] = []
    for k in range(4):
        a_pt, b_pt = top[k], top[(k + 1) % 4]
        if float(((a_pt + b_pt) / 2 - centre) @ extrude) > 1e-3 * side:
            quad = np.array([a_pt, b_pt, b_pt + extrude, a_pt + extrude], np.float32)
            sides.append((len(sides), quad))
    hull = cv2.convexHull(np.concatenate([top, bottom]).astype(np.float32)).reshape(-1, 2)
    return DieShape(
        top=top,
        bottom=bottom,
        sides=tuple(sides),
        hull=hull,
        cx=float(centre[0]),
        cy=float(centre[1]),
        side=side * math.sqrt(squash) if die.state else side,
    )


# ----------------------------------------------------------------------------------------
# Faces


@lru_cache(maxsize=256)
def face_bevel(size: int) -> np.ndarray:
    """Faces darken a little towards their rounded rim."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / (size - 1) - 0.5
    edge = np.maximum(np.abs(xx), np.abs(yy))
    bevel: np.ndarray = (1.0 - 0.25 * np.clip((edge - 0.38) / 0.12, 0, 1) ** 2)[..., None]
    bevel.setflags(write=False)
    return bevel


def face_texture(
    face: Face,
    body: np.ndarray,
    pips: np.ndarray,
    size: int,
    corner: float,
    marble: np.ndarray | None = None,
    clear: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One face as a (size x size) float BGR texture plus an alpha mask with rounded
    corners. Pips are slightly sunk: a darker rim on one side. `clear` (0-1) makes the
    body that much see-through (a translucent die); its pips stay solid paint."""
    rng = np.random.default_rng(face.seed)
    tex = np.empty((size, size, 3), np.float32)
    tex[:] = body
    tex *= face_bevel(size)
    if marble is not None:
        swirl = smooth_noise(rng, size, size, max(4, size // 5))
        swirl = (np.clip(np.abs(np.sin(swirl * 3.0)), 0, 1) ** 6)[..., None]
        tex = tex * (1 - 0.45 * swirl) + marble * 0.45 * swirl
    tex += rng.standard_normal(tex.shape, dtype=np.float32) * np.float32(2.0)
    paint = _draw_pips(tex, face, body, pips, size, clear > 0)
    return finish_face(tex, face, corner, size, clear, paint)


def finish_face(
    tex: np.ndarray,
    face: Face,
    corner: float,
    size: int,
    clear: float,
    paint: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """A painted face's sheen and glare, and its alpha: the rounded square, see-through
    (``clear``) where no pip is painted (``paint``: 1 where a pip is)."""
    if face.sheen > 0:
        tex += np.float32(face.sheen)
    for glare in (face.glare, face.flare):
        if glare is not None:
            add_glare(tex, glare, size)
    alpha = np.zeros((size, size), np.float32)
    outline = (rounded_square(corner) + 0.5) * (size - 1)
    cv2.fillPoly(alpha, [np.round(outline * SUBPIXEL).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    if paint is not None and clear > 0:
        alpha *= 1.0 - clear * (1.0 - paint)
    return np.clip(tex, 0, 255), alpha


def add_glare(tex: np.ndarray, g: Glare, size: int) -> None:
    spot = np.zeros((size, size), np.float32)
    axes = (int(g.axes[0] * size), int(g.axes[1] * size))
    cv2.ellipse(spot, (int(g.x * size), int(g.y * size)), axes, g.angle, 0, 360, 1.0, -1)
    softness = 1.0 - 0.85 * g.hardness
    soft_spot = cv2.GaussianBlur(spot, (0, 0), max(0.6, size * 0.06 * softness))
    tex += (g.strength * soft_spot)[..., None]


def glare_hides_a_pip(face: Face) -> bool:
    """Whether the face's flare blows out (past white) the middle of one of its pips."""
    g = face.flare
    if g is None or g.strength < 220:
        return False
    a = math.radians(g.angle)
    for col, row in pip_layout(face.value, face.orientation):
        dx = 0.5 + col * face.pip_spacing - g.x
        dy = 0.5 + row * face.pip_spacing - g.y
        u = dx * math.cos(a) + dy * math.sin(a)
        v = -dx * math.sin(a) + dy * math.cos(a)
        if (u / (g.axes[0] * 0.9)) ** 2 + (v / (g.axes[1] * 0.9)) ** 2 <= 1.0:
            return True
    return False


def _draw_pips(
    tex: np.ndarray, face: Face, body: np.ndarray, pips: np.ndarray, size: int, with_paint: bool
) -> np.ndarray | None:
    """The pips of `face` onto `tex`; with `with_paint`, also their mask (where a
    translucent die's paint is solid)."""
    rim = colour_tuple(np.clip(body * 0.55, 0, 255))
    paint_colour = colour_tuple(pips)
    paint = np.zeros((size, size), np.float32) if with_paint else None
    r = face.pip_radius * size
    for col, row in pip_layout(face.value, face.orientation):
        px = (0.5 + col * face.pip_spacing) * size
        py = (0.5 + row * face.pip_spacing) * size
        c = (int(px * SUBPIXEL), int(py * SUBPIXEL))
        cv2.circle(tex, c, int(r * SUBPIXEL), rim, -1, cv2.LINE_AA, 4)
        c2 = (int((px + 0.12 * r) * SUBPIXEL), int((py + 0.12 * r) * SUBPIXEL))
        cv2.circle(tex, c2, int(r * 0.9 * SUBPIXEL), paint_colour, -1, cv2.LINE_AA, 4)
        if paint is not None:
            cv2.circle(paint, c, int(r * SUBPIXEL), 1.0, -1, cv2.LINE_AA, 4)
    return paint


def warp_onto(
    canvas: np.ndarray, texture: np.ndarray, alpha: np.ndarray, quad: np.ndarray, shade: float
) -> None:
    """Paste `texture` (square) onto `canvas` (float BGR) into the quadrilateral `quad`
    (4x2, corners in texture order TL, TR, BR, BL) with alpha blending, darkened by
    `shade`."""
    h, w = canvas.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    s = texture.shape[0] - 1
    src = np.array([[0, 0], [s, 0], [s, s], [0, s]], np.float32)
    dst = (quad - np.array([x0, y0], np.float32)).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(
        texture, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR)[..., None]
    roi = canvas[y0:y1, x0:x1]
    roi[:] = roi * (1 - a) + warped * shade * a


# ----------------------------------------------------------------------------------------
# The whole die


def draw_die(
    img: np.ndarray,
    die: Die,
    shape: DieShape,
    colours: tuple[BGR, BGR, BGR | None],
    texture: FaceTexture | None = None,
) -> None:
    """Draw one die (silhouette, side faces with pips, top face) onto float `img` in
    `colours` (body, pips, marbling: the die's own as the sensor sees them). `texture`
    draws its faces (default `face_texture`; a fancy die's look draws its own)."""
    face_texture_of = texture or face_texture
    body = np.array(colours[0], np.float32)
    pips = np.array(colours[1], np.float32)
    marble = np.array(colours[2], np.float32) if colours[2] is not None else None
    tex_size = int(np.clip(shape.side * 1.6, 40, 400))
    shade = die.side_shade
    # the silhouette under the faces fills the rounded edges between them
    if die.clear > 0:
        tint_through(img, shape.hull, body, body * shade * 0.9, die.clear)
        if die.under is not None:
            # seen through the top face: the face the die lies on, mirrored
            tex, alpha = face_texture_of(
                die.under, body, pips, tex_size, die.corner, None, die.clear
            )
            # through the body and the plastic's depth these pips look fainter
            faint = 0.6 * alpha[:, ::-1]
            warp_onto(img, tex[:, ::-1].copy(), faint, shape.bottom, shade)
    else:
        fill(img, shape.hull, colour_tuple(body * shade * 0.9))
    for j, quad in shape.sides:
        face = die.sides[j]
        tex, alpha = face_texture_of(face, body, pips, tex_size, die.corner, marble, die.clear)
        warp_onto(img, tex, alpha, quad, shade * face.shade)
    tex, alpha = face_texture_of(die.top, body, pips, tex_size, die.corner, marble, die.clear)
    warp_onto(img, tex, alpha, shape.top, die.top.shade)


def tint_through(
    img: np.ndarray, hull: np.ndarray, body: np.ndarray, solid: np.ndarray, clear: float
) -> None:
    """Inside `hull`, what lies behind a translucent die: the table seen through coloured
    plastic (which passes mostly its own colour), mixed with the plastic's own colour."""
    h, w = img.shape[:2]
    x0, y0 = (int(v) for v in np.floor(hull.min(axis=0)).clip(0, None))
    x1 = int(min(w, np.ceil(hull[:, 0].max()) + 1))
    y1 = int(min(h, np.ceil(hull[:, 1].max()) + 1))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    fill(mask, hull - np.array([x0, y0], np.float32), 1.0)
    glass = np.clip(body / 255.0 * 1.25 + 0.1, 0.0, 1.0)
    roi = img[y0:y1, x0:x1]
    seen = roi * glass * clear + solid * (1.0 - clear)
    roi[:] = roi * (1.0 - mask[..., None]) + seen * mask[..., None]


def smear(
    rng: np.random.Generator, img: np.ndarray, layer: np.ndarray, hull: np.ndarray, length_px: float
) -> None:
    """Blend a die drawn on `layer` into `img` smeared along a random motion about
    `length_px` long."""
    length = max(3, int(length_px * rng.uniform(0.5, 1.2)) | 1)
    line = np.zeros((length, length), np.float32)
    line[length // 2, :] = 1.0 / length
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
    # the turned line is float32 like the line (the stubs type it as any numeric array)
    kernel: np.ndarray = cv2.warpAffine(line, rot, (length, length))
    kernel /= kernel.sum()
    mask = np.zeros(img.shape[:2], np.float32)
    cv2.fillPoly(mask, [hull.astype(np.int32)], 1.0)
    x0, y0 = np.maximum(hull.min(axis=0).astype(int) - length, 0)
    x1, y1 = hull.max(axis=0).astype(int) + length
    roi = (slice(y0, y1), slice(x0, x1))
    m = cv2.filter2D(mask[roi], -1, kernel)[..., None]
    smeared = cv2.filter2D(layer[roi] * mask[roi][..., None], -1, kernel)
    img[roi] = img[roi] * (1 - m) + smeared
