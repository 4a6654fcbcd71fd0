"""The demo camera: dice thrown on a table, rendered with our own renderer (companion.synth),
so `companion serve` shows live dice when no camera is attached.

- `DemoThrows` is the demo camera `companion serve` opens: an empty table until the game
  attached to the camera asks for dice, then one throw of exactly those dice (the colours
  of the roll the game expects, the kept dice lying still), rendered on the fly. The
  server says what to throw through a `DemoDirector` (it knows the game; this module
  does not): so the demo never throws dice a game does not use, throws once per roll the
  game asks for (never while players still cross, never as Sixto's re-roll before the
  player chose), and says so when it has nothing to throw. Dice of a colour the renderer
  cannot draw: the demo has no clip for that game and says so.

- `render_throws(...)` draws the clip frame by frame with its ground truth: per throw the
  dice tumble in (moving, spinning, motion-blurred, a random face each frame), come to rest,
  lie still, then a hand comes over the table and picks them up, and the table is empty for
  a moment. scripts/make_demo_clip.py writes it to companion/live/data/demo_qwixx/ as JPEG
  frames (fixed seed; a folder of JPEGs is about four times smaller than OpenCV's own
  Motion-JPEG writer makes the same frames); tests use it directly.
- `open_demo_source()` opens the bundled Qwixx clip as a source that loops for ever (tests,
  benchmarks);
  `find_camera_or_demo(index)` tries the webcam briefly and falls back to the demo.

Each die is a sprite cut from a one-die scene of `render_scene` (the same seed rendered with
and without the die: the pixels that differ are the die), so the dice look exactly like the
renderer's dice; the frame is then composed, which lets a die move along a path the
renderer's random placement cannot follow."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.rules.base import describe_colours
from companion.rules.qwixx import DICE_COLOURS as QWIXX_DICE
from companion.synth import BODY_BGR, DieSpec, render_scene
from companion.vision.sources import CameraSource, FolderSource, FrameSource, VideoSource
from companion.vision.types import Frame

logger = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parent / "data"
DEMO_CLIP = DATA_DIR / "demo_qwixx"  # a folder of JPEG frames, frame_0000.jpg ...
DEMO_FPS = 10.0
DEMO_SEED = 2026

# Phase lengths of one throw, in frames at DEMO_FPS.
TUMBLE_FRAMES = 8
REST_FRAMES = 12
HAND_FRAMES = 8
EMPTY_FRAMES = 3

SKIN_BGR = (118, 150, 205)


@dataclass(frozen=True, slots=True)
class TruthDie:
    """A die as drawn: colour, value (None while it tumbles), centre, side and angle."""

    colour: str
    value: int | None
    cx: float
    cy: float
    side: float
    angle: float


@dataclass(frozen=True, slots=True)
class ClipFrame:
    """One frame of the clip and what it shows: `phase` is "tumble", "rest", "hand" or
    "empty"; `throw` counts throws from 0; `dice` are the dice visible (not under the
    hand)."""

    image: np.ndarray
    phase: str
    throw: int
    dice: tuple[TruthDie, ...]


@dataclass(frozen=True, slots=True)
class _Sprite:
    image: np.ndarray  # float32 BGR
    alpha: np.ndarray  # float32 0..1
    angle: float  # the die's own rotation in the sprite


class _SpriteBook:
    """Sprites of each (colour, value), rendered on first use."""

    def __init__(self, seed: int, side: float, surface: str) -> None:
        self.seed = seed
        self.side = side
        self.surface = surface
        self._cache: dict[tuple[str, int], _Sprite] = {}

    def get(self, colour: str, value: int) -> _Sprite:
        key = (colour, value)
        if key not in self._cache:
            self._cache[key] = self._render(colour, value)
        return self._cache[key]

    def _render(self, colour: str, value: int) -> _Sprite:
        extent = int(self.side * 3)
        pips = "black" if colour in ("white", "yellow") else "white"
        seed = self.seed * 1000 + hash_key(colour, value)
        options: dict[str, object] = {
            "size": self.side,
            "surface": self.surface,
            "light": "default",
            "clutter": 0.0,
            "camera_tilt": 0.0,
        }
        with_die, dice = render_scene(
            np.random.default_rng(seed),
            extent,
            extent,
            dice=[DieSpec(value, colour, pips)],
            **options,  # type: ignore[arg-type]
        )
        without, _ = render_scene(np.random.default_rng(seed), extent, extent, dice=[], **options)  # type: ignore[arg-type]
        diff = np.abs(with_die.astype(np.int16) - without.astype(np.int16)).max(axis=2)
        mask = (diff > 3).astype(np.uint8)
        # close the die's mask (a pip colour equal to the table would leave a hole)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        alpha = cv2.GaussianBlur(mask.astype(np.float32), (3, 3), 0.7)
        die = dice[0]
        # centre the die in the sprite so rotating the sprite turns the die about itself
        shift = np.array(
            [[1, 0, extent / 2 - die.cx], [0, 1, extent / 2 - die.cy]], dtype=np.float32
        )
        image = cv2.warpAffine(with_die.astype(np.float32), shift, (extent, extent))
        alpha = cv2.warpAffine(alpha, shift, (extent, extent))
        return _Sprite(image, alpha, die.angle)


def hash_key(colour: str, value: int) -> int:
    """A small stable number per (colour, value) (Python's hash() is salted per run)."""
    return sum(ord(c) * (k + 1) for k, c in enumerate(colour)) * 7 + value


def _paste(
    canvas: np.ndarray, sprite: _Sprite, cx: float, cy: float, turn: float, blur: np.ndarray | None
) -> None:
    """Blend `sprite` onto float `canvas` centred at (cx, cy), turned by `turn` degrees,
    smeared by the motion-blur kernel `blur` when given."""
    s = sprite.image.shape[0]
    h, w = canvas.shape[:2]
    matrix = cv2.getRotationMatrix2D((s / 2, s / 2), -turn, 1.0)
    matrix[0, 2] += cx - s / 2
    matrix[1, 2] += cy - s / 2
    # the die fills the middle of its sprite; the blur smears it by the kernel's length
    reach = int(s * 0.4) + (blur.shape[0] if blur is not None else 0)
    x0, y0 = max(int(cx - reach), 0), max(int(cy - reach), 0)
    x1, y1 = min(int(cx + reach), w), min(int(cy + reach), h)
    if x1 <= x0 or y1 <= y0:
        return
    matrix[0, 2] -= x0
    matrix[1, 2] -= y0
    size = (x1 - x0, y1 - y0)
    image = cv2.warpAffine(sprite.image, matrix, size, flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(sprite.alpha, matrix, size, flags=cv2.INTER_LINEAR)
    if blur is not None:
        image = cv2.filter2D(image * alpha[..., None], -1, blur)
        alpha = cv2.filter2D(alpha, -1, blur)
        image = image / np.maximum(alpha, 1e-3)[..., None]
    roi = canvas[y0:y1, x0:x1]
    a = np.clip(alpha, 0, 1)[..., None]
    roi[:] = roi * (1 - a) + image * a


def _motion_kernel(dx: float, dy: float) -> np.ndarray | None:
    """A line kernel along the motion (dx, dy) in pixels per frame; None when slow."""
    length = int(math.hypot(dx, dy) * 0.7)
    if length < 3:
        return None
    length |= 1
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    rot = cv2.getRotationMatrix2D(
        (length / 2 - 0.5, length / 2 - 0.5), math.degrees(math.atan2(dy, dx)), 1.0
    )
    turned = np.asarray(cv2.warpAffine(kernel, rot, (length, length)), dtype=np.float32)
    return turned / max(float(turned.sum()), 1e-6)


def _hand_mask(h: int, w: int, cx: float, cy: float, scale: float, tilt: float) -> np.ndarray:
    """A hand seen from above as a soft mask: a palm, four fingers and a thumb, pointing up
    (the arm comes in from the bottom edge)."""
    mask = np.zeros((h, w), np.float32)
    rot = math.radians(tilt)

    def at(dx: float, dy: float) -> tuple[int, int]:
        x = cx + (dx * math.cos(rot) - dy * math.sin(rot)) * scale
        y = cy + (dx * math.sin(rot) + dy * math.cos(rot)) * scale
        return int(x), int(y)

    cv2.ellipse(mask, at(0, 0), (int(0.55 * scale), int(0.65 * scale)), tilt, 0, 360, 1.0, -1)
    for k, (dx, length) in enumerate(((-0.42, 0.75), (-0.14, 0.9), (0.14, 0.85), (0.4, 0.65))):
        tip = at(dx * 1.1, -0.55 - length)
        cv2.line(mask, at(dx, -0.4), tip, 1.0, int(0.24 * scale) - k % 2)
    cv2.line(mask, at(0.45, 0.1), at(0.95, -0.45), 1.0, int(0.26 * scale))
    cv2.line(mask, at(0, 0.5), at(0.05, 4.0), 1.0, int(0.9 * scale))  # wrist and arm
    return cv2.GaussianBlur(mask, (0, 0), 2.0)


def _rest_layout(
    rng: np.random.Generator, colours: Sequence[str], w: int, h: int, side: float
) -> list[tuple[float, float, float]]:
    """Centres and angles of dice at rest in the middle of the table, not touching; more
    than six dice (Sixmix's twelve with two players) spread over most of the table, where
    they fit without touching."""
    x0, x1, y0, y1 = (0.22, 0.78, 0.22, 0.72) if len(colours) <= 6 else (0.1, 0.9, 0.12, 0.8)
    placed: list[tuple[float, float, float]] = []
    for _ in colours:
        for _attempt in range(200):
            cx = rng.uniform(x0 * w, x1 * w)
            cy = rng.uniform(y0 * h, y1 * h)
            if all(math.hypot(cx - x, cy - y) > side * 1.9 for x, y, _a in placed):
                break
        placed.append((cx, cy, rng.uniform(0, 90)))
    return placed


@dataclass(frozen=True, slots=True)
class _DemoTable:
    """The table a demo is thrown on: the background (soft, even light from one side so
    the table is not flat), the dice sprites and the sensor noise."""

    table: np.ndarray  # float32 BGR
    book: _SpriteBook
    noise: _Noise
    side: float


def _demo_table(
    rng: np.random.Generator,
    seed: int,
    width: int,
    height: int,
    side: float,
    surface: str,
    noise_sd: float,
) -> _DemoTable:
    book = _SpriteBook(seed, side, surface)
    table, _ = render_scene(
        np.random.default_rng(seed),
        width,
        height,
        dice=[],
        surface=surface,
        light="default",
        clutter=0.0,
        camera_tilt=0.0,
    )
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    gain = 1.04 - 0.12 * (xx / width) - 0.06 * (yy / height)
    table_f = table.astype(np.float32) * gain[..., None]
    return _DemoTable(table_f, book, _Noise(rng, table_f.shape, noise_sd), side)


def render_throws(
    seed: int = DEMO_SEED,
    throws: int = 3,
    width: int = 640,
    height: int = 480,
    side: float = 44.0,
    colours: Sequence[str] = QWIXX_DICE,
    surface: str = "cardboard",
    noise_sd: float = 1.5,
) -> Iterator[ClipFrame]:
    """The demo clip frame by frame (see the module docstring); the same seed gives the
    same frames."""
    rng = np.random.default_rng(seed)
    demo = _demo_table(rng, seed, width, height, side, surface, noise_sd)
    for throw in range(throws):
        yield from _one_throw(rng, demo, colours, throw)


def _one_throw(
    rng: np.random.Generator,
    demo: _DemoTable,
    colours: Sequence[str],
    throw: int,
    kept: Sequence[tuple[str, int]] = (),
) -> Iterator[ClipFrame]:
    """One throw of dice of `colours` (random values): they tumble in, rest, and a hand
    picks them up; `kept` dice (colour, value) lie still on the table from the start
    (Sixis' saved dice) and are picked up with the others."""
    height, width = demo.table.shape[:2]
    side, book, noise = demo.side, demo.book, demo.noise
    path = _throw_path(rng, colours, width, height, side)
    base, lying = _with_kept(demo, kept)
    yield from _tumble(rng, base, book, path, colours, throw, noise, lying)
    still = base.copy()
    dice = []
    for k, colour in enumerate(colours):
        cx, cy, angle = path.rest[k]
        sprite = book.get(colour, path.values[k])
        _paste(still, sprite, cx, cy, angle - sprite.angle, None)
        dice.append(TruthDie(colour, path.values[k], cx, cy, side, angle % 90))
    dice.extend(lying)
    for _ in range(REST_FRAMES):
        yield ClipFrame(noise.finish(rng, still), "rest", throw, tuple(dice))
    yield from _pick_up(rng, demo.table, book, dice, throw, noise, side)
    for _ in range(EMPTY_FRAMES):
        yield ClipFrame(noise.finish(rng, demo.table), "empty", throw, ())


def _with_kept(
    demo: _DemoTable, kept: Sequence[tuple[str, int]]
) -> tuple[np.ndarray, list[TruthDie]]:
    """The table with the kept dice lying in a line near the bottom edge, below where the
    thrown dice come to rest (`_rest_layout`), and those dice."""
    if not kept:
        return demo.table, []
    height, width = demo.table.shape[:2]
    base = demo.table.copy()
    lying = []
    for k, (colour, value) in enumerate(kept):
        cx, cy = width * (k + 1) / (len(kept) + 1), height * 0.87
        sprite = demo.book.get(colour, value)
        _paste(base, sprite, cx, cy, -sprite.angle, None)
        lying.append(TruthDie(colour, value, cx, cy, demo.side, 0.0))
    return base, lying


@dataclass(frozen=True, slots=True)
class _ThrowPath:
    """One throw drawn up front: the values that come to rest, where each die rests
    (cx, cy, angle), the frame it stops in, its spin, and where it enters."""

    values: list[int]
    rest: list[tuple[float, float, float]]
    stops: list[int]
    spins: list[float]
    starts: list[tuple[float, float]]
    width: int
    height: int
    side: float


def _throw_path(
    rng: np.random.Generator, colours: Sequence[str], width: int, height: int, side: float
) -> _ThrowPath:
    values = [int(v) for v in rng.integers(1, 7, len(colours))]
    rest = _rest_layout(rng, colours, width, height, side)
    # each die comes in from the same side, a little spread, and stops at its own time
    entry_angle = rng.uniform(0, 2 * math.pi)
    stops = [TUMBLE_FRAMES - int(rng.integers(0, 3)) for _ in colours]
    spins = [rng.uniform(25, 60) * rng.choice([-1, 1]) for _ in colours]
    starts = []
    for cx, cy, _a in rest:
        a = entry_angle + rng.normal(0, 0.25)
        reach = max(width, height) * rng.uniform(0.5, 0.7)
        starts.append((cx + math.cos(a) * reach, cy + math.sin(a) * reach))
    return _ThrowPath(values, rest, stops, spins, starts, width, height, side)


def _tumble(
    rng: np.random.Generator,
    table_f: np.ndarray,
    book: _SpriteBook,
    path: _ThrowPath,
    colours: Sequence[str],
    throw: int,
    noise: _Noise,
    lying: Sequence[TruthDie] = (),
) -> Iterator[ClipFrame]:
    """The frames in which the dice roll in along `path`, a random face each frame,
    motion-blurred, until each stops at its rest place and value (`lying`: dice already
    on the table, drawn into `table_f`)."""
    side = path.side
    for t in range(TUMBLE_FRAMES):
        canvas = table_f.copy()
        truth = list(lying)
        for k, colour in enumerate(colours):
            cx, cy, angle = path.rest[k]
            stop = path.stops[k]
            left = max(stop - t, 0) / stop  # 1 at the start, 0 at rest
            sx, sy = path.starts[k]
            px, py = cx + (sx - cx) * left**2, cy + (sy - cy) * left**2
            speed = 2 * left / stop
            moving = left > 0
            value = int(rng.integers(1, 7)) if moving else path.values[k]
            turn = angle + path.spins[k] * left * stop
            sprite = book.get(colour, value)
            blur = _motion_kernel((sx - cx) * speed, (sy - cy) * speed) if moving else None
            _paste(canvas, sprite, px, py, turn - sprite.angle, blur)
            if -side < px < path.width + side and -side < py < path.height + side:
                truth.append(TruthDie(colour, None if moving else value, px, py, side, turn % 90))
        yield ClipFrame(noise.finish(rng, canvas), "tumble", throw, tuple(truth))


def _pick_up(
    rng: np.random.Generator,
    table: np.ndarray,
    book: _SpriteBook,
    dice: list[TruthDie],
    throw: int,
    noise: _Noise,
    side: float,
) -> Iterator[ClipFrame]:
    """A hand comes up from the bottom edge over the dice, sweeps them up, and leaves."""
    height, width = table.shape[:2]
    target_x = float(np.mean([d.cx for d in dice]))
    target_y = float(np.mean([d.cy for d in dice]))
    scale = side * 2.6
    tilt = rng.uniform(-20, 20)
    half = HAND_FRAMES // 2
    remaining = list(dice)
    for t in range(HAND_FRAMES):
        # in for the first half, out for the second; lowest point over the dice
        reach = t / (half - 1) if t < half else (HAND_FRAMES - 1 - t) / (half - 1)
        cx = target_x + (1 - reach) * width * 0.1
        cy = height + scale * 1.2 - reach * (height + scale * 1.2 - target_y)
        mask = _hand_mask(height, width, cx, cy, scale, tilt)
        if t == half - 1:  # the hand closes over the dice: they are gone from now on
            remaining = [d for d in remaining if math.hypot(d.cx - cx, d.cy - cy) > scale * 3]
        canvas = table.copy()
        visible = []
        for d in remaining:
            sprite = book.get(d.colour, d.value or 1)
            _paste(canvas, sprite, d.cx, d.cy, d.angle - sprite.angle, None)
            if mask[int(d.cy), int(d.cx)] < 0.5:
                visible.append(d)
        shade = np.array(SKIN_BGR, dtype=np.float32) * (0.9 + 0.15 * (1 - mask[..., None]))
        canvas = canvas * (1 - mask[..., None]) + shade * mask[..., None]
        yield ClipFrame(noise.finish(rng, canvas), "hand", throw, tuple(visible))


class _Noise:
    """Sensor noise: a few fields drawn once, each frame one of them at a random offset
    (drawing a fresh 640x480x3 field per frame would take most of the clip's time)."""

    def __init__(self, rng: np.random.Generator, shape: tuple[int, ...], sd: float) -> None:
        self.fields = [rng.standard_normal(shape, dtype=np.float32) * sd for _ in range(3)]
        self.sd = sd

    def finish(self, rng: np.random.Generator, canvas: np.ndarray) -> np.ndarray:
        """A webcam's slight defocus and noise, clipped to 8-bit pixels (JPEG compression
        comes on writing)."""
        canvas = cv2.GaussianBlur(canvas, (0, 0), 0.8)
        if self.sd <= 0:
            return np.clip(canvas, 0, 255).astype(np.uint8)
        field = self.fields[int(rng.integers(0, len(self.fields)))]
        shift = (int(rng.integers(0, field.shape[0])), int(rng.integers(0, field.shape[1])))
        return np.clip(canvas + np.roll(field, shift, axis=(0, 1)), 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------------------
# The demo camera


@dataclass(frozen=True, slots=True)
class DemoThrow:
    """A throw the game expects: the dice of the roll (`colours`), the `kept` dice lying on
    the table with their values, and `key`, what it answers (the table and its state), so
    each is thrown once."""

    key: str
    colours: tuple[str, ...]
    kept: tuple[tuple[str, int], ...] = ()
    wait_s: float = 0.0  # thrown this long after it is first asked for (a race's time)
    wait_why: str = ""  # what the players do meanwhile (the status line)


def can_draw(colours: Sequence[str]) -> bool:
    """Whether the renderer draws dice of every one of these colours."""
    return all(colour in BODY_BGR for colour in colours)


@dataclass
class DemoDirector:
    """Between the server (which knows the game) and the demo camera (which draws): the
    server says which throw the game expects now, or none and why (`expect`); the camera
    takes each throw once (`take`) and says what it does (`line`). The same key is thrown
    again after `again_s` seconds without a change (the roll was refused or held: throw
    again, as a player would). One lock; any thread."""

    again_s: float = 12.0
    _wanted: DemoThrow | None = None
    _wanted_since: float = 0.0
    _why: str = "the demo camera waits for a game"
    _thrown: str | None = None
    _thrown_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def expect(self, throw: DemoThrow | None, why: str = "", now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            if throw is not None and (self._wanted is None or self._wanted.key != throw.key):
                self._wanted_since = now  # a throw's `wait_s` counts from here
            self._wanted, self._why = throw, why

    def take(self, now: float | None = None) -> DemoThrow | None:
        """The throw to show now, once per key (again after `again_s`) and not before its
        `wait_s` has passed, or None."""
        now = time.monotonic() if now is None else now
        with self._lock:
            wanted = self._wanted
            if wanted is None or (wanted.wait_s and now - self._wanted_since < wanted.wait_s):
                return None
            if wanted.key == self._thrown and now - self._thrown_at < self.again_s:
                return None
            self._thrown, self._thrown_at = wanted.key, now
            return wanted

    def line(self, now: float | None = None) -> str:
        """What the demo camera does now, for the status line."""
        now = time.monotonic() if now is None else now
        with self._lock:
            wanted = self._wanted
            if wanted is None:
                return f"demo camera: {self._why}" if self._why else "demo camera: waiting"
            line = f"demo camera: throwing {describe_colours(wanted.colours)}"
            left = wanted.wait_s - (now - self._wanted_since)
            if left > 0 and wanted.key != self._thrown:
                line += f" in {left:.0f} s: {wanted.wait_why or 'waiting for the players'}"
            return line


class DemoThrows(FrameSource):
    """The demo camera (module docstring): frames of an empty table, and of each throw the
    director asks for, rendered on the fly; never ends. Paced by the worker (DEMO_FPS)."""

    def __init__(
        self,
        director: DemoDirector,
        seed: int = DEMO_SEED,
        width: int = 640,
        height: int = 480,
        side: float = 44.0,
        surface: str = "cardboard",
    ) -> None:
        super().__init__()
        self.director = director
        self.seed = seed
        self.size = (width, height)
        self.side = side
        self.surface = surface

    def describe(self) -> str:
        return "demo camera (dice rendered for the attached game)"

    def __iter__(self) -> Iterator[Frame]:
        rng = np.random.default_rng(self.seed)
        width, height = self.size
        demo = _demo_table(rng, self.seed, width, height, self.side, self.surface, 1.5)
        index, throws = 0, 0
        while True:
            wanted = self.director.take()
            if wanted is None:
                frames: Iterator[ClipFrame] = iter(
                    [ClipFrame(demo.noise.finish(rng, demo.table), "empty", throws, ())]
                )
            else:
                frames = _one_throw(rng, demo, wanted.colours, throws, wanted.kept)
                throws += 1
            for clip_frame in frames:
                self.status.frames += 1
                yield Frame(clip_frame.image, index, index / DEMO_FPS, "demo")
                index += 1


# ----------------------------------------------------------------------------------------
# Sources


class LoopingSource(FrameSource):
    """Another source played again and again (the demo clip), frames numbered on across
    loops. Ends only when the inner source yields no frame at all in a pass (a missing or
    broken file), with the inner source's problem."""

    def __init__(self, inner: FrameSource) -> None:
        super().__init__()
        self.inner = inner

    def describe(self) -> str:
        return f"{self.inner.describe()} (looping)"

    def __iter__(self) -> Iterator[Frame]:
        index = 0
        while True:
            delivered = 0
            for frame in self.inner:
                delivered += 1
                self.status.frames += 1
                self.status.skipped = self.inner.status.skipped
                yield Frame(frame.image, index, frame.timestamp, frame.source)
                index += 1
            self.status.skipped = self.inner.status.skipped
            if delivered == 0:
                self.status.fail(self.inner.status.problem or f"{self.inner.describe()}: empty")
                return


def open_demo_source(folder: Path = DEMO_CLIP) -> LoopingSource:
    """The bundled demo clip as a source that loops for ever (play it at DEMO_FPS).
    Raises FileNotFoundError naming the folder when it holds no frames (a broken
    install)."""
    if not folder.is_dir() or not any(folder.glob("*.jpg")):
        raise FileNotFoundError(
            f"{folder}: the demo clip is missing; run scripts/make_demo_clip.py to create it"
        )
    return LoopingSource(FolderSource(folder))


def video_fps(path: Path, default: float = DEMO_FPS) -> float:
    """The frame rate a video file declares, or `default` when it declares none."""
    capture = cv2.VideoCapture(str(path))
    try:
        fps = float(capture.get(cv2.CAP_PROP_FPS)) if capture.isOpened() else 0.0
    finally:
        capture.release()
    return fps if 0 < fps < 1000 else default


@dataclass(frozen=True, slots=True)
class SourcePlan:
    """How the camera worker gets its frames: `open` makes a fresh source (called again on
    every reopening), `pace_fps` replays a file at its rate (None: a live camera paces
    itself), `reopen_at_end` plays it again when it ends, `live` says the frames come from
    a camera looking at real dice now (not a replay)."""

    name: str
    open: Callable[[], FrameSource]
    pace_fps: float | None
    reopen_at_end: bool
    live: bool = False


def plan_source(
    camera: int | None = None,
    video: str | Path | None = None,
    images: str | Path | None = None,
    images_fps: float = DEMO_FPS,
    director: DemoDirector | None = None,
    images_hold_s: float | None = None,
) -> SourcePlan:
    """The plan for `companion serve`'s source options: a webcam by index, a video file
    (at its own frame rate, once), a folder of images (at `images_fps`, once; with
    `images_hold_s` each image is shown that long, a still photo of one throw at rest), or
    with none given the webcam 0 when one answers, else the demo: the demo camera throwing
    what `director` says (the server's), or without one the bundled clip in a loop."""
    if camera is not None:
        index = camera
        return SourcePlan(f"camera {index}", lambda: CameraSource(index), None, True, live=True)
    if video is not None:
        path = Path(video)
        return SourcePlan(f"video {path}", lambda: VideoSource(path), video_fps(path), False)
    if images is not None:
        folder = Path(images)
        hold = max(1, round((images_hold_s or 0.0) * images_fps))
        return SourcePlan(f"folder {folder}", lambda: FolderSource(folder, hold), images_fps, False)
    if camera_is_available(0):
        return SourcePlan("camera 0", lambda: CameraSource(0), None, True, live=True)
    if director is not None:
        demo = director
        return SourcePlan("demo camera", lambda: DemoThrows(demo), DEMO_FPS, True)
    return SourcePlan("demo clip", open_demo_source, DEMO_FPS, False)


def camera_is_available(index: int = 0) -> bool:
    """Whether webcam `index` opens and delivers one frame (takes up to a second or two
    when there is none). OpenCV's own warnings about a missing device are kept quiet
    during the look: no camera is an answer here, and the caller says what it chose."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    try:
        capture = cv2.VideoCapture(index)
        try:
            if not capture.isOpened():
                return False
            ok, image = capture.read()
            return bool(ok) and image is not None
        finally:
            capture.release()
    finally:
        cv2.utils.logging.setLogLevel(level)


def find_camera_or_demo(index: int = 0) -> FrameSource:
    """Webcam `index` when one answers, else the looping demo clip."""
    if camera_is_available(index):
        logger.info("camera %s found", index)
        return CameraSource(index)
    logger.info("no camera at index %s: showing the demo clip", index)
    return open_demo_source()
