"""The host's tablet says which seated players have no page open: a player whose phone
closed their sheet reads "away" beside the seat count, live, and no longer once the phone
opens the sheet again (the seat count alone said "2 of 2 seats taken" all along)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import ServerProcess
from tests.web.devices import PHONE, SIXTO_ANN_BOB, hosted_table, seated_page

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000


def test_the_host_sees_a_player_away_while_their_page_is_closed(
    browser: Any, server: ServerProcess
) -> None:
    host, table = hosted_table(browser, server, SIXTO_ANN_BOB)
    seated_page(browser, server, table, 0, PHONE)
    bob = seated_page(browser, server, table, 1, PHONE)
    tablet = host.new_page()
    tablet.goto(f"{server.base_url}/t/{table['table_id']}")
    tablet.wait_for_selector("#conn[data-conn=live]")
    away = tablet.locator("#seats-away")
    expect(tablet.locator("#seated-count")).to_have_text("2 of 2 seats taken")
    expect(away).to_be_empty()

    sheet = bob.url
    bob.close()  # Bob's only page closes: his socket goes
    expect(away).to_have_text("Bob: away", timeout=DEADLINE_MS)

    reopened = bob.context.new_page()
    reopened.goto(sheet)
    reopened.wait_for_selector("#conn[data-conn=live]")
    expect(away).to_be_empty(timeout=DEADLINE_MS)
