"""models/recipe/adapt_deep.py lies outside mypy's configured files (pyproject.toml:
companion/ only), so the gate never sees it: checked here on its own, its imports followed
silently (the recipe's other modules have errors of their own, not this file's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADAPT_DEEP = "models/recipe/adapt_deep.py"


def test_adapt_deep_type_checks() -> None:
    # in its own process: mypy's in-process api raises this interpreter's recursion limit
    # for good (to 2**14), and a later test that needs a RecursionError no longer got one
    args = ["--explicit-package-bases", "--follow-imports=silent", str(REPO / ADAPT_DEEP)]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    flagged = [line for line in done.stdout.splitlines() if ADAPT_DEEP in line]
    assert flagged == [], done.stdout + done.stderr
