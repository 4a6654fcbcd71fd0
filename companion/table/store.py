"""Durable games: one SQLite file (WAL) holding every table, its devices, and an append-only
log of accepted actions per table. An action is committed here BEFORE it is acknowledged;
restarting the server replays each log through the engine (`Session`), so every acknowledged
action survives a crash and none is applied twice (each log entry carries the client's
action id, unique per table).

The store is synchronous and thread-safe (one connection behind a lock); the table layer
calls it from a worker thread so the event loop never waits on the disk.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from companion.rules.base import Game, Move, Reason, Rejection
from companion.table.text import printable

logger = logging.getLogger(__name__)

# the listings' newest first (Store.newest_tables, tables_among): the running tables by their
# start (their finished_at is NULL alike), the finished ones by their finish; the index
# tables_by_finish reads them in this order
_RUNNING = "finished_at IS NULL"
_FINISHED = "finished_at IS NOT NULL"
_NEWEST_FIRST = "ORDER BY finished_at DESC, created_at DESC"

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    table_id     TEXT PRIMARY KEY,
    code         TEXT NOT NULL UNIQUE,
    game         TEXT NOT NULL,
    options_json TEXT NOT NULL,
    players_json TEXT NOT NULL,
    created_at   REAL NOT NULL,
    finished_at  REAL,
    summary_json TEXT
);
CREATE TABLE IF NOT EXISTS actions (
    table_id   TEXT NOT NULL REFERENCES tables(table_id),
    seq        INTEGER NOT NULL,
    action_id  TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('move', 'undo')),
    by         TEXT NOT NULL,
    move_json  TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (table_id, seq),
    UNIQUE (table_id, action_id)
);
CREATE TABLE IF NOT EXISTS devices (
    token_hash TEXT PRIMARY KEY,
    table_id   TEXT NOT NULL REFERENCES tables(table_id),
    host       INTEGER NOT NULL,
    seat       INTEGER,
    created_at REAL NOT NULL,
    joined_seq INTEGER
);
CREATE INDEX IF NOT EXISTS devices_by_table ON devices(table_id);
-- the start page's newest running games and the history's latest finished ones
-- (Store.newest_tables): a bounded read, however many tables are stored; an older store gains
-- it when opened
CREATE INDEX IF NOT EXISTS tables_by_finish ON tables(finished_at, created_at);
-- the live table (companion/table/roll_intake.py): a camera roll's photo beside its action (by
-- the action id, which an undo never reuses), and small per-table settings
CREATE TABLE IF NOT EXISTS action_photos (
    table_id   TEXT NOT NULL REFERENCES tables(table_id),
    action_id  TEXT NOT NULL,
    jpeg       BLOB NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (table_id, action_id)
);
CREATE TABLE IF NOT EXISTS table_settings (
    table_id TEXT NOT NULL REFERENCES tables(table_id),
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (table_id, key)
);
-- settings of the whole server, not of one table (e.g. which table the camera is attached
-- to); created on first use, so an older store gains it when opened
CREATE TABLE IF NOT EXISTS server_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


class StorageError(Exception):
    """The game store cannot be written (or read): `problem` is one of read_only,
    disk_full, corrupt, io. The web layer answers 503 with this message and refuses new
    actions; what was committed before stays in the file."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem
        self.message = message


def storage_error(exc: sqlite3.Error, path: Path | str) -> StorageError:
    """Name the trouble behind an SQLite error in plain words."""
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text or "read only" in text:
        problem, words = "read_only", "is read-only"
    elif "full" in text:
        problem, words = "disk_full", "cannot grow: the disk is full"
    elif "not a database" in text or "malformed" in text or "corrupt" in text:
        problem, words = "corrupt", "is damaged (corrupt)"
    elif not _is_writable(Path(path)):  # e.g. "unable to open database file" on a ro mount
        problem, words = "read_only", "is read-only"
    else:
        problem, words = "io", "cannot be written or read"
    return StorageError(
        problem,
        f"the game store {path} {words} ({exc}); new actions are refused until it is "
        "fixed, and everything stored so far is kept",
    )


