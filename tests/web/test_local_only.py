"""What only the server's own machine may do (calibration writes its files, setups by name
show a camera's stored dice): a device on the network gets 403 local_only with where to go
instead; the machine itself (loopback) gets the page."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.web.conftest import ServerProcess, free_port

LAN_DEVICE = ("192.168.1.20", 50000)
THE_SERVER_ITSELF = ("127.0.0.1", 50000)


@pytest.mark.parametrize(
    ("path", "words"),
    [("/api/calibration", "calibrate on the machine"), ("/api/setups/kitchen", "open the setups")],
)
def test_only_the_servers_machine_may_calibrate_or_open_a_setup(
    tmp_path: Path, path: str, words: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))
    with TestClient(create_app(settings), client=LAN_DEVICE) as lan:
        refused = lan.get(path)
    assert refused.status_code == 403, refused.text
    detail = refused.json()
    assert detail["reason"] == "not_allowed" and detail["rule"] == "local_only"
    assert words in detail["message"]
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        answered = local.get(path)
    assert answered.status_code != 403, answered.text


def test_the_calibration_list_links_each_file_to_the_setup_it_teaches(tmp_path: Path) -> None:
    """A calibration file's stored dice go by the name inside it: qwixx-default.json
    teaches setup "qwixx", so its link opens /setups/qwixx (not an empty
    /setups/qwixx-default); a file that does not load says so and links nowhere."""
    folder = tmp_path / "calibration"
    folder.mkdir()
    shipped = Path(__file__).resolve().parents[2] / "calibration" / "qwixx-default.json"
    (folder / "qwixx-default.json").write_bytes(shipped.read_bytes())
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    camera = CameraSettings(disabled=True, calibration_dir=folder)
    settings = Settings(data_dir=tmp_path / "data", camera=camera)
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        page = local.get("/calibrate")
    assert page.status_code == 200, page.text
    assert "qwixx-default (setup <strong>qwixx</strong>)" in page.text
    assert 'href="/setups/qwixx"' in page.text and "/setups/qwixx-default" not in page.text
    assert "broken" in page.text and "the file does not load" in page.text
    assert "/setups/broken" not in page.text


def two_tables_on_one_camera(client: TestClient) -> tuple[str, str]:
    """Table A, whose host attaches the camera, then table B of another host (the same
    client holds both hosts' cookies: a device on the network may start a table)."""
    made = []
    for players in (["Ann", "Bob"], ["Eve", "Mal"]):
        answer = client.post(
            "/api/tables", json={"game": "qwixx", "players": players, "options": {"players": 2}}
        )
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["table_id"])
        if len(made) == 1:
            attached = client.post(f"/api/tables/{made[0]}/camera/attach")
            assert attached.status_code == 200, attached.text
    return made[0], made[1]


def test_a_table_of_ones_own_does_not_take_a_hosts_camera_from_the_network(
    tmp_path: Path,
) -> None:
    """The security trial: any device could start a table, attach the camera its host had
    attached to a running game, restart it and watch its picture."""
    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))
    with TestClient(create_app(settings), client=LAN_DEVICE) as lan:
        first, second = two_tables_on_one_camera(lan)
        taken = lan.post(f"/api/tables/{second}/camera/attach")
        assert taken.status_code == 403, taken.text
        assert taken.json()["rule"] == "camera_held"
        restarted = lan.post(f"/api/tables/{second}/camera/restart")
        assert restarted.status_code == 403 and restarted.json()["rule"] == "camera_elsewhere"
        picture = lan.get(f"/t/{second}/camera.jpg")
        assert picture.status_code == 404 and "another table" in picture.text
        status = lan.get(f"/api/tables/{first}/camera").json()
        assert status["attached"] is True  # still the first table's
        # the first table's host restarts its own camera
        assert lan.post(f"/api/tables/{first}/camera/restart").status_code == 200


