"""The data folder turned unwritable while the server runs: SQLite writes on through the
files it holds open, so nothing said so until the next start refused the folder (a café
owner who chmod-ed it, or whose disk was remounted, learnt it at the next evening's
start). The server's own start page and history now say so while it lasts (FolderWatch,
the start's own probe), and the log once when it begins and once when it is over."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.web.helpers import create_table

ON_SERVER = ("127.0.0.1", 50000)
A_TABLET = ("192.168.1.23", 50000)
SAID = "can no longer be written"


def test_the_servers_own_screen_says_the_data_folder_can_no_longer_be_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    settings = Settings(
        data_dir=data, camera=CameraSettings(disabled=True), data_folder_check_s=0.0
    )
    app = create_app(settings)
    with TestClient(app, client=ON_SERVER) as local, caplog.at_level(logging.INFO):
        assert SAID not in local.get("/").text and SAID not in local.get("/history").text
        # as root (the tests' user) a chmod stops no write; a path that is no longer a
        # folder stops every new file there, as chmod 555 does for the server's user
        moved = tmp_path / "moved"
        data.rename(moved)
        data.write_text("not a folder")
        try:
            for page in (local.get("/").text, local.get("/history").text):
                assert 'id="data-folder-problem"' in page and SAID in page
                assert "its next start will refuse this folder" in page
            assert SAID not in TestClient(app, client=A_TABLET).get("/").text
            # what the words say: the games go on being stored through the open files
            create_table(local, "qwixx", ["Ann", "Bob"], {"players": 2})
        finally:
            data.unlink()
            moved.rename(data)
        assert SAID not in local.get("/").text
    lines = [r.getMessage() for r in caplog.records if "data folder" in r.getMessage()]
    assert len(lines) == 2 and SAID in lines[0] and "can be written again" in lines[1]


def test_a_data_folder_gone_while_the_server_runs_is_said_and_not_made_again(
    tmp_path: Path,
) -> None:
    """The watch's probe made the folder when it was missing (the start's probe does, for a
    first start): a data folder moved away, deleted or whose disk was unmounted read as
    writable, and an empty one stood in its place for the next start to open with no
    games. It says the folder is gone, and makes none."""
    data = tmp_path / "data"
    settings = Settings(
        data_dir=data, camera=CameraSettings(disabled=True), data_folder_check_s=0.0
    )
    app = create_app(settings)
    with TestClient(app, client=ON_SERVER) as local:
        assert 'id="data-folder-problem"' not in local.get("/").text
        moved = tmp_path / "moved"
        data.rename(moved)
        try:
            for page in (local.get("/").text, local.get("/history").text):
                assert 'id="data-folder-problem"' in page and "is no longer there" in page
            assert not data.exists()
        finally:
            moved.rename(data)
        assert 'id="data-folder-problem"' not in local.get("/").text
