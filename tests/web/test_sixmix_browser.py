"""Sixmix in real browsers against a real server (Debian's Chromium through Playwright): a
two-player table (Ann green + blue on a tablet, Bob red + orange on a phone, the host's
laptop showing the table). Ann enters her roll, picks a die and places it; Bob's screen
updates; Bob taps a 100,000 space that is not his and reads the engine's reason, then
places legally and Ann's screen updates. And the round end on a phone: points per row
(highest, second, triplets) and chips per round. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion.rules.base import Die
from companion.rules.sixmix import GAME, Options, Place
from tests.web.conftest import ServerProcess, shot
from tests.web.helpers import roll, roll_json
from tests.web.test_browser import (
    LAPTOP,
    PHONE,
    TABLET,
    assert_finger_sized,
    enter_roll,
    join,
    live,
    toast,
)
from tests.web.test_sixmix_view import THREE, full_round

pytestmark = pytest.mark.browser

ANN_ROLL = [("green", v) for v in (6, 2, 5, 1, 3, 4)] + [("blue", v) for v in (5, 5, 2, 1, 6, 3)]
BOB_ROLL = [("red", v) for v in (1, 4, 4, 2, 6, 3)] + [("orange", v) for v in (2, 2, 5, 1, 6, 3)]


def pick(page: Any, label: str) -> None:
    """Tap one of the rolled dice (a radio button drawn as a die)."""
    page.click(f"label.smx-pick:has(input[aria-label^='Die {label}'])")


def visible(page: Any, selector: str) -> Any:
    return page.locator(f".smx-board:visible {selector}")


def legal_spaces(state: Any, seat: int, die: Die) -> list[str]:
    """The engine's legal spaces for `die`, as the spaces' aria-labels name them."""
    names = ("100,000", "10,000", "1,000", "100", "10", "1")
    return sorted(
        f"{m.row.capitalize()} {names[m.space]}"
        for m in GAME.legal_moves(state, seat)
        if isinstance(m, Place) and m.die == die
    )


def test_a_sixmix_placement_a_refusal_and_the_other_screen(
    browser: Any, server: ServerProcess
) -> None:
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        table = client.post(
            "/api/tables",
            json={"game": "sixmix", "options": {"players": 2}, "players": ["Ann", "Bob"]},
        ).json()
        host_cookies = [
            {"name": c.name, "value": c.value or "", "url": server.base_url}
            for c in client.cookies.jar
        ]
    host_context = browser.new_context(**LAPTOP)
    host_context.add_cookies(host_cookies)
    host = host_context.new_page()
    host.goto(f"{server.base_url}/t/{table['table_id']}")
    host.wait_for_selector("#conn[data-conn=live]")
    ann = join(browser, server, table["code"], 0, TABLET)
    bob = join(browser, server, table["code"], 1, PHONE)

    # Ann rolls her twelve dice on her tablet; the board has no tappable space until she
    # picks a die
    assert ann.locator(".roll-entry .die-picker").count() == 12
    assert bob.locator(".roll-entry").count() == 0
    enter_roll(ann, [v for _, v in ANN_ROLL])
    for page in (ann, bob, host):
        live(page, 1)
    assert visible(ann, "[data-move]").count() == 0
    assert ann.locator(".smx-pick").count() == 11  # blue 5 twice: one pick, "×2"

    state = GAME.play(GAME.setup(Options(players=2)), roll(*ANN_ROLL))
    pick(ann, "green 6")
    highlighted = visible(ann, ".smx-space.legal").evaluate_all(
        "els => els.map(e => e.getAttribute('aria-label')).sort()"
    )
    assert highlighted == legal_spaces(state, 0, Die("green", 6))
    assert "Red 100,000" not in highlighted
    shot(ann, "sixmix-ann-picked-tablet")
    assert_finger_sized(ann)
    ann.click(".smx-board:visible button[aria-label='Green 100,000']")
    for page in (ann, bob, host):
        live(page, 2)
    assert bob.locator("button[aria-label='Green 100,000: green 6']").count() == 1
    assert bob.locator(".smx-row[data-row='green'] .smx-total").inner_text() == "600,000"
    assert host.locator(".sheet.active button[aria-label='Green 100,000: green 6']").count() == 1

    # Bob rolls on his phone, picks red 1 and taps Ann's blue 100,000 space: refused
    enter_roll(bob, [v for _, v in BOB_ROLL])
    live(bob, 3)
    pick(bob, "red 1")
    foreign = bob.locator(".smx-board:visible button[aria-label='Blue 100,000']")
    assert "legal" not in (foreign.get_attribute("class") or "")
    foreign.click()
    assert toast(bob) == "Only Ann may fill blue's 100,000 space"
    assert bob.locator(".live").get_attribute("data-state-id") == "3"
    shot(bob, "sixmix-bob-refused-phone")
    assert_finger_sized(bob)

    # the red 1 goes into Ann's green 10,000 space; Ann's screen shows it
    bob.click(".smx-board:visible button[aria-label='Green 10,000']")
    for page in (ann, bob, host):
        live(page, 4)
    assert ann.locator("button[aria-label='Green 10,000: red 1']").count() == 1
    assert ann.locator(".smx-row[data-row='green'] .smx-total").inner_text() == "610,000"
    assert ann.locator(".roll-entry .die-picker").count() == 11  # her next roll: 11 dice
    shot(ann, "sixmix-ann-next-roll-tablet")
    shot(bob, "sixmix-bob-after-phone")
    shot(host, "sixmix-table-view-laptop")


def test_the_round_end_on_a_phone(browser: Any, server: ServerProcess) -> None:
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        table = client.post(
            "/api/tables",
            json={"game": "sixmix", "options": {"players": 3}, "players": THREE},
        ).json()
        moves = full_round()
        for n, move in enumerate(moves):
            response = client.post(
                f"/api/tables/{table['table_id']}/actions",
                json={"action_id": f"setup-{n:04d}", "move": GAME.move_to_json(move)},
            )
            assert response.status_code == 200, response.text
    kari = join(browser, server, table["code"], 0, PHONE)
    live(kari, len(moves))
    rows = kari.locator(".smx-result tr").evaluate_all(
        "trs => trs.map(tr => Array.from(tr.children, c => c.innerText.trim()))"
    )
    assert rows == [
        ["Green Kari", "654,321", "second +1", "+1"],
        ["Blue Ola", "333,222", "triplets +2", "+2"],
        ["Red Mia", "654,322", "highest +2", "+2"],
    ]
    assert kari.locator(".smx-chips tr.total td").all_inner_texts() == ["1", "2", "2"]
    assert "Ola rolls" in kari.inner_text(".smx-hint")  # blue, the lowest row, starts
    shot(kari, "sixmix-round-end-phone")
    assert_finger_sized(kari)


# the lines of the shown page that tell a player to tap a free space
FREE_SPACE_LINES = """() => Array.from(document.querySelectorAll('.live p'))
  .filter((e) => e.offsetParent !== null && e.textContent.includes('tap a free space'))
  .map((e) => e.textContent.trim())"""


def test_a_phone_says_how_to_place_a_die_once(browser: Any, server: ServerProcess) -> None:
    """Ann has rolled and picked no die yet: her phone tells her once to pick a die and tap
    a free space, not again between her dice and the board."""
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        table = client.post(
            "/api/tables",
            json={"game": "sixmix", "options": {"players": 2}, "players": ["Ann", "Bob"]},
        ).json()
        answer = client.post(
            f"/api/tables/{table['table_id']}/actions",
            json={"action_id": "place-once-0000", "move": roll_json(*ANN_ROLL)},
        )
        assert answer.status_code == 200, answer.text
    ann = join(browser, server, table["code"], 0, PHONE)
    live(ann, 1)
    assert ann.evaluate(FREE_SPACE_LINES) == [
        "Pick a die, then tap a free space. Glowing spaces are allowed."
    ]
    shot(ann, "sixmix-placing-said-once-phone")
    ann.context.close()
