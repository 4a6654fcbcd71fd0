"""Problems a QA pass found as a player sees them, in Debian's Chromium against a real
server: the host's "End the game now" reaches every open screen without a reload; the end
card of every game, with five long names (Sixto: 6 rows + 9 columns), fits a phone held
upright, no sideways scroll; history links are finger-sized; Sixto's column numbers fit their column on a phone
held upright; a wrong join code is refused in a sentence; a host action the server never got says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot

pytestmark = pytest.mark.browser

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"
TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}


def import_record(page: Any, server: ServerProcess, game: str) -> str:
    """Import docs/records/<game>.json from this browser (it becomes the host) and open it."""
    record = json.loads((RECORDS / f"{game}.json").read_text())
    response = page.request.post(server.base_url + "/api/import", data=record)
    assert response.status == 201, response.text()
    url = server.base_url + response.json()["url"]
    page.goto(url)
    page.wait_for_selector("#conn[data-conn=live]")
    return url


def test_ending_the_game_reaches_every_open_screen(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**TABLET).new_page()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    body = created.json()
    host.goto(server.base_url + body["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    ann = browser.new_context(**PHONE).new_page()
    ann.goto(f"{server.base_url}/join?code={body['code']}")
    ann.click("button.primary")
    ann.click("button[name=seat][value='0']")
    ann.wait_for_url("**/sheet")
    ann.wait_for_selector("#conn[data-conn=live]")
    assert ann.locator(".roll-entry").count() == 1

    host.click(".host-tools summary")
    host.click("[data-host-end]")  # asks "tap again" first (no native dialog)
    host.wait_for_selector("[data-host-end].armed")
    assert host.inner_text("[data-host-end]").startswith("Tap again to end the game")
    assert ann.locator(".outcome").count() == 0
    host.click("[data-host-end]")
    # no reload: the pushed fragment shows the end on both screens
    for page in (host, ann):
        page.wait_for_selector(".outcome", timeout=5000)
        assert page.inner_text(".turn-text") == "The host ended this game"
        assert page.locator(".roll-entry").count() == 0
    shot(ann, "qa-ended-by-host-phone")


LONG_NAMES = ["Alexandra", "Maximilian", "Christopher", "Josephine", "Bartholomew"]

# what does not fit on an end screen: the page's width beyond the viewport, each element
# of the end card whose content is wider than its box (a sideways scroll, or clipped
# column heads), and each of its cells or words that reaches past the card's edges
OVERFLOW = """() => {
  const root = document.documentElement;
  const card = document.querySelector('.outcome');
  const edge = card.getBoundingClientRect();
  const all = Array.from(card.querySelectorAll('*'));
  // what is out of sight on purpose: its box clipped away (the heads a screen reader
  // reads where each entry shows its own label) or hidden
  const outOfSight = (e) => {
    for (let a = e; a && a !== card; a = a.parentElement) {
      if (getComputedStyle(a).clip !== 'auto') return true;
    }
    return e.getClientRects().length === 0 || getComputedStyle(e).visibility === 'hidden';
  };
  const shown = (e) => !outOfSight(e);
  const name = (e) => `${e.tagName} ${e.className} "${e.textContent.trim().slice(0, 20)}"`;
  return {
    page: root.scrollWidth - root.clientWidth,
    wide: all.filter((e) => shown(e) && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1).map(name),
    outside: all.filter((e) => shown(e) && e.getBoundingClientRect().width > 0)
      .filter((e) => { const r = e.getBoundingClientRect(); return r.left < edge.left - 1 || r.right > edge.right + 1; })
      .map(name),
  };
}"""


def long_named_record(game_name: str) -> dict[str, Any]:
    """A finished game's record as a table plays it: 5 players with longish names (Sixis,
    for 2 to 4: 4), moved at random from a fixed seed to the game's own end."""
    import random

    from companion.rules.registry import find_game
    from companion.rules.session import Session
    from companion.simulate import random_action

    game = find_game(game_name)
    players = LONG_NAMES[: 4 if game_name == "sixis" else 5]
    session = Session(game, game.options_for(len(players)), players)
    rng = random.Random(1)
    while session.outcome() is None:
        # Sixes: its voluntary end only once nothing else is legal, a full game
        session.act(random_action(game, session.state, rng, frozenset({"end_game"})))
    return session.to_record()


