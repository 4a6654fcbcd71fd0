"""models/recipe/adapt_deep.py lies outside mypy's configured files (pyproject.toml:
companion/ only), so the gate never sees it: checked here on its own, its imports followed
silently (the recipe's other modules have errors of their own, not this file's)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

REPO = Path(__file__).resolve().parents[2]
ADAPT_DEEP = "models/recipe/adapt_deep.py"


def test_adapt_deep_type_checks() -> None:
    report, errors, _status = api.run(
        ["--explicit-package-bases", "--follow-imports=silent", str(REPO / ADAPT_DEEP)]
    )
    flagged = [line for line in report.splitlines() if ADAPT_DEEP in line]
    assert flagged == [], report + errors
