"""The dice counts kept roll by roll (companion/table/dice.py): what the background read of
the stored logs saw is counted once, what was committed while it read is added after it,
an undo takes its roll back, and a failed read is tried again on the next request."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from companion.rules.base import Die, Roll
from companion.table.dice import DiceKeeper, DiceTally
from companion.table.store import LogEntry, StorageError

RED_6 = Roll(dice=(Die("red", 6),))
RED_1 = Roll(dice=(Die("red", 1),))


def roll_entry(seq: int, roll: Roll, by: str = "camera") -> LogEntry:
    dice = [{"colour": d.colour, "value": d.value} for d in roll.dice]
    return LogEntry(seq, f"a{seq}", "move", by, {"kind": "roll", "player": -1, "dice": dice})


def test_changes_made_while_the_logs_are_read_are_counted_once() -> None:
    release = threading.Event()
    stored = {"A": [roll_entry(1, RED_6)], "C": [roll_entry(1, RED_1)]}

    def read() -> dict[str, list[LogEntry]]:
        release.wait(30)
        return stored

    async def scenario() -> DiceTally:
        keeper = DiceKeeper()
        with ThreadPoolExecutor(1) as pool:
            keeper.start(read, pool)
            keeper.record("A", 1, RED_6, "camera", 1)  # committed before the read: seen by it
            keeper.record("A", 2, RED_1, "0", 1)  # committed after the read: not seen
            keeper.record("A", 3, RED_1, "0", -1)  # its undo, after the read too
            keeper.record("A", 4, RED_1, "camera", 1)
            imported = DiceTally.from_logs({"x": [roll_entry(1, RED_6)]}).of("x")
            keeper.record_import("B", imported)  # stored after the read
            keeper.record_import("C", imported)  # stored before: the read counted it
            release.set()
            tally = await keeper.ready()
            keeper.record("A", 5, RED_6, "camera", 1)  # after: counted at once
            return tally

    tally = asyncio.run(scenario())
    assert tally.of("A").all.counts == {"red": [1, 0, 0, 0, 0, 2]}
    assert tally.of("A").camera.counts == {"red": [1, 0, 0, 0, 0, 2]}
    assert tally.of("B").all.counts == {"red": [0, 0, 0, 0, 0, 1]}
    assert tally.of("C").all.counts == {"red": [1, 0, 0, 0, 0, 0]}
    assert tally.total.all.counts == {"red": [2, 0, 0, 0, 0, 3]}
    assert tally.total.all.rolls == 5 and tally.games == {"A", "B", "C"}


def test_a_failed_read_is_tried_again() -> None:
    attempts: list[int] = []

    def read() -> dict[str, list[LogEntry]]:
        attempts.append(1)
        if len(attempts) == 1:
            raise StorageError("corrupt", "the game store is damaged")
        return {"A": [roll_entry(1, RED_6)]}

    async def scenario() -> DiceTally:
        keeper = DiceKeeper()
        with ThreadPoolExecutor(1) as pool:
            keeper.start(read, pool)
            with pytest.raises(StorageError):
                await keeper.ready()
            return await keeper.ready()

    assert asyncio.run(scenario()).of("A").all.rolls == 1
    assert len(attempts) == 2
