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


@pytest.mark.parametrize("width", [360, 390])
def test_the_top_bar_keeps_to_one_line_on_a_phone_with_its_help_link(
    browser: Any, server: ServerProcess, width: int
) -> None:
    """The Help link made a phone's top bar two lines (the name, then Table, Seat, Help on a
    sheet), pushing a notice at the top of the page ("The host freed your seat") out of its
    place: on a 360 or 390 px phone the bar is one line on the start page, the help and a
    seated player's sheet, and every link keeps its 44 px to tap."""
    phone = {**PHONE, "viewport": {"width": width, "height": 800}}
    context = browser.new_context(**phone)
    page = context.new_page()
    created = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    sheet = seated_page(browser, server, created.json(), 0, phone)
    for shown, path in ((page, "/"), (page, "/help"), (sheet, None)):
        if path is not None:
            shown.goto(server.base_url + path)
        bar = shown.evaluate(
            "() => { const bar = document.querySelector('.topbar');"
            " const tops = [...bar.children].map(e => Math.round(e.getBoundingClientRect().top));"
            " const sizes = [...bar.querySelectorAll('a:not(.brand)')]"
            "   .map(e => Math.min(e.getBoundingClientRect().width, e.getBoundingClientRect().height));"
            " return {lines: new Set(tops).size, smallest: Math.min(...sizes),"
            " links: bar.querySelectorAll('a').length}; }"
        )
        assert bar["links"] >= 4 and bar["lines"] == 1, (width, path, bar)
        assert bar["smallest"] >= 44, (width, path, bar)
    context.close()
    sheet.context.close()
