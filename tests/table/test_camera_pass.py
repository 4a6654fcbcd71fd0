"""The live table's service without a server: a camera roll's one pass (hub -> decision ->
intake -> the table's subscribers), and each step on its own (docs/ARCHITECTURE.md,
"A camera roll, from the frame to the tablets"). Real Store (SQLite in a temp dir), real
Tables; no FastAPI, no templates, no camera thread (the hub's runtime is disabled and the
throws are handed in as the worker would hand them)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from companion.live.settle import RollEvent
from companion.rules.base import DiceSpec, Die, Move, Reason, Rejection, Roll, Throw
from companion.rules.qwixx import Cross
from companion.rules.session import CAMERA, HOST
from companion.table.access import Viewer
from companion.table.camera_decision import decide_throw
from companion.table.camera_feed import (
    CHOSEN_LEFT_S,
    FOLLOW_IDLE_S,
    FOLLOW_PAGE_ROWS,
    MODE_KEY,
    CameraFeed,
)
from companion.table.camera_hub import CameraHub, implied_texts
from companion.table.camera_settings import CameraSettings
from companion.table.held_reading import CameraRoll, HeldReading, camera_moved_on
from companion.table.roll_intake import RollIntake, TableNote
from companion.table.store import Store, TableRow
from companion.table.tables import Table, Tables
from companion.vision.types import UNREADABLE, DieBox, DieReading

QWIXX = ("white", "white", "red", "yellow", "green", "blue")
QWIXX_THROW = Throw(DiceSpec(QWIXX))
QWIXX_ROLL = Roll(dice=tuple(Die(c, v) for c, v in zip(QWIXX, (3, 4, 2, 5, 6, 1), strict=True)))
IMAGE = np.zeros((480, 640, 3), np.uint8)
HOST_DEVICE = Viewer(seat=None, host=True)  # the host's device, at no seat


def qwixx_event(values: tuple[int | None, ...] = (3, 4, 2, 5, 6, 1)) -> RollEvent:
    dice = tuple(
        DieReading(
            DieBox(60.0 + 90 * i, 100.0, 40.0, 40.0),
            value,
            0.9,
            colour,
            0.9,
            () if value is not None else (UNREADABLE,),
        )
        for i, (colour, value) in enumerate(zip(QWIXX, values, strict=True))
    )
    return RollEvent(dice, 30, 3.0, 24, 2.4, 640, 480, IMAGE)


def move_words(table: Table, move: Move) -> str:
    return move.kind  # the web hands in its views' labels; the service needs none


def with_qwixx_table(tmp_path: Path, body: Callable[[Tables, Table], Awaitable[None]]) -> None:
    async def scenario() -> None:
        store = Store.open(tmp_path / "service.sqlite3")
        tables = Tables(store, import_process=False)
        tables.attach_loop(asyncio.get_running_loop())
        try:
            table = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
            await body(tables, table)
        finally:
            tables.close()
            store.close()

    asyncio.run(scenario())


def test_a_camera_roll_reaches_the_tablets_in_one_pass(tmp_path: Path) -> None:
    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        tablet = table.subscribe()  # what a tablet's WebSocket listens on
        await hub.on_throw(qwixx_event())
        assert table.snapshot.state_id == 1
        assert tablet.queue.get_nowait() == 1  # the tablet is told of the new state
        assert table.session.actions[-1].by == CAMERA
        status = await hub.status_json(table)
        assert status["note"] == "roll applied" and status["last_roll_seq"] == 1
        assert status["pending"] is None
        assert len(tables.store.photo_ids(table.table_id)) == 1  # the roll's photo is kept

    with_qwixx_table(tmp_path, body)


def test_a_mismatch_is_a_question_until_the_host_fixes_the_die(tmp_path: Path) -> None:
    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await hub.on_throw(qwixx_event((3, 4, 2, 5, 6, None)))
        assert table.snapshot.state_id == 0  # a question is never applied by itself
        status = await hub.status_json(table)
        pending = status["pending"]
        assert pending["kind"] == "mismatch" and status["note"].startswith("not applied")
        assert hub.held.picture(table.table_id)  # drawn off the loop by the intake
        answer = await hub.fix(
            table, pending["id"], 5, 1, None, False, device=HOST_DEVICE, token=None
        )
        assert answer == {"applied": True, "state_id": 1}
        assert (await hub.status_json(table))["pending"] is None

    with_qwixx_table(tmp_path, body)


# the parameters that say who acts: a default there gives a caller that forgets it rights
# (the host's) it never asked for
ACTING_PARAMETERS = {"device", "token", "by", "on_server"}


def test_no_camera_hub_method_that_acts_for_a_device_defaults_who_acts() -> None:
    """Who confirms, fixes or adds (the acting device) is always named by the caller,
    keyword-only: a forgotten device raises TypeError instead of acting as the host."""
    acting: dict[str, inspect.Parameter] = {}
    for name, method in inspect.getmembers(CameraHub, inspect.isfunction):
        for parameter in inspect.signature(method).parameters.values():
            if parameter.name in ACTING_PARAMETERS or parameter.annotation == "Viewer":
                acting[f"{name}({parameter.name})"] = parameter
    assert {"confirm(device)", "fix(device)", "add(device)"} <= acting.keys()
    defaulted = [where for where, p in acting.items() if p.default is not inspect.Parameter.empty]
    assert defaulted == []
    for acts in ("confirm", "fix", "add"):
        assert acting[f"{acts}(device)"].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_decision_is_a_function_of_the_throw() -> None:
    """Match, then sure or held, then the question: nothing but its input decides."""
    throw = qwixx_event()
    applied = decide_throw(throw, QWIXX_THROW, 7, "t1", "auto", "h1", None)
    assert isinstance(applied, CameraRoll) and applied.state_id == 7 and applied.by == CAMERA
    assert decide_throw(throw, QWIXX_THROW, 7, "t1", "auto", "h1", None) == applied
    confirm = decide_throw(throw, QWIXX_THROW, 7, "t1", "confirm", "h1", None)
    assert isinstance(confirm, HeldReading) and confirm.kind == "confirm" and not confirm.unsure
    # no shipped threshold: the camera is sure of nothing, so every die is asked about
    unsure = decide_throw(throw, QWIXX_THROW, 7, "t1", "sure", "h1", None)
    assert isinstance(unsure, HeldReading) and unsure.kind == "unsure"
    assert len(unsure.unsure) == len(QWIXX)
    mismatch = decide_throw(
        qwixx_event((3, 4, 2, 5, 6, None)), QWIXX_THROW, 7, "t1", "auto", "h1", None
    )
    assert isinstance(mismatch, HeldReading) and mismatch.kind == "mismatch"


def test_the_intake_applies_a_roll_and_holds_a_question_without_a_hub(tmp_path: Path) -> None:
    async def body(tables: Tables, table: Table) -> None:
        intake = RollIntake(tables.store)
        question = decide_throw(
            qwixx_event(), QWIXX_THROW, 0, table.table_id, "confirm", "h1", None
        )
        assert isinstance(question, HeldReading)
        taken = await intake.take(table, question, setup=None, tapped=False)
        assert taken.held is not None and taken.held.picture and taken.seq is None
        assert intake.held.current(table) == taken.held
        assert (
            intake.note_of(table.table_id).text
            == "waiting for Ann or the host to confirm the roll"  # whose step it is
        )
        roll = decide_throw(qwixx_event(), QWIXX_THROW, 0, table.table_id, "auto", "h2", None)
        assert isinstance(roll, CameraRoll)
        taken = await intake.take(table, roll, setup=None, tapped=False)
        assert taken.seq == 1 and taken.held is None
        assert intake.held.current(table) is None  # the roll replaced the question
        # the same roll again is stale: refused by the engine, noted, never raised
        assert (await intake.take(table, roll, setup=None, tapped=False)).seq is None
        assert intake.note_of(table.table_id).text.startswith("the game refused")

    with_qwixx_table(tmp_path, body)


def test_a_note_says_how_old_it_is_by_the_servers_clock() -> None:
    assert TableNote().to_json()["note_age_s"] is None  # no note yet
    fresh = TableNote(text="roll applied", at=time.time()).to_json()
    assert fresh["note_age_s"] == 0
    old = TableNote(text="dice thrown again: too many throws wait, dropped", at=time.time() - 600)
    assert 599 <= int(old.to_json()["note_age_s"]) <= 660  # type: ignore[call-overload]


def test_the_camera_does_not_go_back_to_an_older_table_when_its_game_ends(tmp_path: Path) -> None:
    """The players' trial: when the game the camera served ended, the camera took an older
    open table (an abandoned game with the same names) by itself."""

    async def body(tables: Tables, abandoned: Table) -> None:
        feed = CameraFeed(tables)
        playing = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
        assert await feed.refresh() is playing  # the newest open table
        await playing.end_by_host()
        assert await feed.refresh() is None  # not the abandoned one
        assert not feed.attached_to(abandoned.table_id)
        newer = await tables.create("sixto", {"players": 2}, ["Ann", "Bob"])
        assert await feed.refresh() is newer
        await feed.attach(abandoned.table_id)  # a host may still take it there
        assert feed.attached_to(abandoned.table_id)

    with_qwixx_table(tmp_path, body)


def test_the_log_names_the_game_the_camera_serves_and_says_when_it_serves_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: the server's log said "camera rolls go to table zCIP4rZg4slG",
    an id no screen shows, then "camera rolls go to table None" once that game ended."""

    async def body(tables: Tables, table: Table) -> None:
        feed = CameraFeed(tables)
        with caplog.at_level(logging.INFO, logger="companion.table.camera_feed"):
            await feed.refresh()
            await table.end_by_host()
            await feed.refresh()
        assert [r.getMessage() for r in caplog.records] == [
            f"camera rolls go to table {table.table_id} (Qwixx: Ann, Bob; join code {table.code})",
            "camera rolls go to no table: no game newer than the last one it served is in "
            'progress (a host\'s "Use the camera at this table" takes it)',
        ]

    with_qwixx_table(tmp_path, body)


