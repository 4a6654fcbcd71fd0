"""Light and camera: exposure, gradient, vignette and colour cast, then blur, motion blur,
sensor noise and JPEG, as a phone or webcam photo has them."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .description import Finish, Light
from .texture import smooth_noise


def apply_light(img: np.ndarray, light: Light) -> np.ndarray:
    """Exposure with a linear ramp, a mild vignette, slow unevenness and a colour cast
    (nothing under the default light)."""
    if light.default:
        return img
    h, w = img.shape[:2]
    yy, xx = np.ogrid[0:h, 0:w]
    yy, xx = yy.astype(np.float32), xx.astype(np.float32)
    a = light.ramp_angle
    ramp = ((xx - w / 2) * math.cos(a) + (yy - h / 2) * math.sin(a)) / max(h, w)
    gain = light.gain + ramp * light.ramp
    vignette = 1 - light.vignette * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
    rng = np.random.default_rng(light.seed)
    gain = gain * vignette + 0.08 * smooth_noise(rng, h, w, max(h, w) // 3)
    out: np.ndarray = img * gain[..., None] * np.array(light.cast, np.float32)
    return out


def apply_finish(
    img: np.ndarray, finish: Finish, mono: bool = False, noise_gain: float = 1.0
) -> np.ndarray:
    """Blur, motion blur, sensor noise and JPEG; returns BGR uint8. A `mono` sensor's
    noise and JPEG are one channel's (its picture stays grey)."""
    if finish.blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), finish.blur)
    if finish.motion_length >= 2:
        k = int(finish.motion_length) | 1
        line = np.zeros((k, k), np.float32)
        line[k // 2, :] = 1.0
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), finish.motion_angle, 1)
        kernel: np.ndarray = cv2.warpAffine(line, rot, (k, k))
        kernel /= max(float(kernel.sum()), 1e-6)
        img = cv2.filter2D(img, -1, kernel)
    if finish.noise > 0:
        rng = np.random.default_rng(finish.noise_seed)
        sd = np.float32(finish.noise * noise_gain)
        if mono:
            img = img + (rng.standard_normal(img.shape[:2], dtype=np.float32) * sd)[..., None]
        else:
            img = img + rng.standard_normal(img.shape, dtype=np.float32) * sd
    out: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    if finish.jpeg_quality is not None:
        out = (grey_jpeg if mono else jpeg_round_trip)(out, finish.jpeg_quality)
    return out


def grey_jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """A greyscale sensor's JPEG: one channel encoded, three equal channels back."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    ok, buf = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return decoded if decoded is not None else image


def jpeg_round_trip(image: np.ndarray, quality: int) -> np.ndarray:
    """The picture as a JPEG of `quality` shows it."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    # imdecode says None for bytes it cannot read; what imencode wrote always reads
    return decoded if decoded is not None else image
