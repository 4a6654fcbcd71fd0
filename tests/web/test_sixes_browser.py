"""Sixes in real browsers against a real server (Debian's Chromium through Playwright, one
browser context per device): three players on a tablet, a phone in portrait and a phone on
its side. A call, two players pound (the first wins, the other reads the engine's refusal),
the roller enters the dice by hand, passes on to the next number, loses, and every screen
follows. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.helpers import roll_json

pytestmark = pytest.mark.browser

TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PHONE_SIDEWAYS = {"viewport": {"width": 844, "height": 390}, "is_mobile": True, "has_touch": True}
LAPTOP = {"viewport": {"width": 1280, "height": 900}}

# every visible button smaller than a finger (44 x 44 CSS px)
SMALL_TARGETS = """() => Array.from(document.querySelectorAll('.live button'))
  .filter((e) => e.offsetParent !== null)
  .map((e) => [e.textContent.trim().slice(0, 30), e.getBoundingClientRect().width,
               e.getBoundingClientRect().height])
  .filter(([, w, h]) => w < 44 || h < 44)"""


def on_state(page: Any, state_id: int) -> None:
    """Wait until the page shows the state after `state_id` actions."""
    page.wait_for_selector(f".live[data-state-id='{state_id}']", timeout=5000)


def take_seat(
    browser: Any,
    server: ServerProcess,
    code: str,
    seat: int,
    device: dict[str, Any],
    clock: bool = False,
) -> Any:
    """A new device that joins with `code` and takes `seat`, returned once its sheet's
    socket is live; with Playwright's clock installed first when `clock` (a test that
    pauses the page's time)."""
    page = browser.new_context(**device).new_page()
    if clock:
        page.clock.install()
    page.goto(f"{server.base_url}/join?code={code}")
    page.click("button.primary")
    page.click(f"button[name=seat][value='{seat}']")
    page.wait_for_url("**/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def toast_text(page: Any) -> str:
    page.wait_for_selector("#toast:not(:empty)", timeout=5000)
    return str(page.inner_text("#toast"))


def sixes_table(server: ServerProcess) -> tuple[httpx.Client, dict[str, Any]]:
    """A new Sixes table of Ann, Bob and Cy, and the host's client that made it."""
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = api.post(
        "/api/tables",
        json={"game": "sixes", "options": {"players": 3}, "players": ["Ann", "Bob", "Cy"]},
    ).json()
    return api, table


def nothing_waiting(page: Any, table_id: str) -> bool:
    """Whether the page holds no tap for the server: a tap it took stays in its outbox (and
    marked pending) until answered, and is answered only once committed. So nothing here,
    and the server's state unchanged, means the tap was dropped (no interval waited)."""
    waiting = page.evaluate(
        f"() => [document.querySelectorAll('.pending').length,"
        f" Object.keys(localStorage).filter((key) => key.startsWith('tc-outbox-{table_id}-sheet'))"
        ".length]"
    )
    return bool(waiting == [0, 0])


def test_a_call_a_pound_race_a_manual_roll_and_every_screen_follows(
    browser: Any, server: ServerProcess
) -> None:
    api, table = sixes_table(server)
    tid = table["table_id"]
    ann = take_seat(browser, server, table["code"], 0, TABLET)
    bob = take_seat(browser, server, table["code"], 1, PHONE)
    cy = take_seat(browser, server, table["code"], 2, PHONE_SIDEWAYS)
    host_context = browser.new_context(**LAPTOP)  # the table view, with the host's cookie
    host_context.add_cookies(
        [{"name": k, "value": v, "url": server.base_url} for k, v in api.cookies.items()]
    )
    host = host_context.new_page()
    host.goto(f"{server.base_url}/t/{tid}")
    host.wait_for_selector("#conn[data-conn=live]")

    # Ann rolls first and has called 1: Bob and Cy each get a big POUND, Ann the dice entry
    for page in (bob, cy):
        assert page.locator(".sixes-pound.legal").count() == 1
    assert ann.locator(".sixes-pound").count() == 0 and ann.locator(".roll-entry").count() == 1
    assert bob.locator(".roll-entry").count() == 0
    assert ann.inner_text("[data-number-up]") == "1" and ann.inner_text("[data-pot]") == "50"
    pound_box = bob.locator(".sixes-pound").bounding_box()
    assert pound_box["width"] >= 300 and pound_box["height"] >= 120  # a thumb cannot miss it
    shot(bob, "sixes-bob-call-phone")
    for page in (bob, cy):
        assert page.evaluate(SMALL_TARGETS) == []

    # the race: both pound on a screen that still shows the call; the engine takes the first
    bob.click(".sixes-pound")
    cy.click(".sixes-pound")
    for page in (ann, bob, cy, host):
        on_state(page, 1)
    state = api.get(f"/api/tables/{tid}/state").json()
    winner = state["state"]["state"]["pounded_by"]
    assert winner in (1, 2)
    winner_page, loser_page = (bob, cy) if winner == 1 else (cy, bob)
    assert toast_text(loser_page).startswith("Someone else pounded first")
    shot(loser_page, "sixes-pound-refused")
    assert winner_page.locator("#toast").is_hidden()
    assert state["state_id"] == 1  # the refused pound changed nothing
    # every screen shows the winner in the betting and the bet in the pot
    winner_name = ["Ann", "Bob", "Cy"][winner]
    # the table view shows the shared table once (in the first sheet), each seat's POUND
    assert host.locator(".sixes-common:visible").count() == 1
    assert host.locator(f".sixes-purses:visible tr[data-seat='{winner}'] .t-betting").count() == 1
    assert winner_page.inner_text(".sixes-pound-hint") == "You won this table-pound"
    assert ann.inner_text("[data-pot]") == "60"  # starter pot 50 + the bet on 1 (10)
    assert host.inner_text("[data-pot]") == "60"

    # Ann enters the roll by hand: 3 and 4, safe on 1; she chooses from her buttons
    ann.click(".die-picker[data-die-index='0'] .face[data-face='3']")
    ann.click(".die-picker[data-die-index='1'] .face[data-face='4']")
    ann.click("[data-roll-submit]")
    for page in (ann, bob, cy, host):
        on_state(page, 2)
    assert [
        int(v)
        for v in bob.locator(".sixes-last .die").evaluate_all(
            "els => els.map(e => e.dataset.value)"
        )
    ] == [3, 4]
    assert bob.locator(".sixes-pound").count() == 0  # no call, nothing to pound
    assert ann.locator(".sixes-actions button").all_inner_texts() == [
        "Pass: share the pot (60)",
        "Go on: call 2",
    ]
    shot(ann, "sixes-ann-safe-roll-tablet")
    ann.click(".sixes-actions button:has-text('Go on')")
    for page in (ann, bob, cy, host):
        on_state(page, 3)
    assert cy.inner_text("[data-number-up]") == "2"
    assert cy.locator(".sixes-pound.legal").count() == 1  # a new call, a new table-pound
    shot(host, "sixes-table-view-laptop")

    # nobody pounds this time; Ann rolls a 2: she loses, the pot (60 + the bet on 2: 80)
    # goes to the one better, and the dice move on to Bob
    ann.click(".die-picker[data-die-index='0'] .face[data-face='2']")
    ann.click(".die-picker[data-die-index='1'] .face[data-face='6']")
    ann.click("[data-roll-submit]")
    for page in (ann, bob, cy, host):
        on_state(page, 4)
    assert cy.get_attribute(".sixes-last-turn", "data-result") == "loss"
    assert "lost on 2" in host.inner_text(".sixes-last-turn")
    purses = [
        int(host.get_attribute(f".sixes-purses tr[data-seat='{s}']", "data-purse"))
        for s in range(3)
    ]
    expected = [450, 450, 500]  # Ann paid the starter pot; Bob rolls next and paid his
    expected[winner] += 80 - 30  # the winner bet 10 + 20 and took the pot of 80
    assert purses == expected, winner_name
    assert bob.locator(".roll-entry").count() == 1 and ann.locator(".roll-entry").count() == 0
    assert (
        cy.locator(".sixes-pound.legal").count() == 1 and bob.locator(".sixes-pound").count() == 0
    )
    shot(bob, "sixes-bob-rolls-next-phone")
    shot(cy, "sixes-cy-sideways-phone")
    for page in (bob, cy):
        assert page.evaluate(SMALL_TARGETS) == []


def test_a_slow_double_tap_on_pass_does_not_pound_on_the_next_call(
    browser: Any, server: ServerProcess
) -> None:
    """The players' trial: Ann (the roller, on a phone) taps Pass and taps the same spot
    again a moment later; the redraw has put the next call's POUND there, and the second
    tap put her in the betting of Bob's turn. A touch tap near the one before it, just
    after the redraw that tap led to, is dropped now."""
    api, table = sixes_table(server)
    ann = take_seat(browser, server, table["code"], 0, PHONE)
    ann.click(".die-picker[data-die-index='0'] .face[data-face='3']")
    ann.click(".die-picker[data-die-index='1'] .face[data-face='4']")
    ann.click("[data-roll-submit]")
    on_state(ann, 1)  # safe on 1: Ann may pass or go on
    box = ann.locator(".sixes-actions button:has-text('Pass')").bounding_box()
    # low on the button: the banner above is one line on her own phone ("Decide: your
    # turn"), and the next call's POUND, drawn lower, starts below Pass's middle
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.8
    ann.touchscreen.tap(x, y)
    on_state(ann, 2)  # the pass: Bob rolls next and has called 1
    under = ann.evaluate(
        "([x, y]) => { const e = document.elementFromPoint(x, y);"
        " const b = e && e.closest('[data-move]'); return b ? b.dataset.move : null; }",
        [x, y],
    )
    assert under is not None and '"pound"' in under  # a button lies where she tapped
    ann.touchscreen.tap(x, y)  # the second tap of her slow double tap
    assert nothing_waiting(ann, table["table_id"])
    state = api.get(f"/api/tables/{table['table_id']}/state").json()
    assert state["state_id"] == 2 and state["state"]["state"]["pounded_by"] is None


def test_a_double_tap_does_not_confirm_a_tap_again_question(
    browser: Any, server: ServerProcess
) -> None:
    """The players' re-trial: two finger taps 300 ms apart on "End the game here" armed its
    question and confirmed it at once, ending the game for everyone. The page's clock is
    paused for the double tap, so its two taps land at one instant however busy the
    machine (two real taps could lie more than half a second apart)."""
    api, table = sixes_table(server)
    ann = take_seat(browser, server, table["code"], 0, PHONE, clock=True)
    ending = ann.locator(".sixes-end-game")
    ann.clock.pause_at(ann.evaluate("Date.now()") / 1000 + 1)  # Python's clock: seconds
    ending.tap()
    ending.tap()  # the same instant on the page's clock: no time to read the question
    # read at once (a game ended by the second tap takes the button away)
    armed, text = ann.evaluate(
        "() => { const b = document.querySelector('.sixes-end-game.armed');"
        " return b ? [b.dataset.armed, b.textContent] : [null, null]; }"
    )
    assert armed == "asking"  # still asking
    assert text.startswith("This ends the game for everyone")
    assert nothing_waiting(ann, table["table_id"])  # nothing sent: the game goes on
    state = api.get(f"/api/tables/{table['table_id']}/state").json()
    assert state["state_id"] == 0 and state["outcome"] is None


def test_the_end_card_on_a_phone_says_who_wins(browser: Any, server: ServerProcess) -> None:
    """A one-roller game: Bob pounds, Ann rolls a safe 2 + 3 on the call of 1 and passes;
    Ann and Bob share the pot of 60, so Bob ends with 520 coins, Ann 480, Cy 500. Cy's
    phone says who won, not only who is richest."""
    api = httpx.Client(base_url=server.base_url, timeout=5)
    table = api.post(
        "/api/tables",
        json={
            "game": "sixes",
            "options": {"players": 3, "rollers": 1},
            "players": ["Ann", "Bob", "Cy"],
        },
    ).json()
    moves = [
        {"kind": "pound", "player": 1},
        roll_json(("white", 2), ("white", 3)),
        {"kind": "pass", "player": 0},
    ]
    for number, move in enumerate(moves):
        answer = api.post(
            f"/api/tables/{table['table_id']}/actions",
            json={"action_id": f"end-card-{number:04d}", "move": move},
        )
        assert answer.status_code == 200, answer.text
    api.close()
    cy = take_seat(browser, server, table["code"], 2, PHONE)
    message = cy.locator(".outcome .outcome-message")
    message.wait_for(timeout=20_000)
    assert message.inner_text().endswith("Bob is the richest with 520 coins and wins")
    shot(cy, "sixes-end-who-wins-phone")
    cy.context.close()


def test_a_phone_labels_the_last_turn_apart_from_the_last_roll(
    browser: Any, server: ServerProcess
) -> None:
    """Ann passes after 1 and Bob, the next roller, rolls 5 + 4 on the call of 1. Under
    Bob's roll, Cy's phone says Ann's pass is the last turn's result, not that roll's."""
    api, table = sixes_table(server)
    moves = [
        {"kind": "pound", "player": 1},
        roll_json(("white", 2), ("white", 3)),
        {"kind": "pass", "player": 0},
        roll_json(("white", 5), ("white", 4)),
    ]
    for number, move in enumerate(moves):
        answer = api.post(
            f"/api/tables/{table['table_id']}/actions",
            json={"action_id": f"last-turn-{number:04d}", "move": move},
        )
        assert answer.status_code == 200, answer.text
    api.close()
    cy = take_seat(browser, server, table["code"], 2, PHONE)
    last_turn = cy.locator(".sixes-last-turn")
    last_turn.wait_for(timeout=20_000)
    assert "Bob's roll on the call of 1" in cy.inner_text(".sixes-roll-by")
    assert last_turn.inner_text().startswith("Last turn: Ann passed after 1")
    shot(cy, "sixes-last-turn-labelled-phone")
    cy.context.close()
