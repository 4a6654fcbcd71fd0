"""The fan-out of a change (companion/web/fragments.py): each distinct view of a state is drawn
once and shared by every screen of that view, the drawing runs on the render thread (never
on the event loop), and a screen never gets an older state after a newer one. Real Store
(SQLite in a temp dir), real templates, real Tables."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from companion.table.access import Viewer
from companion.table.store import Store
from companion.table.tables import Tables
from companion.web import fragments
from companion.web.app import create_app
from companion.web.fragments import LiveDrawings, live_fragment
from companion.web.settings import Settings
from tests.web.helpers import QWIXX_ROLL_7


def test_each_view_is_drawn_once_off_the_loop_and_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    drawn: list[tuple[int, Any, str, str]] = []
    real_render = fragments.render_live

    def recording_render(*args: Any) -> fragments.Fragment:
        _, _, _, snapshot, viewer, mode = args
        drawn.append((snapshot.state_id, viewer.seat, mode, threading.current_thread().name))
        return real_render(*args)

    monkeypatch.setattr(fragments, "render_live", recording_render)

    async def scenario() -> None:
        store = Store.open(tmp_path / "fanout.sqlite3")
        tables = Tables(store)
        drawings = LiveDrawings(templates)
        try:
            table = await tables.create("qwixx", {"players": 3}, ["Ann", "Bob", "Cid"])
            ann, host = Viewer(seat=0, host=False), Viewer(seat=None, host=True)
            # three screens of Ann's sheet (say, a phone reconnecting twice) and the host's
            screens = [(ann, "sheet"), (ann, "sheet"), (ann, "sheet"), (host, "table")]
            first = await asyncio.gather(*(live_fragment(drawings, table, *s) for s in screens))
            assert first[0] is first[1] is first[2]  # one drawing, one encoded message
            assert first[3] is not first[0] and 'data-seat="2"' in first[3].html
            assert 'data-seat="1"' not in first[0].html  # a sheet screen shows its own sheet
            await table.act(table.game.move_from_json(QWIXX_ROLL_7), "camera", "roll-1")
            second = await asyncio.gather(*(live_fragment(drawings, table, *s) for s in screens))
            assert {f.state_id for f in second} == {first[0].state_id + 1}
            assert second[0] is second[1] and second[0].message.startswith('{"type": "state"')
        finally:
            drawings.close()
            tables.close()
            store.close()

    asyncio.run(scenario())
    # two states x two views, each drawn once, all on the render thread
    assert sorted((s, mode, str(seat)) for s, seat, mode, _ in drawn) == [
        (0, "sheet", "0"),
        (0, "table", "None"),
        (1, "sheet", "0"),
        (1, "table", "None"),
    ]
    assert {thread for *_, thread in drawn} != {threading.main_thread().name}
    assert all(thread.startswith("render") for *_, thread in drawn)


def test_a_failed_drawing_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A render that raised is dropped from the cache, so the next screen draws again."""
    templates = create_app(Settings(data_dir=tmp_path)).state.templates
    calls: list[int] = []
    real_render = fragments.render_live

    def failing_once(*args: Any) -> fragments.Fragment:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("template broke")
        return real_render(*args)

    monkeypatch.setattr(fragments, "render_live", failing_once)

    async def scenario() -> None:
        store = Store.open(tmp_path / "fail.sqlite3")
        tables = Tables(store)
        drawings = LiveDrawings(templates)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            viewer = Viewer(seat=1, host=False)
            with pytest.raises(RuntimeError):
                await live_fragment(drawings, table, viewer, "sheet")
            fragment = await live_fragment(drawings, table, viewer, "sheet")
            assert "Bob" in fragment.html
        finally:
            drawings.close()
            tables.close()
            store.close()

    asyncio.run(scenario())
    assert len(calls) == 2


def test_a_new_snapshot_of_the_same_state_is_drawn_again(tmp_path: Path) -> None:
    """The cache follows the table's snapshot, not only its state id: turning the automatic
    passes off keeps the state id and changes the roll entry, so it is drawn anew; a table
    opened again (a new object) gets drawings of its own."""
    templates = create_app(Settings(data_dir=tmp_path)).state.templates

    async def scenario() -> None:
        store = Store.open(tmp_path / "again.sqlite3")
        tables = Tables(store)
        drawings = LiveDrawings(templates)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            host = Viewer(seat=None, host=True)
            first = await live_fragment(drawings, table, host, "table")
            assert await live_fragment(drawings, table, host, "table") is first
            await table.set_auto_pass(False)
            again = await live_fragment(drawings, table, host, "table")
            assert again is not first and again.state_id == first.state_id
            assert not hasattr(table, "render_cache") and not hasattr(table, "sheet_cache")
        finally:
            drawings.close()
            tables.close()
            store.close()

    asyncio.run(scenario())
