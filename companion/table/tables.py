"""The live tables: each `Table` owns one game's Session (the one mutable holder), its
durable log in the Store, an asyncio lock that orders actions, its devices, and the
subscribers (WebSocket connections) to tell about every accepted change.

Readers never touch the Session: they read `Table.snapshot`, an immutable picture published
only after the action behind it was committed to SQLite. So nothing a screen shows can be
lost by a crash, and acknowledging an action means it is on disk.

A camera roll reaches a table on the event loop through `RollIntake.take`
(companion/table/roll_intake.py), which calls `Table.act_throw` as a typed roll does; the
camera's thread never touches a table. `Table.roll_from_thread` hands a roll from another
thread to the loop with `asyncio.run_coroutine_threadsafe` (a concurrent Future back), so
such a caller never blocks the loop either.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import logging
import multiprocessing
import os
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from companion.rules.base import Die, Game, Move, Reason, Rejection, Roll, Throw
from companion.rules.codec import encode
from companion.rules.registry import find_game
from companion.rules.session import AUTO, CAMERA, Proposal, Session, stale_view
from companion.table.access import (
    DeviceRateLimiter,
    Viewer,
    carried_token,
    hash_token,
    new_join_code,
    new_token,
)
from companion.table.dice import (
    IMPORT_ID_PREFIX,
    IMPORTED,
    DiceKeeper,
    DiceTally,
    imported_actions,
)
from companion.table.records import (
    ENDED_ON_SERVER,
    FROM_TABLE,
    MAX_RECORD_ACTIONS,
    ImportPlan,
    ImportRefusal,
    check_new_names,
    check_options_size,
    check_players,
    history_summary,
    new_table_options,
    next_game_options,
    plan_import,
    seat_count,
    summary_of,
)
from companion.table.snapshot import Snapshot, snapshot_of
from companion.table.store import (
    Device,
    EncodedEntry,
    Finish,
    KeptAfterRemoval,
    LogEntry,
    StorageError,
    Store,
    TableRow,
    implied_seqs,
)
from companion.table.text import printable
from companion.table.words import for_display
from companion.table.worker_life import end_with_parent

logger = logging.getLogger(__name__)


_T = TypeVar("_T")


async def to_the_end(work: Awaitable[_T]) -> _T:
    """Await `work` to its end even when the awaiting task is cancelled meanwhile, then let
    the cancellation through. A table's change is stored in a worker thread and then made in
    memory; a task cancelled between the two (a tablet that drops its socket cancels the
    receiver answering it) would leave SQLite ahead of the session, and every later action
    of the table refused by the store (its seq already taken) until a restart."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():  # the work's own end (or the caller's cancel as it ended)
                raise
            cancelled = True  # the work runs on: wait for it again
            continue
        if cancelled:
            raise asyncio.CancelledError
        return result


IDLE_TABLE_S = 600.0  # Settings.table_idle_s: how long an unused table stays in memory
CLIENT_TABLES = 8  # Settings.client_tables: tables one client may hold open unwatched
FINISHED_TOKEN_S = 12 * 3600.0  # Settings.finished_token_s: tokens live on after the end
# a replay (opening a stored game) works in slices of REPLAY_SLICE_S and then lets the
# interpreter go for REPLAY_PAUSE_S, so the event loop never waits on it for the GIL
REPLAY_SLICE_S = 0.001
REPLAY_PAUSE_S = 0.001
AUTO_PASS_KEY = "auto_pass"  # table_settings: "off" when the next roll passes for nobody
CAMERA_MODE_KEY = "camera_mode"  # table_settings: the host's camera mode (camera_feed.py)
# what a host chose for a table (stored only once chosen): the game played again keeps it
CHOSEN_SETTINGS = (AUTO_PASS_KEY, CAMERA_MODE_KEY)
NEXT_TABLE_KEY = "next_table"  # table_settings: the table that plays this game again
# table_settings of the finished game: how many devices had joined (store.Device.joined_seq)
# when the host first played it again, stored with the first link and kept when another
# next game replaces it: the devices joined by then are the ones carried
JOINS_BEFORE_NEXT_KEY = "joins_before_next"
# table_settings: the table its host's device imported this game's record to (export, end,
# import: a full table's move); its screens say the game goes on elsewhere, and no more
CONTINUED_KEY = "continued_at"
# table_settings of the next game: "carried <token hash>", a device of the finished game
# (its token's hash there) took its place here once (Table.carry_over). At most one per
# device that held a token at the finished game when the next was made: a device that
# joins it later is not carried (Table._refuse_joined_after), and those before only dwindle
CARRIED_KEY = "carried "
# table_settings of the next game: "kept <token hash>", a device of the finished game it
# plays again whose place here was kept when the history deleted that game (its tokens went
# with it): JSON of its seat, host flag and the end of its token's life. Only devices the
# next game would have carried are kept (Tables._kept_places), each carried once as before
KEPT_PLACE_KEY = "kept "
# server_settings: "next of deleted <table id>", the next game of a deleted finished game
DELETED_NEXT_KEY = "next of deleted "
# server_settings: "deleted <table id>", JSON of the token hashes of the devices a deleted
# finished game held and the end of their tokens' life: a screen that was offline at the
# delete is told the game was deleted (Tables.deleted_for), a stranger learns nothing
DELETED_KEY = "deleted "
PLAYED_AGAIN = "the host has started the next game from this one: this game stays as it ended"


def game_deleted() -> Rejection:
    """The refusal of a change that waited for a game the history deleted meanwhile."""
    return Rejection(Reason.GAME_OVER, "game_deleted", "this game was deleted from the history")


SEAT_FREED = "seat_freed"


def seat_freed() -> Rejection:
    """The refusal of a device's change that waited while the host freed its seat (the
    device's token went with it)."""
    message = "this device's seat was freed; enter the join code again"
    return Rejection(Reason.NOT_ALLOWED, SEAT_FREED, message)


def table_full_words(limit: int) -> str:
    """The refusal of a join at a table holding `limit` devices, and what to ask the host."""
    return (
        f"every one of this table's {limit} devices holds a seat or is a host's; ask the host "
        "to free a seat, or to move the game to a new table with a new code: export its "
        "record, end it and import the record"
    )


class TableLoadError(Exception):
    """A stored table that cannot be opened: its header does not read or breaks the
    rules a new table is checked by, or its log no longer replays (e.g. the engine
    changed). Pages answer with its message (409, rule stored_table), never a 500.
    `log_entry`: the seq of the log entry that no longer replays, where that is why (its
    header is sound: the log page shows that log as stored)."""

    def __init__(self, message: str, log_entry: int | None = None) -> None:
        # the message may quote what is stored (a key, a name): make it showable
        super().__init__(printable(message))
        self.log_entry = log_entry


def is_closed_to_devices(
    finished_at: float | None, token_finished_s: float, now: float | None = None
) -> bool:
    """A game finished (time.time()) more than `token_finished_s` ago: its device tokens
    no longer work (Table.viewer; Tables.seen_with for a table not opened)."""
    if finished_at is None:
        return False
    return (time.time() if now is None else now) - finished_at > token_finished_s


