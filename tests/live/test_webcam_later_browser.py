"""A webcam that does not answer when the server starts, in Debian's Chromium: the demo
camera plays in its place, and the camera line says which source plays and why, to the
host ("no webcam answered at start: the demo camera plays", with how to use one plugged in
later) and to a player. A webcam plugged in later is used without restarting the server:
the host's Restart the camera (Camera settings) looks for it again, and the lines then
name the webcam. The webcam is a stand-in that delivers still frames (no machine running
the tests has one)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from companion.live import demo
from companion.table.camera_runtime import NO_WEBCAM, PLUG_IN_LATER
from companion.table.camera_settings import CameraSettings
from companion.vision.sources import Frame, FrameSource
from companion.web.settings import Settings
from tests.live.replay import LiveServer
from tests.web.conftest import free_port, shot
from tests.web.devices import PHONE

pytestmark = pytest.mark.browser


class StillWebcam(FrameSource):
    """A webcam at 30 fps looking at an empty table (the frame rate a real one keeps)."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def describe(self) -> str:
        return f"camera {self.index}"

    def __iter__(self) -> Iterator[Frame]:
        image = np.full((480, 640, 3), 90, np.uint8)
        k = 0
        while True:
            yield self._frame(image, k, self.describe())
            k += 1
            time.sleep(1 / 30)


def camera_line_has(page: Any, words: str) -> None:
    page.wait_for_function(
        "(words) => document.getElementById('camera-status').textContent.includes(words)",
        arg=words,
        timeout=30000,
    )


def test_the_demo_camera_in_a_webcams_place_says_so_and_a_webcam_plugged_in_later_plays(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    webcam = {"plugged_in": False}
    monkeypatch.setattr(demo, "camera_is_available", lambda index=0: webcam["plugged_in"])
    monkeypatch.setattr(demo, "CameraSource", StillWebcam)
    settings = Settings(port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings())
    with LiveServer(settings, None) as server:
        host = browser.new_context()
        created = host.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        table = created.json()
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        player = browser.new_context(**PHONE)
        assert player.request.post(f"{server.base_url}/api/join", data={"code": table["code"]}).ok
        assert player.request.post(f"{api}/seat", data={"seat": 0}).ok
        tablet = host.new_page()
        tablet.goto(f"{server.base_url}/t/{table['table_id']}")
        phone = player.new_page()
        phone.goto(f"{server.base_url}/t/{table['table_id']}/sheet")

        # no webcam answered: the demo camera plays, and both lines say so and why
        camera_line_has(tablet, f"{NO_WEBCAM} ({PLUG_IN_LATER})")
        camera_line_has(phone, "No webcam answered at start: the demo camera plays.")
        # Bob's seat is free: the demo waits for him (as designed), and says so
        assert phone.inner_text("#camera-status").startswith(
            "The camera waits until everyone has a seat."
        )
        shot(phone, "webcam-none-demo-plays-phone")

        # a webcam plugged in later: the host restarts the camera, which looks again
        webcam["plugged_in"] = True
        tablet.click("details.camera-tools summary")
        tablet.click("[data-camera-restart]")
        camera_line_has(tablet, "a webcam answered at start: camera 0 plays")
        camera_line_has(phone, "A webcam answered at start: camera 0 plays.")
        assert "demo camera" not in tablet.inner_text("#camera-status")
        assert server.hub.runtime.live_camera and not server.hub.runtime.plays_demo
        # a real camera's rolls wait for the active player's "Use this roll"
        assert host.request.get(f"{api}/camera").json()["mode"] == "confirm"
        shot(phone, "webcam-plugged-in-later-phone")
        player.close()
        host.close()
