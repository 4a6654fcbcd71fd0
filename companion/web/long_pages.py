"""Pages and answers whose size grows with what is stored (a game's log page, its exported
record, the history), built off the event loop, kept while they still hold, and
rate-limited per client (issue 25, item 5).

A 10,000-action record is under 1 MB and may be imported; its log page is 2.5 MB of HTML
and took 0.38 s to build on the loop, so two clients looping on it pushed another table's
updates to a p95 of 1.2-2.4 s. Now:

- the work runs on one page thread (`PageBuilder`), never on the loop nor on the render
  thread that draws the live pushes; several at once wait there in turn;
- what was built is kept by what it depends on (a table's state id, its photos), bounded in
  bytes (`PageCache`): asking again for an unchanged page costs a dictionary lookup;
- each client address may ask for such pages at `read_rate_per_s` (burst `read_burst`),
  like table creations: 429 with Retry-After beyond."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from fastapi import Request
from fastapi.templating import Jinja2Templates

from companion.table.access import DeviceRateLimiter
from companion.web.errors import slow_down

_T = TypeVar("_T")
PAGE_CACHE_BYTES = 32 * 1024 * 1024


class PageCache:
    """Built pages by key, the least recently used left out beyond `max_bytes`."""

    def __init__(self, max_bytes: int = PAGE_CACHE_BYTES) -> None:
        self._max = max_bytes
        self._size = 0
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
            return body

    def put(self, key: Hashable, body: bytes) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            self._size -= len(old) if old is not None else 0
            if len(body) > self._max:
                return
            self._items[key] = body
            self._size += len(body)
            while self._size > self._max:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)


class PageBuilder:
    """Builds long pages on its own thread and keeps them (`PageCache`)."""

    def __init__(self) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pages")
        self.cache = PageCache()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    async def run(self, work: Callable[[], _T]) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, work)

    async def kept(self, key: Hashable, build: Callable[[], bytes]) -> bytes:
        """The page under `key`, built on the page thread when it is not kept."""
        body = self.cache.get(key)
        if body is None:
            body = await self.run(build)
            self.cache.put(key, body)
        return body


def render_page(
    templates: Jinja2Templates, request: Request, name: str, context: dict[str, object]
) -> bytes:
    """A page's HTML, rendered where this is called (the page thread)."""
    template = templates.get_template(name)
    return template.render({"request": request, **context}).encode("utf-8")


def check_read_rate(request: Request) -> None:
    """Long pages per client address: a token bucket (Settings read_rate_per_s,
    read_burst); 429 once its burst is spent."""
    limiter: DeviceRateLimiter = request.app.state.read_limiter
    wait = limiter.take(request.client.host if request.client else "unknown")
    if wait > 0:
        # the start page shares this rate, so the words name no kind of page
        raise slow_down("read_rate", "pages asked for", wait)
