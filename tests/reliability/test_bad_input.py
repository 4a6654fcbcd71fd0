"""Bad input against the real server (real uvicorn on loopback, real SQLite):

- the HTTP API fuzzed from its own OpenAPI description (schemathesis) with the host's
  device cookie and a real table: never a server error (5xx), the server keeps running,
  and no refused request changes the game;
- WebSocket messages fuzzed (hypothesis: text, JSON of any shape, near-valid actions,
  binary frames): every message gets an answer frame, the socket survives, no refused
  message changes the game;
- malformed game records (the import endpoint and `companion replay`), Sixto sheet
  layout files and table calibration files: a clear error naming the problem;
- oversized requests and floods from one device are bounded (413, 429, the socket's
  message limit) while other devices go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.core.result import Ok
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from companion.rules.base import Rejection
from companion.sheets import load_sheet_file
from companion.vision.calibration import load_calibration
from companion.vision.colour import CalibrationError
from companion.web.settings import Settings
from tests.reliability.conftest import ThreadServer, thread_settings
from tests.web.conftest import REPO, ServerProcess
from tests.web.helpers import QWIXX_ROLL_7

FUZZ_EXAMPLES = int(os.environ.get("RELIABILITY_FUZZ_EXAMPLES", "25"))  # per API operation


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A ThreadServer (per-device and table-creation rates raised so the fuzzer is not
    throttled) with one Qwixx table after a roll; the host's cookies."""
    data = tmp_path_factory.mktemp("fuzz")
    unlimited = {"device_rate_per_s": 10_000, "device_burst": 10_000, "table_burst": 10_000}
    with ThreadServer(thread_settings(data, **unlimited)) as srv:
        host = httpx.Client(base_url=srv.base_url, timeout=10)
        created = host.post("/api/tables", json={"game": "qwixx", "options": {"players": 3}})
        table_id = created.json()["table_id"]
        body = {"action_id": "roll-000001", "move": QWIXX_ROLL_7}
        assert host.post(f"/api/tables/{table_id}/actions", json=body).status_code == 200
        # the server's own screen deletes a finished game (this client is on that machine,
        # and the fuzzer's "End it now" ends the fuzzed table): delete is fuzzed on a game
        # in progress that nothing ends, so the fuzzed table stays
        other = host.post("/api/tables", json={"game": "qwixx", "options": {"players": 2}})
        yield {
            "server": srv,
            "table_id": table_id,
            "undeletable_id": other.json()["table_id"],
            "host": host,
            "cookies": dict(host.cookies),
        }


def table_state(live: dict[str, Any]) -> dict[str, Any]:
    answer = live["host"].get(f"/api/tables/{live['table_id']}/state")
    assert answer.status_code == 200
    return answer.json()  # type: ignore[no-any-return]


def test_api_fuzzed_from_its_openapi(live: dict[str, Any]) -> None:
    schema = schemathesis.openapi.from_url(f"{live['server'].base_url}/openapi.json")
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result.err()
        operations.append(result.ok())
    assert len(operations) >= 15
    calls: dict[int, int] = {}
    for operation in operations:

        @settings(
            max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy())
        def call(case: Any) -> None:
            if case.path_parameters and "table_id" in case.path_parameters:
                deleting = case.path.endswith("/delete")
                # reach past the 404
                case.path_parameters["table_id"] = live[
                    "undeletable_id" if deleting else "table_id"
                ]
            before = table_state(live)
            response = case.call(
                base_url=live["server"].base_url, cookies=live["cookies"], timeout=10
            )
            where = f"{case.method} {case.formatted_path}"
            assert response.status_code < 500, (where, response.text[:300])
            calls[response.status_code] = calls.get(response.status_code, 0) + 1
            if response.status_code >= 400:
                assert table_state(live)["state_id"] == before["state_id"], where

        call()
    # the fuzzer got past validation too, not only 422s
    assert sum(calls.values()) >= 5 * len(operations), calls
    assert any(200 <= status < 300 for status in calls), calls
    assert live["server"].thread.is_alive()


