"""Small factories for the web tests: literal rolls, a table through the API, and a
Snapshot of a game after literal moves (for view tests without a server)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from companion.rules.base import Die, Move, Roll
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.table.snapshot import Snapshot


def roll_json(*dice: tuple[str, int]) -> dict[str, Any]:
    """A roll move as a box would send it: roll_json(("white", 3), ("red", 2))."""
    return {
        "kind": "roll",
        "player": -1,
        "dice": [{"colour": colour, "value": value} for colour, value in dice],
    }


QWIXX_ROLL_7 = roll_json(
    ("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)
)
"""White sum 7; red 2 gives 5 or 6, yellow 5 gives 8 or 9, green 6 gives 9 or 10, blue 1
gives 4 or 5."""


def create_table(
    client: TestClient, game: str, players: list[str], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Create a table as its host (the client keeps the host cookie)."""
    response = client.post(
        "/api/tables", json={"game": game, "options": options or {}, "players": players}
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def seat_player(client: TestClient, code: str, table_id: str, seat: int) -> None:
    """Join with the code and take `seat` (the client keeps the device cookie)."""
    assert client.post("/api/join", json={"code": code}).status_code == 200
    response = client.post(f"/api/tables/{table_id}/seat", json={"seat": seat})
    assert response.status_code == 200, response.text


def act(
    client: TestClient,
    table_id: str,
    move: dict[str, Any],
    action_id: str,
    expected_state_id: int | None = None,
) -> Any:
    body: dict[str, Any] = {"action_id": action_id, "move": move}
    if expected_state_id is not None:
        body["expected_state_id"] = expected_state_id
    return client.post(f"/api/tables/{table_id}/actions", json=body)


def snapshot_of(
    game_name: str,
    players: list[str],
    moves: list[Move],
    options: Any | None = None,
) -> Snapshot:
    """The Snapshot a table would publish after `moves` (rolls by the camera)."""
    game = find_game(game_name)
    session = Session(game, options or game.options_for(len(players)), players)
    for move in moves:
        session.act(move)
    return Snapshot(
        state_id=session.state_id,
        game=game,
        state=session.state,
        players=tuple(session.players),
        turn=session.turn(),
        scores=session.scores(),
        outcome=session.outcome(),
        last_by=session.actions[-1].by if session.actions else None,
        ended_by_host=False,
    )


def roll(*dice: tuple[str, int]) -> Roll:
    return Roll(dice=tuple(Die(colour, value) for colour, value in dice))
