"""The devices the browser tests play on (a phone and a tablet, as the table's players
hold them) and a seated player's sheet on one of them."""

from __future__ import annotations

from typing import Any

from tests.web.conftest import ServerProcess

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
TABLET = {"viewport": {"width": 820, "height": 1180}, "has_touch": True}
DEVICES = [(PHONE, "phone"), (TABLET, "tablet")]
# a two-player Sixto table for Ann and Bob, as POST /api/tables takes it
SIXTO_ANN_BOB = {"game": "sixto", "options": {"players": 2}, "players": ["Ann", "Bob"]}


def seated_page(
    browser: Any,
    server: ServerProcess,
    table: dict[str, Any],
    seat: int,
    device: Any,
    clock: bool = False,
) -> Any:
    """A new device that joins `table` with its code, takes `seat` and opens its sheet,
    returned once the sheet's socket is live; with Playwright's clock installed before the
    sheet opens when `clock` (a test that pauses the page's time)."""
    context = browser.new_context(**device)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    assert context.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    assert context.request.post(f"{api}/seat", data={"seat": seat}).ok
    page = context.new_page()
    if clock:
        page.clock.install()
    page.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def hosted_table(
    browser: Any, server: ServerProcess, body: dict[str, Any], device: Any = None
) -> tuple[Any, dict[str, Any]]:
    """A host's device (a tablet unless `device`) and the table it made with `body` (game,
    options, players), as the start page's POST /api/tables answers it."""
    host = browser.new_context(**(TABLET if device is None else device))
    created = host.request.post(server.base_url + "/api/tables", data=body)
    assert created.status == 201, created.text()
    return host, created.json()
