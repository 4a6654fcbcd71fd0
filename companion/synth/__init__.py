"""Synthetic dice scenes for training and testing the vision stages (a training and
benchmark tool: nothing in companion.vision imports it).

Everything is drawn with numpy and OpenCV. A scene is first sampled into a frozen
`SceneDescription` (sample.py: every random choice, each part of the scene from its own
named child seed) and then drawn from it with no random choice left (draw.py), so a seed
reproduces a scene exactly and a new kind of draw in one part never changes the others.
A scene is a table surface (white sheet, grey cardboard, wood grain, felt, dark cloth, a
dice tray with a rim, a printed board, speckled stone; surfaces.py is their registry),
some clutter (pencils, paper with a printed score grid, coins, dots), and dice: rounded
cubes seen from a camera that may look straight down or obliquely, so the side faces
facing the camera show (with their own pips). Dice may touch, be cocked (resting tilted
against something), be half hidden (those two are labelled with value None) or be of
see-through plastic. Lighting gradients, colour casts, cast shadows, glare, blur, motion
blur, sensor noise and JPEG artefacts make the pictures look like phone and webcam photos
(compare shared/data). Options ask for what webcams over other tables show (off by
default; options.py): greyscale and near-infrared sensors (sensor.py), fisheye lenses and
vignetting (lens.py), dice in a dish, tray or cup (container.py), a strong lamp's glare,
piles of dice lying on dice (layout.py), dice of 15-250 px. The fancy style (fancy.py,
option `fancy`: a share of scenes, 0 by default) renders what fancy trays and phone photos
show: 20-60 marbled, speckled, glitter, two-tone and metallic dice with gold, silver,
coloured or engraved pips and symbols (fancy_dice.py), trays and bowls in strong colours
and patterned cloths (fancy_surfaces.py), and things that are not d6 dice
(distractors.py: other polyhedral dice, tokens, coins), labelled apart from the dice.

Entry points:
- `render_scene(seed, width, height, **options)` -> (BGR image, [RenderedDie]);
  `sample_scene(...)` -> SceneDescription and `draw_scene(description)` are its halves;
  `render_scene_and_others(...)` adds the [RenderedOther] things that are not d6 dice.
- `render_die_crop(rng, value, body, pips, size, **options)` -> BGR crop of one die,
  framed the way the pipeline crops a found die for the pip classifier.
- `render_roll_clip(rng, width, height, **options)` -> frames of a roll, tumbling then
  still.
"""

from .description import SceneDescription
from .distractors import RenderedOther
from .draw import draw_scene
from .fancy import sample_scene
from .labels import RenderedDie
from .options import DieSpec, SceneKeywords, SceneOptions
from .palette import BODY_BGR, PIP_BGR, PIP_COLOURS, pip_layout
from .scenes import render_die_crop, render_roll_clip, render_scene, render_scene_and_others
from .surfaces import SURFACES, surface

__all__ = [
    "BODY_BGR",
    "PIP_BGR",
    "PIP_COLOURS",
    "SURFACES",
    "DieSpec",
    "RenderedDie",
    "RenderedOther",
    "SceneDescription",
    "SceneKeywords",
    "SceneOptions",
    "draw_scene",
    "pip_layout",
    "render_die_crop",
    "render_roll_clip",
    "render_scene",
    "render_scene_and_others",
    "sample_scene",
    "surface",
]
