"""A player's undo past other players' actions (Session.propose_undo) at a real table: the
store keeps it as any undo, by its maker, and everything that reads the log again (a
restart, the standing actions, the history) takes back the same action."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from companion.rules.session import HOST
from companion.simulate import random_action
from companion.table.dice import effective_entries
from companion.table.store import Store
from companion.table.tables import Table, Tables


async def sixto_to_its_end(tables: Tables, seed: int) -> Table:
    """A 2-player Sixto game played to its end, each seat acting on its own device."""
    table = await tables.create("sixto", {"players": 2}, ["Finn", "Gus"])
    rng = random.Random(seed)
    while table.snapshot.outcome is None:
        move = random_action(table.game, table.snapshot.state, rng)
        by = "camera" if move.player < 0 else str(move.player)
        await table.act(move, by, f"action-{table.snapshot.state_id:05d}")
    return table


async def ended_by_two_dones(tables: Tables) -> Table:
    """The first of the seeded games that ends with both players' Done."""
    for seed in range(20):
        table = await sixto_to_its_end(tables, seed)
        first, last = table.session.actions[-2:]
        if first.move.kind == last.move.kind == "done" and first.by != last.by:
            return table
    raise AssertionError("no seeded game ended with two Dones")


def test_a_player_takes_back_their_done_after_the_last_done_ended_the_game(
    tmp_path: Path,
) -> None:
    """Sixto ends after a turn's last Done; the player who said Done first takes it back:
    the other's Done stands, the game is open again and leaves the history, and a restart
    reads the same."""
    path = tmp_path / "companion.sqlite3"

    async def play_and_undo() -> tuple[str, object, int]:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        table = await ended_by_two_dones(tables)
        finished = store.table(table.table_id)
        assert finished is not None and finished.finished_at is not None
        first, last = table.session.actions[-2:]
        assert table.snapshot.undo_offer(first.by) == first  # past the other's Done
        await table.undo(first.by, "undo-first-done")
        assert table.snapshot.outcome is None and table.session.actions[-1] == last
        reopened = store.table(table.table_id)
        assert reopened is not None and reopened.finished_at is None  # out of the history
        log = store.log(table.table_id)
        assert [e.seq for e in effective_entries(log)][-1] == log[-2].seq  # the other's
        assert table.snapshot.undo_offer(HOST) == last
        tables.close()
        store.close()
        return table.table_id, table.snapshot.state, table.snapshot.state_id

    table_id, state, state_id = asyncio.run(play_and_undo())

    async def after_a_restart() -> None:
        store = Store.open(path)
        tables = Tables(store, import_process=False)
        table = await tables.get(table_id)
        assert table is not None
        assert table.snapshot.state == state and table.snapshot.state_id == state_id
        tables.close()
        store.close()

    asyncio.run(after_a_restart())