@pytest.mark.parametrize("game_name", ["qwixx", "sixto", "sixis", "sixmix", "sixes"])
def test_the_end_card_fits_an_upright_phone(
    browser: Any, server: ServerProcess, game_name: str
) -> None:
    """A trial on phones (390 px): the final score table scrolled sideways in its box and
    its column heads were clipped under the sticky name and Total columns (Sixto's 15
    columns, Qwixx's and Sixmix's with five long names). On the table view, the
    scoreboard and a player's sheet it fits: nothing wider than its box, nothing past the
    card's edges, no sideways scroll of the page; every entry is still there, by name."""
    phone = browser.new_context(**PHONE).new_page()
    record = long_named_record(game_name)
    imported = phone.request.post(server.base_url + "/api/import", data=record)
    assert imported.status == 201, imported.text()
    table_url = server.base_url + imported.json()["url"]
    table_id = imported.json()["table_id"]
    seated = phone.request.post(f"{server.base_url}/api/tables/{table_id}/seat", data={"seat": 0})
    assert seated.ok, seated.text()
    for screen in ("", "/board", "/sheet"):
        phone.goto(table_url + screen)
        phone.wait_for_selector("#conn[data-conn=live]")  # the socket's redraw is in
        if screen == "/board":
            phone.wait_for_selector("body[data-board-fitted=yes]")
        found = phone.evaluate(OVERFLOW)
        assert found == {"page": 0, "wide": [], "outside": []}, (screen, found)
        words = phone.inner_text(".outcome")
        for name in record["players"]:
            assert name in words, (screen, name)
        shot(phone, f"qa-end-card-{game_name}{screen.replace('/', '-')}-phone")


def test_history_links_are_finger_sized(browser: Any, server: ServerProcess) -> None:
    phone = browser.new_context(**PHONE).new_page()
    import_record(phone, server, "qwixx")
    phone.goto(server.base_url + "/history")
    sizes = phone.evaluate(
        "() => Array.from(document.querySelectorAll('.history a'),"
        " (a) => [a.textContent, a.getBoundingClientRect().height])"
    )
    assert sizes and all(height >= 44 for _, height in sizes), sizes


def test_sixto_column_numbers_fit_their_column_on_an_upright_phone(
    browser: Any, server: ServerProcess
) -> None:
    phone = browser.new_context(**PHONE).new_page()
    import_record(phone, server, "sixto")
    # each label of the turned sheet's number column ends before the first colour column
    # starts (they used to be box-wide and hide under it) and shows its whole text
    clipped = phone.evaluate(
        """() => {
          const sheet = document.querySelector('.sheet.game-sixto');
          const firstRow = sheet.querySelector('.sx-row').getBoundingClientRect();
          const labels = sheet.querySelectorAll('.sx-head > *, .sx-foot .sx-rowpts.sum');
          return Array.from(labels)
            .filter((e) => e.textContent.trim())
            .filter((e) => e.closest('.sx-foot') ? e.scrollWidth > e.clientWidth + 1
                          : e.getBoundingClientRect().right > firstRow.left + 1)
            .map((e) => e.textContent.trim());
        }"""
    )
    assert clipped == []
    shot(phone, "qa-sixto-final-sheet-phone")


