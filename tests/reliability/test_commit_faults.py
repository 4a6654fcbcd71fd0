"""A crash or a failure between any two statements of an action's commit leaves a game the
store and the engine agree on. Deterministic, not a random timer: the store announces every
statement to a fault hook (Store.fault_hook), and for each action below and each point of
its commit in turn (before every statement, BEGIN to COMMIT, and after the COMMIT):

- kill: a forked process runs the action on the real SQLite file and SIGKILLs itself at
  that point; then the file is checked as it lies on disk, the server's tables are opened
  again from it (a restart) and checked, and the game is played on;
- raise: the statement fails (sqlite3.OperationalError, as a failing disk would); the
  action is refused with StorageError, the table in memory equals the table opened again
  from the file, and the game goes on.

The check, every time: the action is stored whole or not at all; the table is in the
history exactly when its log (replayed through the engine) has ended or the host ended it,
with the engine's scores; the opened table's state is the replay of its log; a running game
takes its next legal move, an ended one refuses it. (Before: the log entry and the history
entry were two transactions, and a kill between them after a host's undo of a finished game
left "running" with every move refused as ended by the host, or a finished game missing
from History.)"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from companion.rules.base import Die, Move, Rejection, Roll
from companion.rules.registry import find_game
from companion.rules.session import HOST, Session, replay_record
from companion.simulate import play_random_game
from companion.table.store import LogEntry, StorageError, Store, implied_seqs
from companion.table.tables import Table, Tables
from tests.web.helpers import QWIXX_ROLL_7

NOT_REACHED = 0  # the child's exit status when the action ended before the fault point
Action = Callable[[Tables, str], Awaitable[object]]


def finished_game() -> dict[str, Any]:
    """A complete two-player Qwixx game record (ended by the engine), the same every run."""
    game = find_game("qwixx")
    session = Session(game, game.options_for(2), ["Ann", "Ben"])

    def keep(_before: object, move: Move, _after: object) -> None:
        session.act(move, by="camera" if isinstance(move, Roll) else str(move.player))

    play_random_game(game, game.options_for(2), random.Random(16), 5000, keep)
    assert session.outcome() is not None
    return session.to_record()


GAME = finished_game()


def first(count: int) -> dict[str, Any]:
    """The record of the game's first `count` actions (the whole game: -0 is not it)."""
    return GAME | {"actions": GAME["actions"][:count]}


def act_as_recorded(index: int) -> Action:
    """The record's action `index`, sent to the table as its device would."""

    async def action(tables: Tables, table_id: str) -> object:
        table = await opened(tables, table_id)
        item = GAME["actions"][index]
        return await table.act(item["move"], item["by"], f"faulted-{index}")

    return action


async def host_undo(tables: Tables, table_id: str) -> object:
    return await (await opened(tables, table_id)).undo(HOST, "faulted-undo")


async def host_end(tables: Tables, table_id: str) -> object:
    await (await opened(tables, table_id)).end_by_host()
    return None


def open_step() -> int:
    """How many of the game's actions lead to a step a throw closes with automatic passes
    (the first roll's white sum, nobody has acted yet)."""
    game = find_game("qwixx")
    session = replay_record(first(0))
    for count, item in enumerate(GAME["actions"]):
        throw = session.turn().on_throw(True)
        if count and throw is not None and len(throw.closes) >= 2:
            return count
        session.act(game.move_from_json(item["move"]), by=item["by"])
    raise AssertionError("no step with automatic passes in the game")


OPEN = open_step()


def closes_at(record: dict[str, Any]) -> int:
    throw = replay_record(record).turn().on_throw(True)
    assert throw is not None
    return len(throw.closes)


async def throw_with_passes(tables: Tables, table_id: str) -> object:
    """The next throw while the step is open: its passes (one a penalty) and its roll."""
    table = await opened(tables, table_id)
    throw = table.snapshot.throw
    assert throw is not None and throw.closes
    roll = Roll(dice=tuple(Die(colour, 3) for colour in throw.dice.colours))
    return await table.act_throw(roll, HOST, "faulted-throw")


