"""Fixtures of the reliability tests: the real `companion serve` process of the web tests
(tests/web/conftest.py: free loopback port, temporary data directory, SIGKILL), and a
Qwixx table with its host and five seated player devices, each an httpx client holding
its own device cookie. Every request goes to 127.0.0.1 only."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.web.conftest import free_port

PLAYERS = ["Ann", "Ben", "Cat", "Dan", "Eve"]


@dataclass
class SeatedTable:
    """A table, its join code, and one client per device: `host` (the table view that
    enters the dice) and `seats[i]` bound to seat i."""

    table_id: str
    code: str
    host: httpx.Client
    seats: list[httpx.Client]


def seat_devices(
    base_url: str, host: httpx.Client, seats: list[httpx.Client], game: str = "qwixx"
) -> SeatedTable:
    """Create a table with `host` and bind each of `seats` to its seat through the join
    code, exactly as the pages do."""
    created = host.post(
        "/api/tables",
        json={"game": game, "options": {"players": len(seats)}, "players": PLAYERS[: len(seats)]},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    for seat, client in enumerate(seats):
        assert client.post("/api/join", json={"code": body["code"]}).status_code == 200
        taken = client.post(f"/api/tables/{body['table_id']}/seat", json={"seat": seat})
        assert taken.status_code == 200, taken.text
    return SeatedTable(body["table_id"], body["code"], host, seats)


def random_roll(colours: list[str], rng: object) -> dict[str, object]:
    """A roll of the dice the state expects, with random faces (the chance player)."""
    return {
        "kind": "roll",
        "player": -1,
        "dice": [{"colour": c, "value": rng.randint(1, 6)} for c in colours],  # type: ignore[attr-defined]
    }


class ThreadServer:
    """The real app under real uvicorn on a loopback port, in a thread of this process, for
    tests that need Settings the command line does not offer (e.g. a higher per-device
    rate for a test that taps a thousand times a minute)."""

    def __init__(self, settings: object) -> None:
        import uvicorn

        from companion.web.app import create_app
        from companion.web.serve import uvicorn_config

        self.settings = settings
        self.port = settings.port  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(settings)  # type: ignore[arg-type]
        # the configuration `companion serve` runs (on loopback: Settings default)
        self.server = uvicorn.Server(uvicorn_config(self.app, settings))  # type: ignore[arg-type]
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the in-thread server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def thread_settings(data_dir: Path, **changes: object) -> object:
    """Settings for a ThreadServer on a free port with data in `data_dir`."""
    from companion.table.camera_settings import CameraSettings
    from companion.web.settings import Settings

    values: dict[str, object] = {
        "port": free_port(),
        "data_dir": data_dir,
        "camera": CameraSettings(disabled=True),
        **changes,
    }
    return Settings.model_validate(values)
