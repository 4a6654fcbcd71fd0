"""Refusals that name the rule a player broke first (issue 17 item 6), in Debian's Chromium
on a phone and on a tablet: Ann taps a lock with the wrong sum, a coloured box before Bob
has finished the white sum, and a box left of her last cross; each refusal names the rule
she broke first, speaks to her as "you" and names Bob by his name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


def refusal_after(page: Any, selector: str) -> str:
    """Tap `selector` and read the toast that answers it."""
    page.evaluate("document.getElementById('toast').textContent = ''")
    page.click(selector)
    page.wait_for_selector("#toast:not(:empty)")
    return str(page.inner_text("#toast"))


def ann_sees_the_first_roll(
    browser: Any, server: ServerProcess, device: dict[str, Any], clock: bool = False
) -> tuple[Any, Any, str]:
    """A Qwixx table for Ann and Bob whose host entered white 3 + 4 while Ann's sheet was
    open on `device` (with Playwright's clock installed first when `clock`): (the host's
    context, Ann's page, the table's API address)."""
    host = browser.new_context()
    table = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    ann = browser.new_context(**device).new_page()
    assert ann.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    assert ann.request.post(f"{api}/seat", data={"seat": 0}).ok
    if clock:
        ann.clock.install()
    ann.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    ann.wait_for_selector("#conn[data-conn=live]")
    roll = host.request.post(
        f"{api}/actions", data={"action_id": "roll-0001", "move": QWIXX_ROLL_7}
    )
    assert roll.ok
    ann.wait_for_selector(".live[data-state-id='1']")
    return host, ann, api


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_refusals_name_the_rule_broken_first_and_the_players_by_name(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host, ann, api = ann_sees_the_first_roll(browser, server, device)
    red = ".qx-row[data-row=red]"

    # the lock with the wrong sum (white 3 + 4 = 7): the lock's own rule comes first
    said = refusal_after(ann, f"{red} .box.lock")
    assert said == "Red 12 locks the row: it needs 5 crosses in red first (you have 0)"
    # a colour sum before the white sum (white 3 + yellow 5 = 8)
    said = refusal_after(ann, ".qx-row[data-row=yellow] .box[data-number='8']")
    assert said == (
        "The white dice show 7, not 8; a white and a coloured die come after the white sum"
    )
    ann.click(f"{red} .box[data-number='7']")  # her white sum
    ann.wait_for_selector(".live[data-state-id='2']")
    # Bob has not finished the white sum: she hears his name, never "player 2"
    said = refusal_after(ann, ".qx-row[data-row=yellow] .box[data-number='8']")
    assert said == (
        "The coloured dice are yours once everyone has crossed or passed on the white sum; "
        "waiting for Bob"
    )
    shot(ann, f"refusal-waiting-for-bob-{name}")
    # a box left of her last red cross, with a sum the dice do not show either
    said = refusal_after(ann, f"{red} .box[data-number='4']")
    assert said == "Red 4 is left of your last red cross"
    assert "player" not in said.lower()
    state = ann.request.get(f"{api}/state").json()
    assert state["state_id"] == 2  # nothing refused was applied
    host.close()
    ann.context.close()


def test_an_accepted_tap_clears_the_refusals_still_showing(
    browser: Any, server: ServerProcess
) -> None:
    """Refusals stacked in the toast stayed their 4 s after a later tap was accepted, and
    read as the answer to it ("Red 12 locks the row ...\\nThe white dice show 7, not 8"
    shown after an accepted Red 7). A tap made after a refusal shows replaces it now (no
    pile), and the accepted tap hides it. The page's clock stands still after the
    refusals, so only the accepted tap can hide them."""
    host, ann, _ = ann_sees_the_first_roll(browser, server, PHONE, clock=True)
    red = ".qx-row[data-row=red]"
    first = refusal_after(ann, f"{red} .box.lock")
    ann.click(".qx-row[data-row=yellow] .box[data-number='8']")
    ann.wait_for_function(
        "(old) => !['', old].includes(document.getElementById('toast').textContent)", arg=first
    )
    assert "\n" not in ann.inner_text("#toast")
    ann.clock.pause_at(ann.evaluate("Date.now()") / 1000 + 0.05)  # no timer hides it now
    ann.click(f"{red} .box[data-number='7']")  # her white sum: accepted
    ann.wait_for_selector(".live[data-state-id='2']")
    ann.wait_for_selector("#toast", state="hidden")
    # the next refusal is shown alone, not under the ones cleared
    said = refusal_after(ann, f"{red} .box[data-number='4']")
    assert said == "Red 4 is left of your last red cross"
    host.close()
    ann.context.close()


def refused_with(message: str) -> Any:
    """A route handler answering as the server refuses a host action, with `message`."""

    def answer(route: Any) -> None:
        body = {"reason": "not_allowed", "rule": "camera_elsewhere", "message": message}
        route.fulfill(status=403, json=body)

    return answer


def test_a_refusal_after_a_camera_message_shows_for_its_own_time(
    browser: Any, server: ServerProcess
) -> None:
    """The host's "Restart the camera" is refused (the camera serves another table, as a
    host off the server machine is told) and, two seconds later, so is the automatic
    passes switch. The second refusal raised a script error (the camera's message left the
    toast no list to add to) and never showed; and the camera message's 4 s timer emptied
    whatever the toast said by then (no timer takes the toast's words now: the player's
    next tap or Escape does). The page's clock is Playwright's: no wait is timed."""
    context = browser.new_context(**TABLET)
    table = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.clock.install()
    camera_refusal = "the camera serves another table"
    switch_refusal = "the automatic passes were not changed"
    page.route("**/camera/restart", refused_with(camera_refusal))
    page.route("**/auto_pass", refused_with(switch_refusal))
    page.goto(server.base_url + table["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    page.click("details.camera-tools summary")
    page.click("[data-camera-restart]")
    page.wait_for_function(
        "(words) => document.getElementById('toast').textContent.includes(words)",
        arg=camera_refusal.capitalize(),
    )
    page.clock.run_for(2000)
    page.click("#host-tools summary")
    page.click("[data-host-auto-pass]")
    page.wait_for_function(
        "(words) => document.getElementById('toast').textContent.includes(words)",
        arg=switch_refusal.capitalize(),
        timeout=10_000,
    )
    page.clock.run_for(12_500)  # no timer takes it, the camera message's nor its own
    # alone: the tap that brought it cleared the camera's message
    assert page.inner_text("#toast") == switch_refusal.capitalize()
    page.keyboard.press("Escape")
    page.wait_for_selector("#toast:empty", state="attached")
    # the other way round: the refusal's timer leaves the camera message that came after
    page.click("[data-host-auto-pass]")
    page.wait_for_function(
        "(words) => document.getElementById('toast').textContent.includes(words)",
        arg=switch_refusal.capitalize(),
        timeout=10_000,
    )
    page.clock.run_for(2000)
    page.click("[data-camera-restart]")
    page.wait_for_function(
        "(words) => document.getElementById('toast').textContent.includes(words)",
        arg=camera_refusal.capitalize(),
        timeout=10_000,
    )
    page.clock.run_for(2500)  # the refusal's 4 s are over, not the camera message's
    assert camera_refusal.capitalize() in page.inner_text("#toast")
    assert errors == []
    context.close()


def test_a_refusal_stays_until_the_player_moves_on_or_dismisses_it(
    browser: Any, server: ServerProcess
) -> None:
    """A refusal showed for 4 s (5.5 s with a second line) and went: too short to read
    for some players (WCAG 2.2.1), and gone before a player who looked at the dice saw it.
    It stays now until the player's next tap (which a new refusal would answer alone, not
    piled under the old one), a tap on it, or Escape. The page's clock is Playwright's: a
    minute passes in no time."""
    host, ann, _ = ann_sees_the_first_roll(browser, server, PHONE, clock=True)
    red = ".qx-row[data-row=red]"
    first = refusal_after(ann, f"{red} .box.lock")
    ann.clock.run_for(60_000)
    assert ann.inner_text("#toast") == first
    ann.keyboard.press("Escape")
    ann.wait_for_selector("#toast:empty", state="attached")
    # a tap on anything is the player moving on; the refusal it brings is shown alone
    ann.click(f"{red} .box.lock")
    ann.wait_for_selector("#toast:not(:empty)")
    ann.click(f"{red} .box[data-number='4']")
    ann.wait_for_function(
        "(old) => !['', old].includes(document.getElementById('toast').textContent)", arg=first
    )
    assert "\n" not in ann.inner_text("#toast")
    ann.clock.run_for(60_000)
    ann.locator("#toast").click()  # dismissed by a tap on it
    ann.wait_for_selector("#toast:empty", state="attached")
    ann.click(f"{red} .box[data-number='4']")
    ann.wait_for_selector("#toast:not(:empty)")
    ann.locator("h1, .banner").first.click()  # a tap elsewhere on the page
    ann.wait_for_selector("#toast:empty", state="attached")
    host.close()
    ann.context.close()