# how often the log says storage trouble while it lasts: a full disk refuses every request
# (every tap of every tablet), and a line per request hid everything else in the log
TROUBLE_LOG_EVERY_S = 60.0


class TroubleLog:
    """The server log's lines on storage trouble: the first refusal at once, naming the
    store file; then at most one line every `every_s` while it lasts, counting the
    refusals between; and one line when a transaction commits again (it is over).
    Called under the store's lock. `clock`: seconds, monotonic (tests pass their own)."""

    def __init__(
        self,
        path: Path | str,
        clock: Callable[[], float] = time.monotonic,
        every_s: float = TROUBLE_LOG_EVERY_S,
    ) -> None:
        self.path = path
        self.clock = clock
        self.every_s = every_s
        self._since: float | None = None  # when the trouble began; None: none now
        self._said_at: float | None = None  # when the log last said it
        self._unsaid = 0  # refusals since that line

    def failed(self, error: StorageError) -> None:
        """One request refused with `error`."""
        now = self.clock()
        if self._since is None:
            self._since = now
        if self._said_at is not None and now - self._said_at < self.every_s:
            self._unsaid += 1
            return
        more = f"; {self._unsaid} more refused since the last line" if self._unsaid else ""
        logger.error(
            "game store trouble: %s (said at most once a minute while it lasts%s)",
            error.message,
            more,
        )
        self._said_at, self._unsaid = now, 0

    def worked(self) -> None:
        """A transaction committed: trouble there was is over (said when it was said)."""
        if self._since is None:
            return
        if self._said_at is not None and self._said_at >= self._since:
            logger.info(
                "game store %s works again after %.0f s of trouble (%d refused since the "
                "last line)",
                self.path,
                self.clock() - self._since,
                self._unsaid,
            )
        self._since, self._unsaid = None, 0


def _is_writable(path: Path) -> bool:
    """Whether the store file (or, before it exists, its folder) may be written."""
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK) and os.access(path.parent, os.W_OK)


@dataclass(frozen=True, slots=True)
class KeptAfterRemoval:
    """What stays of a removed table (Store.remove_table): settings of another table
    `table_id` (the game that played it again) and of the server."""

    table_id: str
    table_settings: Mapping[str, str]
    server_settings: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class TableRow:
    """A table's header as stored."""

    table_id: str
    code: str
    game: str
    options: dict[str, Any]
    players: list[str]
    created_at: float
    finished_at: float | None
    summary: dict[str, Any] | None
    problem: str | None = None  # why the stored header could not be read, if it could not


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One accepted action: a move (`move` is its JSON) or an undo. `seq` starts at 1 and
    equals the session's state id after the entry is applied. `damage`: why a move's
    stored text could not be read (a damaged file: not JSON, or no JSON object), its
    `move` then None."""

    seq: int
    action_id: str
    kind: Literal["move", "undo"]
    by: str
    move: dict[str, Any] | None
    damage: str | None = None

    def move_in(self, game: Game[object, object]) -> Move:
        """This move entry's move as `game` reads it; raises Rejection (MALFORMED) where
        the stored move is missing, unreadable or no move of the game."""
        if self.damage is not None:
            raise Rejection(Reason.MALFORMED, "stored_move", self.damage)
        if self.move is None:
            raise Rejection(Reason.MALFORMED, "move", "a move entry without its move")
        return game.move_from_json(self.move)


def stored_move(text: str | None) -> tuple[dict[str, object] | None, str | None]:
    """A log entry's stored move text read: (its JSON object, None), or (None, why it
    cannot be read) for a damaged file's, which the log page names and the table's open
    refuses (it raised here: every page of the table answered 500)."""
    if text is None:
        return None, None
    try:
        move = json.loads(text)
    except ValueError:
        return None, f"its stored move is not JSON ({printable(text[:40])!r})"
    if not isinstance(move, dict):
        return None, "its stored move is not a JSON object"
    return move, None


def implied_seqs(log: Sequence[LogEntry]) -> set[int]:
    """The entries of a log that a throw implied (Table.act_throw): the moves stored just
    before their roll, each with the roll's action id and its own seq as its id (`R-7`
    before roll `R`). An undo of the roll takes them back with it (Session.undo)."""
    implied: set[int] = set()
    for index, entry in enumerate(log):
        if entry.kind != "move":
            continue
        back = index - 1
        while back >= 0 and log[back].action_id == f"{entry.action_id}-{log[back].seq}":
            implied.add(log[back].seq)
            back -= 1
    return implied


@dataclass(frozen=True, slots=True)
class Finish:
    """A change of a table's place in the history, committed in the same transaction as
    the action that made it: the `summary` of a game that has ended, or None for a game an
    undo reopened."""

    summary: dict[str, Any] | None


# (transaction, statement index, SQL): called before every statement of a transaction
# (BEGIN is 0, COMMIT the last) and once after its COMMIT with "" as the SQL. The fault
# tests kill the process there, or raise sqlite3.OperationalError (not after COMMIT: the
# caller would be told of a failure that did not happen)
FaultHook = Callable[[str, int, str], None]


class _Statements:
    """A transaction's statements, each announced to the fault hook before it runs."""

    def __init__(self, db: sqlite3.Connection, name: str, hook: FaultHook | None) -> None:
        self._db, self._name, self._hook = db, name, hook
        self.count = 0

    def _announce(self, sql: str) -> None:
        if self._hook is not None:
            self._hook(self._name, self.count, sql)
        self.count += 1

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
        self._announce(sql)
        return self._db.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[tuple[object, ...]]) -> sqlite3.Cursor:
        self._announce(sql)
        return self._db.executemany(sql, rows)


