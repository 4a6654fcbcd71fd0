"""The live table's service loads without the web layer: importing every module of
companion/table/ brings in no FastAPI, Starlette, Jinja2, MarkupSafe or companion.web
(tests/test_architecture.py checks the sources; this checks what actually gets loaded)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("fastapi", "starlette", "jinja2", "markupsafe", "companion.web")

PROGRAM = """
import importlib, json, pkgutil, sys
import companion.table
for found in pkgutil.iter_modules(companion.table.__path__, "companion.table."):
    importlib.import_module(found.name)
print(json.dumps(sorted(sys.modules)))
"""


def test_importing_the_service_loads_no_web_framework() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout)
    assert "companion.table.camera_hub" in loaded and "companion.table.tables" in loaded
    assert [m for m in loaded if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN)] == []
