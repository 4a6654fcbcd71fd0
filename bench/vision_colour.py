"""Colour figures for the vision pipeline.

Modes:
  (default)        rendered Qwixx and Sixto scenes (random light, surfaces, clutter) with
                   the dice set given: percentage of dice given the right colour.
                   --finder uses the real dice finder (models/) instead of the true boxes.
                   --dice-set NAME (again for more): another registered game's dice, from
                   the registry as `companion read --dice-set` takes them.
  --real           colour naming on the validation part of byler-d6-train (every 5th image
                   by sorted name, never used for the prototypes), strict and lenient
                   (colour-alternatives.csv).
  --calibrate DIR  write <set>-default.json for every standard dice set (or those of
                   --dice-set) measured under the renderer's default light.
  --prototypes     print the prototype table of companion/vision/colour.py.

Examples:
  .venv/bin/python bench/vision_colour.py --scenes 300
  .venv/bin/python bench/vision_colour.py --real
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

from companion.cli import game_dice_set
from companion.rules.registry import standard_dice_sets
from companion.synth import RenderedDie, render_scene
from companion.vision.colour import (
    LIGHTNESS_WEIGHT,
    DiceSet,
    SetDie,
    colour_readings,
    dice_set_to_json,
    measure_die,
    name_colour,
)
from companion.vision.scoring import pair_closest
from companion.vision.types import BASIC_COLOURS, DieBox, DieReading

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BYLER = DATA / "byler-d6-train"


def truth_box(die: RenderedDie) -> DieBox:
    x0, y0, x1, y1 = die.box
    return DieBox((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0)


def registered_dice_sets(names: list[str]) -> dict[str, DiceSet]:
    """The dice sets of the registered games `names` (cli.game_dice_set: the registry's,
    at their shipped calibration where there is one); ValueError naming a name that is no
    registered game throwing a fixed set."""
    sets = {name: game_dice_set(name) for name in names}
    for name, found in sets.items():
        if not isinstance(found, DiceSet):
            known = ", ".join(standard_dice_sets())
            message = f"--dice-set {name}: no registered game by that name throws a fixed dice set"
            raise ValueError(f"{message} (known: {known})")
    return {name: found for name, found in sets.items() if isinstance(found, DiceSet)}


def bench_sets(sets: dict[str, DiceSet], scenes: int, use_finder: bool, seed: int) -> int:
    reader = None
    if use_finder:
        from companion.vision.pipeline import DiceReader

        reader = {name: DiceReader.load(dice_set=dice_set) for name, dice_set in sets.items()}
    right = total = found = 0
    wrong: Counter[tuple[str, str]] = Counter()
    for k in range(scenes):
        set_name = list(sets)[k % len(sets)]
        rng = np.random.default_rng(seed + k)
        values = [int(v) for v in rng.integers(1, 7, len(sets[set_name].colours))]
        image, dice = render_scene(rng, 640, 480, dice_set=sets[set_name], values=values)
        if reader is not None:
            reading = reader[set_name].read(image)
            readings = reading.dice
        else:
            boxes = [DieReading(truth_box(d), d.value, 1.0) for d in dice]
            readings, _ = colour_readings(image, boxes, sets[set_name])
        # the one match rule of every vision figure (companion.vision.scoring): closest
        # pairs within 0.6 x the die's side, each die and each reading used once
        truth = [(box.cx, box.cy, die.side) for die in dice for box in [truth_box(die)]]
        pairs = dict(pair_closest(truth, [r.where for r in readings]))
        total += len(dice)
        for i, die in enumerate(dice):
            if i not in pairs:
                continue
            found += 1
            given = readings[pairs[i]].colour
            if given == die.body:
                right += 1
            else:
                wrong[(die.body, str(given))] += 1
        if (k + 1) % 50 == 0:
            print(f"  {k + 1}/{scenes} scenes, {right}/{found} right so far", flush=True)
    which = "finder boxes" if use_finder else "true boxes"
    names = "+".join(sets)
    print(f"rendered {names} scenes: {scenes}, dice: {total}, found: {found} ({which})")
    print(f"wrong (true, given): {dict(wrong.most_common(8))}")
    print(f"set_colour_right_percent: {100.0 * right / max(found, 1):.2f}")
    return 0


def byler_rows() -> list[dict[str, str]]:
    with open(BYLER / "colours.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def byler_validation_names() -> set[str]:
    names = sorted(p.name for p in (BYLER / "images").iterdir())
    return {n for i, n in enumerate(names) if i % 5 == 4}


def bench_real() -> int:
    valid = byler_validation_names()
    alternatives: dict[tuple[str, int], set[str]] = defaultdict(set)
    with open(BYLER / "colour-alternatives.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            alternatives[(row["image"], int(row["die_index"]))].add(row["alt_body_colour"])
    images: dict[str, np.ndarray] = {}
    strict = lenient = total = 0
    confusion: Counter[tuple[str, str]] = Counter()
    for row in byler_rows():
        if row["image"] not in valid:
            continue
        image = images.get(row["image"])
        if image is None:
            image = cv2.imread(str(BYLER / "images" / row["image"]))
            assert image is not None, row["image"]
            images[row["image"]] = image
        x0, y0, x1, y1 = (float(row[k]) for k in ("x0", "y0", "x1", "y1"))
        measured = measure_die(image, DieBox((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0))
        total += 1
        if measured is None:
            continue
        name = name_colour(measured.lab).name
        truth = row["body_colour"]
        strict += name == truth
        ok = name == truth or name in alternatives[(row["image"], int(row["die_index"]))]
        lenient += ok
        if not ok:
            confusion[(truth, name)] += 1
    print(f"byler-d6-train validation dice (labelled boxes): {total}")
    print(f"wrong (true, named): {dict(confusion.most_common(10))}")
    print(f"byler_colour_strict_percent: {100.0 * strict / total:.2f}")
    print(f"byler_colour_lenient_percent: {100.0 * lenient / total:.2f}")
    return 0


def calibrate(sets: dict[str, DiceSet], out_dir: Path, scenes: int, seed: int) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    for set_name, given in sets.items():
        colours = given.colours
        samples: list[list[tuple[float, float, float]]] = [[] for _ in colours]
        for k in range(scenes):
            rng = np.random.default_rng(seed + k)
            values = [int(v) for v in rng.integers(1, 7, len(colours))]
            image, dice = render_scene(
                rng,
                640,
                480,
                dice_set=given,
                values=values,
                light="default",
                surface=str(rng.choice(["white", "wood", "felt", "cardboard"])),
                clutter=0.0,
                touching=0.0,
            )
            for die in dice:
                index = [i for i, c in enumerate(colours) if c == die.body]
                measured = measure_die(image, truth_box(die))
                if measured is not None:
                    for i in index:
                        samples[i].append(measured.lab)
        dice_set = DiceSet(
            set_name,
            tuple(
                SetDie(c, tuple(float(v) for v in np.median(np.float32(s), axis=0)))  # type: ignore[arg-type]
                for c, s in zip(colours, samples, strict=True)
            ),
        )
        light = (
            "default light of companion.synth (render_scene(light='default')): neutral, "
            f"even, no colour cast; median of {scenes} rendered scenes per die "
            "(bench/vision_colour.py --calibrate). Re-measure under your own table's light."
        )
        path = out_dir / f"{set_name}-default.json"
        document = dice_set_to_json(dice_set, light)
        dice_lines = ",\n".join(f"    {json.dumps(d)}" for d in document.pop("dice"))  # type: ignore[attr-defined]
        head = json.dumps(document, indent=2)[:-2]
        path.write_text(f'{head},\n  "dice": [\n{dice_lines}\n  ]\n}}\n')
        print(f"wrote {path}")
    return 0


Lab = tuple[float, float, float]


def real_samples() -> dict[str, list[Lab]]:
    """The measured colour of every die of byler's training part (never its validation
    part), by body colour."""
    samples: dict[str, list[Lab]] = defaultdict(list)
    valid = byler_validation_names()
    images: dict[str, np.ndarray] = {}
    for row in byler_rows():
        if row["image"] in valid:
            continue
        image = images.get(row["image"])
        if image is None:
            image = cv2.imread(str(BYLER / "images" / row["image"]))
            assert image is not None, row["image"]
            images[row["image"]] = image
        x0, y0, x1, y1 = (float(row[k]) for k in ("x0", "y0", "x1", "y1"))
        m = measure_die(image, DieBox((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0))
        if m is not None:
            samples[row["body_colour"]].append(m.lab)
    return samples


def rendered_samples(seed: int, scenes: int = 150) -> dict[str, list[Lab]]:
    """The measured colour of every die of rendered scenes under random light, by body."""
    samples: dict[str, list[Lab]] = defaultdict(list)
    for k in range(scenes):
        rng = np.random.default_rng(seed + k)
        image, dice = render_scene(rng, 640, 480, unreadable=0.0)
        for die in dice:
            m = measure_die(image, truth_box(die))
            if m is not None:
                samples[die.body].append(m.lab)
    return samples


def kept_centres(
    labs: np.ndarray, name: str, medians: dict[str, np.ndarray], weights: np.ndarray
) -> list[np.ndarray]:
    """Up to 4 k-means centres of one name's weighted samples (in Lab), less those nearer
    another name's median than their own: such a centre (e.g. white dice under the dimmest
    light, which look grey) would take that name's dice."""
    cv2.setRNGSeed(1)
    _, _, centres = cv2.kmeans(
        labs,
        min(4, len(labs)),
        None,
        (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 0.1),
        5,
        cv2.KMEANS_PP_CENTERS,
    )
    kept: list[np.ndarray] = []
    for c in centres:
        own = np.linalg.norm(c - medians[name])
        if not any(np.linalg.norm(c - m) < own for n, m in medians.items() if n != name):
            kept.append(c / weights)
    return kept


