"""Real browsers against a real server: Debian's Chromium through Playwright, one browser
context per device (host laptop, a tablet, a phone), each with its own cookies.

Qwixx: the host starts a table on the start page, two players join with the code; a white
sum for everyone, a colour cross for the active player, a refused illegal tap with the
engine's message, the other screens updating, an automatic penalty.
Sixto: a re-roll, a refused tap into the closed target area, and a legal target cross.
Screenshots of every sheet go to test-artifacts/."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from companion.rules.sixto import PROJECT_SHEETS
from tests.web.conftest import ServerProcess, shot

pytestmark = pytest.mark.browser

TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}
LAPTOP = {"viewport": {"width": 1280, "height": 900}}


def live(page: Any, state_id: int) -> None:
    """Wait until the page shows the state after `state_id` actions."""
    page.wait_for_selector(f".live[data-state-id='{state_id}']", timeout=5000)


def join(browser: Any, server: ServerProcess, code: str, seat: int, device: dict[str, Any]) -> Any:
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


SMALL_TARGETS = """() => Array.from(document.querySelectorAll('button, a, input'))
  .filter((e) => e.offsetParent !== null && !e.closest('.host-tools:not([open])'))
  .map((e) => [e.getAttribute('aria-label') || e.textContent.trim(),
               e.getBoundingClientRect().width, e.getBoundingClientRect().height])
  .filter(([, w, h]) => w < 44 || h < 44)"""


def assert_finger_sized(page: Any) -> None:
    """Every visible button, link and field is at least 44 x 44 px, in portrait and in
    landscape."""
    portrait = page.viewport_size
    for size in (portrait, {"width": portrait["height"], "height": portrait["width"]}):
        page.set_viewport_size(size)
        assert page.evaluate(SMALL_TARGETS) == [], size
    page.set_viewport_size(portrait)


def toast(page: Any) -> str:
    page.wait_for_selector("#toast:not(:empty)", timeout=5000)
    return str(page.inner_text("#toast"))


def test_a_qwixx_turn_on_three_devices(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**LAPTOP).new_page()
    host.goto(server.base_url + "/")
    host.fill("#player-count", "2")
    host.dispatch_event("#player-count", "change")
    host.fill("#names label:nth-of-type(1) input", "Ann")
    host.fill("#names label:nth-of-type(2) input", "Bob")
    host.click("button[type=submit].primary")
    host.wait_for_url("**/t/*")
    host.wait_for_selector("#conn[data-conn=live]")
    code = host.inner_text("#join-code")
    # a --local server (the tests' default) shows no QR code a tablet could not open
    assert host.locator(".host-panel svg.qr").count() == 0
    assert host.locator("#reach-notice[data-reach=local]").is_visible()
    assert host.locator("section[data-seat='0'] .player-name").inner_text().startswith("Ann")
    assert host.locator("section[data-seat='1'] .player-name").inner_text().startswith("Bob")
    ann = join(browser, server, code, 0, TABLET)
    bob = join(browser, server, code, 1, PHONE)

    # Ann rolls first: she taps the dice on her tablet
    assert ann.locator(".roll-entry").count() == 1 and bob.locator(".roll-entry").count() == 0
    enter_roll(ann, [3, 4, 2, 5, 6, 1])  # white sum 7
    for page in (ann, bob, host):
        live(page, 1)
    assert "White sum" in bob.inner_text(".turn-text")
    assert bob.locator(".box.legal").count() == 4  # a 7 in each row
    shot(bob, "qwixx-bob-white-sum-phone")
    assert_finger_sized(bob)
    assert_finger_sized(ann)

    # an illegal tap is refused with the rule in plain words, nothing changes
    bob.click("button[aria-label='Red 9']")
    assert toast(bob) == "The white dice show 7, not 9"  # shown capitalised
    assert bob.locator(".live").get_attribute("data-state-id") == "1"

    # Bob (not active) crosses the white sum; every screen shows it
    bob.click("button[aria-label='Red 7']")
    for page in (ann, bob, host):
        live(page, 2)
    assert host.locator("section[data-seat='1'] button[aria-label='Red 7, crossed']").count() == 1
    assert bob.locator("button[aria-label='Red 7, crossed']").count() == 1

    # Ann: white sum in yellow, then her colour cross white 4 + yellow 5 = yellow 9
    ann.click("button[aria-label='Yellow 7']")
    live(ann, 3)
    assert "Colour" in ann.inner_text(".turn-text")
    ann.click("button[aria-label='Red 5']")  # white 3 + red 2: legal in red
    live(ann, 4)
    shot(ann, "qwixx-ann-after-turn-tablet")
    live(host, 4)
    assert host.locator("section[data-seat='0'] .box.crossed").count() == 2

    # Bob's turn: he rolls on his phone and crosses nothing at all -> automatic penalty
    live(bob, 4)
    enter_roll(bob, [1, 1, 1, 1, 1, 1])
    live(bob, 5)
    bob.click("section[data-seat='1'] button:has-text('Pass')")
    ann.click("section[data-seat='0'] button:has-text('Pass')")
    live(bob, 7)
    costly = bob.locator("section[data-seat='1'] button:has-text('Pass')")
    assert costly.inner_text() == "Pass: \N{MINUS SIGN}5 penalty"
    costly.click()  # a pass that costs 5 points asks once
    assert costly.inner_text().startswith("Tap again")
    costly.click()
    for page in (ann, bob, host):
        live(page, 8)
    assert bob.locator(".penalty.crossed").count() == 1
    assert host.locator("section[data-seat='1'] .penalty.crossed").count() == 1
    # 1 - 5, written with a minus sign (issue 26 item 9), on the sheet and in the banner
    assert host.locator("section[data-seat='1'] .sheet-total").inner_text() == "\N{MINUS SIGN}4"
    assert "Bob \N{MINUS SIGN}4" in host.inner_text(".score-strip")
    shot(bob, "qwixx-bob-penalty-phone")
    shot(host, "qwixx-table-view-laptop")

    # undo by the player who acted: Bob's pass (which gave the penalty) is taken back
    bob.click("[data-undo]")
    live(host, 9)
    assert host.locator("section[data-seat='1'] .penalty.crossed").count() == 0


def sixto_table(server: ServerProcess) -> tuple[dict[str, Any], httpx.Client]:
    """A 2-player Sixto table where Ann (seat 0) already has 4 red crosses (boxes 1-4),
    played through the API by the host."""
    client = httpx.Client(base_url=server.base_url, timeout=5)
    table = client.post(
        "/api/tables", json={"game": "sixto", "options": {"players": 2}, "players": ["Ann", "Bob"]}
    ).json()
    red = PROJECT_SHEETS["A"][0]
    n = 0

    def send(move: dict[str, Any]) -> None:
        nonlocal n
        n += 1
        response = client.post(
            f"/api/tables/{table['table_id']}/actions",
            json={"action_id": f"setup-{n:04d}", "move": move},
        )
        assert response.status_code == 200, response.text

    colours = ["red", "orange", "yellow", "green", "blue", "purple"]
    for column in range(1, 5):
        active = (column - 1) % 2
        dice = [{"colour": c, "value": int(red[column - 1]) if c == "red" else 1} for c in colours]
        send({"kind": "roll", "player": -1, "dice": dice})
        send({"kind": "keep", "player": active})
        send({"kind": "cross", "player": 0, "colour": "red", "column": column})
        send({"kind": "done", "player": 0})
        send({"kind": "done", "player": 1})
    return table, client


def test_a_sixto_turn_with_a_reroll_and_the_target_area(
    browser: Any, server: ServerProcess
) -> None:
    table, _ = sixto_table(server)
    ann = join(browser, server, table["code"], 0, TABLET)
    bob = join(browser, server, table["code"], 1, PHONE)
    live(ann, 20)
    assert ann.locator(".sx-row[data-row='red'] .box.crossed").count() == 4

    # Ann is active: first roll, then she re-rolls all six dice
    enter_roll(ann, [1, 1, 1, 1, 1, 1])
    live(ann, 21)
    ann.click("button:has-text('Re-roll all dice')")
    live(ann, 22)
    assert ann.locator(".roll-entry").count() == 1  # the second roll is due
    red_target = int(PROJECT_SHEETS["A"][0][9])  # Ann's red box 10
    second = [red_target, 2, 3, 4, 5, 6]
    enter_roll(ann, second)
    for page in (ann, bob):
        live(page, 23)
    assert [
        int(v)
        for v in ann.locator(".banner .die").evaluate_all("els => els.map(e => e.dataset.value)")
    ] == second

    # Bob has no red cross: his target area is still closed, the engine says why
    bob.click(".sx-row[data-row='red'] button[data-column='10']")
    assert toast(bob) == "The target area opens after 4 crosses in this row (red has 0)"

    # Ann has 4 red crosses: box 10 is open to her and highlighted
    target = ann.locator(".sx-row[data-row='red'] button[data-column='10']")
    assert "legal" in (target.get_attribute("class") or "")
    target.click()
    for page in (ann, bob):
        live(page, 24)
    assert ann.locator(".sx-row[data-row='red'] button[data-column='10'].crossed").count() == 1
    # the die is used: another red box is refused
    ann.click(".sx-row[data-row='red'] button[data-column='11']")
    assert "already used the red die" in toast(ann)
    shot(ann, "sixto-ann-target-tablet")

    # both say done: the turn passes to Bob, who now enters the dice
    ann.click("button:has-text('Done crossing')")
    bob.click("button:has-text('Done crossing')")
    for page in (ann, bob):
        live(page, 26)
    assert bob.locator(".roll-entry").count() == 1
    shot(bob, "sixto-bob-phone")
    assert_finger_sized(bob)


def test_a_game_record_is_imported_on_the_start_page(
    browser: Any, server: ServerProcess, tmp_path: Any
) -> None:
    white_7 = [("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)]
    record: dict[str, Any] = {
        "schema": 1,
        "game": "qwixx",
        "options": {"players": 2},
        "players": ["Ann", "Bob"],
        "actions": [
            {
                "by": "camera",
                "move": {
                    "kind": "roll",
                    "player": -1,
                    "dice": [{"colour": c, "value": v} for c, v in white_7],
                },
            },
            {"by": "1", "move": {"kind": "cross", "player": 1, "colour": "blue", "number": 7}},
        ],
    }
    path = tmp_path / "qwixx-record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    host = browser.new_context(**LAPTOP).new_page()
    host.goto(server.base_url + "/")
    host.set_input_files("#record-file", str(path))
    host.click("#import-form button[type=submit]")
    host.wait_for_url("**/t/*")
    live(host, 2)
    assert host.locator("section[data-seat='1'] button[aria-label='Blue 7, crossed']").count() == 1
    # a broken record is refused with the action's index, on the page
    record["actions"][1]["move"]["number"] = 12
    path.write_text(json.dumps(record), encoding="utf-8")
    host.goto(server.base_url + "/")
    host.set_input_files("#record-file", str(path))
    host.click("#import-form button[type=submit]")
    host.wait_for_selector("#import-error:not([hidden])")
    assert "action 1" in host.inner_text("#import-error")


def test_the_end_shows_final_sheets_breakdown_and_winner(
    browser: Any, server: ServerProcess
) -> None:
    import random

    from companion.rules.registry import find_game
    from companion.simulate import random_action

    client = httpx.Client(base_url=server.base_url, timeout=5)
    table = client.post(
        "/api/tables",
        json={"game": "qwixx", "options": {"players": 3}, "players": ["Ann", "Bob", "Cy"]},
    ).json()
    game, rng, n = find_game("qwixx"), random.Random(3), 0
    while True:
        payload = client.get(f"/api/tables/{table['table_id']}/state").json()
        if payload["finished"]:
            break
        move = game.move_to_json(random_action(game, game.state_from_json(payload["state"]), rng))
        n += 1
        client.post(
            f"/api/tables/{table['table_id']}/actions",
            json={"action_id": f"game-{n:05d}", "move": move},
        )
    watcher = browser.new_context(**LAPTOP).new_page()
    watcher.goto(f"{server.base_url}/join?code={table['code']}")
    watcher.click("button.primary")
    watcher.click("button[name=seat][value='table']")
    watcher.wait_for_selector(".live.finished")
    outcome = watcher.inner_text(".outcome")
    assert "Game over" in outcome and ("wins with" in outcome or "share the win" in outcome)
    assert watcher.locator(".outcome .breakdown tbody tr").count() == 3
    assert watcher.locator(".sheet").count() == 3 and watcher.locator(".sheet.winner").count() >= 1
    assert watcher.locator(".sheet [data-move]").count() == 0  # nothing to tap any more
    shot(watcher, "qwixx-game-over-laptop")
