"""The demo camera waits for the table (issue 26 items 1 and 2), in Debian's Chromium with a
host's tablet and players' phones: a real server with no camera plays its demo camera
through the shipped ONNX models.

- It throws nothing until every player has a seat (the host's screen says for whom it
  waits); once the last one sits it throws, and its question holds: it does not throw
  again while the question is open, and "Use this roll" applies the dice shown.
- The host's "Start the camera now" starts it with seats still free.
- Where the game opens a race (Sixes' table-pound after a call) it gives the players the
  time a real table takes: a phone pounds before the demo throws."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion.table.camera_hub import RACE_PAUSE_S
from companion.table.camera_settings import CameraSettings
from companion.web.settings import Settings
from tests.live.replay import LiveServer, wait_until
from tests.web.conftest import free_port, shot
from tests.web.devices import PHONE, TABLET

pytestmark = pytest.mark.browser


@contextmanager
def demo_table(
    browser: Any, tmp_path: Path, game: str, players: list[str], mode: str = "auto"
) -> Iterator[tuple[LiveServer, dict[str, Any], Any]]:
    """A table of `game` on a server playing the demo camera: (server, table, the host's
    tablet showing the table page)."""
    settings = Settings(port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings())
    with LiveServer(settings, None) as server:
        host = browser.new_context(**TABLET)
        created = host.request.post(
            f"{server.base_url}/api/tables",
            data={"game": game, "players": players, "options": {"players": len(players)}},
        )
        assert created.status == 201
        table = created.json()
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        assert host.request.post(f"{api}/camera/mode", data={"mode": mode}).ok
        tablet = host.new_page()
        tablet.goto(f"{server.base_url}/t/{table['table_id']}")
        try:
            yield server, table, tablet
        finally:
            host.close()


def sit(browser: Any, server: LiveServer, table: dict[str, Any], seat: int) -> Any:
    """A phone that joins the table and takes `seat` (its sheet open)."""
    context = browser.new_context(**PHONE)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    assert context.request.post(f"{server.base_url}/api/join", data={"code": table["code"]}).ok
    assert context.request.post(f"{api}/seat", data={"seat": seat}).ok
    page = context.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def test_the_demo_waits_for_the_seats_then_holds_its_question(browser: Any, tmp_path: Path) -> None:
    with demo_table(browser, tmp_path, "qwixx", ["Ann", "Bob"], "confirm") as (
        server, table, tablet,
    ):  # fmt: skip
        tablet.wait_for_selector("#camera-seat-wait:not([hidden])", timeout=60000)
        assert "waiting for Ann and Bob" in tablet.inner_text("#camera-seat-wait")
        tablet.wait_for_function(
            "() => document.getElementById('camera-status').textContent"
            ".includes('waiting for Ann and Bob to take a seat')"
        )
        assert server.hub.runtime.demo.take(now=time.monotonic() + 1000) is None
        shot(tablet, "demo-waits-for-seats-tablet")
        ann = sit(browser, server, table, 0)
        tablet.wait_for_function(
            "() => document.getElementById('camera-seat-wait').textContent.includes('waiting for Bob.')"
        )
        assert server.app.state.tables.store.log(table["table_id"]) == []
        bob = sit(browser, server, table, 1)

        # everyone sits: the demo throws, and its question holds until it is answered
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=120000)
        tablet.wait_for_selector("#camera-seat-wait", state="hidden")
        tablet.wait_for_function(
            "() => document.getElementById('camera-status').textContent"
            '.includes("waiting for the answer to the camera\'s question")',
            timeout=20000,
        )
        # not even after the 12 s a refused roll waits: the question on screen stays
        assert server.hub.runtime.demo.take(now=time.monotonic() + 1000) is None
        shown = sorted(
            (c.get_attribute("data-read-colour"), int(c.get_attribute("data-read-value") or 0))
            for c in ann.locator("#camera-ask .ask-die .die").all()
        )
        shot(ann, "demo-question-holds-phone")
        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=20000)
        [entry] = server.app.state.tables.store.log(table["table_id"])
        assert sorted((d["colour"], d["value"]) for d in entry.move["dice"]) == shown
        for page in (ann, bob):
            page.context.close()


def test_the_host_starts_the_demo_with_seats_free(browser: Any, tmp_path: Path) -> None:
    with demo_table(browser, tmp_path, "sixto", ["Ann", "Bob"]) as (server, table, tablet):
        tablet.wait_for_selector("#camera-seat-wait:not([hidden])", timeout=60000)
        assert tablet.locator(".live[data-state-id='0']").count() == 1
        tablet.click("[data-camera-start-now]")
        tablet.wait_for_selector(".live[data-state-id='1']", timeout=120000)
        tablet.wait_for_selector("#camera-seat-wait", state="hidden")


def test_a_race_gets_the_time_a_real_table_takes(browser: Any, tmp_path: Path) -> None:
    with demo_table(browser, tmp_path, "sixes", ["Ann", "Bob", "Cy"]) as (
        server, table, tablet,
    ):  # fmt: skip
        phones = [sit(browser, server, table, seat) for seat in range(3)]
        bob = phones[1]
        # the call is out and the demo waits before it throws: time to pound
        tablet.wait_for_function(
            "() => document.getElementById('camera-status').textContent.includes('time for the race')",
            timeout=30000,
        )
        bob.click(".sixes-pound.legal")
        wait_until(
            lambda: (
                [e.move["kind"] for e in server.app.state.tables.store.log(table["table_id"])]
                == ["pound"]
            ),
            timeout=RACE_PAUSE_S,
            what="Bob's pound to be taken before the demo throws",
        )
        [entry] = server.app.state.tables.store.log(table["table_id"])
        assert entry.by == "1"
        # after the pound the roller throws: the demo's roll follows
        tablet.wait_for_selector(".live[data-state-id='2']", timeout=120000)
        shot(bob, "demo-sixes-pound-won-phone")
        for page in phones:
            page.context.close()
