"""The start page starts one table per tap, in Debian's Chromium: a second tap (or Enter)
while the first start waits for its answer started a second table, which the café's start
page then listed beside the first. Both submits are made before the first start's answer
can come (one script), so whether the second is sent is the page's doing alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.waiting import wait_until
from tests.web.conftest import ServerProcess
from tests.web.devices import TABLET

pytestmark = pytest.mark.browser


def test_two_taps_on_start_start_one_table(browser: Any, server: ServerProcess) -> None:
    page = browser.new_context(**TABLET).new_page()
    starts: list[str] = []
    page.on(
        "request",
        lambda request: (
            starts.append(request.url)
            if request.method == "POST" and request.url.endswith("/api/tables")
            else None
        ),
    )
    page.goto(server.base_url + "/")
    page.check("input[name=game][value=qwixx]")
    page.wait_for_selector("#options .option, #options .record-list")
    # two submits before the first is answered: a double tap, or a tap and Enter
    page.evaluate(
        "() => { const form = document.getElementById('start-form');"
        " form.requestSubmit(); form.requestSubmit(); }"
    )
    page.wait_for_url("**/t/**", timeout=30000)
    wait_until(lambda: starts, what="the start sent")
    assert len(starts) == 1, starts
