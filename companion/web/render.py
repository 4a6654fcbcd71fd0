"""Rendering the live part of a page (banner, dice, roll entry, sheets, end) to HTML. The
same fragment is served inside the first page and pushed over the WebSocket after every
change; it is cached per state id and kind of viewer, so six screens cost one render each
kind."""

from __future__ import annotations

from typing import Any

from fastapi.templating import Jinja2Templates

from companion.web.auth import Viewer
from companion.web.tables import Table
from companion.web.views import live_context

LIVE_TEMPLATE = "_live.html"
MODES = ("table", "sheet")


def live_html(
    templates: Jinja2Templates, table: Table, viewer: Viewer, mode: str
) -> tuple[int, str]:
    """(state id, HTML) of the live fragment for this viewer; `mode` "table" or "sheet"."""
    snapshot = table.snapshot
    key = (snapshot.state_id, mode, viewer.seat, viewer.host)
    cached = table.render_cache.get(key)
    if cached is None:
        context: dict[str, Any] = live_context(snapshot, viewer, mode)
        context["table_id"] = table.table_id
        cached = templates.get_template(LIVE_TEMPLATE).render(live=context)
        table.render_cache[key] = cached
    return snapshot.state_id, cached
