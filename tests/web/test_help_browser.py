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
    start = context.new_page()
    start.goto(server.base_url + "/")
    with context.expect_page() as opened:
        start.click("#help-link")
    page = opened.value
    page.wait_for_url(server.base_url + "/help", timeout=10000)
    assert page.locator("h1").inner_text() == "How the companion works"
    assert page.locator("section#qwixx").is_visible()
    shot(page, "help-phone")
    # the help page's own link does not open a second help
    assert page.locator("#help-link").get_attribute("target") is None

    created = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "sixmix", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    sheet = seated_page(browser, server, created.json(), 0, PHONE)
    with sheet.context.expect_page() as opened:
        sheet.click("#help-link")
    help_page = opened.value
    help_page.wait_for_url(server.base_url + "/help#sixmix", timeout=10000)
    help_page.wait_for_function(
        "() => document.getElementById('sixmix').getBoundingClientRect().top < 100",
        timeout=10000,
    )
    context.close()
    sheet.context.close()


def test_the_help_opens_beside_the_sheet_and_says_so(browser: Any, server: ServerProcess) -> None:
    """The Help link took a player's own tab away from their sheet mid-game (its live
    connection closed, a roll or a refusal could come and go unseen). It opens the help in
    a new tab now, the sheet staying where it was and live; the link says so to a screen
    reader, and the help gets no hold on the sheet's tab (rel noopener)."""
    host = browser.new_context(**PHONE)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    sheet = seated_page(browser, server, created.json(), 0, PHONE)
    link = sheet.get_by_role("link", name="Help (opens in a new tab)", exact=True)
    assert link.count() == 1
    assert "noopener" in (link.get_attribute("rel") or "").split()
    with sheet.context.expect_page(timeout=10000) as opened:
        link.click()
    help_page = opened.value
    help_page.wait_for_url(server.base_url + "/help#qwixx", timeout=10000)
    assert help_page.evaluate("window.opener") is None
    assert sheet.url.endswith("/sheet")
    sheet.wait_for_selector("#conn[data-conn=live]")
    assert sheet.locator("#help-link").inner_text() == "Help"  # the words shown unchanged
    host.close()
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
