"""A table whose stored log holds a corrupted move, in Debian's Chromium, from a player's
phone on the network: its table page says the stored table is damaged and links to the
game's log, which shows the stored log read-only, the damaged entry marked with why (the
whole table answered 409 before, the log page too; a move stored as text that is not JSON
answered 500). Against the real `companion serve` process and its SQLite file.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from playwright.sync_api import expect

from companion.table.access import hash_token
from companion.table.store import LogEntry, Store
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


def store_damaged_table(server: ServerProcess) -> None:
    """Table "damaged": Ann (device token-ann, not the host) and Bob's Qwixx game whose
    second log entry is no longer JSON."""
    store = Store.open(server.data_dir / "companion.sqlite3")
    roll = LogEntry(1, "roll-1", "move", "camera", QWIXX_ROLL_7)
    ann = LogEntry(2, "pass-1", "move", "0", {"kind": "pass", "player": 0})
    bob = LogEntry(3, "pass-2", "move", "1", {"kind": "pass", "player": 1})
    store.create_table(
        "damaged", "DMG001", "qwixx", {"players": 2}, ["Ann", "Bob"], [roll, ann, bob]
    )
    store.add_device(hash_token("token-ann"), "damaged", False, 0)
    store.close()
    db = sqlite3.connect(server.data_dir / "companion.sqlite3")
    db.execute('UPDATE actions SET move_json = \'{"kind": "pa\' WHERE seq = 2')
    db.commit()
    db.close()


def test_a_damaged_tables_page_leads_to_its_log_read_only(
    browser: Any, server: ServerProcess
) -> None:
    store_damaged_table(server)
    phone = browser.new_context(**PHONE, extra_http_headers={"x-forwarded-for": "192.168.1.23"})
    phone.add_cookies([{"name": "tc_damaged", "value": "token-ann", "url": server.base_url}])
    page = phone.new_page()
    page.goto(f"{server.base_url}/t/damaged")
    expect(page.locator("p.error[role=alert]")).to_contain_text(
        "log entry 2 no longer replays: its stored move is not JSON", timeout=20000
    )
    page.locator("#damaged-log").click()
    expect(page.locator("#log-damaged")).to_contain_text(
        "its log is shown as stored, read-only. The entries from #2 on read as stored.",
        timeout=20000,
    )
    rows = page.locator("table.log-table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("roll")
    expect(rows.nth(1).locator("[data-damaged]")).to_have_text(
        'Damaged: its stored move is not JSON (\'{"kind": "pa\')'
    )
    expect(rows.nth(2)).to_contain_text("{'kind': 'pass', 'player': 1}")  # as stored
    shot(page, "damaged-log")


def test_a_player_landing_on_a_damaged_game_reads_what_happened_and_where_to_go(
    browser: Any, server: ServerProcess
) -> None:
    """A player's scoreboard and table page of a game whose log no longer replays read
    "Something went wrong" and the server's technical words, with "New game" for the
    start page; the start page then offered the player "Remove it", which the server
    refuses to any device but the host's. Now the page says in plain words that nothing
    more can be played on the game, links to its read-only log and back to the start page,
    and the player's start page says who can remove it, offering no button."""
    store_damaged_table(server)
    phone = browser.new_context(**PHONE, extra_http_headers={"x-forwarded-for": "192.168.1.23"})
    phone.add_cookies([{"name": "tc_damaged", "value": "token-ann", "url": server.base_url}])
    page = phone.new_page()
    for landing in ("/t/damaged/board", "/t/damaged"):
        page.goto(server.base_url + landing)
        expect(page.locator("h1")).to_have_text("This game can no longer be played", timeout=20000)
        expect(page.locator("#damaged-what")).to_contain_text(
            "nothing more can be played on it, from any device"
        )
        expect(page.locator("#damaged-log")).to_have_attribute("href", "/t/damaged/log")
    shot(page, "damaged-table-page")
    page.locator("#to-start").click()
    entry = page.locator('li.playing-game.broken[data-table-id="damaged"]')
    expect(entry.locator("[data-damaged-log]")).to_be_visible(timeout=20000)
    expect(entry).to_contain_text("The host's device, or the server's own screen, can remove it.")
    expect(entry.get_by_role("button", name="Remove it")).to_have_count(0)
    shot(page, "damaged-start-page-player")
