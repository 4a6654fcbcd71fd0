"""Fixtures for the whole suite.

`browser` lives here, once, and per test module: Playwright's sync API keeps its own event
loop running in the main thread for as long as it is open. A second instance cannot start
while one is open, and no later test could call `asyncio.run()` while a session-wide one
stayed open, so each browser module opens Chromium and closes it when it is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, ServerProcess, free_port


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A real `companion serve` process on a free loopback port with its own data folder."""
    process = ServerProcess(tmp_path / "data", free_port())
    process.start()
    try:
        yield process
    finally:
        process.stop()
