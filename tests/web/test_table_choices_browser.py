"""Rules choices a table makes on the start page (issue 26 item 11), in Debian's Chromium
on a phone and a tablet: who rolls first in Sixes (seat 0 always did)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES
from tests.web.test_start_words_browser import name_players, start_page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_table_chooses_who_rolls_first_in_sixes(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = start_page(browser, server, device, "sixes")
    name_players(page, ["Dora", "Emil", "Finn"])
    choice = page.locator("#options [data-option=first_player] select")
    assert "Who rolls first" in page.inner_text("#options [data-option=first_player]")
    choice.select_option(label="Seat 2: Emil")
    shot(page, f"start-sixes-first-roller-{name}")
    page.click("#start-form button[type=submit]")
    page.wait_for_url("**/t/*")
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.inner_text(".turn-text").startswith("Pound")  # the call is out
    assert "Emil" in page.inner_text(".turn-text")  # Emil rolls: the others may pound
    assert "Dora" in page.inner_text(".turn-text")
