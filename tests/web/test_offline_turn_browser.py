"""A tap made on a phone that went offline mid-turn, refused when it comes back because the
turn moved on, in Debian's Chromium against a real server. The refusal says what happened
and asks for nothing the screen no longer offers:

- Sixes: Bob's phone is offline when Ann calls 1; he pounds; Ann rolls meanwhile. Back
  online, his pound is refused: the dice were rolled (there was no roll when he pounded),
  and there is nothing to pound any more, so no "choose again with this roll".
- Sixis: Ann plays on her phone and on the tablet that made the table (the host's). Her
  phone goes offline and saves a die; her tablet saves another, which hands the turn to
  Bob. Back online, the phone's save is refused: the game moved on (Bob has not rolled: no
  roll shows, so not "the roll changed"), and Ann has nothing to choose again.
- Qwixx: Bob's phone is offline when the host frees his seat (Bob moved to a tablet and
  crossed there). Back online, the server refuses the phone's socket at its handshake: the
  phone says it is not connected (not "Offline", retrying for ever with its tap kept), and
  its kept tap is refused with the reason.
- Qwixx: Bob's socket dies without closing (the Wi-Fi drops him, the browser still holds
  the socket open and nothing arrives either way). His tap is not left dashed under a
  banner saying "live" for minutes: unanswered, it gives the socket up, says so, and is
  sent on a new one, applied once.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.live.replay import seat_devices
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET
from tests.web.helpers import QWIXX_ROLL_7, roll_json

pytestmark = pytest.mark.browser

RED_7 = '{"kind":"cross","player":1,"colour":"red","number":7}'  # Bob's white sum 3 + 4
SIXIS_LAYOUT = ["three_kind", "pairs", "low", "high", "odd", "even", "run_low", "run_high"]


def take_seat(browser: Any, server: ServerProcess, code: str, seat: int) -> Any:
    """A phone that joins with `code` and takes `seat`, once its sheet's socket is live."""
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{server.base_url}/join?code={code}")
    page.click("button.primary")
    page.click(f"button[name=seat][value='{seat}']")
    page.wait_for_url("**/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def goes_offline(page: Any) -> None:
    page.context.set_offline(True)
    page.wait_for_selector("#conn[data-conn=offline]", timeout=10000)


def comes_back_to(page: Any, state_id: int) -> str:
    """The phone is online again: once it shows `state_id` and its kept tap was answered,
    the refusal it reads."""
    page.context.set_offline(False)
    page.wait_for_selector("#conn[data-conn=live]", timeout=20000)
    page.wait_for_selector(f".live[data-state-id='{state_id}']", timeout=10000)
    page.wait_for_selector("#toast:not(:empty)", timeout=10000)
    assert page.locator(".pending").count() == 0
    return str(page.inner_text("#toast"))


def test_a_pound_made_offline_before_the_roll_says_the_dice_were_rolled(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = api.post(
        "/api/tables",
        json={"game": "sixes", "options": {"players": 3}, "players": ["Ann", "Bob", "Cy"]},
    ).json()
    tid = table["table_id"]
    ann, cy = seat_devices(server.base_url, table["code"], tid, [0, 2])
    bob = take_seat(browser, server, table["code"], 1)

    goes_offline(bob)
    bob.click(".sixes-pound")
    bob.wait_for_function("() => document.getElementById('conn').textContent.includes('1 tap')")
    rolled = ann.post(
        f"/api/tables/{tid}/actions",
        json={
            "action_id": "ann-rolls-3-4",
            "expected_state_id": 0,
            "move": roll_json(("white", 3), ("white", 4)),
        },
    )
    assert rolled.status_code == 200, rolled.text

    said = comes_back_to(bob, 1)
    assert said == "Not saved: Pound the table. The dice were rolled while you were offline"
    assert bob.locator(".sixes-pound").count() == 0  # nothing to pound: no call now
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 1 and state["state"]["state"]["betting"] == []
    shot(bob, "offline-pound-refused-phone")
    for device in (ann, cy):
        device.close()


def test_a_save_made_offline_after_the_other_device_saved_says_the_game_moved_on(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    options = {"players": 2, "colours": ["red", "blue"], "layouts": [SIXIS_LAYOUT]}
    table = api.post(
        "/api/tables", json={"game": "sixis", "options": options, "players": ["Ann", "Bob"]}
    ).json()
    tid = table["table_id"]
    (bob_device,) = seat_devices(server.base_url, table["code"], tid, [1])
    phone = take_seat(browser, server, table["code"], 0)
    tablet_context = browser.new_context(**TABLET)  # the table's page, with the host's cookie
    tablet_context.add_cookies(
        [{"name": k, "value": v, "url": server.base_url} for k, v in api.cookies.items()]
    )
    tablet = tablet_context.new_page()
    tablet.goto(f"{server.base_url}/t/{tid}")
    tablet.wait_for_selector("#conn[data-conn=live]")
    for index, value in enumerate([2, 2, 3, 5, 5, 5]):
        phone.click(f".die-picker[data-die-index='{index}'] .face[data-face='{value}']")
    phone.click("[data-roll-submit]")
    phone.click("[data-card='three_kind'] .sxi-take")  # state 1 once the roll shows
    for page in (phone, tablet):
        page.wait_for_selector(".live[data-state-id='2']", timeout=10000)

    goes_offline(phone)
    phone.locator(".sxi-toggle").nth(0).click()
    phone.click(".sxi-save-button")
    tablet.locator(".sxi-toggle").nth(5).click()
    tablet.click(".sxi-save-button")
    tablet.wait_for_selector(".live[data-state-id='3']", timeout=10000)

    said = comes_back_to(phone, 3)
    assert said == "Not saved: Save the chosen dice. The game moved on while you were offline"
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 3 and state["state"]["state"]["saved"] == [[5], []]
    shot(phone, "offline-save-refused-phone")
    bob_device.close()


def qwixx_after_the_first_roll(api: httpx.Client) -> dict[str, Any]:
    """A new two-player Qwixx table (Ann, Bob) whose first roll (white sum 7) is in."""
    table: dict[str, Any] = api.post(
        "/api/tables", json={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]}
    ).json()
    rolled = api.post(
        f"/api/tables/{table['table_id']}/actions",
        json={"action_id": "roll-first-7", "move": QWIXX_ROLL_7},
    )
    assert rolled.status_code == 200, rolled.text
    return table


def test_a_phone_whose_seat_was_freed_while_offline_says_so_when_it_comes_back(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = qwixx_after_the_first_roll(api)
    tid = table["table_id"]
    phone = take_seat(browser, server, table["code"], 1)
    goes_offline(phone)
    phone.click(f"[data-move='{RED_7}']")
    phone.wait_for_function("() => document.getElementById('conn').textContent.includes('1 tap')")
    assert api.post(f"/api/tables/{tid}/seats/1/free").status_code == 200
    (tablet,) = seat_devices(server.base_url, table["code"], tid, [1])  # Bob, on his tablet
    yellow_7 = {"kind": "cross", "player": 1, "colour": "yellow", "number": 7}
    crossed = tablet.post(
        f"/api/tables/{tid}/actions", json={"action_id": "bob-tablet-yellow-7", "move": yellow_7}
    )
    assert crossed.status_code == 200, crossed.text

    phone.context.set_offline(False)
    phone.wait_for_selector("#conn[data-conn=refused]", timeout=20000)
    assert phone.inner_text("#conn") == "Not connected: enter the join code again"
    phone.wait_for_selector("#toast:not(:empty)", timeout=10000)
    assert phone.inner_text("#toast").startswith("Not saved: Red 7. ")
    assert phone.locator(".pending").count() == 0
    assert phone.evaluate("() => document.body.classList.contains('seat-lost')")
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state"]["state"]["sheets"][1]["red"] == []  # the phone's tap: not applied
    assert state["state"]["state"]["sheets"][1]["yellow"] == [7]
    shot(phone, "offline-seat-freed-phone")
    tablet.close()


class SilentLink:
    """The page's sockets to the real server, passed through; `die()` makes the open ones
    carry nothing more either way without closing (a phone the Wi-Fi dropped), while a
    socket opened afterwards works."""

    def __init__(self, page: Any) -> None:
        self.dead: list[Any] = []
        self.open: list[Any] = []
        page.route_web_socket(re.compile(r".*/ws\?view=.*"), self._route)

    def _route(self, route: Any) -> None:
        server_side = route.connect_to_server()
        self.open.append(route)
        server_side.on_message(lambda m: None if route in self.dead else route.send(m))
        route.on_message(lambda m: None if route in self.dead else server_side.send(m))

    def die(self) -> None:
        self.dead.extend(self.open)


def test_a_tap_on_a_socket_that_died_without_closing_is_sent_on_a_new_one(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = qwixx_after_the_first_roll(api)
    tid = table["table_id"]
    phone = browser.new_context(**PHONE).new_page()
    link = SilentLink(phone)
    phone.goto(f"{server.base_url}/join?code={table['code']}")
    phone.click("button.primary")
    phone.click("button[name=seat][value='1']")
    phone.wait_for_url("**/sheet")
    phone.wait_for_selector("#conn[data-conn=live]")

    link.die()
    phone.click(f"[data-move='{RED_7}']")
    phone.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=30000)
    assert phone.locator(".pending").count() == 0
    assert phone.inner_text("#conn") == "live"
    assert phone.inner_text("#toast") == ""  # applied: nothing to say
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 2  # the roll and Bob's cross, applied once
    assert state["state"]["state"]["sheets"][1]["red"] == [7]
    assert len(link.open) == 2  # the silent socket given up, one new one
