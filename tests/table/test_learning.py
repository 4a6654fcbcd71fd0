"""The server's learning setups (companion/table/learning.py, routes/setups.py) with real
parts: the shipped classifier, SQLite and PNG files in a temporary data folder, a real
uvicorn server whose camera replays a rendered Qwixx throw, httpx from this machine.

A table without a setup (no calibration, or dice entered by hand) stores nothing; an
applied roll is stored in a worker thread and the heads refreshed after it; the teaching
round stores what the person confirmed; the host deletes and keeps dice; a player's
device may not."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from companion.rules.registry import find_game, standard_dice_sets
from companion.table import camera_hub
from companion.table.camera_feed import dice_set_for, throws_calibrated_set
from companion.table.camera_hub import new_table_line
from companion.table.camera_runtime import CameraRuntime
from companion.table.camera_settings import CameraSettings
from companion.table.learning import Learning, LearntReader, confirmed_dice, rolls_words
from companion.vision.adapt import Adaptation
from companion.vision.adapt_files import ADAPTED_DIR
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import (
    STORE_FILE,
    NewExample,
    SetupStore,
    StoredExample,
)
from companion.vision.calibration import TableCalibration, save_calibration
from companion.vision.classifier import PipClassifier
from companion.vision.colour import DiceSet, SetDie, builtin_dice_set
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieBox, DieReading
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.live.replay import SEEN_FROM, ClipReader, LiveServer, write_throw
from tests.waiting import wait_until
from tests.web.conftest import free_port
from tests.web.helpers import QWIXX_ROLL_7, act, create_table
from tests.web.setups import QWIXX, calibrated_camera, rest_of


class ThreadNotingStore(SetupStore):
    """The real store, noting the thread each write ran on."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.threads: list[int] = []

    def add(self, setup: str, examples: Sequence[NewExample]) -> list[int]:
        self.threads.append(threading.get_ident())
        return super().add(setup, examples)

    def add_outcome(self, setup: str, at: float, without_tap: bool) -> None:
        self.threads.append(threading.get_ident())
        super().add_outcome(setup, at, without_tap)


def test_a_roll_without_a_setup_stores_nothing(tmp_path: Path) -> None:
    image, dice, _ = rest_of(1501)
    learning = Learning(tmp_path)

    async def main() -> list[int]:
        return await learning.roll_applied(None, image, dice, tapped=False)

    assert asyncio.run(main()) == []
    assert learning.store.setups() == {}
    assert not (tmp_path / "setups").exists()


