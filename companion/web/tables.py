"""The live tables: each `Table` owns one game's Session (the one mutable holder), its
durable log in the Store, an asyncio lock that orders actions, its devices, and the
subscribers (WebSocket connections) to tell about every accepted change.

Readers never touch the Session: they read `Table.snapshot`, an immutable picture published
only after the action behind it was committed to SQLite. So nothing a screen shows can be
lost by a crash, and acknowledging an action means it is on disk.

The camera (a later issue) feeds rolls from its own thread through `Table.roll_from_thread`,
which hands the roll to the event loop with `asyncio.run_coroutine_threadsafe` and returns
a concurrent Future; the loop is never blocked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.rules.base import Die, Game, Move, Reason, Rejection, Roll
from companion.rules.codec import encode
from companion.rules.registry import find_game
from companion.rules.session import CAMERA, HOST, Proposal, RecordError, Session, replay_record
from companion.web.auth import Viewer, hash_token, new_join_code, new_token
from companion.web.fragments import Fragment, SheetCache
from companion.web.snapshot import Snapshot
from companion.web.store import Device, Finish, LogEntry, Store, TableRow

logger = logging.getLogger(__name__)


# what a table's header may hold, the same at creation, import and load (api.py's request
# models use the same bounds, so the API's schema says them)
PLAYER_NAME_MAX = 40
PLAYERS_MAX = 64
OPTIONS_JSON_MAX = 4096
ACTOR_MAX = 16  # "host", "camera" or a seat number


class TableLoadError(Exception):
    """A stored table that cannot be opened: its header does not read or breaks the
    rules a new table is checked by, or its log no longer replays (e.g. the engine
    changed). Pages answer with its message (409, rule stored_table), never a 500."""


def check_players(names: Sequence[object], seats: int) -> None:
    """The names of a table's seats: one per seat, each 1-40 characters. Raises
    Rejection(BAD_OPTIONS) naming the problem. The one check for a table made here, an
    imported record and a stored table being opened."""
    if len(names) != seats:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "player_names",
            f"{len(names)} player names for {seats} seats: give one name per seat",
        )
    for seat, name in enumerate(names):
        if not isinstance(name, str) or not 1 <= len(name) <= PLAYER_NAME_MAX:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_name",
                f"the name of seat {seat + 1} must be text of 1 to {PLAYER_NAME_MAX} characters",
            )


def check_options_size(options: object) -> None:
    """Options are small: at most OPTIONS_JSON_MAX bytes of JSON."""
    if len(json.dumps(options)) > OPTIONS_JSON_MAX:
        raise Rejection(
            Reason.BAD_OPTIONS, "options", f"options larger than {OPTIONS_JSON_MAX} bytes"
        )


def seat_count(game: Game[object, object], options: object) -> int:
    return len(game.scores(game.setup(options)))


@dataclass(frozen=True, slots=True)
class ActResult:
    """An accepted action: the state id after it; `duplicate` when the action id had been
    accepted before (nothing was applied this time)."""

    state_id: int
    duplicate: bool = False


@dataclass(eq=False)
class Subscription:
    """One listener (a WebSocket): a one-slot queue that always holds the newest state id."""

    queue: asyncio.Queue[int] = field(default_factory=lambda: asyncio.Queue(maxsize=1))

    def notify(self, state_id: int) -> None:
        if self.queue.full():  # coalesce: a slow screen skips straight to the newest state
            self.queue.get_nowait()
        self.queue.put_nowait(state_id)


class Table:
    """One game at one table. Create through `Tables`."""

    def __init__(
        self,
        row: TableRow,
        session: Session,
        store: Store,
        log: list[LogEntry],
        devices: dict[str, Device],
        render_pool: concurrent.futures.Executor | None = None,
    ) -> None:
        self.table_id = row.table_id
        self.code = row.code
        self.created_at = row.created_at
        self.session = session
        self._store = store
        self._action_seq: dict[str, int] = {e.action_id: e.seq for e in log}
        self._devices = devices
        self._ended_by_host = ended_by_host(row, session)
        self._subscribers: set[Subscription] = set()
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        # the fragments of the current state, one per kind of viewer (companion.web.fragments),
        # drawn on `render_pool` (None: asyncio's default executor)
        self.render_cache: dict[tuple[Any, ...], asyncio.Future[Fragment]] = {}
        self.render_pool = render_pool
        self.sheet_cache = SheetCache()
        self.snapshot = self._take_snapshot()

    @property
    def game(self) -> Game[Any, Any]:
        return self.session.game

    def _take_snapshot(self) -> Snapshot:
        s = self.session
        return Snapshot(
            state_id=s.state_id,
            game=s.game,
            state=s.state,
            players=tuple(s.players),
            turn=s.turn(),
            scores=s.scores(),
            outcome=s.outcome(),
            last_by=s.last_by,
            ended_by_host=self._ended_by_host,
            step_id=s.step_id,
        )

    # -- devices ------------------------------------------------------------------------
    def viewer(self, token: str | None) -> Viewer | None:
        """The device holding `token`, or None (no access)."""
        if not token:
            return None
        device = self._devices.get(hash_token(token))
        if device is None:
            return None
        return Viewer(seat=device.seat, host=device.host)

    async def add_device(self, host: bool) -> str:
        """A new device token for this table (the caller sets it as a cookie)."""
        token = new_token()
        token_hash = hash_token(token)
        await asyncio.to_thread(self._store.add_device, token_hash, self.table_id, host, None)
        self._devices[token_hash] = Device(self.table_id, host, None)
        return token

    def seats_taken(self) -> set[int]:
        return {d.seat for d in self._devices.values() if d.seat is not None}

    async def take_seat(self, token: str, seat: int | None) -> None:
        """Bind the device to `seat` (None: become a table view). A seat has one device; the
        host frees a seat with `free_seat` when a player changes devices. A player's
        device keeps its seat: another seat (or none) needs the host to free it first, or
        a device could sit at an empty seat, move for that player and sit back."""
        token_hash = hash_token(token)
        async with self._lock:
            device = self._devices.get(token_hash)
            if device is None:
                raise Rejection(Reason.NOT_ALLOWED, "no_access", "join this table first")
            if device.seat is not None and seat != device.seat and not device.host:
                raise Rejection(
                    Reason.NOT_ALLOWED,
                    "seat_held",
                    f"this device is {self.session.players[device.seat]}'s seat; to sit "
                    "elsewhere, ask the host to free it first",
                )
            if seat is not None:
                if not 0 <= seat < len(self.session.players):
                    raise Rejection(
                        Reason.MALFORMED, "no_such_seat", f"there is no seat {seat + 1}"
                    )
                holder = next(
                    (h for h, d in self._devices.items() if d.seat == seat and h != token_hash),
                    None,
                )
                if holder is not None:
                    raise Rejection(
                        Reason.NOT_ALLOWED,
                        "seat_taken",
                        f"{self.session.players[seat]}'s seat is already taken on another "
                        "device; the host can free it",
                    )
            await asyncio.to_thread(self._store.bind_seat, token_hash, seat)
            self._devices[token_hash] = Device(self.table_id, device.host, seat)
            self._redraw_all()  # the host's screen shows who has sat down (ws.py "seats")

    async def free_seat(self, seat: int) -> None:
        async with self._lock:
            await asyncio.to_thread(self._store.free_seat, self.table_id, seat)
            for token_hash, device in list(self._devices.items()):
                if device.seat == seat:
                    self._devices[token_hash] = Device(self.table_id, device.host, None)
            self._redraw_all()  # the freed device stops offering that seat's dice and boxes

    # -- actions ------------------------------------------------------------------------
    async def act(
        self,
        move: Move | dict[str, Any],
        by: str,
        action_id: str,
        expected_state_id: int | None = None,
    ) -> ActResult:
        """Check, commit, then publish one move drawn on a screen at `expected_state_id`.
        Raises Rejection (the engine's, or STALE_STATE / GAME_OVER): the session judges
        staleness by the step the screen showed (Session.is_current). Idempotent per
        `action_id`."""
        async with self._lock:
            if action_id in self._action_seq:
                return ActResult(self._action_seq[action_id], duplicate=True)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            if not isinstance(move, Move):
                move = self.game.move_from_json(move)
            proposal = self.session.propose(move, by, expected_state_id)
            entry = LogEntry(
                seq=proposal.state_id,
                action_id=action_id,
                kind="move",
                by=by,
                move=self.game.move_to_json(move),
            )
            await self._commit(entry, proposal)
            return ActResult(entry.seq)

    async def undo(
        self, by: str, action_id: str, expected_state_id: int | None = None
    ) -> ActResult:
        """Take back the last action (the session checks who may, and the state id)."""
        async with self._lock:
            if action_id in self._action_seq:
                return ActResult(self._action_seq[action_id], duplicate=True)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            proposal = self.session.propose_undo(by, expected_state_id)
            entry = LogEntry(proposal.state_id, action_id, "undo", by, None)
            await self._commit(entry, proposal)
            return ActResult(entry.seq)

    async def apply_roll(
        self,
        dice: Sequence[Die] | Sequence[tuple[str, int]],
        by: str = CAMERA,
        action_id: str | None = None,
        expected_state_id: int | None = None,
    ) -> ActResult:
        """Apply a roll of `dice` (Die or (colour, value) pairs): the camera's entry point."""
        roll = Roll(dice=tuple(d if isinstance(d, Die) else Die(d[0], d[1]) for d in dice))
        return await self.act(
            roll, by, action_id or f"roll-{secrets.token_hex(8)}", expected_state_id
        )

    def roll_from_thread(
        self, dice: Sequence[Die] | Sequence[tuple[str, int]], expected_state_id: int | None = None
    ) -> concurrent.futures.Future[ActResult]:
        """For a camera thread: schedule `apply_roll` on the server's loop; the Future holds
        the ActResult or the Rejection."""
        if self._loop is None:
            raise RuntimeError("table is not attached to a running event loop")
        return asyncio.run_coroutine_threadsafe(
            self.apply_roll(dice, expected_state_id=expected_state_id), self._loop
        )

    async def end_by_host(self) -> None:
        """The host stops a game that has no engine ending yet (it goes to the history)."""
        async with self._lock:
            if self._ended_by_host or self.session.outcome() is not None:
                return
            await asyncio.to_thread(
                self._store.set_finished, self.table_id, self._summary(ended_by_host=True)
            )
            self._ended_by_host = True
            self._publish()
            self._redraw_all()

    def _redraw_all(self) -> None:
        """Ask every screen to send its fragment again although the state id did not change
        (the host ended the game, a seat was freed): the sockets push only on a new state
        id, so those screens would keep showing what no longer holds."""
        for subscriber in list(self._subscribers):
            subscriber.notify(-1)

    async def _commit(self, entry: LogEntry, proposal: Proposal) -> None:
        """Store the change, then make it in the session and publish it. A change the store
        refuses is never made: the session still holds the state before it, and nothing
        has to be put back (the store may be what broke; it is not read here).
        Everything the change makes is stored in one transaction: the log entry and, when
        it ends or reopens the game, its history entry (two commits let a crash between
        them leave a game that said running while refusing every move as ended by the
        host, or a finished game missing from the history)."""
        try:
            await asyncio.to_thread(
                self._store.append, self.table_id, entry, self._history_change(proposal)
            )
        except Exception:
            logger.exception("could not store action %s of table %s", entry.seq, self.table_id)
            raise
        self.session.commit(proposal)
        self._action_seq[entry.action_id] = entry.seq
        self._publish()

    def _history_change(self, proposal: Proposal) -> Finish | None:
        """The history entry `proposal` changes: the game's summary when it ends the game,
        None-summary when it reopens it (an undo of the ending), None when neither."""
        ends = self.game.outcome(proposal.state) is not None
        if ends == (self.snapshot.outcome is not None):
            return None
        if not ends:
            return Finish(None)
        actions = len(self.session.actions) + (-1 if proposal.undo else 1)
        s = self.session
        return Finish(history_summary(s.game, s.players, proposal.state, actions))

    def _publish(self) -> None:
        self.snapshot = self._take_snapshot()
        self.render_cache.clear()
        for subscriber in list(self._subscribers):
            subscriber.notify(self.snapshot.state_id)

    def _summary(self, ended_by_host: bool = False) -> dict[str, object]:
        return summary_of(self.session, ended_by_host)

    # -- listeners ----------------------------------------------------------------------
    def subscribe(self) -> Subscription:
        subscription = Subscription()
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def record(self) -> dict[str, Any]:
        """The game record (Session.to_record format) for export."""
        return self.session.to_record()


def history_summary(
    game: Game[object, object],
    players: Sequence[str],
    state: object,
    actions: int,
    by_host: bool = False,
) -> dict[str, object]:
    """A finished game's history entry: names, scores with their breakdown, winners."""
    outcome = game.outcome(state)
    return {
        "game": game.name,
        "title": game.title,
        "players": list(players),
        "scores": [
            {"seat": sc.player, "total": sc.total, "breakdown": [list(b) for b in sc.breakdown]}
            for sc in game.scores(state)
        ],
        "winners": list(outcome.winners) if outcome else [],
        "end_message": outcome.message if outcome else "ended by the host",
        "ended_by_host": by_host,
        "actions": actions,
    }


def summary_of(s: Session, ended_by_host: bool = False) -> dict[str, object]:
    """The history entry of a session as it is now."""
    return history_summary(s.game, s.players, s.state, len(s.actions), ended_by_host)


def ended_by_host(row: TableRow, session: Session) -> bool:
    """Whether the host stopped this stored game: it is in the history without an engine
    ending, and its history entry says so (an entry of an engine ending whose undo was not
    stored, which an older server could leave behind, is not a host's end)."""
    if row.finished_at is None or session.outcome() is not None:
        return False
    return bool((row.summary or {}).get("ended_by_host", True))


def history_mismatch(row: TableRow, session: Session) -> Finish | None:
    """The history entry a stored table should have and lacks, derived from its log: an
    engine ending without its entry, or an entry of an engine ending that was undone."""
    ended = session.outcome() is not None
    if ended and row.finished_at is None:
        return Finish(summary_of(session))
    if not ended and row.finished_at is not None and not ended_by_host(row, session):
        return Finish(None)
    return None


def _replay(game: Game[Any, Any], options: Any, players: list[str], log: list[LogEntry]) -> Session:
    """Rebuild a session from its stored log: every move and undo in order, so the state id
    comes out equal to the number of entries."""
    session = Session(game, options, players)
    for entry in log:
        try:
            if entry.kind == "undo":
                session.undo(by=entry.by)
            elif entry.move is None:
                raise Rejection(Reason.MALFORMED, "move", "a move entry without its move")
            else:
                session.act(game.move_from_json(entry.move), by=entry.by)
        except Rejection as exc:
            raise TableLoadError(f"log entry {entry.seq} no longer replays: {exc.message}") from exc
        if session.state_id != entry.seq:
            raise TableLoadError(f"log entry {entry.seq} out of order")
    return session


def checked_record(record: object) -> Session:
    """Replay an imported game record after checking it as a new table is checked
    (check_players, check_options_size) and its actors: each `by` is "host", "camera" or
    a seat of the table. Raises RecordError naming the problem."""

    def refuse(rule: str, message: str, index: int | None = None) -> RecordError:
        return RecordError(index, Rejection(Reason.MALFORMED, rule, message))

    if isinstance(record, dict):
        try:
            check_options_size(record.get("options") or {})
        except Rejection as exc:
            raise RecordError(None, exc) from exc
        players = record.get("players")
        if isinstance(players, list) and len(players) > PLAYERS_MAX:
            raise refuse("player_names", f"{len(players)} player names: at most {PLAYERS_MAX}")
        actions = record.get("actions")
        for index, item in enumerate(actions if isinstance(actions, list) else []):
            by = item.get("by") if isinstance(item, dict) else None
            if by is not None and (not isinstance(by, str) or len(by) > ACTOR_MAX):
                raise refuse("actor", '"by" is "host", "camera" or a seat number', index)
    session = replay_record(record)
    try:
        check_players(session.players, seat_count(session.game, session.options))
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    actors = {HOST, CAMERA, *(str(seat) for seat in range(len(session.players)))}
    for index, action in enumerate(session.actions):
        if action.by not in actors:
            raise refuse("actor", f"no seat {action.by[:16]!r} at this table", index)
    return session


class Tables:
    """Every table of this server, loaded from the store on first use."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tables: dict[str, Table] = {}
        self._damaged: dict[str, TableLoadError] = {}  # tables that cannot be opened
        self._loop: asyncio.AbstractEventLoop | None = None
        self._load_lock = asyncio.Lock()
        # one thread draws every table's fragments: rendering is CPU work under the GIL (more
        # threads would not draw faster), kept off the event loop so sockets, the camera and
        # the store are never held up; one thread also keeps renders in the order asked
        self.render_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="render"
        )

    def close(self) -> None:
        """Stop the render thread (after the server stopped serving)."""
        self.render_pool.shutdown(wait=True, cancel_futures=True)

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for table in self._tables.values():
            table._loop = loop

    async def get(self, table_id: str) -> Table | None:
        """The table, loaded on first use; None when there is no such table. Raises
        TableLoadError for a stored table that cannot be opened (remembered: it is not
        replayed again on every request)."""
        table = self._tables.get(table_id)
        if table is not None:
            return table
        async with self._load_lock:
            table = self._tables.get(table_id)
            if table is None:
                if table_id in self._damaged:
                    raise self._damaged[table_id]
                try:
                    table = await asyncio.to_thread(self._load, table_id)
                except TableLoadError as exc:
                    logger.error("table %s cannot be opened: %s", table_id, exc)
                    self._damaged[table_id] = exc
                    raise
                if table is not None:
                    table._loop = self._loop
                    self._tables[table_id] = table
        return table

    async def openable(self, table_id: str) -> Table | None:
        """The table, or None when there is none or it cannot be opened (for the camera's
        choice of table, which skips a damaged one)."""
        try:
            return await self.get(table_id)
        except TableLoadError:
            return None

    def _load(self, table_id: str) -> Table | None:
        row = self.store.table(table_id)
        if row is None:
            return None
        log = self.store.log(table_id)
        try:
            if row.problem is not None:
                raise Rejection(Reason.MALFORMED, "stored_table", row.problem)
            game = find_game(row.game)
            options = game.parse_options(row.options)
            check_players(row.players, seat_count(game, options))
            session = _replay(game, options, row.players, log)
        except (Rejection, TableLoadError) as exc:
            raise TableLoadError(f"the stored table {table_id} is damaged: {exc}") from exc
        mismatch = history_mismatch(row, session)
        if mismatch is not None:  # the log is the truth: put the history entry right
            logger.warning("table %s: its history entry did not match its log", table_id)
            self.store.set_finished(table_id, mismatch.summary)
            row = self.store.table(table_id) or row
        devices = self.store.devices(table_id)
        logger.info("table %s (%s) restored: %d actions", table_id, row.game, len(log))
        return Table(row, session, self.store, log, devices, self.render_pool)

    async def table_id_for_code(self, code: str) -> str | None:
        row = await asyncio.to_thread(self.store.table_by_code, code)
        return row.table_id if row else None

    async def create(
        self, game_name: str, options_data: dict[str, Any], players: list[str]
    ) -> Table:
        """A new table; raises Rejection(BAD_OPTIONS) for bad options or names."""
        game = find_game(game_name)
        check_options_size(options_data)
        options = game.parse_options(options_data)
        session = Session(game, options, players or None)
        check_players(session.players, seat_count(game, options))
        return await self._insert(session, [])

    async def import_record(self, record: object) -> Table:
        """A new table continuing a game record, checked as a new table is (names,
        options) and then replayed; raises RecordError naming the problem."""
        session = checked_record(record)
        seed = [
            LogEntry(i + 1, f"import-{i + 1}", "move", a.by, session.game.move_to_json(a.move))
            for i, a in enumerate(session.actions)
        ]
        return await self._insert(session, seed)

    async def _insert(self, session: Session, seed: list[LogEntry]) -> Table:
        """Store a new table (with an imported record's log, and its history entry when
        that game has ended: one transaction) and open it from `session`, which holds the
        game the log replays to (so an import is replayed once)."""
        table_id = secrets.token_urlsafe(9)
        for _ in range(100):
            code = new_join_code()
            if not await asyncio.to_thread(self.store.code_in_use, code):
                break
        else:  # pragma: no cover - 32**6 codes
            raise RuntimeError("no free join code")
        summary = summary_of(session) if session.outcome() is not None else None
        options, players = encode(session.options), list(session.players)
        await asyncio.to_thread(
            self.store.create_table,
            table_id,
            code,
            session.game.name,
            options,
            players,
            seed,
            summary,
        )
        row = await asyncio.to_thread(self.store.table, table_id)
        assert row is not None
        table = Table(row, session, self.store, seed, {}, self.render_pool)
        async with self._load_lock:
            table._loop = self._loop
            self._tables[table_id] = table
        return table

    def open_tables(self) -> list[TableRow]:
        return self.store.tables(finished=False)
