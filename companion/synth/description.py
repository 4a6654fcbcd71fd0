"""A scene as data: every random choice of a scene, sampled once (sample.py), drawn
deterministically (draw.py).

Everything that decides where things are, what they look like and what the labels say is
a field here. The fine texture of a thing (a table's grain, a face's plastic noise, the
printed digits on a score sheet, sensor noise) comes from a seed held here, so drawing a
description twice gives the same pixels. Descriptions are frozen: to vary one part of a
scene, `dataclasses.replace` that part and draw again."""

from __future__ import annotations

from dataclasses import dataclass

BGR = tuple[float, float, float]
Point = tuple[float, float]


@dataclass(frozen=True)
class Camera:
    """The camera over the table. `tilt` in degrees (0 = straight down); `vanish` is the
    vertical vanishing point, where the dice's vertical edges meet (the picture's centre
    when the camera looks straight down); `focal` in pixels."""

    tilt: float
    focal: float
    vanish: Point


@dataclass(frozen=True)
class Table:
    """The bare table: a registered surface (surfaces.py) and its texture seed."""

    surface: str
    seed: int


@dataclass(frozen=True)
class ClutterItem:
    """One thing lying on the table (pencil, paper, coin, dots) at (cx, cy), about
    `scale` pixels (the dice's size); its shape and colour come from `seed`."""

    kind: str
    cx: float
    cy: float
    scale: float
    seed: int


@dataclass(frozen=True)
class Glare:
    """A soft glare spot on a face: centre (0-1 of the face), half-axes (fractions of the
    face), turn in degrees, and how much it brightens (0-255 at its middle)."""

    x: float
    y: float
    axes: Point
    angle: float
    strength: float
    # 0: a soft spot; towards 1 a hard-edged one (a lamp's reflection), whose middle,
    # brightened past white, is blown out, pips and all
    hardness: float = 0.0


@dataclass(frozen=True)
class Face:
    """One face of a die: value and pip layout (orientation 0/1, spacing and radius as
    fractions of the face), an optional glare spot, and the seed of its plastic's grain."""

    value: int
    orientation: int
    pip_spacing: float
    pip_radius: float
    seed: int
    glare: Glare | None = None
    shade: float = 1.0
    flare: Glare | None = None  # a strong lamp's reflection (scenes with a `Lamp`)
    sheen: float = 0.0  # and the lamp's even gloss over the whole face (0-255)


@dataclass(frozen=True)
class Occluder:
    """A card, sheet, hand or lid over about half of a die: its near edge crosses the die
    at `offset` (x the die's side) from its centre, across direction `direction`
    (radians), reaching `depth` beyond and `half_width` either side (x the side)."""

    kind: str
    direction: float
    offset: float
    depth: float
    half_width: float
    colour: BGR


@dataclass(frozen=True)
class Look:
    """A fancy die's material and paint (the fancy style, fancy.py; None on every die of
    the default style). `finish`: "marbled", "speckled", "glitter", "two_tone",
    "metallic" or "plain"; `second` the finish's second colour (marbling, specks, the
    other tone, glitter); `pip_style`: "paint" (ink of the die's pip colour), "metal"
    (gold or silver paint with its sheen) or "engraved" (no ink: the pits' shading only);
    `symbol` (a shape name, or "") is drawn in place of the pips of face `symbol_face`
    (1 or 6: the face still counts its value); `seed` fixes the pattern's lie on every
    face of the die (each face's own grain comes from the face's seed)."""

    finish: str
    second: BGR
    pip_style: str = "paint"
    symbol: str = ""
    symbol_face: int = 0
    seed: int = 0


@dataclass(frozen=True)
class Distractor:
    """Something on the table that is NOT a six-sided die, which the finder must learn
    to leave alone: another polyhedral die ("d4", "d8", "d10", "d12", "d20"), a token
    ("chip", "number_token", "hex_token") or a "coin". (cx, cy): where it lies seen
    straight from above, `size` its width in pixels, `angle` its turn in degrees; `body`
    and `ink` its colours (the number printed on it); `look` a fancy die's material (a
    polyhedral die of the same set as the d6s), `number` what is printed on it."""

    kind: str
    cx: float
    cy: float
    size: float
    angle: float
    body: BGR
    ink: BGR
    number: int
    seed: int
    look: Look | None = None