def test_a_table_with_dice_entered_by_hand_stores_nothing(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with TestClient(create_app(settings)) as client:
        table = create_table(client, "qwixx", ["Ann", "Bob"], {"players": 2})
        answer = act(client, table["table_id"], QWIXX_ROLL_7, "by-hand-1")
        assert answer.status_code == 200, answer.text
        assert client.app.state.learning.store.setups() == {}  # type: ignore[attr-defined]
    assert not (tmp_path / "data" / "setups").exists()


def test_an_applied_roll_is_stored_off_the_loop_and_refreshes_the_heads(tmp_path: Path) -> None:
    learning = Learning(tmp_path)
    store = ThreadNotingStore(tmp_path)
    learning.store = store
    refreshed: list[Adaptation] = []
    learning.listeners.append(lambda setup, adaptation: refreshed.append(adaptation))
    image, dice, _ = rest_of(1502)

    async def main() -> tuple[list[int], int]:
        loop_thread = threading.get_ident()
        ids = await learning.roll_applied("kitchen", image, dice, tapped=False, table_id="t1")
        await learning.roll_applied("kitchen", image, dice, tapped=True, by_host=True)
        await asyncio.to_thread(
            wait_until, lambda: learning.idle("kitchen"), 120, "the learning idle"
        )
        return ids, loop_thread

    ids, loop_thread = asyncio.run(main())
    assert len(ids) == 6
    assert store.threads and loop_thread not in store.threads
    assert refreshed and refreshed[-1].used + len(refreshed[-1].held) == 12
    stored = store.examples("kitchen")
    assert [s.source for s in stored] == ["read"] * 6 + ["corrected"] * 6
    assert [s.table_id for s in stored[:6]] == ["t1"] * 6
    assert learning.share_without_tap("kitchen") == (2, 0.5)
    # a restart keeps the hour's rolls (they were stored with the dice)
    assert Learning(tmp_path).share_without_tap("kitchen") == (2, 0.5)
    assert learning.share_without_tap("kitchen", now=1e12) == (0, 0.0)  # an hour later


def test_forgetting_a_setup_forgets_its_hour_of_rolls_across_a_restart(tmp_path: Path) -> None:
    learning = Learning(tmp_path)
    image, dice, _ = rest_of(1502)

    async def main() -> None:
        await learning.roll_applied("kitchen", image, dice, tapped=False)
        await learning.roll_applied("hall", image, dice, tapped=True)
        await asyncio.to_thread(
            wait_until,
            lambda: learning.idle("kitchen") and learning.idle("hall"),
            120,
            "the learning idle",
        )
        await learning.delete_setup("kitchen")
        await asyncio.to_thread(
            wait_until, lambda: learning.idle("kitchen"), 120, "the learning idle"
        )

    asyncio.run(main())
    learning.close()
    again = Learning(tmp_path)
    assert again.share_without_tap("kitchen") == (0, 0.0)
    assert again.share_without_tap("hall") == (1, 0.0)


def test_a_die_the_host_added_is_stored_as_added() -> None:
    box = DieBox(10, 10, 20, 20)
    dice = (DieReading(box, 3, 1.0, "red", flags=("added",)), DieReading(box, 4, 0.9, "blue"))
    assert [d.source for d in confirmed_dice(dice, by_host=True)] == ["added", "corrected"]
    assert [d.source for d in confirmed_dice(dice, by_host=False)] == ["added", "read"]


@pytest.fixture
def camera_server(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    with calibrated_camera(tmp_path) as server:
        yield server, server.base_url


def test_the_teaching_round_stores_what_the_person_confirmed(
    camera_server: tuple[LiveServer, str],
) -> None:
    server, base = camera_server
    with httpx.Client(base_url=base, timeout=30) as client:
        taken = client.post("/api/setups/kitchen/teach/snapshot")
        assert taken.status_code == 200, taken.text
        dice = taken.json()["dice"]
        assert len(dice) == 6
        picture = client.get(dice[0]["crop"])
        assert picture.status_code == 200 and picture.content[:4] == b"\x89PNG"
        values = [d["value"] for d in dice]
        values[0] = values[0] % 6 + 1  # the person corrects the first die
        wrong = client.post(
            "/api/setups/kitchen/teach", json={"token": taken.json()["token"], "values": values[:3]}
        )
        assert wrong.status_code == 422 and wrong.json()["rule"] == "values"
        stored = client.post(
            "/api/setups/kitchen/teach", json={"token": taken.json()["token"], "values": values}
        )
        assert stored.status_code == 200, stored.text
        assert len(stored.json()["stored"]) == 6
        again = client.post(
            "/api/setups/kitchen/teach", json={"token": taken.json()["token"], "values": values}
        )
        assert again.status_code == 409  # a snapshot is used once

        learning = server.app.state.learning
        wait_until(lambda: learning.idle("kitchen"), what="the refresh after teaching")
        state = client.get("/api/setups/kitchen").json()
        assert state["summary"]["stored"] == 6
        assert sorted(e["source"] for e in state["examples"]) == ["corrected"] + ["taught"] * 5
        assert state["summary"]["set_colours"] == list(QWIXX)
        assert sum(state["summary"]["set_dice"]) + len(state["summary"]["held"]) == 6
        first = state["examples"][0]
        assert client.get(first["crop"]).status_code == 200


def test_a_setup_of_a_shipped_set_not_in_use_names_its_dice(
    camera_server: tuple[LiveServer, str],
) -> None:
    """The setup "qwixx" learns while the shipped qwixx-default.json is in use; looked at
    while the camera uses another calibration, its page said it had no dice set."""
    with httpx.Client(base_url=camera_server[1], timeout=30) as client:
        state = client.get("/api/setups/qwixx")
        assert state.status_code == 200, state.text
        assert state.json()["summary"]["set_colours"] == list(QWIXX)


def test_the_host_deletes_and_keeps_dice_and_forgets_the_setup(
    camera_server: tuple[LiveServer, str], tmp_path: Path
) -> None:
    server, base = camera_server
    with httpx.Client(base_url=base, timeout=30) as client:
        taken = client.post("/api/setups/kitchen/teach/snapshot").json()
        values = [d["value"] for d in taken["dice"]]
        ids = client.post(
            "/api/setups/kitchen/teach", json={"token": taken["token"], "values": values}
        ).json()["stored"]
        assert client.delete(f"/api/setups/kitchen/examples/{ids[0]}").status_code == 200
        assert client.delete(f"/api/setups/kitchen/examples/{ids[0]}").status_code == 404
        assert client.post(f"/api/setups/kitchen/examples/{ids[1]}/keep").status_code == 200
        state = client.get("/api/setups/kitchen").json()
        assert [e["id"] for e in state["examples"]] == ids[1:]
        assert state["examples"][0]["kept_by_host"] is True
        crops = tmp_path / "data" / "setups" / "kitchen"
        assert len(list(crops.glob("*.png"))) == 5
        foreign = client.delete("/api/setups/kitchen", headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        # as if the finder had been judged on the setup's photos (it is from 5 on)
        learning = server.app.state.learning
        learning._finder_verdicts["kitchen"] = {"adopted": False, "reason": "no_gain"}
        assert client.delete("/api/setups/kitchen").json() == {"deleted": 5}
        assert not crops.exists()
        assert learning.status("kitchen")["finder_verdict"] is None  # it went with the dice
        assert client.get("/api/setups/kitchen").json()["examples"] == []
        assert client.get("/api/setups/..%2Fetc").status_code in (404, 422)


def table_the_camera_follows(server: LiveServer, host: httpx.Client) -> dict[str, Any]:
    """A new Qwixx table of `host`'s, once the camera follows it."""
    table: dict[str, Any] = host.post(
        "/api/tables",
        json={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
    ).json()
    wait_until(
        lambda: server.hub.feed.attached_to(table["table_id"]),
        what="the camera following the new table",
    )
    return table


def test_a_table_host_sees_the_camera_setup_and_a_player_does_not(
    camera_server: tuple[LiveServer, str],
) -> None:
    server, base = camera_server
    with (
        httpx.Client(base_url=base, timeout=30) as host,
        httpx.Client(base_url=base, timeout=30) as player,
    ):
        table = table_the_camera_follows(server, host)
        table_id = table["table_id"]
        answer = host.get(f"/api/tables/{table_id}/setup")
        assert answer.status_code == 200, answer.text
        assert answer.json()["summary"]["setup"] == "kitchen"
        page = host.get(f"/t/{table_id}/setup", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "kitchen" in page.text
        # on the server machine the page links to the setup's own, where it is forgotten
        assert 'href="/setups/kitchen"' in page.text
        assert player.post("/api/join", json={"code": table["code"]}).status_code == 200
        refused = player.get(f"/api/tables/{table_id}/setup")
        assert refused.status_code == 403 and refused.json()["rule"] == "host_only"


def test_a_table_host_changes_only_the_dice_confirmed_at_that_table(
    camera_server: tuple[LiveServer, str], tmp_path: Path
) -> None:
    """The setup is the camera's, shared by every table it served, and anyone may start a
    table: a table's host deletes or keeps only its own table's dice (the security trial
    deleted a setup's whole store from a table of its own)."""
    server, base = camera_server
    with httpx.Client(base_url=base, timeout=30) as host:
        table = table_the_camera_follows(server, host)
        table_id = table["table_id"]
        taken = host.post("/api/setups/kitchen/teach/snapshot").json()  # on the server machine
        values = [d["value"] for d in taken["dice"]]
        ids = host.post(
            "/api/setups/kitchen/teach", json={"token": taken["token"], "values": values}
        ).json()["stored"]
        # as if the first die had been confirmed in a camera roll at this table
        with sqlite3.connect(tmp_path / "data" / STORE_FILE) as db:
            db.execute("UPDATE examples SET table_id = ? WHERE example_id = ?", (table_id, ids[0]))
        api = f"/api/tables/{table_id}/setup"
        editable = {e["id"]: e["editable"] for e in host.get(api).json()["examples"]}
        assert editable == {ids[0]: True, **{k: False for k in ids[1:]}}
        for refused in (
            host.delete(f"{api}/examples/{ids[1]}"),
            host.post(f"{api}/examples/{ids[1]}/keep"),
        ):
            assert refused.status_code == 403, refused.text
            assert refused.json()["rule"] == "another_tables_die"
        assert host.delete(f"{api}/examples/{ids[0]}").status_code == 200
        assert host.delete(f"{api}/examples/{ids[0]}").status_code == 404
        left = [e["id"] for e in host.get("/api/setups/kitchen").json()["examples"]]
        assert left == ids[1:]


def test_a_tables_forget_keeps_the_hours_rolls_and_they_read_as_every_tables(
    tmp_path: Path,
) -> None:
    """The host's "What the camera learnt" said "2 camera rolls in the last hour, 50 %
    without a tap" beside "Forget what the camera learnt", and the camera panel of a table
    "50 % of the last hour's 2 camera rolls": read as this table's, though counted per
    setup, and a table's Forget left it as it was. The rolls were played, so the count
    stays; its words, on both, say it is the setup's, every game's."""
    learning = Learning(tmp_path)
    image, dice, _ = rest_of(1502)

    async def two_rolls_then_forget() -> int:
        await learning.roll_applied("kitchen", image, dice, tapped=False, table_id="t1")
        await learning.roll_applied("kitchen", image, dice, tapped=True, table_id="t2")
        await asyncio.to_thread(
            wait_until, lambda: learning.idle("kitchen"), 120, "the learning idle"
        )
        return await learning.forget_table("kitchen", "t1")

    assert asyncio.run(two_rolls_then_forget()) == 6
    status = learning.status("kitchen")
    assert status is not None and status["rolls_last_hour"] == 2
    assert status["rolls_words"] == (
        "50 % of the last hour's 2 camera rolls with this camera setup (every game's) went in "
        "without a tap"
    )
    assert rolls_words(0, 0.0) == (
        "no camera roll with this camera setup in the last hour, in any game"
    )


def test_a_strangers_own_table_forgets_nothing_the_camera_learnt_elsewhere(
    camera_server: tuple[LiveServer, str],
) -> None:
    """Anyone on the network may start a table, and between games the camera follows the
    newest one: a stranger with no join code could start a table of their own and, as
    its host, forget every die of the setup (the security probe of 2026-12-07). A
    table's host forgets only the dice confirmed at that table: here none, and the dice
    taught on the server machine stay."""
    server, base = camera_server
    with (
        httpx.Client(base_url=base, timeout=30) as machine,
        httpx.Client(base_url=base, timeout=30, headers={SEEN_FROM: "192.168.1.66"}) as stranger,
    ):
        taken = machine.post("/api/setups/kitchen/teach/snapshot").json()
        values = [d["value"] for d in taken["dice"]]
        ids = machine.post(
            "/api/setups/kitchen/teach", json={"token": taken["token"], "values": values}
        ).json()["stored"]
        assert ids
        own = table_the_camera_follows(server, stranger)["table_id"]
        answer = stranger.delete(f"/api/tables/{own}/setup")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"deleted": 0, "kept": len(ids)}
        page = stranger.get(f"/api/tables/{own}/setup").json()  # the host's page beside it
        assert page["rolls_words"] == rolls_words(0, 0.0)
        kept = [e["id"] for e in machine.get("/api/setups/kitchen").json()["examples"]]
        assert kept == ids


def kitchen_camera(tmp_path: Path) -> tuple[DiceSet, CameraRuntime, DiceReader, Learning]:
    """A camera calibrated for setup "kitchen" (Qwixx dice) reading with the shipped
    pipeline, and a Learning attached to it."""
    kitchen = dataclasses.replace(builtin_dice_set("qwixx"), name="kitchen")
    runtime = CameraRuntime(CameraSettings(disabled=True), None)
    base = DiceReader.load()
    runtime.reader.reader = base
    runtime.set_calibration(TableCalibration(kitchen))
    learning = Learning(tmp_path)
    learning.attach_camera(runtime)
    return kitchen, runtime, base, learning


def test_a_refresh_puts_the_setup_heads_in_the_camera(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the real pipeline as the camera's reader: the dice are embedded with the
    camera's own classifier, and after a refresh the camera reads with a LearntReader
    (the setup's heads, the setup's own colours for its calibrated set), built on the
    camera's DiceReader again at the next refresh, never on the previous LearntReader."""
    caplog.set_level(logging.INFO, logger="companion.table.learning")
    kitchen, runtime, base, learning = kitchen_camera(tmp_path)
    image, dice, _ = rest_of(1504)

    async def teach_once() -> None:
        await learning.roll_applied("kitchen", image, dice, tapped=False, dice_set=kitchen)
        await asyncio.to_thread(
            wait_until, lambda: learning.idle("kitchen"), 120, "the learning idle"
        )

    asyncio.run(teach_once())
    assert learning.classifier() is base.classifier
    learnt = runtime.reader.reader
    assert isinstance(learnt, LearntReader) and learnt.base is base
    assert learnt.adaptation.used + len(learnt.adaptation.held) == 6
    runtime.reader.use_dice_set(kitchen)  # what the feed does for a Qwixx table
    assert learnt.dice_set is kitchen
    own = learnt.adaptation.dice_set
    assert own is not None and own.colours == kitchen.colours and own.dice != kitchen.dice
    reading = runtime.reader.read(image)
    assert len(reading.dice) == 6 and reading.dice_set == "kitchen"

    asyncio.run(teach_once())
    again = runtime.reader.reader
    assert isinstance(again, LearntReader) and again is not learnt and again.base is base
    assert learning.status("kitchen") == {
        "setup": "kitchen",
        "learnt": again.adaptation.used,
        "verdict": again.adaptation.head.gate.to_json(),  # the fold check's, for the panel
        "finder_verdict": None,  # two photos: the finder is judged from five on
        "deep_verdict": None,  # no fine-tuning asked for (`companion serve --fine-tune`)
        # the camera line's words, with the fold check's reason
        "reads": "reads with the models it came with: " + again.adaptation.head.gate.reason_words,
        "reads_details": [again.adaptation.head.gate.words()],  # the tooltip, a line each
        "rolls_last_hour": 2,
        "share_without_tap": 1.0,
        "rolls_words": "100 % of the last hour's 2 camera rolls with this camera setup "
        "(every game's) went in without a tap",
    }
    # the shipped classifier reads these dice right: nothing to gain, the shipped head reads
    assert not again.adaptation.head.gate.adopted and not again.adaptation.head.active
    # and the server's log says so, as the camera line does (not "reads with its heads")
    said = [
        r.getMessage() for r in caplog.records if "camera reads setup kitchen" in r.getMessage()
    ]
    assert said and said[-1].endswith(
        ": reads with the models it came with: " + again.adaptation.head.gate.reason_words
    )


def test_the_setup_heads_read_only_the_setups_dice(tmp_path: Path) -> None:
    """A Sixto table at a camera calibrated for Qwixx dice: the camera reads its dice with
    the shipped models (another set's dice; the setup's heads are for its own), and with
    the heads again once a Qwixx table's set is back; a refresh keeps the set in use."""
    kitchen, runtime, base, learning = kitchen_camera(tmp_path)
    image, dice, _ = rest_of(1506)
    runtime.reader.use_dice_set(kitchen)

    async def teach_once() -> None:
        await learning.roll_applied("kitchen", image, dice, tapped=False, dice_set=kitchen)
        await asyncio.to_thread(
            wait_until, lambda: learning.idle("kitchen"), 120, "the learning idle"
        )

    asyncio.run(teach_once())
    learnt = runtime.reader.reader
    assert isinstance(learnt, LearntReader) and learnt.dice_set is kitchen and learnt.learnt
    sixto = builtin_dice_set("sixto")
    runtime.reader.use_dice_set(sixto)
    assert not learnt.learnt
    shipped = DiceReader(base.finder, base.classifier, sixto).read(image)
    reading = runtime.reader.read(image)
    assert reading.dice_set == sixto.name == shipped.dice_set
    assert [d.value for d in reading.dice] == [d.value for d in shipped.dice]
    runtime.reader.use_dice_set(None)  # a game whose dice change (Sixis, Sixmix)
    assert not learnt.learnt
    runtime.reader.use_dice_set(kitchen)
    assert learnt.learnt and runtime.reader.read(image).dice_set == "kitchen"

    runtime.reader.use_dice_set(sixto)
    asyncio.run(teach_once())  # a refresh while the Sixto table has the camera
    again = runtime.reader.reader
    assert isinstance(again, LearntReader) and again is not learnt
    assert again.dice_set is sixto and not again.learnt


def test_the_camera_follows_a_new_table_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new table is fed at once, not at the follower's next look-up (here an hour
    away): its first throw is read with its own dice set (a trial's first question at a
    new table named the dice by the last table's colours).

    The follower's look-up names the new table (`attached_to`), then puts its dice set in
    the reader, in one step of the server's loop: nothing on the loop (a throw, a page)
    sees one without the other, but this test's thread may look between the two, so it
    waits for both."""
    monkeypatch.setattr(camera_hub, "TARGET_REFRESH_S", 3600.0)
    with (
        calibrated_camera(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=30) as host,
    ):
        for game in ("qwixx", "sixto"):
            created = host.post("/api/tables", json={"game": game, "players": ["Ann", "Bob"]})
            table_id = created.json()["table_id"]
            wait_until(
                lambda: follows_with_its_dice(server, table_id, game),  # noqa: B023
                what=f"the camera following the new {game} table, with its dice set",
            )


def follows_with_its_dice(server: LiveServer, table_id: str, game: str) -> bool:
    """Whether the camera feeds `table_id` and its reader reads with the colours of
    `game`'s standard set."""
    if not server.hub.feed.attached_to(table_id):
        return False
    reader = server.hub.runtime.reader.reader
    dice_set = reader.dice_set if reader is not None else None
    colours = sorted(builtin_dice_set(game).colours)
    return dice_set is not None and sorted(dice_set.colours) == colours


def test_a_reader_put_in_place_reads_with_the_dice_set_of_the_table_fed() -> None:
    """The feed's look-up puts the fed table's dice set in the camera's reader. A reader
    put in place after it (the models loading after the look-up at start-up, the models a
    camera restart puts back, a setup's heads put in place or taken away) reads with that
    set from its first frame, not with the set it had (none, or the table's before) until
    the next look-up, a second later: a throw at rest may be read by then."""
    sixto, qwixx = builtin_dice_set("sixto"), builtin_dice_set("qwixx")
    models = ClipReader()
    runtime = CameraRuntime(CameraSettings(disabled=True), lambda: models)
    runtime.reader.use_dice_set(sixto)  # the feed's look-up while the models still load
    runtime._load_models()  # what the camera's starter thread does next
    assert models.dice_set is sixto
    base = ClipReader()
    base.dice_set = qwixx  # last told at a Qwixx table (the reader under a setup's heads)
    runtime.reader.reader = base  # the heads taken away
    assert base.dice_set is sixto
    runtime.reader.use_dice_set(None)  # a game whose dice change (Sixis): no fixed set
    runtime.reader.reader = models
    assert models.dice_set is None and base.dice_set is None

    fresh = CameraRuntime(CameraSettings(disabled=True), None)
    own = ClipReader()
    own.dice_set = qwixx
    fresh.reader.reader = own  # before any look-up: the reader keeps its own set
    assert own.dice_set is qwixx


def test_only_a_table_throwing_the_calibrated_dice_teaches_the_setup(
    camera_server: tuple[LiveServer, str],
) -> None:
    """The camera is calibrated for setup "kitchen" (Qwixx dice): a Qwixx table teaches it
    and its camera line says what it learnt; a Sixto table's rolls teach nothing (its
    dice are not kitchen's) and its line says so."""
    server, base = camera_server
    with httpx.Client(base_url=base, timeout=30) as host:
        assert 'id="camera-line"' not in host.get("/").text  # it serves no table yet
        for game, teaches in (("qwixx", True), ("sixto", False)):
            table = host.post(
                "/api/tables",
                json={"game": game, "players": ["Ann", "Bob"], "options": {"players": 2}},
            ).json()
            table_id = table["table_id"]
            wait_until(
                lambda: server.hub.feed.attached_to(table_id),  # noqa: B023
                what=f"the camera following the new {game} table",
            )
            learning = host.get(f"/api/tables/{table_id}/camera").json()["learning"]
            assert learning["teaches"] is teaches
            if teaches:
                assert learning["setup"] == "kitchen" and "why" not in learning
                qwixx = table_id
                # the start page says, before a second table is started, what it does
                assert "The camera serves Qwixx: Ann, Bob. A new table takes it" in (
                    host.get("/").text
                )
            else:
                assert learning["why"].startswith("The camera learns kitchen's dice, not this")
        # the Qwixx table lost the camera to the newer Sixto table: its camera line says so
        # (camera.js: "The camera watches another table."), once: the note that told of
        # the move ("the camera now serves another table") is not said beside it
        status = host.get(f"/api/tables/{qwixx}/camera").json()
        assert status["attached"] is False and status["note"] == ""
        assert server.hub.intake.note_of(qwixx).text == "the camera now serves another table"
        # its host takes it back: the note says so, and the Sixto table says where it went
        assert host.post(f"/api/tables/{qwixx}/camera/attach").status_code == 200
        assert host.get(f"/api/tables/{qwixx}/camera").json()["note"] == (
            "the camera serves this table again"
        )
        assert "The camera stays with Qwixx: Ann, Bob: it was chosen for that game" in (
            host.get("/").text
        )
        status = host.get(f"/api/tables/{table_id}/camera").json()
        assert status["attached"] is False and status["note"] == ""


@pytest.mark.parametrize(
    ("game", "why"),
    [
        ("sixis", "The camera is not learning: the dice of Sixis are not one fixed set"),
        # Sixes throws two white dice every roll: a set of its own, not kitchen's
        ("sixes", "The camera learns kitchen's dice, not this table's"),
    ],
)
def test_a_game_without_the_calibrated_set_says_why_it_teaches_nothing(
    camera_server: tuple[LiveServer, str], game: str, why: str
) -> None:
    server, base = camera_server
    with httpx.Client(base_url=base, timeout=30) as host:
        created = host.post("/api/tables", json={"game": game, "players": ["Ann", "Bob", "Cy"]})
        assert created.status_code == 201, created.text
        table_id = created.json()["table_id"]
        wait_until(lambda: server.hub.feed.attached_to(table_id), what="the camera following")
        learning = host.get(f"/api/tables/{table_id}/camera").json()["learning"]
    assert learning["teaches"] is False
    assert learning["why"].startswith(why)


def test_sixes_dice_are_a_set_a_camera_calibrates_for_and_teaches() -> None:
    """Sixes declares its two dice, so a camera calibrated for them ("sixes", or a set
    named by the host) teaches that setup; at a camera calibrated for Qwixx's six the two
    whites are read with the whites that calibration measured, not a typical white."""
    sixes = find_game("sixes")
    options = sixes.options_for(3)
    pair = TableCalibration(
        DiceSet("pair", (SetDie("white", (88.0, 1.0, 4.0)),) * 2, "measured here")
    )
    assert throws_calibrated_set(sixes.dice_colours(options), pair)
    assert dice_set_for(sixes, options, pair) == pair.dice_set
    kitchen = TableCalibration(
        DiceSet(
            "kitchen",
            (
                SetDie("white", (86.0, 2.0, 6.0)),
                SetDie("white", (87.0, 2.0, 6.0)),
                SetDie("red", (40.0, 50.0, 30.0)),
            ),
        )
    )
    assert not throws_calibrated_set(sixes.dice_colours(options), kitchen)
    measured = dice_set_for(sixes, options, kitchen)
    assert measured is not None and measured.dice == kitchen.dice_set.dice[:2]
    # a pair of colours the calibration lacks: each colour's shipped or typical look
    red_blue = sixes.parse_options({"players": 3, "dice": ["red", "blue"]})
    other = dice_set_for(sixes, red_blue, kitchen)
    assert other is not None and other.colours == ("red", "blue")
    assert other.dice[0] != kitchen.dice_set.dice[2]
    assert "sixes" in standard_dice_sets()


def test_the_start_page_names_only_a_table_this_browser_may_see() -> None:
    """A device that has not joined the table the camera serves learns only that a game
    is in progress, not its players."""
    visible = {"t1": "Qwixx: Ann, Bob"}
    assert new_table_line(None, None, visible) is None
    assert new_table_line("t1", None, visible) == (
        "The camera serves Qwixx: Ann, Bob. A new table takes it; that table's \"Use the "
        'camera at this table" button takes it back.'
    )
    assert new_table_line("t2", "attached", visible) == (
        "The camera stays with a game in progress: it was chosen for that game. A new table "
        "gets it when that game ends or has had no device connected and no action for 10 "
        'minutes, or from "Use the camera here" beside a game on this page, on the computer '
        "running the companion."
    )
    playing = new_table_line("t1", "playing", visible)
    assert playing is not None
    assert playing.startswith("The camera stays with Qwixx: Ann, Bob while that game plays on.")
    assert playing.endswith(
        '"Use the camera here" beside a game on this page, on the computer running the companion.'
    )


# -- a taught setup whose head the fold check adopts (tests/fixtures/adapt) -------------------
MOSAIC = Path(__file__).resolve().parents[1] / "fixtures" / "adapt"
CELL, COLUMNS = 48, 16  # tests/vision/test_adapt_gate.py's mosaic


def teach_mosaic(learner: SetupLearner) -> list[int]:
    """The even cells of the fixture mosaic confirmed with their right values, one photo
    each: a setup whose ringed ones classifier 1.4 misreads and whose head is adopted."""
    image = cv2.imread(str(MOSAIC / "tomitomi_validation.png"), cv2.IMREAD_COLOR)
    assert image is not None
    with open(MOSAIC / "labels.csv", newline="", encoding="utf-8") as handle:
        values = [int(row["value"]) for row in csv.DictReader(handle)]
    side = CELL / learner.classifier.margin
    ids: list[int] = []
    for k in range(0, len(values), 2):
        box = DieBox((k % COLUMNS) * CELL + CELL / 2, (k // COLUMNS) * CELL + CELL / 2, side, side)
        ids += learner.record(image, [ConfirmedDie(box, values[k])], photo=f"cell {k}")
    return ids


def test_after_a_restart_the_camera_reads_the_saved_head_before_any_refresh(
    tmp_path: Path,
) -> None:
    """The app's own path (create_app's lifespan: Learning.attach_camera, the configured
    calibration set, the camera's models loaded by its start thread): a setup adopted
    before the restart reads with its saved head and shows its verdict on the camera
    panel at once, with no refresh (none asked for, none run)."""
    data = tmp_path / "data"
    before = SetupLearner(SetupStore(data), "kitchen", PipClassifier.load())
    teach_mosaic(before)
    head = before.refresh().head
    assert head.gate.adopted and head.delta is not None
    before.store.close()

    folder, calibrations = tmp_path / "camera", tmp_path / "calibration"
    kitchen = dataclasses.replace(builtin_dice_set("qwixx"), name="kitchen")
    path = save_calibration(TableCalibration(kitchen), calibrations / "kitchen.json")
    write_throw(folder, rest_of(1505)[2])
    camera = CameraSettings(images=folder, calibration=path, calibration_dir=calibrations)
    settings = Settings(port=free_port(), data_dir=data, camera=camera)
    with LiveServer(settings, DiceReader.load) as server:
        runtime = server.hub.runtime
        learning = server.app.state.learning
        learnt = wait_until(
            lambda: isinstance(runtime.reader.reader, LearntReader) and runtime.reader.reader,
            timeout=120,
            what="the camera reading with the saved head",
        )
        assert learnt.setup == "kitchen" and learnt.adaptation.head.active
        assert learnt.adaptation.head.delta is not None
        assert np.array_equal(learnt.adaptation.head.delta.weights, head.delta.weights)
        assert isinstance(learnt.base, DiceReader)
        assert learning.learner("kitchen").adaptation is None  # read as saved: no refit
        assert learning.idle("kitchen")

        async def panel() -> dict[str, object] | None:  # the camera panel's first look
            return learning.status("kitchen")  # type: ignore[no-any-return]

        status = asyncio.run_coroutine_threadsafe(panel(), runtime.loop).result(30)
        assert status is not None and status["verdict"] == head.gate.to_json()


class HoldingStore(SetupStore):
    """The real store; a refresh's read of the dice can be held (inside the learner's
    lock) until the test lets it go, and the start of a delete_setup is noted."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.hold = False
        self.inside = threading.Event()
        self.go = threading.Event()
        self.deleting = threading.Event()

    def examples(self, setup: str) -> list[StoredExample]:
        rows = super().examples(setup)
        if self.hold:
            self.hold = False
            self.inside.set()
            assert self.go.wait(120)
        return rows

    def delete_setup(self, setup: str) -> int:
        self.deleting.set()
        return super().delete_setup(setup)


class NotingLock:
    """A real re-entrant lock that notes the threads that ask for it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.asked: list[str] = []

    def __enter__(self) -> NotingLock:
        self.asked.append(threading.current_thread().name)
        self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_forgetting_a_setup_while_a_refresh_runs_leaves_no_head(tmp_path: Path) -> None:
    """A refresh that read the dice before the host forgot the setup must not write the
    head back after it: the forget waits for the refresh (the learner's lock), then
    deletes the dice and the head; the shipped reader reads."""
    learning = Learning(tmp_path)
    store = HoldingStore(tmp_path)
    learning.store = store
    learner = learning.learner("kitchen")
    lock = NotingLock()
    learner._lock = lock  # type: ignore[assignment]
    teach_mosaic(learner)
    store.hold = True
    refresh = threading.Thread(target=learner.refresh, name="refresh")
    refresh.start()
    wait_until(store.inside.is_set, timeout=120, what="the refresh reading the dice")
    forget = threading.Thread(
        target=lambda: asyncio.run(learning.delete_setup("kitchen")), name="forget"
    )
    forget.start()
    wait_until(
        lambda: store.deleting.is_set() or set(lock.asked) - {"MainThread", "refresh"},
        timeout=120,
        what="the forget asking for the lock or deleting",
    )
    store.go.set()
    refresh.join(120)
    forget.join(120)
    assert not refresh.is_alive() and not forget.is_alive()
    assert store.examples("kitchen") == []
    assert not (learner.folder / ADAPTED_DIR).exists()
    assert learner.saved() is None


def test_a_setup_whose_dice_are_all_deleted_reads_with_the_shipped_head(tmp_path: Path) -> None:
    """Deleting a setup's dice one by one down to none removes its adopted head."""
    learning = Learning(tmp_path)
    learner = learning.learner("kitchen")
    ids = teach_mosaic(learner)
    assert learner.refresh().head.active and learner.saved() is not None
    for example_id in ids[:-1]:
        assert learning.store.delete_example("kitchen", example_id)

    async def last() -> bool:
        return await learning.delete_example("kitchen", ids[-1])

    assert asyncio.run(last())
    assert learner.adaptation is not None and not learner.adaptation.head.active
    assert not (learner.folder / ADAPTED_DIR).exists() and learner.saved() is None


def test_rolls_of_two_tables_with_the_same_throw_number_are_two_photos(tmp_path: Path) -> None:
    """The live side stores each roll under its table and throw; a roll stored by an
    older version as "roll N" counts as its table's roll N."""
    learning = Learning(tmp_path)
    image, dice, _ = rest_of(1506)

    async def main() -> None:
        for table in ("t1", "t2"):
            learning.roll_applied_soon(
                "kitchen", image, dice, tapped=False, by_host=False, table_id=table, throw=1
            )
        await asyncio.to_thread(
            wait_until,
            lambda: len(learning.store.examples("kitchen")) == 12,
            120,
            "both rolls stored",
        )
        await asyncio.to_thread(wait_until, lambda: learning.idle("kitchen"), 120, "refreshed")

    asyncio.run(main())
    learner = learning.learner("kitchen")
    learner.record(image, confirmed_dice(dice, False), table_id="t3", photo="roll 1", throw=1)
    # the two live rolls are stored by background work, in either order
    photos = sorted(str(s.example.photo) for s in learning.store.examples("kitchen"))
    assert photos == ["table t1 roll 1"] * 6 + ["table t2 roll 1"] * 6 + ["table t3 roll 1"] * 6
    # the finder learns from the same photos, kept whole under the same keys with their dice
    kept = sorted((p.photo, len(p.dice)) for p in learning.store.photos("kitchen"))
    assert kept == [("table t1 roll 1", 6), ("table t2 roll 1", 6), ("table t3 roll 1", 6)]


def test_when_the_camera_reads_with_other_models_the_setups_learn_on_those(
    tmp_path: Path,
) -> None:
    """A learner made while the camera read with one classifier (here: the shipped one,
    as before the camera's own models load) is forgotten when the camera turns out to
    read with another (a committed training candidate, of another sha256): the dice are
    embedded with the camera's classifier from then on, not with the first one loaded."""
    repo = Path(__file__).resolve().parents[2]
    candidate = repo / "models/training/stage19-lite-classifier/classifier/candidate"
    _, runtime, shipped, learning = kitchen_camera(tmp_path)
    first = learning.learner("kitchen")
    assert first.classifier is shipped.classifier

    other = DiceReader(shipped.finder, PipClassifier.load(candidate))
    assert other.classifier.model.manifest.sha256 != shipped.classifier.model.manifest.sha256
    runtime.reader.reader = other
    learning.restore_camera()  # what the camera's `changed` runs when its models load
    assert learning.classifier() is other.classifier
    again = learning.learner("kitchen")
    assert again is not first and again.classifier is other.classifier

    learning.restore_camera()  # the same models again: the learner stays
    assert learning.learner("kitchen") is again
    learning.close()


def test_one_camera_roll_is_said_as_one_roll() -> None:
    """The camera panel read "100 % of the last hour's 1 camera rolls ..." after the
    evening's first camera roll."""
    assert rolls_words(1, 1.0) == (
        "100 % of the last hour's 1 camera roll with this camera setup (every game's) went in "
        "without a tap"
    )
    assert rolls_words(2, 0.5).startswith("50 % of the last hour's 2 camera rolls with")


def test_a_deleted_game_is_forgotten_from_every_setup_it_taught(tmp_path: Path) -> None:
    """ "Delete this game" on the server's own history took the game's moves and photos but
    left the dice its players confirmed teaching the camera, and its host's page (the one
    way to forget a table's teaching) went with it. Now the game's dice go from every setup
    it taught; another table's stay."""
    learning = Learning(tmp_path)
    image, dice, _ = rest_of(1502)

    async def teach_then_forget() -> int:
        for setup in ("kitchen", "hall"):
            await learning.roll_applied(setup, image, dice, tapped=True, table_id="gone")
        await learning.roll_applied("kitchen", image, dice, tapped=True, table_id="kept")
        await asyncio.to_thread(
            wait_until,
            lambda: learning.idle("kitchen") and learning.idle("hall"),
            what="the rolls stored",
        )
        return await learning.forget_game("gone")

    try:
        assert asyncio.run(teach_then_forget()) == 2 * len(dice)
        tables = {
            setup: {e.table_id for e in learning.store.examples(setup)}
            for setup in ("kitchen", "hall")
        }
        assert tables == {"kitchen": {"kept"}, "hall": set()}
    finally:
        learning.close()


def test_which_setup_a_game_taught_is_read_by_an_index(tmp_path: Path) -> None:
    """A host page the camera left asks which setup its game taught at every camera-status
    poll (`SetupStore.setup_of_table`): that is a search of the table's dice by an index,
    not a scan of every stored die, in a store made before the index too."""
    SetupStore(tmp_path).close()
    with sqlite3.connect(tmp_path / STORE_FILE) as db:  # as a store of an older server
        db.execute("DROP INDEX IF EXISTS examples_by_table")
    store = SetupStore(tmp_path)
    plan = store._db.execute(
        "EXPLAIN QUERY PLAN SELECT setup FROM examples WHERE table_id = ? GROUP BY setup"
        " ORDER BY COUNT(*) DESC, setup LIMIT 1",
        ("t1",),
    ).fetchall()
    store.close()
    assert any("examples_by_table" in str(step[-1]) for step in plan), plan
