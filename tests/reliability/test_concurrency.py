"""Concurrency: a thousand Qwixx white-sum steps in which every player taps at the same
instant, each tap sent twice at once (a double tap / a retry with the same action id), over
real loopback HTTP to the real server.

Each player taps one box and, at the same instant, a second box (a hasty finger), each sent
twice with its action id (a retry). Each tap is either accepted exactly once (its second
copy answers `duplicate`) or refused with a named reason (the engine's: the player has
already acted in this step). Taps drawn on the same step are not stale views of each other
(the engine's Turn.moves_in_step, companion/rules/session.py `is_current`), so one round of taps settles every step. Every
player is accepted exactly once per white-sum step, and the server's state equals the
engine's replay of exactly the accepted taps, in the order of their acknowledged state
ids."""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from companion.rules.registry import find_game
from companion.rules.session import Session
from tests.reliability.conftest import PLAYERS, ThreadServer, random_roll, thread_settings

WHITE_SUM_STEPS = int(os.environ.get("RELIABILITY_WHITE_SUM_STEPS", "200"))
REFUSAL_REASONS = {"stale_state", "not_your_turn", "illegal_move", "game_over"}


class Game:
    """One Qwixx table: the host and five seated devices, and what was accepted."""

    def __init__(self, table_id: str, host: httpx.AsyncClient, seats: list[httpx.AsyncClient]):
        self.table_id = table_id
        self.host = host
        self.seats = seats
        self.accepted: dict[int, tuple[str, dict[str, Any]]] = {}  # state id -> (by, move)
        self.seq = 0

    async def state(self, client: httpx.AsyncClient) -> dict[str, Any]:
        answer = await client.get(f"/api/tables/{self.table_id}/state")
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]

    async def send(
        self, client: httpx.AsyncClient, by: str, move: dict[str, Any], expected: int
    ) -> list[httpx.Response]:
        """Send `move` twice at the same instant with one action id."""
        self.seq += 1
        body = {"action_id": f"{self.table_id}-{self.seq:07d}", "move": move}
        body["expected_state_id"] = expected  # type: ignore[assignment]
        url = f"/api/tables/{self.table_id}/actions"
        answers = list(
            await asyncio.gather(client.post(url, json=body), client.post(url, json=body))
        )
        fresh = [a for a in answers if a.status_code == 200 and not a.json()["duplicate"]]
        for answer in answers:
            assert answer.status_code < 500, answer.text
            if answer.status_code != 200:
                assert answer.json()["reason"] in REFUSAL_REASONS, answer.text
        assert len(fresh) <= 1, "one action id accepted twice"
        if fresh:
            state_id = fresh[0].json()["state_id"]
            assert all(a.json()["state_id"] == state_id for a in answers if a.status_code == 200)
            self.accepted[state_id] = (by, move)
        return answers


async def new_game(
    client_for: Any, host: httpx.AsyncClient, seats: list[httpx.AsyncClient]
) -> Game:
    created = await host.post(
        "/api/tables", json={"game": "qwixx", "options": {"players": 5}, "players": PLAYERS}
    )
    body = created.json()
    for seat, client in enumerate(seats):
        assert (await client.post("/api/join", json={"code": body["code"]})).status_code == 200
        taken = await client.post(f"/api/tables/{body['table_id']}/seat", json={"seat": seat})
        assert taken.status_code == 200
    return Game(body["table_id"], host, seats)


async def white_sum_step(game: Game, rng: random.Random, refusals: Counter[str]) -> int:
    """Every waiting player taps at once: one box, and (a hasty finger) a second box with
    its own action id, each sent twice. Returns how many rounds of taps it took."""
    accepted_now: Counter[int] = Counter()
    qwixx = find_game("qwixx")
    rounds = 0
    while True:
        # one read for the whole table; each seat's choices from the engine (as its page)
        view = await game.state(game.host)
        turn = view["turn"]
        waiting = list(turn["players"]) if turn["step"] == "white_sum" else []
        if not waiting:
            break
        rounds += 1
        state = qwixx.state_from_json(view["state"])
        taps, tappers = [], []
        for seat in waiting:
            choices = qwixx.legal_moves(state, seat)
            for move in rng.sample(choices, min(2, len(choices))):
                taps.append(
                    game.send(
                        game.seats[seat], str(seat), qwixx.move_to_json(move), view["state_id"]
                    )
                )
                tappers.append(seat)
        for seat, answers in zip(tappers, await asyncio.gather(*taps), strict=True):
            for answer in answers:
                if answer.status_code == 200:
                    accepted_now[seat] += not answer.json()["duplicate"]
                else:
                    refusals[answer.json()["reason"]] += 1
    # every player was accepted exactly once in this step
    assert sorted(accepted_now) == list(range(5)) and set(accepted_now.values()) == {1}
    return rounds


