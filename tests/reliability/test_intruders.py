"""Intruders on the same network, against the real server process: a device without the
table's code gets no page, no state, no WebSocket and no action; a player's device marks
only its own sheet; host actions need the host's device; guessing join codes is slowed;
the static files cannot reach outside their folder (encoded traversal attempts); a
WebSocket or a state-changing request from another site's page is refused."""

from __future__ import annotations

import asyncio
import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from companion.table import access as access_module
from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.page_headers import CONTENT_SECURITY_POLICY
from companion.web.settings import Settings
from tests.reliability.conftest import SeatedTable, seat_devices
from tests.web.conftest import REPO, ServerProcess
from tests.web.helpers import QWIXX_ROLL_7

PASS_0 = {"kind": "pass", "player": 0}


@pytest.fixture
def table(server: ServerProcess) -> SeatedTable:
    host = httpx.Client(base_url=server.base_url, timeout=5)
    seats = [httpx.Client(base_url=server.base_url, timeout=5) for _ in range(3)]
    return seat_devices(server.base_url, host, seats)


def ws_url(server: ServerProcess, table_id: str) -> str:
    return server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws?view=table"


def state_id(client: httpx.Client, table_id: str) -> int:
    return int(client.get(f"/api/tables/{table_id}/state").json()["state_id"])


def action(action_id: str, move: dict[str, Any]) -> dict[str, Any]:
    return {"action_id": action_id, "move": move}


def test_without_the_code_nothing(server: ServerProcess, table: SeatedTable) -> None:
    tid = table.table_id
    before = state_id(table.host, tid)
    forged = "x" * 32
    for cookies in ({}, {f"tc_{tid}": forged}):
        stranger = httpx.Client(base_url=server.base_url, timeout=5, cookies=cookies)
        for page in (f"/t/{tid}", f"/t/{tid}/sheet", f"/t/{tid}/seat"):
            answer = stranger.get(page)
            assert (
                answer.status_code == 303 and answer.headers["location"] == "/join?why=not_joined"
            )
        for path in (f"/api/tables/{tid}/state", f"/api/tables/{tid}/record", f"/t/{tid}/live"):
            answer = stranger.get(path)
            assert answer.status_code in (401, 303), (path, answer.status_code)
            assert "state" not in answer.text or answer.status_code == 303
        for path, body in (
            (f"/api/tables/{tid}/actions", action("intruder-01", QWIXX_ROLL_7)),
            (f"/api/tables/{tid}/undo", {"action_id": "intruder-02"}),
            (f"/api/tables/{tid}/seat", {"seat": 0}),
            (f"/api/tables/{tid}/end", None),
            (f"/api/tables/{tid}/seats/0/free", None),
        ):
            answer = stranger.post(path, json=body)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.json()["rule"] == "join_first"
        header = "; ".join(f"{k}={v}" for k, v in cookies.items())
        with (
            pytest.raises(InvalidStatus),
            connect(ws_url(server, tid), additional_headers={"Cookie": header}),
        ):
            pass
    # another table's token under this table's cookie name is no key either
    other = httpx.Client(base_url=server.base_url, timeout=5)
    other_id = other.post("/api/tables", json={"game": "qwixx", "options": {}}).json()["table_id"]
    borrowed = {f"tc_{tid}": other.cookies[f"tc_{other_id}"]}
    assert (
        httpx.get(f"{server.base_url}/api/tables/{tid}/state", cookies=borrowed).status_code == 401
    )
    assert state_id(table.host, tid) == before  # nothing changed


