"""Log page benchmark: a running Qwixx game of --entries log entries, its log page from the
server's own machine through FastAPI's TestClient. Printed: the first request (the table
opened, its log replayed, and the page built: the log replayed again to find the state each
move met and what it cost), a kept page's median, the median of --builds builds of the
page with nothing kept (as after each new action: a new state), and the page's replay
alone (`replay_log`; before 2026-12-07 20:30 `states_met` + `penalties_met`) on the whole
log. CPU time of the process (all its threads), which the machine's other jobs move less
than the wall clock; the first request in wall time too. The page opens on the newest
entries (live.LOG_PAGE_ENTRIES of them, since 2026-12-07 23:30; the whole log before): its
bytes, and the build and bytes of the page of the oldest 200 (`?to=200`; an older checkout
ignores `to` and keeps the one page it drew).

Two logs (--shape): `redo` as bench/abuse.py's long game (each move of a recorded game taken
back by the host and made again); `passes`: a 4-player game where every active player's pass
(-5 penalty) is taken back by that player after the three others acted, and made again, so
each undo plays three actions again and each pass names its penalty.

    PYTHONPATH=$PWD .venv/bin/python bench/log_page.py [--entries 10000] [--shape redo|passes]
                                                       [--builds 5]

PYTHONPATH picks the code measured (another checkout's folder for a before figure).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Literal

from fastapi.testclient import TestClient

from companion.rules.base import Move, Roll
from companion.rules.codec import encode
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.simulate import play_random_game, random_roll
from companion.table.access import hash_token
from companion.table.store import LogEntry, Store
from companion.web.app import create_app
from companion.web.long_pages import PageCache
from companion.web.routes import live
from companion.web.settings import Settings

TABLE, TOKEN = "benchlog", "bench-log-token"


def recorded_game(players: int, seed: int) -> Session:
    """A random complete Qwixx game, as its devices would have sent it."""
    game = find_game("qwixx")
    session = Session(game, game.options_for(players))

    def keep(_before: object, move: Move, _after: object) -> None:
        session.act(move, by="camera" if isinstance(move, Roll) else str(move.player))

    play_random_game(game, game.options_for(players), random.Random(seed), 20_000, keep)
    return session


def redo_log(session: Session, entries: int) -> list[LogEntry]:
    """Each move but the last taken back by the host and made again, to `entries`."""
    moves = [(a.by, session.game.move_to_json(a.move)) for a in session.actions[:-1]]
    repeats = max(0, (entries - len(moves)) // (2 * len(moves)))
    log: list[LogEntry] = []
    for index, (by, move) in enumerate(moves):
        for again in range(repeats + 1):
            if again:
                log.append(LogEntry(len(log) + 1, f"u{index}-{again}", "undo", "host", None))
            log.append(LogEntry(len(log) + 1, f"m{index}-{again}", "move", by, move))
    return log


def passes_log(entries: int, seed: int = 7) -> list[LogEntry]:
    """A 4-player game played by a session where nobody crosses: in each white-sum step the
    active player passes first and takes it back once the three others passed (three
    actions played again), then passes again; their colour step's pass (-5 penalty) is
    taken back and made again, entries / 26 times (the game ends at the 13th turn's, the
    fourth penalty of one player)."""
    game = find_game("qwixx")
    session = Session(game, game.options_for(4))
    rng = random.Random(seed)
    log: list[LogEntry] = []

    def add(kind: Literal["move", "undo"], by: str, move: Move | None) -> None:
        body = game.move_to_json(move) if move is not None else None
        log.append(LogEntry(len(log) + 1, f"a{len(log) + 1}", kind, by, body))

    def passes(seats: list[int], takes: int) -> None:
        """`seats` pass; the first takes theirs back and passes again, `takes` times."""
        for take in range(takes + 1):
            for seat in seats if not take else seats[:1]:
                move = next(m for m in session.legal_moves(seat) if m.kind == "pass")
                session.act(move, by=str(seat))
                add("move", str(seat), move)
            if take < takes:
                session.undo(by=str(seats[0]))
                add("undo", str(seats[0]), None)

    while len(log) < entries and session.outcome() is None:
        roll = random_roll(session.turn(), rng)
        session.act(roll, by="camera")
        add("move", "camera", roll)
        active = session.turn().active
        assert active is not None
        passes([active, *(s for s in range(4) if s != active)], 1)
        if session.turn().players == (active,):  # the colour step: a penalty pass
            passes([active], entries // 26)
    return log


def store_game(data_dir: Path, shape: str, entries: int) -> None:
    store = Store.open(data_dir / "companion.sqlite3")
    session = recorded_game(4, 99)
    log = redo_log(session, entries) if shape == "redo" else passes_log(entries)
    options = encode(session.options)
    store.create_table(TABLE, "BLOG01", "qwixx", options, session.players, log)
    store.add_device(hash_token(TOKEN), TABLE, True, None)
    store.close()
    print(f"{shape}: {len(log)} log entries", flush=True)


def replay_alone(data_dir: Path) -> float:
    """CPU seconds (median of 5) the log page's replay takes on the stored log (`replay_log`, or the
    `states_met` + `penalties_met` it replaced, in an older checkout)."""
    store = Store.open(data_dir / "companion.sqlite3")
    log = store.log(TABLE)
    store.close()
    game = find_game("qwixx")
    took = []
    for _ in range(5):
        started = time.process_time()
        if hasattr(live, "replay_log"):
            live.replay_log(game, game.options_for(4), log)
        else:  # an older checkout's two walks
            met = live.states_met(game, game.options_for(4), log)  # type: ignore[attr-defined]
            live.penalties_met(game, log, met)  # type: ignore[attr-defined]
        took.append(time.process_time() - started)
    return statistics.median(took)


def timed_get(client: TestClient, path: str, sizes: list[int] | None = None) -> float:
    """CPU seconds of one GET of `path`; its page's bytes go to `sizes`."""
    started = time.process_time()
    answer = client.get(path, headers={"accept": "text/html"})
    assert answer.status_code == 200, answer.text[:300]
    if sizes is not None:
        sizes.append(len(answer.content))
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="log entries stored")
    parser.add_argument("--shape", choices=["redo", "passes"], default="redo")
    parser.add_argument("--builds", type=int, default=5, help="page builds, nothing kept")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_game(Path(tmp), args.shape, args.entries)
        replay = replay_alone(Path(tmp))
        settings = Settings(data_dir=Path(tmp), read_burst=100_000, read_rate_per_s=1000)
        with TestClient(create_app(settings), client=("127.0.0.1", 50000)) as local:
            local.cookies.set(f"tc_{TABLE}", TOKEN)
            path = f"/t/{TABLE}/log"
            sizes: list[int] = []
            wall = time.perf_counter()
            first = timed_get(local, path, sizes)
            wall = time.perf_counter() - wall
            kept = statistics.median(timed_get(local, path) for _ in range(20))
            builds, older = [], []
            for _ in range(args.builds):
                local.app.state.pages.cache = PageCache()  # type: ignore[attr-defined]
                builds.append(timed_get(local, path))
                older.append(timed_get(local, path + "?to=200", sizes))  # the oldest 200
    print(
        f"log page of {args.entries} entries ({args.shape}), CPU: first request"
        f" {1000 * first:.0f} ms ({1000 * wall:.0f} ms wall), kept median"
        f" {1000 * kept:.1f} ms, built median {1000 * statistics.median(builds):.0f} ms"
        f" (?to=200: {1000 * statistics.median(older):.0f} ms);"
        f" the replay alone {1000 * replay:.0f} ms; the page opened {sizes[0]:,} bytes"
        f" (?to=200: {sizes[-1]:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
