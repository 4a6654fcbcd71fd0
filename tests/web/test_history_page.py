"""The history's finished games, through the real app, HISTORY_GAMES at a time (the latest
finished first): the server's own screen (loopback) reads one page of them through an
index, a device on another machine only the tables it holds a device cookie for; never
every stored table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.web.app import create_app
from companion.web.deps import cookie_name
from companion.web.routes.pages import HISTORY_GAMES
from companion.web.settings import Settings
from tests.web.helpers import (
    QWIXX_ROLL_7,
    act,
    create_table,
    every_page_of,
    refuse_reading_every_table,
    stored_tables,
)


def _listed(page: str) -> list[str]:
    return re.findall(r'<a href="/t/([^"/]+)">Final sheets</a>', page)


def test_the_history_lists_the_latest_finished_games_and_pages_on_to_older_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history read every finished table's row on each request (70-110 ms a request
    at 3,000 finished games with its page kept, 0.5 s to build it): it lists HISTORY_GAMES, the latest finished first
    (not the latest started), says how many there are and links to the older ones, reading
    only the rows it shows; each page is kept apart (long_pages: the page's place is in its
    key), and a game finished since shows on the first page and in the count."""
    latest_first = stored_tables(tmp_path, 2 * HISTORY_GAMES + 5, finished=True)
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        refuse_reading_every_table(app, monkeypatch)
        pages = every_page_of(local, "/history")
        assert all(f"of {len(latest_first)}, the latest finished first" in p for p in pages)
        listed = [_listed(page) for page in pages]
        assert [len(p) for p in listed] == [HISTORY_GAMES, HISTORY_GAMES, 5]
        assert [t for p in listed for t in p] == latest_first  # never the running one
        assert 'href="/history?older=30" id="newer-games"' in pages[-1]
        beyond = local.get("/history", params={"older": 1000}).text
        assert _listed(beyond) == [] and f"No more games: {len(latest_first)} in all" in beyond

        table = create_table(local, "qwixx", ["Zoe", "Max"], {"players": 2})
        assert local.post(f"/api/tables/{table['table_id']}/end").status_code == 200
        assert _listed(local.get("/history").text)[0] == table["table_id"]
        beyond = local.get("/history", params={"older": 1000}).text
        assert f"No more games: {len(latest_first) + 1} in all" in beyond


def test_another_device_lists_only_the_finished_games_its_cookies_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device elsewhere sees its own finished games among many without the server reading
    every stored table (a lookup per cookie); a cookie without a valid token shows none."""
    stored = stored_tables(tmp_path, 50, finished=True)
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:  # TestClient's address is not loopback: another device
        ours = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        assert host.post(f"/api/tables/{ours['table_id']}/end").status_code == 200
        host.cookies.set(cookie_name(stored[0]), "not-a-device-token")
        refuse_reading_every_table(app, monkeypatch)
        page = host.get("/history").text
        assert _listed(page) == [ours["table_id"]]
        assert "history-more" not in page  # all of them are shown
        assert _listed(TestClient(app).get("/history").text) == []  # a stranger sees none


def _winners(page: str) -> list[str]:
    return re.findall(r'<li class="winner">([^:<]+):', page)


def test_a_history_entry_put_right_in_its_place_shows_at_once(tmp_path: Path) -> None:
    """Opening a table may put its history entry right without moving it (a host's end an
    older server stored without winners gets the game's own: Tables._load); a history page
    kept from before showed the old winners while the entry kept its finishing time."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        tid = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        rolled = act(host, tid, QWIXX_ROLL_7, "roll-0001")
        assert rolled.status_code == 200, rolled.text
        bobs = {"kind": "cross", "player": 1, "colour": "red", "number": 7}
        crossed = act(host, tid, bobs, "bob-cross-1")
        assert crossed.status_code == 200, crossed.text
        assert host.post(f"/api/tables/{tid}/end").status_code == 200
        assert _winners(host.get("/history").text) == ["Bob"]
        store = host.app.state.tables.store  # type: ignore[attr-defined]
        row = store.table(tid)
        store.set_summary(tid, row.summary | {"winners": [0]})  # a changed entry, in place
        assert store.table(tid).finished_at == row.finished_at
        assert _winners(host.get("/history").text) == ["Ann"]


def test_a_device_elsewhere_is_told_its_history_lists_only_the_games_it_joined(
    tmp_path: Path,
) -> None:
    """A newcomer's phone that joined nothing read "No finished games yet" while the server's
    screen listed the evening's games: the page says whose games it lists."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        table = create_table(local, "qwixx", ["Ann", "Bob"], {"players": 2})
        assert local.post(f"/api/tables/{table['table_id']}/end").status_code == 200
        on_the_server = local.get("/history").text
        assert _listed(on_the_server) == [table["table_id"]]
        assert 'id="history-scope"' not in on_the_server  # it lists every game
        page = TestClient(app).get("/history").text  # not loopback: another device
        assert _listed(page) == []
        assert (
            '<p class="hint" id="history-scope">The games this device joined; the computer '
            "running the companion lists every game.</p>" in page
        )
