"""Storage trouble under the real server process: a full disk while a game runs, a
read-only store, and a damaged (corrupt) database file.

How each fault is made (all real, no mock):
- disk full: the data folder is a 1 MiB tmpfs filled up with a file until the OS answers
  ENOSPC. Where mounting is not permitted (not root), the server's file size limit is
  lowered instead (`prlimit RLIMIT_FSIZE`), so its writes fail with EFBIG.
- read-only: the data folder is bind-mounted read-only (not root: its permissions are
  taken away) before the server starts.
- corrupt: bytes of the stopped server's SQLite file are overwritten: its header, or the
  first page of the action log.

What must hold: the server says so clearly (503 naming the problem for requests, a
start-up message naming it when it cannot start), refuses new actions instead of
pretending, leaves the file as it was, and loses nothing acknowledged before."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from companion.rules.registry import find_game
from companion.simulate import random_action
from tests.web.conftest import ServerProcess, free_port

STORE = "companion.sqlite3"


def mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def small_filesystem(path: Path) -> Iterator[bool]:
    """`path` as a 1 MiB tmpfs when mounting is permitted (yields True), else a plain
    folder (False)."""
    path.mkdir(parents=True)
    mounted = mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path))
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def new_server(data_dir: Path, log_dir: Path) -> ServerProcess:
    server = ServerProcess(data_dir, free_port())
    server.log_path = log_dir / "server.log"  # the log never lives on the faulty disk
    return server


def play(client: httpx.Client, table_id: str, count: int, prefix: str) -> dict[str, int]:
    """`count` random legal actions from the host's device; action id -> state id."""
    game = find_game("qwixx")
    rng = random.Random(prefix)
    acked: dict[str, int] = {}
    for n in range(count):
        payload = client.get(f"/api/tables/{table_id}/state").json()
        move = random_action(game, game.state_from_json(payload["state"]), rng)
        action_id = f"{prefix}-{n:05d}"
        answer = client.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": action_id, "move": game.move_to_json(move)},
        )
        assert answer.status_code == 200, answer.text
        acked[action_id] = answer.json()["state_id"]
    return acked


def next_action(client: httpx.Client, table_id: str, action_id: str) -> dict[str, Any]:
    game = find_game("qwixx")
    payload = client.get(f"/api/tables/{table_id}/state").json()
    move = random_action(game, game.state_from_json(payload["state"]), random.Random(1))
    return {"action_id": action_id, "move": game.move_to_json(move)}


def stored_ids(data_dir: Path) -> dict[str, int]:
    db = sqlite3.connect(f"file:{data_dir / STORE}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT action_id, seq FROM actions").fetchall())
    finally:
        db.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def new_table(client: httpx.Client) -> str:
    created = client.post(
        "/api/tables", json={"game": "qwixx", "options": {"players": 3}, "players": ["A", "B", "C"]}
    )
    assert created.status_code == 201, created.text
    return str(created.json()["table_id"])


def test_disk_full_refuses_actions_with_503_and_keeps_everything(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "disk") as mounted:
        data = tmp_path / "disk" / "data"
        server = new_server(data, tmp_path)
        server.start()
        client = httpx.Client(base_url=server.base_url, timeout=5)
        try:
            table_id = new_table(client)
            acked = play(client, table_id, 30, "before")
            before = client.get(f"/api/tables/{table_id}/state").json()
            filler = tmp_path / "disk" / "filler"
            if mounted:  # fill the tmpfs to the last block
                with contextlib.suppress(OSError), filler.open("wb") as out:
                    while True:
                        out.write(b"\0" * 65536)
                        out.flush()
            else:  # no mount here: the server process may not grow any file
                assert server.process is not None
                size = sum(p.stat().st_size for p in data.iterdir())
                resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (size, size))

            # a dozen actions: each refused with 503 naming the full disk, none applied
            expected_rule = "disk_full" if mounted else "io"
            for n in range(12):
                body = next_action(client, table_id, f"refused-{n:04d}")
                answer = client.post(f"/api/tables/{table_id}/actions", json=body)
                assert answer.status_code == 503, answer.text
                refusal = answer.json()
                assert refusal["reason"] == "storage" and refusal["rule"] == expected_rule
                assert STORE in refusal["message"] and "refused" in refusal["message"]
                if mounted:
                    assert "disk is full" in refusal["message"]
            after = client.get(f"/api/tables/{table_id}/state").json()
            assert after["state_id"] == before["state_id"]
            assert after["state"] == before["state"]
            # a new table cannot be stored either: refused the same way, not pretended
            created = client.post("/api/tables", json={"game": "qwixx", "options": {}})
            assert created.status_code == 503 and created.json()["reason"] == "storage"

            # over the WebSocket: an error frame with 503, and the socket stays usable
            url = server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws?view=table"
            cookie = f"tc_{table_id}={client.cookies.get(f'tc_{table_id}')}"
            with connect(url, additional_headers={"Cookie": cookie}, open_timeout=5) as ws:
                first = json.loads(ws.recv(timeout=5))
                assert first["state_id"] == before["state_id"]
                body = next_action(client, table_id, "refused-ws01")
                ws.send(json.dumps({"type": "act", **body}))
                frame = json.loads(ws.recv(timeout=5))
                assert frame["type"] == "error" and frame["status"] == 503, frame
                assert frame["rule"] == expected_rule
                ws.send(json.dumps({"type": "sync"}))
                assert json.loads(ws.recv(timeout=5))["state_id"] == before["state_id"]

            # room again: the game goes on from where it was
            if mounted:
                filler.unlink()
            else:
                assert server.process is not None
                unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
                resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, unlimited)
            acked |= play(client, table_id, 5, "after")
            # the log said it once (a line per refused request hid everything else), naming
            # the file, and that it is over
            log = server.log_path.read_text()
            trouble = [line for line in log.splitlines() if "game store trouble" in line]
            assert len(trouble) == 1 and str(data / STORE) in trouble[0], trouble
            assert f"game store {data / STORE} works again" in log
            assert "could not store action" not in log
            server.kill()
            stored = stored_ids(data)
            assert {a: stored.get(a) for a in acked} == acked  # every acknowledged action
            assert not [a for a in stored if a.startswith("refused")]  # no refused one
            server.start()
            state = client.get(f"/api/tables/{table_id}/state").json()
            assert state["state_id"] == max(acked.values())
        finally:
            client.close()
            server.stop()


