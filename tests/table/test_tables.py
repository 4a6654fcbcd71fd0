"""The table object: restoring every game exactly from the store, the camera's thread-safe
roll entry, and the snapshot being published only after the commit."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal
from fastapi.testclient import TestClient

from companion.rules.base import Rejection
from companion.rules.registry import GAME_NAMES, find_game
from companion.rules.session import Session
from companion.table.access import Viewer
from companion.table.store import Store
from companion.table.tables import Table, Tables
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.waiting import wait_until
from tests.web.helpers import QWIXX_ROLL_7, act, create_table


def test_a_new_app_on_the_same_data_restores_every_game(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    with TestClient(create_app(settings)) as host:
        first = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        second = create_table(host, "sixto", ["Cy", "Di"], {"players": 2})
        act(host, first["table_id"], QWIXX_ROLL_7, "roll-0001")
        act(
            host,
            first["table_id"],
            {"kind": "cross", "player": 1, "colour": "red", "number": 7},
            "cross-001",
        )
        host.post(f"/api/tables/{first['table_id']}/undo", json={"action_id": "undo-0001"})
        act(host, first["table_id"], {"kind": "pass", "player": 1}, "pass-0001")
        before = [host.get(f"/api/tables/{t['table_id']}/state").json() for t in (first, second)]
        cookies = dict(host.cookies)
    with TestClient(create_app(settings)) as again:
        again.cookies.update(cookies)
        after = [again.get(f"/api/tables/{t['table_id']}/state").json() for t in (first, second)]
        assert after == before
        assert after[0]["state_id"] == 4  # roll, cross, undo, pass
        # the retried action id is still known after the restart: applied once
        retry = act(again, first["table_id"], {"kind": "pass", "player": 1}, "pass-0001")
        assert retry.json() == {"state_id": 4, "duplicate": True}


def portal_of(client: TestClient) -> BlockingPortal:
    """The client's portal onto the app's event loop (there inside the client's `with`)."""
    assert client.portal is not None, "the client's `with` block starts its portal"
    return client.portal


@contextmanager
def qwixx_through_the_app(tmp_path: Path) -> Iterator[tuple[Any, TestClient, Table]]:
    """An app on `tmp_path`, its host's client and the Table of a new Qwixx game for Ann
    and Bob made through the API: (app, host, table)."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table_id = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        table = portal_of(host).call(app.state.tables.get, table_id)
        assert table is not None
        yield app, host, table


def attached_tables(store: Store) -> Tables:
    """The tables of `store`, served by the running loop (as the app attaches them)."""
    tables = Tables(store, import_process=False)
    tables.attach_loop(asyncio.get_running_loop())
    return tables


def test_the_camera_thread_enters_rolls_without_blocking_the_loop(tmp_path: Path) -> None:
    with qwixx_through_the_app(tmp_path) as (app, host, table):
        results: dict[str, Any] = {}

        def camera() -> None:
            dice = [(d["colour"], d["value"]) for d in QWIXX_ROLL_7["dice"]]
            results["ok"] = table.roll_from_thread(dice).result(timeout=10)
            try:  # a second roll is not expected now: the engine's refusal comes back
                table.roll_from_thread(dice).result(timeout=10)
            except Rejection as exc:
                results["refused"] = exc

        thread = threading.Thread(target=camera)
        thread.start()
        thread.join(timeout=20)
        assert results["ok"].state_id == 1
        assert results["refused"].rule == "no_roll_expected"
        state = host.get(f"/api/tables/{table.table_id}/state").json()
        assert state["turn"]["step"] == "white_sum"
        assert state["state_id"] == 1


def test_a_failed_commit_applies_nothing(tmp_path: Path) -> None:
    with qwixx_through_the_app(tmp_path) as (app, host, table):
        store = app.state.store

        def broken_append(*args: Any) -> None:
            raise OSError("disk full")

        original = store.append_all
        store.append_all = broken_append
        try:
            with pytest.raises(OSError):
                portal_of(host).call(lambda: table.act(QWIXX_ROLL_7, "host", "roll-0001"))
        finally:
            store.append_all = original
        assert table.snapshot.state_id == 0 and table.session.state_id == 0
        assert len(table.session.states) == 1
        # and the table still works afterwards
        assert (
            portal_of(host).call(lambda: table.act(QWIXX_ROLL_7, "host", "roll-0002")).state_id == 1
        )


def test_the_snapshot_is_published_after_the_commit(tmp_path: Path) -> None:
    with qwixx_through_the_app(tmp_path) as (app, host, table):
        store = app.state.store
        seen: list[int] = []
        original = store.append_all

        def watching_append(*args: Any) -> None:
            seen.append(table.snapshot.state_id)  # what screens could read during the write
            original(*args)

        store.append_all = watching_append
        portal_of(host).call(lambda: table.act(QWIXX_ROLL_7, "host", "roll-0001"))
        assert seen == [0] and table.snapshot.state_id == 1


def test_a_caller_cancelled_during_the_commit_still_makes_what_was_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tablet that drops its socket cancels the receiver answering its action; if that
    happens while the store's thread commits, the change must still be made in memory, or
    the session falls behind SQLite and every later action of the table is refused by the
    store (its seq taken) until a restart (the security trial's finding)."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "cancel.sqlite3")
        tables = attached_tables(store)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            inside, release = threading.Event(), threading.Event()
            original = store.append_all

            def held_append(*args: Any) -> None:
                inside.set()
                release.wait(60)
                original(*args)

            monkeypatch.setattr(store, "append_all", held_append)
            task = asyncio.create_task(table.act(QWIXX_ROLL_7, "host", "roll-0001"))
            deadline = time.monotonic() + 60
            while not inside.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert inside.is_set()
            task.cancel()  # the socket dropped while the store's thread commits
            release.set()
            with pytest.raises(asyncio.CancelledError):
                await task
            store.append_all = original  # type: ignore[method-assign]
            assert table.session.state_id == table.snapshot.state_id == 1
            assert max(entry.seq for entry in store.log(table.table_id)) == 1
            # the table goes on: the next action is stored and made
            nxt = await table.act({"kind": "pass", "player": 1}, "host", "pass-0001")
            assert nxt.state_id == 2
            # and the retried action id is known
            again = await table.act(QWIXX_ROLL_7, "host", "roll-0001")
            assert again.duplicate and again.state_id == 1
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_a_new_table_starts_from_the_games_defaults_for_its_players(tmp_path: Path) -> None:
    """A table made through the API with only a number of players gets the options the start
    page offers (`options_for`): a Sixis table the advanced start in the first round only
    (the rulebook), where `parse_options` keeps a record's missing field as it was played.
    The table stored is opened with the same options; the options given are checked first,
    so a bad one is refused by its own name."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "defaults.sqlite3")
        tables = attached_tables(store)
        try:
            made: dict[str, tuple[str, Any]] = {}
            for name in GAME_NAMES:
                game = find_game(name)
                high = game.players.high or game.players.low + 3
                for players in range(game.players.low, high + 1):
                    names = [f"P{seat}" for seat in range(players)]
                    table = await tables.create(name, {"players": players}, names)
                    # a seed the server draws (Sixis' deal) is the table's own
                    drawn = {s: getattr(table.session.options, s) for s in game.seed_options}
                    expected = replace(game.options_for(players), **drawn)
                    assert table.session.options == expected, (name, players)
                    made[table.table_id] = (name, expected)
            await _check_given_options_and_refusals(tables)
            await _check_an_import_keeps_parse_options(tables)
        finally:
            tables.close()
        reopened = attached_tables(store)
        try:
            for table_id, (name, expected) in made.items():
                restored = await reopened.get(table_id)
                assert restored is not None and restored.session.options == expected, name
        finally:
            reopened.close()
            store.close()

    asyncio.run(scenario())


async def _check_given_options_and_refusals(tables: Tables) -> None:
    sixis = find_game("sixis")
    given = {"players": 3, "advanced_start": True, "rounds": 3}
    table = await tables.create("sixis", given, ["Ann", "Bob", "Cy"])
    expected = replace(
        sixis.options_for(3),
        advanced_start=True,
        rounds=3,
        deal_seed=table.session.options.deal_seed,
    )
    assert table.session.options == expected
    assert table.session.options.advanced_start_every_round is False
    every = {**given, "advanced_start_every_round": True, "colours": ["pink", "teal", "red"]}
    table = await tables.create("sixis", every, ["Ann", "Bob", "Cy"])
    assert table.session.options.advanced_start_every_round is True
    assert table.session.options.colours == ("pink", "teal", "red")
    for name, options, rule in (
        ("qwixx", {"players": 9}, "players"),
        ("sixis", {"players": 3, "team_play": True}, "team_play"),
        ("sixis", {"players": 3, "colours": ["red", "blue"]}, "colours"),
        ("sixis", {"players": "two"}, "options"),
        ("sixto", {"players": 2, "sheets": [{"letter": "A"}, {"letter": "A"}]}, "sheet_taken"),
    ):
        with pytest.raises(Rejection) as refused:
            await tables.create(name, options, [])
        assert refused.value.rule == rule, (name, options)


async def _check_an_import_keeps_parse_options(tables: Tables) -> None:
    sixis = find_game("sixis")
    record = Session(sixis, sixis.parse_options({"players": 3, "advanced_start": True})).to_record()
    del record["options"]["advanced_start_every_round"]  # a record made before the option
    imported = await tables.import_record(record)
    table = await tables.get(imported.table_id)
    assert table is not None and table.session.options.advanced_start_every_round is True


def test_a_sixis_table_made_without_a_seed_gets_a_fresh_deal_that_a_restart_keeps(
    tmp_path: Path,
) -> None:
    """A Sixis table made through the API without `deal_seed` was dealt from seed 0 (the
    dataclass default), so every such table had the same cards: the server draws a seed for
    each (`Game.seed_options`), stores it with the options, and a restart deals the same.
    A seed given is kept."""
    settings = Settings(data_dir=tmp_path)
    options = {"players": 2}
    with TestClient(create_app(settings)) as host:
        made = [create_table(host, "sixis", ["Ann", "Bob"], options) for _ in range(4)]
        chosen = create_table(host, "sixis", ["Ann", "Bob"], options | {"deal_seed": 0})
        before = {
            t["table_id"]: host.get(f"/api/tables/{t['table_id']}/state").json()
            for t in [*made, chosen]
        }
        cookies = dict(host.cookies)
    seeds = [before[t["table_id"]]["state"]["state"]["options"]["deal_seed"] for t in made]
    assert len(set(seeds)) == len(seeds), seeds  # 4 draws below 2**32: alike by chance ~1e-9
    assert before[chosen["table_id"]]["state"]["state"]["options"]["deal_seed"] == 0
    decks = {tuple(map(str, state["state"]["state"]["cards"])) for state in before.values()}
    assert len(decks) > 1  # not every table dealt alike
    with TestClient(create_app(settings)) as again:
        again.cookies.update(cookies)
        for table_id, state in before.items():
            assert again.get(f"/api/tables/{table_id}/state").json() == state


class _NoWalk(dict[str, Any]):
    """A table's devices that refuse to be walked (every device, every push)."""

    def _walked(self, *args: Any) -> Any:
        raise AssertionError("seats_taken walked every device of the table")

    values = items = keys = __iter__ = _walked  # type: ignore[assignment]


def test_the_taken_seats_are_kept_as_seats_change_and_after_a_restart(tmp_path: Path) -> None:
    """seats_taken() is asked on every push to every screen; it walked every device row of
    the table (the fourth probe: 19.5 ms a call at the 720,000 rows an hour of joins would
    leave). The table keeps the taken seats as they change, right (as the store has them)
    across taking, the host's moving, freeing and a restart, without walking the devices."""

    def taken(table: Any) -> set[int]:
        devices, table._devices = table._devices, _NoWalk(table._devices)
        try:
            seats: set[int] = table.seats_taken()
        finally:
            table._devices = devices
        assert seats == table._store.taken_seats(table.table_id)
        return seats

    async def scenario() -> None:
        store = Store.open(tmp_path / "seats.sqlite3")
        tables = attached_tables(store)
        try:
            table = await tables.create("qwixx", {"players": 3}, ["Ann", "Bob", "Cy"])
            host = await table.add_device(host=True)
            ann, bob = [await table.add_device(host=False) for _ in range(2)]
            watchers = [await table.add_device(host=False) for _ in range(300)]
            assert taken(table) == set()
            assert await table.take_seat(ann, 0) and await table.take_seat(bob, 1)
            assert taken(table) == {0, 1}
            assert await table.take_seat(host, 2) and taken(table) == {0, 1, 2}
            assert await table.take_seat(host, None) and taken(table) == {0, 1}
            assert not await table.take_seat(host, None) and not await table.take_seat(ann, 0)
            assert await table.take_seat(host, 2)
            await table.free_seat(2)  # the host stands up
            assert taken(table) == {0, 1} and table.viewer(host) is not None
            await table.free_seat(0)  # Ann's device goes
            assert taken(table) == {1} and table.viewer(ann) is None
            assert await table.take_seat(watchers[7], 0) and taken(table) == {0, 1}
        finally:
            tables.close()
        again = attached_tables(store)
        try:
            reopened = await again.get(table.table_id)
            assert reopened is not None and taken(reopened) == {0, 1}
            with pytest.raises(Rejection) as refused:
                await reopened.take_seat(watchers[8], 1)
            assert refused.value.rule == "seat_taken"
            assert await reopened.take_seat(watchers[8], 2) and taken(reopened) == {0, 1, 2}
        finally:
            again.close()
            store.close()

    asyncio.run(scenario())


def test_joins_at_once_fill_a_table_to_its_limit_and_no_further(tmp_path: Path) -> None:
    """Devices being stored count towards the limit: 30 joins at once at a table that keeps
    10 devices leave exactly 10 (the host's and the seated players' among them); each join
    past the limit took the place of the oldest device without a seat."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "full.sqlite3")
        tables = attached_tables(store)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            host = await table.add_device(host=True)
            ann = await table.add_device(host=False, limit=10)
            await table.take_seat(ann, 0)
            joins = [table.add_device(host=False, limit=10) for _ in range(30)]
            answers = await asyncio.gather(*joins, return_exceptions=True)
            assert all(isinstance(a, str) for a in answers), answers
            assert len(store.devices(table.table_id)) == 10
            # the host and the seated player keep theirs; eight of the joins are the others
            assert table.viewer(host) is not None and table.viewer(ann) is not None
            kept = [a for a in answers if isinstance(a, str) and table.viewer(a) is not None]
            assert len(kept) == 8
            # a table whose every device holds a seat or is a host's refuses one more
            bob = await table.add_device(host=False, limit=3)
            await table.take_seat(bob, 1)
            with pytest.raises(Rejection) as full:
                await table.add_device(host=False, limit=3)
            assert full.value.rule == "table_full"
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_a_tables_last_action_is_its_stored_time_and_an_import_is_no_play(
    tmp_path: Path,
) -> None:
    """The camera keeps a game with a recent action (companion.table.camera_feed.plays_on):
    a table opened again (a restart, or back in memory) keeps its last action's stored
    time, not the time it was opened; an imported record's actions came from elsewhere."""
    settings = Settings(data_dir=tmp_path)
    first = create_app(settings)
    with TestClient(first) as host:
        played = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        act(host, played, QWIXX_ROLL_7, "roll-0001")
        record = host.get(f"/api/tables/{played}/record").json()
        imported = host.post("/api/import", json=record).json()["table_id"]
        stored = first.state.tables.store.last_action_at(played)
        cookies = dict(host.cookies)
    assert stored is not None
    app = create_app(settings)
    with TestClient(app, cookies=cookies) as again:
        tables = app.state.tables
        assert portal_of(again).call(tables.get, played).acted_at == stored
        assert portal_of(again).call(tables.get, imported).acted_at is None
        passed = act(again, imported, {"kind": "pass", "player": 0}, "pass-0001")
        assert passed.status_code == 200, passed.text
        assert portal_of(again).call(tables.get, imported).acted_at is not None


def test_a_double_tap_to_the_next_game_makes_one_device_there(tmp_path: Path) -> None:
    """Five requests at once from one seated device of a finished game (a double tap, each
    sent before an answer set the next game's cookie) all get its one device there, at its
    seat. Before: one got the seat and four were refused `seat_taken` (its own seat), each
    leaving a device without a cookie behind."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "again.sqlite3")
        tables = attached_tables(store)
        try:
            old = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            await old.add_device(host=True)
            bob = await old.add_device(host=False)
            await old.take_seat(bob, 1)
            await old.end_by_host()
            new, _ = await tables.play_again(old)
            before = old.viewer(bob)
            assert before is not None
            taps = [new.carry_over(before, bob, None, limit=10) for _ in range(5)]
            answers = await asyncio.gather(*taps, return_exceptions=True)
            assert all(not isinstance(a, BaseException) for a in answers), answers
            assert len({token for token, _ in answers}) == 1  # type: ignore[misc]
            assert {viewer.seat for _, viewer in answers} == {1}  # type: ignore[misc]
            assert len(store.devices(new.table_id)) == 1
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_a_finished_games_screens_are_woken_when_a_device_loses_its_next_place(
    tmp_path: Path,
) -> None:
    """A device carried from the finished game to the next one loses its place there (the
    host frees its seat, or a join makes room by forgetting it): the finished game's
    screens are woken at once, to draw their "Next game ready" anew (with_next_place),
    where before they learnt it only from a refused tap, a reload or a reconnect."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "freed.sqlite3")
        tables = attached_tables(store)
        try:
            old = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            host = await old.add_device(host=True)
            ann, tv = await old.add_device(host=False), await old.add_device(host=False)
            await old.take_seat(ann, 0)
            await old.end_by_host()
            new, _ = await tables.play_again(old)
            for token in (tv, ann, host):
                before = old.viewer(token)
                assert before is not None
                await new.carry_over(before, token, None, limit=10)
            screen = old.subscribe()
            await new.add_device(host=False, limit=3)  # makes room: the TV's place goes
            assert screen.queue.get_nowait() == -1
            tv_now = await tables.with_next_place(old, tv, Viewer(seat=None, host=False))
            assert tv_now.next_place_freed
            await new.free_seat(0)
            assert screen.queue.get_nowait() == -1
            ann_now = await tables.with_next_place(old, ann, Viewer(seat=0, host=False))
            assert ann_now.next_place_freed
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_a_finished_game_leaving_memory_while_played_again_still_links_its_one_next_game(
    tmp_path: Path,
) -> None:
    """The next table and the finished game's link to it are stored in one transaction.
    Before: the finished game left memory (idle, or its client's share) while the next
    table was being stored; linking it then was refused `table_reloaded`, leaving a
    running table nobody could reach, and the host's next tap made another one."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "again.sqlite3")
        tables = attached_tables(store)
        store_table = store.create_table

        def store_while_evicted(*args: Any, **kwargs: Any) -> None:
            store_table(*args, **kwargs)
            if old.table_id in tables._tables:  # noqa: SLF001 - as evict_idle does
                tables._tables.pop(old.table_id).evicted = True  # noqa: SLF001

        try:
            old = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            await old.end_by_host()
            store.create_table = store_while_evicted  # type: ignore[method-assign]
            new, made = await tables.play_again(old)
            assert made
            store.create_table = store_table  # type: ignore[method-assign]
            reopened = await tables.get(old.table_id)
            assert reopened is not None and reopened is not old
            assert reopened.next_table_id == new.table_id
            assert reopened.snapshot.next_table == new.table_id
            assert await tables.play_again(reopened) == (new, False)
            assert [row.table_id for row in store.tables(finished=False)] == [new.table_id]
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_an_undo_sent_while_the_next_game_is_stored_does_not_reopen_the_finished_one(
    tmp_path: Path,
) -> None:
    """Finn's undo of the move that ended his game reaches the server while the host's
    Play again is storing the next table. Before: the undo went through in between (the
    link was not yet in memory), so a running game linked to a next game its devices were
    sent on to, its undo refused from then on. Now the undo waits for Play again and is
    refused by name (`played_again`); the finished game stays as it ended."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "race.sqlite3")
        tables = Tables(store, import_process=False)
        loop = asyncio.get_running_loop()
        tables.attach_loop(loop)
        store_table = store.create_table
        undos: list[concurrent.futures.Future[Any]] = []

        def store_while_finn_undoes(*args: Any, **kwargs: Any) -> None:
            undo = asyncio.run_coroutine_threadsafe(old.undo("0", "finn-undo"), loop)
            undos.append(undo)
            # the undo ran, or waits for the finished table's lock (held by Play again)
            wait_until(lambda: undo.done() or old._lock.locked() and old._lock._waiters)  # noqa: SLF001
            store_table(*args, **kwargs)

        try:
            old = await tables.create("sixto", {"players": 1}, ["Finn"])
            dice = [{"colour": c, "value": 1} for c in SIXTO_COLOURS]
            await old.act({"kind": "roll", "player": -1, "dice": dice}, "host", "roll-1")
            await old.act({"kind": "keep", "player": 0}, "0", "finn-keep")
            await old.act({"kind": "done", "player": 0}, "0", "finn-done")
            assert old.snapshot.finished
            store.create_table = store_while_finn_undoes  # type: ignore[method-assign]
            new, made = await tables.play_again(old)
            assert made
            with pytest.raises(Rejection) as refused:
                await asyncio.wrap_future(undos[0])
            assert refused.value.rule == "played_again"
            assert old.snapshot.finished and old.snapshot.next_table == new.table_id
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


SIXTO_COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")


def test_which_devices_a_next_game_carries_survives_a_restart(tmp_path: Path) -> None:
    """The devices joined by the first Play again (the count of joins then, stored with
    the link) are the ones carried, after a restart too: a device that joined later is
    told so on its screen (its viewer) and refused by name when it asks."""

    async def scenario() -> tuple[str, str, str, str]:
        store = Store.open(tmp_path / "again.sqlite3")
        tables = attached_tables(store)
        try:
            old = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            host = await old.add_device(host=True)
            await old.end_by_host()
            new, _ = await tables.play_again(old)
            late = await old.add_device(host=False)
            assert old.viewer(late) == Viewer(None, False, joined_after_next_game=True)
            return old.table_id, new.table_id, host, late
        finally:
            tables.close()
            store.close()

    async def after_restart(old_id: str, new_id: str, host: str, late: str) -> None:
        store = Store.open(tmp_path / "again.sqlite3")
        tables = attached_tables(store)
        try:
            old, new = await tables.get(old_id), await tables.get(new_id)
            assert old is not None and new is not None
            assert old.viewer(host) == Viewer(None, True)
            viewer = old.viewer(late)
            assert viewer == Viewer(None, False, joined_after_next_game=True)
            with pytest.raises(Rejection) as refused:
                await new.carry_over(viewer, late, None)
            assert refused.value.rule == "joined_after_next_game"
        finally:
            tables.close()
            store.close()

    asyncio.run(after_restart(*asyncio.run(scenario())))


def test_a_slow_play_again_holds_up_neither_undos_at_its_table_nor_another_tables(
    tmp_path: Path,
) -> None:
    """Finn's finished game has a stored next game that left memory and replays slowly
    when the host taps again; another table's Play again waits for its own finished table.
    Before: one lock for every table's Play again, held while the finished table's lock
    was held: Finn's undo waited for the whole replay (to be refused anyway), and Ann's
    table could not be played again while another table's Play again waited."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "slow.sqlite3")
        tables = attached_tables(store)
        store_log = store.log
        replaying, go_on = threading.Event(), threading.Event()

        def slow_log(table_id: str, *args: Any, **kwargs: Any) -> Any:
            if table_id == finns_next.table_id:
                replaying.set()
                go_on.wait(60)
            return store_log(table_id, *args, **kwargs)

        try:
            finns = await tables.create("sixto", {"players": 1}, ["Finn"])
            dice = [{"colour": c, "value": 1} for c in SIXTO_COLOURS]
            await finns.act({"kind": "roll", "player": -1, "dice": dice}, "host", "roll-1")
            await finns.act({"kind": "keep", "player": 0}, "0", "finn-keep")
            await finns.act({"kind": "done", "player": 0}, "0", "finn-done")
            finns_next, _ = await tables.play_again(finns)
            tables._tables.pop(finns_next.table_id).evicted = True  # noqa: SLF001
            store.log = slow_log  # type: ignore[method-assign]
            again = asyncio.create_task(tables.play_again(finns))
            await asyncio.to_thread(replaying.wait, 60)
            with pytest.raises(Rejection) as refused:
                await asyncio.wait_for(finns.undo("0", "finn-undo"), 20)
            assert refused.value.rule == "played_again"
            go_on.set()
            assert (await again)[1] is False
            anns, cats = [
                await tables.create("qwixx", {"players": 2}, [name, "Bob"]) for name in "AC"
            ]
            await anns.end_by_host()
            await cats.end_by_host()
            async with cats._lock:  # noqa: SLF001 - Cat's table busy: its Play again waits
                waiting = asyncio.create_task(tables.play_again(cats))
                deadline = time.monotonic() + 20
                while not cats._lock._waiters and time.monotonic() < deadline:  # noqa: SLF001
                    await asyncio.sleep(0.01)
                assert cats._lock._waiters  # noqa: SLF001
                _, made = await asyncio.wait_for(tables.play_again(anns), 20)
                assert made
            assert (await waiting)[1] is True
        finally:
            go_on.set()
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_the_log_says_when_a_table_starts_and_when_its_game_ends(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: after an evening the server's log named no table that was
    started, played to its end or ended by its host: only restores and camera moves."""

    async def scenario() -> list[str]:
        store = Store.open(tmp_path / "log.sqlite3")
        tables = Tables(store, import_process=False)
        tables.attach_loop(asyncio.get_running_loop())
        try:
            with caplog.at_level(logging.INFO, logger="companion.table.tables"):
                played = await tables.create("sixes", {"players": 3}, ["Ann", "Bob", "Cid"])
                await played.act({"kind": "end_game", "player": 0}, "0", "end-0001")
                left = await tables.create("qwixx", {"players": 2}, ["Dee", "Eve"])
                await left.end_by_host()
            return [
                played.table_id,
                played.code,
                left.table_id,
                left.code,
                *[r.getMessage() for r in caplog.records],
            ]
        finally:
            tables.close()
            store.close()

    played, played_code, left, left_code, *said = asyncio.run(scenario())
    assert said == [
        f"table {played} started: Sixes, Ann, Bob, Cid; join code {played_code}",
        f"table {played} (Sixes): game over: Ann ended the game; Ann, Bob and Cid are the "
        "richest with 500 coins and share the win",
        f"table {left} started: Qwixx, Dee, Eve; join code {left_code}",
        f"table {left} (Qwixx): ended by the host before the game's end",
    ]


def test_the_snapshot_says_whether_the_hosts_device_is_seated(tmp_path: Path) -> None:
    """The screens stop pointing the players at the host's device while it holds a seat
    (it acts as its player only): the snapshot follows the host's sitting down, standing
    up by the seat page or by freeing the seat, a second host's device, and a restart."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "host_seat.sqlite3")
        tables = attached_tables(store)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            host = await table.add_device(host=True)
            bob = await table.add_device(host=False)
            await table.take_seat(bob, 1)
            assert not table.snapshot.host_seated
            await table.take_seat(host, 0)
            assert table.snapshot.host_seated
            await table.take_seat(host, None)
            assert not table.snapshot.host_seated
            await table.take_seat(host, 0)
            await table.free_seat(0)  # the host stands up
            assert not table.snapshot.host_seated
            await table.take_seat(host, 0)
        finally:
            tables.close()
        again = attached_tables(store)
        try:
            reopened = await again.get(table.table_id)
            assert reopened is not None and reopened.snapshot.host_seated
            await reopened.add_device(host=True)  # a host's device at no seat acts as host
            assert not reopened.snapshot.host_seated
        finally:
            again.close()
            store.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("change", ["play_again", "auto_pass"])
def test_a_change_waiting_while_its_game_is_deleted_is_refused_as_deleted(
    tmp_path: Path, change: str
) -> None:
    """A change at a finished game waited for the table's lock while the server's own
    screen deleted the game. The host's Play again then stored the next game linked from
    the deleted one (a foreign key to no table: the host read the store's failure); a
    change (the host's undo that reopens it, a seat, the automatic passes) was refused
    `table_reloaded`, "the table was opened again since this screen was drawn; try again",
    and the try again met "no such table". Now each is refused as deleted, nothing made."""

    async def scenario() -> None:
        store = Store.open(tmp_path / "deleted.sqlite3")
        tables = attached_tables(store)
        try:
            game = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            await game.end_by_host()
            async with game._lock:  # noqa: SLF001 - busy: the deletion waits first, then the change
                deleting = asyncio.create_task(tables.delete_finished(game.table_id))
                await waiters(game, 1)
                waiting = (
                    tables.play_again(game) if change == "play_again" else game.set_auto_pass(False)
                )
                changed = asyncio.create_task(waiting)
                await waiters(game, 2)
            assert await asyncio.wait_for(deleting, 20) is not None
            with pytest.raises(Rejection) as refused:
                await asyncio.wait_for(changed, 20)
            assert refused.value.rule == "game_deleted"
            assert store.tables(finished=False) == [] and store.table(game.table_id) is None
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


async def waiters(table: Table, count: int) -> None:
    """Until `count` changes wait for `table`'s lock (a deadline of 20 s)."""
    deadline = time.monotonic() + 20
    while len(table._lock._waiters or ()) < count:  # noqa: SLF001
        assert time.monotonic() < deadline, f"{count} waiters on the table's lock"
        await asyncio.sleep(0.01)


def test_a_move_sent_as_the_host_frees_its_seat_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device's rights are read when its request arrives, and its move then waits for
    the table's lock: while the host's "free this seat" was being stored, the freed
    device's move waited, then marked the sheet the device no longer held. The table
    checks the sender again under the lock."""
    from companion.web.deps import Access
    from companion.web.routes.api import ActionRequest, UndoRequest, perform_action, perform_undo

    async def scenario() -> None:
        store = Store.open(tmp_path / "freed.sqlite3")
        tables = attached_tables(store)
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            await table.act(QWIXX_ROLL_7, "host", "roll-0001")
            token = await table.add_device(host=False)
            await table.take_seat(token, 1)
            viewer = table.viewer(token)
            assert viewer is not None
            inside, release = threading.Event(), threading.Event()
            original = store.free_seat

            def held_free(*args: Any) -> None:
                inside.set()
                release.wait(60)
                original(*args)

            monkeypatch.setattr(store, "free_seat", held_free)
            freeing = asyncio.create_task(table.free_seat(1))
            await asyncio.to_thread(inside.wait, 60)
            access = Access(table, viewer, token)  # as the request read it, before the free
            move = ActionRequest(action_id="bob-pass-01", move={"kind": "pass", "player": 1})
            sent = asyncio.create_task(perform_action(access, move))
            undo = asyncio.create_task(perform_undo(access, UndoRequest(action_id="bob-undo-1")))
            release.set()
            await freeing
            for task in (sent, undo):
                with pytest.raises(Rejection) as refused:
                    await task
                assert refused.value.rule == "seat_freed"
            assert table.snapshot.state_id == 1
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())
