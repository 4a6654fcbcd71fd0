"""A Qwixx box whose cross ends the game, in Debian's Chromium on a phone: the first tap
asks ("Tap again to ...: the game ends", in the sticky banner and the screen reader's live
region) and sends nothing, the box keeping its padlock; the second crosses and ends it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, seated_page
from tests.web.helpers import roll_json
from tests.web.test_undo_browser import host_acts, qwixx_table

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000
QUESTION = "Tap again to cross yellow 12 and lock the row: the game ends"


def white(first: int, second: int, yellow: int = 1) -> dict[str, Any]:
    return roll_json(
        ("white", first), ("white", second), ("red", 1), ("yellow", yellow), ("green", 1),
        ("blue", 1),
    )  # fmt: skip


def cross(player: int, colour: str, number: int) -> dict[str, Any]:
    return {"kind": "cross", "player": player, "colour": colour, "number": number}


def bobs_colour_step_locks_a_second_row(host: Any, api: str) -> None:
    """Ann crosses red 2..6 and Bob yellow 2..6 on five white sums; then on Bob's white
    sum 12 Ann locks red and Bob passes: his yellow 12 (white 6 + yellow 6) is the
    second lock."""
    moves: list[dict[str, Any]] = []
    for turn, (first, second) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)]):
        moves += [white(first, second), cross(0, "red", first + second)]
        moves += [cross(1, "yellow", first + second), {"kind": "pass", "player": turn % 2}]
    moves += [white(6, 6, yellow=6), cross(0, "red", 12), {"kind": "pass", "player": 1}]
    for number, move in enumerate(moves):
        host_acts(host, api, f"setup-{number:04d}", move)


def test_the_lock_that_ends_the_game_asks_once_and_keeps_its_padlock(
    browser: Any, server: ServerProcess
) -> None:
    """Bob's tap on the yellow lock ended the game at once, unannounced. The first tap asks
    beside the box (the padlock stays, nothing is sent); the second locks yellow and the
    game is over."""
    host, table, api = qwixx_table(browser, server)
    bobs_colour_step_locks_a_second_row(host, api)
    bob = seated_page(browser, server, table, 1, PHONE)
    lock = bob.locator(".qx-row.c-yellow .box.lock")
    assert lock.get_attribute("data-confirm") == QUESTION
    assert bob.locator(".qx-row.c-green [data-confirm]").count() == 0  # green 7 just crosses
    # said up front in the banner, before any tap
    assert bob.locator(".turn-text").inner_text() == (
        "Colour: your turn. Crossing yellow 12 and locking the row ends the game"
    )
    state_id = bob.get_attribute(".live", "data-state-id")

    lock.click()
    bob.locator(".banner .ask-beside").wait_for(timeout=DEADLINE_MS)
    assert bob.locator(".banner .ask-beside").inner_text() == QUESTION
    assert bob.locator("[data-tap-again-said]").text_content() == QUESTION
    assert "armed" in (lock.get_attribute("class") or "")
    assert lock.locator("svg").count() == 1 and lock.inner_text().strip() == ""
    twelve = bob.locator(".qx-row.c-yellow .box[data-number='12']")
    assert twelve.inner_text() == "12"  # the same cross: armed too, its number kept
    assert bob.get_attribute(".live", "data-state-id") == state_id  # nothing sent
    shot(bob, "ending-lock-asks-phone")

    lock.click()
    bob.locator(".live.finished").wait_for(timeout=DEADLINE_MS)
    assert "crossed" in (bob.locator(".qx-row.c-yellow .box.lock").get_attribute("class") or "")
    assert bob.locator(".ask-beside").count() == 0
    bob.context.close()
    host.close()
