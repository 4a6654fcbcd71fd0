"""The one settings model: unknown fields and out-of-range values are refused by name; the
CLI builds it from `companion serve` arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from companion.cli import build_parser
from companion.table.camera_settings import CameraSettings
from companion.web.serve import lan_addresses, settings_from_args, startup_message
from companion.web.settings import Settings


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
        ["serve", "--port", "8123", "--data-dir", str(tmp_path), "--camera", "1"]
    )
    settings = settings_from_args(args)
    assert settings.bind_host == "0.0.0.0" and settings.port == 8123
    assert settings.database_path == tmp_path / "companion.sqlite3"
    assert settings.camera.source == "webcam" and settings.camera.index == 1
    local = settings_from_args(build_parser().parse_args(["serve", "--local", "--no-camera"]))
    assert local.bind_host == "127.0.0.1" and local.camera.source == "none"
    assert local.loopback_only and local.public_url is None
    assert settings_from_args(build_parser().parse_args(["serve"])).camera.source == "demo"
    photos = settings_from_args(
        build_parser().parse_args(["serve", "--images", str(tmp_path), "--hold", "2"])
    )
    assert photos.camera.source == "images" and photos.camera.hold == 2.0
    with pytest.raises(ValidationError, match="give --images DIR with it"):
        settings_from_args(build_parser().parse_args(["serve", "--hold", "2"]))


def test_tablets_can_join_by_default_and_local_keeps_it_on_this_machine() -> None:
    parse = build_parser().parse_args
    default = settings_from_args(parse(["serve", "--port", "8124"]))
    assert default.lan and default.bind_host == "0.0.0.0" and not default.loopback_only
    assert default.lan_addresses == lan_addresses()
    if default.lan_addresses:  # a machine on a network: tablets get its LAN address
        address = default.lan_addresses[0]
        assert not address.startswith("127.")
        assert default.public_url == f"http://{address}:8124"
        assert set(default.lan_addresses) <= default.served_hosts
    # --lan, once needed for tablets, is the default now and still accepted
    assert settings_from_args(parse(["serve", "--lan"])).bind_host == "0.0.0.0"
    assert settings_from_args(parse(["serve", "--host", "0.0.0.0"])).lan
    one = settings_from_args(parse(["serve", "--host", "192.0.2.7", "--port", "9000"]))
    assert one.bind_host == "192.0.2.7" and one.public_url == "http://192.0.2.7:9000"
    assert "192.0.2.7" in one.served_hosts and not one.loopback_only
    with pytest.raises(SystemExit):
        parse(["serve", "--lan", "--local"])


def test_served_hosts_are_the_addresses_the_server_listens_on() -> None:
    lan = Settings(lan=True, lan_addresses=("192.168.1.20", "10.8.0.2"))
    assert lan.served_hosts == {"127.0.0.1", "localhost", "[::1]", "192.168.1.20", "10.8.0.2"}
    assert lan.public_url == "http://192.168.1.20:8000"
    local = Settings(lan=False, lan_addresses=("192.168.1.20",))
    assert local.served_hosts == {"127.0.0.1", "localhost", "[::1]"}
    assert Settings(lan=False, host="::1").loopback_only
    assert Settings(lan=False, host="fd00::5").public_url == "http://[fd00::5]:8000"


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        (
            Settings(lan=True, lan_addresses=("192.168.1.20",), port=8765),
            ["http://192.168.1.20:8765/", "http://127.0.0.1:8765/", "join at"],
        ),
        (Settings(lan=False, port=8765), ["http://127.0.0.1:8765/", "--local"]),
        (Settings(lan=True, lan_addresses=(), port=8765), ["on no network", "Wi-Fi"]),
    ],
)
def test_startup_message_names_the_address(
    tmp_path: Path, settings: Settings, says: list[str]
) -> None:
    message = startup_message(settings.model_copy(update={"data_dir": tmp_path}))
    for words in says:
        assert words in message


def test_startup_message_names_the_newest_running_tables_only(tmp_path: Path) -> None:
    """A maintainer's look after the fifth probe: the terminal listed every running table
    at start-up (3,000 lines on a busy café's store)."""
    from companion.table.store import Store
    from companion.web.serve import STARTUP_TABLES_SHOWN

    settings = Settings(lan=False, port=8765, data_dir=tmp_path)
    store = Store.open(settings.database_path)
    try:
        for n in range(STARTUP_TABLES_SHOWN + 5):
            store.create_table(f"t{n:02d}", f"CODE{n:02d}", "qwixx", {"players": 2}, ["A", "B"])
    finally:
        store.close()
    message = startup_message(settings)
    assert message.count("join code") == STARTUP_TABLES_SHOWN
    assert "join code CODE14" in message and "join code CODE04" not in message  # newest
    assert "and 5 older games in progress" in message


def test_startup_message_names_each_game_as_the_start_page_does(tmp_path: Path) -> None:
    """A café owner's trial: after a restart the terminal listed "qwixx   table
    OzTMRLF-fWON: join code HBBLK3", an id no screen shows and no players, where the start
    page says "Qwixx: Ann, Bob, Cy" and the code."""
    from companion.table.store import Store

    settings = Settings(lan=False, port=8765, data_dir=tmp_path)
    store = Store.open(settings.database_path)
    try:
        store.create_table("t01", "CODE01", "qwixx", {"players": 3}, ["Ann", "Bob", "Cy"])
        store.create_table("t02", "CODE02", "nogame", {"players": 2}, ["A", "B"])
    finally:
        store.close()
    lines = startup_message(settings).splitlines()
    assert "  Qwixx: Ann, Bob, Cy (join code CODE01, table t01)" in lines
    assert "  nogame: A, B (join code CODE02, table t02)" in lines  # an older server's game
