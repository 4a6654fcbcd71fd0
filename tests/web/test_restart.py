"""Durability against a real server process: SIGKILL in the middle of a game while two
clients keep sending actions, start again, and every acknowledged action is there, none
twice, and the state equals the replay of the game's record."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx

from companion.rules.registry import find_game
from companion.rules.session import replay_record
from companion.simulate import random_action
from tests.web.conftest import ServerProcess


def next_move(payload: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random legal action for the state the server showed (the engine picks it)."""
    game = find_game(payload["game"])
    state = game.state_from_json(payload["state"])
    return game.move_to_json(random_action(game, state, rng))


def test_sigkill_mid_game_loses_nothing_acknowledged(server: ServerProcess) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=5)
    created = client.post(
        "/api/tables", json={"game": "qwixx", "options": {"players": 3}, "players": ["A", "B", "C"]}
    )
    table_id = created.json()["table_id"]
    cookies = dict(client.cookies)
    acked: dict[str, int] = {}
    sent: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def player(seed: int) -> None:
        rng = random.Random(seed)
        own = httpx.Client(base_url=server.base_url, timeout=5, cookies=cookies)
        n = 0
        while not stop.is_set():
            try:
                payload = own.get(f"/api/tables/{table_id}/state").json()
                if payload["finished"]:
                    return
                move = next_move(payload, rng)
                action_id = f"p{seed}-{n:06d}"
                n += 1
                with lock:
                    sent.append((action_id, move))
                response = own.post(
                    f"/api/tables/{table_id}/actions",
                    json={
                        "action_id": action_id,
                        "move": move,
                        "expected_state_id": payload["state_id"],
                    },
                )
                if response.status_code == 200:
                    with lock:
                        acked[action_id] = response.json()["state_id"]
            except (httpx.HTTPError, ValueError):
                return  # the server is gone

    threads = [threading.Thread(target=player, args=(seed,)) for seed in (1, 2)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acked) < 25 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()  # SIGKILL while requests are in flight
    stop.set()
    for thread in threads:
        thread.join(timeout=10)
    assert len(acked) >= 25, "the game did not get going"

    server.start()
    again = httpx.Client(base_url=server.base_url, timeout=5, cookies=cookies)
    payload = again.get(f"/api/tables/{table_id}/state").json()
    highest_ack = max(acked.values())
    # everything acknowledged is there; beyond it at most the actions in flight (one per
    # client) were committed without their answer arriving
    assert highest_ack <= payload["state_id"] <= highest_ack + len(threads)
    # nothing applied twice: every acknowledged action id is known and is not applied again
    for action_id, state_id in acked.items():
        move = dict(sent)[action_id]
        retry = again.post(
            f"/api/tables/{table_id}/actions", json={"action_id": action_id, "move": move}
        )
        assert retry.json() == {"state_id": state_id, "duplicate": True}
    # the restored state is exactly the replay of the game's record through the engine
    record = again.get(f"/api/tables/{table_id}/record").json()
    replayed = replay_record(record)
    game = find_game("qwixx")
    assert payload["state"] == game.state_to_json(replayed.state)
    assert payload["state_id"] == again.get(f"/api/tables/{table_id}/state").json()["state_id"]
