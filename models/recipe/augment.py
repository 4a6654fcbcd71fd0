"""Photometric and geometric augmentation in numpy/OpenCV, shared by both models: the real
photos cover three tables and a few cameras, so colour, blur, noise and compression are
varied far beyond them to generalise to other tables, cameras and dice."""

from __future__ import annotations

import cv2
import numpy as np


def photometric(
    image: np.ndarray, rng: np.random.Generator, strength: float = 1.0, blur_chance: float = 1.0
) -> np.ndarray:
    """A colour/brightness/blur/noise/JPEG-jittered copy of a BGR uint8 image."""
    out = image.astype(np.float32)
    gains = rng.uniform(1 - 0.25 * strength, 1 + 0.25 * strength, size=3)
    contrast = rng.uniform(1 - 0.4 * strength, 1 + 0.4 * strength)
    brightness = rng.uniform(-40, 40) * strength
    mean = out.mean()
    out = (out - mean) * contrast + mean + brightness
    out *= gains
    if rng.random() < 0.05:
        out[:] = out.mean(axis=2, keepdims=True)
    if rng.random() < 0.3:
        gamma = rng.uniform(0.6, 1.6)
        out = 255.0 * (np.clip(out, 0, 255) / 255.0) ** gamma
    out = np.clip(out, 0, 255).astype(np.uint8)
    roll = rng.random() / blur_chance
    if roll < 0.25:
        sigma = rng.uniform(0.3, 1.6) * strength
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    elif roll < 0.35:
        out = motion_blur(out, rng, max_length=int(2 + 7 * strength))
    if rng.random() < 0.35:
        noise = rng.standard_normal(out.shape, dtype=np.float32) * (rng.uniform(2, 10) * strength)
        out = np.clip(out.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        quality = int(rng.uniform(25, 90))
        ok, encoded = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    return out


def motion_blur(image: np.ndarray, rng: np.random.Generator, max_length: int = 9) -> np.ndarray:
    """Blur along a random direction, like a webcam frame of a moving hand or die."""
    length = int(rng.integers(3, max(4, max_length + 1)))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    rotation = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
    kernel = cv2.warpAffine(kernel, rotation, (length, length))
    kernel /= max(kernel.sum(), 1e-6)
    return cv2.filter2D(image, -1, kernel)
