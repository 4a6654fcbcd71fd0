"""The table the camera feeds, how that table takes camera rolls, and the dice it throws.

- One camera, one table: the table a host attached the camera to (stored in SQLite
  `server_settings` before the host is answered, restored at start-up while that table is
  open), else the most recently created open table, looked up again every second by the
  hub's follower so a throw never waits for a query. A game that plays on (an action in the
  last FOLLOW_IDLE_S) keeps the camera from a newer table too: anyone on the network may
  start a table, and the re-probe took a running game's camera (and its picture) so. A
  restart keeps that too: the table served is stored, and restored while its game plays on,
  by its last action's stored time; an imported record's actions are no play at the table
  (Table.acted_at). When
  the table served ends, the camera does not go back to an older open table (an abandoned
  game of the evening before, which the players' trial saw take the camera): it waits for
  a newer one or a host's attach; nor does it follow a table started more than
  FOLLOW_MAX_AGE_S ago. `hold` says why the table served keeps it ("attached", "playing").
- A table chosen for the camera (its host's "Use the camera at this table", or the server's
  own start page) keeps it until its game ends, or until it is left: no device connected
  to it (no screen of it open) and no action there for CHOSEN_LEFT_S, counted from the
  choice at the latest (`is_left`). Its players went home without ending the game, and
  only the server's own screen moved the camera on; now it is free as a table that rests
  is: it follows the newest table (the stored choice is forgotten, so a restart does not
  choose it again).
- Each table's mode: "auto" applies a matching roll at once, "sure" applies a roll the
  camera is sure of and asks about its unsure dice otherwise, "confirm" waits for the
  active player (stored in `table_settings`; None until a host chooses, when the runtime's
  default for its source applies). The game played again keeps the host's choice
  (Tables.play_again).
- The dice set the colour stage assigns to at a table: the dice its game declares
  (`Game.dice_colours`), measured by the active calibration when that holds those colours
  (all of its set, or some: Sixes' two whites at a camera calibrated for Qwixx), else the
  shipped standard set or each colour's typical look. Only a table whose game
  throws the calibrated set teaches the calibration's setup (`throws_calibrated_set`): a
  Sixto table at a camera calibrated for Qwixx dice learns nothing into it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from companion.rules.base import Game
from companion.table.held_reading import Mode
from companion.table.tables import CAMERA_MODE_KEY, Table, Tables
from companion.table.text import printable

if TYPE_CHECKING:
    from companion.vision.calibration import TableCalibration
    from companion.vision.colour import DiceSet

logger = logging.getLogger(__name__)

MODE_KEY = CAMERA_MODE_KEY  # stored with the table: the game played again keeps it
MODES: tuple[Mode, ...] = ("auto", "sure", "confirm")
ATTACH_KEY = "camera_table"  # server_settings: the table a host attached the camera to
# server_settings: the table the camera served last, however it got there: a restart gives
# it back while its game plays on ("" while it served none)
SERVED_KEY = "camera_served"
# the newest table's created_at the camera followed: a restart does not go back either
FOLLOWED_SINCE_KEY = "camera_followed_since"
FOLLOW_MAX_AGE_S = 12 * 3600.0  # an open table started longer ago is not followed by itself
FOLLOW_IDLE_S = 600.0  # a game with an action this recent keeps the camera from newer tables
# a chosen table with no device connected and no action this long lets the camera go: the
# same 10 minutes as a game's rest, so the pages say one length of time
CHOSEN_LEFT_S = FOLLOW_IDLE_S
# rows the follower reads at a time (it read every running table's row each second, 3,000
# on a busy café's store); the first open one is nearly always the first row
FOLLOW_PAGE_ROWS = 16


def plays_on(table: Table, now: float | None = None) -> bool:
    """Whether the game at `table` is being played: open, with an action in the last
    FOLLOW_IDLE_S."""
    now = time.time() if now is None else now
    acted = table.acted_at
    return not table.snapshot.finished and acted is not None and now - acted < FOLLOW_IDLE_S


def is_left(acted_at: float | None, seen_at: float, now: float) -> bool:
    """Whether a table chosen for the camera is left: nothing happened there for
    CHOSEN_LEFT_S, neither an action (`acted_at`) nor a device connected to it (`seen_at`:
    when one was last seen connected, or the camera was chosen for it, the later)."""
    return now - max(seen_at, acted_at or 0.0) >= CHOSEN_LEFT_S


def dice_set_for(
    game: Game[Any, Any], options: object, calibration: TableCalibration | None
) -> DiceSet | None:
    """See the module docstring; None when the game declares no fixed set (each die's
    colour is then named on its own)."""
    colours = game.dice_colours(options)
    if colours is None:
        return None
    if throws_calibrated_set(colours, calibration):
        assert calibration is not None
        return calibration.dice_set
    measured = _measured_subset(colours, calibration)
    return measured if measured is not None else _standard_set(game.name, colours)


def _measured_subset(
    colours: tuple[str, ...], calibration: TableCalibration | None
) -> DiceSet | None:
    """The game's dice as the calibration measured them, when its set holds them all
    (Sixes' two white dice at a camera calibrated for Qwixx's six): the table's own light
    beats each colour's typical look. None otherwise."""
    if calibration is None:
        return None
    from companion.vision.colour import DiceSet

    left = list(calibration.dice_set.dice)
    dice = []
    for colour in colours:
        die = next((d for d in left if d.colour == colour), None)
        if die is None:
            return None
        left.remove(die)
        dice.append(die)
    return DiceSet(calibration.dice_set.name, tuple(dice), calibration.dice_set.source)


