"""Sixto sheet files: reading the project's own layouts and a player's transcription of a
printed sheet from JSON files. The file format and its checks live in the rules
(`companion.rules.sixto.parse_sheet_set`, pure); this module only does the file I/O, so the
rules stay free of it.

File format (see docs/records/sixto.md)::

    {"format": "sixto-sheets", "version": 1,
     "sheets": {"C": ["411242563365", "513423264516", ...six rows...]}}

Row i belongs to the i-th die colour; a row is 12 digits 1-6 (spaces allowed) or a list of
12 numbers.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from companion.rules.base import Reason, Rejection
from companion.rules.sixto import SheetChoice, parse_sheet_set

logger = logging.getLogger(__name__)

PROJECT_SHEETS_FILE = Path(__file__).resolve().parent / "rules" / "data" / "sixto_sheets.json"
"""The project's own layouts A-L (not the printed pad's), made by scripts/make_sixto_sheets.py."""


def load_sheet_file(path: str | Path) -> dict[str, tuple[str, ...]]:
    """The sheets in a sheet file, by name, each as six 12-digit strings. Raises
    Rejection(BAD_OPTIONS) naming the file and the problem (missing file, not JSON, wrong
    row count, a digit outside 1-6, a row of the wrong length, ...)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Rejection(Reason.BAD_OPTIONS, "sheet_file", f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise Rejection(
            Reason.BAD_OPTIONS, "sheet_file", f"{path}: cannot be read ({exc})"
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "sheet_file",
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
        ) from exc
    sheets = parse_sheet_set(data, where=str(path))
    logger.info("read %d Sixto sheet(s) from %s", len(sheets), path)
    return sheets


def load_project_sheets() -> dict[str, tuple[str, ...]]:
    """The project's own twelve layouts A-L from the data file."""
    return load_sheet_file(PROJECT_SHEETS_FILE)


def custom_sheet_choice(path: str | Path, name: str | None = None) -> SheetChoice:
    """A player's `SheetChoice` for a transcribed sheet: the sheet called `name` in the file,
    or its only sheet when `name` is None. The choice carries the digits themselves, so the
    game record does not depend on the file afterwards."""
    sheets = load_sheet_file(path)
    if name is None:
        if len(sheets) != 1:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "sheet_name",
                f"{path} holds {len(sheets)} sheets ({', '.join(sheets)}); say which one",
            )
        name = next(iter(sheets))
    if name not in sheets:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "sheet_name",
            f"{path} has no sheet {name!r}; it has {', '.join(sheets)}",
        )
    return SheetChoice(rows=sheets[name], name=name)
