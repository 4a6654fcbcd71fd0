"""Opening a stored game (replaying its log into its session) never holds up the event
loop, and one table is opened once (issue 25, item 5: 4 addresses importing and opening
long games pushed another table's updates to p95 146-285 ms). Real SQLite, the real
replay thread.

The replay runs on the replay thread; before, it held the interpreter until the switch
interval (5 ms) ran out each time the loop let go of it for a system call, so each of the
loop's waits cost at least 5 ms. Now it works in slices of `REPLAY_SLICE_S` and sleeps
`REPLAY_PAUSE_S` between them. Measured: the loop's `asyncio.sleep(0.001)` took a median
6.2 ms during the open of a 10,000-entry game before, 2.2 ms now."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from companion.table.store import LogEntry, Store
from companion.table.tables import Tables
from tests.reliability.test_abuse import long_record

LONG = "longgame"


def store_long_game(store: Store) -> int:
    """A running long game: a real Qwixx game's moves, each taken back by the
    host and made again until its log is about 10,000 entries long; its length."""
    record = long_record("qwixx", 99)
    moves = [(a["by"], a["move"]) for a in record["actions"]][:-1]
    repeats = max(0, (10_000 - len(moves)) // (2 * len(moves)))
    log: list[LogEntry] = []
    for index, (by, move) in enumerate(moves):
        for again in range(repeats + 1):
            if again:
                log.append(LogEntry(len(log) + 1, f"u{index}-{again}", "undo", "host", None))
            log.append(LogEntry(len(log) + 1, f"m{index}-{again}", "move", by, move))
    store.create_table(LONG, "LONG01", "qwixx", record["options"], record["players"], log)
    return len(log)


def test_opening_a_long_game_leaves_the_loop_free(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "companion.sqlite3")
    entries = store_long_game(store)
    assert entries > 5_000

    async def scenario() -> tuple[list[float], object, object]:
        tables = Tables(store, import_process=False)
        gaps: list[float] = []
        done = asyncio.Event()

        async def ticking() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(ticking())
        try:
            # two requests at once: one replay, one table
            first, second = await asyncio.gather(tables.get(LONG), tables.get(LONG))
        finally:
            done.set()
            await ticker
            tables.close()
        return gaps, first, second

    try:
        gaps, first, second = asyncio.run(scenario())
    finally:
        store.close()
    assert first is not None and first is second
    assert first.snapshot.state_id == entries  # type: ignore[attr-defined]
    assert len(gaps) >= 20, gaps
    # the loop waits less than one switch interval for the interpreter, in the median
    # (before: 6.2 ms, at least the 5 ms switch interval plus the 1 ms sleep)
    assert statistics.median(gaps) < sys.getswitchinterval(), statistics.median(gaps)
