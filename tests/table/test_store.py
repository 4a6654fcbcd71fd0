"""The SQLite store: WAL, append-only log with unique action ids, devices."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from companion.cli import build_parser
from companion.table.store import LogEntry, StorageError, Store, _add_join_order
from companion.web.settings import Settings


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store.open(tmp_path / "db" / "games.sqlite3")
    opened.create_table("t1", "ABC234", "qwixx", {"players": 2}, ["Ann", "Bob"])
    return opened


def test_the_store_uses_wal(tmp_path: Path, store: Store) -> None:
    mode = (
        sqlite3.connect(tmp_path / "db" / "games.sqlite3")
        .execute("PRAGMA journal_mode")
        .fetchone()[0]
    )
    assert mode == "wal"


def test_the_log_is_append_only_and_action_ids_are_unique(store: Store) -> None:
    store.append("t1", LogEntry(1, "a1", "move", "camera", {"kind": "roll"}))
    store.append("t1", LogEntry(2, "a2", "undo", "host", None))
    with pytest.raises(sqlite3.IntegrityError):
        store.append("t1", LogEntry(3, "a1", "move", "0", {"kind": "pass"}))
    with pytest.raises(sqlite3.IntegrityError):
        store.append("t1", LogEntry(2, "a3", "move", "0", {"kind": "pass"}))
    assert [(e.seq, e.action_id, e.kind) for e in store.log("t1")] == [
        (1, "a1", "move"),
        (2, "a2", "undo"),
    ]


def test_tables_devices_and_history(store: Store) -> None:
    row = store.table_by_code("ABC234")
    assert row is not None and row.players == ["Ann", "Bob"] and row.finished_at is None
    store.add_device("hash1", "t1", host=True, seat=None)
    store.bind_seat("hash1", 1)
    device = store.device("hash1")
    assert device is not None and device.host and device.seat == 1
    assert store.taken_seats("t1") == {1}
    store.set_finished("t1", {"winners": [1]})
    assert [r.table_id for r in store.tables(finished=True)] == ["t1"]
    store.set_finished("t1", None)  # an undo reopened it
    assert store.tables(finished=True) == []


def write_a_store_with_one_table(path: Path) -> None:
    """A store at `path`, closed, holding table t1 (Qwixx for Ann and Bob)."""
    written = Store.open(path)
    written.create_table("t1", "ABC234", "qwixx", {"players": 2}, ["Ann", "Bob"])
    written.close()


def test_server_settings_are_kept_and_an_older_store_gains_them(tmp_path: Path) -> None:
    """A store written before `server_settings` existed opens, keeps its tables and gains
    the settings table (CREATE IF NOT EXISTS); a setting survives reopening."""
    path = tmp_path / "old.sqlite3"
    write_a_store_with_one_table(path)
    with sqlite3.connect(path) as db:  # as an older version left it
        db.execute("DROP TABLE server_settings")
    store = Store.open(path)
    assert store.server_setting("camera_table") is None
    store.set_server_setting("camera_table", "t1")
    store.set_server_setting("camera_table", "t1")  # again: replaced, not doubled
    store.close()
    again = Store.open(path)
    assert again.server_setting("camera_table") == "t1"
    assert [t.table_id for t in again.tables()] == ["t1"]
    again.close()


def test_settings_stored_together_are_all_kept_or_none(store: Store) -> None:
    """The camera's table and the time it followed it from are one starting point for a
    restart: stored in two steps, a kill between them left the first without the second
    (a restart could hand the camera back to an older table). Here the second write
    fails: the first must not be kept either."""
    path = store.path
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "CREATE TRIGGER refuse_since BEFORE INSERT ON server_settings "
            "WHEN NEW.key = 'since' BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
        )
    with pytest.raises((StorageError, sqlite3.Error)):
        store.set_server_settings({"served": "t1", "since": "12.5"})
    assert store.server_setting("served") is None
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TRIGGER refuse_since")
    store.set_server_settings({"served": "t1", "since": "12.5"})
    assert (store.server_setting("served"), store.server_setting("since")) == ("t1", "12.5")


def test_joins_are_counted_in_order_and_an_older_stores_devices_come_first(
    tmp_path: Path,
) -> None:
    """Each device's join has its place in one count that no clock moves and no removed
    device gives back (SQLite would give a new row the rowid of the newest one deleted); a
    store written before joins were counted gains the column, its devices first (0). The
    first Play again's mark of the count stays when another next game replaces it."""
    path = tmp_path / "old.sqlite3"
    write_a_store_with_one_table(path)
    with sqlite3.connect(path) as db:  # as an older version left it
        db.execute("ALTER TABLE devices DROP COLUMN joined_seq")
        db.execute(
            "INSERT INTO devices (token_hash, table_id, host, seat, created_at)"
            " VALUES ('early', 't1', 1, NULL, 0)"
        )
    store = Store.open(path)
    early = store.device("early")
    assert early is not None and early.joined_seq == 0
    assert store.add_device("ann", "t1", host=False, seat=None) == 1
    assert store.add_device("bob", "t1", host=False, seat=1) == 2
    store.free_seat("t1", 1)  # bob, the newest, is removed
    assert store.add_device("cat", "t1", host=False, seat=None) == 3
    store.create_table("n1", "DEF234", "qwixx", {}, ["Ann"], joins_mark=("t1", "mark"))
    store.add_device("dan", "t1", host=False, seat=None)
    store.create_table("n2", "GHJ234", "qwixx", {}, ["Ann"], joins_mark=("t1", "mark"))
    assert store.table_setting("t1", "mark") == "3"
    assert {h: d.joined_seq for h, d in store.devices("t1").items()} == {
        "early": 0,
        "ann": 1,
        "cat": 3,
        "dan": 4,
    }
    store.close()


