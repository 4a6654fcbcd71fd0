"""The calibration page while the demo camera plays, in Debian's Chromium: the teaching
round of the chosen setup is not offered (the server refuses it there: drawn dice teach
nothing about a real table) and the page says why in words, as it says why Measure is off
(the picture is the demo camera's drawn table); and a calibration chosen
elsewhere (another tab, a script) is redrawn as chosen, or in use, without a reload.
Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from companion.live import demo
from companion.table.camera_settings import CameraSettings
from companion.vision.types import FrameReading
from companion.web.settings import Settings
from tests.live.replay import LiveServer, wait_until
from tests.web.conftest import free_port, shot

pytestmark = pytest.mark.browser

SHIPPED = Path(__file__).resolve().parents[2] / "calibration" / "qwixx-default.json"
LAPTOP = {"viewport": {"width": 1280, "height": 900}}


class DrawnDiceReader:
    """A dice reader that finds nothing (the demo camera's renders need no models here)."""

    dice_set = None

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        h, w = getattr(image, "shape", (0, 0))[:2]
        return FrameReading(int(w), int(h), (), frame_index=frame_index)


def teaching_is_refused_in_words(page: Any) -> None:
    """The chosen setup's teaching round is not offered; the reason is said instead."""
    assert page.text_content("#calibrate-label") == "Chosen"
    assert page.text_content("li[data-file='kitchen'] .in-use-mark") == "chosen"  # not in use
    assert page.is_visible("#calibrate-teach-refused")
    assert not page.is_visible("#calibrate-teach-link")
    assert "drawn dice teach nothing" in (page.text_content("#calibrate-teach-refused") or "")


def test_the_calibration_page_follows_the_choice_and_offers_no_teaching_in_the_demo(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "camera_is_available", lambda index=0: False)
    folder = tmp_path / "calibration"
    folder.mkdir()
    (folder / "kitchen.json").write_bytes(SHIPPED.read_bytes())  # its setup: "qwixx"
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(calibration_dir=folder)
    )
    with LiveServer(settings, DrawnDiceReader) as server:
        wait_until(lambda: server.hub.runtime.plays_demo, 60, "the demo camera")
        page = browser.new_context(**LAPTOP).new_page()
        page.goto(f"{server.base_url}/calibrate")
        assert page.text_content("#calibrate-active") == "none"
        # the picture is the demo camera's drawn table: said above it, nothing to measure
        assert page.is_visible("#calibrate-measure-refused")
        assert "demo camera plays" in (page.text_content("#calibrate-measure-refused") or "")
        assert page.is_disabled("#calibrate-measure")

        # chosen elsewhere: the page shows it without a reload, the file marked
        used = httpx.post(f"{server.base_url}/api/calibration/use", json={"name": "kitchen"})
        assert used.json() == {"active": "qwixx", "demo": True}
        page.wait_for_function(
            "() => document.getElementById('calibrate-active').textContent === 'qwixx'",
            timeout=15000,
        )
        assert page.is_visible("li[data-file='kitchen'].in-use .in-use-mark")
        teaching_is_refused_in_words(page)
        shot(page, "calibrate-demo-no-teaching-laptop")
        # what the page spares the host: the round is refused while the demo plays
        snapshot = httpx.post(f"{server.base_url}/api/setups/qwixx/teach/snapshot")
        assert snapshot.status_code == 403 and snapshot.json()["rule"] == "demo_camera"
        page.reload()  # the page as the server draws it says the same
        teaching_is_refused_in_words(page)

        assert httpx.post(f"{server.base_url}/api/calibration/none").json() == {"active": None}
        page.wait_for_function(
            "() => document.getElementById('calibrate-active').textContent === 'none'",
            timeout=15000,
        )
        assert page.locator("#calibrate-files li.in-use").count() == 0
        assert not page.is_visible("#calibrate-teach")  # no setup to teach
