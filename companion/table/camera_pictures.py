"""The pictures of camera rolls: the held frame with its problem dice marked for the host,
and the small photo kept beside every applied roll in SQLite. CPU work: run off the loop."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.annotate import annotate, cased_polyline
from companion.vision.types import DieBox, DieReading, FrameReading

PHOTO_WIDTH = 320
PHOTO_QUALITY = 70
PICTURE_WIDTH = 800
PICTURE_QUALITY = 80
PROBLEM_BGR = (0, 0, 140)  # dark red outline of a die the mismatch names, on a light casing


def encode_jpeg(image: np.ndarray, quality: int, width: int | None = None) -> bytes:
    """`image` as JPEG bytes, scaled down to `width` pixels wide when given."""
    if width is not None and image.shape[1] > width:
        height = max(1, round(image.shape[0] * width / image.shape[1]))
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return bytes(buffer.tobytes())


def mark_problems(
    image: np.ndarray, dice: tuple[DieReading, ...], boxes: list[DieBox]
) -> np.ndarray:
    """The annotated reading with each die named by a problem outlined again in red."""
    h, w = image.shape[:2]
    out = annotate(image, FrameReading(w, h, dice))
    for box in boxes:
        x0, y0, x1, y1 = box.box
        pad = max(3, int(0.15 * max(box.w, box.h)))
        corners = np.array(
            [
                (x0 - pad, y0 - pad),
                (x1 + pad, y0 - pad),
                (x1 + pad, y1 + pad),
                (x0 - pad, y1 + pad),
            ],
            np.int32,
        )
        cased_polyline(out, corners, PROBLEM_BGR, 3)
    return out


def held_picture(image: np.ndarray, dice: tuple[DieReading, ...], boxes: list[DieBox]) -> bytes:
    """The held reading as the host sees it: every die outlined, the problem dice in red."""
    return encode_jpeg(mark_problems(image, dice, boxes), PICTURE_QUALITY, PICTURE_WIDTH)


THUMB_WIDTH = 240
THUMB_MARGIN = 1.2  # die sides of table kept around the dice


def held_thumbnail(image: np.ndarray, dice: tuple[DieReading, ...], boxes: list[DieBox]) -> bytes:
    """The held reading small, for the question in the banner: the picture of
    `held_picture` cropped to the dice (with a margin of table), THUMB_WIDTH wide."""
    marked = mark_problems(image, dice, boxes)
    if dice:
        h, w = marked.shape[:2]
        side = max(max(d.where.w, d.where.h) for d in dice) * THUMB_MARGIN
        x0 = max(0, int(min(d.where.cx for d in dice) - side))
        y0 = max(0, int(min(d.where.cy for d in dice) - side))
        x1 = min(w, int(max(d.where.cx for d in dice) + side))
        y1 = min(h, int(max(d.where.cy for d in dice) + side))
        if x1 > x0 and y1 > y0:
            marked = marked[y0:y1, x0:x1]
    return encode_jpeg(marked, PICTURE_QUALITY, THUMB_WIDTH)


def roll_photo(image: np.ndarray, dice: tuple[DieReading, ...]) -> bytes:
    """The photo of an applied roll: the frame with its dice outlined, PHOTO_WIDTH wide."""
    h, w = image.shape[:2]
    return encode_jpeg(annotate(image, FrameReading(w, h, dice)), PHOTO_QUALITY, PHOTO_WIDTH)
