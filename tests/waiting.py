"""Waiting for a condition in tests: poll it until it holds, with a generous deadline (CI's
2-core machine may be busy), never a fixed interval."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(condition: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
    """Poll `condition` until it returns something true and return that; fail naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.05)