def test_the_start_form_speaks_in_seats_and_names(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**TABLET).new_page()
    host.goto(server.base_url + "/")
    host.check("input[name=game][value=sixis]")
    host.fill("#player-count", "3")
    # the name fields follow the number as it is typed, before the field is left
    host.wait_for_function("() => document.querySelectorAll('#names label').length === 3")
    host.dispatch_event("#player-count", "change")
    for index, name in enumerate(["Ann", "Bob", "Cid"]):
        host.fill(f"#names label:nth-of-type({index + 1}) input", name)
    # the first player is chosen by name (it used to be a 0-based seat number)
    assert host.locator("select[name=first_player] option").all_inner_texts() == [
        "Seat 1: Ann",
        "Seat 2: Bob",
        "Seat 3: Cid",
    ]
    host.select_option("select[name=first_player]", "1")
    # each table gets its own deal (every Sixis table used to get seed 0, the same cards)
    seeds = {host.input_value("input[name=deal_seed]")}
    host.reload()
    host.check("input[name=game][value=sixis]")
    seeds.add(host.input_value("input[name=deal_seed]"))
    assert len(seeds) == 2 and "0" not in seeds
    host.fill("#player-count", "3")
    host.dispatch_event("#player-count", "change")
    host.fill("#names label:nth-of-type(2) input", "Bob")
    host.select_option("select[name=first_player]", "1")
    host.click("button[type=submit].primary")
    host.wait_for_url("**/t/*")
    assert host.inner_text(".turn-text") == "Bob rolls the dice"

    # an unset option (Sixes' rollers) is an empty field meaning "default", not "null"
    host.goto(server.base_url + "/")
    host.check("input[name=game][value=sixes]")
    assert host.input_value("input[name=rollers]") == ""
    host.click("button[type=submit].primary")
    host.wait_for_url("**/t/*")
    assert "turn 1 of 8" in host.inner_text(".sixes-common")  # default: 2 rounds of 4


def test_importing_a_file_that_is_not_json_says_so(
    browser: Any, server: ServerProcess, tmp_path: Path
) -> None:
    host = browser.new_context(**TABLET).new_page()
    host.goto(server.base_url + "/")
    not_json = tmp_path / "notes.json"
    not_json.write_text("hello")
    host.set_input_files("#record-file", str(not_json))
    host.click("#import-form button[type=submit]")
    host.wait_for_selector("#import-error:not([hidden])")
    assert host.inner_text("#import-error") == "notes.json is not a game record: it is not JSON."


def test_the_start_page_fits_an_upright_phone(browser: Any, server: ServerProcess) -> None:
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(server.base_url + "/")
    widths = phone.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths  # the file field of the import used to stick out


def test_a_stale_table_link_shows_a_page_not_json(browser: Any, server: ServerProcess) -> None:
    phone = browser.new_context(**PHONE).new_page()
    response = phone.goto(server.base_url + "/t/nosuchtable1/sheet")
    assert response is not None and response.status == 404
    assert phone.inner_text("h1") == "Not found"
    assert phone.locator("a[href='/join']").count() >= 1
    # the API still answers JSON to scripts
    api = phone.request.get(server.base_url + "/api/tables/nosuchtable1/state")
    assert api.status == 404 and api.json()["message"] == "no such table"


def qwixx_table_with_ann_on_her_phone(
    browser: Any, server: ServerProcess, device: dict[str, Any] | None = None
) -> tuple[Any, Any, dict[str, Any]]:
    """A two-player Qwixx table made from the host's tablet, and Ann seated from her phone
    on her sheet: (host page, Ann's page, the created table's JSON)."""
    host = browser.new_context(**TABLET).new_page()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    ann = browser.new_context(**(device or PHONE)).new_page()
    ann.goto(f"{server.base_url}/join?code={created['code']}")
    ann.click("button.primary")
    ann.click("button[name=seat][value='0']")
    ann.wait_for_url("**/sheet")
    return host, ann, created


def test_a_players_links_on_the_table_view_are_finger_sized(
    browser: Any, server: ServerProcess
) -> None:
    host, ann, created = qwixx_table_with_ann_on_her_phone(browser, server)
    ann.goto(server.base_url + created["url"])  # the table view, from her phone
    sizes = ann.evaluate(
        "() => Array.from(document.querySelectorAll('.viewer-links a'),"
        " (a) => [a.textContent, a.getBoundingClientRect().height])"
    )
    assert [text for text, _ in sizes] == ["Take a seat", "My sheet", "Scoreboard"]
    assert all(height >= 44 for _, height in sizes), sizes