def test_a_player_marks_only_their_own_sheet(table: SeatedTable) -> None:
    tid, host, (ann, ben, _) = table.table_id, table.host, table.seats
    assert (
        host.post(f"/api/tables/{tid}/actions", json=action("roll-00001", QWIXX_ROLL_7)).status_code
        == 200
    )
    own = ann.get(f"/api/tables/{tid}/state").json()
    assert own["viewer"] == {"seat": 0, "host": False}
    assert own["legal_moves"] and all(m["player"] == 0 for m in own["legal_moves"])
    before = state_id(host, tid)
    # Ann taps Ben's box: refused, nothing changes
    answer = ann.post(
        f"/api/tables/{tid}/actions", json=action("ann-bens-1", {"kind": "pass", "player": 1})
    )
    assert answer.status_code == 403 and answer.json()["rule"] == "own_sheet_only"
    # said to Ann's device, not as if to Ben (it read "Ben: you may only mark your own sheet")
    assert answer.json()["message"] == "you may only mark your own sheet"
    # Ann may not enter the dice when it is not her turn to roll (Ben is not active)
    assert state_id(host, tid) == before
    assert (
        ben.post(f"/api/tables/{tid}/actions", json=action("ann-pass-1", PASS_0)).status_code == 403
    )
    # Ann's pass is hers; Ben may not take it back, only Ann or the host
    assert (
        ann.post(f"/api/tables/{tid}/actions", json=action("ann-pass-2", PASS_0)).status_code == 200
    )
    undo = ben.post(f"/api/tables/{tid}/undo", json={"action_id": "ben-undo-01"})
    assert undo.status_code == 403 and undo.json()["rule"] == "undo_own_only"
    # a player may not take another player's seat (nor leave their own: seat_held)
    taken = ben.post(f"/api/tables/{tid}/seat", json={"seat": 0})
    assert taken.status_code == 403 and taken.json()["rule"] in ("seat_taken", "seat_held")


def test_an_action_id_is_answered_duplicate_only_to_its_sender(table: SeatedTable) -> None:
    """The third probe: Ben's device sent Ann's used action id (in a move for her sheet, as
    an undo) and got `duplicate`, learning the id was used. Now the sender's right is
    checked first: Ben gets what any move of his for Ann's sheet gets; an id he may not
    reuse for his own move is refused by name; Ann's own retry is still `duplicate`."""
    tid, host, (ann, ben, _) = table.table_id, table.host, table.seats
    roll = host.post(f"/api/tables/{tid}/actions", json=action("roll-00001", QWIXX_ROLL_7))
    assert roll.status_code == 200
    first = ann.post(f"/api/tables/{tid}/actions", json=action("ann-pass-1", PASS_0))
    assert first.json() == {"state_id": 2, "duplicate": False}
    as_ann = ben.post(f"/api/tables/{tid}/actions", json=action("ann-pass-1", PASS_0))
    assert as_ann.status_code == 403 and as_ann.json()["rule"] == "own_sheet_only", as_ann.text
    undo = ben.post(f"/api/tables/{tid}/undo", json={"action_id": "ann-pass-1"})
    assert undo.status_code == 403 and undo.json()["rule"] == "undo_own_only", undo.text
    own = ben.post(
        f"/api/tables/{tid}/actions", json=action("ann-pass-1", {"kind": "pass", "player": 1})
    )
    assert own.status_code == 403 and own.json()["rule"] == "action_id_used", own.text
    assert state_id(host, tid) == 2  # nothing Ben sent was made
    again = ann.post(f"/api/tables/{tid}/actions", json=action("ann-pass-1", PASS_0))
    assert again.json() == {"state_id": 2, "duplicate": True}


