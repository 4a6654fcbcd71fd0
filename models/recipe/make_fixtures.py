"""Write the small real crop fixtures of tests/fixtures/crops: 10 dice per value taken only
from the VALIDATION part of ../shared/data (never trained on), each a PNG named
``<value>_<folder>_<n>.png`` with the die centred, upright as photographed and
``FIXTURE_DIE_SIDE`` pixels wide; SOURCES.txt names the photo and box of every crop.
A run replaces only the crops the previous run's SOURCES.txt names: it refuses a folder
that holds files but no SOURCES.txt of its own (a folder of someone's photos lost its
PNGs to ``--out``), and a file given as the folder.
Only the three folders whose licences SOURCES.txt names give crops (the later folders of
../shared/data, rune55-webcams and tomitomi-dish-crops, are left out so the fixtures stay
the same).

    .venv/bin/python -m models.recipe.make_fixtures [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

from companion.vision.classifier import crop_square
from companion.vision.datasets import LabelledDie, LabelledImage, load_split

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "fixtures" / "crops"
CROP_SIZE = 40
FIXTURE_DIE_SIDE = 26.0  # the die's side inside the crop, in pixels
PER_VALUE = 10
SHORT = {"byler-d6-train": "byler", "epanemu-dice3": "epanemu", "matteop65-d6": "matteop65"}
SOURCES_HEADER = "# crops of validation photos only; licences: "  # SOURCES.txt's first line
LICENCES = (
    "byler-d6-train: BSD-3-Clause, Copyright (c) 2019 Nell Byler; "
    "epanemu-dice3: CC BY 4.0 (Roboflow 'Dice', github.com/Epanemu/GameDiceRecognition); "
    "matteop65-d6: MIT, Copyright (c) 2021 Matteo Anthony Penlington"
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m models.recipe.make_fixtures",
        description="Rewrite the real crop fixtures (10 per value, validation photos only): "
        "the crops the output folder's SOURCES.txt names are replaced; a folder that holds "
        "other files and no SOURCES.txt of this command's is refused.",
    )
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default: {OUT})")
    return parser.parse_args(argv)


class NotAFixturesFolder(Exception):
    """The output folder holds files this command did not write, or is (or lies below) a
    file: nothing is written or replaced."""


def file_in_the_way(out: Path) -> Path | None:
    """The file that `out` is or lies below (so no folder can be made there), if any."""
    for path in (out, *out.parents):
        if path.exists():
            return None if path.is_dir() else path
    return None


def previous_crops(out: Path) -> list[Path]:
    """The crops an earlier run wrote in `out` (the names its SOURCES.txt lists), to be
    replaced; none for a missing or empty folder. Raises `NotAFixturesFolder` for a folder
    holding anything else without a SOURCES.txt of ours (its PNGs are someone's own), and
    for a file given as the folder or above it (no folder can be made there: refused here,
    before the photos are read, not by a traceback from mkdir after)."""
    blocking = file_in_the_way(out)
    if blocking is not None:
        raise NotAFixturesFolder(f"{blocking} is a file, not a folder: name a folder with --out")
    sources = out / "SOURCES.txt"
    if sources.is_file():
        lines = sources.read_text(encoding="utf-8").splitlines()
        if lines and lines[0].startswith(SOURCES_HEADER):
            names = [line.split("\t", 1)[0] for line in lines[1:] if line.strip()]
            # a name with a folder in it is no crop of ours: never remove outside `out`
            return [out / name for name in names if Path(name).name == name]
    if out.is_dir() and any(out.iterdir()):
        raise NotAFixturesFolder(
            f"{out} holds files but no SOURCES.txt written by make_fixtures: refusing to "
            "replace them; name an empty or new folder with --out"
        )
    return []


def main(argv: list[str] | None = None) -> int:
    out = parse_args(argv).out
    try:
        replaced = previous_crops(out)
    except NotAFixturesFolder as refusal:
        print(f"make_fixtures: {refusal}", file=sys.stderr)
        return 2
    split = load_split()
    candidates: dict[int, list[tuple[str, LabelledImage, LabelledDie]]] = {
        v: [] for v in range(1, 7)
    }
    for folder, images in split.validation.items():
        if folder not in SHORT:
            continue  # a folder whose licence SOURCES.txt does not name
        for labelled in images:
            for die in labelled.dice:
                if die.side >= 16:  # too small a die makes a meaningless fixture
                    candidates[die.value].append((folder, labelled, die))
    out.mkdir(parents=True, exist_ok=True)
    for old in replaced:
        old.unlink(missing_ok=True)
    sources = [f"{SOURCES_HEADER}{LICENCES}"]
    for value, items in candidates.items():
        # spread the picks evenly over the folders and photos
        step = max(1, len(items) // PER_VALUE)
        for n, (folder, labelled, die) in enumerate(items[::step][:PER_VALUE]):
            image = labelled.load()
            side = die.side * CROP_SIZE / FIXTURE_DIE_SIDE
            crop = crop_square(image, die.cx, die.cy, side, CROP_SIZE)
            name = f"{value}_{SHORT[folder]}_{n:02d}.png"
            cv2.imwrite(str(out / name), crop, [cv2.IMWRITE_PNG_COMPRESSION, 9])
            box = f"cx={die.cx:.1f} cy={die.cy:.1f} side={die.side:.1f}"
            sources.append(f"{name}\t{folder}/{labelled.path.name}\t{box}")
    (out / "SOURCES.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
