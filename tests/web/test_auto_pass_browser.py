"""Nobody has to tap "pass" every white sum (issue 17 item 7), in Debian's Chromium on a
phone and a tablet: while Ann's white sum is open, Bob (who rolls next) types the next roll
in on his device; it passes for those who have not acted (Bob on the white sum, Ann on her
coloured dice) and the game log shows those passes as automatic. The host turns the table
option off: the next roll then waits until everyone has acted."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET, seated_page
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_the_next_roll_passes_for_those_who_have_not_acted(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host = browser.new_context(viewport={"width": 1280, "height": 900})
    table = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    ann = seated_page(browser, server, table, 0, PHONE)
    bob = seated_page(browser, server, table, 1, device)
    assert host.request.post(
        f"{api}/actions", data={"action_id": "roll-0001", "move": QWIXX_ROLL_7}
    ).ok
    ann.wait_for_selector(".live[data-state-id='1']")
    ann.click(".qx-row[data-row=red] .box[data-number='7']")  # Ann crosses her white sum
    bob.wait_for_selector(".live[data-state-id='2']")
    assert ann.locator(".roll-entry").count() == 0  # Bob rolls next, not Ann

    # Bob's device offers the next roll, folded, saying in a player's words what it does
    # to those still crossing
    fold = bob.locator(".roll-entry.next-roll summary")
    assert " ".join(fold.inner_text().split()) == (
        "Enter your next roll (it ends this crossing for you and Ann: you both cross "
        "nothing more this turn)"
    )
    fold.click()
    for index, value in enumerate((1, 1, 2, 3, 4, 5)):
        bob.click(f".roll-entry .die-picker[data-die-index='{index}'] .face[data-face='{value}']")
    shot(bob, f"auto-pass-next-roll-{name}")
    bob.click("[data-roll-submit]")
    # Bob's pass, Ann's colour step, then the roll: three passes later it is Bob's roll
    bob.wait_for_selector(".live[data-state-id='5']")
    state = bob.request.get(f"{api}/state").json()
    assert (state["turn"]["step"], state["turn"]["active"]) == ("white_sum", 1)
    assert [s["total"] for s in state["scores"]] == [1, 0]  # Ann crossed: no penalty

    log = ann.context.new_page()
    log.goto(f"{server.base_url}/t/{table['table_id']}/log")
    automatic = log.locator("tr[data-automatic]")
    assert automatic.count() == 2
    assert automatic.nth(0).inner_text().split("\t")[1:3] == [
        "automatic",
        "Bob: Pass (no cross) (the next roll came)",
    ]
    assert "Ann: Pass (no cross)" in automatic.nth(1).inner_text()
    shot(log, f"auto-pass-log-{name}")

    # the host turns the option off: Ann (next to roll) is offered no roll while Bob's
    # white sum is open
    board = host.new_page()

    def host_tools() -> None:
        # the join panel folded away once both seats were taken; the host tools sit beside
        # it, in reach without unfolding the join code
        board.goto(f"{server.base_url}/t/{table['table_id']}")
        board.click("details.host-tools summary")

    host_tools()
    # the host's change answered (stored) before the page is opened again to read it: Ann's
    # screen, the wait below, may show no roll entry already (on CI the reload came first)
    with board.expect_response(lambda answer: answer.url.endswith("/auto_pass")) as stored:
        board.uncheck("[data-host-auto-pass]")
    assert stored.value.ok
    ann.wait_for_function("() => !document.querySelector('.roll-entry')")
    host_tools()
    assert not board.is_checked("[data-host-auto-pass]")  # stored
    for context in (ann.context, bob.context, host):
        context.close()