def test_a_seated_device_cannot_hop_to_an_empty_seat(server: ServerProcess) -> None:
    """Ann's device holds seat 0; seat 2 has no device. Hopping there to move for that
    player and sitting back was possible; now the seat stays Ann's until the host frees it."""
    host = httpx.Client(base_url=server.base_url, timeout=5)
    ann = httpx.Client(base_url=server.base_url, timeout=5)
    created = host.post(
        "/api/tables", json={"game": "qwixx", "options": {"players": 3}, "players": ["A", "B", "C"]}
    ).json()
    tid = created["table_id"]
    assert ann.post("/api/join", json={"code": created["code"]}).status_code == 200
    assert ann.post(f"/api/tables/{tid}/seat", json={"seat": 0}).status_code == 200
    assert host.post(
        f"/api/tables/{tid}/actions", json=action("roll-0001", QWIXX_ROLL_7)
    ).is_success
    before = state_id(host, tid)
    for seat in (2, None):
        hop = ann.post(f"/api/tables/{tid}/seat", json={"seat": seat})
        assert hop.status_code == 403 and hop.json()["rule"] == "seat_held", hop.text
    pass_2 = ann.post(
        f"/api/tables/{tid}/actions", json=action("ann-as-c-1", {"kind": "pass", "player": 2})
    )
    assert pass_2.status_code == 403 and pass_2.json()["rule"] == "own_sheet_only"
    assert state_id(host, tid) == before
    assert ann.get(f"/api/tables/{tid}/state").json()["viewer"] == {"seat": 0, "host": False}
    assert ann.post(f"/api/tables/{tid}/seat", json={"seat": 0}).status_code == 200  # own seat
    form = ann.post(f"/t/{tid}/seat", data={"seat": "2"})
    assert form.status_code == 409 and "ask the host to free it" in form.text
    page = ann.get(f"/t/{tid}/seat")
    assert page.text.count("disabled") == 2  # the other two seats are closed to this device
    # the host frees Ann's seat: her device's token is revoked (before, the freed device
    # could take the seat straight back); with the code it joins again and may sit elsewhere
    assert host.post(f"/api/tables/{tid}/seats/0/free").status_code == 200
    for seat in (0, 2):
        refused = ann.post(f"/api/tables/{tid}/seat", json={"seat": seat})
        assert refused.status_code == 401, refused.text
    assert ann.get(f"/api/tables/{tid}/state").status_code == 401
    assert ann.post("/api/join", json={"code": created["code"]}).status_code == 200
    assert ann.post(f"/api/tables/{tid}/seat", json={"seat": 2}).status_code == 200
    moved = ann.post(
        f"/api/tables/{tid}/actions", json=action("ann-as-c-2", {"kind": "pass", "player": 2})
    )
    assert moved.status_code == 200, moved.text


def test_host_actions_need_the_hosts_device(table: SeatedTable) -> None:
    tid, host, ann = table.table_id, table.host, table.seats[0]
    for path in (f"/api/tables/{tid}/end", f"/api/tables/{tid}/seats/1/free"):
        answer = ann.post(path)
        assert answer.status_code == 403 and answer.json()["rule"] == "host_only"
    assert not ann.get(f"/api/tables/{tid}/state").json()["finished"]
    assert host.post(f"/api/tables/{tid}/end").status_code == 200  # the host may


def test_guessing_codes_is_slowed(server: ServerProcess, table: SeatedTable) -> None:
    guesser = httpx.Client(base_url=server.base_url, timeout=5)
    answers = [
        guesser.post("/api/join", json={"code": f"ZZZZ{n:02d}"}).status_code for n in range(10)
    ]
    assert answers == [404] * 10
    blocked = guesser.post("/api/join", json={"code": table.code})  # even the right code waits
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) >= 1
    form = guesser.post("/join", data={"code": "ZZZZ99"})  # the HTML form shares the limit
    assert form.status_code == 429 or "try again" in form.text


def test_simultaneous_wrong_codes_get_no_more_tries_than_the_limit(
    server: ServerProcess, table: SeatedTable
) -> None:
    """100 wrong codes at the same instant from one address, each on a fresh connection:
    exactly 10 (Settings.join_attempts) are looked up, the other 90 wait (429). The check
    and the count of an attempt straddled an await, and 16-100 were looked up."""

    async def guess_all() -> list[int]:
        clients = [httpx.AsyncClient(base_url=server.base_url, timeout=30) for _ in range(100)]
        try:
            answers = await asyncio.gather(
                *(c.post("/api/join", json={"code": f"QQ{n:04d}"}) for n, c in enumerate(clients))
            )
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))
        return [a.status_code for a in answers]

    statuses = Counter(asyncio.run(guess_all()))
    assert statuses == {404: 10, 429: 90}, statuses
    # a right code now waits too, and the table's own devices were never counted
    late = httpx.post(f"{server.base_url}/api/join", json={"code": table.code}, timeout=5)
    assert late.status_code == 429


