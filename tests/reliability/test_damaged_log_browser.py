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


def test_a_damaged_tables_page_leads_to_its_log_read_only(
    browser: Any, server: ServerProcess
) -> None:
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
