"""Long pages (a game's log, its exported record, the history) are built off the event loop
and kept per state, and each client address may ask for them at a bounded rate, like table
creations (issue 25, item 5). How much they hold up other tables is measured by
`bench/abuse.py --only log record history` (docs/RELIABILITY.md), not timed here; here:
the limit answers 429 naming its rule, and a kept page follows the game."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from companion.table.access import hash_token
from companion.table.store import LogEntry, Store
from tests.reliability.conftest import ThreadServer, thread_settings
from tests.web.helpers import QWIXX_ROLL_7

HTML = {"accept": "text/html"}


def test_long_pages_are_limited_per_client_like_creations(tmp_path: Path) -> None:
    settings = thread_settings(tmp_path, read_burst=3, read_rate_per_s=0.01)
    with ThreadServer(settings) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        table_id = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()[
            "table_id"
        ]
        pages = [f"/t/{table_id}/log", f"/api/tables/{table_id}/record", "/history"]
        assert [host.get(path, headers=HTML).status_code for path in pages] == [200, 200, 200]
        for path in pages:  # the burst is spent: each refused, with when to come back
            refused = host.get(path, headers=HTML)
            assert refused.status_code == 429, (path, refused.status_code)
            assert int(refused.headers["retry-after"]) >= 1
            # a page, or JSON naming read_rate
            assert "too many pages asked for" in refused.text.lower()
        # everything else still answers
        assert host.get(f"/api/tables/{table_id}/state").status_code == 200
        assert host.get(f"/t/{table_id}", headers=HTML).status_code == 200


def test_a_kept_log_page_and_record_follow_the_game(tmp_path: Path) -> None:
    with ThreadServer(thread_settings(tmp_path)) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        created = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()
        table_id = created["table_id"]
        log, record = f"/t/{table_id}/log", f"/api/tables/{table_id}/record"
        first = host.get(log, headers=HTML).text
        assert first == host.get(log, headers=HTML).text  # kept: the same page
        assert host.get(record).json()["actions"] == []
        rolled = host.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": "roll-00001", "move": QWIXX_ROLL_7},
        )
        assert rolled.status_code == 200, rolled.text
        second = host.get(log, headers=HTML).text
        assert second != first and "dice" in second
        assert [a["by"] for a in host.get(record).json()["actions"]] == ["host"]


def test_the_log_page_decodes_each_stored_move_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log page walks its log once (`replay_log`): each stored move decoded once, the
    state it met and its penalty found on that walk. It replayed the log, then decoded every
    move again to name its penalty and again for each row's words (and an undo's row once
    more): 3-4 decodes a move, 0.33-0.45 s of CPU a build on 10,000 entries
    (bench/log_page.py, docs/BENCHMARKS.md). Ann's penalty pass, taken back and made again,
    past the host's undo of Bob's cross after hers."""
    from companion.rules.qwixx import GAME

    pass_0 = {"kind": "pass", "player": 0}
    moves = [
        ("camera", QWIXX_ROLL_7),
        ("0", pass_0),
        ("1", {"kind": "pass", "player": 1}),
        ("0", pass_0),  # the colour step: Ann crossed nothing, -5
    ]
    log = [LogEntry(n + 1, f"a{n + 1}", "move", by, move) for n, (by, move) in enumerate(moves)]
    log += [LogEntry(5, "a5", "undo", "0", None), LogEntry(6, "a6", "move", "0", pass_0)]
    store = Store.open(tmp_path / "companion.sqlite3")
    store.create_table("logonce", "LOG001", "qwixx", {"players": 2}, ["Ann", "Bob"], log)
    store.add_device(hash_token("token-logonce"), "logonce", True, None)
    store.close()
    decoded: list[object] = []
    decode = type(GAME).move_from_json

    def counted(game: object, data: object) -> object:
        decoded.append(data)
        return decode(game, data)  # type: ignore[arg-type]

    with ThreadServer(thread_settings(tmp_path)) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        host.cookies.set("tc_logonce", "token-logonce")
        assert host.get("/api/tables/logonce/state").status_code == 200  # opened (replayed)
        monkeypatch.setattr(type(GAME), "move_from_json", counted)
        page = host.get("/t/logonce/log", headers=HTML)
    assert page.status_code == 200, page.text[:300]
    assert "Undid: Pass (−5 penalty)" in page.text  # the penalty still named
    assert len(decoded) == 5, decoded  # the five stored moves, once each