def from_address(server: ServerProcess, address: str) -> httpx.Client:
    """A client on another loopback address: another device, as the server sees it."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.base_url, transport=transport, timeout=5)


def test_guessing_codes_from_many_addresses_is_slowed(
    server: ServerProcess, table: SeatedTable
) -> None:
    """30 addresses of one machine (a café's LAN lets a device take many) guessing 10
    codes each had all 300 looked up in seconds: the limit was per address only. Every
    client's wrong codes of an hour are capped (Settings.join_attempts_all_per_hour, 100);
    past that an address tries only while it has no wrong code of its own in the hour: one
    try, so a player typing the code for the first time still joins."""
    statuses: Counter[int] = Counter()
    for octet in range(2, 32):
        with from_address(server, f"127.0.0.{octet}") as guesser:
            for n in range(10):
                answer = guesser.post("/api/join", json={"code": f"ZZ{octet:02d}{n:02d}"})
                statuses[answer.status_code] += 1
    # 10 addresses x 10 fill the hour's 100; the other 20 addresses get one try each
    assert statuses == {404: 120, 429: 180}, statuses
    with from_address(server, "127.0.0.20") as guesser:
        blocked = guesser.post("/api/join", json={"code": table.code})
    assert blocked.status_code == 429 and blocked.json()["rule"] == "join_limit_all"
    assert int(blocked.headers["Retry-After"]) >= 1
    with from_address(server, "127.0.0.40") as player:  # a new device, the right code
        assert player.post("/api/join", json={"code": table.code}).status_code == 200


def test_one_address_guesses_at_most_an_hours_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    """One address guessing 10 codes a minute (the burst limit) went on at 14,400 a day,
    for good; now at most Settings.join_attempts_per_hour (30) an hour."""
    now = [1000.0]
    monkeypatch.setattr(access_module.time, "monotonic", lambda: now[0])
    limiter = access_module.JoinLimiter(10, 60.0, 30, 100)
    tried = 0
    for _minute in range(60):
        while limiter.begin("guesser").wait_s == 0:
            tried += 1
        now[0] += 60
    assert tried == 30
    assert limiter.begin("player").wait_s == 0  # another address is not held back
    right = limiter.begin("typo")
    limiter.forgive("typo", right.stamp)  # a right code counts nowhere
    assert all(limiter.begin("typo").wait_s == 0 for _ in range(10))


TRAVERSALS = [
    "/static/../companion/table/store.py",
    "/static/%2e%2e/companion/table/store.py",
    "/static/%2e%2e/%2e%2e/pyproject.toml",
    "/static/..%2f..%2fpyproject.toml",
    "/static/..%2F..%2Fpyproject.toml",
    "/static/%252e%252e/%252e%252e/pyproject.toml",
    "/static/..%5c..%5cpyproject.toml",
    "/static/%c0%ae%c0%ae/%c0%ae%c0%ae/pyproject.toml",
    "/static//etc/passwd",
    "/static/%2fetc%2fpasswd",
    "/static/css/../../../pyproject.toml",
    "/static/css/%2e%2e%2f%2e%2e%2f%2e%2e%2fpyproject.toml",
]


def test_static_files_stay_in_their_folder(server: ServerProcess) -> None:
    secrets = [(REPO / "pyproject.toml").read_text()[:60], "root:x:0:0"]
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        assert client.get("/static/icon.svg").status_code == 200
        for path in TRAVERSALS:
            # send the path exactly as written (no client-side normalisation)
            request = client.build_request("GET", server.base_url)
            request.url = request.url.copy_with(raw_path=path.encode())
            answer = client.send(request)
            assert answer.status_code in (400, 404), (path, answer.status_code)
            assert not any(s in answer.text for s in secrets), path


def test_other_sites_are_refused(server: ServerProcess, table: SeatedTable) -> None:
    tid, host = table.table_id, table.host
    cookie = f"tc_{tid}={host.cookies[f'tc_{tid}']}"
    with connect(ws_url(server, tid), additional_headers={"Cookie": cookie}) as own:
        assert json.loads(own.recv(timeout=5))["type"] == "state"  # the same origin works
    for origin in ("http://evil.example", f"http://127.0.0.1:{server.port + 1}", "null"):
        with (
            pytest.raises(InvalidStatus),
            connect(ws_url(server, tid), additional_headers={"Cookie": cookie, "Origin": origin}),
        ):
            pass
        answer = host.post(
            f"/api/tables/{tid}/actions",
            json=action("evil-roll-1", QWIXX_ROLL_7),
            headers={"Origin": origin},
        )
        assert answer.status_code == 403 and answer.json()["rule"] == "foreign_origin"
    assert state_id(host, tid) == 0


def test_no_page_can_be_framed_sniffed_or_run_foreign_script(
    server: ServerProcess, table: SeatedTable
) -> None:
    """Another site's page (or one on another port of this machine, which the browser
    sends the Lax cookies to) framed the host's table page under its own and clicked
    "End game" through it; answers carried no CSP, no nosniff, no frame refusal. Every
    answer now does: pages, scripts, JSON, refusals and a foreign Host's 400."""
    tid, host = table.table_id, table.host
    answers = [
        host.get(path)
        for path in ("/", "/join", f"/t/{tid}", f"/t/{tid}/log", "/static/js/table.js")
    ]
    answers += [
        host.get(f"/api/tables/{tid}/state"),
        host.get(f"/api/tables/{tid}/record"),
        httpx.get(f"{server.base_url}/t/{tid}", timeout=5),  # the join redirect
        httpx.get(f"{server.base_url}/api/tables/{tid}/state", timeout=5),  # 401
        httpx.get(f"{server.base_url}/", headers={"Host": "evil.example"}, timeout=5),  # 400
    ]
    for answer in answers:
        where = (answer.request.url.path, answer.status_code)
        policy = answer.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, where
        assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";")[0], where
        assert answer.headers.get("x-content-type-options") == "nosniff", where
        assert answer.headers.get("x-frame-options") == "DENY", where


