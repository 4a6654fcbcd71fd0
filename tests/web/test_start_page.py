"""The start page's games in progress, through the real app: a device on another machine
sees only the tables it holds a device cookie for, and never a join code; the server's
own screen (loopback) sees every running table with its code."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from companion.web.app import create_app
from companion.web.settings import Settings
from tests.web.helpers import create_table, seat_player


def test_other_devices_see_only_their_own_games_in_progress(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:  # TestClient's address is not loopback: another device
        ours = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        other = create_table(TestClient(app), "sixto", ["Cid", "Dee"], {"players": 2})
        page = host.get("/").text
        assert f'href="/t/{ours["table_id"]}"' in page and "Qwixx: Ann, Bob" in page
        assert other["table_id"] not in page and "Cid, Dee" not in page
        assert ours["code"] not in page  # a remote device is not shown join codes

        ann = TestClient(app)
        seat_player(ann, other["code"], other["table_id"], 0)
        assert "Sixto: Cid, Dee" in ann.get("/").text
        stranger = TestClient(app).get("/").text
        assert "in-progress" not in stranger  # a stranger sees none
        assert "Cid" not in stranger and "calibrate-link" not in stranger


def test_the_servers_own_screen_lists_every_table_with_its_code(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        table = create_table(TestClient(app), "qwixx", ["Ann", "Bob"], {"players": 2})
        page = local.get("/").text
        assert "Qwixx: Ann, Bob" in page and table["code"] in page
        assert 'href="/calibrate" id="calibrate-link"' in page  # its calibration page
        assert local.post(f"/api/tables/{table['table_id']}/end").status_code == 401
