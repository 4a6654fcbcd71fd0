"""The help page in Debian's Chromium: the start page's Help link opens it, and a seated
player's sheet opens the section of its own game, on a phone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, seated_page

pytestmark = pytest.mark.browser


def test_the_help_links_open_the_help_page(browser: Any, server: ServerProcess) -> None:
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.goto(server.base_url + "/")
    page.click("#help-link")
    page.wait_for_url(server.base_url + "/help", timeout=10000)
    assert page.locator("h1").inner_text() == "How the companion works"
    assert page.locator("section#qwixx").is_visible()
    shot(page, "help-phone")

    created = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "sixmix", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    sheet = seated_page(browser, server, created.json(), 0, PHONE)
    sheet.click("#help-link")
    sheet.wait_for_url(server.base_url + "/help#sixmix", timeout=10000)
    sheet.wait_for_function(
        "() => document.getElementById('sixmix').getBoundingClientRect().top < 100",
        timeout=10000,
    )
    context.close()
    sheet.context.close()
