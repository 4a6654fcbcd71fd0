"""A player's undo in Debian's Chromium, as the table lives it: the undo button where a
phone's player looks right after acting (the sticky banner, by the turn line), whatever
the sheet's scroll."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET, seated_page
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000


def qwixx_table(browser: Any, server: ServerProcess) -> tuple[Any, dict[str, Any], str]:
    """A 2-player Qwixx table (Ann, Bob) made by a host's device (no page opened): the
    host's request context, the table and its API address."""
    host = browser.new_context()
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    table = created.json()
    return host, table, f"{server.base_url}/api/tables/{table['table_id']}"


def host_acts(host: Any, api: str, action_id: str, move: dict[str, Any]) -> None:
    answer = host.request.post(f"{api}/actions", data={"action_id": action_id, "move": move})
    assert answer.status == 200, answer.text()


def in_viewport(page: Any, selector: str) -> bool:
    """Whether the element is on screen as the page is scrolled now (not only in the page)."""
    return bool(
        page.evaluate(
            """(selector) => {
              const box = document.querySelector(selector).getBoundingClientRect();
              return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
            }""",
            selector,
        )
    )


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_the_undo_button_is_on_screen_right_after_acting(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    """Ann crosses a box on her sheet; the undo naming it is on her screen where she
    looks, in the banner by the turn line, with the page scrolled to the top, to the box
    she tapped, or to the end. Before: it sat below the whole sheet, off a phone's screen."""
    host, table, api = qwixx_table(browser, server)
    ann = seated_page(browser, server, table, 0, device)
    host_acts(host, api, "host-roll-1", QWIXX_ROLL_7)
    ann.wait_for_selector(".live[data-state-id='1']")
    box = ann.locator("button[aria-label='Red 7']")
    box.click()
    undo = ann.locator("[data-undo]")
    undo.wait_for(timeout=DEADLINE_MS)
    assert undo.inner_text() == "Undo cross red 7"
    assert ann.locator(".banner [data-undo]").count() == 1  # by the turn line
    for where in ("window.scrollTo(0, 0)", "window.scrollTo(0, document.body.scrollHeight)"):
        ann.evaluate(where)
        assert in_viewport(ann, "[data-undo]"), where
    ann.locator("button[aria-label='Red 7 crossed']").scroll_into_view_if_needed()
    assert in_viewport(ann, "[data-undo]")
    shot(ann, f"undo-in-banner-{name}")
    # the banner keeps its room for the sheet: on a tablet the undo shares a line
    banner = ann.locator(".banner").bounding_box()
    assert banner["height"] < device["viewport"]["height"] / (4 if name == "tablet" else 3)
    ann.context.close()
    host.close()
