"""The import process ends with the server (the third probe: `kill -9` of `companion serve`
during an import left the import's worker and multiprocessing's resource tracker running,
about 40 MB, until killed by hand). A real `companion serve` process, real imports, a real
SIGKILL; the processes are found in /proc (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.reliability.test_idle_tables import RECORD
from tests.waiting import wait_until
from tests.web.conftest import REPO, ServerProcess, free_port

GENEROUS_S = 60.0

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command's name: [state, ppid, ...]; None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()


def children_of(parent: int) -> dict[int, str]:
    """The live child processes of `parent`, each with its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if fields is None or fields[0] == "Z" or int(fields[1]) != parent:
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        found[int(entry.name)] = command
    return found


def is_gone(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is None or fields[0] in ("Z", "X")  # a zombie runs nothing


def test_a_server_killed_during_an_import_leaves_no_worker_running(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", free_port())
    server.start()
    left: list[int] = []
    try:
        assert server.process is not None
        server_pid = server.process.pid
        client = httpx.Client(base_url=server.base_url, timeout=GENEROUS_S)
        assert client.post("/api/import", json=RECORD | {"actions": []}).status_code == 201
        workers = wait_until(
            lambda: (
                (found := children_of(server_pid))
                and any("spawn_main" in c for c in found.values())
                and any("resource_tracker" in c for c in found.values())
                and found
            ),
            GENEROUS_S,
            "the import process and the resource tracker",
        )
        left = list(workers)
        # another import on its way as the server dies (it may reach the worker or not:
        # an idle worker and a busy one both waited on their pipe for good before)
        threading.Thread(target=import_once, args=(server.base_url,), daemon=True).start()
        server.kill()
        wait_until(
            lambda: all(is_gone(pid) for pid in workers),
            GENEROUS_S,
            f"the server's workers to end: {workers}",
        )
    finally:
        server.kill()
        for pid in left:  # a failed run leaves nothing behind
            if not is_gone(pid):
                os.kill(pid, signal.SIGKILL)


def import_once(base_url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server dies under it: the point
        httpx.post(f"{base_url}/api/import", json=RECORD | {"actions": []}, timeout=5)


# a middle process starts a watcher (the fallback where prctl is not offered), telling it
# its own pid as the server tells its worker (a parent that dies first is seen at once)
WATCHER = (
    "import sys; from companion.table.worker_life import _watch_parent; "
    "_watch_parent(int(sys.argv[1]))"
)
# ... and then waits for the SIGKILL that ends it (signal.pause: no interval to outlast)
MIDDLE = (
    "import os, signal, subprocess, sys; "
    f"child = subprocess.Popen([sys.executable, '-c', {WATCHER!r}, str(os.getpid())]); "
    "print(child.pid, flush=True); signal.pause()"
)


def test_the_fallback_watcher_ends_its_process_when_the_parent_dies() -> None:
    middle = subprocess.Popen(
        [sys.executable, "-c", MIDDLE],
        cwd=REPO,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert middle.stdout is not None
    watcher = int(middle.stdout.readline())
    try:
        assert not is_gone(watcher)  # it watches a live parent
        middle.kill()
        middle.wait(timeout=GENEROUS_S)
        wait_until(lambda: is_gone(watcher), GENEROUS_S, "the watcher to end with its parent")
    finally:
        middle.kill()
        if not is_gone(watcher):
            os.kill(watcher, signal.SIGKILL)
