"""What a caller may ask of a scene: `SceneOptions`, checked when it is made.

`render_scene(seed, width, height, **options)` and `sample_scene(...)` take these as
keyword options (`SceneKeywords` is the same list for the type checker). Chances are
0-1 per scene (or per die, where the option says so); a chance of 0 never draws."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from companion.vision.colour import DiceSet, builtin_dice_set, builtin_dice_set_names

from .container import CONTAINERS
from .palette import BODY_BGR, PIP_BGR
from .surfaces import registered

DIE_STATES = ("", "cocked", "hidden")
CHANCES = (
    "touching",
    "unreadable",
    "clutter",
    "glare",
    "translucent",
    "greyscale",
    "infrared",
    "fisheye",
    "vignetting",
    "container",
    "strong_glare",
    "pile",
    "fancy",
)
LIGHTS = ("random", "default")
# the default range of the mean top-face side, pixels (log-uniform)
DEFAULT_SIZES = (22.0, 130.0)


@dataclass(frozen=True)
class DieSpec:
    """A die to place in a scene: value, body and pip colours (None = leave to chance),
    `state`: "" for a die lying flat, "cocked" or "hidden" to force an unreadable one,
    and `clear`: how see-through its plastic is (0 opaque, up to 1; 0 leaves it to the
    scene's `translucent` chance)."""

    value: int | None = None
    body: str | None = None
    pips: str | None = None
    state: str = ""
    clear: float = 0.0

    def __post_init__(self) -> None:
        if self.value is not None and not 1 <= self.value <= 6:
            raise ValueError(f"die value {self.value} is not 1-6")
        if self.body is not None and self.body not in BODY_BGR:
            raise ValueError(f"unknown body colour {self.body!r}")
        if self.pips is not None and self.pips not in PIP_BGR:
            raise ValueError(f"unknown pip colour {self.pips!r}")
        if self.state not in DIE_STATES:
            raise ValueError(f"unknown die state {self.state!r}")
        if not 0.0 <= self.clear <= 1.0:
            raise ValueError(f"die clearness {self.clear} is not 0-1")


DieLike = DieSpec | tuple[int | None, str | None, str | None]


class SceneKeywords(TypedDict, total=False):
    """The keyword options of `render_scene` and `sample_scene` (see `SceneOptions`)."""

    dice: Sequence[DieLike] | None
    dice_set: str | Sequence[str] | DiceSet | None
    values: Sequence[int] | None
    n_dice: int | None
    size: float | None
    sizes: tuple[float, float]
    surface: str | None
    light: str
    camera_tilt: float | None
    touching: float
    unreadable: float
    clutter: float
    tumbling: float
    tumble_seed: int
    motion_blur: float | None
    blur: float | None
    noise: float | None
    jpeg_quality: int | None
    glare: float
    translucent: float
    greyscale: float
    infrared: float
    fisheye: float
    vignetting: float
    container: float
    containers: Sequence[str]
    strong_glare: float
    pile: float
    fancy: float


@dataclass(frozen=True)
class SceneOptions:
    """Which dice: `dice` (explicit DieSpec or (value, body, pips) tuples), or `dice_set`
    (a shipped set's name, "qwixx" or "sixto"; a DiceSet, e.g. a registered game's as
    cli.game_dice_set gives it; or a list of body colours) with optional `values`, or `n_dice`
    random dice (default 1-12). `size` is the mean top-face side in pixels (default
    log-uniform in `sizes`). `light="default"` gives the neutral, even light the default
    calibration files were measured under (no cast, no gradient, no glare, no noise, a
    camera straight down unless `camera_tilt` says otherwise); "random" varies
    everything. `touching` is the chance a die is placed against the previous one,
    `unreadable` the chance a random die is cocked or half hidden (never applied to
    explicitly given dice), `clutter` the chance of clutter, `glare` the chance of a
    glare spot on a die's top face. `tumbling` (> 0) renders every die smeared by its own
    motion, about `tumbling` x its side long (value None), drawn from `tumble_seed`, so one
    seed gives the same scene still or tumbling (see `render_roll_clip`). `translucent` is
    the chance a die is of see-through plastic (random light only). `motion_blur`, `blur`,
    `noise` and `jpeg_quality` fix the camera's blur length, blur sigma, noise sd and JPEG
    quality (None: random; nothing under the default light).

    The conditions of webcams over other tables (chances per scene, 0 by default; a
    chance of 0 draws nothing, so scenes without the condition stay as they are):
    `greyscale` a greyscale webcam; `infrared` a near-infrared one (night mode, IR LEDs:
    coloured plastic, cloth and skin look light grey, carbon black stays dark, pips keep
    their contrast); `fisheye` a wide-angle lens (barrel distortion and vignetting);
    `vignetting` strong vignetting alone; `container` the dice in a dish, tray or cup (one
    of `containers`), with a rim, a curved inner wall and its shadow; `strong_glare` a
    strong lamp: hard specular spots on the dice's tops, blown out near its reflection
    (a die whose pip the glare wipes out is labelled unreadable, reason "glare");
    `pile` the dice heaped in a touching, overlapping pile (some lying on others; a die
    with less than 0.8 of its top face visible is "hidden"). Dice from 15 to 250 px:
    `sizes=(15, 250)` (a die that cannot fit the picture comes out smaller).

    `fancy` is the chance a scene is in the fancy style (fancy.py: 20-60 marbled,
    speckled, glitter, two-tone, metallic dice with gold, silver, coloured or engraved
    pips and symbols, in trays and bowls of strong colours or on patterned cloths, with
    polyhedral dice, tokens and coins that are not d6 dice); 0 by default, and then the
    scene is the default style's, byte for byte."""

    dice: Sequence[DieLike] | None = None
    dice_set: str | Sequence[str] | DiceSet | None = None
    values: Sequence[int] | None = None
    n_dice: int | None = None
    size: float | None = None
    sizes: tuple[float, float] = DEFAULT_SIZES
    surface: str | None = None
    light: str = "random"
    camera_tilt: float | None = None
    touching: float = 0.3
    unreadable: float = 0.08
    clutter: float = 0.5
    tumbling: float = 0.0
    tumble_seed: int = 0
    motion_blur: float | None = None
    blur: float | None = None
    noise: float | None = None
    jpeg_quality: int | None = None
    glare: float = 0.25
    translucent: float = 0.0
    greyscale: float = 0.0
    infrared: float = 0.0
    fisheye: float = 0.0
    vignetting: float = 0.0
    container: float = 0.0
    containers: Sequence[str] = CONTAINERS
    strong_glare: float = 0.0
    pile: float = 0.0
    fancy: float = 0.0

    def __post_init__(self) -> None:
        if self.dice is not None:
            given = tuple(d if isinstance(d, DieSpec) else DieSpec(*d) for d in self.dice)
            object.__setattr__(self, "dice", given)
        if isinstance(self.dice_set, DiceSet):  # its colours: the renderer knows no games
            object.__setattr__(self, "dice_set", self.dice_set.colours)
        elif self.dice_set is not None and not isinstance(self.dice_set, str):
            object.__setattr__(self, "dice_set", tuple(self.dice_set))
        if self.values is not None:
            object.__setattr__(self, "values", tuple(int(v) for v in self.values))
        object.__setattr__(self, "sizes", tuple(float(s) for s in self.sizes))
        object.__setattr__(self, "containers", tuple(self.containers))
        self._check()

    def _check(self) -> None:
        for name in CHANCES:
            _check_chance(name, getattr(self, name))
        if self.greyscale + self.infrared > 1.0:
            raise ValueError(f"greyscale {self.greyscale} + infrared {self.infrared} is over 1")
        unknown = [k for k in self.containers if k not in CONTAINERS]
        if unknown or not self.containers:
            raise ValueError(f"containers {self.containers}: choose from {', '.join(CONTAINERS)}")
        if self.light not in LIGHTS:
            raise ValueError(f"unknown light {self.light!r}; known: {', '.join(LIGHTS)}")
        if self.surface is not None and self.surface not in registered():
            known = ", ".join(registered())
            raise ValueError(f"unknown surface {self.surface!r}; known: {known}")
        low, high = self.sizes
        if not 4.0 <= low <= high:
            raise ValueError(f"die sizes {self.sizes} are not a range of 4 px or more")
        if self.size is not None and not self.size > 0:
            raise ValueError(f"die size {self.size} is not positive")
        if self.n_dice is not None and self.n_dice < 0:
            raise ValueError(f"n_dice {self.n_dice} is negative")
        if not self.tumbling >= 0:
            raise ValueError(f"tumbling {self.tumbling} is negative")
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError(f"JPEG quality {self.jpeg_quality} is not 1-100")
        self._check_set()

    def _check_set(self) -> None:
        # a named set is one of the shipped standard sets (calibration/<name>-default.json)
        if isinstance(self.dice_set, str) and self.dice_set not in builtin_dice_set_names():
            known = ", ".join(builtin_dice_set_names())
            raise ValueError(f"unknown dice set {self.dice_set!r}; known: {known}")
        bodies = self.set_bodies()
        if bodies is not None:
            for body in bodies:
                if body not in BODY_BGR:
                    raise ValueError(f"unknown body colour {body!r}")
            if self.values is not None and len(self.values) != len(bodies):
                raise ValueError(f"{len(self.values)} values for a set of {len(bodies)} dice")
        for value in self.values or ():
            if not 1 <= value <= 6:
                raise ValueError(f"die value {value} is not 1-6")

    def set_bodies(self) -> tuple[str, ...] | None:
        """The body colours of `dice_set`, in order (None when no set was asked for)."""
        if self.dice_set is None:
            return None
        if isinstance(self.dice_set, str):
            return builtin_dice_set(self.dice_set).colours
        if isinstance(self.dice_set, DiceSet):
            return self.dice_set.colours
        return tuple(self.dice_set)

    def given_dice(self) -> tuple[DieSpec, ...] | None:
        """The explicitly given dice as DieSpecs (None when none were given)."""
        if self.dice is None:
            return None
        return tuple(d if isinstance(d, DieSpec) else DieSpec(*d) for d in self.dice)

    @property
    def default_light(self) -> bool:
        return self.light == "default"

    @property
    def explicit(self) -> bool:
        """Dice given one by one or as a set: never made unreadable by chance."""
        return self.dice is not None or self.dice_set is not None

    def replace(self, **changes: object) -> SceneOptions:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def _check_chance(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and 0.0 <= value <= 1.0) or math.isnan(value):
        raise ValueError(f"{name} chance {value} is not 0-1")