FRAMES = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=64),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
        ),
        max_leaves=12,
    ).map(json.dumps),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["act", "undo", "sync", "ACT", ""]),
            "action_id": st.text(min_size=0, max_size=70),
            "expected_state_id": st.one_of(st.none(), st.integers(-5, 10**9)),
            "move": st.dictionaries(
                st.sampled_from(["kind", "player", "colour", "number", "dice", "extra"]),
                st.one_of(
                    st.integers(-3, 20),
                    st.text(max_size=8),
                    st.none(),
                    st.lists(st.integers(), max_size=3),
                ),
                max_size=5,
            ),
        }
    ).map(json.dumps),
)


def answer_to(socket: ClientConnection) -> dict[str, Any]:
    """The next frame that answers a message (state pushes of other changes skipped)."""
    while True:
        frame = json.loads(socket.recv(timeout=10))
        if frame["type"] in ("error", "ack") or frame.get("requested"):
            return frame  # type: ignore[no-any-return]
        if frame["type"] == "state":
            return frame  # a sync's answer (or a push): the socket is alive


def test_websocket_messages_fuzzed(live: dict[str, Any]) -> None:
    srv, table_id = live["server"], live["table_id"]
    url = srv.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws?view=table"
    cookie = f"tc_{table_id}={live['cookies'][f'tc_{table_id}']}"
    before = table_state(live)
    seen: dict[str, int] = {}
    with connect(url, additional_headers={"Cookie": cookie}, open_timeout=5) as socket:
        assert json.loads(socket.recv(timeout=5))["type"] == "state"

        @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
        @given(frame=FRAMES)
        def send_one(frame: str | bytes) -> None:
            socket.send(frame)
            reply = answer_to(socket)
            seen[reply["type"]] = seen.get(reply["type"], 0) + 1
            if reply["type"] == "error":
                assert 400 <= reply["status"] < 500 and reply["message"], reply

        send_one()
        socket.send(json.dumps({"type": "sync"}))
        assert answer_to(socket)["state_id"] == table_state(live)["state_id"]
    after = table_state(live)
    # nothing the fuzzer sent was accepted (a random move is never a legal Qwixx move here)
    assert seen.get("ack", 0) == 0 and after["state"] == before["state"], seen
    assert seen.get("error", 0) > 100


BAD_RECORDS: list[tuple[Any, str]] = [
    ([], "a game record is a JSON object"),
    ({"schema": 99, "game": "qwixx", "actions": []}, "unsupported record schema"),
    ({"schema": 1, "game": "chess", "actions": []}, "chess"),
    ({"schema": 1, "game": "qwixx", "actions": "many"}, "'actions' must be a list"),
    ({"schema": 1, "game": "qwixx", "players": [1, 2], "actions": []}, "'players' must be a list"),
    ({"schema": 1, "game": "qwixx", "actions": [{"by": "camera"}]}, "action 0"),
    (
        {
            "schema": 1,
            "game": "qwixx",
            "actions": [{"by": "camera", "move": {"kind": "pass", "player": 0}}],
        },
        "action 0",
    ),
    (
        {
            "schema": 1,
            "game": "qwixx",
            "actions": [{"by": "camera", "move": {"kind": "roll", "dice": "six"}}],
        },
        "action 0",
    ),
]


