"""A real `companion serve` process for the web benchmarks (loopback only)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]


def start_server(data_dir: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """Start `companion serve --no-camera` on 127.0.0.1:`port` and wait until it answers."""
    command = [sys.executable, "-m", "companion.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--no-camera", "--local", *extra]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/icon.svg", timeout=0.5)
            return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")