def throws_calibrated_set(
    colours: tuple[str, ...] | None, calibration: TableCalibration | None
) -> bool:
    """Whether a game throwing dice of these `colours` (its `Game.dice_colours`; None:
    dice that change) throws the set the camera is calibrated for (the same colours, in
    any order): only then are its rolls the calibration's setup's dice, to be read with
    what that setup learnt and to teach it (companion.table.learning)."""
    return (
        calibration is not None
        and colours is not None
        and sorted(calibration.dice_set.colours) == sorted(colours)
    )


@cache
def _standard_set(name: str, colours: tuple[str, ...]) -> DiceSet | None:
    from companion.vision.colour import CalibrationError, builtin_dice_set

    try:
        return builtin_dice_set(name, colours)
    except CalibrationError:
        logger.warning("no dice set for %s's dice %s", name, colours)
        return None


def _log_target(table: Table | None) -> None:
    """Say in the server's log where camera rolls go now, in the words the owner's screens
    use: the game, its players and its join code (the table id is on no screen)."""
    if table is None:
        logger.info(
            "camera rolls go to no table: no game newer than the last one it served is in "
            'progress (a host\'s "Use the camera at this table" takes it)'
        )
        return
    snapshot = table.snapshot
    logger.info(
        "camera rolls go to table %s (%s: %s; join code %s)",
        table.table_id,
        snapshot.game.title,
        printable(", ".join(snapshot.players)),  # an imported name may hold a lone surrogate
        table.code,
    )


