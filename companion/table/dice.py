"""Dice statistics kept as the games go: how often each face came up per die colour, for
every table and over every recorded game, all rolls and camera rolls apart.

The counts are read once from the store after the server starts (`DiceKeeper`: in the
background, off the event loop) and then changed by every accepted roll, every undo of one
and every import (`Table.act`, `Table.undo`, `Tables.import_record`), so the dice page
costs the same whatever the length of the
logs (reading every log on each request took 1.2-1.7 s on a store of 91,000 actions, and a
few looping requests stalled every table). The start-up read counts one stored log at a
time (Store.logs), so it holds counts, not every stored action (all at once: 2.0 GB for
150 imported long games). An undo takes back the action before it, as Session.undo does
(`effective_entries`). An imported record's rolls count among all rolls but never as the
camera's (`counted_by`). The verdicts are companion.live.stats'."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field

from companion.live.stats import FACES
from companion.rules.base import Die, Roll
from companion.rules.session import CAMERA, replay_undos, standing
from companion.table.store import LogEntry, implied_seqs

logger = logging.getLogger(__name__)

# who a roll counts as when it came in an imported record: among all rolls, never the camera's
IMPORTED = "imported"
# the action ids an import gives its actions (records.import_ids): `import-N`, `import-N-M`
IMPORT_ID_PREFIX = "import-"

# every stored table's log, one table at a time (Store.logs)
LogSource = Callable[[], Iterable[tuple[str, list[LogEntry]]]]


def counted_by(entry: LogEntry) -> str:
    """Who a stored roll counts as: its `by`, but IMPORTED for an imported record's
    action: a record's "camera" is its writer's claim, not a roll this server's camera
    read, so one import cannot change the camera's fairness figures."""
    return IMPORTED if entry.action_id.startswith(IMPORT_ID_PREFIX) else entry.by


def effective_entries(log: list[LogEntry]) -> list[LogEntry]:
    """The moves that stand, by the session's own undo rule (companion.rules.session): an
    undo of a throw's roll takes back the moves the throw implied too."""
    implied = implied_seqs(log)
    return standing(log, lambda entry: entry.kind == "undo", lambda entry: entry.seq in implied)


def taken_back(log: list[LogEntry]) -> dict[int, LogEntry]:
    """Each undo's seq -> the action it took back, by the same rule as `effective_entries`
    (an undo that found nothing of its maker's to take back is not in it)."""
    implied = implied_seqs(log)
    taken = replay_undos(log, lambda e: e.kind == "undo", lambda e: e.seq in implied)[1]
    return {log[index].seq: action for index, action in taken.items()}


def imported_actions(log: list[LogEntry]) -> int:
    """How many of the actions that stand, from the first, came in an imported record (an
    import's log precedes every action made at its table)."""
    standing = effective_entries(log)
    return next((n for n, e in enumerate(standing) if counted_by(e) != IMPORTED), len(standing))


def roll_of(entry: LogEntry) -> Roll | None:
    """The roll a stored log entry holds, or None (another move, or a malformed roll)."""
    move = entry.move
    if not move or move.get("kind") != "roll":
        return None
    try:
        return Roll(dice=tuple(Die(str(d["colour"]), int(d["value"])) for d in move["dice"]))
    except (KeyError, TypeError, ValueError):
        logger.warning("log entry %s holds a malformed roll", entry.seq)
        return None


@dataclass
class Faces:
    """Face counts per colour (index 0 is face 1) and the number of rolls counted."""

    rolls: int = 0
    counts: dict[str, list[int]] = field(default_factory=dict)

    def change(self, roll: Roll, sign: int) -> None:
        """Count `roll` (sign 1) or take it back (sign -1). A value outside 1-6 is not
        counted (the rules never accept one)."""
        self.rolls += sign
        for die in roll.dice:
            if 1 <= die.value <= FACES:
                faces = self.counts.setdefault(die.colour, [0] * FACES)
                faces[die.value - 1] += sign
                if not any(faces):  # every roll of this colour undone: as if never seen
                    del self.counts[die.colour]

    def merge(self, other: Faces, sign: int) -> None:
        """Add `other`'s counts (sign 1: an import's) or take them away (sign -1: a deleted
        game's)."""
        self.rolls += sign * other.rolls
        for colour, theirs in other.counts.items():
            faces = self.counts.setdefault(colour, [0] * FACES)
            faces[:] = [mine + sign * n for mine, n in zip(faces, theirs, strict=True)]
            if not any(faces):
                del self.counts[colour]


@dataclass
class Tally:
    """One table's counts, or every table's: all rolls, and the camera's alone."""

    all: Faces = field(default_factory=Faces)
    camera: Faces = field(default_factory=Faces)

    def change(self, roll: Roll, by: str, sign: int) -> None:
        self.all.change(roll, sign)
        if by == CAMERA:
            self.camera.change(roll, sign)

    def faces(self, camera_only: bool) -> Faces:
        return self.camera if camera_only else self.all


