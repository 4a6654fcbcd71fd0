"""The JSON API and the WebSocket through the app factory (FastAPI TestClient): access by
join code, who may mark what, refusals mapped to HTTP codes, stale views, idempotent
actions, undo rights, export/import, history, limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from companion.rules.sixto import PROJECT_SHEETS
from companion.web.app import create_app
from companion.web.settings import Settings
from tests.waiting import wait_until
from tests.web.helpers import QWIXX_ROLL_7, act, create_table, seat_player


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return create_app(Settings(data_dir=tmp_path, join_attempts=3, max_body_bytes=20_000))


@pytest.fixture
def qwixx(app: Any, host: TestClient) -> dict[str, Any]:
    """A 2-player Qwixx table: host client, Ann's device (seat 0), Bob's device (seat 1)."""
    table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
    ann, bob = TestClient(app), TestClient(app)
    seat_player(ann, table["code"], table["table_id"], 0)
    seat_player(bob, table["code"], table["table_id"], 1)
    return {**table, "ann": ann, "bob": bob, "host": host}


def state(client: TestClient, table_id: str) -> dict[str, Any]:
    response = client.get(f"/api/tables/{table_id}/state")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_qwixx_turn_through_the_api(qwixx: dict[str, Any]) -> None:
    tid, ann, bob, host = qwixx["table_id"], qwixx["ann"], qwixx["bob"], qwixx["host"]
    assert act(host, tid, QWIXX_ROLL_7, "roll-0001").json() == {"state_id": 1, "duplicate": False}
    seen = state(bob, tid)
    assert seen["turn"]["step"] == "white_sum" and seen["turn"]["players"] == [0, 1]
    assert {"kind": "cross", "player": 1, "colour": "red", "number": 7} in seen["legal_moves"]
    # white sum for everyone: Bob (not active) crosses red 7, Ann yellow 7
    assert (
        act(
            bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "bob-white-1"
        ).status_code
        == 200
    )
    assert (
        act(
            ann, tid, {"kind": "cross", "player": 0, "colour": "yellow", "number": 7}, "ann-white-1"
        ).status_code
        == 200
    )
    # colour step: only the active player (Ann): white 4 + yellow 5 = 9 in yellow
    after = state(ann, tid)
    assert after["turn"]["step"] == "colour" and after["turn"]["players"] == [0]
    assert (
        act(
            ann,
            tid,
            {"kind": "cross", "player": 0, "colour": "yellow", "number": 9},
            "ann-colour-1",
        ).status_code
        == 200
    )
    final = state(host, tid)
    assert final["turn"]["step"] == "roll" and final["turn"]["active"] == 1
    sheets = final["state"]["state"]["sheets"]
    assert sheets[0]["yellow"] == [7, 9] and sheets[1]["red"] == [7]


def test_the_active_player_who_crosses_nothing_gets_a_penalty(qwixx: dict[str, Any]) -> None:
    tid, ann, bob, host = qwixx["table_id"], qwixx["ann"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    act(bob, tid, {"kind": "pass", "player": 1}, "bob-pass-01")
    act(ann, tid, {"kind": "pass", "player": 0}, "ann-pass-01")
    act(ann, tid, {"kind": "pass", "player": 0}, "ann-pass-02")
    sheets = state(host, tid)["state"]["state"]["sheets"]
    assert [s["penalties"] for s in sheets] == [1, 0]
    assert state(host, tid)["scores"][0]["total"] == -5


def test_a_players_roll_never_passes_another_player_with_a_penalty(
    qwixx: dict[str, Any],
) -> None:
    """The security trial: Bob (next to roll) entered his roll 26 ms after Ann's, and the
    automatic pass gave Ann, who had crossed nothing yet, her -5: another device marked her
    sheet. A player's device now waits for her; the host may still enter it."""
    tid, ann, bob, host = qwixx["table_id"], qwixx["ann"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    refused = act(bob, tid, QWIXX_ROLL_7, "roll-0002")
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "penalty_for_other"
    assert "Ann has not finished this turn" in refused.json()["message"]
    assert state(host, tid)["state_id"] == 1
    # once Ann has crossed, her pass costs nothing, and Bob's roll passes for both
    act(ann, tid, {"kind": "cross", "player": 0, "colour": "red", "number": 7}, "ann-cross-1")
    assert act(bob, tid, QWIXX_ROLL_7, "roll-0003").status_code == 200
    sheets = state(host, tid)["state"]["state"]["sheets"]
    assert [s["penalties"] for s in sheets] == [0, 0]


WAITS_FOR_ANN = (
    "Ann has not finished this turn, and the roll would pass for Ann with a penalty: Ann "
    "passes (or crosses) first"
)


def test_a_roll_refused_for_anothers_penalty_names_the_way_there_is(
    app: Any, host: TestClient
) -> None:
    """The refusal said "..., or the host enters the roll" in every case: also on the
    host's own phone, seated as Bob (it pointed the host at itself; the host's table view
    enters it), and on Cy's phone while the host's phone is seated (it acts as Bob only,
    so no device enters that roll: the players act each for themselves)."""
    table = create_table(host, "qwixx", ["Ann", "Bob", "Cy"], {"players": 3})
    tid = table["table_id"]
    ann, cy = TestClient(app), TestClient(app)
    seat_player(ann, table["code"], tid, 0)
    seat_player(cy, table["code"], tid, 2)
    assert act(ann, tid, QWIXX_ROLL_7, "ann-roll-1").status_code == 200
    assert act(cy, tid, {"kind": "pass", "player": 2}, "cy-pass-1").status_code == 200
    assert host.post(f"/api/tables/{tid}/seat", json={"seat": 1}).status_code == 200
    refused = act(host, tid, QWIXX_ROLL_7, "bob-roll-1")  # the host's phone, as Bob
    assert refused.json()["rule"] == "penalty_for_other"
    assert refused.json()["message"] == (
        f"{WAITS_FOR_ANN}, or, as the host, you can enter it from the table view (Seat, "
        "then Just watch)"
    )
    red_7 = {"kind": "cross", "player": 0, "colour": "red", "number": 7}
    assert act(ann, tid, red_7, "ann-red-7").status_code == 200
    bob_roll = act(host, tid, QWIXX_ROLL_7, "bob-roll-2")  # Bob's turn
    assert bob_roll.status_code == 200, bob_roll.text
    refused = act(cy, tid, QWIXX_ROLL_7, "cy-roll-1")  # Bob has not acted: -5 for him
    assert refused.json()["message"] == (
        "Bob has not finished this turn, and the roll would pass for Bob with a penalty: "
        "Bob passes (or crosses) first"
    )
    # the host's phone stands up to its table view: a player's phone is pointed at it
    assert host.post(f"/api/tables/{tid}/seat", json={"seat": None}).status_code == 200
    refused = act(cy, tid, QWIXX_ROLL_7, "cy-roll-2")
    assert refused.json()["message"].endswith(
        "Bob passes (or crosses) first, or the host enters the roll"
    )


def test_the_host_may_enter_the_roll_that_passes_with_a_penalty(qwixx: dict[str, Any]) -> None:
    tid, host = qwixx["table_id"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    assert act(host, tid, QWIXX_ROLL_7, "roll-0002").status_code == 200
    sheets = state(host, tid)["state"]["state"]["sheets"]
    assert [s["penalties"] for s in sheets] == [1, 0]


@pytest.mark.parametrize(
    ("who", "move", "status", "reason", "rule"),
    [
        (
            "bob",
            {"kind": "cross", "player": 1, "colour": "red", "number": 8},
            409,
            "illegal_move",
            "white_sum",
        ),
        (
            "ann",
            {"kind": "cross", "player": 1, "colour": "red", "number": 7},
            403,
            "not_allowed",
            "own_sheet_only",
        ),
        (
            "bob",
            {"kind": "cross", "player": 1, "colour": "pink", "number": 7},
            409,
            "illegal_move",
            None,
        ),
        ("bob", {"kind": "fly", "player": 1}, 422, "malformed", "move_kind"),
        ("bob", {"kind": "cross", "player": 1, "colour": "red"}, 422, "malformed", "move"),
        ("bob", QWIXX_ROLL_7, 403, "not_allowed", "roll_by_active_or_host"),
        ("host", QWIXX_ROLL_7, 409, "not_your_turn", "no_roll_expected"),
    ],
)
def test_refusals_carry_reason_rule_and_status(
    qwixx: dict[str, Any],
    who: str,
    move: dict[str, Any],
    status: int,
    reason: str,
    rule: str | None,
) -> None:
    tid = qwixx["table_id"]
    # without automatic passes no roll is due while the white sum is open (with them Bob,
    # the next roller, and the host may enter the next roll: test_auto_pass_browser.py)
    assert qwixx["host"].post(f"/api/tables/{tid}/auto_pass", json={"on": False}).status_code == 200
    act(qwixx["host"], tid, QWIXX_ROLL_7, "roll-0001")
    response = act(qwixx[who], tid, move, "try-00001")
    assert response.status_code == status, response.text
    body = response.json()
    assert body["reason"] == reason
    if rule is not None:
        assert body["rule"] == rule
    assert body["message"]
    assert state(qwixx["host"], tid)["state_id"] == 1  # nothing applied


def test_the_wrong_dice_are_refused_by_name(qwixx: dict[str, Any]) -> None:
    bad = {**QWIXX_ROLL_7, "dice": QWIXX_ROLL_7["dice"][:5]}
    response = act(qwixx["host"], qwixx["table_id"], bad, "roll-0001")
    assert response.status_code == 422
    assert response.json()["reason"] == "wrong_dice"
    assert "6 dice" in response.json()["message"]


def test_a_stale_view_is_refused_and_an_action_id_applies_once(qwixx: dict[str, Any]) -> None:
    tid, bob, host = qwixx["table_id"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001", expected_state_id=0)
    stale = act(host, tid, QWIXX_ROLL_7, "roll-0002", expected_state_id=0)
    assert stale.status_code == 409 and stale.json()["reason"] == "stale_state"
    cross = {"kind": "cross", "player": 1, "colour": "red", "number": 7}
    first = act(bob, tid, cross, "bob-cross-1", expected_state_id=1)
    again = act(bob, tid, cross, "bob-cross-1", expected_state_id=1)  # a retry after a lost ack
    assert first.json() == {"state_id": 2, "duplicate": False}
    assert again.status_code == 200 and again.json() == {"state_id": 2, "duplicate": True}
    assert state(host, tid)["state"]["state"]["sheets"][1]["red"] == [7]


def test_undo_by_the_player_who_acted_or_by_the_host(qwixx: dict[str, Any]) -> None:
    tid, ann, bob, host = qwixx["table_id"], qwixx["ann"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    act(bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "bob-cross-1")
    refused = ann.post(f"/api/tables/{tid}/undo", json={"action_id": "ann-undo-1"})
    assert refused.status_code == 403 and refused.json()["rule"] == "undo_own_only"
    assert bob.post(f"/api/tables/{tid}/undo", json={"action_id": "bob-undo-1"}).status_code == 200
    assert state(host, tid)["state"]["state"]["sheets"][1]["red"] == []
    # the roll was entered by the host: only the host may take it back now
    assert bob.post(f"/api/tables/{tid}/undo", json={"action_id": "bob-undo-2"}).status_code == 403
    assert host.post(f"/api/tables/{tid}/undo", json={"action_id": "host-undo-1"}).json() == {
        "state_id": 4,
        "duplicate": False,
    }
    empty = host.post(f"/api/tables/{tid}/undo", json={"action_id": "host-undo-2"})
    assert empty.status_code == 409 and empty.json()["reason"] == "nothing_to_undo"


def test_the_log_says_what_each_undo_took_back(qwixx: dict[str, Any]) -> None:
    """An undo row names the action it took back (struck through above it), by the
    session's rule; the host's undo of a player's action names whose it was."""
    tid, bob, host = qwixx["table_id"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    act(bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "bob-cross-1")
    for number in (1, 2):
        undo = host.post(f"/api/tables/{tid}/undo", json={"action_id": f"host-undo-{number}"})
        assert undo.status_code == 200
    log = " ".join(host.get(f"/t/{tid}/log").text.split())
    assert "<td>3</td> <td>host</td> <td>Undid Bob&#39;s: Cross red 7</td>" in log, log
    dice = "white 3, white 4, red 2, yellow 5, green 6, blue 1"
    assert f"<td>4</td> <td>host</td> <td>Undid: roll {dice}</td>" in log, log


def test_the_log_names_the_penalty_an_undone_pass_took_back(qwixx: dict[str, Any]) -> None:
    """The host takes back Ann's colour pass after she crossed nothing: its struck-through
    row read "Pass (no cross)" without its penalty and the undo row "Undid: Pass (no
    cross)"; both say the penalty, as the undo's news and button do."""
    tid, host = qwixx["table_id"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    for number, player in enumerate((1, 0, 0)):  # the white sum passed, then Ann's colours
        act(host, tid, {"kind": "pass", "player": player}, f"host-pass-{number}")
    assert host.post(f"/api/tables/{tid}/undo", json={"action_id": "host-undo-1"}).is_success
    log = " ".join(host.get(f"/t/{tid}/log").text.split())
    minus_5 = "\N{MINUS SIGN}5"
    struck = '<tr class="undone" data-seq="4"> <td>4</td> <td>host</td>'
    assert f"{struck} <td>Pass (no cross), {minus_5} penalty <span" in log, log
    assert f"<td>Undid: Pass ({minus_5} penalty)</td>" in log, log


def test_no_join_code_no_access(app: Any, qwixx: dict[str, Any]) -> None:
    tid = qwixx["table_id"]
    stranger = TestClient(app)
    assert stranger.get(f"/api/tables/{tid}/state").status_code == 401
    assert act(stranger, tid, QWIXX_ROLL_7, "roll-0001").status_code == 401
    page = stranger.get(f"/t/{tid}", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/join?why=not_joined"
    assert stranger.get(f"/api/tables/{tid}/record").status_code == 401
    with pytest.raises(WebSocketDisconnect), stranger.websocket_connect(f"/t/{tid}/ws"):
        pass
    stranger.cookies.set(f"tc_{tid}", "forged-token")
    assert stranger.get(f"/api/tables/{tid}/state").status_code == 401


def test_wrong_codes_are_slowed_down(app: Any, qwixx: dict[str, Any]) -> None:
    guesser = TestClient(app)
    for attempt in range(3):
        response = guesser.post("/api/join", json={"code": f"ZZZZZ{attempt + 2}"})
        assert response.status_code == 404 and response.json()["reason"] == "unknown_code"
    blocked = guesser.post("/api/join", json={"code": qwixx["code"]})  # even the right one
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1


@pytest.mark.parametrize(
    ("path", "body", "problem"),
    [
        ("/api/tables", {"game": "qwixx", "options": {}, "players": [], "extra": 1}, "extra"),
        ("/api/tables", {"game": "qwixx", "players": ["x" * 41]}, "players.0"),
        ("/api/join", {"code": ""}, "code"),
    ],
)
def test_malformed_requests_name_the_problem(
    host: TestClient, path: str, body: dict[str, Any], problem: str
) -> None:
    response = host.post(path, json=body)
    assert response.status_code == 422
    assert response.json()["reason"] == "malformed" and problem in response.json()["message"]


def test_bad_options_and_unknown_games_are_422(host: TestClient) -> None:
    too_many = host.post("/api/tables", json={"game": "qwixx", "options": {"players": 9}})
    assert too_many.status_code == 422 and too_many.json()["rule"] == "players"
    unknown = host.post("/api/tables", json={"game": "chess"})
    assert unknown.status_code == 422 and unknown.json()["rule"] == "unknown_game"


def test_a_sixto_table_with_two_sheets_of_the_same_digits_is_refused(host: TestClient) -> None:
    """Rulebook: everyone uses a different score sheet; a custom sheet counts by its digits."""
    rows = list(PROJECT_SHEETS["A"])
    for sheets, said in (
        (
            [{"rows": rows, "name": "pad"}, {"rows": rows, "name": "pad"}],
            'Bob\'s custom sheet "pad" has the same numbers as Ann\'s (custom sheet "pad")',
        ),
        (
            [{"letter": "A"}, {"rows": rows}],
            "Bob's custom sheet has the same numbers as Ann's (sheet A)",
        ),
    ):
        body = {"game": "sixto", "players": ["Ann", "Bob"], "options": {"sheets": sheets}}
        refused = host.post("/api/tables", json=body)
        assert refused.status_code == 422, refused.text
        assert refused.json()["rule"] == "sheet_taken"
        assert refused.json()["message"] == f"{said}; everyone needs a different sheet"
    other = [{"letter": "B"}, {"rows": rows, "name": "pad"}]
    body = {"game": "sixto", "players": ["Ann", "Bob"], "options": {"sheets": other}}
    assert host.post("/api/tables", json=body).status_code == 201


def test_names_alone_seat_one_player_each_and_a_number_given_must_match(host: TestClient) -> None:
    seated = host.post("/api/tables", json={"game": "qwixx", "players": ["Ann", "Bob"]})
    assert seated.status_code == 201, seated.text
    state = host.get(f"/api/tables/{seated.json()['table_id']}/state").json()
    assert state["players"] == ["Ann", "Bob"]
    mismatch = host.post(
        "/api/tables", json={"game": "sixto", "players": ["Ann", "Bob"], "options": {"players": 3}}
    )
    assert mismatch.status_code == 422 and mismatch.json()["rule"] == "player_names"


def test_action_requests_are_validated(qwixx: dict[str, Any]) -> None:
    tid, bob = qwixx["table_id"], qwixx["bob"]
    url = f"/api/tables/{tid}/actions"
    short_id = bob.post(url, json={"action_id": "x", "move": {"kind": "pass", "player": 1}})
    assert short_id.status_code == 422 and "action_id" in short_id.json()["message"]
    huge = bob.post(url, json={"action_id": "a" * 10, "move": {"kind": "x" * 30_000}})
    assert huge.status_code == 413 and huge.json()["rule"] == "too_large"
    big_move = bob.post(url, json={"action_id": "a" * 10, "move": {"kind": "x" * 5000}})
    assert big_move.status_code == 422 and "move" in big_move.json()["message"]
    not_json = bob.post(url, content=b"{nope", headers={"content-type": "application/json"})
    assert not_json.status_code == 422


def test_a_true_or_a_string_is_no_seat_nor_state_id(qwixx: dict[str, Any]) -> None:
    """`{"seat": true}` sat the host at seat 1 and `"expected_state_id": true` was taken
    as state 1: a malformed request gets a 422 naming its field, and changes nothing."""
    tid, host = qwixx["table_id"], qwixx["host"]
    for seat in (True, "1", 1.0):
        answer = host.post(f"/api/tables/{tid}/seat", json={"seat": seat})
        assert answer.status_code == 422 and "seat" in answer.json()["message"], answer.text
    assert state(host, tid)["viewer"] == {"seat": None, "host": True}
    for body in (
        {"action_id": "a" * 10, "expected_state_id": True, "move": QWIXX_ROLL_7},
        {"action_id": "a" * 10, "expected_state_id": True},
    ):
        path = "actions" if "move" in body else "undo"
        answer = host.post(f"/api/tables/{tid}/{path}", json=body)
        assert answer.status_code == 422, answer.text
        assert "expected_state_id" in answer.json()["message"]
    assert state(host, tid)["state_id"] == 0


def test_a_true_or_a_string_is_no_die_nor_value_of_the_cameras_question(
    qwixx: dict[str, Any],
) -> None:
    """The seat and the state id refuse a JSON true (it was taken as 1); the answers to the
    camera's question took `{"index": true}` as die 1 and `"value": true` as a 1 all the
    same. Each is a 422 naming its field, before any held reading is looked at."""
    tid, host = qwixx["table_id"], qwixx["host"]
    api = f"/api/tables/{tid}/camera"
    add = {"x": 10, "y": 10, "value": True, "colour": "red"}
    for path, body, field in (
        ("fix", {"id": "r1", "index": True, "value": 6}, "index"),
        ("fix", {"id": "r1", "index": "0", "value": 6}, "index"),
        ("fix", {"id": "r1", "index": 0, "value": True}, "value"),
        ("fix", {"id": "r1", "add": add}, "value"),
        ("confirm", {"id": "r1", "roll": [["red", True]]}, "roll"),
    ):
        answer = host.post(f"{api}/{path}", json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert field in answer.json()["message"], answer.text


def test_requests_from_a_foreign_page_are_refused(qwixx: dict[str, Any]) -> None:
    tid, bob = qwixx["table_id"], qwixx["bob"]
    response = bob.post(
        f"/api/tables/{tid}/actions",
        json={"action_id": "a" * 10, "move": {"kind": "pass", "player": 1}},
        headers={"origin": "http://evil.example"},
    )
    assert response.status_code == 403 and response.json()["rule"] == "foreign_origin"


def test_a_seat_has_one_device_until_the_host_frees_it(app: Any, qwixx: dict[str, Any]) -> None:
    tid, code, host = qwixx["table_id"], qwixx["code"], qwixx["host"]
    newcomer = TestClient(app)
    assert newcomer.post("/api/join", json={"code": code.lower()}).status_code == 200
    taken = newcomer.post(f"/api/tables/{tid}/seat", json={"seat": 1})
    assert taken.status_code == 403 and taken.json()["rule"] == "seat_taken"
    assert newcomer.post(f"/api/tables/{tid}/seats/1/free").status_code == 403  # not the host
    assert host.post(f"/api/tables/{tid}/seats/1/free").status_code == 200
    assert newcomer.post(f"/api/tables/{tid}/seat", json={"seat": 1}).status_code == 200
    assert state(newcomer, tid)["viewer"] == {"seat": 1, "host": False}


def test_the_seat_page_says_in_words_how_a_taken_seat_is_freed(
    app: Any, qwixx: dict[str, Any]
) -> None:
    """A player on a new device (the old tablet's battery died) finds their name taken: a
    tablet shows no tooltip, so the page itself says who frees it and where."""
    tid, code = qwixx["table_id"], qwixx["code"]
    newcomer = TestClient(app)
    assert newcomer.post("/api/join", json={"code": code}).status_code == 200
    page = " ".join(newcomer.get(f"/t/{tid}/seat").text.split())
    assert "Ann (taken)" in page and "Bob (taken)" in page
    assert "ask the host to free it (Host tools, Free a seat)" in page
    qwixx["host"].post(f"/api/tables/{tid}/seats/1/free")
    qwixx["host"].post(f"/api/tables/{tid}/seats/0/free")
    assert "host to free it" not in newcomer.get(f"/t/{tid}/seat").text  # nothing taken


def test_export_import_continues_the_game(app: Any, qwixx: dict[str, Any]) -> None:
    tid, bob, host = qwixx["table_id"], qwixx["bob"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    act(bob, tid, {"kind": "cross", "player": 1, "colour": "red", "number": 7}, "bob-cross-1")
    exported = host.get(f"/api/tables/{tid}/record")
    assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
    record = exported.json()
    assert record["game"] == "qwixx" and record["players"] == ["Ann", "Bob"]
    assert len(record["actions"]) == 2
    other_host = TestClient(app)
    imported = other_host.post("/api/import", json=record)
    assert imported.status_code == 201
    new_id = imported.json()["table_id"]
    assert new_id != tid
    copy = state(other_host, new_id)
    assert copy["state"] == state(host, tid)["state"] and copy["state_id"] == 2
    assert act(other_host, new_id, {"kind": "pass", "player": 0}, "host-pass-1").status_code == 200


def test_a_bad_record_names_the_action(host: TestClient) -> None:
    record = {
        "schema": 1,
        "game": "qwixx",
        "options": {"players": 2},
        "players": ["A", "B"],
        "actions": [
            {"by": "camera", "move": QWIXX_ROLL_7},
            {"by": "1", "move": {"kind": "cross", "player": 1, "colour": "red", "number": 12}},
        ],
    }
    response = host.post("/api/import", json=record)
    assert response.status_code == 422
    assert response.json()["index"] == 1 and "action 1" in response.json()["message"]


def test_a_finished_game_shows_in_the_history(app: Any, host: TestClient) -> None:
    table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
    tid = table["table_id"]
    # Ann (active every other turn) passes everything: four penalties end the game
    n = 0
    while not state(host, tid)["finished"]:
        turn = state(host, tid)["turn"]
        if turn["chance"]:
            act(host, tid, QWIXX_ROLL_7, f"roll-{n:05d}")
        else:
            seat = turn["players"][0]
            act(host, tid, {"kind": "pass", "player": seat}, f"pass-{n:05d}")
        n += 1
        assert n < 200
    final = state(host, tid)
    assert final["outcome"]["reason"] == "fourth_penalty"
    # the players' names, as the end card says it (it said "player 1 ...")
    message = final["outcome"]["message"]
    assert "player" not in message.lower() and ("Ann" in message or "Bob" in message), message
    page = host.get("/history")
    assert page.status_code == 200 and "Qwixx" in page.text and "\N{MINUS SIGN}20" in page.text
    assert act(host, tid, QWIXX_ROLL_7, "roll-late-1").json()["reason"] == "game_over"
    table_page = host.get(f"/t/{tid}")
    # the end card names the winner in the game's message (no second "Winner" line)
    assert "Game over" in table_page.text and message in table_page.text


def test_the_host_can_end_a_running_game(qwixx: dict[str, Any]) -> None:
    tid, bob, host = qwixx["table_id"], qwixx["bob"], qwixx["host"]
    assert bob.post(f"/api/tables/{tid}/end").status_code == 403
    assert host.post(f"/api/tables/{tid}/end").status_code == 200
    assert state(host, tid)["finished"] is True
    late = act(host, tid, QWIXX_ROLL_7, "roll-0001")
    assert late.status_code == 409 and late.json()["rule"] == "ended_by_host"
    assert "Qwixx" in host.get("/history").text


def test_a_game_the_host_ended_is_imported_as_ended(app: Any, qwixx: dict[str, Any]) -> None:
    """A café owner imports a game the host ended to look at it again: it used to come
    back as a live table (the record did not say it had ended), waiting for its players."""
    tid, host = qwixx["table_id"], qwixx["host"]
    act(host, tid, QWIXX_ROLL_7, "roll-0001")
    running = host.get(f"/api/tables/{tid}/record").json()
    assert "ended_by_host" not in running
    assert host.post(f"/api/tables/{tid}/end").status_code == 200
    record = host.get(f"/api/tables/{tid}/record").json()
    assert record["ended_by_host"] is True
    other_host = TestClient(app)
    imported = other_host.post("/api/import", json=record)
    assert imported.status_code == 201
    copy = state(other_host, imported.json()["table_id"])
    assert copy["finished"] is True and copy["state_id"] == 1
    late = act(other_host, imported.json()["table_id"], QWIXX_ROLL_7, "roll-late")
    assert late.status_code == 409 and late.json()["rule"] == "ended_by_host"
    # its page opens on the end, the join panel folded (no seat is needed to play)
    page = other_host.get(f"/t/{imported.json()['table_id']}").text
    panel = page.split('id="join-panel"')[1].split(">")[0]
    assert "open" not in panel and "0 of 2 seats taken" in page
    # its host tools export it; nothing there acts on a game that is over
    # (they are on the page, hidden, for table.js to show should an undo reopen a game)
    tools = page.split('id="host-tools"')[1].split("</details>")[0]
    always, running_only = tools.split("data-host-running")
    assert "/record" in always and "data-host-end" not in always
    assert running_only.split(">")[0].strip() == "hidden"
    # the running game's record still continues as a live table
    live = state(other_host, other_host.post("/api/import", json=running).json()["table_id"])
    assert live["finished"] is False
    bad = other_host.post("/api/import", json=record | {"ended_by_host": "yes"})
    assert bad.status_code == 422 and bad.json()["rule"] == "ended_by_host"


def test_games_catalogue_drives_the_start_form(host: TestClient) -> None:
    games = {g["name"]: g for g in host.get("/api/games").json()}
    assert games["qwixx"]["defaults"]["3"]["players"] == 3
    assert set(games["qwixx"]["defaults"]) == {"2", "3", "4", "5"}
    page = host.get("/")
    assert page.status_code == 200 and '"name": "qwixx"' in page.text


def test_pages_and_manifest_are_served_locally(qwixx: dict[str, Any]) -> None:
    tid, ann, host = qwixx["table_id"], qwixx["ann"], qwixx["host"]
    table_page = host.get(f"/t/{tid}")
    assert table_page.status_code == 200
    assert qwixx["code"] in table_page.text and "<svg" in table_page.text  # code and QR
    assert "http://" not in table_page.text.split("<main>")[0].replace("http://www.w3", "")
    sheet = ann.get(f"/t/{tid}/sheet")
    assert sheet.status_code == 200 and 'aria-label="Ann\'s sheet"' in sheet.text
    assert 'aria-label="Bob\'s sheet"' not in sheet.text  # a device shows its own sheet
    manifest = host.get("/static/manifest.webmanifest")
    assert manifest.status_code == 200
    icons = json.loads(manifest.text)["icons"]
    assert all(host.get(icon["src"]).status_code == 200 for icon in icons)


def test_websocket_pushes_every_change_to_every_device(qwixx: dict[str, Any]) -> None:
    tid, ann, bob = qwixx["table_id"], qwixx["ann"], qwixx["bob"]
    with (
        ann.websocket_connect(f"/t/{tid}/ws?view=sheet") as ann_ws,
        bob.websocket_connect(f"/t/{tid}/ws?view=sheet") as bob_ws,
    ):
        assert ann_ws.receive_json()["state_id"] == 0
        assert bob_ws.receive_json()["state_id"] == 0
        ann_ws.send_json(
            {"type": "act", "action_id": "ann-roll-1", "move": QWIXX_ROLL_7, "expected_state_id": 0}
        )
        assert ann_ws.receive_json() == {
            "type": "ack",
            "action_id": "ann-roll-1",
            "state_id": 1,
            "duplicate": False,
        }
        pushed = bob_ws.receive_json()
        assert pushed["type"] == "state" and pushed["state_id"] == 1
        assert 'data-move="{&#34;kind&#34;:&#34;cross&#34;,&#34;player&#34;:1' in pushed["html"]
        assert "legal" in pushed["html"]
        assert ann_ws.receive_json()["state_id"] == 1
        # a refused tap: the engine's message comes back on that socket only
        bob_ws.send_json(
            {
                "type": "act",
                "action_id": "bob-bad-01",
                "expected_state_id": 1,
                "move": {"kind": "cross", "player": 1, "colour": "red", "number": 9},
            }
        )
        error = bob_ws.receive_json()
        assert error["type"] == "error" and error["status"] == 409
        assert error["message"] == "the white dice show 7, not 9"
        # a stale view: refused, and the device gets the current state again
        bob_ws.send_json(
            {
                "type": "act",
                "action_id": "bob-old-01",
                "expected_state_id": 0,
                "move": {"kind": "pass", "player": 1},
            }
        )
        assert bob_ws.receive_json()["reason"] == "stale_state"
        assert bob_ws.receive_json() == {"type": "state", "state_id": 1, "html": pushed["html"]}
        bob_ws.send_json({"type": "dance"})
        assert bob_ws.receive_json()["status"] == 422


def test_websocket_from_a_foreign_origin_is_refused(qwixx: dict[str, Any]) -> None:
    tid, ann = qwixx["table_id"], qwixx["ann"]
    with (
        pytest.raises(WebSocketDisconnect),
        ann.websocket_connect(f"/t/{tid}/ws", headers={"origin": "http://evil.example"}),
    ):
        pass
    with ann.websocket_connect(f"/t/{tid}/ws", headers={"origin": "http://testserver"}) as ws:
        assert ws.receive_json()["type"] == "state"


def test_a_ping_is_answered_with_a_pong_and_nothing_else(qwixx: dict[str, Any]) -> None:
    """table.js asks a quiet socket whether it still carries anything: the answer is a
    pong, no state drawn again; the next frame after it is the next change's."""
    tid, ann, host = qwixx["table_id"], qwixx["ann"], qwixx["host"]
    with ann.websocket_connect(f"/t/{tid}/ws?view=sheet") as ws:
        assert ws.receive_json()["state_id"] == 0
        ws.send_json({"type": "ping"})
        assert ws.receive_json() == {"type": "pong"}
        act(host, tid, QWIXX_ROLL_7, "roll-0001")
        assert ws.receive_json()["state_id"] == 1


def test_a_ping_spends_nothing_of_the_devices_rate(tmp_path: Path) -> None:
    """A ping is the page's own keep-alive (table.js, after 15 s of silence): a device that
    spent its rate on taps still gets its pong (a socket answered 429 read as alive,
    but a page that heard nothing would have given it up), and pings spend none of the
    rate its taps may use."""
    settings = Settings(data_dir=tmp_path, device_burst=3, device_rate_per_s=0.01)
    app = create_app(settings)
    with TestClient(app) as host:
        tid = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        with host.websocket_connect(f"/t/{tid}/ws?view=table") as ws:
            assert ws.receive_json()["state_id"] == 0
            for _ in range(6):  # twice the burst
                ws.send_json({"type": "ping"})
                assert ws.receive_json() == {"type": "pong"}
            for n in range(3):  # the whole burst is still there for the device's messages
                ws.send_json({"type": "undo", "action_id": f"host-undo-{n}"})
                assert ws.receive_json()["status"] != 429
            ws.send_json({"type": "undo", "action_id": "host-undo-9"})
            assert ws.receive_json()["rule"] == "device_rate"
            ws.send_json({"type": "ping"})  # the rate spent: the keep-alive still answered
            assert ws.receive_json() == {"type": "pong"}


def test_a_flood_of_pings_is_bounded(tmp_path: Path) -> None:
    """Pings have their own small allowance per device; pings past it count against the
    device's rate as any message does, so a flood of them is refused 429 like any flood."""
    settings = Settings(
        data_dir=tmp_path,
        device_burst=3,
        device_rate_per_s=0.01,
        ping_burst=4,
        ping_rate_per_s=0.01,
    )
    app = create_app(settings)
    with TestClient(app) as host:
        tid = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        with host.websocket_connect(f"/t/{tid}/ws?view=table") as ws:
            assert ws.receive_json()["state_id"] == 0
            for _ in range(20):
                ws.send_json({"type": "ping"})
            answers = [ws.receive_json() for _ in range(20)]
        pongs = [a for a in answers if a == {"type": "pong"}]
        refused = [a for a in answers if a.get("rule") == "device_rate"]
        assert (len(pongs), len(refused)) == (4 + 3, 20 - 7), answers
        assert act(host, tid, QWIXX_ROLL_7, "roll-0001").status_code == 429


def test_a_reconnecting_device_gets_the_full_state(qwixx: dict[str, Any]) -> None:
    tid, ann, host = qwixx["table_id"], qwixx["ann"], qwixx["host"]
    with ann.websocket_connect(f"/t/{tid}/ws?view=sheet") as ws:
        assert ws.receive_json()["state_id"] == 0
    act(host, tid, QWIXX_ROLL_7, "roll-0001")  # while Ann's device was away
    with ann.websocket_connect(f"/t/{tid}/ws?view=sheet") as ws:
        message = ws.receive_json()
        assert message["state_id"] == 1 and "White sum" in message["html"]


def test_player_names_are_escaped_on_every_page(app: Any, host: TestClient) -> None:
    table = create_table(host, "qwixx", ["<script>alert(1)</script>", "Bob"], {"players": 2})
    page = host.get(f"/t/{table['table_id']}")
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"game": "qwixx", "options": {"players": ' + b"9" * 5000 + b"}}", "4300 digits"),
        (b'{"game": ' + b"[" * 5000 + b"]" * 5000 + b"}", "RecursionError"),
        (b'{"game": "qwixx", "players": ["\xff\xfe", "b"]}', "UnicodeDecodeError"),
    ],
)
def test_a_body_json_cannot_read_is_refused_naming_the_body(
    host: TestClient, body: bytes, why: str
) -> None:
    """The security trial: these got FastAPI's "400 There was an error parsing the body",
    naming no field."""
    answer = host.post("/api/tables", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    refusal = answer.json()
    assert (refusal["reason"], refusal["rule"]) == ("malformed", "body")
    assert refusal["message"].startswith("body: ") and why in refusal["message"]
    assert host.get("/api/games").status_code == 200  # and the server serves on


def test_a_seat_request_that_changes_nothing_stores_and_redraws_nothing(
    app: Any, qwixx: dict[str, Any]
) -> None:
    """The fourth probe: a table view asking for "no seat" 600 times in 3.4 s made 600
    writes and sent every screen of the table its whole fragment 600 times (the host's
    view: 19.6 M characters). The seat a device has (or none when it has none) is answered
    as before, with nothing stored and no screen redrawn; a change still redraws them."""
    tid, code, host, ann = qwixx["table_id"], qwixx["code"], qwixx["host"], qwixx["ann"]
    viewer = TestClient(app)
    assert viewer.post("/api/join", json={"code": code}).status_code == 200
    table = host.portal.call(app.state.tables.get, tid)  # type: ignore[union-attr]
    store, writes = app.state.store, []
    original = store.bind_seat

    def counted(*args: Any) -> None:
        writes.append(args)
        original(*args)

    store.bind_seat = counted
    screen = host.portal.call(table.subscribe)  # type: ignore[union-attr]
    with ann.websocket_connect(f"/t/{tid}/ws?view=sheet") as ann_ws:
        assert ann_ws.receive_json()["state_id"] == 0
        # Ann's page opening wakes the screens once at the state they have, redrawing
        # nothing: the host's says she is no longer away (Table.seats_away)
        assert screen.queue.get_nowait() == 0
        for client, seat in [(viewer, None), (ann, 0), (host, None)] * 3:
            same = client.post(f"/api/tables/{tid}/seat", json={"seat": seat})
            assert same.status_code == 200 and same.json() == {"seat": seat}, same.text
        assert writes == [] and screen.queue.empty()
        # Ann's socket got nothing since: the next frame she gets is the roll's
        assert act(host, tid, QWIXX_ROLL_7, "roll-0001").status_code == 200
        assert ann_ws.receive_json()["state_id"] == 1
    screen.queue.get_nowait()
    # a seat that changes is stored and redraws every screen
    assert host.post(f"/api/tables/{tid}/seats/1/free").status_code == 200
    wait_until(lambda: not screen.queue.empty(), 30, "the freed seat's redraw")
    screen.queue.get_nowait()
    assert viewer.post(f"/api/tables/{tid}/seat", json={"seat": 1}).status_code == 200
    wait_until(lambda: not screen.queue.empty(), 30, "the taken seat's redraw")
    assert len(writes) == 1 and table.seats_taken() == {0, 1}  # type: ignore[union-attr]


def test_seat_requests_count_against_the_devices_rate(tmp_path: Path) -> None:
    """Seat requests go through the per-device rate limiter as actions do: past its burst
    the API answers 429 device_rate, the seat page says so; another device goes on."""
    settings = Settings(data_dir=tmp_path, device_burst=5, device_rate_per_s=0.01)
    app = create_app(settings)
    with TestClient(app) as host, TestClient(app) as flooder, TestClient(app) as other:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        tid = table["table_id"]
        for client in (flooder, other):
            assert client.post("/api/join", json={"code": table["code"]}).status_code == 200
        answers = [
            flooder.post(f"/api/tables/{tid}/seat", json={"seat": None}).status_code
            for _ in range(8)
        ]
        assert answers[:5] == [200] * 5 and answers[5:] == [429] * 3, answers
        refused = flooder.post(f"/api/tables/{tid}/seat", json={"seat": 0})
        assert refused.status_code == 429 and refused.json()["rule"] == "device_rate"
        assert int(refused.headers["retry-after"]) >= 1
        page = flooder.post(f"/t/{tid}/seat", data={"seat": "0"}, follow_redirects=False)
        assert page.status_code == 429 and "this device sends too fast" in page.text
        assert host.get(f"/api/tables/{tid}/state").json()["viewer"]["seat"] is None
        assert other.post(f"/api/tables/{tid}/seat", json={"seat": 0}).status_code == 200


def test_a_full_table_makes_room_from_its_viewers_and_refuses_only_when_all_are_seated(
    tmp_path: Path,
) -> None:
    """The fourth probe: 2,000 joins with the right code made 2,000 device rows (one per
    join, without end). A table keeps Settings.max_table_devices: one more takes the place
    of the oldest device without a seat (a flood of joins locks no player out), and is
    refused with the rule and what to ask the host only when every device holds a seat or
    is a host's, by the API and the join page; a browser that joins again with its cookie
    keeps its device."""
    app = create_app(Settings(data_dir=tmp_path, max_table_devices=4))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob", "Cy"], {"players": 3})
        tid, code = table["table_id"], table["code"]
        ann, bob, viewer, late, cy = (TestClient(app) for _ in range(5))
        seat_player(ann, code, tid, 0)  # the host's device and three more: four
        seat_player(bob, code, tid, 1)
        assert viewer.post("/api/join", json={"code": code}).status_code == 200
        # one more: the viewer (no seat) makes room; its cookie no longer opens the table
        assert late.post("/api/join", json={"code": code}).status_code == 200
        assert viewer.get(f"/api/tables/{tid}/state").status_code == 401
        assert len(app.state.store.devices(tid)) == 4
        again = ann.post("/api/join", json={"code": code})  # her cookie: her device
        assert again.status_code == 200 and again.json()["seat"] == 0
        seat_player(late, code, tid, 2)  # every device holds a seat or is the host's
        refused = cy.post("/api/join", json={"code": code})
        assert refused.status_code == 403, refused.text
        assert refused.json()["rule"] == "table_full"
        assert "4 devices" in refused.json()["message"]
        assert "ask the host" in refused.json()["message"]
        assert f"tc_{tid}" not in cy.cookies
        page = cy.post("/join", data={"code": code}, follow_redirects=False)
        assert page.status_code == 403 and "ask the host" in page.text
        assert host.post(f"/api/tables/{tid}/seats/1/free").status_code == 200
        assert cy.post("/api/join", json={"code": code}).status_code == 200
        assert len(app.state.store.devices(tid)) == 4


def test_a_sixto_player_undoes_a_mistake_after_another_player_crossed(tmp_path: Path) -> None:
    """The café's trial: in Sixto's crossing step Finn taps purple by mistake, then Gus
    crosses red. Finn's device offered no undo any more (Gus's did) and the host's undo
    would have taken Gus's cross first. Now Finn's device names his own cross, his undo
    takes back only it, every device is pushed the change, and the log, a restart and an
    exported record agree."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table, before = sixto_cross_and_undo(app, host)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as again:  # a restart
        assert again.post("/api/join", json={"code": table["code"]}).status_code == 200
        after = state(again, table["table_id"])
        assert after["state"] == before["state"] and after["state_id"] == 5


def sixto_cross_and_undo(app: Any, host: TestClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trial's turn through the API; the table and its state at the end."""
    table = create_table(host, "sixto", ["Eve", "Finn", "Gus"], {"players": 3})
    tid = table["table_id"]
    finn, gus = TestClient(app), TestClient(app)
    seat_player(finn, table["code"], tid, 1)
    seat_player(gus, table["code"], tid, 2)
    purple, red = int(PROJECT_SHEETS["B"][5][0]), int(PROJECT_SHEETS["C"][0][0])
    dice = {"red": red, "orange": 1, "yellow": 1, "green": 1, "blue": 1, "purple": purple}
    roll = {
        "kind": "roll",
        "player": -1,
        "dice": [{"colour": c, "value": v} for c, v in dice.items()],
    }
    assert act(host, tid, roll, "roll-0001").status_code == 200
    assert act(host, tid, {"kind": "keep", "player": 0}, "eve-keep-1").status_code == 200
    finns = {"kind": "cross", "player": 1, "colour": "purple", "column": 1}
    guss = {"kind": "cross", "player": 2, "colour": "red", "column": 1}
    assert act(finn, tid, finns, "finn-purple").status_code == 200
    crossed = act(gus, tid, guss, "gus-red-9")
    assert crossed.status_code == 200, crossed.text
    sheet = finn.get(f"/t/{tid}/sheet").text
    assert "data-undo>Undo cross purple box 1</button>" in sheet
    with gus.websocket_connect(f"/t/{tid}/ws?view=sheet") as gus_ws:
        assert gus_ws.receive_json()["state_id"] == 4
        undone = finn.post(f"/api/tables/{tid}/undo", json={"action_id": "finn-undo-1"})
        assert undone.status_code == 200 and undone.json()["state_id"] == 5
        assert gus_ws.receive_json()["state_id"] == 5  # pushed to every device
    sheets = state(host, tid)["state"]["state"]["sheets"]
    assert sheets[1]["marks"][5][0] == "." and sheets[2]["marks"][0][0] == "x"
    assert "data-undo>" not in finn.get(f"/t/{tid}/sheet").text  # nothing of his stands
    log = " ".join(host.get(f"/t/{tid}/log").text.split())  # Finn's cross struck through
    assert '<tr class="undone" data-seq="3">' in log and '<tr class="" data-seq="4">' in log
    # the undo row says what it took back: Finn's cross, though Gus crossed after it
    assert "<td>5</td> <td>Finn</td> <td>Undid: Cross purple box 1</td>" in log, log
    record = host.get(f"/api/tables/{tid}/record").json()
    assert [a["move"]["kind"] for a in record["actions"]] == ["roll", "keep", "cross"]
    copy = host.post("/api/import", json=record)
    assert state(host, copy.json()["table_id"])["state"] == state(host, tid)["state"]
    return table, state(host, tid)


def test_a_refused_undo_names_the_player_whose_move_needs_it(tmp_path: Path) -> None:
    """Qwixx: Bob passes the white sum by mistake, Ann (active) crosses it, Cat passes, so
    Ann's colour step begins, and Ann crosses a colour. Bob's undo is refused: without his
    pass the white sum would still be open. The refusal named "player 1", the engine's
    word for Ann's seat: the device reads her name, as every other refusal says it."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob", "Cat"], {"players": 3})
        tid = table["table_id"]
        ann, bob, cat = TestClient(app), TestClient(app), TestClient(app)
        for seat, client in enumerate((ann, bob, cat)):
            seat_player(client, table["code"], tid, seat)
        assert act(host, tid, QWIXX_ROLL_7, "roll-0001").status_code == 200
        moves = [
            (bob, {"kind": "pass", "player": 1}),
            (ann, {"kind": "cross", "player": 0, "colour": "yellow", "number": 7}),
            (cat, {"kind": "pass", "player": 2}),
            (ann, {"kind": "cross", "player": 0, "colour": "red", "number": 5}),
        ]
        for number, (client, move) in enumerate(moves):
            made = act(client, tid, move, f"move-{number:04d}")
            assert made.status_code == 200, made.text
        refused = bob.post(f"/api/tables/{tid}/undo", json={"action_id": "bob-undo-1"})
        assert refused.status_code == 403 and refused.json()["rule"] == "acted_on"
        assert refused.json()["message"] == (
            "Ann's move since needs your last action: once Ann undoes that move, you can "
            "undo yours; the host can undo back to it"
        )
        # Cat hands her phone over to the host's: seated, the host's device undoes as Cat
        assert host.post(f"/api/tables/{tid}/seats/2/free").status_code == 200
        assert host.post(f"/api/tables/{tid}/seat", json={"seat": 2}).status_code == 200
        refused = host.post(f"/api/tables/{tid}/undo", json={"action_id": "host-undo-1"})
        assert refused.status_code == 403 and refused.json()["message"] == (
            "Ann's move since needs your last action: once Ann undoes that move, you can "
            "undo yours; as the host, you can undo back to it from the table view (Seat, "
            "then Just watch)"
        )


def test_the_log_replays_the_state_each_move_met_after_an_undo_past_others() -> None:
    """`replay_log` (the log's words that depend on the state: a Sixis take's side): Bob
    crosses red 7, Ann yellow 7, Bob takes his cross back past Ann's (her cross stands
    without it) and passes: his pass met Ann's cross and no red 7 of his."""
    from companion.rules.qwixx import GAME, Options
    from companion.table.store import LogEntry
    from companion.web.routes.live import replay_log

    def move(seq: int, by: str, body: dict[str, Any]) -> LogEntry:
        return LogEntry(seq, f"a{seq}", "move", by, body)

    log = [
        move(1, "host", QWIXX_ROLL_7),
        move(2, "1", {"kind": "cross", "player": 1, "colour": "red", "number": 7}),
        move(3, "0", {"kind": "cross", "player": 0, "colour": "yellow", "number": 7}),
        LogEntry(4, "a4", "undo", "1", None),
        move(5, "1", {"kind": "pass", "player": 1}),
    ]
    met = replay_log(GAME, Options(players=2), log).met  # type: ignore[arg-type]
    assert sorted(met) == [1, 2, 3, 5]
    bob_passes = met[5]
    assert bob_passes.sheets[1].red == () and bob_passes.sheets[0].yellow == (7,)  # type: ignore[attr-defined]
    assert bob_passes.waiting == (1,)  # type: ignore[attr-defined]


def test_the_log_page_names_a_move_its_replay_refuses_instead_of_failing() -> None:
    """A stored move that no longer decodes, in the log of a table that is open (the log
    page's walk, `replay_log`, as the table's own replay would refuse it): the page's rows
    stop at it and name it. `penalties_met` decoded every move the replay reached outside
    the engine's try, so this log raised Rejection ("bad pass move: move.player: expected
    an integer") and the page failed."""
    from companion.rules.qwixx import GAME, Options
    from companion.table.store import LogEntry
    from companion.web.routes.live import LogTable, log_context, log_window

    log = [
        LogEntry(1, "a1", "move", "camera", QWIXX_ROLL_7),
        LogEntry(2, "a2", "move", "0", {"kind": "pass", "player": "zero"}),
        LogEntry(3, "a3", "move", "1", {"kind": "pass", "player": 1}),
    ]
    about = LogTable("t1", "CODE", GAME, Options(players=2), ("Ann", "Bob"))  # type: ignore[arg-type]
    window = log_window(len(log), None)
    assert window is not None
    context = log_context(about, log, window, set())
    rows: list[dict[str, Any]] = context["rows"]  # type: ignore[assignment]
    assert context["damaged_seq"] == 2 and context["unopenable"] is None
    assert [row["damaged"] for row in rows] == [
        None,
        "bad pass move: move.player: expected an integer",
        None,
    ]
    assert rows[2]["text"] == "{'kind': 'pass', 'player': 1}"  # as stored, past the damage
