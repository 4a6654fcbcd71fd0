"""The camera panel claims only what is true (the café owner's trial), in Debian's Chromium:
the camera status each page polls is the server's, with the camera's state set by the test
(a real server with no camera; web/static/js/camera.js draws what it is handed).

- A player's line says "The camera is watching for the next roll." only while the game
  waits for a roll (`roll_due`), not while its players choose or cross, when a throw would
  still mean something (`expects`): a Sixto tablet said so through Keep or Re-roll.
- While the page cannot reach the server, or the server answers with an error (503), the
  line claims nothing about the camera: the tablets kept saying it watched with the server
  stopped, and an error answer left the last state on screen.
- A lost camera tells the player how rolls get in meanwhile (tapping the dice).
- A table the camera does not serve shows no live picture (it is the other table's, on the
  server machine too) and its line says so.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.conftest import ServerProcess

pytestmark = pytest.mark.browser

QWIXX = ["white", "white", "red", "yellow", "green", "blue"]
LIVE = {"connected": True, "ended": False, "last_error": None}
OFFLINE = "Offline: the camera's state shows again when the table is back."


class CameraState:
    """The camera status the pages get: the server's answer with `fields` put over it
    (a camera that is on and reads), no answer at all while `down`, or an error answer
    with status `error` while it is set."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.down = False
        self.error: int | None = None

    def route(self, route: Any) -> None:
        if self.down:
            route.abort("connectionrefused")
            return
        if self.error is not None:
            route.fulfill(status=self.error, json={"reason": "unavailable", "message": "busy"})
            return
        response = route.fetch()
        body = {**response.json(), "enabled": True, "status": LIVE, "line": "camera 0 · 10 fps"}
        route.fulfill(response=response, json={**body, **self.fields})


def line_is(page: Any, words: str) -> None:
    page.wait_for_function(
        "(words) => document.getElementById('camera-status').textContent === words",
        arg=words,
        timeout=10000,
    )


def test_the_camera_line_says_only_what_is_true(browser: Any, server: ServerProcess) -> None:
    camera = CameraState()
    host = browser.new_context()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
    )
    assert created.status == 201
    table_id, code = created.json()["table_id"], created.json()["code"]
    player = browser.new_context()
    assert player.request.post(server.base_url + "/api/join", data={"code": code}).ok
    assert player.request.post(f"{server.base_url}/api/tables/{table_id}/seat", data={"seat": 1}).ok
    for context in (host, player):
        context.route(re.compile(r".*/api/tables/[^/]+/camera$"), camera.route)

    # the players cross: a throw would close their step, but nobody waits for one
    camera.fields = {"attached": True, "roll_due": False, "expects": QWIXX}
    sheet = player.new_page()
    sheet.goto(f"{server.base_url}/t/{table_id}/sheet")
    line_is(sheet, "The camera is on; it waits while players act.")
    camera.fields = {"attached": True, "roll_due": True, "expects": QWIXX}
    line_is(sheet, "The camera is watching for the next roll.")

    # the server cannot be reached: no claim, and once it answers again the camera's state
    camera.down = True
    line_is(sheet, OFFLINE)
    assert sheet.get_attribute("#camera-status", "data-camera-state") == "offline"
    camera.down = False
    line_is(sheet, "The camera is watching for the next roll.")
    # an error answer holds no camera state either: the line says the same
    camera.error = 503
    line_is(sheet, OFFLINE)
    assert sheet.get_attribute("#camera-status", "data-camera-state") == "offline"
    camera.error = None
    line_is(sheet, "The camera is watching for the next roll.")

    # the camera is lost (a webcam unplugged, a folder gone): the player is told that
    # nothing is asked of them and how rolls get in meanwhile (they read "The camera has a
    # problem (the host's screen says what)": whether to act, and what, was left to guess)
    lost = {"connected": False, "ended": False, "running": True, "last_error": "no such folder"}
    camera.fields = {"attached": True, "roll_due": True, "expects": QWIXX, "status": lost}
    line_is(
        sheet,
        "The camera is not working just now. You need not do anything about it: the host's "
        "screen shows why. Until it works again, whoever rolls taps the dice they threw on "
        "their own screen (the host can enter them too).",
    )
    camera.fields = {"attached": True, "roll_due": True, "expects": QWIXX}
    line_is(sheet, "The camera is watching for the next roll.")

    # the host's page (loopback: the server machine) shows the picture of its own camera
    table = host.new_page()
    table.goto(f"{server.base_url}/t/{table_id}")
    table.wait_for_selector("#camera-view:not([hidden])", timeout=10000)
    # ... and none once the camera serves another table; the lines say so, once each
    camera.fields = {"attached": False, "roll_due": True, "expects": QWIXX, "note": ""}
    table.wait_for_selector("#camera-view[hidden]", state="attached", timeout=10000)
    line_is(table, "camera 0 · 10 fps · this table does not get camera rolls")
    line_is(sheet, "The camera watches another table.")
    for context in (host, player):
        context.unroute_all(behavior="ignoreErrors")  # a poll under way as the pages close
        context.close()
