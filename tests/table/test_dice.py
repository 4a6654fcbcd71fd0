"""The dice counts kept roll by roll (companion/table/dice.py): what the background read of
the stored logs saw is counted once, what was committed while it read is added after it,
an undo takes its roll back, and a failed read is tried again on the next request. The
start-up read holds one stored log at a time, not every stored action (a store of 150
imported long games took 2.0 GB to start), and an imported record's rolls never count as
this server's camera's (a record's "camera" is a claim)."""

from __future__ import annotations

import asyncio
import random
import threading
import tracemalloc
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from companion.rules.base import Die, Roll
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.simulate import random_action
from companion.table.dice import DiceKeeper, DiceTally
from companion.table.store import LogEntry, StorageError, Store
from companion.table.tables import Tables

RED_6 = Roll(dice=(Die("red", 6),))
RED_1 = Roll(dice=(Die("red", 1),))


def roll_entry(seq: int, roll: Roll, by: str = "camera") -> LogEntry:
    dice = [{"colour": d.colour, "value": d.value} for d in roll.dice]
    return LogEntry(seq, f"a{seq}", "move", by, {"kind": "roll", "player": -1, "dice": dice})


def test_changes_made_while_the_logs_are_read_are_counted_once() -> None:
    release = threading.Event()
    stored = {"A": [roll_entry(1, RED_6)], "C": [roll_entry(1, RED_1)]}

    def read() -> Iterable[tuple[str, list[LogEntry]]]:
        release.wait(30)
        return stored.items()

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

    def read() -> Iterable[tuple[str, list[LogEntry]]]:
        attempts.append(1)
        if len(attempts) == 1:
            raise StorageError("corrupt", "the game store is damaged")
        return {"A": [roll_entry(1, RED_6)]}.items()

    async def scenario() -> DiceTally:
        keeper = DiceKeeper()
        with ThreadPoolExecutor(1) as pool:
            keeper.start(read, pool)
            with pytest.raises(StorageError):
                await keeper.ready()
            return await keeper.ready()

    assert asyncio.run(scenario()).of("A").all.rolls == 1
    assert len(attempts) == 2


COLOURS = ("white", "white", "red", "yellow", "green", "blue")


def stored_log(rng: random.Random, moves: int) -> list[LogEntry]:
    """A long log as a Qwixx table leaves it: camera rolls and rolls entered by hand,
    crosses between them, now and then an undo."""
    log: list[LogEntry] = []
    for seq in range(1, moves + 1):
        if seq % 3 == 1:
            roll = Roll(dice=tuple(Die(c, rng.randint(1, 6)) for c in COLOURS))
            log.append(roll_entry(seq, roll, rng.choice(("camera", "0", "host"))))
        elif seq % 50 == 0:
            log.append(LogEntry(seq, f"a{seq}", "undo", "host", None))
        else:
            cross = {"kind": "cross", "player": 0, "colour": "red", "number": 2 + seq % 11}
            log.append(LogEntry(seq, f"a{seq}", "move", "0", cross))
    return log


