"""The server's own start page hands the camera to a table, in Debian's Chromium: a café
owner's trial. The owner could end an abandoned game there but not give the camera to a
table (only that table's host could, from its page's "Use the camera at this table"). Now
each game in progress on that page has "Use the camera here" (the game it serves says so
instead); another device has neither, and its request is refused. Screenshots go to
test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.live.replay import SEEN_FROM, ClipReader, LiveServer
from tests.waiting import wait_until
from tests.web.conftest import folder_camera_settings, shot

pytestmark = pytest.mark.browser

A_TABLET = {SEEN_FROM: "192.168.1.23"}


def game_item(page: Any, table_id: str) -> Any:
    return page.locator(f'li.playing-game[data-table-id="{table_id}"]')


def test_the_servers_own_start_page_hands_the_camera_to_a_game(
    browser: Any, tmp_path: Path
) -> None:
    settings = folder_camera_settings(tmp_path)
    with LiveServer(settings, ClipReader) as server:
        hosts_phone = browser.new_context()  # both tables' host, on the network
        made = []
        for players in (["Ann", "Bob"], ["Cid", "Dee"]):
            answer = hosts_phone.request.post(
                f"{server.base_url}/api/tables",
                data={"game": "qwixx", "players": players, "options": {"players": 2}},
                headers=A_TABLET,
            )
            assert answer.status == 201, answer.text()
            made.append(answer.json()["table_id"])
        older, newer = made
        wait_until(
            lambda: server.hub.served_table_id == newer, what="the newest table has the camera"
        )

        owner = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        owner.goto(f"{server.base_url}/")
        button = game_item(owner, older).locator("button", has_text="Use the camera here")
        assert button.count() == 1
        assert game_item(owner, newer).locator("button", has_text="Use the camera").count() == 0
        assert "has the camera" in game_item(owner, newer).inner_text()
        shot(owner, "start-page-camera-before")

        button.click()
        owner.wait_for_url(f"{server.base_url}/")
        mark = game_item(owner, older).locator(".camera-here")
        mark.wait_for(timeout=20000)
        assert "has the camera" in mark.inner_text()
        assert game_item(owner, newer).locator("button", has_text="Use the camera here").count()
        assert server.hub.served_table_id == older
        assert "Qwixx: Ann, Bob" in owner.inner_text("#camera-line")
        shot(owner, "start-page-camera-after")

        # the host's phone on the network: no such button, and its request is refused
        phone = hosts_phone.new_page()
        phone.set_extra_http_headers(A_TABLET)
        phone.goto(f"{server.base_url}/")
        phone.wait_for_selector(f'li.playing-game[data-table-id="{newer}"]')
        assert phone.locator("button", has_text="Use the camera here").count() == 0
        refused = hosts_phone.request.post(
            f"{server.base_url}/t/{newer}/camera",
            headers={**A_TABLET, "origin": server.base_url},
            max_redirects=0,
        )
        assert refused.status == 403 and refused.json()["rule"] == "local_only"
        assert server.hub.served_table_id == older