def test_a_deleted_game_is_shown_no_more_on_a_screen_left_open(
    server: ServerProcess, table: SeatedTable
) -> None:
    """The server's own screen deleted a finished game while a player's sheet stayed open:
    its WebSocket went on answering `sync` with the whole deleted game, for as long as it
    stayed open. Now the socket closes (1008, as for a seat taken away) with no state."""
    tid, player = table.table_id, table.seats[0]
    assert table.host.post(f"/api/tables/{tid}/end").status_code == 200
    cookie = f"tc_{tid}={player.cookies[f'tc_{tid}']}"
    url = ws_url(server, tid).replace("view=table", "view=sheet")
    with connect(url, additional_headers={"Cookie": cookie}) as sheet:
        assert json.loads(sheet.recv(timeout=5))["type"] == "state"
        owner = httpx.Client(base_url=server.base_url, timeout=5)  # 127.0.0.1: the server's
        assert owner.post(f"/t/{tid}/delete").status_code == 303
        frames = []
        with pytest.raises(ConnectionClosed) as closed:
            sheet.send(json.dumps({"type": "sync"}))
            while True:  # until the server closes it (recv's deadline: 10 s a frame)
                frames.append(json.loads(sheet.recv(timeout=10)))
    assert [frame["type"] for frame in frames if frame["type"] == "state"] == []
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    gone = player.get(f"/api/tables/{tid}/state")  # told why, and nothing of the game
    assert gone.status_code == 410 and gone.json()["rule"] == "game_deleted", gone.text
    assert "Ann" not in gone.text