def make_read_only(path: Path) -> Iterator[None]:
    if mount("--bind", str(path), str(path)):
        try:
            assert mount("-o", "remount,bind,ro", str(path))
            yield
        finally:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
    else:  # not root: permissions stop the writes
        os.chmod(path / STORE, 0o444)
        os.chmod(path, 0o555)
        try:
            yield
        finally:
            os.chmod(path, 0o755)
            os.chmod(path / STORE, 0o644)


@pytest.fixture
def stopped_game(
    tmp_path: Path,
) -> Iterator[tuple[ServerProcess, str, dict[str, int], dict[str, str]]]:
    """A server that stored a game and was stopped: (server, table id, acked, cookies)."""
    server = new_server(tmp_path / "data", tmp_path)
    server.start()
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        table_id = new_table(client)
        acked = play(client, table_id, 25, "kept")
        cookies = dict(client.cookies)
    server.stop()
    try:
        yield server, table_id, acked, cookies
    finally:
        server.stop()


def refuses_to_start(server: ServerProcess) -> str:
    """Start the server, expect it to exit by itself; its log."""
    with pytest.raises(RuntimeError, match="server exited"):
        server.start()
    assert server.process is not None and server.process.returncode == 3
    return server.log_path.read_text()


def test_read_only_store_is_named_and_left_alone(stopped_game: Any) -> None:
    server, table_id, acked, cookies = stopped_game
    store = server.data_dir / STORE
    before = digest(store)
    with contextlib.contextmanager(make_read_only)(server.data_dir):
        log = refuses_to_start(server)
        # said in one line before any store opens: the folder, and what to do
        assert f"the data folder {server.data_dir} cannot be written" in log
        assert "--data-dir FOLDER" in log and "Traceback" not in log
    assert digest(store) == before
    server.start()  # writable again: everything is there
    state = httpx.get(f"{server.base_url}/api/tables/{table_id}/state", cookies=cookies).json()
    assert state["state_id"] == max(acked.values())


def test_corrupt_header_is_named_and_the_file_is_not_touched(stopped_game: Any) -> None:
    server, _, _, _ = stopped_game
    store = server.data_dir / STORE
    with store.open("r+b") as raw:
        raw.write(b"this is not SQLite!" * 5)
    before = digest(store)
    log = refuses_to_start(server)
    assert "is damaged (corrupt)" in log and "not a database" in log
    assert digest(store) == before


def test_corrupt_action_log_answers_503_and_refuses_actions(stopped_game: Any) -> None:
    server, table_id, acked, cookies = stopped_game
    store = server.data_dir / STORE
    db = sqlite3.connect(store)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    roots = [
        r[0] for r in db.execute("SELECT rootpage FROM sqlite_master WHERE tbl_name='actions'")
    ]
    db.close()
    with store.open("r+b") as raw:
        for root in roots:  # the log's table and its indexes: their first pages
            raw.seek((root - 1) * page_size)
            raw.write(random.Random(root).randbytes(page_size))
    before = digest(store)
    server.start()  # the header and the schema are fine: it starts
    client = httpx.Client(base_url=server.base_url, timeout=5, cookies=cookies)
    state = client.get(f"/api/tables/{table_id}/state")
    assert state.status_code == 503, state.text
    assert state.json()["rule"] == "corrupt" and "damaged" in state.json()["message"]
    move = {"kind": "pass", "player": 0}
    answer = client.post(
        f"/api/tables/{table_id}/actions", json={"action_id": "after-corrupt", "move": move}
    )
    assert answer.status_code == 503 and answer.json()["reason"] == "storage"
    assert client.get("/").status_code == 200  # the rest of the server still answers
    server.stop()
    assert digest(store) == before
    assert len(acked) == 25