class DiceTally:
    """Every table's dice counts and their sum, changed roll by roll."""

    def __init__(self) -> None:
        self._tables: dict[str, Tally] = {}
        self.total = Tally()
        self.games: set[str] = set()  # tables with at least one recorded action
        self.version = 0  # changes with every count: a page drawn at a version stays true

    @classmethod
    def from_logs(cls, logs: dict[str, list[LogEntry]]) -> DiceTally:
        """The counts of every stored log (read once, at start-up)."""
        tally = cls()
        for table_id, log in logs.items():
            tally.add_log(table_id, log)
        return tally

    def add_log(self, table_id: str, log: list[LogEntry]) -> None:
        """Count a table's stored log (at start-up, or an imported record's)."""
        if log:
            self.games.add(table_id)
        for entry in effective_entries(log):
            roll = roll_of(entry)
            if roll is not None:
                self.change(table_id, roll, counted_by(entry), 1)

    def of(self, table_id: str) -> Tally:
        return self._tables.get(table_id) or Tally()

    def change(self, table_id: str, roll: Roll, by: str, sign: int) -> None:
        """A roll accepted (sign 1) or undone (sign -1) at `table_id`."""
        self._tables.setdefault(table_id, Tally()).change(roll, by, sign)
        self.total.change(roll, by, sign)
        self.version += 1

    def add_tally(self, table_id: str, tally: Tally) -> None:
        """A new table's counts, counted elsewhere (an import's, in the import process)."""
        self._tables[table_id] = tally
        self.version += 1
        self.total.all.merge(tally.all, 1)
        self.total.camera.merge(tally.camera, 1)

    def remove(self, table_id: str) -> None:
        """A deleted game's counts go, from the sum too (as if it was never played)."""
        tally = self._tables.pop(table_id, None)
        if tally is not None:
            self.total.all.merge(tally.all, -1)
            self.total.camera.merge(tally.camera, -1)
        self.games.discard(table_id)
        self.version += 1

    def acted(self, table_id: str) -> None:
        """`table_id` has a recorded action."""
        if table_id not in self.games:
            self.games.add(table_id)
            self.version += 1


# a change that arrived while the stored logs were being read: (table, the seq of the log
# entry behind it, the roll or None, by, sign); or an import's counts: (table, 0, Tally)
_Change = tuple[str, int, Roll | Tally | None, str, int]


class DiceKeeper:
    """The server's DiceTally, read from the store in the background after start-up (a
    big store is not read before the first request is served) and changed by every roll,
    undo and import. Changes made while the store is being read are kept aside and applied
    afterwards unless the read already saw them (their log entry's seq is not beyond the
    last one read of that table; an import's table was read whole)."""

    def __init__(self) -> None:
        self.tally = DiceTally()
        self._source: tuple[LogSource, Executor] | None = None
        self._reading: asyncio.Task[None] | None = None
        self._ready = False
        self._aside: list[_Change] = []
        # games deleted while the stored logs were being read (the read may have counted them)
        self._deleted: set[str] = set()

    def start(self, read: LogSource, pool: Executor) -> None:
        """Count every stored log (`read`, on `pool`, one table's log at a time) in the
        background."""
        self._source = (read, pool)
        self._reading = self._begin()

    def _begin(self) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._read())
        task.add_done_callback(_said_why)
        return task

    async def _read(self) -> None:
        assert self._source is not None
        read, pool = self._source

        def counted() -> tuple[DiceTally, dict[str, int]]:
            tally, seen = DiceTally(), {}
            for table_id, log in read():  # one log at a time: only the counts are kept
                if log:
                    seen[table_id] = max(entry.seq for entry in log)
                    tally.add_log(table_id, log)
            return tally, seen

        tally, seen = await asyncio.get_running_loop().run_in_executor(pool, counted)
        for table_id, seq, what, by, sign in self._aside:
            if isinstance(what, Tally):
                if table_id not in seen:
                    tally.add_tally(table_id, what)
                    tally.acted(table_id)
            elif seq > seen.get(table_id, 0):
                tally.acted(table_id)
                if what is not None:
                    tally.change(table_id, what, by, sign)
        for table_id in self._deleted:
            tally.remove(table_id)
        self.tally, self._aside, self._deleted, self._ready = tally, [], set(), True

    async def ready(self) -> DiceTally:
        """The counts, once the store has been read. Raises what the read raised (e.g.
        StorageError for a damaged store); the next call reads again."""
        if not self._ready:
            if self._source is None:
                raise RuntimeError("DiceKeeper.start was not called")
            failed = (
                self._reading is not None
                and self._reading.done()
                and self._reading.exception() is not None
            )
            if self._reading is None or failed:
                self._reading = self._begin()
            await asyncio.shield(self._reading)
        return self.tally

    def record(self, table_id: str, seq: int, move: object, by: str, sign: int) -> None:
        """An action committed at `seq` (an undo: sign -1, with the move it took back)."""
        roll = move if isinstance(move, Roll) else None
        if not self._ready:
            self._aside.append((table_id, seq, roll, by, sign))
            return
        self.tally.acted(table_id)
        if roll is not None:
            self.tally.change(table_id, roll, by, sign)

    def record_import(self, table_id: str, counted: Tally) -> None:
        if not self._ready:
            self._aside.append((table_id, 0, counted, "", 1))
            return
        self.tally.add_tally(table_id, counted)
        self.tally.acted(table_id)

    def forget(self, table_id: str) -> None:
        """A game deleted from the store: its rolls count no more."""
        if not self._ready:
            self._deleted.add(table_id)
            return
        self.tally.remove(table_id)


def _said_why(task: asyncio.Task[None]) -> None:
    """Log why the stored logs could not be read (the dice page answers 503 meanwhile)."""
    if not task.cancelled() and task.exception() is not None:
        logger.warning("the dice statistics were not read: %s", task.exception())
