"""Sixis in real browsers against a real server (Debian's Chromium through Playwright, one
browser context per device): Ann on a tablet, Bob on a phone in portrait. Ann enters her
roll by hand, taps a card her dice do not match and reads the engine's reason, flips a blue
card to red, chooses two dice with the die toggles and saves them; Bob's screen follows
each step; Bob rolls, is refused the Full House and takes Run 1-2-3, which shows under his
name on Ann's screen. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.web.conftest import ServerProcess, shot

pytestmark = pytest.mark.browser

TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
LAYOUT = ["three_kind", "pairs", "low", "high", "odd", "even", "run_low", "run_high"]

# every visible button of the live part smaller than a finger (44 x 44 CSS px)
SMALL_TARGETS = """() => Array.from(document.querySelectorAll('.live button'))
  .filter((e) => e.offsetParent !== null)
  .map((e) => [e.getAttribute('aria-label') || e.textContent.trim().slice(0, 30),
               e.getBoundingClientRect().width, e.getBoundingClientRect().height])
  .filter(([, w, h]) => w < 44 || h < 44)"""


def on_state(page: Any, state_id: int) -> None:
    """Wait until the page shows the state after `state_id` actions."""
    page.wait_for_selector(f".live[data-state-id='{state_id}']", timeout=5000)


def take_seat(
    browser: Any, server: ServerProcess, code: str, seat: int, device: dict[str, Any]
) -> Any:
    page = browser.new_context(**device).new_page()
    page.goto(f"{server.base_url}/join?code={code}")
    page.click("button.primary")
    page.click(f"button[name=seat][value='{seat}']")
    page.wait_for_url("**/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def enter_roll(page: Any, values: list[int]) -> None:
    for index, value in enumerate(values):
        page.click(f".die-picker[data-die-index='{index}'] .face[data-face='{value}']")
    page.click("[data-roll-submit]")


def toast_text(page: Any) -> str:
    page.wait_for_selector("#toast:not(:empty)", timeout=5000)
    return str(page.inner_text("#toast"))


def finger_sized(page: Any) -> None:
    """Every visible button is at least 44 x 44 px, in portrait and in landscape."""
    portrait = page.viewport_size
    for size in (portrait, {"width": portrait["height"], "height": portrait["width"]}):
        page.set_viewport_size(size)
        assert page.evaluate(SMALL_TARGETS) == [], size
    page.set_viewport_size(portrait)


def test_a_roll_a_refusal_a_flip_a_save_and_a_take_on_two_devices(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    options = {"players": 2, "colours": ["red", "blue"], "layouts": [LAYOUT]}
    table = api.post(
        "/api/tables", json={"game": "sixis", "options": options, "players": ["Ann", "Bob"]}
    ).json()
    ann = take_seat(browser, server, table["code"], 0, TABLET)
    bob = take_seat(browser, server, table["code"], 1, PHONE)

    # Ann starts: her device has the dice entry, Bob's shows the table without moves
    assert ann.locator(".roll-entry").count() == 1 and bob.locator(".roll-entry").count() == 0
    assert bob.locator(".live [data-move]").count() == 0
    assert bob.locator(".sxi-card").count() == 9  # eight goal cards and the Sixis card
    enter_roll(ann, [2, 2, 3, 5, 5, 5])
    for page in (ann, bob):
        on_state(page, 1)
    assert ann.locator(".sxi-take.legal").count() == 3  # Three of a Kind, Two Pair, 4 odd
    assert ann.locator(".sxi-flip.legal").count() == 3
    assert [
        int(v)
        for v in bob.locator(".banner .die").evaluate_all("els => els.map(e => e.dataset.value)")
    ] == [2, 2, 3, 5, 5, 5]
    shot(ann, "sixis-ann-act-tablet")
    finger_sized(ann)

    # a tap on Low: the engine's reason, nothing changes
    ann.click("[data-card='low'] .sxi-take")
    assert toast_text(ann) == "Low needs a total of 18 or less"
    shot(ann, "sixis-ann-refused-tablet")
    assert ann.locator(".live").get_attribute("data-state-id") == "1"

    # Ann flips Three of a Kind to its red side; Bob's screen follows
    ann.click("[data-card='three_kind'] .sxi-flip")
    for page in (ann, bob):
        on_state(page, 2)
    assert "Full House" in bob.inner_text("[data-card='three_kind']")
    assert bob.locator("[data-card='three_kind'].side-red").count() == 1
    assert "red · hard" in bob.inner_text("[data-card='three_kind'] .sxi-tag").lower()

    # Ann chooses two 5s with the die toggles (a second tap on a die takes it back) and saves
    toggles = ann.locator(".sxi-toggle")
    assert toggles.count() == 6
    assert ann.locator(".sxi-hint").is_visible()  # "Nothing chosen: ..." while nothing is
    toggles.nth(3).click()
    toggles.nth(2).click()
    toggles.nth(2).click()
    toggles.nth(4).click()
    assert ann.locator(".sxi-toggle[aria-pressed='true']").count() == 2
    assert ann.locator(".sxi-hint").is_hidden()  # no "Nothing chosen" under two chosen dice
    shot(ann, "sixis-ann-save-tablet")
    ann.click(".sxi-save-button")
    for page in (ann, bob):
        on_state(page, 3)
    saved = bob.locator(".sxi-seat[data-seat='0'] .sxi-saved .die")
    assert saved.evaluate_all("els => els.map(e => e.dataset.value)") == ["5", "5"]
    state = api.get(f"/api/tables/{table['table_id']}/state").json()
    assert state["state"]["state"]["saved"] == [[5, 5], []]

    # Bob's turn: he rolls on his phone, is refused the Full House, takes Run 1-2-3
    assert bob.locator(".roll-entry").count() == 1
    enter_roll(bob, [1, 2, 3, 4, 6, 6])
    for page in (ann, bob):
        on_state(page, 4)
    bob.click("[data-card='three_kind'] .sxi-take")
    assert toast_text(bob) == "Full House needs three of one value and two of another"
    shot(bob, "sixis-bob-refused-phone")
    finger_sized(bob)
    bob.click("[data-card='run_low'] .sxi-take")
    for page in (ann, bob):
        on_state(page, 5)
    assert "Run 1-2-3" in ann.inner_text(".sxi-seat[data-seat='1'] .sxi-won")
    assert "taken by Bob" in ann.inner_text("[data-card='run_low']")
    assert ann.inner_text(".sxi-scores tr[data-seat='1'] .total") == "25"
    shot(bob, "sixis-bob-save-phone")
    shot(ann, "sixis-ann-watching-tablet")


def test_four_players_in_an_x_reach_a_refused_far_card_and_the_table_view(
    browser: Any, server: ServerProcess
) -> None:
    api = httpx.Client(base_url=server.base_url, timeout=5)
    # arms from the top right clockwise: ones twos threes | fours fives sixes | ... | odd
    layout = ["ones", "twos", "threes", "fours", "fives", "sixes", "one_six", "two_five"]
    layout += ["three_four", "run_low", "run_high", "odd"]
    options = {"players": 4, "team_play": True, "layouts": [layout]}
    table = api.post(
        "/api/tables",
        json={"game": "sixis", "options": options, "players": ["Ann", "Bob", "Cy", "Di"]},
    ).json()
    ann = take_seat(browser, server, table["code"], 0, PHONE)
    host_context = browser.new_context(viewport={"width": 1280, "height": 900})
    host_context.add_cookies(
        [{"name": k, "value": v, "url": server.base_url} for k, v in api.cookies.items()]
    )
    host = host_context.new_page()
    host.goto(f"{server.base_url}/t/{table['table_id']}")
    host.wait_for_selector("#conn[data-conn=live]")

    # Ann (seat 0, east) reaches the two arms beside her: the six cards on the right
    assert ann.locator(".sxi-card.reach:not(.sxi-sixis)").count() == 6
    assert ann.locator(".sxi-card.far").count() == 6
    right = ann.locator("[data-card='ones']").bounding_box()
    left = ann.locator("[data-card='odd']").bounding_box()
    assert right["x"] > left["x"] + 100  # the X: arm 0 top right, arm 3 top left
    enter_roll(ann, [1, 1, 1, 1, 3, 5])
    for page in (ann, host):
        on_state(page, 1)
    assert ann.locator(".sxi-take.legal").count() == 1  # Double Ones; Four Dice Odd is far
    shot(ann, "sixis-x-ann-phone")
    finger_sized(ann)
    ann.click("[data-card='odd'] .sxi-take")
    assert toast_text(ann) == "That card (Four Dice Odd) is out of your reach"

    ann.click("[data-card='ones'] .sxi-take")
    for page in (ann, host):
        on_state(page, 2)
    # the table view: the cards once (in the active seat's sheet), team totals
    assert host.locator(".sxi-board:visible").count() == 1
    assert "Double Ones" in host.inner_text(".sxi-seat[data-seat='0'] .sxi-won")
    team = host.locator(".sxi-scores:visible tr.team").first
    assert team.inner_text().split()[-1] == "20"
    # nothing chosen: Save sends no dice, and the turn passes to Bob
    ann.click(".sxi-save-button")
    for page in (ann, host):
        on_state(page, 3)
    assert host.locator(".sheet.active").get_attribute("data-seat") == "1"
    assert host.locator(".sheet.active .sxi-board").count() == 1
    assert ann.locator(".live [data-move]").count() == 0
    shot(host, "sixis-x-table-view-laptop")


def test_the_dice_chosen_to_save_outlive_a_reload_until_the_save_is_sent(
    browser: Any, server: ServerProcess
) -> None:
    """Players' phones: the dice a player had chosen to save were gone after a reload (the
    choice lives in the page until Save sends it). The tab keeps them for that state; once
    Save has sent them, a reload shows none chosen."""
    api = httpx.Client(base_url=server.base_url, timeout=5)
    options = {"players": 2, "colours": ["red", "blue"], "layouts": [LAYOUT]}
    table = api.post(
        "/api/tables", json={"game": "sixis", "options": options, "players": ["Ann", "Bob"]}
    ).json()
    ann = take_seat(browser, server, table["code"], 0, PHONE)
    enter_roll(ann, [2, 2, 3, 5, 5, 5])
    on_state(ann, 1)
    ann.click("[data-card='three_kind'] .sxi-flip")  # the save step follows
    on_state(ann, 2)
    toggles = ann.locator(".sxi-toggle")
    toggles.nth(3).click()
    toggles.nth(5).click()
    pressed = ".sxi-toggle[aria-pressed='true']"

    ann.reload()
    ann.wait_for_selector("#conn[data-conn=live]")
    on_state(ann, 2)
    chosen = ann.locator(pressed).evaluate_all(
        "els => els.map(e => Array.from(e.parentNode.children).indexOf(e))"
    )
    assert chosen == [3, 5]
    assert ann.locator(".sxi-hint").is_hidden()

    ann.click(".sxi-save-button")
    on_state(ann, 3)
    state = api.get(f"/api/tables/{table['table_id']}/state").json()
    assert state["state"]["state"]["saved"] == [[5, 5], []]
    assert (
        ann.evaluate("Object.keys(sessionStorage).filter((k) => k.startsWith('tc-toggles'))") == []
    )