def prototypes(seed: int) -> int:
    """Print the prototype table: 4 k-means centres per name from the byler training part
    and 4 from rendered dice under random light."""
    weights = np.array([LIGHTNESS_WEIGHT, 1, 1], np.float32)
    by_source = {"real": real_samples(), "rendered": rendered_samples(seed)}
    pooled = {
        name: by_source["real"].get(name, []) + by_source["rendered"].get(name, [])
        for name in BASIC_COLOURS
    }
    medians = {
        n: np.median(np.array(v, np.float32), axis=0) * weights for n, v in pooled.items() if v
    }
    print("_PROTOTYPES: dict[str, tuple[tuple[float, float, float], ...]] = {")
    for name in BASIC_COLOURS:
        print(f'    "{name}": (')
        for source in ("real", "rendered"):
            samples = by_source[source].get(name, [])
            if not samples:
                continue
            for lab in kept_centres(
                np.array(samples, np.float32) * weights, name, medians, weights
            ):
                print(f"        ({lab[0]:.1f}, {lab[1]:.1f}, {lab[2]:.1f}),")
        print("    ),")
    print("}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=50_000)
    parser.add_argument("--finder", action="store_true", help="use the real dice finder")
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--calibrate", type=Path, default=None, metavar="DIR")
    parser.add_argument("--prototypes", action="store_true")
    parser.add_argument(
        "--dice-set",
        action="append",
        default=None,
        metavar="NAME",
        help="a registered game's dice set (again for more; default: qwixx and sixto, and "
        "every standard set for --calibrate)",
    )
    args = parser.parse_args(argv)
    standard = list(standard_dice_sets())  # the registry's games, as registered now
    names = args.dice_set or (standard if args.calibrate is not None else standard[:2])
    try:
        sets = registered_dice_sets(names)
    except ValueError as exc:
        parser.error(str(exc))
    started = time.perf_counter()
    if args.real:
        rc = bench_real()
    elif args.calibrate is not None:
        rc = calibrate(sets, args.calibrate, min(args.scenes, 40), args.seed)
    elif args.prototypes:
        rc = prototypes(1000)
    else:
        rc = bench_sets(sets, args.scenes, args.finder, args.seed)
    print(f"seconds: {time.perf_counter() - started:.1f}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
