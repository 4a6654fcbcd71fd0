"""Rendering the live part of a page (banner, dice, roll entry, sheets, end) to HTML. The
same fragment is served inside the first page and pushed over the WebSocket after every
change.

Two caches keep a change cheap for many screens: the whole fragment per state id and kind
of viewer, and each sheet's HTML per sheet context (most sheets do not change when one
player crosses a box, so a push re-renders one sheet, not six)."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from companion.web.auth import Viewer

if TYPE_CHECKING:
    from companion.web.tables import Table

LIVE_TEMPLATE = "_live.html"
SHEET_TEMPLATE = "_sheet.html"
MODES = ("table", "sheet")
SHEET_CACHE_SIZE = 64


class SheetCache:
    """The HTML of recently drawn sheets, keyed by their full context."""

    def __init__(self, size: int = SHEET_CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[str, Markup] = OrderedDict()

    def html(
        self, templates: Jinja2Templates, game: str, template: str, sheet: dict[str, Any]
    ) -> Markup:
        key = json.dumps(sheet, sort_keys=True, separators=(",", ":"), default=str)
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            return found
        html = Markup(
            templates.get_template(SHEET_TEMPLATE).render(s=sheet, game=game, template=template)
        )
        self._items[key] = html
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return html


def live_html(
    templates: Jinja2Templates, table: Table, viewer: Viewer, mode: str
) -> tuple[int, str]:
    """(state id, HTML) of the live fragment for this viewer; `mode` "table" or "sheet"."""
    from companion.web.views import live_context  # views import tables, which import this

    snapshot = table.snapshot
    key = (snapshot.state_id, mode, viewer.seat, viewer.host)
    cached = table.render_cache.get(key)
    if cached is None:
        context: dict[str, Any] = live_context(snapshot, viewer, mode)
        context["table_id"] = table.table_id
        sheets = table.sheet_cache
        context["sheet_html"] = [
            sheets.html(templates, context["game"]["name"], context["template"], sheet)
            for sheet in context["sheets"]
        ]
        cached = templates.get_template(LIVE_TEMPLATE).render(live=context)
        table.render_cache[key] = cached
    return snapshot.state_id, cached
