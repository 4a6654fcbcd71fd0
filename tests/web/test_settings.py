"""The one settings model: unknown fields and out-of-range values are refused by name; the
CLI builds it from `companion serve` arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from companion.cli import build_parser
from companion.web.serve import settings_from_args, startup_message
from companion.web.settings import CameraSettings, Settings


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"port": 0}, "port"),
        ({"port": 70000}, "port"),
        ({"colour": "red"}, "colour"),
        ({"join_attempts": 0}, "join_attempts"),
        ({"host": ""}, "host"),
        ({"camera": {"index": 1, "video": "a.mp4"}}, "choose one camera source"),
        ({"camera": {"index": -1}}, "index"),
    ],
)
def test_bad_settings_are_refused_by_name(values: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError) as error:
        Settings.model_validate(values)
    assert problem in str(error.value)


def test_every_field_is_described() -> None:
    for model in (Settings, CameraSettings):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"


def test_serve_arguments_become_settings(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["serve", "--lan", "--port", "8123", "--data-dir", str(tmp_path), "--camera", "1"]
    )
    settings = settings_from_args(args)
    assert settings.bind_host == "0.0.0.0" and settings.port == 8123
    assert settings.database_path == tmp_path / "companion.sqlite3"
    assert settings.camera.source == "webcam" and settings.camera.index == 1
    local = settings_from_args(build_parser().parse_args(["serve", "--no-camera"]))
    assert local.bind_host == "127.0.0.1" and local.camera.source == "none"
    assert settings_from_args(build_parser().parse_args(["serve"])).camera.source == "demo"


def test_startup_message_names_the_address(tmp_path: Path) -> None:
    message = startup_message(Settings(data_dir=tmp_path, port=8765))
    assert "http://127.0.0.1:8765/" in message and "--lan" in message
