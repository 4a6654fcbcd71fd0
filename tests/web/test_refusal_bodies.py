"""Every 4xx refusal of the web layer has one body, built in one place
(companion/web/errors.py): reason, rule and message in plain words, with an extra field
(retry_after, index) only where a refusal carries one."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.web.errors import slow_down
from companion.web.routes import setups
from tests.web.helpers import QWIXX_ROLL_7, create_table

WEB = Path(__file__).resolve().parents[2] / "companion" / "web"


def test_a_refusal_from_each_module_keeps_its_body(
    app: Any, host: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
    stranger = TestClient(app)
    # companion/web/deps.py
    no_access = stranger.get(f"/api/tables/{table_id}/state")
    assert no_access.status_code == 401 and no_access.json() == {
        "reason": "not_allowed",
        "rule": "join_first",
        "message": "enter this table's join code first",
    }
    foreign = host.post(
        f"/api/tables/{table_id}/end", json={}, headers={"origin": "http://evil.example"}
    )
    assert foreign.status_code == 403 and foreign.json() == {
        "reason": "not_allowed",
        "rule": "foreign_origin",
        "message": "requests from other sites are refused",
    }
    # companion/web/routes/api.py
    unknown = stranger.post("/api/join", json={"code": "ZZZZZ2"})
    assert unknown.status_code == 404 and unknown.json() == {
        "reason": "unknown_code",
        "rule": "join_code",
        "message": "no table has the code 'ZZZZZ2'",
    }
    record = {"schema": 1, "game": "qwixx", "options": {"players": 2}, "players": ["A", "B"]}
    bad_cross = {"kind": "cross", "player": 1, "colour": "red", "number": 12}
    record["actions"] = [{"by": "camera", "move": QWIXX_ROLL_7}, {"by": "1", "move": bad_cross}]
    bad_record = host.post("/api/import", json=record)
    assert bad_record.status_code == 422
    assert list(bad_record.json()) == ["reason", "rule", "message", "index"]
    # companion/web/routes/setups.py: an attached camera that has no calibration
    camera = SimpleNamespace(
        feed=SimpleNamespace(attached_to=lambda table_id: True),
        calibration=None,
        runtime=SimpleNamespace(plays_demo=False),
    )
    monkeypatch.setattr(setups, "camera_of", lambda request: camera)
    no_setup = host.get(f"/api/tables/{table_id}/setup")
    assert no_setup.status_code == 404 and no_setup.json() == {
        "reason": "not_found",
        "rule": "no_setup",
        "message": "the camera has no calibration, so no setup learns: calibrate first",
    }


def test_a_rate_refusal_says_when_to_come_back() -> None:
    """companion/web/errors.py's slow_down: the body and its Retry-After."""
    refused = slow_down("open_rate", "stored tables opened", 1.5)
    assert refused.status_code == 429 and refused.headers == {"Retry-After": "2"}
    assert refused.detail == {
        "reason": "too_many_requests",
        "rule": "open_rate",
        "message": "too many stored tables opened from this device; try again in 2 s",
        "retry_after": 1.5,
    }


def hand_written_refusals() -> list[str]:
    """Where an HTTPException's body is a dict written out at the call site."""
    found = []
    for path in sorted(WEB.rglob("*.py")):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            body = [k.value for k in node.keywords if k.arg == "detail"]
            if node.func.id == "HTTPException" and any(isinstance(b, ast.Dict) for b in body):
                found.append(f"{path.relative_to(WEB)}:{node.lineno}")
    return found


def test_every_refusal_body_is_built_by_errors_py() -> None:
    assert hand_written_refusals() == []
