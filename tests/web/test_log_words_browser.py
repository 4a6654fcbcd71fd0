"""The game log in words (issue 26 item 9), in Debian's Chromium on a phone and a tablet:
a pass that cost a penalty says so ("Pass (no cross), -5 penalty", with a minus sign);
the free passes stay plain."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_log_names_a_penalty(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host = browser.new_context(**device)
    table = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    ).json()
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    moves = [QWIXX_ROLL_7, *({"kind": "pass", "player": seat} for seat in (0, 1, 0))]
    for number, move in enumerate(moves):  # the white sum passed by both, then Ann's colours
        answer = host.request.post(
            f"{api}/actions", data={"action_id": f"log-move-{number}", "move": move}
        )
        assert answer.ok, answer.text()
    page = host.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}/log")
    texts = page.locator(".log-table tbody tr td:nth-child(3)").all_inner_texts()
    assert texts[1:] == [
        "Pass (no cross)",
        "Pass (no cross)",
        "Pass (no cross), \N{MINUS SIGN}5 penalty",
    ]
    shot(page, f"log-penalty-{name}")
    host.close()