def test_an_older_store_another_process_upgraded_meanwhile_still_opens(tmp_path: Path) -> None:
    """The server and a `companion` command opening an older store at once: the second
    looked before the first added `joined_seq`, and its own ALTER TABLE failed "duplicate
    column name", reported as a storage error. The column being there is what it needs."""
    path = tmp_path / "store.sqlite3"
    write_a_store_with_one_table(path)  # the column is there: added by the other process

    class LookedBeforeTheOther:
        """The connection, its look at the devices' columns taken before the other's change."""

        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def execute(self, sql: str, *args: Any) -> Any:
            rows = self.db.execute(sql, *args)
            if sql.startswith("PRAGMA table_info(devices)"):
                return [row for row in rows if row[1] != "joined_seq"]
            return rows

    with closing(sqlite3.connect(path)) as db:
        _add_join_order(LookedBeforeTheOther(db))  # type: ignore[arg-type]
    store = Store.open(path)
    assert store.add_device("ann", "t1", host=False, seat=None) == 1
    store.close()


def test_only_the_servers_own_open_says_where_the_store_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`companion serve` looks into the store for the open tables' codes before the server
    opens it: the terminal says where the store is once, not twice."""
    caplog.set_level("INFO", logger="companion.table.store")
    path = tmp_path / "companion.sqlite3"
    Store.open(path, announce=False).close()
    assert not [r for r in caplog.records if "game store at" in r.getMessage()]
    Store.open(path).close()
    assert len([r for r in caplog.records if "game store at" in r.getMessage()]) == 1


def test_a_full_disk_is_logged_with_the_store_file_once_a_minute_while_it_lasts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: a full disk wrote "game store trouble: database or disk is
    full" once per refused request, without naming the file. Now the first refusal names
    the store file, the log says it again at most once a minute while it lasts (counting
    the refusals between), and says when it is over."""
    path = tmp_path / "companion.sqlite3"
    store = Store.open(path)
    store.create_table("t1", "CODE01", "qwixx", {"players": 2}, ["Ann", "Bob"])
    now = [1000.0]
    store.trouble.clock = lambda: now[0]

    def disk_full(name: str, count: int, sql: str) -> None:
        if sql.startswith("INSERT"):
            raise sqlite3.OperationalError("database or disk is full")

    caplog.set_level("INFO", logger="companion.table.store")
    store.fault_hook = disk_full
    for n in range(7):  # a refused request every 10 s: 0 s, 10 s ... 60 s
        with pytest.raises(StorageError):
            store.add_device(f"refused-{n}", "t1", host=False, seat=None)
        now[0] += 10
    store.fault_hook = None  # room again
    store.add_device("after-1", "t1", host=False, seat=None)
    store.add_device("after-2", "t1", host=False, seat=None)
    trouble = (
        f"game store trouble: the game store {path} cannot grow: the disk is full (database "
        "or disk is full); new actions are refused until it is fixed, and everything stored "
        "so far is kept (said at most once a minute while it lasts"
    )
    assert [r.getMessage() for r in caplog.records] == [
        f"{trouble})",
        f"{trouble}; 5 more refused since the last line)",  # at 60 s
        f"game store {path} works again after 70 s of trouble (0 refused since the last line)",
    ]
    assert [r.levelname for r in caplog.records] == ["ERROR", "ERROR", "INFO"]
    store.close()


def test_the_store_writes_each_action_through_to_the_disk_unless_told_not_to(
    tmp_path: Path,
) -> None:
    """A café's power cut or failing disk loses no acknowledged action by default: FULL
    fsyncs each commit (with NORMAL a disk forced read-only mid-game kept none of 30
    acknowledged actions, docs/RELIABILITY.md); NORMAL only when the owner asks for it, and
    the server's settings and `companion serve` default to FULL as the store does."""
    full, normal = 2, 1  # PRAGMA synchronous's answers
    for asked, expected in ((None, full), ("FULL", full), ("NORMAL", normal)):
        path = tmp_path / f"{asked}.db"
        store = Store.open(path) if asked is None else Store.open(path, asked)
        try:
            assert store._db.execute("PRAGMA synchronous").fetchone()[0] == expected
        finally:
            store.close()
    assert Settings().sqlite_synchronous == "FULL"
    assert build_parser().parse_args(["serve"]).sqlite_synchronous == "FULL"