def thrown() -> dict[str, Any]:
    """The game up to the open step, then the throw that closes it (passes implied)."""
    session = replay_record(first(OPEN))
    throw = session.turn().on_throw(True)
    assert throw is not None
    for move in throw.closes:
        session.act(move, by="auto", implied=True)
    session.act(Roll(dice=tuple(Die(c, 3) for c in throw.dice.colours)), by=HOST)
    return session.to_record()


@dataclass(frozen=True)
class Scenario:
    name: str
    start: dict[str, Any] | None  # the record imported before the faulted action
    action: Action | None  # None: the faulted action is the import of `start` itself
    adds: int = 1  # log entries the action adds (a throw: its implied moves and the roll)


LAST = len(GAME["actions"]) - 1
SCENARIOS = [
    Scenario("the move that ends the game", first(LAST), act_as_recorded(LAST)),
    Scenario("the host's undo of a finished game", GAME, host_undo),
    Scenario("a move in the middle of the game", first(7), act_as_recorded(7)),
    Scenario("the host ending a running game", first(7), host_end),
    Scenario("the import of a finished game", GAME, None),
    Scenario(
        "a throw with its automatic passes",
        first(OPEN),
        throw_with_passes,
        adds=closes_at(first(OPEN)) + 1,
    ),
    Scenario("the host's undo of a throw with its passes", thrown(), host_undo),
]


async def opened(tables: Tables, table_id: str) -> Table:
    table = await tables.get(table_id)
    assert table is not None
    return table


async def prepare(path: Path, scenario: Scenario) -> str | None:
    """The table the faulted action works on (None for the import scenario)."""
    if scenario.action is None:
        return None
    store = Store.open(path)
    tables = Tables(store, import_process=False)
    try:
        assert scenario.start is not None
        return (await tables.import_record(scenario.start)).table_id
    finally:
        tables.close()
        store.close()


def fault_at(point: int, fault: Callable[[], None]) -> Callable[[str, int, str], None]:
    """A hook that calls `fault` at the `point`-th statement of the action (counting every
    statement of every transaction, and each transaction's after-COMMIT point)."""
    seen = [0]

    def hook(_transaction: str, _index: int, _sql: str) -> None:
        seen[0] += 1
        if seen[0] - 1 == point:
            fault()

    return hook


async def run_action(path: Path, scenario: Scenario, table_id: str | None, hook: Any) -> object:
    store = Store.open(path)
    store.fault_hook = hook
    tables = Tables(store, import_process=False)
    try:
        if scenario.action is None:
            assert scenario.start is not None
            return await tables.import_record(scenario.start)
        assert table_id is not None
        return await scenario.action(tables, table_id)
    finally:
        tables.close()
        store.close()


def killed_child(path: Path, scenario: Scenario, table_id: str | None, point: int) -> bool:
    """Run the action in a forked process that SIGKILLs itself at `point`; False when the
    action finished before reaching it."""
    child = os.fork()
    if child == 0:  # the child: run, die at the point, or say it was not reached
        status = NOT_REACHED
        try:
            kill = fault_at(point, lambda: os.kill(os.getpid(), signal.SIGKILL))
            asyncio.run(run_action(path, scenario, table_id, kill))
        except BaseException:
            traceback.print_exc()
            status = 3
        os._exit(status)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == NOT_REACHED, f"the child failed ({status})"
    return False