class OpenRefused(Exception):
    """A client opened too many stored tables too fast (Settings open_rate_per_s,
    open_burst): each open replays a whole game. Answered 429 with Retry-After."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"too many tables opened; try again in {int(wait_s) + 1} s")
        self.wait_s = wait_s


@dataclass(frozen=True, slots=True)
class ActResult:
    """An accepted action: the state id after it; `duplicate` when the action id had been
    accepted before (nothing was applied this time)."""

    state_id: int
    duplicate: bool = False


@dataclass(eq=False)
class Subscription:
    """One listener (a WebSocket): a one-slot queue that always holds the newest state id;
    `token_hash` names the device whose page it is (None: a listener with no page), so
    the table knows which seats have a page open (`seats_away`)."""

    token_hash: str | None = None
    queue: asyncio.Queue[int] = field(default_factory=lambda: asyncio.Queue(maxsize=1))

    def notify(self, state_id: int) -> None:
        if self.queue.full():  # coalesce: a slow screen skips straight to the newest state
            self.queue.get_nowait()
        self.queue.put_nowait(state_id)

    def wake(self, state_id: int) -> None:
        """Wake the screen to look again (the seats' presence changed) without redrawing:
        a wake already queued (a state, or a redraw asked for) is kept, not replaced."""
        if not self.queue.full():
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
        auto_pass: bool = True,
        token_finished_s: float = FINISHED_TOKEN_S,
        acted_at: float | None = None,
        next_table: str | None = None,
        continued: bool = False,
        joins_before_next: int | None = None,
    ) -> None:
        self.table_id = row.table_id
        self.code = row.code
        self.created_at = row.created_at
        self.session = session
        self._store = store
        # every action id in the log: the state id it led to and who sent it (a retry is
        # answered `duplicate` only to its sender: `_retried`)
        self._action_seq: dict[str, tuple[int, str]] = {e.action_id: (e.seq, e.by) for e in log}
        # how many of the session's first actions came in an imported record: an undo of
        # one counts in the dice statistics as that roll was counted, as imported
        self._imported = imported_actions(log)
        self._devices = devices
        # seat -> the token hash of the device holding it, kept with `_devices`: every push
        # to every screen asks which seats are taken, and a table may hold many devices
        self._seated = {d.seat: h for h, d in devices.items() if d.seat is not None}
        # joins one at a time (add_device): a join at the limit makes room before it stores,
        # and joins at once must not all count the same room
        self._joining = asyncio.Lock()
        self._carrying = asyncio.Lock()  # one device of a finished game carried at a time
        self._ended_by_host = ended_by_host(row, session)
        # that end was made on the server's own machine (its start page), not the host's
        self._ended_on_server = self._ended_by_host and ended_on_server(row)
        # when the game went to the history (time.time()), None while it runs; its devices'
        # tokens stop working `token_finished_s` after it (closed_to_devices)
        self.finished_at = row.finished_at
        self.token_finished_s = token_finished_s
        self.auto_pass = auto_pass
        # the table the host started to play this game again (Tables.play_again), stored
        self.next_table_id = next_table
        # JOINS_BEFORE_NEXT_KEY, once stored: a device that joined after is not carried
        self.joins_before_next = joins_before_next
        self.continued = continued  # Tables.point_continuation
        self._subscribers: set[Subscription] = set()
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.dice: DiceKeeper | None = None  # the server's dice counts, changed per roll
        self.snapshot = self._take_snapshot()
        self.last_used = time.monotonic()  # Tables.get: an idle table leaves memory
        # when its last action was made at this table (time.time(), as stored; an
        # imported record's actions are no play here, nor is opening it again after a
        # restart): the camera stays with a game that plays on (companion.table.camera_feed)
        self.acted_at = acted_at
        self.evicted = False  # left memory (Tables.evict_idle): this object writes nothing
        # deleted from the history (Tables.delete_finished): no device sees it any more
        self.deleted = False
        self.place_lost: Callable[[str], None] | None = None  # _tell_place_lost

    def is_idle(self, now: float, idle_s: float) -> bool:
        """Unused for `idle_s`, no screen listening, no change under way: it may leave
        memory (the store keeps everything; it is opened again on the next use)."""
        return now - self.last_used > idle_s and self.may_leave()

    def may_leave(self) -> bool:
        """No screen listens and no change is under way (one that is may be storing an
        action a copy opened from the store now would miss)."""
        return not self._subscribers and not self._lock.locked()

    @property
    def watched(self) -> bool:
        """A screen listens (a WebSocket): a device has joined it and shows it now."""
        return bool(self._subscribers)

    def closed_to_devices(self, now: float | None = None) -> bool:
        """Finished more than `token_finished_s` ago: its device tokens no longer work
        and its code joins no more (the history keeps its result)."""
        return is_closed_to_devices(self.finished_at, self.token_finished_s, now)

    def _check_loaded(self) -> None:
        """Refuse a change through a table that left memory (a request that held it from
        before): the table opened again would not know of it; or, deleted from the history
        meanwhile, through a game that is no more (`game_deleted`: a try again finds none)."""
        if self.deleted:
            raise game_deleted()
        if self.evicted:
            raise Rejection(
                Reason.STALE_STATE,
                "table_reloaded",
                "the table was opened again since this screen was drawn; try again",
            )

    @property
    def game(self) -> Game[Any, Any]:
        return self.session.game

    def _take_snapshot(self) -> Snapshot:
        return snapshot_of(
            self.session,
            ended_by_host=self._ended_by_host,
            ended_on_server=self._ended_on_server,
            auto_pass=self.auto_pass,
            next_table=self.next_table_id,
            continued=self.continued,
            host_seated=self.host_seated(),
        )

    def host_seated(self) -> bool:
        """Whether the host's device holds a seat (every host's device, should a table have
        more): none acts as the host then, only as its player."""
        hosts = [device for device in self._devices.values() if device.host]
        return bool(hosts) and all(device.seat is not None for device in hosts)

    def _redraw_seats(self) -> None:
        """A device sat down or stood up: the snapshot says anew whether the host's device
        is seated (what the screens point the players at), and every screen redraws."""
        self.snapshot = self._take_snapshot()
        self._redraw_all()

    # -- devices ------------------------------------------------------------------------
    def viewer(self, token: str | None) -> Viewer | None:
        """The device holding `token`, or None (no access; every token, once the table has
        been finished for `token_finished_s`, or once the game is deleted)."""
        if not token or self.deleted or self.closed_to_devices():
            return None
        device = self._devices.get(hash_token(token))
        if device is None:
            return None
        cutoff = self.joins_before_next
        late = cutoff is not None and device.joined_seq > cutoff
        return Viewer(seat=device.seat, host=device.host, joined_after_next_game=late)

    async def add_device(
        self, host: bool, limit: int | None = None, token: str | None = None
    ) -> str:
        """A new device token for this table (the caller sets it as a cookie). A table holds
        at most `limit` devices (Settings.max_table_devices: only a client joining again
        and again gets there): a player's device then takes the place of the oldest device
        that holds no seat and is no host's (a seated player and the host keep theirs, so a
        flood of joins locks nobody out of the game), and is refused (`table_full`) only
        when every device holds a seat or is a host's. `token`: the one to store (a device
        carried from a finished game: access.carried_token); a new one by default."""
        self._check_loaded()
        async with self._joining:
            while limit is not None and not host and len(self._devices) >= limit:
                if not await to_the_end(self._forget_oldest_viewer()):
                    raise Rejection(Reason.NOT_ALLOWED, "table_full", table_full_words(limit))
            token = token or new_token()
            await to_the_end(self._store_device(hash_token(token), host))
        return token

    async def _forget_oldest_viewer(self) -> bool:
        """Whether a device without a seat (no host's) was forgotten to make room; its
        token stops working (it joins again with the code)."""
        forgotten = await asyncio.to_thread(self._store.forget_oldest_viewer, self.table_id)
        if forgotten is None:
            return False
        self._devices.pop(forgotten, None)
        self._tell_place_lost()
        return True

    async def _store_device(self, token_hash: str, host: bool) -> None:
        add = self._store.add_device
        joined_seq = await asyncio.to_thread(add, token_hash, self.table_id, host, None)
        self._devices[token_hash] = Device(self.table_id, host, None, joined_seq)
        if host:  # a host's device without a seat: the host's device acts as the host again
            self.snapshot = self._take_snapshot()

    def seats_taken(self) -> set[int]:
        """The seats a device holds (kept as seats change: no walk over every device)."""
        return set(self._seated)

    def seats_away(self) -> set[int]:
        """The seats taken where no device seated there has a page open (a socket)."""
        present = set()
        for subscriber in self._subscribers:
            device = self._devices.get(subscriber.token_hash or "")
            if device is not None and device.seat is not None:
                present.add(device.seat)
        return self.seats_taken() - present

    async def take_seat(self, token: str, seat: int | None) -> bool:
        """Bind the device to `seat` (None: become a table view). A seat has one device; the
        host frees a seat with `free_seat` when a player changes devices. A player's
        device keeps its seat: another seat (or none) needs the host to free it first, or
        a device could sit at an empty seat, move for that player and sit back. Whether it
        changed anything: the seat the device has (or none when it has none) stores
        nothing and redraws no screen."""
        token_hash = hash_token(token)
        async with self._lock:
            self._check_loaded()
            device = self._devices.get(token_hash)
            if device is None:
                raise Rejection(Reason.NOT_ALLOWED, "no_access", "join this table first")
            if seat == device.seat:
                return False
            if device.seat is not None and not device.host:
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
                self._refuse_taken_seat(seat, token_hash)
            await to_the_end(self._bind_seat(token_hash, replace(device, seat=seat)))
            return True

    def _refuse_taken_seat(self, seat: int, token_hash: str | None) -> None:
        """Refuse `seat` when a device other than `token_hash`'s holds it."""
        holder = self._seated.get(seat)
        if holder is not None and holder != token_hash:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "seat_taken",
                f"{self.session.players[seat]}'s seat is already taken on another "
                "device; the host can free it",
            )

    async def carry_over(
        self,
        before: Viewer,
        before_token: str,
        held: str | None,
        limit: int | None = None,
        kept: bool = False,
    ) -> tuple[str, Viewer]:
        """A device of the game this table plays again (`before`: what it was there, with
        `before_token`, checked by the caller) comes here as it was: the host's device as a
        host, a seated one at the same seat, a watching one as a viewer. `held`: the token
        it may hold here already (one made on another screen, joined with the code), used
        again. Its token here and what it is. One device of the finished game makes one
        device here, whatever it asks again (`_carried_device`); a seat another device
        holds is refused (`seat_taken`) before any device is made, and so is a device that
        joined the finished game after this table was made (`joined_after_next_game`).
        `kept`: the finished game was deleted, and this device's place kept then
        (Tables.kept_place), when its join was checked: its device there is gone."""
        token = held if held and self.viewer(held) is not None else None
        async with self._carrying:  # a double tap: the second finds the first's device
            if token is None:
                token = await self._carried_device(before, before_token, limit, kept)
            now = self.viewer(token)
            if before.seat is not None and now is not None and now.seat is None:
                await self.take_seat(token, before.seat)
        after = self.viewer(token)
        assert after is not None
        return token, after

    async def _carried_device(
        self, before: Viewer, before_token: str, limit: int | None, kept: bool = False
    ) -> str:
        """The device `before_token` of the finished game has here: the one it was given
        (its token derived from `before_token`: access.carried_token), or a new one the
        first time. Refused (`carried_once`) once that device is gone (the host freed its
        seat, or it made room for a newer one): taking the place again through the finished
        game would undo the host's free; the join code still lets it in."""
        token = carried_token(before_token, self.table_id)
        if self.viewer(token) is not None:
            return token
        if not kept:  # a kept place was checked when it was kept
            await self._refuse_joined_after(before_token)
        marker = CARRIED_KEY + hash_token(before_token)
        if await asyncio.to_thread(self._store.table_setting, self.table_id, marker) is not None:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "carried_once",
                "this device took its place in the next game once, and the host has freed "
                "it there since (or it made room for another device); ask the host for the "
                "next game's join code",
            )
        if before.seat is not None:
            self._refuse_taken_seat(before.seat, None)
        await self.add_device(before.host, limit, token)
        await asyncio.to_thread(self._store.set_table_setting, self.table_id, marker, "1")
        return token

    async def _refuse_joined_after(self, before_token: str) -> None:
        """Refuse (`joined_after_next_game`) a device that joined the finished game after
        the host first played it again: the finished game's code still joins it (to see
        how it ended), but such a device was not at the game played again, and being
        carried would hand a stranger with the old code a place here and this code. A
        device that joined before (after the end included) was there as the players were."""
        token_hash = hash_token(before_token)
        if not await asyncio.to_thread(self._joined_before_next_game, token_hash):
            raise Rejection(
                Reason.NOT_ALLOWED,
                "joined_after_next_game",
                "this device joined the finished game after the host started the next one; "
                "ask the host for the next game's join code",
            )

    def _joined_before_next_game(self, token_hash: str) -> bool:
        """Whether the device joined its (finished) table before the host first played
        it again, by the order of joins (JOINS_BEFORE_NEXT_KEY), which no clock moves."""
        device = self._store.device(token_hash)
        if device is None:
            return False
        cutoff = self._store.table_setting(device.table_id, JOINS_BEFORE_NEXT_KEY)
        if cutoff is not None:
            return device.joined_seq <= int(cutoff)
        # a next game linked before the store counted joins: by the clock, as it was then
        joined_at = self._store.device_joined_at(token_hash)
        return joined_at is not None and joined_at < self.created_at

    def show_continued(self) -> None:
        """Its game goes on at another table (stored: Tables.point_continuation): every
        screen redraws saying so."""
        self.continued = True
        self._publish()
        self._redraw_all()

    def show_next_table(self, table_id: str, joins_before: int | None) -> None:
        """The table that plays this game again, stored already (with that table:
        Tables.play_again), and the devices it carries (those whose join counted up to
        `joins_before`): every screen redraws with the way there, or says to ask the host."""
        self.next_table_id = table_id
        self.joins_before_next = joins_before
        self._publish()
        self._redraw_all()

    async def _bind_seat(self, token_hash: str, device: Device) -> None:
        await asyncio.to_thread(self._store.bind_seat, token_hash, device.seat)
        before = self._devices.get(token_hash)
        old_seat = before.seat if before is not None else None
        if old_seat is not None and self._seated.get(old_seat) == token_hash:
            del self._seated[old_seat]
        self._devices[token_hash] = device
        if device.seat is not None:
            self._seated[device.seat] = token_hash
        self._redraw_seats()  # the host's screen shows who has sat down (ws.py "seats")

    async def free_seat(self, seat: int) -> None:
        """Free `seat`: the player's device that held it loses its token, so it cannot take
        the seat back at once (it joins again with the code); a host's device stands up."""
        async with self._lock:
            self._check_loaded()
            await to_the_end(self._free_seat(seat))

    async def _free_seat(self, seat: int) -> None:
        await asyncio.to_thread(self._store.free_seat, self.table_id, seat)
        for token_hash, device in list(self._devices.items()):
            if device.seat == seat and device.host:
                self._devices[token_hash] = replace(device, seat=None)
            elif device.seat == seat:
                del self._devices[token_hash]
        self._seated.pop(seat, None)
        self._redraw_seats()  # the freed device stops offering that seat's dice and boxes
        self._tell_place_lost()

    def _tell_place_lost(self) -> None:
        """A device lost its place here (its seat freed, or it made room for another):
        `place_lost` (Tables wakes the screens of the finished game this plays again)."""
        if self.place_lost is not None:
            self.place_lost(self.table_id)

    # -- actions ------------------------------------------------------------------------
    async def act(
        self,
        move: Move | dict[str, Any],
        by: str,
        action_id: str,
        expected_state_id: int | None = None,
        *,
        token: str | None = None,
    ) -> ActResult:
        """Check, commit, then publish one move drawn on a screen at `expected_state_id`.
        Raises Rejection (the engine's, or STALE_STATE / GAME_OVER): the session judges
        staleness by the step the screen showed (Session.is_current). Idempotent per
        `action_id`. `token`: the sending device's, which must still act as `by`
        (`_check_sender`)."""
        async with self._lock:
            if (retried := self._retried(action_id, by)) is not None:
                return retried
            self._check_sender(token, by)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            if not isinstance(move, Move):
                move = self.game.move_from_json(move)
            proposal = self.session.propose(move, by, expected_state_id)
            self._refuse_anothers_id(action_id)
            entry = LogEntry(
                seq=proposal.state_id,
                action_id=action_id,
                kind="move",
                by=by,
                move=self.game.move_to_json(move),
            )
            await self._commit([entry], [proposal])
            return ActResult(entry.seq)

    def _check_sender(self, token: str | None, by: str) -> None:
        """Refuse a device's move (`token`; None: the camera's, the server's own) once it no
        longer acts as `by`: the web layer read its rights before the move waited for the
        lock, and a seat the host freed meanwhile (its device's token gone with it) still
        marked that sheet once the free was stored."""
        if token is None:
            return
        viewer = self.viewer(token)
        if viewer is None or not (viewer.host or viewer.by == by):
            raise seat_freed()

    async def sender_now(self, token: str) -> Viewer:
        """The device holding `token` as it stands once no change of seats is under way
        (read under the table's lock, which a free of its seat holds while it is stored):
        for a change that does not go through `act` (the camera's confirm and fix), whose
        sender the web layer read before it waited. Refused (`seat_freed`) once the
        device lost its token."""
        async with self._lock:
            viewer = self.viewer(token)
        if viewer is None:
            raise seat_freed()
        return viewer

    def _retried(self, action_id: str, by: str) -> ActResult | None:
        """The answer to a retry: `duplicate`, with the state id it led to, when `by` sent
        `action_id` before; None for a new id, and for an id another sender used, which
        is checked as a new action (the sender's right first: answered `duplicate`, a
        device that may not act for that seat learnt which ids were used)."""
        used = self._action_seq.get(action_id)
        if used is None or used[1] != by:
            return None
        return ActResult(used[0], duplicate=True)

    def _refuse_anothers_id(self, action_id: str) -> None:
        """After the checks of a new action: an id another sender used is refused (it is
        stored once). Ids are random per tap, so only a device replaying another's id
        meets this, and only once it may make its own action."""
        if action_id in self._action_seq:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "action_id_used",
                "this action's id was sent by another device: send it again with a new id",
            )

    async def undo(
        self,
        by: str,
        action_id: str,
        expected_state_id: int | None = None,
        *,
        token: str | None = None,
    ) -> ActResult:
        """Take back an action: the host's undo the last, a player's their own latest
        (the session checks who may, what still stands without it, and the state id).
        Refused once the host ended the game, or played it again (`played_again`), and to
        a device (`token`) that no longer acts as `by` (`_check_sender`)."""
        async with self._lock:
            if (retried := self._retried(action_id, by)) is not None:
                return retried
            self._check_sender(token, by)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            if self.next_table_id is not None:
                # an undo would reopen a game its devices were sent on from
                raise Rejection(Reason.GAME_OVER, "played_again", PLAYED_AGAIN)
            proposal = self.session.propose_undo(by, expected_state_id)
            self._refuse_anothers_id(action_id)
            entry = LogEntry(proposal.state_id, action_id, "undo", by, None)
            await self._commit([entry], [proposal])
            return ActResult(entry.seq)

    async def act_throw(
        self,
        roll: Roll,
        by: str,
        action_id: str,
        expected_state_id: int | None = None,
        *,
        token: str | None = None,
        acts_as: str | None = None,
    ) -> ActResult:
        """A roll as the next throw of the dice, drawn or read at `expected_state_id`: the
        moves the engine says the throw implies now (`Snapshot.throw`: the automatic passes
        of those who have not acted, by "auto", then e.g. Sixto's re-roll, by its player's
        seat), then the roll, by `by`. All of it is checked before any of it is made, under
        the table's lock, so a refusal changes nothing; all of it is stored in one
        transaction and acknowledged once, so a crash keeps all of it or none (in two, a
        kill could keep the passes and their penalty without the roll); an undo of the roll
        takes it all back (Action.implied). Idempotent per `action_id` (the roll's; an
        implied move's is `action_id-N`, N the state id it leads to: store.implied_seqs).
        `token`: the sending device's, which must still act as `by`, or as `acts_as` where
        the roll is another's (a camera roll a player confirmed is the camera's), checked
        here under the lock that a free of its seat holds (`_check_sender`)."""
        async with self._lock:
            if (retried := self._retried(action_id, by)) is not None:
                return retried
            self._check_sender(token, acts_as or by)
            if self._ended_by_host:
                raise Rejection(Reason.GAME_OVER, "ended_by_host", "the host has ended this game")
            if not self.session.is_current(roll, expected_state_id):
                raise stale_view()
            proposals = self.session.propose_throw(implied_moves(self.snapshot.throw), roll, by)
            self._refuse_anothers_id(action_id)
            entries = [
                LogEntry(
                    p.state_id,
                    f"{action_id}-{p.state_id}" if p.action.implied else action_id,
                    "move",
                    p.action.by,
                    self.game.move_to_json(p.action.move),
                )
                for p in proposals
            ]
            await self._commit(entries, proposals)
            return ActResult(self.snapshot.state_id)

    async def set_auto_pass(self, on: bool) -> None:
        """The table's option: the next roll passes for those who have not acted (stored
        before it holds, then every screen redraws: the roll entry depends on it)."""
        async with self._lock:
            self._check_loaded()
            await to_the_end(self._store_auto_pass(on))

    async def _store_auto_pass(self, on: bool) -> None:
        value = "on" if on else "off"
        await asyncio.to_thread(self._store.set_table_setting, self.table_id, AUTO_PASS_KEY, value)
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

    async def end_by_host(self, on_server: bool = False) -> None:
        """The host stops a game that has no engine ending yet (it goes to the history);
        `on_server`: the server's own machine stops it (its start page), and the history,
        the screens and the log say so, not that the host did."""
        async with self._lock:
            self._check_loaded()
            if self._ended_by_host or self.session.outcome() is not None:
                return
            await to_the_end(self._store_ended_by_host(on_server))

    async def _store_ended_by_host(self, on_server: bool) -> None:
        summary = summary_of(self.session, ended_by_host=True, on_server=on_server)
        await asyncio.to_thread(self._store.set_finished, self.table_id, summary)
        logger.info(
            "table %s (%s): ended %s before the game's end",
            self.table_id,
            self.game.title,
            "on the server's machine" if on_server else "by the host",
        )
        self._ended_by_host = True
        self._ended_on_server = on_server
        self.finished_at = time.time()
        self._publish()
        self._redraw_all()

    def close_to_every_device(self) -> None:
        """The game was deleted: every device loses it, and the screens still open are
        woken to find that out (their sockets close; one stayed open on the deleted game,
        answering its every sync with the whole game)."""
        self.deleted = True
        self._redraw_all()

    def redraw_all(self) -> None:
        """Every screen of this table sends its fragment again (`_redraw_all`)."""
        self._redraw_all()

    def _redraw_all(self) -> None:
        """Ask every screen to send its fragment again although the state id did not change
        (the host ended the game, a seat was freed): the sockets push only on a new state
        id, so those screens would keep showing what no longer holds."""
        for subscriber in list(self._subscribers):
            subscriber.notify(-1)

    async def _commit(self, entries: list[LogEntry], proposals: list[Proposal]) -> None:
        """Store the change (one action, or a throw and the moves it implies), then make it
        in the session and publish it. A change the store refuses is never made: the
        session still holds the state before it, and nothing has to be put back (the store
        may be what broke; it is not read here). Everything the change makes is stored in
        one transaction: its log entries and, when it ends or reopens the game, its history
        entry (two commits let a crash between them leave a game that said running while
        refusing every move as ended by the host, or a finished game missing from the
        history). Stored and made as one (`to_the_end`): a caller cancelled meanwhile
        still makes what the store committed."""
        self._check_loaded()
        history = self._history_change(proposals)
        await to_the_end(self._store_and_make(entries, proposals, history))

    async def _store_and_make(
        self, entries: list[LogEntry], proposals: list[Proposal], history: Finish | None
    ) -> None:
        try:
            await asyncio.to_thread(self._store.append_all, self.table_id, entries, history)
        except StorageError:
            raise  # the store's log says it, once a minute at most (TroubleLog)
        except Exception:
            logger.exception(
                "could not store action %s of table %s", entries[-1].seq, self.table_id
            )
            raise
        counted = [self._dice_by(proposal) for proposal in proposals]
        for proposal, entry in zip(proposals, entries, strict=True):
            self.session.commit(proposal)
            self._action_seq[entry.action_id] = (entry.seq, entry.by)
        for proposal in proposals:  # an imported action taken back is no longer there
            if proposal.undo:
                self._imported -= max(
                    0, min(self._imported, proposal.at + proposal.taken) - proposal.at
                )
        self.acted_at = time.time()
        if history is not None:
            self.finished_at = time.time() if history.summary is not None else None
        self._publish()
        if history is not None and history.summary is not None:
            self._log_game_over()
        if self.dice is not None:  # the dice statistics (an undo: the roll counts no more)
            for proposal, entry, by in zip(proposals, entries, counted, strict=True):
                sign = -1 if proposal.undo else 1
                self.dice.record(self.table_id, entry.seq, proposal.action.move, by, sign)

    def _dice_by(self, proposal: Proposal) -> str:
        """Who `proposal`'s roll counts as in the dice statistics: its maker, but an undo
        of an imported record's action takes it back as it was counted, as IMPORTED (an
        import's actions come first: those before `_imported`)."""
        if proposal.undo and proposal.at + proposal.taken <= self._imported:
            return IMPORTED
        return proposal.action.by

    def _history_change(self, proposals: list[Proposal]) -> Finish | None:
        """The history entry `proposals` change: the game's summary when they end the game,
        None-summary when they reopen it (an undo of the ending), None when neither."""
        final = proposals[-1].state
        ends = self.game.outcome(final) is not None
        # an undo that plays later actions again may change an ended game's scores
        replays = any(proposal.replayed for proposal in proposals)
        if ends == (self.snapshot.outcome is not None) and not (ends and replays):
            return None
        if not ends:
            return Finish(None)
        made = sum(-p.taken if p.undo else 1 for p in proposals)
        s = self.session
        return Finish(history_summary(s.game, s.players, final, len(s.actions) + made))

    def _log_game_over(self) -> None:
        """Say in the server's log that this table's game came to its end, and how."""
        outcome = self.snapshot.outcome
        words = for_display(outcome.message, self.snapshot.players) if outcome else ""
        logger.info("table %s (%s): game over: %s", self.table_id, self.game.title, words)

    def _publish(self) -> None:
        self.snapshot = self._take_snapshot()  # screens draw it anew (companion.web.fragments)
        for subscriber in list(self._subscribers):
            subscriber.notify(self.snapshot.state_id)

    def _summary(self, ended_by_host: bool = False) -> dict[str, object]:
        return summary_of(self.session, ended_by_host)

    # -- listeners ----------------------------------------------------------------------
    def subscribe(self, token: str | None = None) -> Subscription:
        """Listen to the table, as the page of the device holding `token` (if any)."""
        subscription = Subscription(hash_token(token) if token else None)
        away = self.seats_away()
        self._subscribers.add(subscription)
        self._tell_if_away_changed(away)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        away = self.seats_away()
        self._subscribers.discard(subscription)
        self._tell_if_away_changed(away)

    def _tell_if_away_changed(self, away_before: set[int]) -> None:
        """A player's last page closed or their first opened: the host's screen says who is
        away (ws.py "seats"); the other screens wake, find nothing new and send nothing."""
        if self.seats_away() != away_before:
            for subscriber in list(self._subscribers):
                subscriber.wake(self.snapshot.state_id)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def record(self) -> dict[str, Any]:
        """The game record (Session.to_record format) for export."""
        return self.session.to_record()

    def record_builder(self) -> Callable[[], dict[str, object]]:
        """The game record as it is now, to build on another thread: the list of actions is
        copied here (on the loop), their encoding is left to the caller's thread."""
        actions = list(self.session.actions)
        # a game the host ended says so: imported, it goes to the history, not into play
        ended = {"ended_by_host": True} if self._ended_by_host else {}
        # and where it was ended: imported, it reads "Ended on the server's machine" again
        where = {ENDED_ON_SERVER: True} if self._ended_on_server else {}
        # the table it comes from: imported by this table's host, these screens point there
        source = {FROM_TABLE: self.table_id}
        return lambda: self.session.to_record(actions) | ended | where | source


