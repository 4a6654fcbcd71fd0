"""Text from outside is valid Unicode or refused at the boundary (issue 25, items 1-2).

JSON can spell a lone surrogate ("\\ud800"). Before, `POST /api/import` with such a player
name was accepted (201) and the server machine's start page, /history and the table's own
pages answered 500 for good; such a key in a refused option or move turned the 422 into a
500. Here every string and every key of every JSON request body, of an imported record and
of a WebSocket message gets a lone surrogate (hypothesis draws which one, and where), and
each is refused with 422 `invalid_unicode` naming the field; a table an older server
stored with such a name shows as broken on the start page, is left out of /history with a
note, and can be removed. Against the real `companion serve` and its SQLite file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from websockets.sync.client import connect

from companion.table.store import Store
from companion.table.text import is_valid_text
from tests.web.conftest import ServerProcess
from tests.web.helpers import QWIXX_ROLL_7

NAMES = ["Ann", "Ben", "Cat"]
TABLE = "{t}"  # the test table's id in a path

# a well-formed body for every operation of the API with a JSON body (checked against the
# server's own /openapi.json below, so a new one must be added here)
BODIES: dict[str, Any] = {
    "/api/tables": {"game": "qwixx", "options": {"players": 3}, "players": NAMES},
    "/api/join": {"code": "ABCDEF"},
    "/api/tables/{t}/actions": {
        "action_id": "unicode-act-1",
        "expected_state_id": 0,
        "move": {"kind": "pass", "player": 0},
    },
    "/api/tables/{t}/undo": {"action_id": "unicode-undo-1"},
    "/api/tables/{t}/seat": {"seat": None},
    "/api/tables/{t}/auto_pass": {"on": True},
    "/api/tables/{t}/camera/mode": {"mode": "auto"},
    "/api/tables/{t}/camera/confirm": {"id": "reading"},
    "/api/tables/{t}/camera/fix": {"id": "reading", "index": 0, "colour": "red"},
    "/api/tables/{t}/camera/dismiss": {"id": "reading"},
    "/api/calibration": {"name": "table", "dice_set": "qwixx"},
    "/api/calibration/use": {"name": "table"},
    "/api/setups/{name}/teach": {"token": "token", "values": [1]},
}
RECORD = {
    "schema": 1,
    "game": "qwixx",
    "options": {"players": 3},
    "players": NAMES,
    "actions": [{"by": "camera", "move": QWIXX_ROLL_7}],
}
WS_ACT = {
    "type": "act",
    "action_id": "unicode-ws-1",
    "expected_state_id": 0,
    "move": {"kind": "pass", "player": 0},
}

Path = tuple[tuple[str, Any], ...]  # ("key", name) / ("item", index) steps to a place


def places(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every key and string of `value`: (*path, ("key", k)) for a key, path for a string."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*path, ("key", key))
            yield from places(item, (*path, ("value", key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, ("value", index)))


def spoil(value: Any, path: Path, bad: str, at: int) -> Any:
    """`value` with `bad` put into the key or string `path` names, at position `at`."""
    if not path:
        assert isinstance(value, str)
        cut = at % (len(value) + 1)
        return value[:cut] + bad + value[cut:]
    (kind, key), rest = path[0], path[1:]
    if kind == "key":
        return {(spoil(k, (), bad, at) if k == key else k): v for k, v in value.items()}
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[key] = spoil(value[key], rest, bad, at)  # type: ignore[index]
    return copy


def field_name(root: str, path: Path) -> str:
    """How the server names the place (companion/table/text.py): body.players[0]; for a key,
    the object holding it and "(its key)" (the key itself is what is spoilt)."""
    if path and path[-1][0] == "key":
        return field_name(root, path[:-1]) + "["
    name = root
    for _kind, key in path:
        if isinstance(key, int):
            name += f"[{key}]"
        elif key.isidentifier():
            name += f".{key}"
        else:
            name += f"[{json.dumps(key)}]"
    return name


# text that stays invalid after JSON: lone surrogates, a reversed pair, with valid text
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
BAD_TEXT = st.builds(
    lambda before, lone, after: before + "".join(lone) + after,
    st.text(max_size=2),
    st.lists(SURROGATES, min_size=1, max_size=3),
    st.text(max_size=2),
).filter(lambda text: not is_valid_text(json.loads(json.dumps(text))))


def send_json(client: httpx.Client, url: str, body: Any) -> httpx.Response:
    # json.dumps writes the surrogate as its \\u escape, as an attacker's JSON would
    data = json.dumps(body).encode("ascii")
    return client.post(url, content=data, headers={"content-type": "application/json"})


@pytest.fixture
def host(server: ServerProcess) -> Iterator[tuple[httpx.Client, str]]:
    client = httpx.Client(base_url=server.base_url, timeout=20)
    created = client.post("/api/tables", json=BODIES["/api/tables"])
    assert created.status_code == 201, created.text
    yield client, created.json()["table_id"]
    client.close()


def test_every_json_body_of_the_api_is_covered(server: ServerProcess) -> None:
    schema = httpx.get(server.base_url + "/openapi.json").json()
    json_bodies = {
        path.replace("{table_id}", TABLE)
        for path, operations in schema["paths"].items()
        for operation in operations.values()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    }
    assert json_bodies == {*BODIES, "/api/import"}


def http_cases() -> list[tuple[str, Path]]:
    return [(url, path) for url, body in BODIES.items() for path in places(body)]


def test_invalid_unicode_in_any_field_of_any_request_is_refused_naming_it(
    server: ServerProcess, host: tuple[httpx.Client, str]
) -> None:
    client, table_id = host
    cases = http_cases()
    assert len(cases) > 30

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=st.sampled_from(cases), bad=BAD_TEXT, at=st.integers(0, 40))
    def refused(case: tuple[str, Path], bad: str, at: int) -> None:
        url, path = case
        body = spoil(BODIES[url], path, bad, at)
        answer = send_json(client, url.format(t=table_id, name="setup"), body)
        assert answer.status_code == 422, (url, path, answer.status_code, answer.text[:300])
        refusal = answer.json()
        assert refusal["rule"] == "invalid_unicode", refusal
        assert field_name("body", path) in refusal["message"], (path, refusal)

    refused()
    state = client.get(f"/api/tables/{table_id}/state").json()
    assert state["state_id"] == 0  # nothing refused changed the game
    for page in ("/", "/history", f"/t/{table_id}"):
        assert client.get(page, headers={"accept": "text/html"}).status_code == 200, page
    assert "Traceback" not in server.log_path.read_text()


def test_the_probes_requests_are_refused_not_500(
    server: ServerProcess, host: tuple[httpx.Client, str]
) -> None:
    """The probe's own requests: a name in an import, a key in refused options, in a move,
    in an imported action; then the same connection still answers."""
    client, table_id = host
    probes = [
        ("/api/import", {**RECORD, "players": ["\ud800", "b", "c"], "actions": []}),
        ("/api/tables", {"game": "qwixx", "options": {"\ud800": 1}}),
        (
            f"/api/tables/{table_id}/actions",
            {"action_id": "probe-0001", "move": {"kind": "pass", "\ud800": 0}},
        ),
        ("/api/import", {**RECORD, "actions": [{"by": "camera", "move": {"\udfff": 1}}]}),
    ]
    for url, body in probes:
        answer = send_json(client, url, body)
        assert answer.status_code == 422, (url, answer.text[:300])
        assert "invalid_unicode" in answer.text, answer.text
        assert client.get("/api/games").status_code == 200  # the connection lives on
    assert client.get("/", headers={"accept": "text/html"}).status_code == 200


def test_invalid_unicode_anywhere_in_an_imported_record_is_refused(
    server: ServerProcess,
) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=20)
    cases = list(places(RECORD))

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(path=st.sampled_from(cases), bad=BAD_TEXT, at=st.integers(0, 40))
    def refused(path: Path, bad: str, at: int) -> None:
        answer = send_json(client, "/api/import", spoil(RECORD, path, bad, at))
        assume(answer.status_code != 429)  # the per-client creation limit, not the check
        assert answer.status_code == 422, (path, answer.text[:300])
        assert answer.json()["rule"] == "invalid_unicode", answer.text
        assert field_name("record", path) in answer.json()["message"], (path, answer.text)

    refused()
    assert client.get("/", headers={"accept": "text/html"}).status_code == 200
    assert client.get("/history", headers={"accept": "text/html"}).status_code == 200


def test_invalid_unicode_in_a_websocket_message_is_refused_naming_it(
    server: ServerProcess, host: tuple[httpx.Client, str]
) -> None:
    client, table_id = host
    url = server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws"
    cookie = f"tc_{table_id}={client.cookies[f'tc_{table_id}']}"
    bad_texts = ["\ud800", "a\udc00b", "\udfff\ud800", "x\ude00"]
    with connect(url, additional_headers={"Cookie": cookie}) as socket:
        socket.recv(timeout=20)  # the first push: the current state
        for index, path in enumerate(places(WS_ACT)):
            bad = bad_texts[index % len(bad_texts)]
            socket.send(json.dumps(spoil(WS_ACT, path, bad, index)))
            frame = json.loads(socket.recv(timeout=20))
            while frame.get("type") != "error":  # a push may come first
                frame = json.loads(socket.recv(timeout=20))
            assert frame["status"] == 422 and frame["rule"] == "invalid_unicode", frame
            assert field_name("message", path) in frame["message"], (path, frame)
        socket.send(json.dumps({"type": "sync"}))  # the socket still answers
        assert socket.recv(timeout=20)
    assert client.get(f"/api/tables/{table_id}/state").json()["state_id"] == 0


def store_surrogate_tables(server: ServerProcess) -> None:
    """Two tables as an older server stored them from the probe's import: a running one
    and a finished one whose names hold a lone surrogate."""
    store = Store.open(server.data_dir / "companion.sqlite3")
    names = ["\ud800", "b", "c"]
    for index, table_id in enumerate(("lonerun", "lonedone")):
        store.create_table(table_id, f"LONE{index:02d}", "qwixx", {"players": 3}, names)
    summary = {
        "game": "qwixx",
        "title": "Qwixx",
        "players": names,
        "scores": [{"seat": s, "total": 0, "breakdown": []} for s in range(3)],
        "winners": [0],
        "end_message": "ended by the host",
        "ended_by_host": True,
        "actions": 0,
    }
    store.set_finished("lonedone", summary)
    store.close()


def test_a_stored_table_with_invalid_unicode_shows_as_broken_and_can_be_removed(
    server: ServerProcess,
) -> None:
    store_surrogate_tables(server)
    client = httpx.Client(base_url=server.base_url, timeout=20, headers={"accept": "text/html"})
    start = client.get("/")
    assert start.status_code == 200, start.text[-500:]
    assert "table lonerun" in start.text and "not valid Unicode" in start.text
    assert 'action="/t/lonerun/remove"' in start.text
    history = client.get("/history")
    assert history.status_code == 200 and "(table lonedone) cannot be shown" in history.text
    for path in ("/t/lonerun", "/t/lonerun/log", "/api/tables/lonerun/state"):
        assert client.get(path).status_code in (303, 409), path  # no cookie: to /join
    removed = client.post("/t/lonerun/remove", follow_redirects=False)
    assert removed.status_code == 303, removed.text
    assert "lonerun" not in client.get("/").text
    assert client.post("/t/lonerun/remove").status_code == 404
    store = Store.open(server.data_dir / "companion.sqlite3")
    try:
        assert store.table("lonerun") is None and store.log("lonerun") == []
        assert store.table("lonedone") is not None
    finally:
        store.close()
    assert "Traceback" not in server.log_path.read_text()


def test_a_table_that_opens_is_not_removed(server: ServerProcess) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=20)
    created = client.post("/api/tables", json=BODIES["/api/tables"]).json()
    refused = client.post(f"/t/{created['table_id']}/remove", follow_redirects=False)
    assert refused.status_code == 403 and refused.json()["rule"] == "table_opens"
    assert client.get(f"/api/tables/{created['table_id']}/state").status_code == 200
