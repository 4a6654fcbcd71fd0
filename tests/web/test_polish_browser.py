"""The camera panel of a server started with `--no-camera`, in Debian's Chromium: no empty
picture box (it drew a 640x480 black box with a broken-image icon), a short note on how the
rolls get in instead; the host's link line ends in a link; a camera setting sent while the
server is down says it was not sent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot

pytestmark = pytest.mark.browser

LAPTOP = {"viewport": {"width": 1280, "height": 900}}


def test_camera_off_shows_a_note_and_no_broken_picture(browser: Any, server: ServerProcess) -> None:
    page = browser.new_context(**LAPTOP).new_page()
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    page.goto(server.base_url + created.json()["url"])
    page.wait_for_selector("#camera-status[data-camera-state=off]", timeout=5000)
    assert page.locator("#camera").is_visible()
    note = page.locator("#camera-off")
    assert note.is_visible()
    assert note.inner_text().lower().startswith("camera off: rolls are entered by tapping the dice")
    assert not page.locator("#camera-picture").is_visible()
    # nothing in the panel is an image that failed to load
    broken = page.evaluate(
        "[...document.querySelectorAll('#camera img')]"
        ".filter((img) => img.offsetParent !== null && !(img.complete && img.naturalWidth > 0))"
        ".length"
    )
    assert broken == 0
    box = page.locator("#camera").bounding_box()
    assert box is not None and box["height"] < 300  # no 480 px tall empty box
    shot(page, "camera-off-table")


def test_the_camera_links_line_ends_in_a_link_not_a_separator(
    browser: Any, server: ServerProcess
) -> None:
    """The host's links under the camera panel: with "What the camera learnt" hidden (no
    calibration has learnt anything) its " · " hides too (the line read "Game log and roll
    photos · Dice statistics ·")."""
    page = browser.new_context(**LAPTOP).new_page()
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    page.goto(server.base_url + created.json()["url"])
    page.wait_for_selector("#camera-status[data-camera-state=off]", timeout=5000)
    links = page.locator(".camera-links")
    assert links.locator("a:visible").count() == 2  # the log and the dice statistics
    assert not page.locator("#camera-setup-link").is_visible()
    visible = [link.inner_text() for link in links.locator("a:visible").all()]
    assert visible == ["Game log and roll photos", "Dice statistics"]
    # each "·" stands in its link's item: the hidden link's goes with it
    assert links.locator("li:visible").count() == 2


def test_a_camera_setting_the_server_never_got_says_so(browser: Any, server: ServerProcess) -> None:
    """The host changes how camera rolls are applied while the server is unreachable: the
    page says it was not sent (the fetch failed silently, the radio looked changed)."""
    page = browser.new_context(**LAPTOP).new_page()
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    page.goto(server.base_url + created.json()["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    page.click(".camera-tools > summary")
    server.kill()
    page.wait_for_selector("#conn[data-conn=offline]", timeout=10000)
    page.check("input[name=camera-mode][value=confirm]")
    page.wait_for_selector("#toast:not(:empty)", timeout=5000)
    assert page.inner_text("#toast").startswith("Not sent: the server cannot be reached")
