"""Rendering the live part of a page (banner, dice, roll entry, sheets, end) to HTML. The
same fragment is served inside the first page and pushed over the WebSocket after every
change.

A change reaches every screen of its table, so the work per change is kept to the distinct
views it needs, and none of it runs on the event loop:

- one fragment per state and kind of viewer (mode, seat, host): the screens that show the
  same thing share one rendering (`LiveDrawings.of(table).fragments` holds the Future of
  it, so screens asking while it is being drawn wait for the same one);
- each sheet's HTML per sheet context (`SheetCache`): when one player crosses a box the
  sheets whose context did not change are not drawn again;
- the drawing runs on one render thread (`LiveDrawings.pool`): the loop only awaits it,
  and renders are done in the order they were asked for, so a screen never receives an
  older state after a newer one.

These caches are the web side's: a table (companion.table.tables) knows nothing of its
drawings. They are kept per table object (a table that left memory and was opened again
is drawn afresh) and forgotten whenever the table publishes a new snapshot."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.table.words import score_text, signed_text  # the templates' `score`, `signed`
from companion.web.views import live_context

if TYPE_CHECKING:
    from companion.table.tables import Table

LIVE_TEMPLATE = "_live.html"
SHEET_TEMPLATE = "_sheet.html"
MODES = ("table", "sheet")
SHEET_CACHE_SIZE = 64


class ViewEnvironment(jinja2.Environment):
    """Jinja's environment with a quicker `{{ box.legal }}` on the plain dicts the views
    build: Jinja tries the attribute first and reads the key after the AttributeError, and
    raising that error for every box of every sheet was the largest cost of drawing one.
    A key is read first only where the attribute lookup would fail anyway (a name that is
    no `dict` attribute), so every template reads exactly what it read before."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj and not hasattr(dict, attribute):
            return obj[attribute]
        return super().getattr(obj, attribute)


def page_templates(directory: Path) -> Jinja2Templates:
    """The templates of the pages and fragments under `directory`, read once per server
    process: a change to a template shows after a restart. (Jinja's auto-reload checks
    the file's time on every use: for each sheet of each push, its frame and the game's
    macros; those `stat` calls were a sixth of the server's time under load.)"""
    loader = jinja2.FileSystemLoader(directory)
    environment = ViewEnvironment(loader=loader, autoescape=True, auto_reload=False)
    environment.filters["score"] = score_text
    environment.filters["signed"] = signed_text
    return Jinja2Templates(env=environment)


class SheetCache:
    """The HTML of recently drawn sheets, keyed by their full context. Safe to use from
    several threads (a page load may draw while the render thread draws a push)."""

    def __init__(self, size: int = SHEET_CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[str, Markup] = OrderedDict()
        self._lock = threading.Lock()

    def html(
        self, templates: Jinja2Templates, game: str, template: str, sheet: dict[str, Any]
    ) -> Markup:
        key = json.dumps(sheet, sort_keys=True, separators=(",", ":"), default=str)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        html = Markup(
            templates.get_template(SHEET_TEMPLATE).render(s=sheet, game=game, template=template)
        )
        with self._lock:
            self._items[key] = html
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return html


@dataclass(frozen=True, slots=True)
class Fragment:
    """One drawn view of one state: the HTML, and the WebSocket message that carries it
    (encoded once: every screen of that view is sent the same text)."""

    state_id: int
    html: str
    message: str


@dataclass(eq=False)
class TableDrawings:
    """What is drawn of one table: the fragments of `snapshot` (its current state) per
    `render_key`, and its recent sheets."""

    snapshot: Snapshot | None = None
    fragments: dict[tuple[Any, ...], asyncio.Future[Fragment]] = field(default_factory=dict)
    sheets: SheetCache = field(default_factory=SheetCache)


class LiveDrawings:
    """The drawings of every table in memory, and the one thread that draws them: rendering
    is CPU work under the GIL (more threads would not draw faster), kept off the event loop
    so sockets, the camera and the store are never held up; one thread also keeps renders
    in the order asked. Made in the app's lifespan, `close`d after the server stopped."""

    def __init__(self, templates: Jinja2Templates) -> None:
        self.templates = templates
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="render"
        )
        self._tables: weakref.WeakKeyDictionary[Table, TableDrawings] = weakref.WeakKeyDictionary()

    def of(self, table: Table) -> TableDrawings:
        """The drawings of `table`, its fragments forgotten once it published a new
        snapshot (every accepted change, an ending, a changed table option)."""
        drawings = self._tables.get(table)
        if drawings is None:
            drawings = self._tables[table] = TableDrawings()
        if drawings.snapshot is not table.snapshot:
            drawings.fragments.clear()
            drawings.snapshot = table.snapshot
        return drawings

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def render_key(snapshot: Snapshot, viewer: Viewer, mode: str) -> tuple[Any, ...]:
    """What a fragment depends on besides the snapshot's state id: screens with equal keys
    get the same HTML. `ended_by_host` and `next_table` are in it because the host's end and
    the host's "Play again" keep the state id."""
    return (
        snapshot.state_id,
        snapshot.ended_by_host,
        snapshot.next_table,
        mode,
        viewer.seat,
        viewer.host,
        viewer.joined_after_next_game,
        viewer.next_place_freed,
    )


def render_live(
    templates: Jinja2Templates,
    table_id: str,
    sheets: SheetCache,
    snapshot: Snapshot,
    viewer: Viewer,
    mode: str,
) -> Fragment:
    """The live fragment of `snapshot` for this viewer (pure CPU work: run it off the loop)."""
    context: dict[str, Any] = live_context(snapshot, viewer, mode)
    context["table_id"] = table_id
    context["sheet_html"] = [
        sheets.html(templates, context["game"]["name"], context["template"], sheet)
        for sheet in context["sheets"]
    ]
    html = templates.get_template(LIVE_TEMPLATE).render(live=context)
    message = json.dumps({"type": "state", "state_id": snapshot.state_id, "html": html})
    return Fragment(snapshot.state_id, html, message)


async def live_html(
    drawings: LiveDrawings, table: Table, viewer: Viewer, mode: str
) -> tuple[int, str]:
    """(state id, HTML) of the live fragment for this viewer; `mode` "table" or "sheet"."""
    fragment = await live_fragment(drawings, table, viewer, mode)
    return fragment.state_id, fragment.html


async def live_fragment(
    drawings: LiveDrawings, table: Table, viewer: Viewer, mode: str
) -> Fragment:
    """The live fragment of the table's current state for this viewer, drawn once per
    distinct view of a state, on the render thread."""
    mine = drawings.of(table)
    snapshot = table.snapshot
    key = render_key(snapshot, viewer, mode)
    job = mine.fragments.get(key)
    if job is None:
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(
            drawings.pool,
            render_live,
            drawings.templates,
            table.table_id,
            mine.sheets,
            snapshot,
            viewer,
            mode,
        )
        mine.fragments[key] = job
        job.add_done_callback(lambda done: _forget_failed(mine, key, done))
    # shielded: a screen that goes away while waiting must not cancel the others' render
    return await asyncio.shield(job)


def _forget_failed(
    mine: TableDrawings, key: tuple[Any, ...], job: asyncio.Future[Fragment]
) -> None:
    """A render that raised is not kept: the next screen asking draws it again."""
    if (job.cancelled() or job.exception() is not None) and mine.fragments.get(key) is job:
        del mine.fragments[key]
