"""A 2-player Qwixx game in Debian's Chromium whose host plays on their own phone (the
host's device holds Ann's seat): both phones read what their players can do. Bob's phone
pointed Bob at the host's device, which, seated, acts as Ann only; Ann's undo refusal
pointed her at the host, herself; her penalty pass's undo said nothing of the penalty."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, seated_page
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000
PASS = ".sheet-buttons button[data-move*='pass']"


def hosts_phone_at_anns_seat(browser: Any, server: ServerProcess) -> tuple[Any, dict[str, Any]]:
    """Ann's phone creates a 2-player Qwixx table (Ann, Bob), so it is the host's device,
    and takes Ann's seat; its sheet, once live, and the table."""
    context = browser.new_context(**PHONE)
    created = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    table = created.json()
    seat = context.request.post(
        f"{server.base_url}/api/tables/{table['table_id']}/seat", data={"seat": 0}
    )
    assert seat.ok, seat.text()
    page = context.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page, table


def sends(page: Any, api: str, action_id: str, move: dict[str, Any]) -> None:
    """`page`'s device sends `move` (as its own screen's buttons do)."""
    answer = page.context.request.post(
        f"{api}/actions", data={"action_id": action_id, "move": move}
    )
    assert answer.status == 200, answer.text()


def at_state(page: Any, state_id: int) -> None:
    page.wait_for_selector(f".live[data-state-id='{state_id}']", timeout=DEADLINE_MS)


def test_a_game_whose_host_plays_reads_right_on_both_phones(
    browser: Any, server: ServerProcess
) -> None:
    ann, table = hosts_phone_at_anns_seat(browser, server)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    bob = seated_page(browser, server, table, 1, PHONE)
    sends(ann, api, "ann-roll-1", QWIXX_ROLL_7)  # Ann rolls: Bob rolls next
    at_state(bob, 1)
    # Ann has not acted: Bob's roll would cost her a penalty, and no device may enter it
    assert bob.locator(".roll-waits").inner_text() == (
        "Your next roll waits for Ann: rolled now, it would pass for Ann with a penalty"
    )
    shot(bob, "host-plays-bob-waits-phone")
    bob.locator(PASS).click()
    at_state(ann, 2)
    ann.locator(PASS).click()  # her white sum: it costs nothing
    at_state(ann, 3)
    assert ann.locator(PASS).inner_text() == "Pass: \N{MINUS SIGN}5 penalty"
    ann.locator(PASS).click()
    ann.locator(PASS).click()  # "tap again": the penalty
    at_state(ann, 4)
    assert ann.locator("[data-undo]").inner_text() == "Undo pass (\N{MINUS SIGN}5 penalty)"
    shot(ann, "host-plays-undo-penalty-phone")
    sends(bob, api, "bob-roll-2", QWIXX_ROLL_7)  # Bob's turn
    sends(bob, api, "bob-white-2", {"kind": "pass", "player": 1})
    at_state(ann, 6)
    ann.locator(PASS).click()  # Ann passes the white sum
    at_state(bob, 7)
    red_5 = {"kind": "cross", "player": 1, "colour": "red", "number": 5}
    sends(bob, api, "bob-red-5", red_5)  # needs Ann's pass: the white sum is over
    at_state(ann, 8)
    note = ann.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    assert note.inner_text() == (
        "Bob's move since needs your last action: once Bob undoes that move, you can undo "
        "yours; as the host, you can undo back to it from the table view (Seat, then Just "
        "watch)"
    )
    shot(ann, "host-plays-undo-why-phone")
    # the way the words give: the seat page stands Ann's phone up to the host's table view
    ann.locator("nav a", has_text="Seat").click()
    ann.locator("button[name=seat][value=table]").click()
    ann.wait_for_selector(".table-page #conn[data-conn=live]", timeout=DEADLINE_MS)
    assert ann.locator("[data-undo]").inner_text() == "Undo last action"
    bob.context.close()
    ann.context.close()
