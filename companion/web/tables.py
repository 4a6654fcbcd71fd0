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
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.rules.base import Die, Game, Move, Reason, Rejection, Roll, Throw
from companion.rules.codec import encode
from companion.rules.registry import find_game
from companion.rules.session import AUTO, CAMERA, Proposal, Session, replay_record, stale_view
from companion.web.auth import Viewer, hash_token, new_join_code, new_token
from companion.web.fragments import Fragment, SheetCache
from companion.web.snapshot import Snapshot
from companion.web.store import Device, LogEntry, Store, TableRow

logger = logging.getLogger(__name__)

AUTO_PASS_KEY = "auto_pass"  # table_settings: "off" when the next roll passes for nobody


class TableLoadError(Exception):
    """A stored table whose log no longer replays (e.g. the engine changed)."""


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
        auto_pass: bool = True,
    ) -> None:
        self.table_id = row.table_id
        self.code = row.code
        self.created_at = row.created_at
        self.session = session
        self._store = store
        self._action_seq: dict[str, int] = {e.action_id: e.seq for e in log}
        self._devices = devices
        self._ended_by_host = row.finished_at is not None and session.outcome() is None
        self.auto_pass = auto_pass
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
            auto_pass=self.auto_pass,
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
        host frees a seat with `free_seat` when a player changes devices."""
        token_hash = hash_token(token)
        async with self._lock:
            device = self._devices.get(token_hash)
            if device is None:
                raise Rejection(Reason.NOT_ALLOWED, "no_access", "join this table first")
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

    async def act_throw(
        self, roll: Roll, by: str, action_id: str, expected_state_id: int | None = None
    ) -> ActResult:
        """A roll as the next throw of the dice, drawn or read at `expected_state_id`: the
        moves the engine says the throw implies now (`Snapshot.throw`: the automatic passes
        of those who have not acted, by "auto", then e.g. Sixto's re-roll, by its player's
        seat), then the roll, by `by`. All of it is checked before any of it is made, under
        the table's lock, so a refusal changes nothing. Idempotent per `action_id` (the
        roll's; an implied move's is `action_id-N`, N the state id it leads to)."""
        async with self._lock:
            if action_id in self._action_seq:
                return ActResult(self._action_seq[action_id], duplicate=True)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            if not self.session.is_current(roll, expected_state_id):
                raise stale_view()
            chain = self._throw_chain(self.snapshot.throw, roll, by)
            state = self.session.state
            for move, _who in chain:  # the whole chain first: a refusal changes nothing
                state = self.game.play(state, move)
            for move, who in chain:
                proposal = self.session.propose(move, who)
                # an implied move's id names the state it leads to: unique, also on a retry
                entry_id = action_id if move is roll else f"{action_id}-{proposal.state_id}"
                entry = LogEntry(
                    proposal.state_id, entry_id, "move", who, self.game.move_to_json(move)
                )
                await self._commit(entry, proposal)
            return ActResult(self.snapshot.state_id)

    @staticmethod
    def _throw_chain(throw: Throw | None, roll: Roll, by: str) -> list[tuple[Move, str]]:
        """The moves `act_throw` makes, each with who makes it."""
        if throw is None:
            return [(roll, by)]  # no throw expected: the engine refuses the roll with its rule
        closes = [(move, AUTO) for move in throw.closes]
        implied = [(move, str(move.player)) for move in throw.moves]
        return [*closes, *implied, (roll, by)]

    async def set_auto_pass(self, on: bool) -> None:
        """The table's option: the next roll passes for those who have not acted (stored
        before it holds, then every screen redraws: the roll entry depends on it)."""
        async with self._lock:
            value = "on" if on else "off"
            await asyncio.to_thread(
                self._store.set_table_setting, self.table_id, AUTO_PASS_KEY, value
            )
            self.auto_pass = on
            self._publish()
            self._redraw_all()

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
        has to be put back (the store may be what broke; it is not read here)."""
        was_finished = self.snapshot.outcome is not None
        try:
            await asyncio.to_thread(self._store.append, self.table_id, entry)
        except Exception:
            logger.exception("could not store action %s of table %s", entry.seq, self.table_id)
            raise
        self.session.commit(proposal)
        self._action_seq[entry.action_id] = entry.seq
        outcome = self.session.outcome()
        if (outcome is not None) != was_finished:
            summary = self._summary() if outcome is not None else None
            try:
                await asyncio.to_thread(self._store.set_finished, self.table_id, summary)
            except Exception:  # the log is the truth; the history entry is recomputed on load
                logger.exception("could not update the history of table %s", self.table_id)
        self._publish()

    def _publish(self) -> None:
        self.snapshot = self._take_snapshot()
        self.render_cache.clear()
        for subscriber in list(self._subscribers):
            subscriber.notify(self.snapshot.state_id)

    def _summary(self, ended_by_host: bool = False) -> dict[str, Any]:
        s = self.session
        outcome = s.outcome()
        return {
            "game": s.game.name,
            "title": s.game.title,
            "players": list(s.players),
            "scores": [
                {"seat": sc.player, "total": sc.total, "breakdown": [list(b) for b in sc.breakdown]}
                for sc in s.scores()
            ],
            "winners": list(outcome.winners) if outcome else [],
            "end_message": outcome.message if outcome else "ended by the host",
            "ended_by_host": ended_by_host,
            "actions": len(s.actions),
        }

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


