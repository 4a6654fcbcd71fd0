"""A player's undo in Debian's Chromium, as the table lives it: the undo button where a
phone's player looks right after acting (the sticky banner, by the turn line), whatever
the sheet's scroll; when another player's action takes the undo away, the line that says
why (the session's refusal), also for a tap that reaches the server too late; and on the
other devices, a notice of what an undo took back."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.waiting import wait_until
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET, seated_page
from tests.web.helpers import QWIXX_ROLL_7, roll_json

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000


def qwixx_table(browser: Any, server: ServerProcess) -> tuple[Any, dict[str, Any], str]:
    """A 2-player Qwixx table (Ann, Bob) made by a host's device (no page opened): the
    host's request context, the table and its API address."""
    host = browser.new_context()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    table = created.json()
    return host, table, f"{server.base_url}/api/tables/{table['table_id']}"


def host_acts(host: Any, api: str, action_id: str, move: dict[str, Any]) -> None:
    answer = host.request.post(f"{api}/actions", data={"action_id": action_id, "move": move})
    assert answer.status == 200, answer.text()


def in_viewport(page: Any, selector: str) -> bool:
    """Whether the element is on screen as the page is scrolled now (not only in the page)."""
    return bool(
        page.evaluate(
            """(selector) => {
              const box = document.querySelector(selector).getBoundingClientRect();
              return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
            }""",
            selector,
        )
    )


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_the_undo_button_is_on_screen_right_after_acting(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    """Ann crosses a box on her sheet; the undo naming it is on her screen where she
    looks, in the banner by the turn line, with the page scrolled to the top, to the box
    she tapped, or to the end. Before: it sat below the whole sheet, off a phone's screen."""
    host, table, api = qwixx_table(browser, server)
    ann = seated_page(browser, server, table, 0, device)
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    ann.wait_for_selector(".live[data-state-id='1']")
    box = ann.locator("button[aria-label='Red 7']")
    box.click()
    undo = ann.locator("[data-undo]")
    undo.wait_for(timeout=DEADLINE_MS)
    assert undo.inner_text() == "Undo cross red 7"
    assert ann.locator(".banner [data-undo]").count() == 1  # by the turn line
    for where in ("window.scrollTo(0, 0)", "window.scrollTo(0, document.body.scrollHeight)"):
        ann.evaluate(where)
        assert in_viewport(ann, "[data-undo]"), where
    ann.locator("button[aria-label='Red 7, crossed']").scroll_into_view_if_needed()
    assert in_viewport(ann, "[data-undo]")
    shot(ann, f"undo-in-banner-{name}")
    # the banner keeps its room for the sheet: on a tablet the undo shares a line
    banner = ann.locator(".banner").bounding_box()
    assert banner["height"] < device["viewport"]["height"] / (4 if name == "tablet" else 3)
    ann.context.close()
    host.close()


def yellow_7_then_red_5(host: Any, api: str) -> None:
    """The host enters Ann's white sum (yellow 7: 3 + 4), then her colour cross (red 5:
    white 3 + red 2), which needs Bob's pass of the white sum: it ended that step."""
    host_acts(host, api, "host-ann-yellow-7", cross(0, "yellow", 7))
    host_acts(host, api, "host-ann-red-5", cross(0, "red", 5))


def cross(seat: int, colour: str, number: int) -> dict[str, Any]:
    return {"kind": "cross", "player": seat, "colour": colour, "number": number}


# the host's device entered Ann's moves: Ann's own undo cannot take them back
ACTED_ON = "The host's move for Ann since needs your last action; the host can undo back to it"


def test_an_undo_taken_away_by_another_players_action_says_why(
    browser: Any, server: ServerProcess
) -> None:
    """Bob passes the white sum on his phone and is offered its undo; Ann's colour cross
    then needs his pass: his undo goes, and a line where it was says why, in the session's
    words (`acted_on`), with Ann's name (the host's device made her move: only the host's
    undo reaches it)."""
    host, table, api = qwixx_table(browser, server)
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    bob = seated_page(browser, server, table, 1, PHONE)
    bob.locator(".sheet-buttons button[data-move*='pass']").click()
    bob.locator("[data-undo]").wait_for(timeout=DEADLINE_MS)
    yellow_7_then_red_5(host, api)
    bob.wait_for_selector(".live[data-state-id='4']", timeout=DEADLINE_MS)
    assert bob.locator("[data-undo]").count() == 0
    note = bob.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    assert note.inner_text().startswith(ACTED_ON)
    shot(bob, "undo-gone-says-why-phone")
    bob.context.close()
    host.close()


class HeldPushes:
    """The pushes from the server to one page held back while `held` (a phone that has not
    yet drawn the latest state when its player taps), then let through in order; what the
    page sends goes through at once, noted in `sent`."""

    def __init__(self, page: Any) -> None:
        self.held = False
        self.waiting: list[tuple[Any, str | bytes]] = []
        self.sent: list[str | bytes] = []
        page.route_web_socket(re.compile(r".*/ws\?view=.*"), self._route)

    def _route(self, route: Any) -> None:
        server = route.connect_to_server()
        server.on_message(lambda message: self._pass(route, message))
        route.on_message(lambda message: self._send(server, message))

    def _send(self, server: Any, message: str | bytes) -> None:
        self.sent.append(message)
        server.send(message)

    def _pass(self, route: Any, message: str | bytes) -> None:
        if self.held:
            self.waiting.append((route, message))
        else:
            route.send(message)

    def count(self, page: Any) -> int:
        """How many pushes are held, once Playwright has handled what reached the page (its
        sync API handles messages only inside its own calls)."""
        page.evaluate("0")
        return len(self.waiting)

    def release(self) -> None:
        self.held = False
        for route, message in self.waiting:
            route.send(message)
        self.waiting.clear()


def test_an_undo_tap_that_reaches_the_server_too_late_shows_its_refusal(
    browser: Any, server: ServerProcess
) -> None:
    """Bob taps his undo on a screen that has not yet drawn Ann's colour cross: the server
    refuses it by name (`acted_on`), not as a stale screen, and his phone shows those
    words."""
    host, table, api = qwixx_table(browser, server)
    bob, pushes = bob_passed_with_held_pushes(browser, server, host, table, api)
    undo = bob.locator("[data-undo]")
    pushes.held = True
    yellow_7_then_red_5(host, api)
    wait_until(lambda: pushes.count(bob) >= 2, what="the two pushes held")
    undo.click()  # drawn at state 2; the table is at state 4
    wait_until(lambda: pushes.count(bob) >= 3, what="the answer to the undo")
    pushes.release()
    toast = bob.locator("#toast:not(:empty)")
    toast.wait_for(timeout=DEADLINE_MS)
    assert toast.inner_text().startswith(ACTED_ON)
    state = host.request.get(f"{api}/state").json()
    assert state["state_id"] == 4  # nothing taken back
    bob.context.close()
    host.close()


def bob_passed_with_held_pushes(
    browser: Any, server: ServerProcess, host: Any, table: dict[str, Any], api: str
) -> tuple[Any, HeldPushes]:
    """Bob's phone, its pushes held on demand, after the host's white sum 7 and Bob's pass
    of it: his undo is on screen."""
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    context = browser.new_context(**PHONE)
    assert context.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    assert context.request.post(f"{api}/seat", data={"seat": 1}).ok
    bob = context.new_page()
    pushes = HeldPushes(bob)
    bob.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    bob.wait_for_selector("#conn[data-conn=live]")
    bob.locator(".sheet-buttons button[data-move*='pass']").click()
    bob.locator("[data-undo]").wait_for(timeout=DEADLINE_MS)
    return bob, pushes


def test_a_second_tap_on_a_waiting_undo_sends_nothing(browser: Any, server: ServerProcess) -> None:
    """Bob taps his undo twice before its answer comes (a slow double tap): one undo is
    sent; the second would have come back refused ("you have no action of your own to
    undo"), a refusal of nothing he meant."""
    host, table, api = qwixx_table(browser, server)
    bob, pushes = bob_passed_with_held_pushes(browser, server, host, table, api)
    pushes.held = True
    undo = bob.locator("[data-undo]")
    undo.click()
    wait_until(lambda: pushes.count(bob) >= 1, what="the answer to the undo")
    undo.click()
    pushes.release()
    bob.wait_for_selector(".live[data-state-id='3']", timeout=DEADLINE_MS)
    pushes.count(bob)  # whatever the page sent is noted by now
    assert [json.loads(m)["type"] for m in pushes.sent].count("undo") == 1
    assert bob.locator("#toast").is_hidden()
    bob.context.close()
    host.close()


def test_the_other_devices_see_what_an_undo_took_back(browser: Any, server: ServerProcess) -> None:
    """Ann crosses red 7 on her phone and takes it back: Bob's tablet says so at once, in
    the server's words; Ann's own phone, which did it, says nothing more."""
    host, table, api = qwixx_table(browser, server)
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    ann = seated_page(browser, server, table, 0, PHONE)
    bob = seated_page(browser, server, table, 1, TABLET)
    ann.locator("button[aria-label='Red 7']").click()
    ann.locator("[data-undo]").click()
    bob.wait_for_selector(".live[data-state-id='3']", timeout=DEADLINE_MS)
    note = bob.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    assert note.inner_text() == "Ann took back: Cross red 7"
    shot(bob, "undo-news-tablet")
    ann.wait_for_selector(".live[data-state-id='3']", timeout=DEADLINE_MS)
    assert not ann.locator("#undo-note").is_visible()
    ann.context.close()
    bob.context.close()
    host.close()


def test_the_other_devices_read_the_penalty_an_undo_took_back(
    browser: Any, server: ServerProcess
) -> None:
    """Ann passes twice, the second pass her −5, and takes it back with "Undo pass (−5
    penalty)": Bob's tablet read "Ann took back: Pass (no cross)", no word of the penalty;
    it reads what her button said."""
    host, table, api = qwixx_table(browser, server)
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    host_acts(host, api, "host-bob-pass-1", {"kind": "pass", "player": 1})
    ann = seated_page(browser, server, table, 0, PHONE)
    bob = seated_page(browser, server, table, 1, TABLET)
    passes = ann.locator(".sheet-buttons button[data-move*='pass']")
    passes.click()  # her white sum: free
    ann.wait_for_selector(".live[data-state-id='3']", timeout=DEADLINE_MS)
    passes.click()
    passes.click()  # "tap again": the penalty
    ann.wait_for_selector(".live[data-state-id='4']", timeout=DEADLINE_MS)
    undo = ann.locator("[data-undo]")
    assert undo.inner_text() == "Undo pass (\N{MINUS SIGN}5 penalty)"
    undo.click()
    bob.wait_for_selector(".live[data-state-id='5']", timeout=DEADLINE_MS)
    note = bob.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    assert note.inner_text() == "Ann took back: Pass (\N{MINUS SIGN}5 penalty)"
    ann.context.close()
    bob.context.close()
    host.close()


# where the note sits and how loud it is, against the banner's turn line and score strip
NOTE_LOOKS = """() => {
  const style = (selector) => getComputedStyle(document.querySelector(selector));
  const box = (selector) => document.querySelector(selector).getBoundingClientRect();
  return {
    weight: Number(style('#undo-note').fontWeight),
    size: parseFloat(style('#undo-note').fontSize),
    turnSize: parseFloat(style('.turn-text').fontSize),
    belowScores: box('#undo-note').top >= box('.banner .score-strip').bottom,
  };
}"""


def test_why_an_undo_went_away_is_a_quiet_line_at_the_banners_foot(
    browser: Any, server: ServerProcess
) -> None:
    """Bob pounds on his Sixes phone and is offered the undo; Ann's roll comes: his undo
    goes, and why is still said, but in small plain words under the dice and scores, not
    a bold block between the turn line and the step that comes next."""
    host = browser.new_context()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "sixes", "options": {"players": 3}, "players": ["Ann", "Bob", "Cy"]},
    )
    table = created.json()
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    bob = seated_page(browser, server, table, 1, PHONE)
    bob.locator(".sixes-pound").click()
    bob.locator("[data-undo]").wait_for(timeout=DEADLINE_MS)
    host_acts(host, api, "host-roll-2-3", roll_json(("white", 2), ("white", 3)))
    bob.wait_for_selector(".live[data-state-id='2']", timeout=DEADLINE_MS)
    note = bob.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    assert note.inner_text().startswith("The dice have been rolled since your last action")
    looks = bob.evaluate(NOTE_LOOKS)
    assert looks["weight"] < 600 and looks["size"] < looks["turnSize"] * 0.85, looks
    assert looks["belowScores"], looks
    shot(bob, "undo-why-quiet-phone")
    bob.context.close()
    host.close()
