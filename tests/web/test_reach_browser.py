"""Who can reach the table, in Debian's Chromium. `companion serve` with no option listens on
the LAN: the host's page shows the LAN address and a QR code of it, and a tablet and a phone
that open that address (not 127.0.0.1) join and take their seats. With --local the page
says plainly that no tablet can join, and how to fix it, instead of a QR code no tablet
could open.

The LAN address is this machine's own (a socket binds to it, checked first): the test's
requests to it stay on this machine, as every test's traffic must."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest

from companion.web.serve import lan_address
from tests.web.conftest import ServerProcess, free_port, shot

pytestmark = pytest.mark.browser

LAPTOP = {"viewport": {"width": 1280, "height": 800}, "device_scale_factor": 2}
TABLET = {"viewport": {"width": 768, "height": 1024}, "has_touch": True}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def start_table(page: Any, base_url: str) -> dict[str, Any]:
    created = page.request.post(
        base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    body: dict[str, Any] = created.json()
    page.goto(base_url + body["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    return body


def own_lan_address() -> str | None:
    """This machine's LAN address, only if it is one of its own interfaces' addresses."""
    address = lan_address()
    if address is None:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return None
    return address


def read_qr(page: Any) -> str:
    """The text of the page's QR code, read from its pixels as a phone camera would: at a
    few sizes, on a white margin, as a phone tries frame after frame (OpenCV's detector
    misses about 1 in 75 codes of this length at one size; at four, none of 600 tried)."""
    png = page.locator(".host-panel svg.qr").screenshot()
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    for scale in (1.0, 0.5, 0.75, 1.5):
        sized = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        framed = cv2.copyMakeBorder(sized, 16, 16, 16, 16, cv2.BORDER_CONSTANT, value=(255,) * 3)
        text, _, _ = cv2.QRCodeDetector().detectAndDecode(framed)
        if text:
            return str(text)
    return ""


def join_at(browser: Any, url: str, seat: int, device: dict[str, Any]) -> Any:
    """A device opens the joining `url` (as the QR code gives it), enters and sits."""
    page = browser.new_context(**device).new_page()
    page.goto(url)
    page.click("button[type=submit]")  # the code is filled in from the QR code's link
    page.wait_for_url("**/seat")
    page.click(f"button[name=seat][value='{seat}']")
    page.wait_for_url("**/sheet")
    page.wait_for_selector("#conn[data-conn=live]")
    return page


@pytest.mark.skipif(own_lan_address() is None, reason="this machine is on no network")
def test_by_default_tablets_join_at_the_lan_address(browser: Any, tmp_path: Path) -> None:
    lan = own_lan_address()
    server = ServerProcess(tmp_path / "data", free_port(), reach_args=[])
    server.start()
    try:
        host = browser.new_context(**LAPTOP).new_page()
        table = start_table(host, server.base_url)  # the host's laptop uses 127.0.0.1
        assert host.locator("#reach-notice").count() == 0
        address = host.inner_text("#join-address")
        assert address == f"http://{lan}:{server.port}/join"
        scanned = read_qr(host)
        assert scanned == f"http://{lan}:{server.port}/join?code={table['code']}"
        shot(host, "reach-lan-host")
        ann = join_at(browser, scanned, 0, TABLET)
        bob = join_at(browser, scanned, 1, PHONE)
        for page in (ann, bob):
            assert page.url.startswith(f"http://{lan}:{server.port}/t/")
        assert ann.locator("section[data-seat='0'] .player-name").inner_text().startswith("Ann")
        assert bob.locator("section[data-seat='1'] .player-name").inner_text().startswith("Bob")
        shot(bob, "reach-lan-phone-joined")
    finally:
        server.stop()


def test_a_local_server_says_tablets_cannot_join_and_how_to_fix_it(
    browser: Any, tmp_path: Path
) -> None:
    server = ServerProcess(tmp_path / "data", free_port(), reach_args=["--local"])
    server.start()
    try:
        for device, name in ((LAPTOP, "laptop"), (TABLET, "tablet"), (PHONE, "phone")):
            host = browser.new_context(**device).new_page()
            start_table(host, server.base_url)
            assert host.locator("svg.qr").count() == 0
            assert host.locator("#join-address").count() == 0
            notice = host.locator("#reach-notice[data-reach=local]")
            assert notice.is_visible()
            text = notice.inner_text()
            assert "Tablets cannot join" in text and "this computer only" in text
            assert "without --local" in text and "scripts/start" in text
            assert host.inner_text("#join-code").strip()  # the code still shows
            shot(host, f"reach-local-{name}")
            host.context.close()
        lan = own_lan_address()
        if lan is not None:  # and indeed nothing answers on the LAN address
            with pytest.raises(httpx.ConnectError):
                httpx.get(f"http://{lan}:{server.port}/", timeout=2)
    finally:
        server.stop()


def test_the_local_warning_stays_in_sight_once_the_join_panel_folds(
    browser: Any, tmp_path: Path
) -> None:
    """Every seat taken (players on this computer's own browsers: --local lets no tablet
    in), the join panel folds away; why tablets cannot join still shows."""
    server = ServerProcess(tmp_path / "data", free_port(), reach_args=["--local"])
    server.start()
    try:
        host = browser.new_context(**LAPTOP).new_page()
        table = start_table(host, server.base_url)
        joining = f"{server.base_url}/join?code={table['code']}"
        join_at(browser, joining, 0, TABLET)
        join_at(browser, joining, 1, PHONE)
        host.wait_for_selector("#join-panel:not([open])", state="attached")
        assert host.inner_text("#seated-count") == "2 of 2 seats taken"
        notice = host.locator("#reach-notice[data-reach=local]")
        assert notice.is_visible()
        assert "Tablets cannot join" in notice.inner_text()
        shot(host, "reach-local-seats-taken")
    finally:
        server.stop()
