"""The game log page opens on the newest LOG_PAGE_ENTRIES entries and links to the older
ones (`?to=`: the last entry a page shows): a 10,000-entry game's log was one 2.5 MB page
(bench/log_page.py, docs/BENCHMARKS.md "Log page"). The whole log is still walked once,
so what a row says (an undo's words, a penalty) does not depend on the page it is on.
Through the real app, on logs stored as a table's devices would have sent them."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.table.access import hash_token
from companion.table.camera_settings import CameraSettings
from companion.table.store import LogEntry, Store
from companion.web.app import create_app
from companion.web.routes.live import LOG_PAGE_ENTRIES, LogWindow, log_window
from companion.web.settings import Settings
from tests.web.helpers import QWIXX_ROLL_7

HTML = {"accept": "text/html"}
ANN_PASS = {"kind": "pass", "player": 0}
BOB_PASS = {"kind": "pass", "player": 1}
TAKEN_BACK = 200  # Bob's white-sum passes taken back and made again


def long_log() -> list[LogEntry]:
    """A 2-player Qwixx log of 408 entries: Ann's colour-step pass (-5) at #4; in turn 2
    Bob passes and takes it back TAKEN_BACK times (#6-#405), then both pass and Bob's
    colour-step pass (-5) is the newest entry (#408)."""
    moves: list[tuple[str, str, dict[str, Any] | None]] = [
        ("move", "camera", QWIXX_ROLL_7),
        ("move", "0", ANN_PASS),
        ("move", "1", BOB_PASS),
        ("move", "0", ANN_PASS),  # Ann's colour step: -5
        ("move", "camera", QWIXX_ROLL_7),
    ]
    moves += [("move", "1", BOB_PASS), ("undo", "1", None)] * TAKEN_BACK
    moves += [("move", "0", ANN_PASS), ("move", "1", BOB_PASS), ("move", "1", BOB_PASS)]
    return [
        LogEntry(seq, f"a{seq}", kind, by, move)  # type: ignore[arg-type]
        for seq, (kind, by, move) in enumerate(moves, start=1)
    ]


def stored_client(tmp_path: Path, log: list[LogEntry], table_id: str = "longlog") -> TestClient:
    """The app over a store holding `log` as table `table_id`, for Ann's phone on the
    network (her device cookie)."""
    store = Store.open(tmp_path / "companion.sqlite3")
    store.create_table(table_id, "LONG01", "qwixx", {"players": 2}, ["Ann", "Bob"], log)
    store.add_device(hash_token("token-ann"), table_id, False, 0)
    store.close()
    settings = Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True))
    phone = TestClient(create_app(settings), client=("192.168.1.23", 50000))
    phone.cookies.set(f"tc_{table_id}", "token-ann")
    return phone


