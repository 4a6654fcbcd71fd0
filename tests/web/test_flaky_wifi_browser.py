"""A player's phone on a café's flaky Wi-Fi, in Debian's Chromium against a real server:

- the Wi-Fi drops an idle phone while the browser still holds its socket (nothing arrives
  either way, no close comes): with nobody tapping, the page finds the socket silent, says
  it is not live while it reconnects, and is live again on a new socket, which shows the
  move another player made meanwhile;
- two tabs of one phone on the same sheet, both offline: a tap made in one shows as kept
  in the other (its box dashed: not tapped twice), and back online it is applied once,
  with both tabs open (each sends it: the second copy is a duplicate) or with the tab it
  was made in closed meanwhile (the other sends it: it was lost);
- the same two tabs, only one of them offline: the tab still online sends the tap the
  other keeps, at once, and the offline tab, back, shows it applied (its copy answered as
  a duplicate, not refused).
- a phone whose seat was freed stops asking for the camera it may no longer read;
- the same two tabs, both offline, each keep a tap at one instant (the second tab's write
  made on a view of the shared outbox older than the first tab's write): both taps stay
  kept in the outbox they share (each tab writes only its own entries), and both tabs
  count them;
- the Wi-Fi goes silent and the new socket's connect never completes (no `offline` event,
  no answer, no close): the page gives the attempt up after its deadline, says the table
  does not answer and tries again, and is live once the Wi-Fi carries again;
- the camera's line on a silent Wi-Fi: its polls unanswered are given up, the line claims
  nothing about the camera, and once the Wi-Fi carries again it reads the camera anew
  (the hung polls held every connection the browser allows the table: it never did);
- a phone whose seat was freed while it kept a tap sends the tap over HTTP, and the Wi-Fi
  goes silent just then: the resend unanswered is given up, the tap stays kept and is
  sent again, and once the Wi-Fi carries the refusal names it;
- a table started on the start page into a silent Wi-Fi: the start is given up and the
  page says the table may or may not have been started, and where a started one shows;
- a kept tap resent over HTTP into a network that stays down: each try waits longer (5,
  10, 20, then 30 s), the line says the tap is kept, and `online` sends it at once;
- a tap the online tab got saved: the offline tab no longer keeps it, writes it back
  or sends it again;
- a refused tap both tabs held, one after the other or at one instant: said by one tab.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.waiting import wait_until
from tests.web.conftest import ServerProcess
from tests.web.devices import PHONE
from tests.web.helpers import QWIXX_ROLL_7
from tests.web.relay import SilentRelay
from tests.web.test_offline_turn_browser import (
    RED_7,
    SilentLink,
    qwixx_after_the_first_roll,
    take_seat,
)

pytestmark = pytest.mark.browser
YELLOW_7 = RED_7.replace("red", "yellow")
ANN_RED_7 = {"kind": "cross", "player": 0, "colour": "red", "number": 7}

# a page's view (data-mode) renamed to one the server draws no more, as the parser adds it
OLDER_VIEW = """new MutationObserver(() => {
  for (const page of document.querySelectorAll("[data-mode]")) page.dataset.mode = "scoreboard";
}).observe(document, {childList: true, subtree: true});"""

# every state #conn showed, in order (a MutationObserver: the page's own script never
# reads it; evaluated by Playwright, outside the page's Content-Security-Policy)
RECORD_CONN_STATES = """() => {
  window.connStates = [];
  const conn = document.getElementById("conn");
  new MutationObserver(() => window.connStates.push(conn.dataset.conn))
    .observe(conn, {attributes: true, attributeFilter: ["data-conn"]});
}"""


def rolled_qwixx_table(server: ServerProcess) -> tuple[httpx.Client, dict[str, Any], str]:
    """A client of the server's API, and its Qwixx table for Ann and Bob after the first
    roll (`qwixx_after_the_first_roll`) with the table's id."""
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = qwixx_after_the_first_roll(api)
    return api, table, table["table_id"]


