"""Fixtures for the whole suite.

`browser` lives here, once: Playwright's sync API runs its own event loop in the main
thread for as long as it is open, so a second session-wide instance (one per test folder)
cannot start while the first is still open. Every browser test shares this one Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