def shown(page: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<tr[^>]*data-seq="(\d+)"', page)]


def row_text(page: str, seq: int) -> str:
    row = re.search(rf'<tr[^>]*data-seq="{seq}".*?</tr>', page, re.S)
    assert row is not None, seq
    return " ".join(re.sub(r"<[^>]+>", " ", row.group(0)).split())


def links(page: str, where: str = "top") -> dict[str, str]:
    """The page's links to other entries, by id (without `-top`), to their addresses."""
    found = re.findall(rf'href="([^"]+)" id="(log-\w+)-{where}"', page)
    return {link_id: href.replace("&amp;", "&") for href, link_id in found}


@pytest.mark.parametrize(
    ("total", "to", "window"),
    [
        (0, None, LogWindow(1, 0, 0)),
        (5, None, LogWindow(1, 5, 5)),
        (LOG_PAGE_ENTRIES, None, LogWindow(1, LOG_PAGE_ENTRIES, LOG_PAGE_ENTRIES)),
        (408, None, LogWindow(209, 408, 408)),
        (408, 208, LogWindow(9, 208, 408)),
        (408, 8, LogWindow(1, 8, 408)),
        (408, 408, LogWindow(209, 408, 408)),
        (408, 409, None),  # past the end: the route sends the newest
    ],
)
def test_a_log_window_holds_at_most_a_pages_entries_up_to_to(
    total: int, to: int | None, window: LogWindow | None
) -> None:
    assert log_window(total, to) == window


def test_the_log_page_opens_on_the_newest_entries_and_links_to_older_ones(
    tmp_path: Path,
) -> None:
    with stored_client(tmp_path, long_log()) as phone:
        newest = phone.get("/t/longlog/log", headers=HTML)
        assert newest.status_code == 200, newest.text[:300]
        assert shown(newest.text) == list(range(209, 409))
        assert "Entries 209–408 of 408, the newest." in newest.text
        assert links(newest.text) == {
            "log-oldest": "/t/longlog/log?to=200",
            "log-older": "/t/longlog/log?to=208",
        }
        assert links(newest.text, "bottom") == links(newest.text)  # under the table too
        # the newest entry's penalty, found by the walk of the whole log
        assert row_text(newest.text, 408).endswith("Bob Pass (no cross), −5 penalty")

        older = phone.get("/t/longlog/log?to=208", headers=HTML)
        assert shown(older.text) == list(range(9, 209))
        assert "Entries 9–208 of 408." in older.text
        assert links(older.text) == {
            "log-older": "/t/longlog/log?to=8",
            "log-newer": "/t/longlog/log",  # 209-408 are the newest
        }
        assert row_text(older.text, 9) == "9 Bob Undid: Pass (no cross)"

        oldest = phone.get("/t/longlog/log?to=8", headers=HTML)
        assert shown(oldest.text) == list(range(1, 9))
        assert "Entries 1–8 of 408." in oldest.text
        assert links(oldest.text) == {
            "log-newer": "/t/longlog/log?to=208",
            "log-newest": "/t/longlog/log",
        }
        assert row_text(oldest.text, 4).endswith("Ann Pass (no cross), −5 penalty")


def test_a_log_page_past_the_end_goes_to_the_newest_and_a_bad_to_names_the_field(
    tmp_path: Path,
) -> None:
    with stored_client(tmp_path, long_log()) as phone:
        past = phone.get("/t/longlog/log?to=409", headers=HTML, follow_redirects=False)
        assert past.status_code == 303 and past.headers["location"] == "/t/longlog/log"
        for bad in ("0", "-3", "ten", "1e3"):
            refused = phone.get(f"/t/longlog/log?to={bad}")
            assert refused.status_code == 422, (bad, refused.text)
            assert "to" in refused.json()["message"].split(":")[0], refused.json()
        stranger = TestClient(phone.app, client=("192.168.1.99", 50000))
        refused = stranger.get("/t/longlog/log?to=8", headers=HTML, follow_redirects=False)
        assert refused.status_code == 303, refused.text[:300]  # no device: the join page
        assert refused.headers["location"] == "/join?why=not_joined"


def test_a_damaged_log_is_paged_too_and_links_to_its_damaged_entry(tmp_path: Path) -> None:
    """The read-only log of a table that cannot be opened (its entry 2 is no longer JSON):
    its newest page does not show entry 2, so its note links to the page that begins
    with it."""
    log = long_log()
    with stored_client(tmp_path, log, "damagedlong") as phone:
        with sqlite3.connect(tmp_path / "companion.sqlite3") as db:
            db.execute('UPDATE actions SET move_json = \'{"kind": "pa\' WHERE seq = 2')
        assert phone.get("/t/damagedlong", headers=HTML).status_code == 409
        newest = phone.get("/t/damagedlong/log", headers=HTML)
        assert newest.status_code == 200, newest.text[:300]
        assert shown(newest.text) == list(range(209, 409))
        assert "its log is shown as stored, read-only" in newest.text
        assert 'href="/t/damagedlong/log?to=201" id="log-damaged-entry">Show entry 2<' in (
            newest.text
        )
        first = phone.get("/t/damagedlong/log?to=201", headers=HTML)
        assert shown(first.text)[:2] == [2, 3] and "data-damaged" in first.text
        past = phone.get("/t/damagedlong/log?to=999", headers=HTML, follow_redirects=False)
        assert past.status_code == 303 and past.headers["location"] == "/t/damagedlong/log"