def implied_moves(throw: Throw | None) -> list[tuple[Move, str]]:
    """The moves a throw implies now, each with who makes it: the automatic passes ("auto"),
    then e.g. Sixto's re-roll (its player). None when no throw is expected: the engine then
    refuses the roll itself with its rule."""
    if throw is None:
        return []
    closes = [(move, AUTO) for move in throw.closes]
    return [*closes, *((move, str(move.player)) for move in throw.moves)]


def ended_by_host(row: TableRow, session: Session) -> bool:
    """Whether the host stopped this stored game: it is in the history without an engine
    ending, and its history entry says so (an entry of an engine ending whose undo was not
    stored, which an older server could leave behind, is not a host's end)."""
    if row.finished_at is None or session.outcome() is not None:
        return False
    return bool((row.summary or {}).get("ended_by_host", True))


def ended_on_server(row: TableRow) -> bool:
    """Whether the stored end of this game was made on the server's own machine (its
    history entry says so; an older entry, without the key, is the host's end)."""
    return (row.summary or {}).get("ended_on_server") is True


def history_mismatch(row: TableRow, session: Session) -> Finish | None:
    """The history entry a stored table should have and lacks, derived from its log: an
    engine ending without its entry, or an entry of an engine ending that was undone."""
    ended = session.outcome() is not None
    if ended and row.finished_at is None:
        return Finish(summary_of(session))
    if not ended and row.finished_at is not None and not ended_by_host(row, session):
        return Finish(None)
    return None