def stored(path: Path) -> list[dict[str, Any]]:
    """Every table as it lies in the file (a plain reader, not the server's code)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT table_id, game, options_json, players_json, finished_at, summary_json"
            " FROM tables"
        ).fetchall()
        tables = []
        for table_id, game, options, players, finished_at, summary in rows:
            log = db.execute(
                "SELECT seq, action_id, kind, by, move_json FROM actions"
                " WHERE table_id = ? ORDER BY seq",
                (table_id,),
            ).fetchall()
            tables.append(
                {
                    "table_id": table_id,
                    "record": {
                        "schema": 1,
                        "game": game,
                        "options": json.loads(options),
                        "players": json.loads(players),
                    },
                    "log": log,
                    "finished": finished_at is not None,
                    "summary": json.loads(summary) if summary else None,
                }
            )
        return tables
    finally:
        db.close()


def replay_log(header: dict[str, Any], log: list[tuple[int, str, str, str, str | None]]) -> Session:
    session = replay_record(header | {"actions": []})
    # a throw's implied moves carry its roll's action id (store.implied_seqs)
    implied = implied_seqs(
        [LogEntry(seq, action_id, "move", by, None) for seq, action_id, _, by, _ in log]
    )
    for seq, _action_id, kind, by, move in log:
        if kind == "undo":
            session.undo(by=by)
        else:
            assert move is not None
            session.act(
                session.game.move_from_json(json.loads(move)), by=by, implied=seq in implied
            )
    return session


def check_on_disk(path: Path, before: int | None, adds: int = 1) -> None:
    """The file on its own: each table's history entry matches what its log replays to;
    the faulted action is there whole or not at all."""
    for table in stored(path):
        session = replay_log(table["record"], table["log"])
        outcome = session.outcome()
        summary = table["summary"]
        by_host = bool(summary and summary.get("ended_by_host"))
        assert table["finished"] == (outcome is not None or by_host), (
            f"in the history: {table['finished']}, the log has ended: {outcome is not None}"
        )
        if outcome is not None:
            assert summary is not None and not summary["ended_by_host"]
            assert [s["total"] for s in summary["scores"]] == [s.total for s in session.scores()]
        if before is not None:
            assert len(table["log"]) in (before, before + adds), (len(table["log"]), before)


async def check_reopened(path: Path) -> None:
    """A restart: the tables opened from the file play on as their state says."""
    store = Store.open(path)
    tables = Tables(store, import_process=False)
    try:
        for row in store.tables():
            table = await opened(tables, row.table_id)
            snapshot = table.snapshot
            replayed = replay_record(table.record())
            assert snapshot.state == replayed.state
            history = {r.table_id for r in store.tables(finished=True)}  # once opened
            assert (row.table_id in history) == snapshot.finished
            await plays_on(table)
    finally:
        tables.close()
        store.close()


async def plays_on(table: Table) -> None:
    """A running game takes a legal move (a roll when the dice are expected); an ended
    one refuses it."""
    snapshot = table.snapshot
    turn = snapshot.turn
    if snapshot.finished:
        with pytest.raises(Rejection) as refused:
            await table.act({"kind": "pass", "player": 0}, HOST, "after-the-end")
        assert refused.value.reason == "game_over"
        return
    move: Move
    if turn.chance:
        assert turn.dice is not None
        move = Roll(dice=tuple(Die(colour, 3) for colour in turn.dice.colours))
    else:
        move = table.game.legal_moves(snapshot.state, turn.players[0])[0]
    result = await table.act(move, HOST, "after-the-fault")
    assert result.state_id == snapshot.state_id + 1


def log_length(path: Path, table_id: str | None) -> int | None:
    if table_id is None:
        return None
    return next(len(t["log"]) for t in stored(path) if t["table_id"] == table_id)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_kill_at_any_point_of_a_commit_leaves_a_consistent_game(
    tmp_path: Path, scenario: Scenario
) -> None:
    points = 0
    while True:
        path = tmp_path / f"point-{points}" / "companion.sqlite3"
        path.parent.mkdir()
        table_id = asyncio.run(prepare(path, scenario))
        before = log_length(path, table_id)
        if not killed_child(path, scenario, table_id, points):
            break  # every point of this action's commit was cut
        check_on_disk(path, before, scenario.adds)
        asyncio.run(check_reopened(path))
        points += 1
    assert points >= 3, f"only {points} points in the commit of {scenario.name}"
    print(f"{scenario.name}: killed at {points} points")


def raise_at(point: int) -> Callable[[str, int, str], None]:
    def fail() -> None:
        raise sqlite3.OperationalError("disk I/O error (injected)")

    hook = fault_at(point, fail)

    def before_commit_only(transaction: str, index: int, sql: str) -> None:
        if sql:  # after a COMMIT the action is stored: a failure there cannot be
            hook(transaction, index, sql)

    return before_commit_only


ACTIONS = [s for s in SCENARIOS if s.action is not None]  # the import cannot fail half-way


@pytest.mark.parametrize("scenario", ACTIONS, ids=[s.name for s in ACTIONS])
def test_a_failing_statement_at_any_point_refuses_the_action_and_keeps_the_game(
    tmp_path: Path, scenario: Scenario
) -> None:
    async def fail_then_check(path: Path, point: int) -> bool:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        assert scenario.start is not None
        table_id = (await tables.import_record(scenario.start)).table_id
        table = await opened(tables, table_id)
        before = table.snapshot
        store.fault_hook = raise_at(point)
        assert scenario.action is not None
        try:
            await scenario.action(tables, table_id)
        except StorageError:
            failed = True
        else:
            failed = False
        store.fault_hook = None
        # the table in memory is the table in the file
        again = Tables(store, import_process=False)
        reopened = await opened(again, table_id)
        assert reopened.snapshot.state_id == table.snapshot.state_id
        assert reopened.snapshot.state == table.snapshot.state
        assert reopened.snapshot.finished == table.snapshot.finished
        if failed:
            assert table.snapshot.state_id == before.state_id
        await plays_on(table)
        again.close()
        tables.close()
        store.close()
        return failed

    point = 0
    while asyncio.run(fail_then_check(tmp_path / f"raise-{point}" / "c.sqlite3", point)):
        check_on_disk(tmp_path / f"raise-{point}" / "c.sqlite3", None)
        point += 1
    assert point >= 2, f"only {point} failing points in {scenario.name}"
    print(f"{scenario.name}: failed at {point} points")


def test_a_history_entry_an_older_server_left_wrong_is_put_right_from_the_log(
    tmp_path: Path,
) -> None:
    """Stores written before the one-transaction commit may hold the two cases the probe
    found: an ended game missing from the history, and an undone ending still in it (the
    engine says running, every move was refused as ended by the host). Opening the table
    derives its history entry from the log."""
    path = tmp_path / "companion.sqlite3"

    async def older_store() -> tuple[str, str]:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        ended = (await tables.import_record(GAME)).table_id
        undone = (await tables.import_record(GAME)).table_id
        await (await opened(tables, undone)).undo(HOST, "undo-the-end")
        tables.close()
        store.close()
        return ended, undone

    ended, undone = asyncio.run(older_store())
    db = sqlite3.connect(path)
    entry = db.execute("SELECT summary_json FROM tables WHERE table_id = ?", (ended,)).fetchone()
    db.execute(
        "UPDATE tables SET finished_at = NULL, summary_json = NULL WHERE table_id = ?", (ended,)
    )
    db.execute(
        "UPDATE tables SET finished_at = 1, summary_json = ? WHERE table_id = ?", (entry[0], undone)
    )
    db.commit()
    db.close()
    with pytest.raises(AssertionError):
        check_on_disk(path, None)  # the damage is there
    asyncio.run(check_reopened(path))  # opening puts it right, and both games play on
    check_on_disk(path, None)


def test_a_host_end_an_older_server_stored_without_winners_gets_the_games_own(
    tmp_path: Path,
) -> None:
    """An older server stored a host's end with no winners (the engine's outcome had none),
    so the history could only pick the highest total, not the game's own ranking and
    tie-breaks. Opening the table puts the entry right from its log (Game.winners, ended
    early), in its place in the history."""
    path = tmp_path / "companion.sqlite3"

    async def older_store() -> str:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
        await table.act(QWIXX_ROLL_7, HOST, "roll-1")
        await table.act({"kind": "cross", "player": 1, "colour": "red", "number": 7}, "1", "b")
        await table.end_by_host()
        tables.close()
        store.close()
        return table.table_id

    table_id = asyncio.run(older_store())
    db = sqlite3.connect(path)
    (entry,) = db.execute("SELECT summary_json FROM tables WHERE table_id = ?", (table_id,))
    summary = json.loads(entry[0])
    assert summary["ended_by_host"] and summary["winners"] == [1]
    old_style = json.dumps(summary | {"winners": []})  # as the older server stored it
    db.execute("UPDATE tables SET summary_json = ? WHERE table_id = ?", (old_style, table_id))
    db.commit()
    db.close()
    store = Store.open(path)
    before = store.table(table_id)
    assert before is not None and before.summary is not None and before.summary["winners"] == []

    async def reopen() -> None:
        tables = Tables(store, import_process=False)
        table = await opened(tables, table_id)
        assert table.snapshot.ended_by_host
        tables.close()

    asyncio.run(reopen())
    after = store.table(table_id)
    assert after is not None and after.summary == summary  # Bob, by the game's ranking
    assert after.finished_at == before.finished_at  # in its place in the history
    store.close()
