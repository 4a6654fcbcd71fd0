"""The fancy style (issue 22 item 3): what real tables show and the default style lacks.

A fancy scene is a tray or bowl (felt, leather or wood in strong colours, with a visible
wall and rim) or a patterned cloth, leather, carpet, wood or stone table, holding 20-60
dice from a few sets: marbled, speckled, glitter, two-tone, metallic (and translucent)
plastic, with gold, silver, coloured or engraved pips and sometimes a symbol in place of
the one or the six; touching, heaped (some lying on others) and leaning against the
tray's wall (cocked: unreadable); seen from straight above to oblique (up to 55 deg).
Among them lie things that are not d6 dice (other polyhedral dice of the same sets,
chips, number tokens, hex tokens, coins), labelled apart from the dice
(distractors.py): the finder must learn to leave them alone.

`sample_scene(seed, ..., fancy=SHARE)` makes a scene fancy with chance SHARE (its own
child seed "fancy.style"); with `fancy=0` (the default) nothing here draws, so the
default style's scenes are byte for byte what they were (tests/synth/
test_default_renders.py). A fancy scene is a default-style description from its own
root seed under changed options (count, size, camera, container, layout), then given
its sets' looks, its leaning dice and its distractors."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Unpack

import numpy as np

from companion.vision.types import BASIC_COLOURS

from .container import floor_contains
from .description import BGR, Container, Die, Distractor, Look, SceneDescription, Table
from .distractors import KINDS, POLYHEDRA, distractor_colours
from .fancy_dice import FINISHES, SYMBOLS
from .fancy_surfaces import FANCY_FLOORS, FANCY_TABLES, strong_colour
from .options import SceneKeywords, SceneOptions
from .palette import BODY_BGR, PIP_BGR, jitter_colour
from .sample import describe
from .seeds import SeedLike, part_rng, part_seed, root_seed

FINISH_WEIGHTS = (0.26, 0.16, 0.16, 0.16, 0.12, 0.14)  # in FINISHES' order
# metal dice: (name in the picture's words, BGR, the body colour name a person would use)
METALS = (
    ("silver", (200, 200, 205), "grey"),
    ("gold", (55, 165, 210), "yellow"),
    ("copper", (70, 115, 190), "orange"),
    ("gunmetal", (85, 85, 88), "black"),
    ("rose", (150, 150, 205), "pink"),
)
SILVER: BGR = (205.0, 205.0, 210.0)
PAINTS = ("white", "black", "gold", "silver", "red", "yellow", "blue", "green", "pink", "orange")


def sample_scene(
    seed: SeedLike, width: int = 640, height: int = 480, **options: Unpack[SceneKeywords]
) -> SceneDescription:
    """Every random choice of one scene (see `SceneOptions` for the options): in the
    default style, or with chance `fancy` in the fancy style."""
    root = root_seed(seed)
    chosen = SceneOptions(**options)
    if chosen.fancy > 0 and part_rng(root, "fancy.style").random() < chosen.fancy:
        return describe_fancy(root, width, height, chosen)
    return describe(root, width, height, chosen)


@dataclass(frozen=True)
class DiceSet:
    """The dice of one set look alike: material, colours, pips, symbol."""

    body: str
    body_bgr: BGR
    pips: str
    pip_bgr: BGR
    look: Look
    clear: float


def describe_fancy(root: int, width: int, height: int, options: SceneOptions) -> SceneDescription:
    """The fancy scene of root seed `root` under `options`."""
    rng = part_rng(root, "fancy")
    count = options.n_dice if options.n_dice is not None else int(rng.integers(20, 61))
    others = int(rng.integers(1, 8)) if rng.random() < 0.75 else 0
    if options.explicit:  # the asked-for dice are all dice: no spot of theirs is taken
        others = 0
    chosen = _layout_options(rng, width, height, count, others, options)
    base = describe(part_seed(root, "fancy.scene"), width, height, chosen)
    sets = [_sample_set(part_rng(root, "fancy.set", k), part_seed(root, "fancy.set", k))
            for k in range(int(rng.integers(1, 6)))]  # fmt: skip
    container = base.container
    if container is not None:
        container = _fancy_container(part_rng(root, "fancy.container"), root, container)
    dressing = part_rng(root, "fancy.dice")
    dice = [_dressed(dressing, d, sets, options.explicit) for d in base.dice]
    if container is not None and not options.explicit:
        dice = [_leaning(dressing, d, container) for d in dice]
    dice, distractors = _distractors(part_rng(root, "fancy.others"), root, dice, sets, others)
    if not options.explicit:  # spots no distractor could take stay dice, up to the count
        dice = dice[:count]
    return dataclasses.replace(
        base, dice=tuple(dice), container=container, distractors=tuple(distractors)
    )


def _layout_options(
    rng: np.random.Generator,
    width: int,
    height: int,
    count: int,
    others: int,
    options: SceneOptions,
) -> SceneOptions:
    """The default sampler's options for a fancy scene's layout: how many, how big (to
    fill the tray), the camera, the container, touching and heaped dice."""
    in_container = rng.random() < 0.75
    kind = "tray" if rng.random() < 0.6 else "dish"
    share = (0.42 if kind == "tray" else 0.3) if in_container else 0.75
    fill = float(rng.uniform(0.25, 0.5))
    side = math.sqrt(fill * share * width * height / max(count + others, 1))
    side = float(np.clip(side, 12.0, 0.2 * min(width, height)))
    tilt = options.camera_tilt
    if tilt is None and not options.default_light:
        tilt = float(rng.uniform(0, 8) if rng.random() < 0.4 else rng.uniform(8, 55))
    return options.replace(
        fancy=0.0,
        n_dice=count + others,
        size=None,
        sizes=(side * 0.92, side * 1.08),
        camera_tilt=tilt,
        touching=0.75,
        container=1.0 if in_container else 0.0,
        containers=(kind,),
        pile=options.pile if options.explicit else max(options.pile, 0.2),
        surface=options.surface or FANCY_TABLES[int(rng.integers(0, len(FANCY_TABLES)))],
        clutter=0.0,
        unreadable=min(options.unreadable, 0.03),
        translucent=max(options.translucent, 0.1),
    )


# ----------------------------------------------------------------------------------------
# Sets of dice


def _sample_set(rng: np.random.Generator, seed: int) -> DiceSet:
    finish = str(rng.choice(FINISHES, p=np.array(FINISH_WEIGHTS) / sum(FINISH_WEIGHTS)))
    if finish == "metallic":
        _, metal, body = METALS[int(rng.integers(0, len(METALS)))]
        body_bgr = jitter_colour(rng, metal, 0.5)
        style = str(rng.choice(["engraved", "paint", "metal"], p=[0.4, 0.4, 0.2]))
    else:
        body = BASIC_COLOURS[int(rng.integers(0, len(BASIC_COLOURS)))]
        body_bgr = jitter_colour(rng, BODY_BGR[body], 1.3)
        style = str(rng.choice(["paint", "metal", "engraved"], p=[0.55, 0.33, 0.12]))
    pips, pip_bgr = _pip_colour(rng, style, body, body_bgr)
    second = _second_colour(rng, finish, body)
    symbol, face = "", 0
    if rng.random() < 0.25:
        symbol, face = SYMBOLS[int(rng.integers(0, len(SYMBOLS)))], int(rng.choice([1, 6]))
    clear = 0.0
    if finish == "glitter" and rng.random() < 0.5:
        clear = float(rng.uniform(0.2, 0.5))
    look = Look(finish, second, style, symbol, face, seed)
    return DiceSet(body, body_bgr, pips, pip_bgr, look, clear)


def _pip_colour(rng: np.random.Generator, style: str, body: str, body_bgr: BGR) -> tuple[str, BGR]:
    """The pips' name and colour: gold or silver paint, any ink that stands out from the
    body, or none (engraved: the pits show the body's own colour in shade)."""
    if style == "engraved":
        return "engraved", body_bgr
    if style == "metal":
        name = "gold" if rng.random() < 0.6 else "silver"
    else:
        light = float(np.mean(body_bgr)) > 140
        choices = [p for p in PAINTS if p != body and (p in ("black", "blue", "red") or not light)]
        name = choices[int(rng.integers(0, len(choices)))]
    colour = SILVER if name == "silver" else _floats(PIP_BGR[name])
    return name, jitter_colour(rng, _ints(colour), 0.4)


def _second_colour(rng: np.random.Generator, finish: str, body: str) -> BGR:
    """Marbling, specks, glitter or the other tone."""
    if finish == "glitter":
        picks = [SILVER, _floats(PIP_BGR["gold"]), _floats(BODY_BGR[body])]
        return picks[int(rng.integers(0, 3))]
    if finish in ("marbled", "speckled") and rng.random() < 0.5:
        return (235.0, 235.0, 235.0) if rng.random() < 0.6 else (25.0, 25.0, 28.0)
    other = [c for c in BASIC_COLOURS if c != body]
    return jitter_colour(rng, BODY_BGR[other[int(rng.integers(0, len(other)))]], 1.0)


def _dressed(rng: np.random.Generator, die: Die, sets: list[DiceSet], explicit: bool) -> Die:
    """A default-style die given one set's look (explicitly given dice keep their
    colours and take the look's material only)."""
    kit = sets[int(rng.integers(0, len(sets)))]
    clear = die.clear or kit.clear
    if explicit:
        return dataclasses.replace(die, look=kit.look, marble=None, clear=clear)
    return dataclasses.replace(
        die,
        body=kit.body,
        pips=kit.pips,
        body_bgr=jitter_colour(rng, _ints(kit.body_bgr), 0.25),
        pip_bgr=kit.pip_bgr,
        look=kit.look,
        marble=None,
        clear=0.0 if kit.look.finish == "metallic" else clear,
    )


def _leaning(rng: np.random.Generator, die: Die, c: Container) -> Die:
    """A die by the tray's wall sometimes leans against it (cocked towards the wall:
    unreadable)."""
    if die.state or die.level or floor_contains(c, die.cx, die.cy, 1.3 * die.side):
        return die
    if rng.random() >= 0.3:
        return die
    fx, fy = c.cx + c.floor_shift[0], c.cy + c.floor_shift[1]
    outward = math.atan2(die.cy - fy, die.cx - fx)
    return dataclasses.replace(
        die,
        state="cocked",
        tip_direction=float(outward + rng.normal(0, 0.25)),
        tip_lean=float(rng.uniform(0.45, 0.75)),
    )


def _fancy_container(rng: np.random.Generator, root: int, c: Container) -> Container:
    """A dice tray or bowl: a felt, leather or wood floor; walls and rim of wood, leather
    or the floor's colour."""
    floor = Table(
        FANCY_FLOORS[int(rng.integers(0, len(FANCY_FLOORS)))], part_seed(root, "fancy.floor")
    )
    woods = [[60, 100, 150], [40, 70, 110], [90, 140, 190], [30, 45, 70]]
    pick = rng.random()
    if pick < 0.45:
        wall = np.array(woods[int(rng.integers(0, len(woods)))], np.float32) * rng.uniform(
            0.85, 1.1
        )
    elif pick < 0.75:
        wall = strong_colour(rng) * 0.8
    else:
        wall = rng.uniform(20, 60, 3)
    rim = np.clip(wall * rng.uniform(1.0, 1.3), 0, 255)
    return dataclasses.replace(c, floor=floor, wall_colour=_floats(wall), rim_colour=_floats(rim))


# ----------------------------------------------------------------------------------------
# Things that are not d6 dice


def _distractors(
    rng: np.random.Generator, root: int, dice: list[Die], sets: list[DiceSet], count: int
) -> tuple[list[Die], list[Distractor]]:
    """`count` flat-lying dice of the layout become things that are not d6 dice (in the
    same spots: they touch the dice as the dice touch each other)."""
    free = [k for k, d in enumerate(dice) if not d.state and not d.level]
    picked = (
        set(rng.choice(free, size=min(count, len(free)), replace=False).tolist()) if free else set()
    )
    kept, others = [], []
    for k, die in enumerate(dice):
        if k not in picked:
            kept.append(die)
            continue
        kind = KINDS[int(rng.integers(0, len(KINDS)))]
        size = die.side * float(
            rng.uniform(1.0, 1.25) if kind in POLYHEDRA else rng.uniform(0.9, 1.4)
        )
        look, (body, ink) = None, distractor_colours(rng, kind)
        if kind in POLYHEDRA:
            kit = sets[int(rng.integers(0, len(sets)))]
            look, body = kit.look, kit.body_bgr
            ink = kit.pip_bgr if kit.pips != "engraved" else _floats(np.array(kit.body_bgr) * 0.45)
        number = int(rng.integers(1, 21)) if kind in POLYHEDRA else int(rng.integers(2, 13))
        seed = part_seed(root, "fancy.other", k)
        others.append(
            Distractor(kind, die.cx, die.cy, size, die.angle, body, ink, number, seed, look)
        )
    return kept, others


def _ints(colour: BGR | tuple[int, int, int]) -> tuple[int, int, int]:
    b, g, r = (int(round(float(c))) for c in colour)
    return b, g, r


def _floats(colour: np.ndarray | tuple[int, ...] | tuple[float, ...]) -> BGR:
    b, g, r = (float(c) for c in np.clip(np.asarray(colour, np.float64), 0, 255))
    return b, g, r