class CameraFeed:
    """See the module docstring."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._explicit: str | None = None  # the table a host attached the camera to
        # the feed's time (time.time; a test moves it on)
        self.clock: Callable[[], float] = time.time
        # when the chosen table was last seen with a device connected, or chosen (is_left)
        self._chosen_seen = 0.0
        # a choice and its letting go one at a time: a host's choice stored while a left
        # table's was forgotten must not be forgotten with it
        self._choosing = asyncio.Lock()
        self._target: str | None = None  # as the follower last found it
        self._modes: dict[str, Mode | None] = {}  # None: the host chose no mode
        self._followed_since = 0.0  # created_at of the newest table followed so far
        self._hold: str | None = None  # why the table served keeps the camera (`hold`)
        # follows_next's answers per table, valid while nothing they read changed (the
        # key: the store's running_changes and the camera's tables): every open page of a
        # waiting table asks it on each camera poll (0.7 s), and each ask read the store
        self._follows: tuple[tuple[object, ...], dict[str, bool]] = ((), {})

    async def target_table(self, cached: bool = True) -> Table | None:
        """The table camera rolls go to (`cached`: as the follower last found it)."""
        table_id = self._explicit or (self._target if cached else None)
        if table_id is not None:
            table = await self.tables.openable(table_id)
            if table is not None and not table.snapshot.finished:
                return table
        if self._target is not None:  # a game that plays on keeps it from a newer table
            table = await self.tables.openable(self._target)
            if table is not None and plays_on(table, self.clock()):
                return table
        # never older than the table served before: the camera does not go back
        oldest = max(self._followed_since, self.clock() - FOLLOW_MAX_AGE_S)
        store = self.tables.store
        skip = 0
        while True:  # a page of the newest running rows at a time, not every stored row
            rows = await asyncio.to_thread(
                store.running_tables_since, oldest, FOLLOW_PAGE_ROWS, skip
            )
            for row in rows:
                table = await self.tables.openable(row.table_id)
                if table is not None and not table.snapshot.finished:
                    self._followed_since = max(self._followed_since, row.created_at)
                    return table
            if len(rows) < FOLLOW_PAGE_ROWS:
                return None
            skip += len(rows)

    async def follows_next(self, table: Table) -> bool:
        """Whether camera rolls would go to `table` by themselves once the table served now
        lets go (its game ends, or rests): only the newest running table not older than any
        served before (`target_table`), so not a table older than the one served, nor one a
        newer table was started after (a newer one that cannot be opened does not count: the
        follower passes over it). The store is read again only once a table was
        created, ended, reopened or removed, or the camera moved (`_follows`)."""
        if table.created_at < max(self._followed_since, self.clock() - FOLLOW_MAX_AGE_S):
            return False
        # read before the store is: a change during the read is a new key for the next ask
        key = (self.tables.store.running_changes, self._explicit, self._target)
        if self._follows[0] != key:
            self._follows = (key, {})
        answers = self._follows[1]
        if table.table_id not in answers:
            answers[table.table_id] = await self._is_newest_waiting(table)
        return answers[table.table_id]

    async def _is_newest_waiting(self, table: Table) -> bool:
        """No running table other than the camera's was started after `table` that the
        follower would take instead (`target_table`: one it can open and not finished; a
        damaged one it passes over). Store reads, a page of the newest rows at a time."""
        served = {self._explicit, self._target, table.table_id}
        skip = 0
        while True:
            rows = await asyncio.to_thread(
                self.tables.store.running_tables_since,
                table.created_at,
                FOLLOW_PAGE_ROWS,
                skip,
            )
            for row in rows:
                if row.table_id in served or row.created_at <= table.created_at:
                    continue
                newer = await self.tables.openable(row.table_id)
                if newer is not None and not newer.snapshot.finished:
                    return False
            if len(rows) < FOLLOW_PAGE_ROWS:
                return True
            skip += len(rows)

    async def refresh(self) -> Table | None:
        """Look up the target table afresh (the follower calls this every second)."""
        await self._let_go_if_left()
        table = await self.target_table(cached=False)
        found = table.table_id if table else None
        if table is None:
            self._hold = None
        elif found == self._explicit:
            self._hold = "attached"
        else:
            self._hold = "playing" if plays_on(table, self.clock()) else None
        if found != self._target:
            self._target = found
            _log_target(table)
            await self._store_served(found)
        return table

    async def _let_go_if_left(self) -> None:
        """The chosen table lets the camera go once it is left (`is_left`): it follows the
        newest table from now on, also after a restart."""
        chosen = self._explicit
        if chosen is None:
            return
        table = await self.tables.openable(chosen)
        if table is None or table.snapshot.finished:  # target_table passes over it
            return
        now = self.clock()
        if table.watched:
            self._chosen_seen = now
        if not is_left(table.acted_at, self._chosen_seen, now):
            return
        async with self._choosing:  # chosen again meanwhile: not left
            if self._explicit == chosen and is_left(table.acted_at, self._chosen_seen, now):
                await self._forget_choice(chosen)

    async def _forget_choice(self, table_id: str) -> None:
        logger.info(
            "table %s was chosen for the camera, but no device has been connected to it and "
            "no action made there for %d minutes: the camera follows the newest table again",
            table_id,
            round(CHOSEN_LEFT_S / 60),
        )
        self._explicit = None
        try:
            await asyncio.to_thread(self.tables.store.set_server_setting, ATTACH_KEY, "")
        except Exception:  # a store in trouble only costs that (a restart chooses it again)
            logger.warning("the camera's choice was not forgotten in the store", exc_info=True)

    async def _store_served(self, table_id: str | None) -> None:
        """Keep the table served for a restart (`restore`); a store in trouble only costs
        that (the camera serves on)."""
        try:
            await asyncio.to_thread(self._write_served, table_id)
        except Exception:
            logger.warning("the table the camera serves was not stored", exc_info=True)

    def _write_served(self, table_id: str | None) -> None:
        # one transaction: a kill between the two would restart from a stale starting point
        self.tables.store.set_server_settings(
            {SERVED_KEY: table_id or "", FOLLOWED_SINCE_KEY: repr(self._followed_since)}
        )

    def attached_to(self, table_id: str) -> bool:
        return self._target == table_id

    @property
    def target_id(self) -> str | None:
        return self._target

    @property
    def hold(self) -> str | None:
        """Why the table served keeps the camera from a newer table and from another
        table's host: "attached" (chosen for it: by its host, or on the server's own start
        page; until it is left, `is_left`), "playing" (its game plays on), None (it does not), as the follower last found
        it."""
        return self._hold

    async def attach(self, table_id: str) -> Table | None:
        """Camera rolls go to `table_id` from now on, also after a restart (stored first:
        what the host was told must survive)."""
        async with self._choosing:
            await asyncio.to_thread(self.tables.store.set_server_setting, ATTACH_KEY, table_id)
            self._explicit = table_id
            self._chosen_seen = self.clock()
        return await self.refresh()

    async def restore(self) -> None:
        """At start-up, what the running server had: the table a host attached the camera
        to, while it exists and is open; and the table the camera served, while its game
        plays on (its last action, as stored, in the last FOLLOW_IDLE_S): a restart must
        not hand a running game's camera to a newer table (the café owner's evening: an
        imported record nobody played took it). Else the newest-table rule. Never raises
        (a store in trouble only costs these)."""
        try:
            attached, served, since = await asyncio.to_thread(self._stored_choices)
            # the camera never went back to an older table: nor does it after a restart
            self._followed_since = max(self._followed_since, float(since or 0.0))
            if attached:  # "": the chosen table was left (`_let_go_if_left`)
                await self._restore_attachment(attached)
            if served:
                await self._restore_served(served)
        except Exception:
            logger.warning("the camera's table was not restored", exc_info=True)

    def _stored_choices(self) -> tuple[str | None, str | None, str | None]:
        store = self.tables.store
        return (
            store.server_setting(ATTACH_KEY),
            store.server_setting(SERVED_KEY),
            store.server_setting(FOLLOWED_SINCE_KEY),
        )

    async def _restore_attachment(self, table_id: str) -> None:
        table = await self.tables.openable(table_id)
        if table is None or table.snapshot.finished:
            logger.info("camera was attached to table %s, now finished or gone", table_id)
            return
        self._explicit = table_id
        self._chosen_seen = self.clock()  # its devices come back after the restart
        logger.info("camera attached to table %s again", table_id)

    async def _restore_served(self, table_id: str) -> None:
        table = await self.tables.openable(table_id)
        if table is None or not plays_on(table, self.clock()):
            return
        self._target = table_id
        self._followed_since = max(self._followed_since, table.created_at)
        logger.info("camera rolls go to table %s again: its game plays on", table_id)

    # -- per-table mode -------------------------------------------------------------------
    async def mode(self, table_id: str, default: Mode) -> Mode:
        """The table's mode: the host's choice, else `default` (the source's)."""
        if table_id not in self._modes:
            self._modes[table_id] = await asyncio.to_thread(self._read_mode, table_id)
        return self._modes[table_id] or default

    def _read_mode(self, table_id: str) -> Mode | None:
        value = self.tables.store.table_setting(table_id, MODE_KEY)
        for mode in MODES:
            if value == mode:
                return mode
        return None

    async def set_mode(self, table_id: str, mode: Mode) -> None:
        await asyncio.to_thread(self.tables.store.set_table_setting, table_id, MODE_KEY, mode)
        self._modes[table_id] = mode
