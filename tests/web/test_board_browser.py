"""The host's screen in Debian's Chromium.

- The join panel is open while seats are free and folds away by itself when the last
  player (on a phone or a tablet) takes a seat, so the sheets move up the host's laptop
  screen; one tap on its summary brings the code back. It folds too when the game ends,
  without a reload.
- The scoreboard (`/t/{id}/board`, for a laptop or TV) shows every sheet at once without
  scrolling, under the roll and whose turn it is, for every game and on phone, tablet,
  laptop and TV screens, nothing in a sheet standing out of its row.
- "Host tools" shows that it opens with a tap (a disclosure triangle), and sits beside the
  join panel: in reach while the join code is folded away; a tap anywhere on the folded
  bar unfolds it (no link inside it). On a 390 px phone the scoreboard link ("Scoreboard"
  there) and "Host tools" share one row. When the game ends they keep, without a reload,
  only what a finished game still has (export, a seat to look from, "Play again").
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

LAPTOP = {"viewport": {"width": 1280, "height": 800}}
TV = {"viewport": {"width": 1920, "height": 1080}}
TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PHONE_ON_ITS_SIDE = {"viewport": {"width": 844, "height": 390}, "is_mobile": True}


def seat_both_players(browser: Any, server: ServerProcess, table: dict[str, Any]) -> None:
    """Ann's and Bob's devices join with the code and take seats 1 and 2 (every seat)."""
    for seat in (0, 1):
        player = browser.new_context().new_page()
        assert player.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
        seated = player.request.post(
            f"{server.base_url}/api/tables/{table['table_id']}/seat", data={"seat": seat}
        )
        assert seated.ok, seated.text()


def create(page: Any, server: ServerProcess, game: str, players: list[str]) -> dict[str, Any]:
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": game, "options": {"players": len(players)}, "players": players},
    )
    assert created.status == 201, created.text()
    body: dict[str, Any] = created.json()
    return body


def take_seat(browser: Any, server: ServerProcess, code: str, seat: int, device: Any) -> Any:
    page = browser.new_context(**device).new_page()
    page.goto(f"{server.base_url}/join?code={code}")
    page.click("button.primary")
    page.click(f"button[name=seat][value='{seat}']")
    page.wait_for_url("**/sheet")
    return page


def test_the_join_panel_folds_when_every_seat_is_taken(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**LAPTOP).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob", "Cid"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    panel = host.locator("#join-panel")
    assert panel.get_attribute("open") is not None and host.locator("#join-code").is_visible()

    take_seat(browser, server, table["code"], 0, PHONE)
    take_seat(browser, server, table["code"], 1, TABLET)
    host.wait_for_function(
        "() => document.getElementById('seated-count').textContent === '2 of 3 seats taken'"
    )
    assert panel.get_attribute("open") is not None  # a seat is still free: it stays open
    assert host.locator("[data-host-free='1']").get_attribute("hidden") is None
    assert host.locator("[data-host-free='2']").get_attribute("hidden") is not None

    sheet = host.locator("section.sheet[data-seat='0']")
    open_top = sheet.bounding_box()["y"]
    open_height = panel.bounding_box()["height"]
    code_height = host.locator("#join-panel .join-info").bounding_box()["height"]
    take_seat(browser, server, table["code"], 2, PHONE)
    host.wait_for_selector("#join-panel:not([open])", timeout=10000)
    assert host.inner_text("#seated-count") == "3 of 3 seats taken"
    folded = panel.bounding_box()
    assert folded is not None and folded["height"] < 90
    assert not host.locator("#join-code").is_visible()
    # the sheets moved up by what the panel folded away: the join code (and its QR code and
    # address, on a server tablets can reach); the host tools are not in it any more
    assert code_height > 60
    assert open_height - folded["height"] >= code_height - 1
    assert sheet.bounding_box()["y"] < open_top - (open_height - folded["height"]) + 5
    shot(host, "join-panel-folded-laptop")

    host.click("#join-panel .join-toggle")  # one tap brings it back
    assert host.locator("#join-code").is_visible()
    assert host.inner_text("#join-code") == table["code"]
    assert host.locator("[data-host-free='2']").get_attribute("hidden") is None


@pytest.mark.parametrize("opened_by_hand", [False, True])
def test_the_join_panel_folds_when_the_game_ends(
    browser: Any, server: ServerProcess, opened_by_hand: bool
) -> None:
    """A trial: the host's tools followed the end live, the join code stayed unfolded over
    the final scores until a reload. Open by itself (a seat free) or by the host's tap, it
    folds when the game ends, and a seat taken later does not unfold it."""
    host = browser.new_context(**LAPTOP).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    if opened_by_hand:
        seat_both_players(browser, server, table)
        host.wait_for_selector("#join-panel:not([open])", state="attached", timeout=10000)
        host.click("#join-panel .join-toggle")
    assert host.get_attribute("#join-panel", "open") is not None
    assert host.locator("#join-code").is_visible()
    assert host.request.post(f"{server.base_url}/api/tables/{table['table_id']}/end").ok
    host.wait_for_selector(".live.finished", timeout=10000)
    host.wait_for_selector("#join-panel:not([open])", state="attached", timeout=10000)
    assert not host.locator("#join-code").is_visible()
    # the host tools followed the end too ("Play again" in them, folded)
    assert host.get_attribute("[data-host-finished]", "hidden") is None
    if not opened_by_hand:
        take_seat(browser, server, table["code"], 0, PHONE)  # a device looks at the end
        host.wait_for_function(
            "() => document.getElementById('seated-count').textContent === '1 of 2 seats taken'"
        )
        assert host.get_attribute("#join-panel", "open") is None
    shot(host, f"join-panel-folded-at-the-end-{'opened' if opened_by_hand else 'free-seat'}")


# a sheet's parts and its rows whose content stands out of them: a Qwixx or Sixto row's
# score stood 6-12 px past the row's coloured border on the scoreboard (the sheet's padding
# hid it from the fit)
POKING_OUT = """() => {
  const out = [];
  document.querySelectorAll('section.sheet > *, section.sheet [class*="-row"]').forEach((el) => {
    if (!el.clientWidth || getComputedStyle(el).overflowX !== 'visible') return;
    const past = el.scrollWidth - el.clientWidth;
    if (past > 1) out.push(`${el.className}: ${past} px`);
  });
  return out;
}"""


def assert_every_sheet_on_screen(page: Any, count: int) -> None:
    page.wait_for_selector("body[data-board-fitted=yes]")
    assert page.evaluate(POKING_OUT) == []
    size = page.viewport_size
    assert page.evaluate("document.scrollingElement.scrollHeight") <= size["height"] + 1
    assert page.evaluate("document.scrollingElement.scrollWidth") <= size["width"] + 1
    sheets = page.locator("section.sheet")
    assert sheets.count() == count
    for index in range(count):
        box = sheets.nth(index).bounding_box()
        assert box is not None and box["width"] > 0
        assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"] + 1, (index, box)
        assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"] + 1, (index, box)


@pytest.mark.parametrize(
    ("device", "name"),
    [(LAPTOP, "laptop"), (TV, "tv"), (TABLET, "tablet"), (PHONE_ON_ITS_SIDE, "phone")],
)
def test_the_scoreboard_shows_every_sheet_the_roll_and_whose_turn(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = browser.new_context(**device).new_page()
    table = create(page, server, "qwixx", ["Ann", "Bob", "Cid", "Dee"])
    rolled = page.request.post(
        f"{server.base_url}/api/tables/{table['table_id']}/actions",
        data={"action_id": "roll-the-first", "move": QWIXX_ROLL_7},
    )
    assert rolled.status == 200
    page.goto(f"{server.base_url}/t/{table['table_id']}/board")
    page.wait_for_selector("#conn[data-conn=live]")
    assert_every_sheet_on_screen(page, 4)
    assert page.locator(".banner .die").count() == 6  # the roll
    assert page.inner_text(".turn-text").startswith("White sum: waiting for")
    assert page.locator("section.sheet.active .tag").first.inner_text().lower() == "turn"
    shot(page, f"scoreboard-qwixx-{name}")

    # a cross made elsewhere shows at once, and the board still fits
    crossed = page.request.post(
        f"{server.base_url}/api/tables/{table['table_id']}/actions",
        data={
            "action_id": "ann-crosses-7",
            "move": {"kind": "cross", "player": 0, "colour": "red", "number": 7},
        },
    )
    assert crossed.status == 200
    page.wait_for_selector("section.sheet[data-seat='0'] .box.crossed")
    assert_every_sheet_on_screen(page, 4)


@pytest.mark.parametrize(
    ("game", "players"),
    [("sixto", 4), ("sixis", 4), ("sixmix", 5), ("sixes", 8), ("qwixx", 5)],
)
def test_every_game_fits_the_laptop_scoreboard(
    browser: Any, server: ServerProcess, game: str, players: int
) -> None:
    page = browser.new_context(**LAPTOP).new_page()
    names = [f"P{i + 1}" for i in range(players)]
    table = create(page, server, game, names)
    page.goto(f"{server.base_url}/t/{table['table_id']}/board")
    page.wait_for_selector("#conn[data-conn=live]")
    assert_every_sheet_on_screen(page, players)
    assert page.inner_text(".turn-text").strip()
    shot(page, f"scoreboard-{game}-laptop")


def test_host_tools_show_they_open_with_a_tap(browser: Any, server: ServerProcess) -> None:
    """The host tools' summary shows a disclosure triangle that turns when it opens, as "Camera
    settings" next to it does (a flex summary lost the browser's own: it read as a heading)."""
    host = browser.new_context(**LAPTOP).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    marker = "(s) => getComputedStyle(s, '::before').content"
    summary = host.locator(".host-tools > summary")
    # the triangle drawn, its words for a screen reader none (/ "")
    assert summary.evaluate(marker) == '"\u25b8" / ""'
    summary.click()
    host.wait_for_selector(".host-tools[open] [data-host-end]")
    assert summary.evaluate(marker) == '"\u25be" / ""'