_SET_TABLE_SETTING = "INSERT OR REPLACE INTO table_settings (table_id, key, value) VALUES (?, ?, ?)"
_INSERT_ACTION = (
    "INSERT INTO actions (table_id, seq, action_id, kind, by, move_json, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


# a stored move's JSON when it may be a roll (it names one), else NULL: the dice counts
# read only these (dice.roll_of checks the kind)
_ROLL_JSON = "CASE WHEN move_json LIKE '%\"roll\"%' THEN move_json END"


# a log entry as stored: (seq, action_id, kind, by, move JSON text or None); an import's
# log arrives so from the import process, encoded there (records.plan_import)
EncodedEntry = tuple[int, str, str, str, str | None]


def encoded(entry: LogEntry | EncodedEntry) -> EncodedEntry:
    if isinstance(entry, tuple):
        return entry
    move = json.dumps(entry.move) if entry.move is not None else None
    return (entry.seq, entry.action_id, entry.kind, entry.by, move)


def _action_row(table_id: str, entry: LogEntry | EncodedEntry, now: float) -> tuple[object, ...]:
    return (table_id, *encoded(entry), now)


@dataclass(frozen=True, slots=True)
class Device:
    """A browser that holds a token for a table: the host's, and/or one bound to a seat.
    `joined_seq`: its place in the order of every device's join (Store.add_device; 0 for
    one stored before the store counted joins)."""

    table_id: str
    host: bool
    seat: int | None
    joined_seq: int = 0


# server_settings: how many devices ever joined (each join counts it up, in its own
# transaction): the order of joins, which no clock moves (a Pi without a clock of its own
# steps its time when it finds the network) and no removed device lets be used again
# (SQLite may give a new row the rowid of the newest one deleted)
DEVICE_JOINS_KEY = "device_joins"
_COUNT_JOIN = (
    "INSERT INTO server_settings (key, value) VALUES (?, '1')"
    " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)


def _add_join_order(db: sqlite3.Connection) -> None:
    """A store made before joins were counted gains the devices' `joined_seq` (NULL
    for the devices it holds: they joined before any count)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(devices)")}
    if "joined_seq" in columns:
        return
    try:
        db.execute("ALTER TABLE devices ADD COLUMN joined_seq INTEGER")
    except sqlite3.OperationalError as exc:
        # another process (the server and a `companion` command opening the store at
        # once) added it between the look and the change: the store has what it needs
        if "duplicate column name" not in str(exc):
            raise


def _joins_so_far(db: _Statements) -> int:
    row = db.execute("SELECT value FROM server_settings WHERE key = ?", (DEVICE_JOINS_KEY,))
    found = row.fetchone()
    return 0 if found is None else int(found[0])


class Store:
    """The SQLite game store. Open with `Store.open(path)`; close with `close()`."""

    def __init__(self, connection: sqlite3.Connection, path: Path | str = "") -> None:
        self._db = connection
        self._lock = threading.Lock()
        self.path = path
        self.fault_hook: FaultHook | None = None  # tests only (tests/reliability)
        self.trouble = TroubleLog(path)  # the log's lines on storage trouble
        # counts the writes that may change which tables are running (one created, ended,
        # reopened or removed), counted once they are done or failed: an answer read
        # after taking the count holds while the count stays (CameraFeed.follows_next,
        # asked on every open page's camera poll)
        self.running_changes = 0
        self._count_lock = threading.Lock()  # writes on several threads count each

    @classmethod
    def open(cls, path: Path, synchronous: str = "FULL", announce: bool = True) -> Store:
        """Open (or create) the store; raises StorageError naming the trouble when the
        file is read-only, damaged or on a full disk (the file is left as it was).
        `announce`: log where it is (the server's own open does; a quick look does not)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a committed action survives the process being killed (the WAL
            # is written before COMMIT returns); FULL also fsyncs it, surviving a power cut
            # or a disk that fails mid-game (with NORMAL a disk forced read-only kept none
            # of 30 acknowledged actions: docs/RELIABILITY.md), so FULL is the default
            db.execute(f"PRAGMA synchronous={'NORMAL' if synchronous == 'NORMAL' else 'FULL'}")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(SCHEMA)
            _add_join_order(db)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise storage_error(exc, path) from exc
        if announce:
            logger.info("game store at %s", path)
        return cls(db, path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _guarded(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; SQLite trouble (other than a broken constraint,
        which callers handle) comes out as StorageError."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.IntegrityError:
                raise
            except sqlite3.DatabaseError as exc:
                error = storage_error(exc, self.path)
                self.trouble.failed(error)
                raise error from exc

    @contextmanager
    def _transaction(self, name: str) -> Iterator[_Statements]:
        """One transaction: everything its statements write is kept, or none of it."""
        with self._guarded() as db:
            statements = _Statements(db, name, self.fault_hook)
            statements.execute("BEGIN IMMEDIATE")
            try:
                yield statements
                statements.execute("COMMIT")
                self.trouble.worked()
            except BaseException:
                # a failed COMMIT (disk full, read-only) may leave the transaction open;
                # close it so the next action does not meet "transaction within transaction"
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise
            if self.fault_hook is not None:
                self.fault_hook(name, statements.count, "")

    @contextmanager
    def _changing_running(self) -> Iterator[None]:
        """A write that may change which tables are running: `running_changes` counts it
        once it is over (committed, or failed and rolled back)."""
        try:
            yield
        finally:
            with self._count_lock:
                self.running_changes += 1

    # -- tables -------------------------------------------------------------------------
    def create_table(
        self,
        table_id: str,
        code: str,
        game: str,
        options: dict[str, Any],
        players: list[str],
        seed_log: Sequence[LogEntry | EncodedEntry] = (),
        summary: dict[str, Any] | None = None,
        settings: Mapping[str, str] | None = None,
        pointed_from: Sequence[tuple[str, str]] = (),
        joins_mark: tuple[str, str] | None = None,
    ) -> None:
        """Insert a table and (for an imported record) its first log entries and, when that
        game has ended, its history entry (`summary`), its table settings, and the settings
        of other tables that point to it (`pointed_from`: (table id, key), set to this
        table's id: the finished game's link to the game that plays it again), all in one
        transaction: no table is stored without the link that leads to it. `joins_mark`:
        (table id, key), a setting given the number of devices joined so far (the order of
        joins: Device.joined_seq) in the same transaction, unless it has one already (the
        first Play again's stays when another next game replaces the first)."""
        now = time.time()
        with self._changing_running(), self._transaction("create_table") as db:
            db.execute(
                "INSERT INTO tables (table_id, code, game, options_json, players_json, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (table_id, code, game, json.dumps(options), json.dumps(players), now),
            )
            if seed_log:  # one statement for the whole log: an import's thousand rows
                db.executemany(_INSERT_ACTION, (_action_row(table_id, e, now) for e in seed_log))
            if summary is not None:
                self._set_finished(db, table_id, Finish(summary), now)
            rows = [(table_id, key, value) for key, value in (settings or {}).items()]
            rows += [(other, key, table_id) for other, key in pointed_from]
            for row in rows:
                db.execute(_SET_TABLE_SETTING, row)
            if joins_mark is not None:
                db.execute(
                    "INSERT OR IGNORE INTO table_settings (table_id, key, value) VALUES (?, ?, ?)",
                    (*joins_mark, str(_joins_so_far(db))),
                )

    def remove_table(self, table_id: str, kept: KeptAfterRemoval | None = None) -> None:
        """Delete a table and everything stored for it, in one transaction; with `kept`,
        what another table and the server keep of it, stored in the same transaction."""
        with self._changing_running(), self._transaction("remove_table") as db:
            for name in ("action_photos", "table_settings", "devices", "actions", "tables"):
                db.execute(f"DELETE FROM {name} WHERE table_id = ?", (table_id,))  # noqa: S608
            if kept is not None:
                rows = [(kept.table_id, key, value) for key, value in kept.table_settings.items()]
                db.executemany(_SET_TABLE_SETTING, rows)
                db.executemany(
                    "INSERT OR REPLACE INTO server_settings (key, value) VALUES (?, ?)",
                    list(kept.server_settings.items()),
                )

    def code_in_use(self, code: str) -> bool:
        with self._guarded():
            row = self._db.execute("SELECT 1 FROM tables WHERE code = ?", (code,)).fetchone()
        return row is not None

    def table_by_code(self, code: str) -> TableRow | None:
        with self._guarded():
            row = self._db.execute("SELECT * FROM tables WHERE code = ?", (code,)).fetchone()
        return _table_row(row)

    def table(self, table_id: str) -> TableRow | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT * FROM tables WHERE table_id = ?", (table_id,)
            ).fetchone()
        return _table_row(row)

    def tables(self, finished: bool | None = None) -> list[TableRow]:
        """Every table, newest first; only finished (or only running) ones when asked."""
        query = "SELECT * FROM tables"
        if finished is True:
            query += " WHERE finished_at IS NOT NULL"
        elif finished is False:
            query += " WHERE finished_at IS NULL"
        query += " ORDER BY created_at DESC"
        with self._guarded():
            rows = self._db.execute(query).fetchall()
        return [r for r in (_table_row(row) for row in rows) if r is not None]

    def newest_tables(
        self, finished: bool, limit: int, skip: int = 0
    ) -> tuple[list[TableRow], int]:
        """The running (or the finished) tables, newest first (`_NEWEST_FIRST`), `skip` of
        them passed over and at most `limit` read (the index tables_by_finish: the rows shown
        are the rows read), and how many such tables there are."""
        where = _FINISHED if finished else _RUNNING
        with self._guarded():
            count = f"SELECT COUNT(*) FROM tables WHERE {where}"  # noqa: S608
            total = self._db.execute(count).fetchone()[0]
            rows = self._db.execute(
                f"SELECT * FROM tables WHERE {where} {_NEWEST_FIRST} LIMIT ? OFFSET ?",  # noqa: S608
                (limit, skip),
            ).fetchall()
        return [r for r in (_table_row(row) for row in rows) if r is not None], int(total)

    def running_tables_since(
        self, created_at_least: float, limit: int, skip: int = 0
    ) -> list[TableRow]:
        """The running tables created at `created_at_least` or later, newest first, `skip`
        passed over and at most `limit` read (the index tables_by_finish): the camera's
        follower asks every second, and the newest open table is nearly always the first."""
        with self._guarded():
            rows = self._db.execute(
                f"SELECT * FROM tables WHERE {_RUNNING} AND created_at >= ?"  # noqa: S608
                " ORDER BY created_at DESC LIMIT ? OFFSET ?",
                (created_at_least, limit, skip),
            ).fetchall()
        return [r for r in (_table_row(row) for row in rows) if r is not None]

    def tables_among(self, table_ids: Sequence[str], finished: bool) -> list[TableRow]:
        """The running (or the finished) tables of `table_ids` (a browser's cookies name
        them), newest first (`_NEWEST_FIRST`): one lookup by key each, whatever else is
        stored."""
        if not table_ids:
            return []
        marks = ", ".join("?" * len(table_ids))
        where = _FINISHED if finished else _RUNNING
        query = (
            f"SELECT * FROM tables WHERE table_id IN ({marks}) AND {where}"  # noqa: S608
            f" {_NEWEST_FIRST}"
        )
        with self._guarded():
            rows = self._db.execute(query, tuple(table_ids)).fetchall()
        return [r for r in (_table_row(row) for row in rows) if r is not None]

    def set_finished(self, table_id: str, summary: dict[str, Any] | None) -> None:
        """Mark a table finished with its final `summary` (scores, winners), or running
        again (None: an undo reopened it)."""
        with self._changing_running(), self._transaction("set_finished") as db:
            self._set_finished(db, table_id, Finish(summary), time.time())

    def set_summary(self, table_id: str, summary: dict[str, object]) -> None:
        """Put a finished table's history entry right in place: its `summary` replaced, its
        time of finishing (its place in the history) kept; a running table is left alone."""
        with self._transaction("set_summary") as db:
            db.execute(
                "UPDATE tables SET summary_json = ? WHERE table_id = ? AND finished_at IS NOT NULL",
                (json.dumps(summary), table_id),
            )

    @staticmethod
    def _set_finished(db: _Statements, table_id: str, finish: Finish, now: float) -> None:
        summary = finish.summary
        db.execute(
            "UPDATE tables SET finished_at = ?, summary_json = ? WHERE table_id = ?",
            (
                now if summary is not None else None,
                json.dumps(summary) if summary is not None else None,
                table_id,
            ),
        )

    # -- the action log -----------------------------------------------------------------
    def append(self, table_id: str, entry: LogEntry, finish: Finish | None = None) -> None:
        """Commit one accepted action (see `append_all`)."""
        self.append_all(table_id, [entry], finish)

    def append_all(
        self, table_id: str, entries: Sequence[LogEntry], finish: Finish | None = None
    ) -> None:
        """Commit accepted actions that make one change (an action; a throw and the moves it
        implies) and, when they ended the game or reopened it, the change of the table's
        history entry, in one transaction: a crash keeps all of it or none. Raises
        sqlite3.IntegrityError when a seq or action id is already taken (the caller checks
        first, under the table's lock)."""
        now = time.time()
        changing = self._changing_running() if finish is not None else contextlib.nullcontext()
        with changing, self._transaction("append") as db:
            for entry in entries:
                db.execute(_INSERT_ACTION, _action_row(table_id, entry, now))
            if finish is not None:
                self._set_finished(db, table_id, finish, now)

    def log(self, table_id: str, rolls_only: bool = False) -> list[LogEntry]:
        """A table's log in order (`rolls_only`: see `logs`)."""
        move = _ROLL_JSON if rolls_only else "move_json"
        with self._guarded():
            rows = self._db.execute(
                f"SELECT seq, action_id, kind, by, {move} FROM actions"  # noqa: S608
                " WHERE table_id = ? ORDER BY seq",
                (table_id,),
            ).fetchall()
        return [
            LogEntry(seq, action_id, kind, by, *stored_move(move))
            for seq, action_id, kind, by, move in rows
        ]

    def last_action_at(self, table_id: str, not_from: str = "") -> float | None:
        """When the newest action of a table was stored (time.time()), leaving out those
        whose action id starts with `not_from` (an import's: they came in a record, not
        from play at this table); None without one."""
        with self._guarded():
            row = self._db.execute(
                "SELECT MAX(created_at) FROM actions WHERE table_id = ?"
                " AND (? = '' OR substr(action_id, 1, ?) != ?)",
                (table_id, not_from, len(not_from), not_from),
            ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    # -- devices ------------------------------------------------------------------------
    def add_device(self, token_hash: str, table_id: str, host: bool, seat: int | None) -> int:
        """Store a device; its place in the order of joins (Device.joined_seq)."""
        with self._transaction("add_device") as db:
            db.execute(_COUNT_JOIN, (DEVICE_JOINS_KEY,))
            joined_seq = _joins_so_far(db)
            db.execute(
                "INSERT INTO devices (token_hash, table_id, host, seat, created_at, joined_seq)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (token_hash, table_id, int(host), seat, time.time(), joined_seq),
            )
        return joined_seq

    def device(self, token_hash: str) -> Device | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT table_id, host, seat, COALESCE(joined_seq, 0) FROM devices"
                " WHERE token_hash = ?",
                (token_hash,),
            ).fetchone()
        if row is None:
            return None
        return Device(table_id=row[0], host=bool(row[1]), seat=row[2], joined_seq=row[3])

    def device_joined_at(self, token_hash: str) -> float | None:
        """When the device joined its table (time.time()), None when there is no such device."""
        with self._guarded():
            row = self._db.execute(
                "SELECT created_at FROM devices WHERE token_hash = ?", (token_hash,)
            ).fetchone()
        return None if row is None else float(row[0])

    def devices(self, table_id: str) -> dict[str, Device]:
        """Every device of a table, by token hash."""
        with self._guarded():
            rows = self._db.execute(
                "SELECT token_hash, host, seat, COALESCE(joined_seq, 0) FROM devices"
                " WHERE table_id = ?",
                (table_id,),
            ).fetchall()
        return {h: Device(table_id, bool(host), seat, seq) for h, host, seat, seq in rows}

    def seat_holder(self, table_id: str, seat: int) -> str | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT token_hash FROM devices WHERE table_id = ? AND seat = ?", (table_id, seat)
            ).fetchone()
        return row[0] if row else None

    def bind_seat(self, token_hash: str, seat: int | None) -> None:
        """Bind a device to a seat (None frees it); one device per seat is the caller's
        check, made under the table's lock."""
        with self._transaction("bind_seat") as db:
            db.execute("UPDATE devices SET seat = ? WHERE token_hash = ?", (seat, token_hash))

    def free_seat(self, table_id: str, seat: int) -> None:
        """Free a seat: the player's device that held it loses its token (it joins again
        with the code, as a new device); the host's device, if it sat there, only stands up."""
        with self._transaction("free_seat") as db:
            db.execute(
                "DELETE FROM devices WHERE table_id = ? AND seat = ? AND host = 0", (table_id, seat)
            )
            db.execute(
                "UPDATE devices SET seat = NULL WHERE table_id = ? AND seat = ?", (table_id, seat)
            )

    def forget_oldest_viewer(self, table_id: str) -> str | None:
        """Forget the table's oldest device that holds no seat and is no host's (a browser
        that joined and never sat, or joined again without its cookie), to make room for a
        new one; its token hash, or None when every device holds a seat or is a host's."""
        with self._transaction("forget_oldest_viewer") as db:
            row = db.execute(
                "SELECT token_hash FROM devices WHERE table_id = ? AND seat IS NULL AND host = 0"
                " ORDER BY created_at LIMIT 1",
                (table_id,),
            ).fetchone()
            if row is not None:
                db.execute("DELETE FROM devices WHERE token_hash = ?", (row[0],))
        return None if row is None else str(row[0])

    def taken_seats(self, table_id: str) -> set[int]:
        with self._guarded():
            rows = self._db.execute(
                "SELECT seat FROM devices WHERE table_id = ? AND seat IS NOT NULL", (table_id,)
            ).fetchall()
        return {r[0] for r in rows}

    # -- the live table: roll photos and per-table settings ------------------------------
    def add_photo(self, table_id: str, action_id: str, jpeg: bytes) -> None:
        """Keep the photo of the table behind the camera roll `action_id`."""
        with self._transaction("add_photo") as db:
            db.execute(
                "INSERT OR REPLACE INTO action_photos (table_id, action_id, jpeg, created_at)"
                " VALUES (?, ?, ?, ?)",
                (table_id, action_id, sqlite3.Binary(jpeg), time.time()),
            )

    def photo(self, table_id: str, action_id: str) -> bytes | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT jpeg FROM action_photos WHERE table_id = ? AND action_id = ?",
                (table_id, action_id),
            ).fetchone()
        return bytes(row[0]) if row else None

    def photo_ids(self, table_id: str) -> set[str]:
        """The action ids of a table that have a photo."""
        with self._guarded():
            rows = self._db.execute(
                "SELECT action_id FROM action_photos WHERE table_id = ?", (table_id,)
            ).fetchall()
        return {r[0] for r in rows}

    def table_setting(self, table_id: str, key: str) -> str | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT value FROM table_settings WHERE table_id = ? AND key = ?",
                (table_id, key),
            ).fetchone()
        return str(row[0]) if row else None

    def set_table_setting(self, table_id: str, key: str, value: str) -> None:
        with self._transaction("set_table_setting") as db:
            db.execute(_SET_TABLE_SETTING, (table_id, key, value))

    def server_setting(self, key: str) -> str | None:
        with self._guarded():
            row = self._db.execute(
                "SELECT value FROM server_settings WHERE key = ?", (key,)
            ).fetchone()
        return str(row[0]) if row else None

    def set_server_setting(self, key: str, value: str) -> None:
        self.set_server_settings({key: value})

    def set_server_settings(self, values: dict[str, str]) -> None:
        """Store several server settings in one transaction: all of them or none."""
        with self._transaction("set_server_setting") as db:
            db.executemany(
                "INSERT OR REPLACE INTO server_settings (key, value) VALUES (?, ?)",
                list(values.items()),
            )

    def server_settings_starting(self, prefix: str) -> dict[str, str]:
        """The server settings whose key starts with `prefix`, by key."""
        with self._guarded():
            rows = self._db.execute(
                "SELECT key, value FROM server_settings WHERE substr(key, 1, ?) = ?",
                (len(prefix), prefix),
            ).fetchall()
        return {str(key): str(value) for key, value in rows}

    def table_settings_starting(self, table_id: str, prefix: str) -> dict[str, str]:
        """The settings of table `table_id` whose key starts with `prefix`, by key."""
        with self._guarded():
            rows = self._db.execute(
                "SELECT key, value FROM table_settings"
                " WHERE table_id = ? AND substr(key, 1, ?) = ?",
                (table_id, len(prefix), prefix),
            ).fetchall()
        return {str(key): str(value) for key, value in rows}

    def remove_settings(
        self, server_keys: Iterable[str], table_keys: Iterable[tuple[str, str]] = ()
    ) -> None:
        """Remove server settings (by key) and table settings (by table id and key), in one
        transaction: all of them or none."""
        with self._transaction("remove_settings") as db:
            db.executemany(
                "DELETE FROM server_settings WHERE key = ?", [(key,) for key in server_keys]
            )
            db.executemany(
                "DELETE FROM table_settings WHERE table_id = ? AND key = ?", list(table_keys)
            )

    def logs(self, rolls_only: bool = False) -> Iterator[tuple[str, list[LogEntry]]]:
        """Every stored table's log, one table at a time (the dice statistics count them
        at start-up): a caller that keeps only counts holds one log, never every stored
        action (all at once, 150 imported 8,600-action games took 2.0 GB), and the lock is
        held for one table's read at a time, so live tables store their actions between
        them. `rolls_only`: a move that is not a roll comes without its JSON (move None),
        which is all the counts need and saves reading it."""
        with self._guarded():
            ids = [row[0] for row in self._db.execute("SELECT table_id FROM tables")]
        for table_id in ids:
            yield table_id, self.log(table_id, rolls_only)


def _table_row(row: tuple[Any, ...] | None) -> TableRow | None:
    """A stored table's header. JSON that no longer reads (a damaged or hand-edited file)
    does not stop the listing: the row comes back with `problem` naming it, for the pages
    to show instead of the game."""
    if row is None:
        return None
    table_id, code, game, options, players, created_at, finished_at, summary = row
    try:
        return TableRow(
            table_id=table_id,
            code=code,
            game=game,
            options=json.loads(options),
            players=json.loads(players),
            created_at=created_at,
            finished_at=finished_at,
            summary=json.loads(summary) if summary else None,
        )
    except (TypeError, ValueError) as exc:
        logger.warning("table %s: its stored header does not read: %s", table_id, exc)
        return TableRow(
            table_id, code, game, {}, [], created_at, finished_at, None, f"unreadable ({exc})"
        )