@dataclass(frozen=True)
class Die:
    """One die as placed and as it looks. cx, cy, side, angle: where its top face would
    lie seen straight from above (the camera's perspective is applied when drawn).
    `state` "" (flat), "cocked" (resting on an edge: tips towards `tip_direction`,
    radians, by `tip_lean`) or "hidden" (an `occluder` lies over it). `clear` > 0: see-
    through plastic. `index` is the die's place in the asked-for dice (its labels come
    back in that order)."""

    index: int
    value: int
    body: str
    pips: str
    cx: float
    cy: float
    side: float
    angle: float
    body_bgr: BGR
    pip_bgr: BGR
    corner: float
    side_shade: float
    top: Face
    sides: tuple[Face, ...]
    state: str = ""
    clear: float = 0.0
    marble: BGR | None = None
    tip_direction: float = 0.0
    tip_lean: float = 0.0
    under: Face | None = None
    occluder: Occluder | None = None
    # 0 on the table; 1 lying on other dice (a pile), nearer the camera, drawn after them
    level: int = 0
    look: Look | None = None  # the fancy style's material and paint (None: plain plastic)


@dataclass(frozen=True)
class Light:
    """The light: `default` (neutral and even: the default calibration's light), the
    direction cast shadows fall in (unit vector), their length (x a die's side) and
    darkness; the exposure gain with a linear ramp (direction in radians, strength over
    the picture), a mild vignette, a colour cast per channel and the seed of its slow
    unevenness."""

    default: bool
    direction: Point
    shadow_length: float
    shadow_darkness: float
    gain: float = 1.0
    ramp_angle: float = 0.0
    ramp: float = 0.0
    vignette: float = 0.0
    cast: BGR = (1.0, 1.0, 1.0)
    seed: int = 0


@dataclass(frozen=True)
class Finish:
    """What the camera does last: Gaussian blur (sigma), motion blur (length in pixels,
    direction in degrees), sensor noise (sd, from `noise_seed`), JPEG quality (None: none)."""

    blur: float
    motion_length: float
    motion_angle: float
    noise: float
    noise_seed: int
    jpeg_quality: int | None


@dataclass(frozen=True)
class Sensor:
    """The camera's sensor: "colour", "grey" (a greyscale webcam) or "ir" (near-infrared,
    lit by LEDs beside the lens: `hotspot` is how much brighter they make the middle
    around `hotspot_centre`, `hotspot_spread` its size as a fraction of the half
    diagonal). `contrast` and `gamma` shape its grey levels; `noise_gain` scales the
    sensor noise (a night mode is noisier)."""

    kind: str = "colour"
    contrast: float = 1.0
    gamma: float = 1.0
    hotspot: float = 0.0
    hotspot_centre: Point = (0.0, 0.0)
    hotspot_spread: float = 1.0
    noise_gain: float = 1.0


@dataclass(frozen=True)
class Lens:
    """A wide-angle lens (lens.py): barrel distortion `barrel` (0 none; the middle is
    magnified 1 + barrel, the edges squeezed), vignetting (the corners darkened by
    `vignette`, falling off as radius^`falloff`), about `centre`."""

    barrel: float
    vignette: float
    falloff: float
    centre: Point


@dataclass(frozen=True)
class Container:
    """A dish, tray or cup the dice lie in (container.py): the rim's centre and half-axes
    in the picture (foreshortened by the camera's tilt), its shape's roundness (the
    superellipse's exponent: 2 round, more a tray), the floor's size as a fraction of the
    rim's and its shift from the rim (the wall's height under the camera's perspective),
    the rim's width, colours of rim, inner wall and outside, the floor's surface, and the
    wall's shadow on the floor (darkness and reach in pixels)."""

    kind: str
    cx: float
    cy: float
    rx: float
    ry: float
    roundness: float
    floor_scale: float
    floor_shift: Point
    rim_width: float
    rim_colour: BGR
    wall_colour: BGR
    outside_colour: BGR
    floor: Table
    shadow: float
    shadow_reach: float


@dataclass(frozen=True)
class Lamp:
    """A strong lamp over the table: (x, y) is where the flat dice tops and a glossy table
    mirror it in the picture; tops within about `reach` pixels of it flare (hard specular
    spots up to `strength` over the face, past 255 blown out); `table_gloss` is how much
    of that the table itself reflects."""

    x: float
    y: float
    reach: float
    strength: float
    table_gloss: float


@dataclass(frozen=True)
class Tumbling:
    """Every die smeared by its own motion, about `strength` x its side long; each
    smear's direction and length come from (`seed`, the die's index)."""

    strength: float
    seed: int


@dataclass(frozen=True)
class SceneDescription:
    """One scene, every random choice made."""

    width: int
    height: int
    camera: Camera
    table: Table
    dice: tuple[Die, ...]
    clutter: tuple[ClutterItem, ...]
    light: Light
    finish: Finish
    # the dice's mean side: it sizes the clutter's and the shadows' softness
    base_size: float
    tumbling: Tumbling | None = None
    sensor: Sensor = Sensor()
    lens: Lens | None = None
    container: Container | None = None
    lamp: Lamp | None = None
    # the fancy style's things that are not d6 dice (drawn on the table under the dice)
    distractors: tuple[Distractor, ...] = ()
