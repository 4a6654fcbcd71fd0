"""Start-up check benchmark: a store of --games running Qwixx games (each a short log of
--moves entries) and one of --entries log entries (bench/log_page.py's `redo` game), the
server started through FastAPI's TestClient. Printed: how long the background check of the
games in progress (`Tables.check_running`) took to replay them all, in wall time and CPU
time of the process; the start page's median and worst request time on the server's own
machine while the check ran and after it; and how long an open of one sound game waited
while the check was replaying the long log (one replay under the load lock at most).

    PYTHONPATH=$PWD .venv/bin/python bench/startup_check.py [--games 1000] [--entries 10000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from bench.log_page import TABLE, TOKEN, recorded_game, redo_log
from companion.rules.codec import encode
from companion.table.access import hash_token
from companion.table.store import LogEntry, Store
from companion.web.app import create_app
from companion.web.settings import Settings


def store_games(data_dir: Path, games: int, moves: int, entries: int) -> None:
    """`games` short games (the first `moves` moves of one recorded game), then the long one
    (the newest: the check replays it first)."""
    store = Store.open(data_dir / "companion.sqlite3")
    session = recorded_game(4, 99)
    options, players = encode(session.options), session.players
    short = [
        LogEntry(n + 1, f"m{n}", "move", a.by, session.game.move_to_json(a.move))
        for n, a in enumerate(session.actions[:moves])
    ]
    for n in range(games):
        store.create_table(f"g{n:05d}", f"G{n:05d}", "qwixx", options, players, short)
    store.create_table(TABLE, "BLOG01", "qwixx", options, players, redo_log(session, entries))
    store.add_device(hash_token(TOKEN), TABLE, True, None)
    store.close()


def timed(client: TestClient, path: str) -> float:
    started = time.perf_counter()
    assert client.get(path, headers={"accept": "text/html"}).status_code < 500
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="short games in progress")
    parser.add_argument("--moves", type=int, default=30, help="log entries of each")
    parser.add_argument("--entries", type=int, default=10_000, help="the long game's entries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_games(Path(tmp), args.games, args.moves, args.entries)
        settings = Settings(data_dir=Path(tmp), read_burst=100_000, read_rate_per_s=1000)
        cpu, wall = time.process_time(), time.perf_counter()
        with TestClient(create_app(settings), client=("127.0.0.1", 50000)) as local:
            checker = local.app.state.tables._checker  # type: ignore[attr-defined]
            open_wait = timed(local, "/t/g00000/board")  # queued behind the long replay
            during = []
            while not checker.done():
                during.append(timed(local, "/"))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            found = checker.result()
            after = [timed(local, "/") for _ in range(20)]
    print(
        f"{args.games} games of {args.moves} entries + one of {args.entries}: the check took"
        f" {wall:.1f} s wall, {cpu:.1f} s CPU (with the pages below), {found} damaged;"
        f" a sound game's first open {1000 * open_wait:.0f} ms;"
        f" start page during the check: {len(during)} requests, median"
        f" {1000 * statistics.median(during or [0]):.0f} ms, worst"
        f" {1000 * max(during or [0]):.0f} ms; after: median"
        f" {1000 * statistics.median(after):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
