#!/usr/bin/env python3
"""Generate Table Companion's OWN twelve Sixto sheet layouts, A to L, once, from a fixed seed,
and write them to companion/rules/data/sixto_sheets.json.

These are not the printed KENDi pad's sheets: their digits are not public (see
/work/shared/rules/NOTES.md, Sixto). A player who owns the pad can transcribe a printed sheet
into a file of the same format and load it with companion.sheets.load_sheet_file.

Every layout obeys the project's rules for its sheets:
- 6 rows (one per die colour, in the configured colour order) x 12 boxes;
- each row holds each digit 1-6 exactly twice;
- a row's target area (boxes 10-12) shows three different digits, so every row's target
  area can be reached with more than one die value;
- no two rows of a sheet are equal, and all twelve sheets are different.

Usage:
    .venv/bin/python scripts/make_sixto_sheets.py            # write the data file
    .venv/bin/python scripts/make_sixto_sheets.py --check    # exit 1 if the file differs
    .venv/bin/python scripts/make_sixto_sheets.py --python   # print the rules' data table

The rules module (companion/rules/sixto.py) carries the same table as a constant because the
rules do no file I/O; tests/rules/test_sixto.py checks that both agree.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

SEED = 20231129
LETTERS = "ABCDEFGHIJKL"
ROWS = 6
BOXES = 12
DATA_FILE = Path(__file__).resolve().parent.parent / "companion/rules/data/sixto_sheets.json"
ABOUT = (
    "Table Companion's own Sixto sheet layouts A-L. These are NOT the printed KENDi pad's "
    "sheets (their digits are not public). Generated once by scripts/make_sixto_sheets.py "
    f"with seed {SEED}. Row i belongs to the i-th die colour (default red, orange, yellow, "
    "green, blue, purple); boxes 1-9 are the main area, 10-12 the target area; each row holds "
    "each digit 1-6 exactly twice."
)


def make_row(rng: random.Random) -> str:
    """One row: the digits 1-6 twice each, shuffled until the target area shows three
    different digits."""
    digits = list("112233445566")
    while True:
        rng.shuffle(digits)
        if len(set(digits[9:])) == 3:
            return "".join(digits)


def make_sheet(rng: random.Random) -> list[str]:
    rows: list[str] = []
    while len(rows) < ROWS:
        row = make_row(rng)
        if row not in rows:
            rows.append(row)
    return rows


def make_sheets(seed: int = SEED) -> dict[str, list[str]]:
    rng = random.Random(seed)
    sheets: dict[str, list[str]] = {}
    for letter in LETTERS:
        sheet = make_sheet(rng)
        while sheet in sheets.values():
            sheet = make_sheet(rng)
        sheets[letter] = sheet
    return sheets


def render(sheets: dict[str, list[str]]) -> str:
    """The data file's text: one sheet per block, one row per line, so a diff shows digits."""
    document = {"format": "sixto-sheets", "version": 1, "about": ABOUT, "sheets": sheets}
    return json.dumps(document, indent=2) + "\n"


def render_python(sheets: dict[str, list[str]]) -> str:
    lines = ["PROJECT_SHEETS: dict[str, tuple[str, ...]] = {"]
    for letter, rows in sheets.items():
        lines.append(f'    "{letter}": (')
        lines.extend(f'        "{row}",' for row in rows)
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare with the stored file")
    mode.add_argument("--python", action="store_true", help="print the rules' constant")
    args = parser.parse_args()
    sheets = make_sheets()
    text = render(sheets)
    if args.python:
        print(render_python(sheets), end="")
        return 0
    if args.check:
        stored = DATA_FILE.read_text(encoding="utf-8") if DATA_FILE.exists() else ""
        if stored != text:
            print(f"{DATA_FILE} differs from what seed {SEED} generates", file=sys.stderr)
            return 1
        print(f"{DATA_FILE} matches seed {SEED}")
        return 0
    DATA_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {len(sheets)} sheets to {DATA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
