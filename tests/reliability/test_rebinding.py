"""DNS rebinding, against the real server process: a page on another site whose name now
resolves to this machine sends Host and Origin both naming that site, and no cookie. Every
such request and WebSocket handshake is refused with 400 before any route answers (before:
/history and /api/calibration answered 200, /api/tables and /api/import 201). Requests
naming the server's own names and addresses still work: loopback, the LAN address the table
page shows for its QR code, the address a request arrived at, and the names the host
configured (--host-name)."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from companion.web.hosts import host_name
from companion.web.serve import lan_address
from tests.web.conftest import ServerProcess, free_port

RECORD = {"schema": 1, "game": "qwixx", "options": {}, "players": [], "actions": []}
FOREIGN = ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "EVIL.example."]


def probes() -> list[tuple[str, str, dict[str, Any] | None]]:
    """(method, path, JSON body): reads and writes a rebinding page would try."""
    return [
        ("GET", "/history", None),
        ("GET", "/api/calibration", None),
        ("GET", "/", None),
        ("GET", "/api/games", None),
        ("GET", "/static/icon.svg", None),
        ("POST", "/api/tables", {"game": "qwixx", "options": {"players": 2}}),
        ("POST", "/api/import", RECORD),
        ("POST", "/api/join", {"code": "ABCDEF"}),
    ]


def send(server: ServerProcess, method: str, path: str, body: Any, host: str) -> httpx.Response:
    port = server.port
    headers = {"host": f"{host}:{port}", "origin": f"http://{host}:{port}"}
    return httpx.request(method, server.base_url + path, json=body, headers=headers, timeout=10)


def test_a_rebinding_page_gets_400_for_every_request(server: ServerProcess) -> None:
    tables_before = len(httpx.get(server.base_url + "/history", timeout=10).text)
    refused = 0
    for host in FOREIGN:
        for method, path, body in probes():
            answer = send(server, method, path, body, host)
            assert answer.status_code == 400, (host, method, path, answer.status_code)
            assert answer.json()["rule"] == "foreign_host"
            refused += 1
        url = server.base_url.replace("http", "ws", 1) + "/t/anything/ws"
        with pytest.raises(InvalidStatus) as handshake:
            connect(url, additional_headers={"Host": f"{host}:{server.port}"}, open_timeout=5)
        assert handshake.value.response.status_code == 400
    assert refused == len(FOREIGN) * 8
    # nothing was created: the history page of the server's own machine is unchanged
    assert len(httpx.get(server.base_url + "/history", timeout=10).text) == tables_before


def test_no_host_header_is_refused(server: ServerProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"GET /history HTTP/1.0\r\n\r\n")
        answer = raw.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:100]


def test_the_servers_own_names_are_served(server: ServerProcess) -> None:
    for host in ("127.0.0.1", "localhost", "LocalHost"):
        answer = send(server, "GET", "/api/games", None, host)
        assert answer.status_code == 200, host
    created = send(server, "POST", "/api/tables", {"game": "qwixx", "options": {}}, "localhost")
    assert created.status_code == 201


@pytest.mark.skipif(lan_address() is None, reason="this machine is on no network")
def test_on_the_lan_its_address_and_configured_names_are_served(tmp_path: Any) -> None:
    """The default `companion serve` (every interface) with --host-name: tablets open the
    LAN address the table page shows (its QR code) or the configured name."""
    address = lan_address()
    assert address is not None
    server = ServerProcess(
        tmp_path / "lan", free_port(), reach_args=["--host-name", "Companion.Lan"]
    )
    server.start()
    try:
        lan_url = f"http://{address}:{server.port}"
        assert httpx.get(lan_url + "/api/games", timeout=10).status_code == 200
        host = httpx.Client(base_url=lan_url, timeout=10)
        created = host.post("/api/tables", json={"game": "qwixx", "options": {}})
        assert created.status_code == 201
        page = host.get(created.json()["url"], headers={"accept": "text/html"})
        assert page.status_code == 200 and f"{address}:{server.port}/join" in page.text
        named = httpx.get(
            lan_url + "/api/games", headers={"host": f"companion.lan:{server.port}"}, timeout=10
        )
        assert named.status_code == 200
        foreign = httpx.get(
            lan_url + "/history", headers={"host": f"evil.example:{server.port}"}, timeout=10
        )
        assert foreign.status_code == 400
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("Example.org:8000", "example.org"),
        ("example.org", "example.org"),
        ("localhost.:8000", "localhost"),
        ("[::1]:8000", "[::1]"),
        ("[::1]", "[::1]"),
        ("192.0.2.7:80", "192.0.2.7"),
        ("evil.example:80:80", "evil.example:80"),
    ],
)
def test_host_name_drops_the_port_only(header: str, name: str) -> None:
    assert host_name(header) == name