@pytest.mark.parametrize(("record", "named"), BAD_RECORDS)
def test_malformed_records_are_named(
    live: dict[str, Any], record: Any, named: str, tmp_path: Path
) -> None:
    answer = live["host"].post("/api/import", json=record)
    assert answer.status_code == 422, answer.text
    # (a record that is not an object is refused by the request check, in its words)
    assert named in answer.text or "body: Input should be a valid dictionary" in answer.text
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    replay = subprocess.run(
        [sys.executable, "-m", "companion.cli", "replay", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert replay.returncode == 2 and named in replay.stderr and str(path) in replay.stderr


def test_record_files_that_are_not_json_are_named(tmp_path: Path) -> None:
    for name, content in (
        ("cut.json", b'{"schema": 1, "game": "qw'),
        ("bin.json", b"\xff\xfe\x00"),
    ):
        path = tmp_path / name
        path.write_bytes(content)
        replay = subprocess.run(
            [sys.executable, "-m", "companion.cli", "replay", str(path)],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert replay.returncode == 2 and "not a JSON game record" in replay.stderr


BAD_SHEETS: list[tuple[bytes, str]] = [
    (b"not json", "JSON"),
    (b'{"format": "sixto-sheets", "version": 1, "sheets": {"X": ["1234"]}}', "X"),
    (b'{"format": "sixto-sheets", "version": 1, "sheets": {"Y": ["789789789789"] }}', "Y"),
    (b'{"format": "other", "version": 1, "sheets": {}}', "format"),
    (b"[1, 2, 3]", ""),
]


@pytest.mark.parametrize(("content", "named"), BAD_SHEETS)
def test_malformed_sheet_files_are_named(tmp_path: Path, content: bytes, named: str) -> None:
    path = tmp_path / "sheets.json"
    path.write_bytes(content)
    with pytest.raises(Rejection) as refused:
        load_sheet_file(path)
    assert str(path) in refused.value.message and named in refused.value.message
    assert refused.value.rule and refused.value.reason == "bad_options"


BAD_CALIBRATIONS: list[tuple[bytes, str]] = [
    (b"{", "JSON"),
    (b"[]", ""),
    (b'{"format": "companion-dice-set/0"}', "format"),
    (b'{"format": "companion-dice-set/1", "name": ""}', "'name'"),
    (b'{"format": "companion-dice-set/1", "name": "t", "dice": 3}', "'dice'"),
]


@pytest.mark.parametrize(("content", "named"), BAD_CALIBRATIONS)
def test_malformed_calibration_files_are_named(tmp_path: Path, content: bytes, named: str) -> None:
    path = tmp_path / "calibration.json"
    path.write_bytes(content)
    with pytest.raises(CalibrationError) as refused:
        load_calibration(path)
    assert str(path) in str(refused.value) and named in str(refused.value)


def test_oversized_requests_and_floods_are_bounded(server: ServerProcess) -> None:
    host = httpx.Client(base_url=server.base_url, timeout=10)
    table_id = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()["table_id"]
    # a body over the limit, announced or streamed without a length
    big = b'{"schema": 1, "pad": "' + b"x" * 2_100_000 + b'"}'
    announced = host.post("/api/import", content=big, headers={"Content-Type": "application/json"})
    assert announced.status_code == 413 and announced.json()["rule"] == "too_large"
    streamed = host.post(
        "/api/import",
        content=iter([big[i : i + 65536] for i in range(0, len(big), 65536)]),
        headers={"Content-Type": "application/json"},
    )
    assert streamed.status_code == 413
    # one device floods actions: refused with 429 after its burst; another device goes on.
    # The bucket refills while the flood runs, so what gets through is bounded by the burst
    # plus the refill over the flood's own duration (a busy machine sends more slowly).
    started = time.monotonic()
    flood = [
        host.post(f"/api/tables/{table_id}/undo", json={"action_id": f"flood-{n:05d}"}).status_code
        for n in range(300)
    ]
    elapsed = time.monotonic() - started
    defaults = Settings()
    let_through = defaults.device_burst + defaults.device_rate_per_s * elapsed + 2
    assert 500 not in flood and flood.count(429) >= 1
    assert len(flood) - flood.count(429) <= let_through, (elapsed, flood.count(429))
    other = httpx.Client(base_url=server.base_url, timeout=10)
    code = host.get(f"/api/tables/{table_id}/state").json()  # noqa: F841 - host still reads
    joined = other.post(
        "/api/join",
        json={
            "code": host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()["code"]
        },
    )
    assert joined.status_code == 200
    # a flood over the WebSocket: error frames with 429, and the socket survives
    url = server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws?view=table"
    cookie = f"tc_{table_id}={host.cookies[f'tc_{table_id}']}"
    with connect(url, additional_headers={"Cookie": cookie}, open_timeout=5) as socket:
        socket.recv(timeout=5)
        for _ in range(150):
            socket.send(json.dumps({"type": "dance"}))
        statuses = [json.loads(socket.recv(timeout=5))["status"] for _ in range(150)]
        assert statuses.count(429) >= 50 and set(statuses) <= {422, 429}
        # a message over the transport's size limit (4 x the app's 16 KiB, so that one
        # over the app's gets its 413 frame: test_holding_up.py) closes that socket (1009)
        with pytest.raises(ConnectionClosed):
            socket.send("x" * 70_000)
            socket.recv(timeout=5)
    assert host.get(f"/api/tables/{table_id}/state").status_code == 200