def test_throws_with_no_table_served_are_logged_once_not_every_throw(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: a recording (--images --hold 2) after the last game ended
    wrote "a throw settled but no table is open" every 2 s, 1,800 lines an hour, while
    older games were in fact open (the camera serves the newest only)."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await table.end_by_host()
        with caplog.at_level(logging.INFO, logger="companion.table.camera_hub"):
            for _ in range(3):
                await hub.on_throw(qwixx_event())
            newer = await tables.create("qwixx", {"players": 2}, ["Cid", "Dee"])
            await hub.on_throw(qwixx_event())
            assert newer.snapshot.state_id == 1
            await newer.end_by_host()
            await hub.on_throw(qwixx_event())
        said = [r.getMessage() for r in caplog.records]
        assert said == [NOT_SERVED, NOT_SERVED], said

    with_qwixx_table(tmp_path, body)


NOT_SERVED = (
    "a throw settled but the camera serves no table: it is not read as a roll (said once "
    "until a table takes the camera)"
)


def test_a_restart_does_not_hand_the_camera_back_to_an_older_table(tmp_path: Path) -> None:
    """A café owner's trial (kill -9 and restart): the camera's game had ended, so it
    served no table; after the restart it served an older game in progress, whose table
    taps its rolls in, and a throw at the camera's table would have been that game's roll."""

    async def body(tables: Tables, older: Table) -> None:
        feed = CameraFeed(tables)
        served = await tables.create("sixto", {"players": 2}, ["Ann", "Bob"])
        assert await feed.refresh() is served
        await served.end_by_host()
        assert await feed.refresh() is None

        restarted = CameraFeed(tables)  # what the new server's camera reads from the store
        await restarted.restore()
        assert await restarted.refresh() is None
        assert not restarted.attached_to(older.table_id)
        newer = await tables.create("qwixx", {"players": 2}, ["Cid", "Dee"])
        assert await restarted.refresh() is newer  # a new table still takes it

    with_qwixx_table(tmp_path, body)


def test_the_game_played_again_keeps_the_hosts_camera_mode_and_automatic_passes(
    tmp_path: Path,
) -> None:
    """A players' trial: the host set the camera to "confirm" (and turned the automatic
    passes off), tapped "Play again", and the next game went back to the defaults. What a
    host chose carries over; what they never chose stays the default there too."""

    async def body(tables: Tables, chosen: Table) -> None:
        feed = CameraFeed(tables)
        await feed.set_mode(chosen.table_id, "confirm")
        await chosen.set_auto_pass(False)
        await chosen.end_by_host()
        again, _ = await tables.play_again(chosen)
        assert await feed.mode(again.table_id, "auto") == "confirm"
        assert again.auto_pass is False
        restarted = Tables(tables.store, import_process=False)  # as read after a restart
        restarted.attach_loop(asyncio.get_running_loop())
        try:
            reopened = await restarted.get(again.table_id)
            assert reopened is not None and reopened.auto_pass is False
            assert await CameraFeed(restarted).mode(again.table_id, "auto") == "confirm"
        finally:
            restarted.close()

        untouched = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
        await untouched.end_by_host()
        plain, _ = await tables.play_again(untouched)
        assert await feed.mode(plain.table_id, "sure") == "sure"  # the source's default
        assert plain.auto_pass is True
        assert tables.store.table_setting(plain.table_id, MODE_KEY) is None

    with_qwixx_table(tmp_path, body)


def test_the_follower_reads_the_newest_rows_not_every_stored_table(tmp_path: Path) -> None:
    """A maintainer's look at the fifth probe: the follower read every running table's row
    each second (3,000 on a busy store). It reads the newest a page at a time, and still
    passes over rows it cannot open to the newest open table below them."""

    async def body(tables: Tables, oldest: Table) -> None:
        def read_everything(finished: bool | None = None) -> list[TableRow]:
            raise AssertionError("the follower read every stored table")

        tables.store.tables = read_everything  # type: ignore[method-assign]
        feed = CameraFeed(tables)
        for n in range(FOLLOW_PAGE_ROWS + 3):  # newer tables the follower cannot open
            tables.store.create_table(f"gone{n}", f"GONE{n:02d}", "no-such-game", {}, ["Eve"])
        assert await feed.refresh() is oldest

    with_qwixx_table(tmp_path, body)


def test_a_game_that_plays_on_keeps_the_camera_from_a_newer_table(tmp_path: Path) -> None:
    """The re-probe: a device on the network started a table of its own and took the
    camera (and its picture) from a game no host had attached it to."""

    async def body(tables: Tables, playing: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        assert await hub.feed.refresh() is playing and hub.feed.hold is None  # no action yet
        await playing.act_throw(QWIXX_ROLL, "0", "ann-rolls")
        assert await hub.feed.refresh() is playing and hub.feed.hold == "playing"
        newer = await tables.create("qwixx", {"players": 2}, ["Eve", "Mal"])
        assert await hub.feed.refresh() is playing  # the newer table waits
        try:
            hub.check_may_take(newer.table_id)
        except Rejection as refusal:
            assert refusal.rule == "camera_held" and "plays on" in refusal.message
        else:
            raise AssertionError("a newer table took a playing game's camera")
        assert playing.acted_at is not None
        playing.acted_at -= FOLLOW_IDLE_S + 1  # the game has rested ten minutes
        assert await hub.feed.refresh() is newer and hub.feed.hold is None

    with_qwixx_table(tmp_path, body)


def test_a_table_is_told_the_camera_comes_to_it_only_where_it_would_follow_it(
    tmp_path: Path,
) -> None:
    """The notice at the top promised every waiting table "It comes to this table when that
    game ends", but the camera then follows the newest open table: never one older than the
    table served, nor one a newer table was started after (CameraFeed.target_table)."""

    async def body(tables: Tables, older: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        playing = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
        assert await hub.feed.refresh() is playing
        await playing.act_throw(QWIXX_ROLL, "0", "ann-rolls")
        newer = await tables.create("qwixx", {"players": 2}, ["Cid", "Dee"])
        assert await hub.feed.refresh() is playing and hub.feed.hold == "playing"
        comes = "It comes to this table when that game ends"
        assert comes in str(await hub.serves_elsewhere(newer))
        for waiting in (older, newer):
            if waiting is newer:
                await tables.create("qwixx", {"players": 2}, ["Eve", "Fay"])
            words = str(await hub.serves_elsewhere(waiting))
            assert comes not in words and "does not come to this table by itself" in words
            assert "server's own screen can move it here" in words

    with_qwixx_table(tmp_path, body)


async def playing_and_waiting(tables: Tables, hub: CameraHub) -> tuple[Table, Table]:
    """A game that plays on with the camera, and a newer table that waits for it."""
    playing = await tables.create("qwixx", {"players": 2}, ["Ann", "Bob"])
    assert await hub.feed.refresh() is playing
    await playing.act_throw(QWIXX_ROLL, "0", "ann-rolls")
    waiting = await tables.create("qwixx", {"players": 2}, ["Cid", "Dee"])
    assert await hub.feed.refresh() is playing and hub.feed.hold == "playing"
    return playing, waiting


def test_a_waiting_tables_camera_polls_read_the_store_once_until_something_changes(
    tmp_path: Path,
) -> None:
    """A maintainer's look: every camera poll (0.7 s) of every open page at a table the
    camera does not serve read a page of running tables from the store, off the loop, to
    say whether the camera comes there by itself (CameraFeed.follows_next)."""

    async def body(tables: Tables, older: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        _, waiting = await playing_and_waiting(tables, hub)
        statements: list[str] = []
        tables.store._db.set_trace_callback(statements.append)  # every statement it runs
        for _ in range(20):  # two tables' pages, polling
            for table in (waiting, older):
                assert await hub.serves_elsewhere(table) is not None
        # one read, for the newer table (the older one is older than the table served)
        assert len(statements) == 1, statements
        await tables.create("qwixx", {"players": 2}, ["Eve", "Fay"])
        statements.clear()
        for _ in range(5):
            await hub.serves_elsewhere(waiting)
        assert len(statements) == 1, statements  # read again once, after the change

    with_qwixx_table(tmp_path, body)


def test_whether_the_camera_comes_to_a_waiting_table_changes_as_the_tables_do(
    tmp_path: Path,
) -> None:
    """CameraFeed.follows_next answers from what it read until a table is started or ended,
    or the camera moves: each of them changes the answer here (a table that cannot be
    opened changes none: test_a_newer_table_that_cannot_be_opened_...)."""

    async def body(tables: Tables, older: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        _, waiting = await playing_and_waiting(tables, hub)
        follows = hub.feed.follows_next
        assert await follows(waiting)
        newest = await tables.create("qwixx", {"players": 2}, ["Eve", "Fay"])
        assert not await follows(waiting)  # a newer table was started
        await newest.end_by_host()
        assert await follows(waiting)  # it ended
        chosen = await tables.create("sixto", {"players": 2}, ["Gus", "Hal"])
        assert not await follows(waiting)
        await hub.take_for(chosen.table_id, on_server=True)
        assert await follows(waiting)  # the camera moved to the newer table: next, this

    with_qwixx_table(tmp_path, body)


def test_a_newer_table_that_cannot_be_opened_does_not_keep_the_camera_from_a_waiting_one(
    tmp_path: Path,
) -> None:
    """A developer's look: a newer running table that cannot be opened (its game unknown
    here, its stored players not its game's seats) counted as a newer table, so a waiting
    table read "It does not come to this table by itself", yet the follower passes over
    such a table and came there. The answer and the follower agree now, behind more than a
    page of such rows too."""

    async def body(tables: Tables, older: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        playing, waiting = await playing_and_waiting(tables, hub)
        store = tables.store
        store.create_table("unknown", "GONE00", "no-such-game", {}, ["Eve"])
        store.create_table("misseated", "GONE01", "qwixx", {"players": 2}, ["Eve"])
        assert await hub.feed.follows_next(waiting)
        assert await tables.openable("misseated") is None  # damaged, as the follower found
        assert "It comes to this table" in str(await hub.serves_elsewhere(waiting))
        other = await tables.create("qwixx", {"players": 2}, ["Eve", "Fay"])
        for n in range(FOLLOW_PAGE_ROWS + 3):  # above it, more than a page of such rows
            store.create_table(f"gone{n}", f"GONE{n + 2:02d}", "no-such-game", {}, ["Eve"])
        assert not await hub.feed.follows_next(waiting)  # the open one below them counts
        await other.end_by_host()
        assert await hub.feed.follows_next(waiting)
        await playing.end_by_host()
        assert await hub.feed.refresh() is waiting  # the follower agrees

    with_qwixx_table(tmp_path, body)


def test_a_chosen_table_whose_devices_all_left_lets_the_camera_go(tmp_path: Path) -> None:
    """A café owner's evening: the players of the table chosen for the camera went home
    without ending their game, and only the server's own start page moved the camera on; a
    newer table tapped its rolls in all evening. Once no device has been connected to the
    chosen table and no action made there for 10 minutes, the camera follows the newest
    table, as it does when a game rests (also after a restart)."""

    async def body(tables: Tables, chosen: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        feed = hub.feed
        start = time.time()
        feed.clock = lambda: start
        await hub.take_for(chosen.table_id, on_server=False)
        newer = await tables.create("qwixx", {"players": 2}, ["Cid", "Dee"])
        screen = chosen.subscribe()  # a device of the chosen table is connected
        feed.clock = lambda: start + 3600  # an hour with no action: its players are there
        assert await feed.refresh() is chosen and feed.hold == "attached"
        chosen.unsubscribe(screen)  # the last one leaves
        chosen.acted_at = start + 3600 + 300  # an action (a tap kept in the store) after
        feed.clock = lambda: start + 3600 + 300 + CHOSEN_LEFT_S - 1
        assert await feed.refresh() is chosen and feed.hold == "attached"
        with pytest.raises(Rejection, match="no device connected and no action for 10 minutes"):
            hub.check_may_take(newer.table_id)
        assert "10 minutes with no device connected there and no action" in str(
            await hub.serves_elsewhere(newer)
        )
        feed.clock = lambda: start + 3600 + 300 + CHOSEN_LEFT_S
        assert await feed.refresh() is newer and feed.hold is None
        assert await hub.serves_elsewhere(chosen) is None  # nothing holds the camera now
        hub.check_may_take(chosen.table_id)  # its host may choose it again

        restarted = CameraFeed(tables)  # what the new server's camera reads from the store
        await restarted.restore()
        assert await restarted.refresh() is newer

    with_qwixx_table(tmp_path, body)


def test_a_held_question_outlives_a_players_move_but_not_a_typed_roll(tmp_path: Path) -> None:
    """The players' re-trial: in confirm mode Bob threw while the white sum was open; the
    question ("Ann: Pass ..., Bob: Pass ..., then: the roll") vanished the moment Bob
    crossed, and his throw was lost with nobody told. The dice still lie there: the
    question stays, implying only the passes still due; a roll typed in ends it."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await hub.feed.set_mode(table.table_id, "confirm")
        await table.act_throw(QWIXX_ROLL, "0", "ann-rolls")  # the white sum is open
        await hub.on_throw(qwixx_event((1, 2, 3, 4, 5, 6)))  # the next throw, early
        pending = (await hub.status_json(table))["pending"]
        assert pending["kind"] == "confirm" and len(pending["implies"]) == 2  # Ann, Bob
        await table.act(Cross(1, "red", 7), "1", "bob-crosses")  # Bob crosses meanwhile
        carried = (await hub.status_json(table))["pending"]
        assert carried is not None and carried["id"] == pending["id"]  # the same question
        assert len(carried["implies"]) == 1  # Bob no longer passes
        state_id = await hub.confirm(table, carried["id"], device=HOST_DEVICE, token=None)
        assert state_id == table.snapshot.state_id and table.session.actions[-1].by == CAMERA
        # a roll typed in while a question waits ends the question (the dice it read are
        # not the roll any more)
        await hub.on_throw(qwixx_event((2, 2, 3, 4, 5, 6)))
        assert (await hub.status_json(table))["pending"] is not None
        await table.act_throw(QWIXX_ROLL, "host", "typed-roll")
        assert (await hub.status_json(table))["pending"] is None

    with_qwixx_table(tmp_path, body)


def test_a_player_whose_throw_passes_both_steps_is_named_once(tmp_path: Path) -> None:
    """The players' tablets: the camera's question read "Ann: pass, Ann: pass, -5 penalty"
    for the active player's two passes (the white sum and her colour step). Her name and
    the pass are said once, with the penalty they cost; another player's pass stays his."""

    async def body(tables: Tables, table: Table) -> None:
        await table.act_throw(QWIXX_ROLL, "0", "ann-rolls")  # Ann is active

        def implied_now() -> list[str]:
            throw = table.snapshot.throw
            assert throw is not None
            return implied_texts(table, throw.implied, move_words)

        assert implied_now() == ["Ann: pass, \N{MINUS SIGN}5 penalty", "Bob: pass"]
        await table.act(Cross(1, "red", 7), "1", "bob-crosses")
        assert implied_now() == ["Ann: pass, \N{MINUS SIGN}5 penalty"]

    with_qwixx_table(tmp_path, body)


def test_the_camera_status_says_when_a_roll_is_due_not_only_what_a_throw_would_mean(
    tmp_path: Path,
) -> None:
    """The café owner's trial: a tablet said "The camera is watching for the next roll."
    while its players crossed (a throw then closes their step: `expects` holds dice). The
    status says apart whether the game waits for a roll (`roll_due`)."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await hub.feed.refresh()
        status = await hub.status_json(table)
        assert status["roll_due"] is True and status["expects"] == list(QWIXX)
        await table.act_throw(QWIXX_ROLL, "0", "ann-rolls")
        status = await hub.status_json(table)
        assert status["roll_due"] is False  # the players cross
        assert status["expects"] == list(QWIXX)  # a throw would close their step
        await table.end_by_host()
        assert (await hub.status_json(table))["roll_due"] is False

    with_qwixx_table(tmp_path, body)


def test_a_recording_throw_before_its_replay_from_the_start_is_not_taken(
    tmp_path: Path,
) -> None:
    """A folder of photos plays on while the players sit down: once the last seat is taken
    the recording plays again from its start (CameraHub._replay_once_seated, at the hub's
    next look at its table, up to TARGET_REFRESH_S later). A photo that comes in between is
    the recording's middle: taken, it was a roll before the recording's first throw, which
    the restart then played again after it (with --hold 2, one time in four)."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(images=tmp_path), tables, move_words)
        restarts: list[bool] = []
        hub.runtime.restart = lambda: restarts.append(True)  # type: ignore[method-assign]
        await hub.on_throw(qwixx_event())  # nobody sits yet: not taken
        assert table.snapshot.state_id == 0 and restarts == []
        for seat in (0, 1):
            await table.take_seat(await table.add_device(host=False), seat)
        assert hub.waits_for_seats(table) == []
        await hub.on_throw(qwixx_event((1, 2, 3, 4, 5, 6)))  # before the hub's look
        assert table.snapshot.state_id == 0  # the restart comes: the recording's start first
        assert restarts == [True]
        await hub.on_throw(qwixx_event())  # the recording's first photo, played again
        assert table.snapshot.state_id == 1 and restarts == [True]

    with_qwixx_table(tmp_path, body)


def test_a_recording_plays_on_once_a_seat_freed_mid_game_is_taken_again(
    tmp_path: Path,
) -> None:
    """The recording plays again from its start once the seats are taken only before the
    game's first roll (its skipped throws are then the game's first). Mid-game, when the
    host frees a seat (a player changes devices), its throws meanwhile are not taken, and
    once the seat is taken again it plays on: played from its start, its first throws came
    again in the middle of the game."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(images=tmp_path), tables, move_words)
        restarts: list[bool] = []
        hub.runtime.restart = lambda: restarts.append(True)  # type: ignore[method-assign]
        for seat in (0, 1):
            await table.take_seat(await table.add_device(host=False), seat)
        await hub.on_throw(qwixx_event())
        assert table.snapshot.state_id == 1
        await table.free_seat(1)  # Bob changes devices
        await hub.on_throw(qwixx_event((1, 2, 3, 4, 5, 6)))
        assert table.snapshot.state_id == 1  # not taken while his seat is free
        await table.take_seat(await table.add_device(host=False), 1)
        await hub._refresh_target()  # the hub's look at its table (every second)
        assert restarts == []  # the recording plays on

    with_qwixx_table(tmp_path, body)


def test_the_log_says_what_became_of_each_camera_roll(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: the server's log had no line per camera roll, so an evening's
    log could not say which throws were applied, asked about or refused. One INFO line per
    roll: the table's game and join code, the dice read, and what became of them."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        where = f"camera roll at table {table.table_id} (Qwixx, join code {table.code})"
        read = "white 3, white 4, red 2, yellow 5, green 6, blue 1"
        with caplog.at_level(logging.INFO, logger="companion.table"):
            await hub.on_throw(qwixx_event())  # applied at once (a table's default mode)
            await hub.on_throw(qwixx_event((3, 4, 2, 5, 6, None)))  # a die not read: asked
            question = hub.held.current(table)
            assert question is not None
            stale = decide_throw(qwixx_event(), QWIXX_THROW, 0, table.table_id, "auto", "h", None)
            assert isinstance(stale, CameraRoll)  # read at state 0, the game is at 1
            await hub.intake.take(table, stale, setup=None, tapped=False)
        said = [r.getMessage() for r in caplog.records if r.name == "companion.table.roll_intake"]
        assert {r.levelno for r in caplog.records} == {logging.INFO}
        assert said == [
            f"{where}: read {read}; applied (state 1, by camera)",
            f"{where}: read white 3, white 4, red 2, yellow 5, green 6, blue ?; asked "
            f"(mismatch): not applied: {question.message}",
            f"{where}: read {read}; refused (camera_moved_on): {CAMERA_STALE}",
        ], said

    with_qwixx_table(tmp_path, body)


CAMERA_STALE = "the game moved on while the camera read the throw; throw again"


def test_a_camera_roll_the_game_moved_past_is_refused_in_words_for_a_camera(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A café owner's trial: a camera roll refused because the game moved on carried the
    engine's words for a tablet ("since this screen was drawn; it has been refreshed") on
    the camera line and in the server log, where no screen was drawn or refreshed. Now both
    say what a camera means (the game moved on while the camera read the throw: throw
    again),
    and the log still names the rule; a tablet's stale tap keeps its own words."""

    async def body(tables: Tables, table: Table) -> None:
        intake = RollIntake(tables.store)
        roll = decide_throw(qwixx_event(), QWIXX_THROW, 0, table.table_id, "auto", "h", None)
        assert isinstance(roll, CameraRoll)
        await table.act_throw(roll.roll, CAMERA, "typed-in", 0)  # someone tapped it in
        with caplog.at_level(logging.INFO, logger="companion.table"):
            assert (await intake.take(table, roll, setup=None, tapped=False)).seq is None
        line = intake.note_of(table.table_id).text
        assert line == f"the game refused the camera's roll: {CAMERA_STALE}", line
        said = [r.getMessage() for r in caplog.records if r.name == "companion.table.roll_intake"]
        assert len(said) == 1 and said[0].endswith(f"; refused (camera_moved_on): {CAMERA_STALE}")
        assert not any("screen" in words or "refreshed" in words for words in [line, *said])
        with pytest.raises(Rejection) as tapped:  # a tablet drawn at state 0 taps a roll
            await table.act_throw(roll.roll, CAMERA, "tapped-late", 0)
        assert "since this screen was drawn" in tapped.value.message

    with_qwixx_table(tmp_path, body)


def test_every_camera_roll_the_game_moved_past_is_refused_with_one_reason_and_words(
    tmp_path: Path,
) -> None:
    """The camera's two refusals of a roll the game moved past differed: the camera line
    said "the game moved on while the camera read the throw", a tap on its question "the
    game moved on since the camera read these dice", under another rule. Both are now the
    one `camera_moved_on` refusal (stale_state) with one sentence: the intake's, when the
    engine refuses the roll, and a tap's on a question a hand-entered roll made stale."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        roll = decide_throw(qwixx_event(), QWIXX_THROW, 0, table.table_id, "auto", "h", None)
        assert isinstance(roll, CameraRoll)
        await table.act_throw(roll.roll, CAMERA, "typed-in", 0)  # someone tapped it in
        assert (await hub.intake.take(table, roll, setup=None, tapped=False)).seq is None
        line = hub.intake.note_of(table.table_id).text
        assert line == f"the game refused the camera's roll: {CAMERA_STALE}", line

        await hub.on_throw(qwixx_event((3, 4, 2, 5, 6, None)))  # a die not read: asked
        question = hub.held.current(table)
        assert question is not None and question.state_id == 1
        await table.undo(HOST, "undo-typed-in")  # the game moved past the question
        with pytest.raises(Rejection) as tapped:
            await hub.fix(
                table, question.held_id, 5, 1, None, False, device=HOST_DEVICE, token=None
            )
        refused = tapped.value
        assert (refused.reason, refused.rule, refused.message) == (
            Reason.STALE_STATE,
            "camera_moved_on",
            CAMERA_STALE,
        )
        assert camera_moved_on().to_json() == refused.to_json()

    with_qwixx_table(tmp_path, body)


def test_a_camera_answer_sent_as_the_host_frees_its_seat_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a move is (tests/table/test_tables.py, the move sent as its seat is freed): the
    active player's confirm or fix of the camera's question was read when it arrived, and
    waited while the host's "free this seat" was being stored; the hub then checked the
    rights read before the free and applied the throw from a device that held no seat."""
    from companion.web.deps import Access
    from companion.web.routes.live import ConfirmRequest, FixRequest, camera_confirm, camera_fix

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await hub.feed.set_mode(table.table_id, "confirm")
        token = await table.add_device(host=False)
        await table.take_seat(token, 0)  # Ann's, the active player's
        viewer = table.viewer(token)
        assert viewer is not None
        await hub.on_throw(qwixx_event())
        pending = (await hub.status_json(table))["pending"]
        assert pending is not None and pending["kind"] == "confirm"
        inside, release = threading.Event(), threading.Event()
        original = tables.store.free_seat

        def held_free(*args: Any) -> None:
            inside.set()
            release.wait(60)
            original(*args)

        monkeypatch.setattr(tables.store, "free_seat", held_free)
        freeing = asyncio.create_task(table.free_seat(0))
        await asyncio.to_thread(inside.wait, 60)
        access = Access(table, viewer, token)  # as the request read it, before the free
        answers = (
            camera_confirm(ConfirmRequest(id=pending["id"]), access, hub),
            camera_fix(FixRequest(id=pending["id"], index=0, value=3), access, hub),
        )
        sent = [asyncio.create_task(answer) for answer in answers]
        release.set()
        await freeing
        for task in sent:
            with pytest.raises(Rejection) as refused:
                await task
            assert refused.value.rule == "seat_freed"
        assert table.snapshot.state_id == 0  # no throw applied
        still = (await hub.status_json(table))["pending"]
        assert still is not None and still["id"] == pending["id"]  # the host still answers

    with_qwixx_table(tmp_path, body)


@pytest.mark.parametrize("answer", ["confirm", "fix"])
def test_a_seat_freed_between_the_answer_s_check_and_its_roll_marks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    """The hub read the answering device again under the table's lock, let the lock go,
    and then handed the roll to the table, which took the lock again: a free of the seat
    landing in between (here made to, by a hook on the table's throw) had the freed
    device's confirm or fix apply the throw, the table's refusal of nothing. The table
    now checks the device where it applies the roll, under the one lock: 403
    `seat_freed`, nothing applied, and the question stays for the host."""

    async def body(tables: Tables, table: Table) -> None:
        hub = CameraHub(CameraSettings(disabled=True), tables, move_words)
        await hub.feed.set_mode(table.table_id, "confirm" if answer == "confirm" else "sure")
        token = await table.add_device(host=False)
        await table.take_seat(token, 0)  # Ann's, the active player's
        viewer = table.viewer(token)
        assert viewer is not None
        await hub.on_throw(qwixx_event())
        pending = (await hub.status_json(table))["pending"]
        assert pending is not None and pending["kind"] == answer.replace("fix", "unsure")
        apply_throw = table.act_throw

        async def freed_first(*args: Any, **kwargs: Any) -> Any:
            await table.free_seat(0)  # the host's free lands after every earlier check
            return await apply_throw(*args, **kwargs)

        monkeypatch.setattr(table, "act_throw", freed_first)
        with pytest.raises(Rejection) as refused:
            if answer == "confirm":
                await hub.confirm(table, pending["id"], device=viewer, token=token)
            else:
                for die in pending["unsure"]:
                    await hub.fix(
                        table, pending["id"], die["index"], 3, None, False,
                        device=viewer, token=token,
                    )  # fmt: skip
        assert refused.value.rule == "seat_freed"
        assert table.snapshot.state_id == 0  # no throw applied
        still = (await hub.status_json(table))["pending"]
        assert still is not None and still["id"] == pending["id"]  # the host still answers

    with_qwixx_table(tmp_path, body)
