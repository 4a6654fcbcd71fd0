"""The game log on a phone, in Debian's Chromium against the real `companion serve`
process: a long game's log opens on its newest entries, its "Older entries" button shows
the ones before and "Newer entries" comes back (the whole 2.5 MB log was one page); a
game whose log no longer replays is listed on the start page with why it cannot be
opened and a link to its log, read-only. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import pytest
from playwright.sync_api import expect

from companion.table.access import hash_token
from companion.table.store import Store
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE
from tests.web.test_log_pages import long_log

pytestmark = pytest.mark.browser
DEADLINE_MS = 20000


def ann_phone(browser: Any, server: ServerProcess, table_id: str) -> Any:
    """Ann's phone on the network, holding her device cookie of `table_id`."""
    phone = browser.new_context(**PHONE, extra_http_headers={"x-forwarded-for": "192.168.1.23"})
    phone.add_cookies([{"name": f"tc_{table_id}", "value": "token-ann", "url": server.base_url}])
    return phone.new_page()


def store_long_game(server: ServerProcess, table_id: str) -> None:
    store = Store.open(server.data_dir / "companion.sqlite3")
    store.create_table(table_id, "LONG01", "qwixx", {"players": 2}, ["Ann", "Bob"], long_log())
    store.add_device(hash_token("token-ann"), table_id, False, 0)
    store.close()


def test_an_older_entries_button_pages_a_long_log_on_a_phone(
    browser: Any, server: ServerProcess
) -> None:
    store_long_game(server, "longlog")
    page = ann_phone(browser, server, "longlog")
    page.goto(f"{server.base_url}/t/longlog/log")
    top = page.locator("#log-pages-top")
    expect(top).to_contain_text("Entries 209–408 of 408, the newest.", timeout=DEADLINE_MS)
    rows = page.locator("table.log-table tbody tr")
    expect(rows).to_have_count(200)
    older = page.locator("#log-older-top")
    box = older.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390  # on the phone's screen
    older.tap()
    expect(page).to_have_url(re.compile(r"/t/longlog/log\?to=208$"), timeout=DEADLINE_MS)
    expect(top).to_contain_text("Entries 9–208 of 408.")
    expect(rows.first).to_have_attribute("data-seq", "9")
    expect(rows.last).to_have_attribute("data-seq", "208")
    shot(page, "log-older-entries-phone")
    page.locator("#log-newer-bottom").tap()  # under the table, where the reading ends
    expect(page).to_have_url(re.compile(r"/t/longlog/log$"), timeout=DEADLINE_MS)
    expect(rows.last).to_have_attribute("data-seq", "408")
    expect(rows.last).to_contain_text("Bob Pass (no cross), −5 penalty")


def test_the_start_page_links_a_damaged_games_log_on_a_phone(
    browser: Any, server: ServerProcess
) -> None:
    store_long_game(server, "damagedlong")
    db = sqlite3.connect(server.data_dir / "companion.sqlite3")
    db.execute('UPDATE actions SET move_json = \'{"kind": "pa\' WHERE seq = 2')
    db.commit()
    db.close()
    page = ann_phone(browser, server, "damagedlong")
    page.goto(f"{server.base_url}/t/damagedlong")  # the open finds the damage
    expect(page.locator("p.error[role=alert]")).to_contain_text(
        "log entry 2 no longer replays", timeout=DEADLINE_MS
    )
    page.goto(f"{server.base_url}/")
    listed = page.locator('.playing-game[data-table-id="damagedlong"]')
    expect(listed).to_contain_text(
        "It cannot be opened to play on, as entry 2 of its log no longer replays; its log "
        "can still be read, as stored.",
        timeout=DEADLINE_MS,
    )
    shot(page, "start-page-damaged-log-link")
    listed.locator("[data-damaged-log]").tap()
    expect(page.locator("#log-damaged")).to_contain_text(
        "its log is shown as stored, read-only. The entries from #2 on read as stored.",
        timeout=DEADLINE_MS,
    )
    expect(page.locator("#log-damaged-entry")).to_have_text("Show entry 2")