def peak_bytes(work: object) -> int:
    """The most memory Python held (tracemalloc, every thread) while running `work`."""
    tracemalloc.start()
    try:
        assert callable(work)
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_start_up_read_holds_one_log_at_a_time_and_counts_the_same(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = Store.open(tmp_path / "companion.sqlite3")
    logs = {f"t{n:02d}": stored_log(rng, 1500) for n in range(40)}  # 60,000 actions
    for table_id, log in logs.items():
        store.create_table(table_id, table_id.upper() + "XYZ", "qwixx", {}, ["A", "B"], log)
    expected = DiceTally.from_logs(logs)  # what every stored log, read at once, counts
    del logs
    one_log = peak_bytes(lambda: store.log("t00"))
    tables = Tables(store, import_process=False)

    async def read() -> DiceTally:
        return await tables.dice()

    counted: list[DiceTally] = []
    try:
        peak = peak_bytes(lambda: counted.append(asyncio.run(read())))
    finally:
        tables.close()
        store.close()
    tally = counted[0]
    assert tally.games == expected.games and len(tally.games) == 40
    for which in ("all", "camera"):
        assert getattr(tally.total, which) == getattr(expected.total, which)
        assert getattr(tally.of("t07"), which) == getattr(expected.of("t07"), which)
    # the code before read all 40 logs at once: about 40 logs' worth
    assert peak < 4 * one_log, (peak, one_log)


def camera_record(rolls: int) -> dict[str, object]:
    """A Qwixx record whose rolls say `"by": "camera"`, ending with its `rolls`th roll."""
    game = find_game("qwixx")
    session = Session(game, game.parse_options({"players": 2}), ["Ann", "Bob"])
    rng = random.Random(3)
    made = 0
    while made < rolls:
        move = random_action(game, session.state, rng)
        is_roll = isinstance(move, Roll)
        session.act(move, by="camera" if is_roll else str(getattr(move, "player", "host")))
        made += is_roll
    return session.to_record()


def test_an_imported_records_rolls_never_count_as_this_servers_camera(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "companion.sqlite3")
    seven = [("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)]

    async def play() -> tuple[str, DiceTally]:
        tables = Tables(store, import_process=False)
        try:
            table_id = (await tables.import_record(camera_record(3))).table_id
            tally = await tables.dice()
            assert tally.of(table_id).all.rolls == 3 and tally.total.all.rolls == 3
            assert tally.of(table_id).camera.rolls == 0 and tally.total.camera.counts == {}
            table = await tables.get(table_id)
            assert table is not None
            await table.undo("host", "undo-imported")  # takes back the record's last roll
            assert tally.of(table_id).all.rolls == 2 and tally.of(table_id).camera.rolls == 0
            assert tally.total.camera.counts == {}
            await table.apply_roll(seven)  # this server's camera, at the imported table
            assert tally.of(table_id).all.rolls == 3 and tally.of(table_id).camera.rolls == 1
            return table_id, tally
        finally:
            tables.close()

    async def restart() -> DiceTally:
        tables = Tables(store, import_process=False)
        try:
            return await tables.dice()
        finally:
            tables.close()

    try:
        table_id, played = asyncio.run(play())
        again = asyncio.run(restart())  # the start-up read counts as the game went
    finally:
        store.close()
    camera_seven = {colour: [0] * 6 for colour, _ in seven}
    for colour, value in seven:
        camera_seven[colour][value - 1] += 1
    assert again.of(table_id).camera.counts == camera_seven  # the live roll alone
    for which in ("all", "camera"):
        assert getattr(again.of(table_id), which) == getattr(played.of(table_id), which)
        assert getattr(again.total, which) == getattr(played.total, which)


def test_a_deleted_games_rolls_count_no_more_also_when_deleted_during_the_read() -> None:
    """A café owner deletes a test game from the history: its rolls leave the dice figures
    (the sum as well), also when it goes while the stored logs are still being read."""
    release = threading.Event()
    stored = {
        "test": [roll_entry(1, RED_6), roll_entry(2, RED_1, "0")],
        "real": [roll_entry(1, RED_1)],
    }

    def read() -> Iterable[tuple[str, list[LogEntry]]]:
        release.wait(30)
        return stored.items()

    async def scenario() -> DiceTally:
        keeper = DiceKeeper()
        with ThreadPoolExecutor(1) as pool:
            keeper.start(read, pool)
            keeper.forget("test")  # deleted before the read got to it (it still counts it)
            release.set()
            return await keeper.ready()

    tally = asyncio.run(scenario())
    assert tally.of("test").all.rolls == 0 and tally.games == {"real"}
    assert tally.total.all.counts == {"red": [1, 0, 0, 0, 0, 0]} and tally.total.all.rolls == 1
    assert tally.total.camera.counts == {"red": [1, 0, 0, 0, 0, 0]}

    ready = DiceTally.from_logs(stored)
    ready.remove("real")  # deleted once the figures are read: at once
    assert ready.total.all.counts == {"red": [1, 0, 0, 0, 0, 1]} and ready.games == {"test"}
    assert ready.total.camera.counts == {"red": [0, 0, 0, 0, 0, 1]}
