"""The fallback page of a game without its own view module: the player's score breakdown
and every legal move as a button (labels from `describe_move`). Presentation only."""

from __future__ import annotations

from typing import Any

from companion.web.views import SheetInput

TEMPLATE = "games/generic.html"


def sheet(inp: SheetInput) -> dict[str, Any]:
    """No boxes: `sheet_context` adds one button per legal move."""
    return {"buttons": [], "drawn_moves": []}
