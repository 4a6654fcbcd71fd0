"""Fixtures shared with the web tests: Debian's Chromium through Playwright."""

from tests.web.conftest import browser

__all__ = ["browser"]
