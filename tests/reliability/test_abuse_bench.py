"""bench/abuse.py's readers wait out a 429's Retry-After (bounded by the abuse's end), so
what they got counts what the limiter let through; --hostile keeps the flood."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from bench import abuse

Reader = Callable[[float, Counter[str], bool], Coroutine[Any, Any, None]]


def log_reader(stop: float, seen: Counter[str], patient: bool) -> Coroutine[Any, Any, None]:
    path = f"/t/{abuse.LONG_TABLE}/log"
    return abuse.page_reader("http://bench", "127.0.0.11", path, stop, seen, [], patient)


def dice_reader(stop: float, seen: Counter[str], patient: bool) -> Coroutine[Any, Any, None]:
    return abuse.dice_reader("http://bench", "127.0.0.6", "t1", stop, seen, [], patient)


@pytest.fixture
def refusing_server(monkeypatch: pytest.MonkeyPatch) -> list[httpx.Request]:
    """A server whose limiter refuses every request for an hour; the requests it got."""
    asked: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(429, headers={"Retry-After": "3600"}, json={"rule": "read_rate"})

    def transport(local_address: str) -> httpx.MockTransport:
        return httpx.MockTransport(refuse)

    monkeypatch.setattr(httpx, "AsyncHTTPTransport", transport)
    return asked


@pytest.mark.parametrize("reader", [log_reader, dice_reader], ids=["page", "dice"])
def test_a_reader_waits_out_retry_after_until_the_abuse_ends(
    refusing_server: list[httpx.Request], reader: Reader
) -> None:
    seen: Counter[str] = Counter()
    stop = time.monotonic() + 0.5
    asyncio.run(reader(stop, seen, True))
    # one request, then its hour of Retry-After cut at the abuse's end, not slept whole
    assert len(refusing_server) == 1, seen
    assert time.monotonic() < stop + abuse.MAX_RETRY_WAIT_S
    assert sum(n for key, n in seen.items() if key.endswith("waited")) == 1


def test_a_hostile_reader_does_not_wait(refusing_server: list[httpx.Request]) -> None:
    seen: Counter[str] = Counter()
    asyncio.run(log_reader(time.monotonic() + 0.3, seen, False))
    assert len(refusing_server) > 1 and seen["log 429"] == len(refusing_server)


def test_a_retry_after_beyond_the_bound_is_waited_only_the_bound(
    refusing_server: list[httpx.Request], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(abuse, "MAX_RETRY_WAIT_S", 0.05)
    seen: Counter[str] = Counter()
    asyncio.run(log_reader(time.monotonic() + 0.5, seen, True))
    # about ten requests in 0.5 s (a slow machine makes fewer), never the flood
    assert 1 < len(refusing_server) < 20


def test_an_abuse_too_short_to_time_is_refused_before_the_store_is_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--seconds 3` (a quick try) built a store of 90,000 actions, started a server, then
    died on an IndexError: the abusers' first 3 s are not timed, so nothing was."""
    built: list[int] = []
    monkeypatch.setattr(abuse, "build_store", lambda *args: built.append(1))
    with pytest.raises(SystemExit) as done:
        abuse.main(["--seconds", "3"])
    assert done.value.code == 2
    assert "--seconds 3 leaves nothing to time" in capsys.readouterr().err
    assert built == []
