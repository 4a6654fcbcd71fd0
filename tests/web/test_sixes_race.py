"""A race move (Sixes' pound) carries the state id its screen showed. The engine's Turn
declares the race and that the call goes on after the winning pound (Session.is_current):
a pound drawn anywhere in the call is judged by the rules (the second pounder hears
"someone else pounded first", not "stale view"), and one drawn before a roll or an undo is
refused as stale_state, so a pound that arrives late never lands in the next call's
table-pound. Over HTTP, over the WebSocket, and after a restart (the session's step comes
back from the log). Screens still send `"race": true` (table.js); it changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.web.app import create_app
from companion.web.settings import Settings
from tests.web.helpers import create_table, roll_json, seat_player

NAMES = ["Ann", "Bob", "Cy"]


def pound(client: TestClient, table_id: str, seat: int, action_id: str, drawn_at: int) -> Any:
    """A pound as table.js sends a data-race button: with its state id and race: true."""
    body = {
        "action_id": action_id,
        "expected_state_id": drawn_at,
        "race": True,
        "move": {"kind": "pound", "player": seat},
    }
    return client.post(f"/api/tables/{table_id}/actions", json=body)


def move(client: TestClient, table_id: str, data: dict[str, Any], action_id: str, at: int) -> Any:
    body = {"action_id": action_id, "expected_state_id": at, "move": data}
    return client.post(f"/api/tables/{table_id}/actions", json=body)


def table_state(client: TestClient, table_id: str) -> dict[str, Any]:
    response = client.get(f"/api/tables/{table_id}/state")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def refusal(response: Any) -> tuple[str, str]:
    body = response.json()
    return body["reason"], body["rule"]


@pytest.fixture
def sixes(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A 3-player Sixes table (Ann rolls first) with a device per seat."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        table = create_table(host, "sixes", NAMES, {"players": 3})
        devices = {name: TestClient(app) for name in NAMES}
        for seat, name in enumerate(NAMES):
            seat_player(devices[name], table["code"], table["table_id"], seat)
        yield {**table, "host": host, "data_dir": tmp_path, **devices}


def test_a_pound_drawn_before_a_roll_is_stale_not_a_pound_for_the_next_call(
    sixes: dict[str, Any],
) -> None:
    tid, ann, bob, cy = sixes["table_id"], sixes["Ann"], sixes["Bob"], sixes["Cy"]
    # Bob and Cy both see the call at state 0; Bob's pound arrives first
    first = pound(bob, tid, 1, "bob-pound-01", 0)
    assert first.status_code == 200 and first.json()["state_id"] == 1, first.text
    second = pound(cy, tid, 2, "cy-pound-01", 0)
    assert second.status_code == 409, second.text
    assert refusal(second) == ("illegal_move", "pound_taken")
    assert second.json()["message"].startswith("someone else pounded first")

    # a safe roll: a pound drawn before it is stale (not "wait for the next call")
    assert (
        move(ann, tid, roll_json(("white", 3), ("white", 4)), "ann-roll-01", 1).status_code == 200
    )
    late = pound(cy, tid, 2, "cy-pound-02", 1)
    assert late.status_code == 409 and refusal(late) == ("stale_state", "stale_state"), late.text

    # go_on opens call 2: Cy's pound for call 1 arriving now is still stale, not a pound
    # for call 2
    assert move(ann, tid, {"kind": "go_on", "player": 0}, "ann-go-on-01", 2).status_code == 200
    later = pound(cy, tid, 2, "cy-pound-03", 1)
    assert refusal(later) == ("stale_state", "stale_state"), later.text
    state = table_state(ann, tid)
    assert state["state_id"] == 3
    assert state["state"]["state"]["pounded_by"] is None
    assert state["state"]["state"]["number_up"] == 2

    # the roll ends the turn (Ann rolls the 2 she called): the next roller's table-pound
    # opens at once; Cy's pound drawn for Ann's call 2 is refused, not taken into it
    assert (
        move(ann, tid, roll_json(("white", 2), ("white", 5)), "ann-roll-02", 3).status_code == 200
    )
    ended = table_state(ann, tid)
    assert ended["state"]["state"]["roller"] == 1 and ended["state"]["state"]["step"] == "pound"
    from_old_call = pound(cy, tid, 2, "cy-pound-04", 3)
    assert refusal(from_old_call) == ("stale_state", "stale_state"), from_old_call.text
    assert table_state(ann, tid)["state"]["state"]["pounded_by"] is None
    # drawn at the new call, the same pound is accepted
    fresh = pound(cy, tid, 2, "cy-pound-05", 4)
    assert fresh.status_code == 200 and fresh.json()["state_id"] == 5, fresh.text


def test_a_race_flag_is_validated(sixes: dict[str, Any]) -> None:
    tid, bob = sixes["table_id"], sixes["Bob"]
    url = f"/api/tables/{tid}/actions"
    no_state = {"action_id": "bob-pound-01", "race": True, "move": {"kind": "pound", "player": 1}}
    response = bob.post(url, json=no_state)
    assert response.status_code == 422 and "expected_state_id" in response.text
    not_bool = {**no_state, "expected_state_id": 0, "race": "yes"}
    assert bob.post(url, json=not_bool).status_code == 422
    assert table_state(bob, tid)["state_id"] == 0  # nothing applied


def test_race_moves_over_the_websocket(sixes: dict[str, Any]) -> None:
    tid, ann, bob, cy = sixes["table_id"], sixes["Ann"], sixes["Bob"], sixes["Cy"]
    with (
        bob.websocket_connect(f"/t/{tid}/ws?view=sheet") as bob_ws,
        cy.websocket_connect(f"/t/{tid}/ws?view=sheet") as cy_ws,
    ):
        assert bob_ws.receive_json()["state_id"] == 0
        assert cy_ws.receive_json()["state_id"] == 0
        race = {"type": "act", "race": True, "expected_state_id": 0}
        bob_ws.send_json(
            {**race, "action_id": "bob-pound-01", "move": {"kind": "pound", "player": 1}}
        )
        assert bob_ws.receive_json() == {
            "type": "ack",
            "action_id": "bob-pound-01",
            "state_id": 1,
            "duplicate": False,
        }
        assert cy_ws.receive_json()["state_id"] == 1  # the push of Bob's pound
        cy_ws.send_json(
            {**race, "action_id": "cy-pound-01", "move": {"kind": "pound", "player": 2}}
        )
        lost = cy_ws.receive_json()
        assert lost["type"] == "error" and lost["status"] == 409
        assert (lost["reason"], lost["rule"]) == ("illegal_move", "pound_taken")

        # Ann rolls safe and goes on; Cy's pound drawn at state 1 arrives only now
        assert (
            move(ann, tid, roll_json(("white", 3), ("white", 4)), "ann-roll-01", 1).status_code
            == 200
        )
        assert move(ann, tid, {"kind": "go_on", "player": 0}, "ann-go-on-01", 2).status_code == 200
        while cy_ws.receive_json()["state_id"] != 3:
            pass
        cy_ws.send_json(
            {
                **race,
                "expected_state_id": 1,
                "action_id": "cy-pound-02",
                "move": {"kind": "pound", "player": 2},
            }
        )
        stale = cy_ws.receive_json()
        assert stale["type"] == "error" and stale["reason"] == "stale_state"
        assert cy_ws.receive_json()["state_id"] == 3  # the device is sent the current state
        assert table_state(ann, tid)["state"]["state"]["pounded_by"] is None
        bad = {
            **race,
            "race": 1,
            "action_id": "cy-pound-03",
            "move": {"kind": "pound", "player": 2},
        }
        cy_ws.send_json(bad)
        malformed = cy_ws.receive_json()
        assert malformed["type"] == "error" and malformed["status"] == 422


def test_after_a_restart_the_last_roll_still_bounds_the_race(sixes: dict[str, Any]) -> None:
    tid, ann, bob, cy = sixes["table_id"], sixes["Ann"], sixes["Bob"], sixes["Cy"]
    assert (
        move(ann, tid, roll_json(("white", 3), ("white", 4)), "ann-roll-01", 0).status_code == 200
    )
    assert move(ann, tid, {"kind": "go_on", "player": 0}, "ann-go-on-01", 1).status_code == 200
    assert pound(bob, tid, 1, "bob-pound-01", 2).status_code == 200  # state 3

    # a second server on the same data directory loads the table from its log
    restarted = create_app(Settings(data_dir=sixes["data_dir"]))
    with TestClient(restarted, cookies=cy.cookies) as cy_again:
        # drawn after the last roll (state 1): still the same call, the engine judges it
        same_call = pound(cy_again, tid, 2, "cy-pound-01", 2)
        assert refusal(same_call) == ("illegal_move", "pound_taken"), same_call.text
        # drawn before the last roll: stale
        old_call = pound(cy_again, tid, 2, "cy-pound-02", 0)
        assert refusal(old_call) == ("stale_state", "stale_state"), old_call.text
        assert table_state(cy_again, tid)["state_id"] == 3