def host_end_without_winners(row: TableRow, session: Session) -> dict[str, object] | None:
    """The history entry of a game the host ended, stored before entries of a host's end
    kept their winners (Game.winners by the game's own ranking and tie-breaks; an older
    server stored none, and the history page could only pick the highest total): the
    stored entry with those winners, derived from the log; None when it needs none."""
    summary = row.summary or {}
    if summary.get("winners") or not ended_by_host(row, session):
        return None
    winners = session.game.winners(session.state, ended_early=True)
    return {**summary, "winners": list(winners)} if winners else None


def _replay(
    game: Game[Any, Any],
    options: Any,
    players: list[str],
    log: list[LogEntry],
    pause_s: float = 0.0,
) -> Session:
    """Rebuild a session from its stored log: every move and undo in order, so the state id
    comes out equal to the number of entries. With `pause_s` (the replay thread of a
    running server), it sleeps `pause_s` after every REPLAY_SLICE_S of work: a sleeping
    thread leaves the interpreter to the event loop, which otherwise waits up to the
    switch interval (5 ms) for it after each of its system calls while a replay runs
    (several per push: 146-285 ms p95 with 4 clients opening 1,000- to 10,000-action
    games)."""
    session = Session(game, options, players)
    implied = implied_seqs(log)
    slice_ends = time.perf_counter() + REPLAY_SLICE_S
    for entry in log:
        if pause_s and entry.seq % 16 == 0 and time.perf_counter() > slice_ends:
            time.sleep(pause_s)
            slice_ends = time.perf_counter() + REPLAY_SLICE_S
        try:
            if entry.kind == "undo":
                session.undo(by=entry.by)
            else:
                session.act(entry.move_in(game), by=entry.by, implied=entry.seq in implied)
        except Rejection as exc:
            message = f"log entry {entry.seq} no longer replays: {exc.message}"
            raise TableLoadError(message, entry.seq) from exc
        if session.state_id != entry.seq:
            raise TableLoadError(f"log entry {entry.seq} out of order", entry.seq)
    return session


