"""Playing a finished game again, in Debian's Chromium against a real server: the host taps
"Play again with the same players", and a seated player's tablet, still on its finished
sheet, follows with one tap to its seat in the new game (no join code); a TV's scoreboard
follows to the new game's scoreboard."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET, seated_page

pytestmark = pytest.mark.browser


class DeafLink:
    """The WebSocket link between one page and the real server, passed through both ways
    until `deaf`: then what the server sends the page is dropped (a push lost on the
    way), while the page's own frames still go through."""

    def __init__(self, page: Any) -> None:
        self.deaf = False
        page.route_web_socket(re.compile(r".*/ws\?view=.*"), self._route)

    def _route(self, route: Any) -> None:
        server = route.connect_to_server()
        server.on_message(lambda message: None if self.deaf else route.send(message))


def test_the_host_plays_again_and_a_players_tablet_follows_with_one_tap(
    browser: Any, server: ServerProcess
) -> None:
    host = browser.new_context(**TABLET).new_page()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    table = created.json()
    host.goto(server.base_url + table["url"])
    host.wait_for_selector("#conn[data-conn=live]")
    bob = seated_page(browser, server, table, 1, TABLET)
    tv = browser.new_context(**PHONE).new_page()
    assert tv.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    tv.goto(f"{server.base_url}/t/{table['table_id']}/board")
    tv.wait_for_selector("#conn[data-conn=live]")

    host.click(".host-tools summary")
    host.click("[data-host-end]")
    host.click("[data-host-end]")  # "tap again": ends the game
    bob.wait_for_selector(".outcome")
    assert bob.locator("[data-next-seat]").count() == 0  # nothing to follow yet

    host.click(".banner [data-play-again]")  # pushed onto the host's screen when the game ended
    host.wait_for_url(lambda url: table["table_id"] not in url)
    host.wait_for_selector("#conn[data-conn=live]")
    new_id = host.eval_on_selector("[data-table-id]", "page => page.dataset.tableId")
    assert host.locator("[data-host-end]").count() == 1  # the host of the new game

    # Bob's tablet, not reloaded, is told and takes his seat with one tap
    follow = bob.wait_for_selector("[data-next-seat]")
    assert follow.inner_text() == "Next game ready: tap to take your seat"
    shot(bob, "play-again-finished-sheet")
    follow.click()
    bob.wait_for_url(f"**/t/{new_id}/sheet")
    bob.wait_for_selector("#conn[data-conn=live]")
    assert bob.locator(".sheet[data-seat='1'].markable").count() == 1
    assert bob.inner_text(".sheet .player-name").startswith("Bob")
    assert bob.locator(".outcome").count() == 0
    # the new game's host sees Bob seated (Ann has not followed yet)
    host.wait_for_selector("#seated-count:has-text('1 of 2 seats taken')")

    # the TV watched: it opens the new game's scoreboard by itself (nobody taps a TV)
    tv.wait_for_url(f"**/t/{new_id}/board")
    tv.wait_for_selector("#conn[data-conn=live]")


def test_a_players_finished_sheet_is_told_where_a_moved_game_goes_on(
    browser: Any, server: ServerProcess
) -> None:
    """Export, end, import (a full table's move): Ann's tablet, on the old table's sheet and
    not reloaded, is told the game continues at a new table and to ask the host for its
    code; it is given no way in (no code, no button)."""
    context = browser.new_context(**TABLET)
    api = server.base_url + "/api/tables"
    created = context.request.post(
        api, data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]}
    )
    assert created.status == 201
    table = created.json()
    ann = seated_page(browser, server, table, 0, PHONE)
    record = context.request.get(f"{api}/{table['table_id']}/record").json()
    assert context.request.post(f"{api}/{table['table_id']}/end").ok
    ann.wait_for_selector(".outcome")
    imported = context.request.post(server.base_url + "/api/import", data=record)
    assert imported.status == 201
    pointer = ann.wait_for_selector(".next-game-pointer")
    assert pointer.inner_text() == (
        "This game continues at a new table: ask the host for its join code."
    )
    assert imported.json()["code"] not in ann.content()
    assert ann.locator("[data-next-seat], [data-play-again]").count() == 0


def test_a_finished_screen_hears_at_once_that_the_host_freed_its_next_place(
    browser: Any, server: ServerProcess
) -> None:
    """Ann took her seat in the next game (from another screen of her phone) and the host
    freed it there. Her finished sheet, left open, offered "Next game ready" until a tap
    was refused, a reload or a reconnect; it is now told over its socket as the host frees
    the place: the button gives way to asking the host for the join code, untapped."""
    host = browser.new_context(**TABLET)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    table = created.json()
    ann = seated_page(browser, server, table, 0, PHONE)
    old = f"{server.base_url}/api/tables/{table['table_id']}"
    assert host.request.post(f"{old}/end").ok
    assert host.request.post(f"{old}/play_again").status == 201
    button = ann.locator("[data-next-seat]")
    expect(button).to_be_visible(timeout=20000)
    carried = ann.context.request.post(f"{old}/next_seat")
    assert carried.ok, carried.text()
    next_id = carried.json()["table_id"]
    freed = host.request.post(f"{server.base_url}/api/tables/{next_id}/seats/0/free")
    assert freed.ok, freed.text()

    pointer = ann.locator(".next-game-pointer")
    expect(pointer).to_contain_text("ask the host for the next game's join code", timeout=20000)
    expect(button).to_have_count(0, timeout=20000)
    expect(ann.locator("#conn[data-conn=live]")).to_have_count(1)  # no reconnect did it


def test_a_finished_screen_left_open_stops_offering_a_next_place_the_host_freed(
    browser: Any, server: ServerProcess
) -> None:
    """Ann took her seat in the next game (from another screen of her phone) and the host
    freed it there. Her finished sheet, left open, still offered "Next game ready", and
    every tap was refused (`carried_once`). Its socket now tells it at once; where that
    word never arrived (here the server's frames to the page are dropped), the refused tap
    turns the button into the words that her place was given up and to ask the host for
    the join code; the sheet opened again shows those words, with no button."""
    host = browser.new_context(**TABLET)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    table = created.json()
    ann = seated_page(browser, server, table, 0, PHONE)
    deaf = DeafLink(ann)
    ann.reload()
    ann.wait_for_selector("#conn[data-conn=live]")
    old = f"{server.base_url}/api/tables/{table['table_id']}"
    assert host.request.post(f"{old}/end").ok
    assert host.request.post(f"{old}/play_again").status == 201
    button = ann.locator("[data-next-seat]")
    expect(button).to_be_visible(timeout=20000)
    deaf.deaf = True
    carried = ann.context.request.post(f"{old}/next_seat")
    assert carried.ok, carried.text()
    next_id = carried.json()["table_id"]
    freed = host.request.post(f"{server.base_url}/api/tables/{next_id}/seats/0/free")
    assert freed.ok, freed.text()

    button.click()
    expect(ann.locator("#toast")).to_contain_text("join code", timeout=20000)
    deaf.deaf = False  # the screen asks again after the refusal (a sync), and hears it
    pointer = ann.locator(".next-game-pointer")
    expect(pointer).to_contain_text("place at the next game was given up", timeout=20000)
    expect(button).to_have_count(0, timeout=20000)
    shot(ann, "play-again-next-place-freed")
    ann.reload()
    ann.wait_for_selector("#conn[data-conn=live]")
    expect(pointer).to_contain_text("ask the host for the next game's join code")
    expect(button).to_have_count(0)