def phone_on_a_test_clock(browser: Any) -> Any:
    """A phone whose timers run on a clock the test runs ahead (no waiting in real time for
    a heartbeat or a poll); its time also passes as usual."""
    context = browser.new_context(**PHONE)
    context.clock.install()
    return context.new_page()


def second_tab(first: Any, server: ServerProcess | SilentRelay, tid: str) -> Any:
    """A second tab of the same browser as `first`, on the same sheet, live."""
    tab = first.context.new_page()
    tab.goto(f"{server.base_url}/t/{tid}/sheet")
    tab.wait_for_selector("#conn[data-conn=live]")
    return tab


def join_as_bob(phone: Any, server: ServerProcess | SilentRelay, code: str) -> None:
    """The phone joins with `code` (on the server, or through a relay to it) and takes
    Bob's seat (1), once its sheet is live."""
    phone.goto(f"{server.base_url}/join?code={code}")
    phone.click("button.primary")
    phone.click("button[name=seat][value='1']")
    phone.wait_for_url("**/sheet")
    phone.wait_for_selector("#conn[data-conn=live]")


def test_an_idle_phone_whose_socket_died_without_closing_says_so_and_reconnects(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    phone = phone_on_a_test_clock(browser)
    link = SilentLink(phone)
    join_as_bob(phone, server, table["code"])
    phone.evaluate(RECORD_CONN_STATES)

    link.die()
    phone.clock.run_for(25_000)  # idle longer than any heartbeat and its answer's wait
    wait_until(lambda: len(link.open) == 2, timeout=30, what="a new socket")
    phone.wait_for_selector("#conn[data-conn=live]", timeout=20000)
    crossed = api.post(
        f"/api/tables/{tid}/actions", json={"action_id": "ann-red-7", "move": ANN_RED_7}
    )
    assert crossed.status_code == 200, crossed.text
    phone.wait_for_selector(".live[data-state-id='2']", timeout=20000)
    assert phone.evaluate("() => window.connStates")[:2] == ["connecting", "live"]
    assert phone.inner_text("#conn") == "live"
    assert phone.inner_text("#toast") == ""


NETWORK_CUT = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


def tab_offline(tab: Any) -> Any:
    """This tab's network only goes away (the other tabs of its browser stay online); the
    returned session brings it back (`tab_online`)."""
    network = tab.context.new_cdp_session(tab)
    network.send("Network.emulateNetworkConditions", {"offline": True, **NETWORK_CUT})
    tab.wait_for_selector("#conn[data-conn=offline]", timeout=10000)
    return network


def tab_online(network: Any) -> None:
    network.send("Network.emulateNetworkConditions", {"offline": False, **NETWORK_CUT})


# A tab's view of localStorage takes in the other tabs' writes between its tasks, never
# during one: a tab busy while the other writes makes its own write on the older view, as
# two tabs writing at one instant do. The second tab taps at the end of a busy task; the
# first tab, once it has tapped, stays busy long enough for the check (a tab rewrites its
# kept taps every time its reconnecting fails: that would mend the loss before it is seen)
TAP_AFTER_BUSY = """([move, busyMs]) => {
  window.busyUntil = Date.now() + busyMs;
  setTimeout(() => {
    while (Date.now() < window.busyUntil) { /* busy: the other tab writes meanwhile */ }
    document.querySelector(`[data-move='${move}']`).click();
    window.tappedAt = Date.now();
  }, 0);
}"""
TAP_THEN_BUSY = """([move, busyMs]) => {
  document.querySelector(`[data-move='${move}']`).click();
  window.busyUntil = Date.now() + busyMs;
  setTimeout(() => { while (Date.now() < window.busyUntil) { /* busy */ } }, 0);
  return [Date.now(), window.busyUntil];
}"""
# the shared outbox as stored keeps both taps (whatever its keys)
BOTH_KEPT = """() => {
  const stored = Object.keys(localStorage).filter((key) => key.startsWith("tc-outbox-"))
    .map((key) => localStorage.getItem(key)).join(" ");
  return stored.includes('\\"red\\"') && stored.includes('\\"yellow\\"');
}"""


def test_two_tabs_keeping_a_tap_at_one_instant_both_keep_theirs(
    browser: Any, server: ServerProcess
) -> None:
    _, table, tid = rolled_qwixx_table(server)
    first = take_seat(browser, server, table["code"], 1)
    second = second_tab(first, server, tid)
    for tab in (first, second):
        tab_offline(tab)

    second.evaluate(TAP_AFTER_BUSY, [YELLOW_7, 3000])
    first_tapped_at, first_busy_until = first.evaluate(TAP_THEN_BUSY, [RED_7, 10_000])
    second.wait_for_function("() => window.tappedAt", timeout=20000)
    assert first_tapped_at < second.evaluate("() => window.busyUntil"), "not at one instant"
    second.wait_for_function(BOTH_KEPT, timeout=4000)
    assert second.evaluate("() => Date.now()") < first_busy_until, "the first tab wrote again"
    for tab in (first, second):
        tab.wait_for_function(
            "() => document.getElementById('conn').textContent.includes('2 taps kept')",
            timeout=20000,
        )


def clock_runs_until(phone: Any, selector: str, what: str) -> None:
    """Run the phone's test clock ahead a second at a time (its network answering in real
    time between the steps) until `selector` is on the page."""

    def shown() -> bool:
        phone.clock.run_for(1000)
        return bool(phone.locator(selector).count())

    wait_until(shown, timeout=60, what=what)


def test_a_new_socket_whose_connect_hangs_is_given_up_and_tried_again(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    with SilentRelay(server.port) as wifi:
        phone = phone_on_a_test_clock(browser)
        sockets: list[Any] = []
        phone.on("websocket", lambda opened: sockets.append(opened))
        join_as_bob(phone, wifi, table["code"])
        phone.evaluate(RECORD_CONN_STATES)

        wifi.go_silent()
        # the heartbeat unanswered, the socket is given up: its replacement never connects
        clock_runs_until(phone, "#conn[data-conn=unreachable]", "the page saying so")
        assert phone.evaluate("() => window.connStates")[:2] == ["connecting", "unreachable"]
        assert phone.inner_text("#conn") == "No answer from the table: trying again"
        given_up = len(sockets)
        clock_runs_until(phone, "#conn[data-conn=unreachable]", "still saying so")
        wait_until(
            lambda: phone.clock.run_for(1000) or len(sockets) > given_up,
            timeout=60,
            what="another try",
        )

        wifi.come_back()
        clock_runs_until(phone, "#conn[data-conn=live]", "live again")
        crossed = api.post(
            f"/api/tables/{tid}/actions", json={"action_id": "ann-red-7", "move": ANN_RED_7}
        )
        assert crossed.status_code == 200, crossed.text
        phone.wait_for_selector(".live[data-state-id='2']", timeout=20000)
        assert phone.inner_text("#toast") == ""


def test_a_phone_whose_seat_was_freed_stops_asking_for_the_camera(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    phone = phone_on_a_test_clock(browser)
    camera_asks: list[str] = []
    phone.on("request", lambda r: camera_asks.append(r.url) if "/camera" in r.url else None)
    join_as_bob(phone, server, table["code"])
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


def test_a_page_asking_for_a_view_the_server_has_not_says_reload_not_join(
    browser: Any, server: ServerProcess
) -> None:
    """A page from before the server's views changed asks for a view the server draws no
    more: its socket was refused as "join this table first" (a 403 at the handshake, read
    as a lost network: "Offline" for ever). The server says "unknown view", and the
    page asks for a reload: its device still holds its seat, so not for the join code."""
    _, table, tid = rolled_qwixx_table(server)
    phone = browser.new_context(**PHONE).new_page()
    join_as_bob(phone, server, table["code"])
    older = browser.new_context(**PHONE, storage_state=phone.context.storage_state())
    # the sheet as a page of another view draws it: its view renamed as the parser adds
    # it, before table.js reads it (a page fulfilled by the test instead is no local
    # page to Chromium, which then blocks its socket to the loopback server)
    older.add_init_script(OLDER_VIEW)
    page = older.new_page()
    page.goto(f"{server.base_url}/t/{tid}/sheet")
    page.wait_for_selector("#conn[data-conn=outdated]", timeout=20000)
    assert page.inner_text("#conn") == "Not connected: this page is out of date, reload it"
    assert not page.evaluate("() => document.body.classList.contains('seat-lost')")
    # the device still holds its seat: the reload it asks for opens its sheet
    assert page.evaluate(f"() => fetch('/api/tables/{tid}/state').then((r) => r.status)") == 200


def test_the_camera_line_on_a_silent_wifi_claims_nothing_and_reads_again_after(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    with SilentRelay(server.port) as wifi:
        phone = phone_on_a_test_clock(browser)
        join_as_bob(phone, wifi, table["code"])
        clock_runs_until(phone, "#camera-status[data-camera-state=off]", "the camera read")

        wifi.go_silent()
        clock_runs_until(phone, "#camera-status[data-camera-state=offline]", "no camera claimed")
        assert phone.inner_text("#camera-status") == (
            "Offline: the camera's state shows again when the table is back."
        )

        wifi.come_back()
        clock_runs_until(phone, "#camera-status[data-camera-state=off]", "the camera read again")
        clock_runs_until(phone, "#conn[data-conn=live]", "live again")


def test_a_kept_tap_resent_over_http_into_a_silent_wifi_is_kept_and_sent_again(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    with SilentRelay(server.port) as wifi:
        phone = phone_on_a_test_clock(browser)
        join_as_bob(phone, wifi, table["code"])
        phone.context.set_offline(True)
        clock_runs_until(phone, "#conn[data-conn=offline]", "the phone offline")
        phone.click(f"[data-move='{RED_7}']")
        assert api.post(f"/api/tables/{tid}/seats/1/free").status_code == 200

        resends: list[str] = []

        def silent_from_the_first_resend(route: Any) -> None:
            resends.append(route.request.url)
            wifi.go_silent()  # the resend, and every connection open, carry nothing more
            route.continue_()

        phone.route("**/actions", silent_from_the_first_resend)
        phone.context.set_offline(False)
        clock_runs_until(phone, "#conn[data-conn=refused]", "the refused socket")
        wait_until(lambda: resends, what="the kept tap sent over HTTP")
        wait_until(
            lambda: phone.clock.run_for(1000) or len(resends) > 1,
            timeout=60,
            what="the tap sent again after no answer",
        )
        assert phone.locator(f"[data-move='{RED_7}'].pending").count() == 1
        assert phone.inner_text("#toast") == ""

        phone.unroute("**/actions")
        wifi.come_back()
        clock_runs_until(phone, "#toast:not(:empty)", "the answer to the kept tap")
        assert phone.inner_text("#toast").startswith("Not saved: Red 7. ")
        assert phone.locator(".pending").count() == 0


def resends_seen_at(phone: Any, resends: list[int], seconds: int) -> list[int]:
    """Run the phone's paused clock `seconds` ahead, a second at a time, and return the
    seconds at which the kept tap was sent again meanwhile (each step waits for the page's
    answer to the one before: a resend routed and failed, its next try planned)."""
    seen_at: list[int] = []
    for second in range(1, seconds + 1):
        before = len(resends)
        phone.clock.run_for(1000)
        phone.evaluate("() => 0")
        if len(resends) > before:
            seen_at.append(second)
    return seen_at


def test_a_kept_tap_resent_while_the_network_stays_down_backs_off_and_goes_at_once_when_back(
    browser: Any, server: ServerProcess
) -> None:
    """A phone whose seat was freed sends its kept tap over HTTP; the network stays down:
    the tap was tried again every 5 s for as long as it stayed so. Each try now waits
    longer (5, 10, 20, then every 30 s), the line says the tap is kept and will be sent
    when the table answers, and the network back (`online`) sends it at once: its refusal
    names it."""
    api, table, tid = rolled_qwixx_table(server)
    phone = phone_on_a_test_clock(browser)
    join_as_bob(phone, server, table["code"])
    phone.context.set_offline(True)
    clock_runs_until(phone, "#conn[data-conn=offline]", "the phone offline")
    phone.click(f"[data-move='{RED_7}']")
    assert api.post(f"/api/tables/{tid}/seats/1/free").status_code == 200

    resends: list[int] = []

    def down(route: Any) -> None:
        resends.append(1)
        route.abort("internetdisconnected")

    phone.route("**/actions", down)
    phone.context.set_offline(False)
    clock_runs_until(phone, "#conn[data-conn=refused]", "the refused socket")
    wait_until(lambda: resends, what="the kept tap sent over HTTP")
    phone.clock.pause_at(phone.evaluate("() => Date.now()") / 1000 + 1)
    seen_at = resends_seen_at(phone, resends, 160)
    gaps = [later - earlier for earlier, later in zip(seen_at, seen_at[1:], strict=False)]
    assert seen_at and seen_at[0] <= 6, seen_at  # 5 s after the first try
    assert len(gaps) >= 4, seen_at  # still tried: the tap is not given up
    for gap, wanted in zip(gaps, [10, 20, 30, 30, 30], strict=False):
        assert wanted - 1 <= gap <= wanted + 2, seen_at
    assert phone.inner_text("#conn") == (
        "Not connected: enter the join code again · 1 tap kept: it will be sent when the"
        " table answers"
    )
    assert phone.locator(f"[data-move='{RED_7}'].pending").count() == 1

    phone.unroute("**/actions")
    phone.context.set_offline(True)
    assert phone.inner_text("#conn").startswith("Not connected: enter the join code again")
    phone.context.set_offline(False)  # its clock stands still: only `online` sends it
    phone.wait_for_selector("#toast:not(:empty)", timeout=20000)
    assert phone.inner_text("#toast").startswith("Not saved: Red 7. ")
    assert phone.locator(".pending").count() == 0
    assert phone.inner_text("#conn") == "Not connected: enter the join code again"


@pytest.mark.parametrize("first_tab_closed", [False, True], ids=["both-open", "first-closed"])
def test_a_tap_kept_offline_in_one_tab_is_kept_by_the_other_and_applied_once(
    browser: Any, server: ServerProcess, first_tab_closed: bool
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    first = take_seat(browser, server, table["code"], 1)
    second = second_tab(first, server, tid)  # a second tab of the same browser, on Bob's sheet
    first.context.set_offline(True)
    for tab in (first, second):
        tab.wait_for_selector("#conn[data-conn=offline]", timeout=10000)

    first.click(f"[data-move='{RED_7}']")
    for tab in (first, second):
        tab.wait_for_function(
            "() => document.getElementById('conn').textContent.includes('1 tap kept')"
        )
    assert second.locator(f"[data-move='{RED_7}'].pending").count() == 1
    phone = first.context  # both tabs' browser, still there once the first tab is closed
    if first_tab_closed:
        # its unload handlers run (the page saves its outbox), and close does not wait for
        # the tab to go: setting the browser online meanwhile fails on the closing tab
        with first.expect_event("close", timeout=20_000):
            first.close(run_before_unload=True)
    phone.set_offline(False)

    tabs = [second] if first_tab_closed else [first, second]
    for tab in tabs:
        tab.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=30000)
        tab.wait_for_selector("#conn[data-conn=live]", timeout=20000)
        tab.wait_for_function("() => !document.querySelector('.pending')", timeout=20000)
        assert tab.inner_text("#toast") == ""  # applied once: no refusal of a second copy
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 2  # the roll and Bob's cross, applied once
    assert state["state"]["state"]["sheets"][1]["red"] == [7]


def test_a_tap_kept_in_an_offline_tab_is_sent_by_the_tab_still_online(
    browser: Any, server: ServerProcess
) -> None:
    api, table, tid = rolled_qwixx_table(server)
    offline_tab = take_seat(browser, server, table["code"], 1)
    online_tab = second_tab(offline_tab, server, tid)
    network = offline_tab.context.new_cdp_session(offline_tab)  # this tab's network only
    cut = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    network.send("Network.emulateNetworkConditions", {"offline": True, **cut})
    offline_tab.wait_for_selector("#conn[data-conn=offline]", timeout=10000)

    offline_tab.click(f"[data-move='{RED_7}']")
    online_tab.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=20000)
    state = api.get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 2 and state["state"]["state"]["sheets"][1]["red"] == [7]
    assert online_tab.inner_text("#toast") == ""

    network.send("Network.emulateNetworkConditions", {"offline": False, **cut})
    offline_tab.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=30000)
    offline_tab.wait_for_function("() => !document.querySelector('.pending')", timeout=20000)
    assert offline_tab.inner_text("#toast") == ""  # its copy: a duplicate, applied once
    assert api.get(f"/api/tables/{tid}/state").json()["state_id"] == 2


def test_a_table_started_into_a_silent_wifi_says_it_may_or_may_not_be_started(
    browser: Any, server: ServerProcess
) -> None:
    """The start unanswered waited for minutes with the page saying nothing; given up, the
    page says the table may exist and where a started one shows."""
    with SilentRelay(server.port) as wifi:
        host = phone_on_a_test_clock(browser)
        host.goto(f"{wifi.base_url}/")
        host.check("input[name=game][value=qwixx]")
        host.wait_for_selector("#options .option")
        wifi.go_silent()
        host.click("#start-form button[type=submit]")
        clock_runs_until(host, "#start-error:not([hidden])", "the start given up")
        assert host.inner_text("#start-error") == (
            "No answer from the server: the table may or may not have been started; reload"
            " this page: a started game is listed under Games in progress"
        )


# every tap this browser keeps in its outbox (the taps stored, not the refusal notes)
STORED_TAPS = """() => Object.keys(localStorage).filter((key) => key.startsWith("tc-outbox-"))
  .map((key) => localStorage.getItem(key)).filter((item) => item && item.includes('"move"'))"""


def test_a_tap_the_other_tab_got_saved_is_kept_and_sent_no_more_by_the_offline_tab(
    browser: Any, server: ServerProcess
) -> None:
    """The tab still online sends the tap the offline tab keeps, and it is saved: the
    offline tab said "1 tap kept" for as long as it stayed offline, wrote the tap back
    into the outbox they share at each failed reconnect (the other tab had removed it)
    and sent it again once back. It lets it go: nothing kept, nothing sent again."""
    api, table, tid = rolled_qwixx_table(server)
    offline_tab = take_seat(browser, server, table["code"], 1)
    online_tab = second_tab(offline_tab, server, tid)
    sent: list[str] = []
    offline_tab.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    network = tab_offline(offline_tab)

    offline_tab.click(f"[data-move='{RED_7}']")
    online_tab.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=20000)
    offline_tab.wait_for_function(
        "() => !document.getElementById('conn').textContent.includes('kept')", timeout=20000
    )
    assert offline_tab.inner_text("#conn") == (
        "Offline: your taps will be sent when the table is back"
    )
    assert offline_tab.locator(".pending").count() == 0
    assert offline_tab.evaluate(STORED_TAPS) == []

    tab_online(network)
    offline_tab.wait_for_selector("section[data-seat='1'] .box.crossed", timeout=30000)
    offline_tab.wait_for_selector("#conn[data-conn=live]", timeout=20000)
    assert not [frame for frame in sent if '"cross"' in frame]  # not sent again
    for tab in (offline_tab, online_tab):
        assert tab.inner_text("#toast") == ""
    assert api.get(f"/api/tables/{tid}/state").json()["state_id"] == 2


def test_a_tap_both_tabs_send_and_the_table_refuses_is_said_once(
    browser: Any, server: ServerProcess
) -> None:
    """Both tabs of one phone hold the tap made offline in one of them (the other took it
    up), and the host frees the seat meanwhile: back online, each tab sends its copy and
    each got the refusal, so "Not saved: Red 7" showed in both. It shows in one tab; the
    other's copy goes quietly."""
    api, table, tid = rolled_qwixx_table(server)
    first = take_seat(browser, server, table["code"], 1)
    second = second_tab(first, server, tid)
    tabs = (first, second)
    first.context.set_offline(True)
    for tab in tabs:
        tab.wait_for_selector("#conn[data-conn=offline]", timeout=10000)
    first.click(f"[data-move='{RED_7}']")
    for tab in tabs:
        tab.wait_for_function(
            "() => document.getElementById('conn').textContent.includes('1 tap kept')"
        )
    assert api.post(f"/api/tables/{tid}/seats/1/free").status_code == 200

    first.context.set_offline(False)
    for tab in tabs:  # each has had its answer (or let its copy go): nothing waits
        tab.wait_for_selector("#conn[data-conn=refused]", timeout=30000)
        tab.wait_for_function("() => !document.querySelector('.pending')", timeout=30000)

    def said() -> list[str]:
        return [text for text in (tab.inner_text("#toast") for tab in tabs) if text]

    wait_until(lambda: len(said()) == 1, timeout=20, what="the refusal shown by one tab")
    assert said()[0].startswith("Not saved: Red 7. ")
    assert api.get(f"/api/tables/{tid}/state").json()["state_id"] == 1


# busy until the same instant in every tab (the answers arrive meanwhile, and each tab
# reads its own before it can hear of the other's)
BUSY_UNTIL = """(until) => {
  setTimeout(() => { while (Date.now() < until) { /* busy */ } }, 0);
}"""


def test_a_refusal_both_tabs_get_at_one_instant_is_said_once(
    browser: Any, server: ServerProcess
) -> None:
    """Both tabs of one phone hold the tap made offline in one of them, and the host rolls
    again meanwhile: back online, both send it, and the refusals reach both tabs at one
    instant (neither could yet hear that the other had its answer): "Not saved: Red 7"
    showed in both. One tab keeps the line, the other takes its own back."""
    api, table, tid = rolled_qwixx_table(server)
    with SilentRelay(server.port) as wifi:
        first = browser.new_context(**PHONE).new_page()
        join_as_bob(first, wifi, table["code"])
        second = second_tab(first, wifi, tid)
        tabs = (first, second)
        first.context.set_offline(True)
        for tab in tabs:
            tab.wait_for_selector("#conn[data-conn=offline]", timeout=10000)
        first.click(f"[data-move='{RED_7}']")
        for tab in tabs:
            tab.wait_for_function(
                "() => document.getElementById('conn').textContent.includes('1 tap kept')"
            )
        assert api.post(f"/api/tables/{tid}/undo", json={"action_id": "undo-roll"}).is_success
        again = dict(QWIXX_ROLL_7, dice=[dict(d, value=6) for d in QWIXX_ROLL_7["dice"]])
        rolled = api.post(
            f"/api/tables/{tid}/actions", json={"action_id": "roll-again-12", "move": again}
        )
        assert rolled.is_success, rolled.text

        wifi.hold_answers()
        first.context.set_offline(False)
        wait_until(lambda: wifi.held_on() == 2, timeout=30, what="both tabs' answers held")
        until = first.evaluate("() => Date.now()") + 1500
        for tab in tabs:
            tab.evaluate(BUSY_UNTIL, until)
        wifi.release()
        for tab in tabs:  # each has had its answer: nothing waits, the new roll shows
            tab.wait_for_function("() => !document.querySelector('.pending')", timeout=30000)
            tab.wait_for_selector(".banner .die[data-value='6']", timeout=30000)

        def said() -> list[str]:
            return [text for text in (tab.inner_text("#toast") for tab in tabs) if text]

        wait_until(lambda: len(said()) == 1, timeout=20, what="the refusal shown by one tab")
        assert said()[0] == (
            "Not saved: Red 7. The roll changed while you were offline; choose again with this roll"
        )
