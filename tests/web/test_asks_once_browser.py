"""Where a device goes, it is told why; what cannot be undone asks once (issue 26 item 10),
in Debian's Chromium on a phone and a tablet.

- A device that has not joined a finished game opens it from the history: the join page
  says why it came up, instead of a bare "Join a table".
- Sixis' "End the round" that would end the whole game asks once: the first tap says so,
  the second ends it."""

from __future__ import annotations

from typing import Any

import pytest

from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.rules.sixis import SaveDice, TakeCard
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES
from tests.web.test_sixis_view import TWO, blue, red
from tests.web.test_starter_browser import imported


@pytest.mark.browser
@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_history_says_why_a_game_asks_for_its_code(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host = browser.new_context(**device)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    assert host.request.post(f"{server.base_url}/api/tables/{created['table_id']}/end").ok
    # another device on the server's machine sees every finished game in the history
    other = browser.new_context(**device).new_page()
    other.goto(server.base_url + "/history")
    other.click(f"a[href='/t/{created['table_id']}']")
    other.wait_for_url("**/join?why=not_joined")
    note = other.inner_text(".join-note")
    assert "This device has not joined that table" in note and "join code" in note
    shot(other, f"history-join-why-{name}")
    host.close()
    other.context.close()


def sixis_line_emptied() -> dict[str, Any]:
    """A one-round Sixis record for Ann and Bob where a line is empty: Ann may end the
    round, and that ends the game (tests/web/test_sixis_view.py)."""
    game = find_game("sixis")
    session = Session(game, TWO, ["Ann", "Bob"])
    for move in (
        red(2, 2, 3, 5, 5, 5), TakeCard(0, "three_kind"), SaveDice(0, ()),
        blue(1, 1, 2, 2, 3, 3), TakeCard(1, "pairs"), SaveDice(1, ()),
        red(1, 1, 1, 2, 2, 2), TakeCard(0, "low"), SaveDice(0, ()),
        blue(6, 6, 6, 6, 5, 5), TakeCard(1, "high"), SaveDice(1, ()),
    ):  # fmt: skip
        session.act(move)
    return session.to_record()


@pytest.mark.browser
@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_ending_the_last_round_asks_once(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host, table = imported(browser, server, sixis_line_emptied(), device)
    page = host.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}")
    page.wait_for_selector("#conn[data-conn=live]")
    state_id = page.get_attribute(".live", "data-state-id")
    end = page.locator(".sxi-end-round")
    assert end.inner_text() == "End the round"
    end.click()
    assert end.inner_text() == "This ends the game: tap again to end it"
    assert page.get_attribute(".live", "data-state-id") == state_id  # nothing sent yet
    shot(page, f"sixis-end-asks-once-{name}")
    end.click()
    page.wait_for_selector(".live.finished")
    host.close()