def test_ipv6_addresses_of_one_network_share_the_crowded_try(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once every client's wrong codes of the hour reach the ceiling, an address with no
    wrong code of its own gets one try: an IPv6 device picks a new address of its /64 for
    each (2**64 of them), so there it is one try for the network."""
    now = [1000.0]
    monkeypatch.setattr(access_module.time, "monotonic", lambda: now[0])
    limiter = access_module.JoinLimiter(10, 60.0, 30, 20)
    for n in range(20):  # the hour's ceiling, from elsewhere
        assert limiter.begin(f"192.0.2.{n}").wait_s == 0
    assert limiter.begin("fd00::1:1").wait_s == 0  # one try for the network
    refused = [limiter.begin(f"fd00::1:{n:x}") for n in range(2, 50)]
    assert all(r.wait_s > 0 and r.crowded for r in refused)
    assert limiter.begin("fd00:0:0:1::9").wait_s == 0  # another network
    assert limiter.begin("::ffff:192.0.2.77").wait_s == 0  # IPv4 addresses each
    assert limiter.begin("192.0.2.77").crowded


def test_an_unexpected_failure_s_answer_carries_the_page_headers(tmp_path: Path) -> None:
    """Starlette answers an unexpected failure (500) in its outermost layer, outside every
    middleware the app adds: that answer carried no CSP, no frame refusal, no nosniff."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))

    async def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/broken", broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get("/broken")
    assert answer.status_code == 500
    assert "frame-ancestors 'none'" in answer.headers.get("content-security-policy", "")
    assert answer.headers.get("x-content-type-options") == "nosniff"
    assert answer.headers.get("x-frame-options") == "DENY"


def test_a_socket_asking_for_an_unknown_view_is_told_so_not_to_join(
    server: ServerProcess, table: SeatedTable
) -> None:
    """A joined device's socket asking for a view no screen draws was refused at the
    handshake as "join this table first" (a 403 with no reason, which a page reads as a lost
    network): the device had joined. It is told the view is unknown, with or without a
    cookie (the view is checked before any table, so a stranger learns nothing)."""
    tid, player = table.table_id, table.seats[0]
    joined = f"tc_{tid}={player.cookies[f'tc_{tid}']}"
    url = ws_url(server, tid).replace("view=table", "view=scoreboard")
    for cookie in (joined, ""):
        with (
            connect(url, additional_headers={"Cookie": cookie}) as socket,
            pytest.raises(ConnectionClosed) as closed,
        ):
            socket.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "unknown view")
    with connect(ws_url(server, tid), additional_headers={"Cookie": joined}) as sheet:
        assert json.loads(sheet.recv(timeout=5))["type"] == "state"  # a known view opens


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",  # a control byte in the target
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: x\r\n\r\n",  # a space in a name
        b"NONSENSE\r\n\r\n",  # no request line at all
    ],
)
def test_the_servers_own_bad_request_answer_carries_the_page_headers(
    server: ServerProcess, request_bytes: bytes
) -> None:
    """A malformed request never reaches the app: uvicorn answers it 400 itself, and that
    answer carried no CSP, no frame refusal and no nosniff (every answer of the app does,
    its 500 included). The server's protocol now writes the page headers on it too."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(request_bytes)
        answer = b""
        while chunk := raw.recv(4096):  # the server closes the connection after its 400
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    lines = head.split("\r\n")
    assert lines[0].startswith("http/1.1 400"), head
    fields = dict(line.split(": ", 1) for line in lines[1:])
    assert fields.get("content-security-policy") == CONTENT_SECURITY_POLICY.lower(), head
    assert fields.get("x-content-type-options") == "nosniff", head
    assert fields.get("x-frame-options") == "deny", head
    assert fields.get("referrer-policy") == "same-origin", head


def test_pages_showing_a_join_code_or_a_game_are_never_stored(
    server: ServerProcess, table: SeatedTable
) -> None:
    """The table page, the scoreboard, the log, the start page of the server's machine
    and the join link show the join code (the others a game's names and sheets), and
    were answered with no Cache-Control: a browser kept them in its disk cache, where the
    next person at a shared computer (a café's, a library's) found the code after the
    game, or opened them again offline from the history. Every answer but a static file
    now says `no-store`."""
    tid, host, player = table.table_id, table.host, table.seats[0]
    showing_code = [
        host.get(path) for path in (f"/t/{tid}", f"/t/{tid}/board", f"/t/{tid}/log", "/")
    ]
    showing_code.append(httpx.get(f"{server.base_url}/join?code={table.code}", timeout=5))
    for answer in showing_code:
        assert table.code in answer.text, answer.request.url.path
    answers = showing_code + [
        player.get(f"/t/{tid}/sheet"),
        player.get(f"/api/tables/{tid}/state"),
        player.get(f"/api/tables/{tid}/record"),
        host.get("/history"),
    ]
    for answer in answers:
        where = (answer.request.url.path, answer.status_code)
        assert answer.status_code == 200, where
        assert answer.headers.get("cache-control") == "no-store", where
    script = host.get("/static/js/table.js")  # the same for everyone: cached as before
    assert script.status_code == 200 and "no-store" not in script.headers.get("cache-control", "")
