"""A contact sheet of rendered training scenes with their labels drawn on, for a person
to look at (does the renderer draw what real tables show? are the labels right?).

    .venv/bin/python -m models.recipe.contact_sheet --fancy 1 --count 24 --out /tmp/sheet.png

The scenes are `models.recipe.data.render_scenes`' (the training's own, 512x384, the
same seed gives the same scenes as a training run with that seed and `--fancy`). Drawn
on each: a readable die's top face (its quad from centre, side and angle) in green with
its value, an unreadable die's in orange with "?", the box of a thing that is not a d6
die (a distractor: another polyhedral die, a token, a coin) in red with its kind.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

from models.recipe.data import Scene, render_scenes

READABLE, UNREADABLE, OTHER = (60, 220, 60), (0, 160, 255), (40, 40, 240)


def annotate(scene: Scene, others: list[str]) -> np.ndarray:
    """The scene's picture with its labels drawn on."""
    image = scene.image()
    for (cx, cy, side, angle, _), value in zip(scene.dice, scene.values, strict=True):
        a = math.radians(float(angle))
        corners = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * float(side)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        quad = corners @ rot.T + [float(cx), float(cy)]
        colour = READABLE if value is not None else UNREADABLE
        cv2.polylines(image, [np.round(quad).astype(np.int32)], True, colour, 1, cv2.LINE_AA)
        text = str(value) if value is not None else "?"
        org = (int(cx) - 4, int(cy) + 4)
        cv2.putText(image, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(image, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv2.LINE_AA)
    for (cx, cy, side), kind in zip(scene.hard, others, strict=True):
        half = float(side) / 2
        x0, y0 = int(cx - half), int(cy - half)
        cv2.rectangle(image, (x0, y0), (int(cx + half), int(cy + half)), OTHER, 1, cv2.LINE_AA)
        cv2.putText(image, kind, (x0, y0 - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.3, OTHER, 1)
    return image


def sheet(scenes: list[Scene], columns: int, tile: int, labels: bool) -> np.ndarray:
    """The scenes as tiles `tile` px wide, `columns` to a row."""
    tiles = []
    for scene in scenes:
        kinds = list(getattr(scene, "other_kinds", [])) or ["not d6"] * len(scene.hard)
        image = annotate(scene, kinds) if labels else scene.image()
        height = int(round(image.shape[0] * tile / image.shape[1]))
        tiles.append(cv2.resize(image, (tile, height), interpolation=cv2.INTER_AREA))
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[k : k + columns]) for k in range(0, len(tiles), columns)]
    return np.vstack(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fancy", type=float, default=1.0, help="share of fancy scenes (0-1)")
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--columns", type=int, default=4)
    parser.add_argument("--tile", type=int, default=512, help="width of one scene on the sheet")
    parser.add_argument("--no-labels", action="store_true", help="the pictures alone")
    parser.add_argument("--quality", type=int, default=0, help="write JPEG/WebP at this quality")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    scenes = render_scenes(args.count, args.seed, fancy=args.fancy)
    picture = sheet(scenes, args.columns, args.tile, not args.no_labels)
    params = []
    if args.quality and args.out.suffix.lower() in (".jpg", ".jpeg"):
        params = [cv2.IMWRITE_JPEG_QUALITY, args.quality]
    elif args.quality and args.out.suffix.lower() == ".webp":
        params = [cv2.IMWRITE_WEBP_QUALITY, args.quality]
    if not cv2.imwrite(str(args.out), picture, params):
        raise SystemExit(f"could not write {args.out}")
    dice = sum(len(s.dice) for s in scenes)
    others = sum(len(s.hard) for s in scenes)
    print(f"{args.out}: {len(scenes)} scenes, {dice} dice, {others} things that are not d6 dice")
    return 0


if __name__ == "__main__":
    sys.exit(main())