def test_the_server_machine_moves_a_hosts_camera(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        first, second = two_tables_on_one_camera(local)
        moved = local.post(f"/api/tables/{second}/camera/attach")
        assert moved.status_code == 200, moved.text
        assert local.get(f"/api/tables/{second}/camera").json()["attached"] is True
        assert local.get(f"/api/tables/{first}/camera").json()["attached"] is False


def test_a_table_that_lost_a_held_camera_offers_no_button_that_cannot_work(
    tmp_path: Path,
) -> None:
    """The camera went from table A to table B, whose host attached it there from the
    server machine. A's devices read "the camera now serves another table" without "Use
    the camera at this table takes it back" (its players have no such button; its host
    on the network is refused while B holds the camera), and A's host on the network is
    told what taking it back needs; on the server machine the button works."""
    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))
    app = create_app(settings)
    with TestClient(app, client=LAN_DEVICE) as lan:
        first, second = two_tables_on_one_camera(lan)
        # the same app and the same host cookies, from the server machine
        local = TestClient(app, client=THE_SERVER_ITSELF, cookies=lan.cookies)
        assert local.post(f"/api/tables/{second}/camera/attach").status_code == 200
        status = lan.get(f"/api/tables/{first}/camera").json()
        # said once, by the camera line (camera.js: "The camera watches another table.", the
        # host's "this table does not get camera rolls"), not again as the note "the camera
        # now serves another table" beside it
        assert status["attached"] is False and status["note"] == ""
        assert status["take_back_refused"] == (
            "the camera serves another table (it was chosen for that game): you can take it "
            "here once that game ends or has had no device connected and no action for 10 "
            "minutes, or the server machine can move it here"
        )
        taken = lan.post(f"/api/tables/{first}/camera/attach")
        assert taken.status_code == 403
        assert taken.json()["message"] == status["take_back_refused"]
        assert local.get(f"/api/tables/{first}/camera").json()["take_back_refused"] is None
        # nor does the server machine get the other table's live picture at A (beside
        # "this table does not get camera rolls" it read as A's)
        picture = local.get(f"/t/{first}/camera.jpg")
        assert picture.status_code == 404 and "another table" in picture.text
        # the table the camera serves has nothing to take back
        assert lan.get(f"/api/tables/{second}/camera").json()["take_back_refused"] is None


@pytest.mark.parametrize(
    "proxy_header",
    [
        {"X-Forwarded-For": "192.168.1.23"},
        {"Forwarded": "for=192.168.1.23;proto=http"},
        {"X-Real-IP": "192.168.1.23"},
    ],
)
def test_a_request_a_proxy_on_the_server_passed_on_has_no_owners_powers(
    tmp_path: Path, proxy_header: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Behind a reverse proxy on the server's machine every device's peer is 127.0.0.1,
    and each had the owner's powers (delete a game, end one, calibrate). A loopback request
    naming its client in a proxy header is another device's: refused (local_only), shown
    no owner's button, and the log says why once."""
    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))
    app = create_app(settings)
    with TestClient(app, client=THE_SERVER_ITSELF) as local:
        made = local.post(
            "/api/tables", json={"game": "qwixx", "options": {"players": 2}, "players": ["A", "B"]}
        )
        table_id = made.json()["table_id"]
        assert local.post(f"/t/{table_id}/end").status_code == 200
        proxied = TestClient(app, client=THE_SERVER_ITSELF, cookies=local.cookies)
        proxied.headers.update(proxy_header)
        with caplog.at_level(logging.WARNING, logger="companion.web.deps"):
            for refused in (
                proxied.post(f"/t/{table_id}/delete"),
                proxied.get("/api/calibration"),
                proxied.get("/api/setups/kitchen"),
            ):
                assert refused.status_code == 403, refused.text
                assert refused.json()["rule"] == "local_only"
            assert "/delete" not in proxied.get("/history").text
        said = [r.getMessage() for r in caplog.records if "proxy" in r.getMessage()]
        assert len(said) == 1 and "through a proxy on this machine" in said[0]
        assert 'action="/t/' in local.get("/history").text  # the owner's own screen: its button
        assert local.post(f"/t/{table_id}/delete").status_code == 200


def raw_get(port: int, path: str, version: str, host: str) -> tuple[int, str]:
    """GET `path` from 127.0.0.1 written by hand, as a proxy on the machine sends it."""
    request = f"GET {path} HTTP/{version}\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request.encode("ascii"))
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.decode("utf-8").partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), body


def test_a_proxy_that_names_no_client_has_no_owners_powers(tmp_path: Path) -> None:
    """nginx names no client unless told, and passes a request on as HTTP/1.0 (by default)
    or with the phone's own Host (`proxy_set_header Host $host`, as most setups do): from
    127.0.0.1 each had the owner's powers. Neither is a browser on the machine, which
    speaks HTTP/1.1 and names the loopback address it opened."""
    server = ServerProcess(
        tmp_path / "data", free_port(), reach_args=["--local", "--host-name", "companion.lan"]
    )
    server.start()
    try:
        own = f"127.0.0.1:{server.port}"
        assert raw_get(server.port, "/api/calibration", "1.1", own)[0] == 200  # the owner
        for version, host in (("1.0", own), ("1.1", f"companion.lan:{server.port}")):
            status, body = raw_get(server.port, "/api/calibration", version, host)
            assert status == 403 and json.loads(body)["rule"] == "local_only", (version, host)
        assert "through a proxy on this machine" in server.log_path.read_text()
    finally:
        server.stop()
