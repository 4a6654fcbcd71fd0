"""The calibration the host puts in use on /calibrate survives a restart (a café owner
should not have to add --calibration to the start command); "Use none" does too; a file
that no longer loads after the restart is said on the page, and the server starts. While
the demo camera plays, the choice is stored and waits for a real camera, before a restart
and after it alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.live import demo
from companion.table.camera_runtime import CameraRuntime, PlayArea
from companion.table.camera_settings import CameraSettings
from companion.vision.colour import DiceSet
from companion.vision.types import FrameReading
from companion.web.app import create_app
from companion.web.settings import Settings

THE_SERVER_ITSELF = ("127.0.0.1", 50000)
SHIPPED = Path(__file__).resolve().parents[2] / "calibration" / "qwixx-default.json"


def server_settings(tmp_path: Path, **camera: object) -> Settings:
    folder = tmp_path / "calibration"
    folder.mkdir(exist_ok=True)
    (folder / "kitchen.json").write_bytes(SHIPPED.read_bytes())
    camera = {"disabled": True, **camera}
    settings = CameraSettings(calibration_dir=folder, **camera)  # type: ignore[arg-type]
    return Settings(data_dir=tmp_path / "data", camera=settings)


def active_after_restart(settings: Settings) -> tuple[str | None, str]:
    """What a freshly started server has in use, and its calibration page."""
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        return local.get("/api/calibration").json()["active"], local.get("/calibrate").text


def test_the_calibration_put_in_use_is_in_use_after_a_restart(tmp_path: Path) -> None:
    settings = server_settings(tmp_path)
    assert active_after_restart(settings)[0] is None
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        used = local.post("/api/calibration/use", json={"name": "kitchen"})
        assert used.status_code == 200 and used.json()["active"] == "qwixx"
    active, page = active_after_restart(settings)
    assert active == "qwixx"  # the setup named inside kitchen.json
    assert '<strong id="calibrate-active">qwixx</strong>' in page

    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        assert local.post("/api/calibration/none").json() == {"active": None}
        assert local.get("/api/calibration").json()["active"] is None
    assert active_after_restart(settings)[0] is None


def test_a_calibration_file_gone_bad_is_said_and_the_server_starts(tmp_path: Path) -> None:
    settings = server_settings(tmp_path)
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        assert local.post("/api/calibration/use", json={"name": "kitchen"}).status_code == 200
    (tmp_path / "calibration" / "kitchen.json").write_text("{not json", encoding="utf-8")
    active, page = active_after_restart(settings)
    assert active is None
    assert "The calibration in use before the restart did not load" in page


def test_the_command_lines_calibration_comes_first(tmp_path: Path) -> None:
    settings = server_settings(tmp_path)
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        assert local.post("/api/calibration/none").status_code == 200
    given = server_settings(tmp_path, calibration=tmp_path / "calibration" / "kitchen.json")
    assert active_after_restart(given)[0] == "qwixx"


class DrawnDiceReader:
    """A dice reader that finds nothing (the demo camera's renders need no models here)."""

    dice_set: DiceSet | None = None

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        h, w = getattr(image, "shape", (0, 0))[:2]
        return FrameReading(int(w), int(h), (), frame_index=frame_index)


def demo_server(settings: Settings) -> TestClient:
    app = create_app(settings, DrawnDiceReader)
    return TestClient(app, client=THE_SERVER_ITSELF)


def demo_playing(local: TestClient) -> CameraRuntime:
    runtime: CameraRuntime = local.app.state.camera.runtime  # type: ignore[attr-defined]
    runtime._starter.join(timeout=60)  # type: ignore[union-attr]  # the source is planned
    assert runtime.plays_demo
    return runtime


def test_a_calibration_chosen_while_the_demo_plays_waits_for_a_real_camera(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo camera's drawn dice are read with the shipped colours before and after a
    restart alike; the page says the choice is stored for a real camera."""
    monkeypatch.setattr(demo, "camera_is_available", lambda index=0: False)
    settings = server_settings(tmp_path, disabled=False)
    for restarted in (False, True):
        with demo_server(settings) as local:
            runtime = demo_playing(local)
            if not restarted:
                used = local.post("/api/calibration/use", json={"name": "kitchen"})
                assert used.json() == {"active": "qwixx", "demo": True}
            assert runtime.calibration is None and runtime.reader.play_area == PlayArea()
            assert runtime.chosen is not None and runtime.chosen.name == "qwixx"
            reading = local.get("/api/calibration").json()
            assert (reading["active"], reading["demo"], reading["calibration"]) == (
                "qwixx",
                True,
                None,
            )
            page = local.get("/calibrate").text
            assert (
                '<span id="calibrate-label">Chosen</span>: <strong id="calibrate-active">qwixx'
                in page
            )
            assert '<p class="hint" id="calibrate-demo">Not in use while the demo camera' in page
    # another source than the demo camera reads with it
    active, page = active_after_restart(server_settings(tmp_path))
    assert active == "qwixx" and '<span id="calibrate-label">In use</span>' in page
    assert '<p class="hint" id="calibrate-demo" hidden>' in page


def test_the_demo_cameras_picture_is_not_measured_and_the_page_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's first evening: no webcam, the demo camera plays. /calibrate showed its
    empty drawn table with "Lay every die of the set flat" and Measure answered "not seen by
    the camera: ... lay every die of the set in view"; the page now says the picture is the
    demo camera's, the button is off, and a measure is refused with the same words."""
    monkeypatch.setattr(demo, "camera_is_available", lambda index=0: False)
    with demo_server(server_settings(tmp_path, disabled=False)) as local:
        demo_playing(local)
        page = local.get("/calibrate").text
        assert '<p class="warning" id="calibrate-measure-refused">The demo camera plays' in page
        assert 'id="calibrate-measure" disabled>Measure and save' in page
        assert (
            "no dice of yours to measure"
            in local.get("/api/calibration").json()["measuring_refused"]
        )
        measured = local.post("/api/calibration", json={"name": "mine", "dice_set": "qwixx"})
        assert measured.status_code == 403 and measured.json()["rule"] == "demo_camera"
        assert "Plug a webcam in" in measured.json()["message"]
        assert not (tmp_path / "calibration" / "mine.json").exists()
    # a real source measures: no note, the button on
    page = active_after_restart(server_settings(tmp_path))[1]
    assert '<p class="warning" id="calibrate-measure-refused" hidden></p>' in page
    assert 'id="calibrate-measure">Measure and save' in page


@pytest.mark.parametrize(
    "play_area",
    [
        "[NaN, 0, 1, 1]",  # Python's JSON reads NaN and Infinity
        "[0, 0, Infinity, 1]",
        "[-5, -5, 10, 10]",  # not fractions of the picture
        "[0.9, 0.1, 0.2, 0.8]",  # x0 after x1
        "[0.1, 0.5, 0.9, 0.5]",  # no height
    ],
)
def test_a_play_area_that_is_no_part_of_the_picture_is_refused_naming_it(
    tmp_path: Path, play_area: str
) -> None:
    """The calibration's play area was taken as any four numbers: NaN, infinities, areas
    outside the picture or inside out went on to the measuring (which then read no die,
    or saved a file that no longer loaded, and said "calibration"). A malformed field is
    refused as one, 422 naming `play_area`, before anything is measured or written."""
    settings = server_settings(tmp_path)
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        body = '{"name": "kitchen2", "dice_set": "qwixx", "play_area": ' + play_area + "}"
        answer = local.post(
            "/api/calibration", content=body, headers={"content-type": "application/json"}
        )
    assert answer.status_code == 422, answer.text
    assert "body.play_area" in answer.json()["message"], answer.text
    assert not (settings.camera.calibration_dir / "kitchen2.json").exists()