@pytest.mark.parametrize("device", [PHONE, TABLET], ids=["phone", "tablet"])
def test_a_freed_seat_stops_offering_its_dice_on_the_old_device(
    browser: Any, server: ServerProcess, device: dict[str, Any]
) -> None:
    host, ann, created = qwixx_table_with_ann_on_her_phone(browser, server, device)
    ann.wait_for_selector("#conn[data-conn=live]")
    assert ann.locator(".roll-entry").count() == 1  # Ann rolls first
    freed = host.request.post(f"{server.base_url}/api/tables/{created['table_id']}/seats/0/free")
    assert freed.status == 200
    # without a reload, her old phone no longer offers Ann's roll entry
    ann.wait_for_selector(".roll-entry", state="detached", timeout=5000)
    # and says so, at the top, with the way back (issue 26 item 6)
    notice = ann.locator(".banner .seat-freed")
    notice.wait_for(timeout=5000)
    assert "The host freed your seat" in notice.inner_text()
    assert ann.evaluate("document.querySelector('.seat-freed').getBoundingClientRect().top") < 200
    # the connection line agrees (it said "Offline: your taps will be sent..." beside it)
    ann.wait_for_selector("#conn[data-conn=refused]", timeout=10000)
    assert "Offline" not in ann.inner_text(".banner")
    # the players' tablets: "TURN / TO ACT" still stood under the notice, as if she played;
    # the turn and the sheets' tags are gone and the sheets greyed
    assert ann.locator(".turn-text:visible, .sheet-head .tag:visible").count() == 0
    assert ann.evaluate("getComputedStyle(document.querySelector('.sheets')).opacity") == "0.5"
    shot(ann, f"seat-freed-{'phone' if device is PHONE else 'tablet'}")
    notice.locator("a").click()  # her token went with the seat: back through the join code
    ann.wait_for_url("**/join")
    ann.fill("#code", created["code"])
    ann.click("button.primary")
    ann.wait_for_url("**/seat")


def test_a_qwixx_final_breakdown_fits_an_upright_phone(browser: Any, server: ServerProcess) -> None:
    phone = browser.new_context(**PHONE).new_page()
    import_record(phone, server, "qwixx")
    widths = phone.evaluate(
        "() => [document.querySelector('.breakdown').scrollWidth,"
        " document.querySelector('.breakdown-scroll').clientWidth]"
    )
    assert widths[0] <= widths[1], widths  # player, 4 rows, penalties, total: no scrolling
    shot(phone, "qa-qwixx-final-phone")


def test_a_wrong_join_code_is_refused_in_a_sentence(browser: Any, server: ServerProcess) -> None:
    """A player who mistypes the code reads a sentence that starts with a capital (it read
    "no table has the code 'WRONG1'"), and the field keeps what was typed."""
    page = browser.new_context(**PHONE).new_page()
    page.goto(server.base_url + "/join")
    page.fill("#code", "wrong1")
    page.click("button.primary")
    error = page.locator(".join-form .error")
    error.wait_for(timeout=5000)
    assert error.inner_text() == "No table has the code 'wrong1'"
    assert page.input_value("#code") == "wrong1"


def test_ending_the_game_while_the_server_is_down_says_it_did_not_happen(
    browser: Any, server: ServerProcess
) -> None:
    """The host taps "End the game now" while the server is unreachable: the page says the
    game was not ended (it said nothing at all, the promise failed silently)."""
    page = browser.new_context(**TABLET).new_page()
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    page.goto(server.base_url + created.json()["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    page.click(".host-tools > summary")
    server.kill()
    page.wait_for_selector("#conn[data-conn=offline]", timeout=10000)
    page.click("[data-host-end]")
    page.wait_for_selector("[data-host-end].armed")
    page.click("[data-host-end]")
    page.wait_for_selector("#toast:not(:empty)", timeout=5000)
    assert page.inner_text("#toast").startswith("Not sent: the server cannot be reached")
    assert page.locator(".outcome").count() == 0