async def play(base_url: str) -> tuple[int, Counter[str], list[Game]]:
    rng = random.Random(7)
    refusals: Counter[str] = Counter()
    games: list[Game] = []
    limits = httpx.Limits(max_connections=20)
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as host,
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as s0,
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as s1,
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as s2,
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as s3,
        httpx.AsyncClient(base_url=base_url, timeout=10, limits=limits) as s4,
    ):
        seats = [s0, s1, s2, s3, s4]
        steps = 0
        game = await new_game(None, host, seats)
        games.append(game)
        while steps < WHITE_SUM_STEPS:
            view = await game.state(host)
            turn = view["turn"]
            if view["finished"]:
                game = await new_game(None, host, seats)
                games.append(game)
            elif turn["chance"]:
                answers = await game.send(
                    host, "host", random_roll(turn["dice"], rng), view["state_id"]
                )
                assert any(a.status_code == 200 for a in answers), answers[0].text
            elif turn["step"] == "white_sum":
                rounds = await white_sum_step(game, rng, refusals)
                refusals[f"rounds_{rounds}"] += 1
                steps += 1
            else:  # the colour step: the active player alone
                seat = turn["active"]
                mine = await game.state(seats[seat])
                await game.send(
                    seats[seat], str(seat), rng.choice(mine["legal_moves"]), mine["state_id"]
                )
    return steps, refusals, games


def test_white_sum_steps_with_simultaneous_taps(tmp_path: Path) -> None:
    settings = thread_settings(tmp_path, device_rate_per_s=10_000, device_burst=10_000)
    with ThreadServer(settings) as server:
        steps, refusals, games = asyncio.run(play(server.base_url))
        qwixx = find_game("qwixx")
        with httpx.Client(base_url=server.base_url, timeout=10) as check:
            check.cookies = games[0].host.cookies
            for game in games:
                payload = check.get(f"/api/tables/{game.table_id}/state").json()
                # the state is the one the accepted taps produce, in their acknowledged order
                assert sorted(game.accepted) == list(range(1, payload["state_id"] + 1))
                session = Session(qwixx, qwixx.options_for(5), PLAYERS)
                for state_id in sorted(game.accepted):
                    by, move = game.accepted[state_id]
                    session.act(qwixx.move_from_json(move), by=by)
                assert payload["state"] == qwixx.state_to_json(session.state)
    assert steps == WHITE_SUM_STEPS
    # simultaneous taps of one step are not stale views of each other: one round each
    assert refusals["rounds_1"] == WHITE_SUM_STEPS, refusals
    # the race really happened: every second box was refused by the engine, with a reason
    refused = sum(n for reason, n in refusals.items() if not reason.startswith("rounds_"))
    assert refused >= WHITE_SUM_STEPS
    # (stale_state: the second box arrived after the last player closed the step)
    assert set(refusals) - {"rounds_1"} <= REFUSAL_REASONS - {"game_over"}, refusals
    print(f"steps={steps} games={len(games)} refusals={dict(refusals)}")


def test_only_taps_of_the_same_simultaneous_step_skip_the_stale_check(tmp_path: Path) -> None:
    """The boundaries of `Session.is_current`: a tap drawn earlier in the same white-sum step is
    judged by the engine; one drawn before the roll, or in an earlier step, stays stale."""
    from fastapi.testclient import TestClient

    from companion.web.app import create_app
    from companion.web.settings import Settings
    from tests.web.helpers import QWIXX_ROLL_7, act, create_table

    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        tid = create_table(host, "qwixx", ["A", "B", "C"], {"players": 3})["table_id"]
        assert act(host, tid, QWIXX_ROLL_7, "roll-000001", 0).json()["state_id"] == 1

        def pass_(seat: int, action_id: str, drawn_at: int) -> Any:
            return act(host, tid, {"kind": "pass", "player": seat}, action_id, drawn_at)

        assert pass_(0, "pass-a-0001", 1).json()["state_id"] == 2
        assert pass_(1, "pass-b-0001", 1).json()["state_id"] == 3  # drawn at 1, still current
        stale = pass_(2, "pass-c-0001", 0)  # drawn before the roll
        assert stale.status_code == 409 and stale.json()["reason"] == "stale_state"
        again = pass_(0, "pass-a-0002", 2)  # same step, but A has acted: the engine refuses
        assert again.status_code == 409 and again.json()["reason"] == "not_your_turn"
        assert pass_(2, "pass-c-0002", 1).json()["state_id"] == 4  # closes the step
        # the colour step is a new step: a view of the white-sum step is stale there
        colour = pass_(0, "pass-a-0003", 3)
        assert colour.status_code == 409 and colour.json()["reason"] == "stale_state"
        assert pass_(0, "pass-a-0004", 4).json()["state_id"] == 5