# every point along the middle of the folded join bar, from edge to edge: what a tap there
# lands on (the bar's summary, and no link inside it)
BAR_POINTS = """() => {
  const bar = document.getElementById('join-panel').getBoundingClientRect();
  const summary = document.querySelector('#join-panel > summary');
  const y = bar.top + bar.height / 2;
  const missed = [];
  for (let x = bar.left + 2; x < bar.right - 2; x += 8) {
    const hit = document.elementFromPoint(x, y);
    if (!hit || hit.closest('summary') !== summary || hit.closest('a, button')) {
      missed.push([Math.round(x), hit ? hit.outerHTML.slice(0, 60) : null]);
    }
  }
  return missed;
}"""


@pytest.mark.parametrize(("device", "name"), [(LAPTOP, "laptop"), (TABLET, "tablet")])
def test_the_host_tools_are_in_reach_with_the_join_panel_folded(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    """A café's trial: mid-game (every seat taken, the join panel folded) the host found
    "End the game" and "Free a seat" only after unfolding the join code, and a tap in the
    middle of the folded bar opened the scoreboard instead of unfolding it."""
    host = browser.new_context(**device).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    seat_both_players(browser, server, table)
    host.wait_for_selector("#join-panel:not([open])", state="attached", timeout=10000)

    # the host tools open on their own, the join code stays folded
    assert host.locator("#join-panel .host-tools").count() == 0
    assert host.locator(".host-tools > summary").is_visible()
    host.click(".host-tools > summary")
    host.wait_for_selector(".host-tools[open] [data-host-end]")
    assert host.locator("[data-host-end]").is_visible()
    assert host.locator("[data-host-free='0']").is_visible()
    assert host.locator("[data-host-free='1']").is_visible()
    assert host.get_attribute("#join-panel", "open") is None
    assert not host.locator("#join-code").is_visible()
    shot(host, f"host-tools-beside-the-folded-join-panel-{name}")

    # the folded bar is one tap target: every point of its middle unfolds it
    host.click(".host-tools > summary")  # folded again: the bar back as the trial saw it
    host.wait_for_selector(".host-tools:not([open])", state="attached")
    assert host.evaluate(BAR_POINTS) == []
    page_url = host.url
    host.locator("#join-panel").click()  # its middle
    host.wait_for_selector("#join-panel[open]", timeout=5000)
    assert host.locator("#join-code").is_visible()
    assert host.url == page_url  # not the scoreboard
    assert host.locator("#board-link").is_visible()  # the scoreboard: beside the bar
    assert host.inner_text("#board-link") == "Scoreboard for a laptop or TV"


def test_the_host_tools_follow_the_end_of_the_game_without_a_reload(
    browser: Any, server: ServerProcess
) -> None:
    """A players' trial: the host ended the game and the host tools still offered "End the
    game now", "Free a seat" and the automatic passes (all refused now) until a reload; they
    sit outside the part of the page the server redraws."""
    host = browser.new_context(**LAPTOP).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    take_seat(browser, server, table["code"], 0, PHONE)
    host.click(".host-tools > summary")
    host.wait_for_selector(".host-tools[open] [data-host-free='0']")
    assert host.locator("[data-host-auto-pass]").is_visible()
    assert not host.locator(".host-tools [data-play-again]").is_visible()

    host.click("[data-host-end]")
    host.click("[data-host-end]")  # "tap again": ends the game
    host.wait_for_selector(".live.finished")
    for running_only in ("[data-host-end]", "[data-host-free='0']", "[data-host-auto-pass]"):
        host.wait_for_selector(running_only, state="hidden", timeout=5000)
    assert host.get_attribute(".host-tools", "open") is not None  # still open, as it was
    assert host.locator(".host-tools a[href$='/record']").is_visible()  # export remains
    assert host.locator(".host-tools a[href$='/seat']").is_visible()  # a seat to look from
    assert host.locator(".host-tools [data-play-again]").is_visible()  # as a reload shows
    shot(host, "host-tools-after-the-end-laptop")


# the host bar's scoreboard link and "Host tools" on a phone: their boxes, and how wide the
# page is against the window
PHONE_BAR = """() => {
  const box = (sel) => document.querySelector(sel).getBoundingClientRect();
  const link = box('#board-link'), tools = box('#host-tools');
  return {linkTop: link.top, linkRight: link.right, toolsTop: tools.top, toolsLeft: tools.left,
          toolsRight: tools.right, pageWidth: document.documentElement.scrollWidth,
          window: window.innerWidth};
}"""


def assert_one_row_on_the_phone(host: Any) -> None:
    bar = host.evaluate(PHONE_BAR)
    assert abs(bar["linkTop"] - bar["toolsTop"]) <= 6, bar  # one row, not two
    assert bar["linkRight"] <= bar["toolsLeft"], bar  # side by side
    assert bar["toolsRight"] <= bar["window"] and bar["pageWidth"] <= bar["window"], bar


def test_the_scoreboard_link_and_host_tools_share_one_row_on_a_phone(
    browser: Any, server: ServerProcess
) -> None:
    """A 390 px phone: the host bar's scoreboard link and "Host tools" took two rows (the
    link's words and the tools do not fit one); the link says just "Scoreboard" there. One
    row with the join panel open (seats free) and folded (every seat taken), and nothing
    wider than the screen."""
    host = browser.new_context(**PHONE).new_page()
    table = create(host, server, "qwixx", ["Ann", "Bob"])
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    assert host.get_attribute("#join-panel", "open") is not None
    assert host.inner_text("#board-link") == "Scoreboard"
    assert_one_row_on_the_phone(host)
    seat_both_players(browser, server, table)
    host.wait_for_selector("#join-panel:not([open])", state="attached", timeout=10000)
    assert_one_row_on_the_phone(host)
    shot(host, "host-bar-one-row-phone")


TV_SMALL = {"viewport": {"width": 1366, "height": 768}}
# what a glance from across the room reads: every number, the scores large (effective px:
# the font size times the zoom board.js gives the sheets)
READ_SIZES = """() => {
  const zoom = parseFloat(document.querySelector('.sheets').style.zoom || '1');
  const px = (sel, zoomed) => Array.from(document.querySelectorAll(sel))
    .filter((e) => e.getClientRects().length && e.textContent.trim())
    .map((e) => parseFloat(getComputedStyle(e).fontSize) * (zoomed ? zoom : 1));
  return {numbers: px('.sheets .box, .sheets .sxi-points', true),
          totals: px('.sheets .sheet-total', true), strip: px('.score-strip strong', false)};
}"""


@pytest.mark.parametrize("game", ["qwixx", "sixto", "sixis", "sixmix", "sixes"])
def test_the_scoreboard_reads_from_across_the_room(
    browser: Any, server: ServerProcess, game: str
) -> None:
    """Issue 26 item 8: on a 1366x768 TV with three players every sheet shows at once with
    its numbers at 16 px or more (they were 7-10.8 px: the phone's sheets scaled to 0.59),
    and the scores large."""
    page = browser.new_context(**TV_SMALL).new_page()
    table = create(page, server, game, ["Ann", "Bob", "Cid"])
    page.goto(f"{server.base_url}/t/{table['table_id']}/board")
    page.wait_for_selector("#conn[data-conn=live]")
    assert_every_sheet_on_screen(page, 3)
    sizes = page.evaluate(READ_SIZES)
    if game != "sixes":  # Sixes' sheet is a purse: its numbers are the totals
        assert sizes["numbers"] and min(sizes["numbers"]) >= 16, (game, min(sizes["numbers"]))
    assert min(sizes["totals"]) >= 24 and min(sizes["strip"]) >= 24, sizes
    shot(page, f"scoreboard-tv-{game}")


LONG_NAMES = ["W" * 40, "M" * 40]  # the longest names a table takes, with no space to wrap at


@pytest.mark.parametrize("game", ["qwixx", "sixis", "sixmix"])
def test_forty_letter_names_keep_every_page_within_a_phone_s_width(
    browser: Any, server: ServerProcess, game: str
) -> None:
    """Two players named with 40 letters and no space: on a 390 px phone the start page
    (715 px wide), the seat page (527), the table page (795), the scoreboard (972) and the
    sheet (689) scrolled sideways, the turn line, the score strip, the sheet's heading and
    the name columns of the score tables holding the names whole. A name now breaks where
    it must; a name that fits is laid out as before."""
    phone = browser.new_context(**PHONE).new_page()
    table = create(phone, server, game, LONG_NAMES)
    table_id = table["table_id"]
    pages = {
        "/": "li.playing-game",
        f"/t/{table_id}/seat": "button.seat",
        f"/t/{table_id}": "#conn[data-conn=live]",
        f"/t/{table_id}/board": "#conn[data-conn=live]",
    }
    widths = {}
    for path, ready in pages.items():
        phone.goto(server.base_url + path)
        phone.wait_for_selector(ready)
        widths[path] = phone.evaluate("document.scrollingElement.scrollWidth")
    player = take_seat(browser, server, table["code"], 0, PHONE)
    player.wait_for_selector("#conn[data-conn=live]")
    widths["sheet"] = player.evaluate("document.scrollingElement.scrollWidth")
    assert all(width <= 391 for width in widths.values()), widths
    assert LONG_NAMES[0] in player.inner_text(".player-name")  # the name, whole, broken
    shot(player, f"forty-letter-names-{game}-sheet-phone")
