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
    out: np.ndarray = image.astype(np.float32)
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
        decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = decoded
    return out


def motion_blur(image: np.ndarray, rng: np.random.Generator, max_length: int = 9) -> np.ndarray:
    """Blur along a random direction, like a webcam frame of a moving hand or die."""
    length = int(rng.integers(3, max(4, max_length + 1)))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    rotation = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
    kernel = np.asarray(cv2.warpAffine(kernel, rotation, (length, length)), np.float32)
    kernel /= max(kernel.sum(), 1e-6)
    return cv2.filter2D(image, -1, kernel)


def camera_look(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Cameras the real training photos lack: a greyscale webcam, a near-infrared one
    (the scene lit by an IR lamp: red and skin tones come out bright, blue dark, the whole
    picture grey and soft) and a lens's vignetting (light falling off towards the frame's
    corners, across a die's crop a gradient). Each with its own chance; BGR uint8 in and
    out."""
    out = image
    roll = rng.random()
    if roll < 0.12:
        out = cv2.cvtColor(cv2.cvtColor(out, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    elif roll < 0.2:
        out = near_infrared(out, rng)
    if rng.random() < 0.25:
        out = vignetting(out, rng)
    return out


def near_infrared(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A near-infrared look: one grey channel weighted towards red (B, G, R weights about
    0.05, 0.25, 0.7), lifted blacks and a little glow."""
    weights = rng.dirichlet((1.0, 4.0, 12.0)).astype(np.float32)
    grey = image.astype(np.float32) @ weights
    grey = 30 + grey * rng.uniform(0.7, 0.9)
    if rng.random() < 0.5:
        glow = cv2.GaussianBlur(grey, (0, 0), max(1.0, image.shape[0] / 24))
        grey = 0.8 * grey + 0.2 * glow
    grey = np.clip(grey, 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def vignetting(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light falling off with the distance from a centre somewhere off the picture (a crop
    is a small part of the frame), down to 45-85 % at the far side."""
    h, w = image.shape[:2]
    angle = rng.uniform(0, 2 * np.pi)
    reach = rng.uniform(0.5, 2.0) * max(h, w)
    cx, cy = w / 2 + reach * np.cos(angle), h / 2 + reach * np.sin(angle)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    distance = np.hypot(xs - cx, ys - cy)
    near, far = float(distance.min()), float(distance.max())
    falloff = rng.uniform(0.15, 0.55)
    gain = 1.0 - falloff * ((distance - near) / max(far - near, 1e-3)) ** 2
    return np.clip(image.astype(np.float32) * gain[..., None], 0, 255).astype(np.uint8)
