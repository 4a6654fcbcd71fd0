"""The small things of issue 17, in Debian's Chromium on phone and tablet screens: the
games in progress on the start page, the winner line of a game the host ended, history
times in the browser's own time zone, the "rolling" tag only while someone rolls, freeing
a seat asks once, and no text under 12 px on a phone."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from companion.rules.registry import GAME_NAMES, find_game
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES, PHONE, TABLET
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


SMALL_TEXT = """() => Array.from(document.querySelectorAll('body *'))
  .filter((e) => e.checkVisibility()
    && Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim()))
  .filter((e) => parseFloat(getComputedStyle(e).fontSize) < 12)
  .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${getComputedStyle(e).fontSize}`)"""


def three_players_or_the_nearest(game: str) -> list[str]:
    """A usual table of three, or the count nearest it that the game allows (so a game for
    two only, or for four and more, is tested too)."""
    allowed = find_game(game).players
    count = max(allowed.low, 3 if allowed.high is None else min(3, allowed.high))
    return ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"][:count]


def new_table(page: Any, server: ServerProcess, game: str, players: list[str]) -> dict[str, Any]:
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": game, "options": {"players": len(players)}, "players": players},
    )
    assert created.status == 201, created.text()
    body: dict[str, Any] = created.json()
    body["api"] = f"{server.base_url}/api/tables/{body['table_id']}"
    return body


def act(page: Any, table: dict[str, Any], action_id: str, move: dict[str, Any]) -> None:
    answer = page.request.post(
        f"{table['api']}/actions", data={"action_id": action_id, "move": move}
    )
    assert answer.status == 200, answer.text()


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_start_page_lists_the_games_in_progress(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = browser.new_context(**device).new_page()
    running = new_table(page, server, "qwixx", ["Ann", "Bob"])
    ended = new_table(page, server, "sixto", ["Cid", "Dee"])
    assert page.request.post(f"{ended['api']}/end").status == 200
    page.goto(server.base_url + "/")
    games = page.locator("#in-progress .playing-game")
    assert games.count() == 1  # the ended game is in the history, not here
    text = games.first.inner_text()
    assert "Qwixx: Ann, Bob" in text and running["code"] in text and "UTC" not in text
    shot(page, f"start-in-progress-{name}")
    games.first.locator("a").click()
    page.wait_for_url(f"**/t/{running['table_id']}")
    page.wait_for_selector("#conn[data-conn=live]")


def test_a_game_on_the_servers_screen_opens_its_join_form_with_the_code_filled_in(
    browser: Any, server: ServerProcess
) -> None:
    """A café owner's trial: the server's own start page (this browser is on loopback)
    lists a game with its join code, and tapping it led to an empty join form, the code
    to be typed from the line beside it. Now the form opens filled in: one tap joins."""
    host = browser.new_context(**TABLET).new_page()  # the host's own tablet
    table = new_table(host, server, "qwixx", ["Ann", "Bob"])
    owner = browser.new_context().new_page()  # the server's screen, not at that table yet
    owner.goto(server.base_url + "/")
    owner.locator("#in-progress .playing-game a", has_text="Qwixx: Ann, Bob").click()
    owner.wait_for_url(f"**/join?code={table['code']}")
    assert owner.locator("#code").input_value() == table["code"]
    owner.locator(".join-form button[type=submit]").click()
    owner.wait_for_url(f"**/t/{table['table_id']}/seat")
    owner.goto(server.base_url + "/")  # joined now: the game opens directly
    owner.locator("#in-progress .playing-game a", has_text="Qwixx: Ann, Bob").click()
    owner.wait_for_url(f"**/t/{table['table_id']}")
    owner.wait_for_selector("#conn[data-conn=live]")


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_game_the_host_ends_shows_its_winner(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = browser.new_context(**device).new_page()
    table = new_table(page, server, "qwixx", ["Ann", "Bob"])
    act(page, table, "roll-00001", QWIXX_ROLL_7)
    act(page, table, "bob-red-7", {"kind": "cross", "player": 1, "colour": "red", "number": 7})
    page.goto(server.base_url + table["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.request.post(f"{table['api']}/end").status == 200
    page.wait_for_selector(".outcome")
    assert page.inner_text(".outcome .winners") == (
        "Winner: Bob (ahead when the host ended the game)"
    )
    assert page.locator("section.sheet.winner").get_attribute("data-seat") == "1"
    shot(page, f"host-ended-winner-{name}")
    page.goto(server.base_url + "/history")
    bob = page.locator(".history-game .ranking li.winner")
    assert bob.count() == 1 and bob.inner_text().startswith("Bob: 1")


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Tokyo"])
def test_history_times_are_in_the_browsers_time_zone(
    browser: Any, server: ServerProcess, zone: str
) -> None:
    page = browser.new_context(**PHONE, timezone_id=zone, locale="en-US").new_page()
    table = new_table(page, server, "qwixx", ["Ann", "Bob"])
    assert page.request.post(f"{table['api']}/end").status == 200
    page.goto(server.base_url + "/history")
    moment = page.locator(".history-game time")
    ended = datetime.fromisoformat(str(moment.get_attribute("datetime")))
    local = ended.astimezone(ZoneInfo(zone))
    shown = moment.inner_text()
    assert "UTC" not in shown
    # en-US, short time: "3:04 PM"
    assert re.search(rf"\b{local.hour % 12 or 12}:{local.minute:02d}\s?[AP]M\b", shown), shown


def test_the_rolling_tag_shows_only_while_someone_rolls(
    browser: Any, server: ServerProcess
) -> None:
    page = browser.new_context(**TABLET).new_page()
    table = new_table(page, server, "qwixx", ["Ann", "Bob"])
    page.goto(server.base_url + table["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    ann = page.locator("section.sheet[data-seat='0'] .player-name")
    assert "ROLLING" in ann.inner_text().upper()  # the dice are awaited from Ann
    act(page, table, "roll-00001", QWIXX_ROLL_7)
    page.wait_for_selector(".live[data-state-id='1']")
    assert "ROLLING" not in ann.inner_text().upper()  # the dice lie: everyone marks
    assert page.locator("section.sheet[data-seat='0'] .tag.turn").count() == 1
    assert page.locator(".tag:text-is('rolling')").count() == 0


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_freeing_a_seat_asks_once(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host = browser.new_context(**device).new_page()
    table = new_table(host, server, "qwixx", ["Ann", "Bob"])
    ann = browser.new_context().new_page()
    assert ann.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    assert ann.request.post(f"{table['api']}/seat", data={"seat": 0}).ok
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    host.click(".host-tools summary")
    free = host.locator("[data-host-free='0']")
    assert free.inner_text() == "Ann"
    free.click()
    assert free.inner_text() == "Tap again to free Ann's seat"
    assert host.inner_text("#seated-count") == "1 of 2 seats taken"  # nothing freed yet
    shot(host, f"free-seat-asks-{name}")
    free.click()
    host.wait_for_function(
        "() => document.getElementById('seated-count').textContent === '0 of 2 seats taken'"
    )
    assert free.get_attribute("hidden") is not None


def roll_something(page: Any) -> None:
    """The active player's dice entry, filled at random and sent (if the game waits for it)."""
    if page.locator("[data-roll-random]").count():
        state = page.locator(".live").get_attribute("data-state-id")
        page.click("[data-roll-random]")
        page.click("[data-roll-submit]")
        page.wait_for_selector(f".live:not([data-state-id='{state}'])")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_no_text_under_12_px_on_a_phone(browser: Any, server: ServerProcess, game: str) -> None:
    page = browser.new_context(**PHONE).new_page()
    table = new_table(page, server, game, three_players_or_the_nearest(game))
    page.goto(server.base_url + table["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.evaluate(SMALL_TEXT) == [], "table view before the roll"
    roll_something(page)
    assert page.evaluate(SMALL_TEXT) == [], "table view after a roll"
    assert page.request.post(f"{table['api']}/seat", data={"seat": 0}).ok
    page.goto(server.base_url + table["url"] + "/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.evaluate(SMALL_TEXT) == [], "own sheet"
    for path in ("/", "/join", "/history", f"/t/{table['table_id']}/log"):
        page.goto(server.base_url + path)
        assert page.evaluate(SMALL_TEXT) == [], path
