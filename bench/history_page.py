"""History page benchmark: one /history request on a store of --finished finished Qwixx
tables, from the server's own machine (loopback), through FastAPI's TestClient: the first
request (the page built) and the median of 20 more (the page kept), beside a 404's.

    PYTHONPATH=$PWD .venv/bin/python bench/history_page.py [--finished 3000]

PYTHONPATH picks the code measured (another checkout's folder for a before figure).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from companion.table.store import Store
from companion.web.app import create_app
from companion.web.settings import Settings


def store_finished_games(data_dir: Path, count: int) -> None:
    store = Store.open(data_dir / "companion.sqlite3")
    try:
        for n in range(count):
            players = [f"Ann{n}", "Bob"]
            scores = [{"seat": 0, "total": n}, {"seat": 1, "total": 3}]
            summary = {"game": "qwixx", "title": "Qwixx", "players": players, "scores": scores}
            store.create_table(
                f"f{n:05d}", f"F{n:05d}", "qwixx", {"players": 2}, players, (), summary
            )
    finally:
        store.close()


def timed(client: TestClient, path: str, times: int) -> tuple[list[float], int]:
    """Seconds each of `times` GETs of `path` took, and the last answer's size."""
    took, size = [], 0
    for _ in range(times):
        started = time.perf_counter()
        answer = client.get(path)
        took.append(time.perf_counter() - started)
        size = len(answer.content)
    return took, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--finished", type=int, default=3000, help="finished games stored")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_finished_games(Path(tmp), args.finished)
        settings = Settings(data_dir=Path(tmp), read_burst=100_000, read_rate_per_s=1000)
        with TestClient(create_app(settings), client=("127.0.0.1", 50000)) as local:
            (built,), size = timed(local, "/history", 1)
            kept, _ = timed(local, "/history", 20)
            missing, _ = timed(local, "/no-such-page", 20)
    print(
        f"{args.finished} finished games: /history built {1000 * built:.0f} ms"
        f" ({size // 1024} KB), kept median {1000 * statistics.median(kept):.1f} ms;"
        f" a 404 median {1000 * statistics.median(missing):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
