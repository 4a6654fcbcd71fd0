"""The pages under their own Content-Security-Policy (companion/web/page_headers.py), in
Debian's Chromium: every page of a table, the host's and a player's, works with scripts
from /static only, and the browser reports no violation of it; a page of another site
that frames the table page gets no table in its frame."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.web.conftest import ServerProcess
from tests.web.test_browser import LAPTOP, PHONE, enter_roll, join, live

pytestmark = pytest.mark.browser


def watch_violations(page: Any) -> list[str]:
    """Every CSP violation and script error the page reports, as it happens."""
    seen: list[str] = []
    page.on("pageerror", lambda error: seen.append(f"error: {error}"))
    page.on(
        "console",
        lambda message: (
            seen.append(message.text)
            if "Content Security Policy" in message.text or "Refused to" in message.text
            else None
        ),
    )
    return seen


def test_every_page_works_under_its_policy(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**LAPTOP).new_page()
    host_saw = watch_violations(host)
    host.goto(server.base_url + "/")
    host.fill("#player-count", "2")
    host.dispatch_event("#player-count", "change")
    host.click("button[type=submit].primary")  # start.js reads the page's games JSON
    host.wait_for_url("**/t/*")
    host.wait_for_selector("#conn[data-conn=live]")
    code = host.inner_text("#join-code")
    table_url = host.url
    phone = join(browser, server, code, 0, PHONE)
    phone_saw = watch_violations(phone)
    phone.reload()  # its sheet again, watched from the start
    phone.wait_for_selector("#conn[data-conn=live]")
    enter_roll(phone, [1, 2, 3, 4, 5, 6])
    live(phone, 1)
    live(host, 1)
    host.goto(table_url + "/board")
    host.wait_for_selector("#conn[data-conn=live]")
    for path in (table_url + "/log", table_url + "/dice", "/history", "/join"):
        host.goto(path if path.startswith("http") else server.base_url + path)
        host.wait_for_load_state("load")
    assert host_saw == [] and phone_saw == []


def test_another_sites_frame_shows_no_table(browser: Any, server: ServerProcess) -> None:
    host = browser.new_context(**LAPTOP)
    created = host.request.post(
        server.base_url + "/api/tables", data={"game": "qwixx", "options": {"players": 2}}
    )
    table_url = server.base_url + created.json()["url"]
    page = host.new_page()
    page.goto(table_url)
    page.wait_for_selector("#conn[data-conn=live]")
    # a page on another origin, another port of this machine: the browser sends it the
    # Lax cookies (same site), and before, the frame showed the host's table
    with another_site(f'<iframe id="f" src="{table_url}"></iframe>') as evil:
        other = page.context.new_page()
        other.goto(evil, wait_until="load")  # the frame's load is part of the page's
        assert len(other.frames) == 2
        assert other.frame_locator("#f").locator("#conn").count() == 0


@contextmanager
def another_site(html: str) -> Iterator[str]:
    """A page served by another server on this machine (another port): its address."""
    body = html.encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()
        site.server_close()
