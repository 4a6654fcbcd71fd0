"""The calibration the host puts in use on /calibrate survives a restart (a café owner
should not have to add --calibration to the start command); "Use none" does too; a file
that no longer loads after the restart is said on the page, and the server starts."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.settings import Settings

THE_SERVER_ITSELF = ("127.0.0.1", 50000)
SHIPPED = Path(__file__).resolve().parents[2] / "calibration" / "qwixx-default.json"


def server_settings(tmp_path: Path, **camera: object) -> Settings:
    folder = tmp_path / "calibration"
    folder.mkdir(exist_ok=True)
    (folder / "kitchen.json").write_bytes(SHIPPED.read_bytes())
    settings = CameraSettings(disabled=True, calibration_dir=folder, **camera)  # type: ignore[arg-type]
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
