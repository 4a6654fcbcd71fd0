"""A throw and the moves it implies are one action (issue 25, items 3-4): stored in one
transaction with one acknowledgement, and an undo of its roll takes them all back, before
and after a restart, in the log page's reading and through an exported record.

The probe's game: seat 0 rolls and passes the white sum; seat 1 throws next, read by the
camera, which passes for seats 1 and 2 on the white sum and for seat 0 in its colour step
(-5); the host undoes the roll. Before: the roll was gone, seat 0 kept its -5, and seat 0's
own undo was refused (undo_own_only). (Seat 1's own device may not enter that roll: it
costs seat 0 a penalty, rule penalty_for_other.) On the real SQLite store, the tables opened from it as the server does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from companion.rules.base import Die, Roll
from companion.rules.session import AUTO, CAMERA, HOST, replay_record
from companion.table.dice import effective_entries
from companion.table.records import ImportPlan, plan_import
from companion.table.store import LogEntry, Store, implied_seqs
from companion.table.tables import Table, Tables

QWIXX = {"players": 3}
NAMES = ["Ann", "Ben", "Cat"]


def qwixx_roll(white: tuple[int, int] = (3, 4)) -> Roll:
    colours = ("white", "white", "red", "yellow", "green", "blue")
    values = (*white, 2, 5, 6, 1)
    return Roll(dice=tuple(Die(c, v) for c, v in zip(colours, values, strict=True)))


async def opened(tables: Tables, table_id: str) -> Table:
    table = await tables.get(table_id)
    assert table is not None
    return table


async def played_to_the_throw(tables: Tables) -> Table:
    """Seat 0 has rolled and passed the white sum; seat 1 throws with 3 implied passes."""
    table = await tables.create("qwixx", QWIXX, NAMES)
    await table.act_throw(qwixx_roll(), "0", "first-roll")
    await table.act({"kind": "pass", "player": 0}, "0", "ann-passes")
    throw = table.snapshot.throw
    assert throw is not None and len(throw.closes) == 3, throw
    return table


def penalties(table: Table) -> list[int]:
    sheets = table.game.state_to_json(table.snapshot.state)["state"]["sheets"]
    return [sheet["penalties"] for sheet in sheets]


def test_a_throw_with_its_passes_is_one_commit_and_one_acknowledgement(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store.open(tmp_path / "companion.sqlite3")
        transactions: list[str] = []
        tables = Tables(store, import_process=False)
        table = await played_to_the_throw(tables)
        before = len(store.log(table.table_id))
        store.fault_hook = lambda name, index, sql: (
            transactions.append(name) if index == 0 else None
        )
        result = await table.act_throw(qwixx_roll((1, 1)), CAMERA, "ben-throws")
        store.fault_hook = None
        assert transactions == ["append"]  # the passes and the roll: one transaction
        assert result.state_id == before + 4 and not result.duplicate
        log = store.log(table.table_id)
        assert [e.by for e in log[before:]] == [AUTO, AUTO, AUTO, CAMERA]
        assert implied_seqs(log) == {before + 1, before + 2, before + 3}
        retry = await table.act_throw(qwixx_roll((1, 1)), CAMERA, "ben-throws")
        assert retry.state_id == result.state_id and retry.duplicate
        tables.close()
        store.close()

    asyncio.run(scenario())


def test_undo_of_a_throw_takes_back_the_passes_it_implied(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"

    async def throw_and_undo() -> str:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        table = await played_to_the_throw(tables)
        after_pass = table.snapshot
        await table.act_throw(qwixx_roll((1, 1)), CAMERA, "ben-throws")
        assert penalties(table)[0] == 1  # seat 0 passed its colour step with nothing
        undone = await table.undo(HOST, "ben-undoes")
        assert undone.state_id == after_pass.state_id + 5  # 3 passes, the roll, one undo
        assert table.snapshot.state == after_pass.state  # passes, penalty and roll gone
        assert penalties(table) == [0, 0, 0]
        assert table.snapshot.last_by == "0"  # seat 0 may take back its own pass now
        log = store.log(table.table_id)
        standing = [e.action_id for e in effective_entries(log)]
        assert standing == ["first-roll", "ann-passes"]
        await table.act_throw(qwixx_roll((1, 1)), CAMERA, "ben-throws-again")
        tables.close()
        store.close()
        return table.table_id

    table_id = asyncio.run(throw_and_undo())

    async def after_a_restart() -> None:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        table = await opened(tables, table_id)
        assert penalties(table)[0] == 1
        await table.undo(HOST, "ben-undoes-again")  # the grouping comes back from the log
        assert penalties(table) == [0, 0, 0]
        await table.undo("0", "ann-undoes")  # refused before (undo_own_only)
        assert table.snapshot.state_id == len(store.log(table_id))
        record = table.record()
        tables.close()
        store.close()
        replayed = replay_record(record)
        assert replayed.state == table.snapshot.state

    asyncio.run(after_a_restart())


def test_an_exported_throw_keeps_its_passes_implied_through_an_import(tmp_path: Path) -> None:
    async def exported() -> dict[str, object]:
        store = Store.open(tmp_path / "companion.sqlite3")
        tables = Tables(store, import_process=False)
        table = await played_to_the_throw(tables)
        await table.act_throw(qwixx_roll((1, 1)), CAMERA, "ben-throws")
        record = table.record()
        tables.close()
        store.close()
        return record

    record = asyncio.run(exported())
    actions = record["actions"]
    assert isinstance(actions, list)
    assert [a.get("implied", False) for a in actions] == [False, False, True, True, True, False]
    plan = plan_import(record)  # "auto" passes are accepted in an import
    assert isinstance(plan, ImportPlan), plan
    seed = [LogEntry(seq, action_id, "move", by, None) for seq, action_id, _, by, _ in plan.seed]
    assert implied_seqs(seed) == {3, 4, 5}  # the imported table's log keeps the grouping
    session = replay_record(record)
    session.undo(by=HOST)
    assert len(session.actions) == 2  # the roll and its three passes
