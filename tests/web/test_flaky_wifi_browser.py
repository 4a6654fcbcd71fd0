"""A player's phone on a café's flaky Wi-Fi, in Debian's Chromium against a real server:

- a phone whose seat was freed stops asking for the camera it may no longer read.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.waiting import wait_until
from tests.web.conftest import ServerProcess
from tests.web.devices import PHONE
from tests.web.test_offline_turn_browser import qwixx_after_the_first_roll

pytestmark = pytest.mark.browser


def test_a_phone_whose_seat_was_freed_stops_asking_for_the_camera(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = qwixx_after_the_first_roll(api)
    tid = table["table_id"]
    context = browser.new_context(**PHONE)
    context.clock.install()  # the page's timers, run ahead below without waiting for them
    phone = context.new_page()
    camera_asks: list[str] = []
    phone.on("request", lambda r: camera_asks.append(r.url) if "/camera" in r.url else None)
    phone.goto(f"{server.base_url}/join?code={table['code']}")
    phone.click("button.primary")
    phone.click("button[name=seat][value='1']")
    phone.wait_for_url("**/sheet")
    phone.wait_for_selector("#conn[data-conn=live]")
    wait_until(lambda: camera_asks, what="the seated phone reading the camera's state")

    assert api.post(f"/api/tables/{tid}/seats/1/free").status_code == 200
    # the refusal stops the camera's polling at once (table.js tells camera.js): every
    # request made before it was seen here before the banner changed
    phone.wait_for_selector("#conn[data-conn=refused]", timeout=20000)
    asked_before = len(camera_asks)
    phone.clock.run_for(10_000)  # fourteen polls' worth of the page's time
    # a request made after every timer above: its answer comes after theirs were sent
    assert phone.evaluate(f"() => fetch('/api/tables/{tid}/state').then((r) => r.status)") == 401
    assert camera_asks[asked_before:] == []
    assert phone.inner_text("#conn") == "Not connected: enter the join code again"
