"""Sixto's last turn in Debian's Chromium: the players already done crossing in the turn
that ends the game are told so, also at a table without automatic passes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess
from tests.web.devices import PHONE, SIXTO_ANN_BOB, hosted_table, seated_page
from tests.web.helpers import roll_json

pytestmark = pytest.mark.browser


def test_the_player_done_in_the_last_turn_is_told_without_automatic_passes(
    browser: Any, server: ServerProcess
) -> None:
    """A table without automatic passes: Ann crosses box 9 in every row and is done, so
    she can cross nothing more and the game ends with this turn. Her phone said nothing of
    it while Bob crossed (with automatic passes it did); it says the game ends after this
    turn, once Bob is done."""
    host, table = hosted_table(browser, server, SIXTO_ANN_BOB)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    assert host.request.post(f"{api}/auto_pass", data={"on": False}).ok
    state = host.request.get(f"{api}/state").json()["state"]["state"]
    colours, numbers = state["colours"], state["sheets"][0]["numbers"]  # Ann's sheet
    moves = [
        roll_json(*((colour, int(row[8])) for colour, row in zip(colours, numbers, strict=True))),
        {"kind": "keep", "player": 0},
        *({"kind": "cross", "player": 0, "colour": colour, "column": 9} for colour in colours),
        {"kind": "done", "player": 0},
    ]
    for index, move in enumerate(moves):
        answer = host.request.post(
            f"{api}/actions", data={"action_id": f"last-turn-{index:02d}", "move": move}
        )
        assert answer.ok, answer.text()
    ann = seated_page(browser, server, table, 0, PHONE)
    waits = ann.locator(".roll-waits")
    waits.wait_for(timeout=20_000)
    assert waits.inner_text() == (
        "No roll yet: the game ends after this turn, once Bob is done crossing "
        "(the host's device may tap Done crossing for them)"
    )
    ann.context.close()
    host.close()
