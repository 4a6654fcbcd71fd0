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


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_new_sixis_table_has_the_advanced_start_in_round_one_only(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = start_page(browser, server, device, "sixis")
    name_players(page, ["Dora", "Emil"])
    page.click("#options .more-options > summary")
    every = page.locator("#options [data-option=advanced_start_every_round] input")
    assert "Advanced start in every round" in page.inner_text(
        "#options [data-option=advanced_start_every_round]"
    )
    assert not every.is_checked()  # the rulebook: round 1 only
    page.check("#options [data-option=advanced_start] input")
    shot(page, f"start-sixis-advanced-start-{name}")
    page.click("#start-form button[type=submit]")
    page.wait_for_url("**/t/*")
    table_id = page.url.split("/t/")[1].split("/")[0]
    state = page.request.get(f"{server.base_url}/api/tables/{table_id}/state").json()
    options = state["state"]["state"]["options"]
    assert options["advanced_start"] is True and options["advanced_start_every_round"] is False
