"""Qwixx's costly pass in Debian's Chromium, on a phone and on a tablet: the active
player's pass after crossing nothing reads "Pass: −5 penalty"; the first tap only asks
("Tap again ...") and sends nothing; the second tap marks the penalty."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

MINUS = "\N{MINUS SIGN}"


def post(page: Any, url: str, body: dict[str, Any]) -> Any:
    answer = page.request.post(url, data=body)
    assert answer.status == 200, answer.text()
    return answer.json()


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_the_penalty_pass_names_its_cost_and_asks_once(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    ann = browser.new_context(**device).new_page()  # the host's device, seated as Ann
    created = ann.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    table = created.json()
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    post(ann, f"{api}/seat", {"seat": 0})
    ann.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    ann.wait_for_selector("#conn[data-conn=live]")
    post(ann, f"{api}/actions", {"action_id": "roll-0001", "move": QWIXX_ROLL_7})
    ann.wait_for_selector(".live[data-state-id='1']")
    free = ann.locator(".sheet-buttons button[data-move*='pass']")
    assert free.inner_text() == "Pass (no cross)"  # the white sum's pass costs nothing
    assert free.get_attribute("data-confirm") is None
    free.click()
    ann.wait_for_selector(".live[data-state-id='2']")

    costly = ann.locator(".sheet-buttons button[data-move*='pass']")
    bob = browser.new_context().new_page()
    bob_join = bob.request.post(server.base_url + "/api/join", data={"code": table["code"]})
    assert bob_join.status == 200
    post(bob, f"{api}/seat", {"seat": 1})
    post(bob, f"{api}/actions", {"action_id": "bob-pass-1", "move": {"kind": "pass", "player": 1}})
    ann.wait_for_selector(".live[data-state-id='3']")
    assert costly.inner_text() == f"Pass: {MINUS}5 penalty"

    costly.click()  # asks, sends nothing
    assert costly.inner_text() == f"Tap again to pass and take {MINUS}5"
    assert "armed" in (costly.get_attribute("class") or "")
    shot(ann, f"pass-penalty-asks-{name}")
    state = ann.request.get(f"{api}/state").json()
    assert state["state_id"] == 3 and state["scores"][0]["total"] == 0

    costly.click()  # the second tap passes and takes the penalty
    ann.wait_for_selector(".live[data-state-id='4']")
    state = ann.request.get(f"{api}/state").json()
    assert state["scores"][0]["total"] == -5
    assert ann.locator(".penalty.crossed").count() == 1
    bob.context.close()
    ann.context.close()