def _replay(game: Game[Any, Any], options: Any, players: list[str], log: list[LogEntry]) -> Session:
    """Rebuild a session from its stored log: every move and undo in order, so the state id
    comes out equal to the number of entries."""
    session = Session(game, options, players)
    for entry in log:
        try:
            if entry.kind == "undo":
                session.undo(by=entry.by)
            else:
                assert entry.move is not None
                session.act(game.move_from_json(entry.move), by=entry.by)
        except Rejection as exc:
            raise TableLoadError(f"log entry {entry.seq} no longer replays: {exc.message}") from exc
        if session.state_id != entry.seq:
            raise TableLoadError(f"log entry {entry.seq} out of order")
    return session


class Tables:
    """Every table of this server, loaded from the store on first use."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tables: dict[str, Table] = {}
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
        table = self._tables.get(table_id)
        if table is not None:
            return table
        async with self._load_lock:
            table = self._tables.get(table_id)
            if table is None:
                table = await asyncio.to_thread(self._load, table_id)
                if table is not None:
                    table._loop = self._loop
                    self._tables[table_id] = table
        return table

    def _load(self, table_id: str) -> Table | None:
        row = self.store.table(table_id)
        if row is None:
            return None
        game = find_game(row.game)
        options = game.parse_options(row.options)
        log = self.store.log(table_id)
        session = _replay(game, options, row.players, log)
        devices = self.store.devices(table_id)
        auto_pass = self.store.table_setting(table_id, AUTO_PASS_KEY) != "off"
        logger.info("table %s (%s) restored: %d actions", table_id, row.game, len(log))
        return Table(row, session, self.store, log, devices, self.render_pool, auto_pass)

    async def table_id_for_code(self, code: str) -> str | None:
        row = await asyncio.to_thread(self.store.table_by_code, code)
        return row.table_id if row else None

    async def create(
        self, game_name: str, options_data: dict[str, Any], players: list[str]
    ) -> Table:
        """A new table; raises Rejection(BAD_OPTIONS) for bad options or names."""
        game = find_game(game_name)
        options = game.parse_options(options_data)
        session = Session(game, options, players or None)
        if len(session.players) != len(game.scores(session.state)):
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_names",
                f"{len(players)} names for {len(game.scores(session.state))} seats",
            )
        return await self._insert(game, encode(options), session.players, [])

    async def import_record(self, record: Any) -> Table:
        """A new table continuing a game record; raises RecordError naming the bad action."""
        session = replay_record(record)
        seed = [
            LogEntry(i + 1, f"import-{i + 1}", "move", a.by, session.game.move_to_json(a.move))
            for i, a in enumerate(session.actions)
        ]
        return await self._insert(session.game, encode(session.options), session.players, seed)

    async def _insert(
        self, game: Game[Any, Any], options: Any, players: list[str], seed: list[LogEntry]
    ) -> Table:
        table_id = secrets.token_urlsafe(9)
        for _ in range(100):
            code = new_join_code()
            if not await asyncio.to_thread(self.store.code_in_use, code):
                break
        else:  # pragma: no cover - 32**6 codes
            raise RuntimeError("no free join code")
        await asyncio.to_thread(
            self.store.create_table, table_id, code, game.name, options, list(players), seed
        )
        table = await self.get(table_id)
        assert table is not None
        if table.session.outcome() is not None:
            await asyncio.to_thread(self.store.set_finished, table_id, table._summary())
        return table

    def open_tables(self) -> list[TableRow]:
        return self.store.tables(finished=False)