class FailingDisk:
    """A real ext4 file system on a loop device (errors=remount-ro), mounted at `path`;
    `go_read_only()` makes the kernel take it read-only at once, as it does when the disk
    (an SD card, a USB stick) fails under a running server: the server's open files stay
    open and their next write fails. A bind mount or chmod cannot do that mid-game: a
    mount with files open for writing refuses to turn read-only (EBUSY), and root ignores
    permissions."""

    def __init__(self, path: Path, image: Path) -> None:
        self.path, self.image = path, image

    def mount(self) -> bool:
        self.path.mkdir(parents=True, exist_ok=True)
        return mount("-o", "loop,errors=remount-ro", str(self.image), str(self.path))

    def trigger(self) -> Path:
        """The kernel's switch that reports an ext4 error on this file system."""
        source = subprocess.run(
            ["findmnt", "-no", "SOURCE", str(self.path)], capture_output=True, text=True
        ).stdout.strip()
        return Path("/sys/fs/ext4") / Path(source).name / "trigger_fs_error"

    def go_read_only(self) -> None:
        self.trigger().write_text("test: the data folder's disk failed mid-game\n")
        options = subprocess.run(
            ["findmnt", "-no", "OPTIONS", str(self.path)], capture_output=True, text=True
        ).stdout
        assert "ro" in options.split(",") or "emergency_ro" in options, options

    def unmount(self) -> None:
        subprocess.run(["umount", str(self.path)], capture_output=True)


@contextlib.contextmanager
def failing_disk(tmp_path: Path) -> Iterator[FailingDisk]:
    """A FailingDisk, or the test is skipped where loop mounts are not permitted."""
    if not all(shutil.which(tool) for tool in ("mkfs.ext4", "e2fsck", "findmnt")):
        pytest.skip("no e2fsprogs or util-linux here")
    image = tmp_path / "disk.img"
    with image.open("wb") as out:
        out.truncate(32 * 1024 * 1024)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True)
    disk = FailingDisk(tmp_path / "disk", image)
    if made.returncode != 0 or not disk.mount():
        pytest.skip("no loop-mounted ext4 here (needs root and loop devices)")
    try:
        if not os.access(disk.trigger(), os.W_OK):
            pytest.skip("the kernel's ext4 error switch cannot be written here")
        yield disk
    finally:
        disk.unmount()


def test_a_disk_gone_read_only_mid_game_refuses_each_cross_and_loses_no_accepted_one(
    tmp_path: Path,
) -> None:
    """A café owner's trial: the data folder's disk turns read-only in the middle of a game
    (only a store read-only at start was tried). Each action after it is refused (503
    storage, naming the store), none applied, none stored; the server goes on answering.
    With the default `--sqlite-synchronous FULL` every action acknowledged before it is on
    the disk once the disk is checked and mounted again. (With NORMAL, the default before,
    it is not: the kernel drops what it had not yet written back, here all 30 acknowledged
    actions, as a power cut would: docs/RELIABILITY.md.)"""
    with failing_disk(tmp_path) as disk:
        data = disk.path / "data"
        server = new_server(data, tmp_path)
        server.reach_args = ["--local"]  # the default durability, as a café runs it
        server.start()
        client = httpx.Client(base_url=server.base_url, timeout=5)
        try:
            table_id = new_table(client)
            acked = play(client, table_id, 30, "before")
            before = client.get(f"/api/tables/{table_id}/state").json()
            disk.go_read_only()
            for n in range(5):
                body = next_action(client, table_id, f"refused-{n:04d}")
                answer = client.post(f"/api/tables/{table_id}/actions", json=body)
                assert answer.status_code == 503, answer.text
                refusal = answer.json()
                # the kernel's emergency read-only answers EIO (io) or EROFS (read_only)
                assert refusal["reason"] == "storage" and refusal["rule"] in ("io", "read_only")
                assert STORE in refusal["message"] and "refused" in refusal["message"]
            after = client.get(f"/api/tables/{table_id}/state").json()
            assert after["state_id"] == before["state_id"] and after["state"] == before["state"]
            assert client.get("/").status_code == 200
            server.kill()
        finally:
            client.close()
            server.stop()
        disk.unmount()
        checked = subprocess.run(["e2fsck", "-fy", str(disk.image)], capture_output=True)
        assert checked.returncode in (0, 1), checked.stdout  # 1: errors found and fixed
        assert disk.mount()
        stored = stored_ids(data)
        assert {a: stored.get(a) for a in acked} == acked  # every acknowledged action
        assert not [a for a in stored if a.startswith("refused")]  # no refused one