@dataclass(frozen=True, slots=True)
class NewTable:
    """What a new table is stored with (Tables._store_new): its game, encoded options and
    players; an imported record's log and, for a game that has ended, its history entry;
    its table settings."""

    game: str
    options: object
    players: list[str]
    seed: Sequence[EncodedEntry] = ()
    summary: dict[str, object] | None = None
    settings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Imported:
    """A table made from an imported record: stored, opened when first used."""

    table_id: str
    code: str
    from_table: str | None = None  # the table whose game it goes on with (a running game's record)


class Tables:
    """Every table of this server, loaded from the store on first use."""

    def __init__(
        self,
        store: Store,
        import_process: bool = True,
        idle_s: float = IDLE_TABLE_S,
        client_tables: int = CLIENT_TABLES,
        open_limiter: DeviceRateLimiter | None = None,
        token_finished_s: float = FINISHED_TOKEN_S,
    ) -> None:
        self.store = store
        # a table unused this long, with no screen listening, leaves memory (evict_idle)
        self.idle_s = idle_s
        # the memory one client (address) may hold: the stored tables it opened that no
        # screen watches, at most `client_tables`; opening one more lets its least
        # recently used one go (`_opened_by`: client -> its tables, least recent first)
        self.client_tables = client_tables
        self._opened_by: dict[str, OrderedDict[str, None]] = {}
        # opens of stored tables per client (each replays a game): None, unlimited
        self.open_limiter = open_limiter
        self.token_finished_s = token_finished_s
        self._sweeper: asyncio.Task[None] | None = None
        # imports are checked and replayed in a process of their own (records.plan_import),
        # started at the first import; without (tests of the store's faults) on the replay
        # thread
        self._import_process = import_process
        self._import_pool: ProcessPoolExecutor | None = None
        self._tables: dict[str, Table] = {}
        # called on the loop with each new table's id (created or imported): the camera
        # follows the newest table at once, not at its next look-up
        self.added: list[Callable[[str], None]] = []
        self._damaged: dict[str, TableLoadError] = {}  # tables that cannot be opened
        self._loop: asyncio.AbstractEventLoop | None = None
        self._load_lock = asyncio.Lock()
        # one next table per finished game: a lock per finished table id (kept while a
        # Play again holds or waits for it), so one table's slow Play again (its stored next
        # game replayed, its lock busy) holds up no other table's
        self._play_again_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        # one thread replays the tables opened from the store and reads the dice counts at
        # start-up, so several at once queue there instead of each taking a thread that
        # competes with the event loop for the interpreter
        self.replay_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="replay"
        )
        # imports read, queued for or in the import process (take_import_slot): in all,
        # and per client address
        self.imports_waiting = 0
        self._imports_of: dict[str, int] = {}
        self._dice = DiceKeeper()
        self._dice_started = False

    def close(self) -> None:
        """Stop the replay and import workers (after the server stopped serving)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.replay_pool.shutdown(wait=True, cancel_futures=True)
        if self._import_pool is not None:
            self._import_pool.shutdown(wait=True, cancel_futures=True)

    async def _replaying(self, work: Callable[[], _T]) -> _T:
        """Run `work` on the replay thread, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.replay_pool, work)

    def start(self) -> None:
        """Read the dice counts of every stored game, in the background (DiceKeeper), and
        start sweeping idle tables out of memory (on the attached loop)."""
        self._dice_started = True
        self._dice.start(functools.partial(self.store.logs, rolls_only=True), self.replay_pool)
        try:  # what a delete kept for tokens that ran out while the server was off
            self.forget_spent_deletes()
        except StorageError as exc:  # the next delete tries again
            logger.warning("the settings kept of deleted games were not read: %s", exc)
        if self._loop is not None and self._sweeper is None:
            self._sweeper = self._loop.create_task(self._sweep_idle())

    async def _sweep_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle_s, 30.0) / 2)
            self.evict_idle()

    def evict_idle(self, now: float | None = None) -> list[str]:
        """Let the idle tables (Table.is_idle) leave memory: they are opened from the store
        again on their next use (a 10,000-action table held about 7.5 MiB, and none was
        ever let go). The ids of those let go."""
        moment = time.monotonic() if now is None else now
        idle = [i for i, t in self._tables.items() if t.is_idle(moment, self.idle_s)]
        for table_id in idle:
            self._tables.pop(table_id).evicted = True
        if idle:
            self._forget_unloaded()
            logger.info("%d idle table(s) left memory; %d open", len(idle), len(self._tables))
        return idle

    def _forget_unloaded(self) -> None:
        for client, mine in list(self._opened_by.items()):
            for table_id in [t for t in mine if t not in self._tables]:
                del mine[table_id]
            if not mine:
                del self._opened_by[client]

    def _opened(self, client: str, table_id: str) -> list[str]:
        """`client` opened (or used) `table_id`: beyond `client_tables` of its tables that
        no screen watches, its least recently used ones leave memory (as idle ones do).
        The ids of those let go."""
        mine = self._opened_by.setdefault(client, OrderedDict())
        mine[table_id] = None
        mine.move_to_end(table_id)
        for gone in [t for t in mine if t not in self._tables]:
            del mine[gone]
        unwatched = [t for t in mine if self._tables[t].may_leave()]
        let_go = unwatched[: max(0, len(unwatched) - self.client_tables)]
        for victim in let_go:
            del mine[victim]
            self._tables.pop(victim).evicted = True
        if let_go:
            logger.info(
                "client %s holds over %d unwatched tables: %d left memory",
                client,
                self.client_tables,
                len(let_go),
            )
        return let_go

    def held_by(self, client: str) -> list[str]:
        """The tables `client` opened that are in memory now, least recently used first."""
        return [t for t in self._opened_by.get(client, ()) if t in self._tables]

    def seen_with(self, rows: Sequence[TableRow], tokens: Mapping[str, str]) -> list[TableRow]:
        """The stored tables of `rows` whose device token in `tokens` (table id -> token,
        a browser's cookies) lets it see them: the rule of `Table.viewer`, read from the
        store (a device row of that table, the game not closed to devices), so listing
        them opens and replays nothing and a cookie costs one lookup. A browser's
        cookies once opened every table they named, past the per-client open limit (a
        probe's /history opened 30 in 2.3 s). Blocking: call it off the loop."""
        seen = []
        for row in rows:
            token = tokens.get(row.table_id)
            device = self.store.device(hash_token(token)) if token else None
            if (
                device is not None
                and device.table_id == row.table_id
                and not is_closed_to_devices(row.finished_at, self.token_finished_s)
            ):
                seen.append(row)
        return seen

    def is_loaded(self, table_id: str) -> bool:
        """Whether the table is in memory now."""
        return table_id in self._tables

    async def dice(self) -> DiceTally:
        """The dice counts of every table, kept up to date by every roll and undo (read
        from the store first if `start` was not called)."""
        if not self._dice_started:
            self.start()
        return await self._dice.ready()

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for table in self._tables.values():
            table._loop = loop

    async def get(self, table_id: str, client: str | None = None) -> Table | None:
        """The table, loaded on first use; None when there is no such table. Raises
        TableLoadError for a stored table that cannot be opened (remembered: it is not
        replayed again on every request). With `client` (the asking address): its opens
        of stored tables are rate-limited (OpenRefused) and the tables it opened count
        against its share of memory (`client_tables`). One table is opened once: the
        load lock holds every other open of it until it is in `_tables`."""
        table = self._tables.get(table_id)
        if table is not None:
            table.last_used = time.monotonic()
            if client is not None and table_id in self._opened_by.get(client, ()):
                self._opened_by[client].move_to_end(table_id)
            return table
        if client is not None and self.open_limiter is not None and table_id not in self._damaged:
            wait = self.open_limiter.take(client)
            if wait > 0:
                raise OpenRefused(wait)
        async with self._load_lock:
            table = self._tables.get(table_id)
            if table is None:
                if table_id in self._damaged:
                    raise self._damaged[table_id]
                try:
                    table = await self._replaying(lambda: self._load(table_id, REPLAY_PAUSE_S))
                except TableLoadError as exc:
                    logger.error("table %s cannot be opened: %s", table_id, exc)
                    self._damaged[table_id] = exc
                    raise
                if table is not None:
                    self._hold(table)
                    if client is not None:
                        self._opened(client, table_id)
        return table

    def _hold(self, table: Table) -> None:
        """Keep `table` in memory, wired to this server's loop, dice counts and screens."""
        table._loop = self._loop
        table.dice = self._dice
        table.place_lost = self._redraw_played_before
        self._tables[table.table_id] = table

    def _redraw_played_before(self, table_id: str) -> None:
        """Wake the screens of the finished game that `table_id` plays again (when in
        memory; else its screens open it afresh): a device whose place at `table_id` is
        gone sees its "Next game ready" give way to asking the host for the join code
        (`with_next_place`) at once, where it learnt so only when its tap was refused."""
        for table in list(self._tables.values()):
            if table.next_table_id == table_id:
                table.redraw_all()

    def damage(self, table_id: str) -> TableLoadError | None:
        """Why the stored table could not be opened, once an open was tried (else None)."""
        return self._damaged.get(table_id)

    async def remove_damaged(self, table_id: str) -> None:
        """Delete a stored table that cannot be opened (its log, devices and photos with
        it, in one transaction); a table that opens is kept (raises Rejection)."""
        async with self._load_lock:
            if table_id in self._tables:
                raise Rejection(
                    Reason.NOT_ALLOWED,
                    "table_opens",
                    "only a table that cannot be opened is removed",
                )
            await asyncio.to_thread(self.store.remove_table, table_id)
            self._damaged.pop(table_id, None)

    async def delete_finished(self, table_id: str) -> TableRow | None:
        """Delete a finished game (the server's own history page: a test game, a mistaken
        one): its row, moves, devices, settings and photos in one transaction, and its dice
        counts. None when there is no such table. Raises Rejection `game_in_progress` for a
        game still being played (end it first). The table's own lock is held while it is
        checked and deleted (an undo may reopen a finished game), taken before the load lock,
        in the order Play again takes them."""
        table = self._tables.get(table_id)
        own_lock = table._lock if table is not None else contextlib.nullcontext()
        async with own_lock, self._load_lock:
            if self._tables.get(table_id) is not table:  # opened or let go meanwhile
                raise Rejection(
                    Reason.STALE_STATE, "table_reloaded", "the game was opened; try again"
                )
            row = await asyncio.to_thread(self.store.table, table_id)
            if row is None:
                return None
            if row.finished_at is None:
                raise Rejection(
                    Reason.NOT_ALLOWED,
                    "game_in_progress",
                    "this game is still being played: end it first, then delete it",
                )
            await asyncio.to_thread(self.forget_spent_deletes)
            kept = await asyncio.to_thread(self._kept_after_delete, row)
            await asyncio.to_thread(self.store.remove_table, table_id, kept)
            if table is not None:
                self._tables.pop(table_id).evicted = True
                table.close_to_every_device()
            self._damaged.pop(table_id, None)
            self._dice.forget(table_id)
        return row

    def _kept_after_delete(self, row: TableRow) -> KeptAfterRemoval:
        """What the server keeps of the finished game `row` about to be deleted: the places
        at its next game (`_kept_places`) and which devices held it (`deleted_for`)."""
        until = (row.finished_at or time.time()) + self.token_finished_s
        devices = sorted(self.store.devices(row.table_id))
        held = {DELETED_KEY + row.table_id: json.dumps({"until": until, "devices": devices})}
        kept = self._kept_places(row)
        if kept is None:
            return KeptAfterRemoval(row.table_id, {}, held)
        return KeptAfterRemoval(
            kept.table_id, kept.table_settings, {**kept.server_settings, **held}
        )

    def forget_spent_deletes(self, now: float | None = None) -> list[str]:
        """Forget what deletes kept (`_kept_after_delete`: DELETED_KEY, DELETED_NEXT_KEY
        and the kept places at the next game) once no token of the deleted game can work
        any more (its `until`): before, two server settings per deleted game stayed for
        ever. Run at start-up and at each delete; the ids of the deleted games forgotten."""
        moment = time.time() if now is None else now
        spent = []
        for key, value in self.store.server_settings_starting(DELETED_KEY).items():
            if moment > float(json.loads(value)["until"]):
                spent.append(key.removeprefix(DELETED_KEY))
        server_keys: list[str] = []
        table_keys: list[tuple[str, str]] = []
        for deleted_id in spent:
            server_keys += [DELETED_KEY + deleted_id, DELETED_NEXT_KEY + deleted_id]
            next_id = self.store.server_setting(DELETED_NEXT_KEY + deleted_id)
            if next_id is not None:
                places = self.store.table_settings_starting(next_id, KEPT_PLACE_KEY)
                table_keys += [
                    (next_id, key)
                    for key, place in places.items()
                    if json.loads(place)["from"] == deleted_id
                ]
        if spent:
            self.store.remove_settings(server_keys, table_keys)
            logger.info("forgot what %d deleted game(s) kept for their devices", len(spent))
        return spent

    async def deleted_for(self, table_id: str, token: str) -> bool:
        """Whether `table_id` is a finished game the history deleted while the device
        holding `token` had it and its token would still work: only such a device is told
        so; any other asks of a table id as of one that never was."""
        if not token or len(table_id) > 64:
            return False
        found = await asyncio.to_thread(self.store.server_setting, DELETED_KEY + table_id)
        if found is None:
            return False
        held = json.loads(found)
        return time.time() <= float(held["until"]) and hash_token(token) in held["devices"]

    def _kept_places(self, row: TableRow) -> KeptAfterRemoval | None:
        """The places at its next game kept for the devices of the finished game `row`
        about to be deleted (None: it was not played again, or its next game is gone):
        those the next game would carry (Table.carry_over: joined before it was started,
        not carried yet), so that a player who had not followed yet still reaches it
        from the deleted game's cookie (`kept_place`), and no other device."""
        next_id = self.store.table_setting(row.table_id, NEXT_TABLE_KEY)
        if next_id is None or self.store.table(next_id) is None:
            return None
        cutoff = self._joins_before_next(row.table_id)
        until = (row.finished_at or time.time()) + self.token_finished_s
        places = {}
        for token_hash, device in self.store.devices(row.table_id).items():
            # joined after the next game was started; or a link stored before joins were
            # counted, whose tokens ran out long ago (token_finished_s)
            if cutoff is None or device.joined_seq > cutoff:
                continue
            if self.store.table_setting(next_id, CARRIED_KEY + token_hash) is not None:
                continue  # it followed already: its own cookie opens the next game
            place = {"from": row.table_id, "seat": device.seat, "host": device.host}
            places[KEPT_PLACE_KEY + token_hash] = json.dumps(place | {"until": until})
        return KeptAfterRemoval(next_id, places, {DELETED_NEXT_KEY + row.table_id: next_id})

    async def kept_place(self, deleted_id: str, token: str) -> tuple[str, Viewer] | None:
        """The next game of the deleted finished game `deleted_id` and what the device
        holding `token` was there, when its place was kept at the delete (`_kept_places`)
        and its token would still work (the finished game's `token_finished_s`); else None.
        A place taken once whose device the next game no longer has (the host freed its
        seat there, or it made room for another) is kept no more: the tap would be refused
        (Table._carried_device: `carried_once`), so the page does not offer it."""
        if not token or len(deleted_id) > 64:
            return None

        def read() -> tuple[str, str | None] | None:
            next_id = self.store.server_setting(DELETED_NEXT_KEY + deleted_id)
            if next_id is None:
                return None
            if self._freed_at_next(next_id, token):
                return next_id, None
            return next_id, self.store.table_setting(next_id, KEPT_PLACE_KEY + hash_token(token))

        found = await asyncio.to_thread(read)
        if found is None or found[1] is None:
            return None
        place = json.loads(found[1])
        if place["from"] != deleted_id or time.time() > float(place["until"]):
            return None
        return found[0], Viewer(seat=place["seat"], host=bool(place["host"]))

    def _freed_at_next(self, next_id: str, token: str) -> bool:
        """Whether the device holding `token` at the game `next_id` plays again took its
        place there once and the next game no longer has that device (the host freed its
        seat there, or it made room for another): carried again, it is refused
        (Table._carried_device: `carried_once`). A store read."""
        taken = self.store.table_setting(next_id, CARRIED_KEY + hash_token(token)) is not None
        return taken and self.store.device(hash_token(carried_token(token, next_id))) is None

    async def with_next_place(self, table: Table, token: str, viewer: Viewer) -> Viewer:
        """`viewer` (the device holding `token` at `table`) marked `next_place_freed` where
        `table` is a finished game played again whose next game no longer has the place this
        device took there (`_freed_at_next`): its screen offers no "Next game ready" that
        would be refused, but the join code (views.next_game). A store in trouble leaves
        the button (its tap says why)."""
        next_id = table.next_table_id
        if next_id is None or not table.snapshot.finished or viewer.joined_after_next_game:
            return viewer
        try:
            freed = await asyncio.to_thread(self._freed_at_next, next_id, token)
        except StorageError:
            return viewer
        return replace(viewer, next_place_freed=True) if freed else viewer

    async def place_after_delete(
        self, deleted_id: str, token: str, held_at: Callable[[str], str]
    ) -> tuple[str, Viewer] | None:
        """Where the device holding `token` at the deleted finished game `deleted_id` has a
        place at its next game, and what it is there: the place kept for it (`kept_place`),
        or the device it holds there already, having followed before the delete
        (`followed_to`). None without either, or when the next game cannot be opened: the
        "Next game ready" its open screen shows would be refused."""
        kept = await self.kept_place(deleted_id, token)
        if kept is not None:
            return kept
        try:
            followed = await self.followed_to(deleted_id, held_at)
        except TableLoadError:
            return None
        return None if followed is None else (followed[0].table_id, followed[2])

    async def followed_to(
        self, deleted_id: str, held_at: Callable[[str], str], client: str | None = None
    ) -> tuple[Table, str, Viewer] | None:
        """Where a device of the deleted game `deleted_id` that had followed the next game
        before the delete goes on (no place was kept for it: its own token there opens it):
        that table, its token there (`held_at`: its token at a table id, "" without one)
        and what it is there; None without one. The next game is opened as `get` opens it
        for `client` (OpenRefused past its opens; TableLoadError for a damaged one)."""
        next_id = await self.next_of_deleted(deleted_id)
        new = await self.get(next_id, client=client) if next_id is not None else None
        held = held_at(new.table_id) if new is not None else ""
        now = new.viewer(held) if new is not None and held else None
        return None if new is None or now is None else (new, held, now)

    async def next_of_deleted(self, deleted_id: str) -> str | None:
        """The next game of the deleted finished game `deleted_id` (`_kept_places`), or None:
        where a device that had followed already goes on, by its own token there."""
        if len(deleted_id) > 64:
            return None
        return await asyncio.to_thread(self.store.server_setting, DELETED_NEXT_KEY + deleted_id)

    async def openable(self, table_id: str) -> Table | None:
        """The table, or None when there is none or it cannot be opened (for the camera's
        choice of table, which skips a damaged one)."""
        try:
            return await self.get(table_id)
        except TableLoadError:
            return None

    def _load(self, table_id: str, pause_s: float = 0.0) -> Table | None:
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
            session = _replay(game, options, row.players, log, pause_s)
        except (Rejection, TableLoadError) as exc:
            log_entry = exc.log_entry if isinstance(exc, TableLoadError) else None
            message = f"the stored table {table_id} is damaged: {exc}"
            raise TableLoadError(message, log_entry) from exc
        mismatch = history_mismatch(row, session)
        if mismatch is not None:  # the log is the truth: put the history entry right
            logger.warning("table %s: its history entry did not match its log", table_id)
            self.store.set_finished(table_id, mismatch.summary)
            row = self.store.table(table_id) or row
        repaired = host_end_without_winners(row, session)
        if repaired is not None:  # in its place in the history, with the game's winners
            logger.warning(
                "table %s: its history entry of the host's end named no winner", table_id
            )
            self.store.set_summary(table_id, repaired)
            row = self.store.table(table_id) or row
        devices = self.store.devices(table_id)
        auto_pass = self.store.table_setting(table_id, AUTO_PASS_KEY) != "off"
        acted_at = self.store.last_action_at(table_id, not_from=IMPORT_ID_PREFIX)
        next_table = self.store.table_setting(table_id, NEXT_TABLE_KEY)
        joins_before_next = self._joins_before_next(table_id)
        continued = self.store.table_setting(table_id, CONTINUED_KEY) is not None
        logger.info("table %s (%s) restored: %d actions", table_id, row.game, len(log))
        return Table(
            row,
            session,
            self.store,
            log,
            devices,
            auto_pass,
            self.token_finished_s,
            acted_at,
            next_table,
            continued,
            joins_before_next,
        )

    def _joins_before_next(self, table_id: str) -> int | None:
        """JOINS_BEFORE_NEXT_KEY of a finished table, once it was played again."""
        stored = self.store.table_setting(table_id, JOINS_BEFORE_NEXT_KEY)
        return None if stored is None else int(stored)

    async def table_id_for_code(self, code: str) -> str | None:
        row = await asyncio.to_thread(self.store.table_by_code, code)
        return row.table_id if row else None

    async def create(
        self,
        game_name: str,
        options_data: dict[str, Any],
        players: list[str],
        settings: Mapping[str, str] | None = None,
        plays_again: str | None = None,
    ) -> Table:
        """A new table, from the game's defaults for its players with `options_data` on top
        (records.new_table_options); raises Rejection(BAD_OPTIONS) for bad options or names.
        `settings` (table_settings) are stored with it, before anyone hears of the table:
        the camera follower reads its mode once, on first sight. `plays_again`: the
        finished table it plays again, whose link to it is stored in the same transaction
        (that table may leave memory meanwhile: no table is left without its link)."""
        game = find_game(game_name)
        check_options_size(options_data)
        options = new_table_options(game, options_data)
        session = Session(game, options, players or None)
        check_players(session.players, seat_count(game, options))
        check_new_names(session.players)
        settings = settings or {}
        new = NewTable(game.name, encode(options), session.players, settings=settings)
        table_id, _ = await self._store_new(new, plays_again)
        row = await asyncio.to_thread(self.store.table, table_id)
        assert row is not None
        auto_pass = settings.get(AUTO_PASS_KEY) != "off"
        table = Table(row, session, self.store, [], {}, auto_pass, self.token_finished_s)
        joins_before = None
        if plays_again is not None:
            joins_before = await asyncio.to_thread(self._joins_before_next, plays_again)
        async with self._load_lock:  # no open of `plays_again` from the store is under way
            self._hold(table)
            finished = self._tables.get(plays_again) if plays_again else None
            if finished is not None:  # else it reads the link when it is opened
                finished.show_next_table(table_id, joins_before)
        self._tell_added(table_id)
        return table

    async def play_again(
        self, finished: Table, admit: Callable[[], None] | None = None
    ) -> tuple[Table, bool]:
        """The table that plays `finished` again: the same game, its options (a seed the
        game draws at random drawn afresh: records.next_game_options), the same names in
        the same seats, and what its host chose for it (CHOSEN_SETTINGS: the automatic
        passes, the camera mode; a setting never chosen stays the default there too);
        linked from `finished` (stored with it: `create`). A second
        call gets the table the first made; whether this call made it. Raises Rejection
        (`game_not_over`) while `finished` still runs. `admit` is called only when a table
        is to be made, and raises to refuse it (the device's rate of new tables)."""
        async with self._play_again_lock(finished.table_id):
            if finished.next_table_id is not None:
                # opened without the finished table's lock: an undo there meanwhile is
                # refused at once (`played_again`), not held up by a slow replay
                made = await self.openable(finished.next_table_id)
                if made is not None:
                    return made, False
            # the finished table's lock while the next table is stored: an undo that
            # reopened its game meanwhile would leave a running game linked to the next one
            async with finished._lock:
                return await self._make_next_table(finished, admit), True

    def _play_again_lock(self, table_id: str) -> asyncio.Lock:
        """The lock of Play again at the finished table `table_id`."""
        lock = self._play_again_locks.get(table_id)
        if lock is None:
            lock = self._play_again_locks[table_id] = asyncio.Lock()
        return lock

    async def _make_next_table(self, finished: Table, admit: Callable[[], None] | None) -> Table:
        """A new table playing `finished` again (Tables.play_again), under its locks.
        Refused (`game_deleted`) when the history deleted `finished` while this waited for
        its lock: the next game's link from it would name no table."""
        if finished.deleted:
            raise game_deleted()
        if not finished.snapshot.finished:
            raise Rejection(
                Reason.NOT_ALLOWED,
                "game_not_over",
                "this game is still running: play it again once it is over",
            )
        if admit is not None:
            admit()
        options = next_game_options(finished.game, finished.session.options)
        chosen = await asyncio.to_thread(self._chosen_settings, finished.table_id)
        players = list(finished.snapshot.players)
        return await self.create(
            finished.game.name, options, players, chosen, plays_again=finished.table_id
        )

    def _chosen_settings(self, table_id: str) -> dict[str, str]:
        """What the host chose for table `table_id` (CHOSEN_SETTINGS it has stored)."""
        stored = {key: self.store.table_setting(table_id, key) for key in CHOSEN_SETTINGS}
        return {key: value for key, value in stored.items() if value is not None}

    def _tell_added(self, table_id: str) -> None:
        for listener in list(self.added):
            try:
                listener(table_id)
            except Exception:  # a listener's fault never fails the table's creation
                logger.warning("a listener of new tables failed", exc_info=True)

    def take_import_slot(self, client: str, slots: int) -> str | None:
        """Hold one of the `slots` imports that may be read, replayed or queued at once, for
        `client` (an address), until `free_import_slot`: None when held, else the rule that
        refuses it: imports_busy, every one is held; imports_busy_yours, `client` holds half
        of them (at least one), so another address still gets in (one address kept all 4
        busy: another's import was refused 38% of the time)."""
        if self.imports_waiting >= slots:
            return "imports_busy"
        if self._imports_of.get(client, 0) >= max(1, slots // 2):
            return "imports_busy_yours"
        self.imports_waiting += 1
        self._imports_of[client] = self._imports_of.get(client, 0) + 1
        return None

    def free_import_slot(self, client: str) -> None:
        self.imports_waiting -= 1
        left = self._imports_of.pop(client, 1) - 1
        if left > 0:
            self._imports_of[client] = left

    async def import_record(
        self,
        record: object,
        max_actions: int = MAX_RECORD_ACTIONS,
        admit: Callable[[int], None] | None = None,
    ) -> Imported:
        """A new table continuing a game record (JSON bytes, or parsed), checked as a new
        table is, at most `max_actions` long, and replayed (records.plan_import) in the
        import process, then stored. It is opened (replayed here) when first used. Raises
        RecordError naming the problem. `admit` is told the record's number of actions
        before it is stored, and raises to refuse it (the per-address budget of imported
        actions: api.import_record)."""
        plan = await self._planned(record, max_actions)
        if isinstance(plan, ImportRefusal):
            raise plan.error()
        if admit is not None:
            admit(len(plan.seed))
        new = NewTable(plan.game, plan.options, list(plan.players), plan.seed, plan.summary)
        table_id, code = await self._store_new(new)
        if plan.seed:
            self._dice.record_import(table_id, plan.dice)
        self._tell_added(table_id)
        # a record whose game has ended goes to the history: nothing goes on from it, so
        # the table it came from keeps its end (and its host's "Play again")
        source = plan.from_table if plan.summary is None else None
        return Imported(table_id, code, source)

    async def _planned(self, record: object, max_actions: int) -> ImportPlan | ImportRefusal:
        """records.plan_import in the import process (or, without one, the replay thread)."""
        if not self._import_process:
            return await self._replaying(lambda: plan_import(record, max_actions))
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            if self._import_pool is None:
                context = multiprocessing.get_context("spawn")  # no fork of a threaded server
                # the worker ends with the server, even one killed with SIGKILL (worker_life)
                self._import_pool = ProcessPoolExecutor(
                    1, mp_context=context, initializer=end_with_parent, initargs=(os.getpid(),)
                )
            try:
                return await loop.run_in_executor(
                    self._import_pool, plan_import, record, max_actions
                )
            except BrokenProcessPool:  # the process died (killed): start a new one, once
                self._import_pool = None
                if attempt:  # it cannot start here (e.g. no importable __main__)
                    logger.warning("no import process; importing on the replay thread")
                    break
                logger.warning("the import process ended; starting another")
        return await self._replaying(lambda: plan_import(record, max_actions))

    async def point_continuation(self, imported: Imported, token: str | None) -> bool:
        """The game of `imported.from_table` goes on at the imported table: its screens
        say so once it is over (a pointer: no code, no device carried). Only when `token`
        is that table's host's (the device that exported, ended and imported), so a record
        naming a table points nothing when another imports it. Whether it was pointed."""
        source = imported.from_table
        if source is None or not token:
            return False
        device = await asyncio.to_thread(self.store.device, hash_token(token))
        if device is None or device.table_id != source or not device.host:
            return False
        async with self._load_lock:  # no open of `source` from the store is under way
            await asyncio.to_thread(
                self.store.set_table_setting, source, CONTINUED_KEY, imported.table_id
            )
            table = self._tables.get(source)
            if table is not None:
                table.show_continued()
        return True

    async def add_device(self, table_id: str, host: bool) -> str:
        """A device token for a table, opened or not (an import's host device)."""
        table = self._tables.get(table_id)
        if table is not None:
            return await table.add_device(host)
        token = new_token()
        await asyncio.to_thread(self.store.add_device, hash_token(token), table_id, host, None)
        return token

    async def _store_new(self, new: NewTable, plays_again: str | None = None) -> tuple[str, str]:
        """Store a new table with a free join code (with an imported record's log and its
        history entry when that game has ended, its settings, and the link to it from the
        finished table it plays again: one transaction); (table id, code)."""
        table_id = secrets.token_urlsafe(9)
        for _ in range(100):
            code = new_join_code()
            if not await asyncio.to_thread(self.store.code_in_use, code):
                break
        else:  # pragma: no cover - 32**6 codes
            raise RuntimeError("no free join code")
        assert isinstance(new.options, dict)
        links = [(plays_again, NEXT_TABLE_KEY)] if plays_again else []
        # the devices the next game carries: those joined by the first Play again
        joins_mark = (plays_again, JOINS_BEFORE_NEXT_KEY) if plays_again else None
        await asyncio.to_thread(
            functools.partial(
                self.store.create_table,
                table_id,
                code,
                new.game,
                new.options,
                new.players,
                new.seed,
                new.summary,
                settings=new.settings,
                pointed_from=links,
                joins_mark=joins_mark,
            )
        )
        title = find_game(new.game).title
        players = printable(", ".join(new.players))  # a stored name may hold a lone surrogate
        logger.info("table %s started: %s, %s; join code %s", table_id, title, players, code)
        return table_id, code
