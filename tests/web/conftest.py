"""Fixtures of the web tests: the app on a temporary data directory with its host's
TestClient (`app`, `host`; a test module needing other settings defines its own `app`), a
real `companion serve` process on a free loopback port with a temporary data directory,
Debian's Chromium driven by Playwright, and screenshots saved into test-artifacts/."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.settings import Settings

START_DEADLINE_S = 90
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return create_app(Settings(data_dir=tmp_path))


@pytest.fixture
def host(app: Any) -> Iterator[TestClient]:
    """The host's device: the client that creates the tables (the app started)."""
    with TestClient(app) as client:
        yield client


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def folder_camera_settings(tmp_path: Path) -> Settings:
    """A server's settings on a free port, its data in tmp_path/data and its camera the image
    files put in tmp_path/camera (made empty here: no frame until a test writes one)."""
    folder = tmp_path / "camera"
    folder.mkdir()
    return Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(images=folder)
    )


class ServerProcess:
    """`companion serve` in a child process; `kill()` sends SIGKILL (a crash), `start()`
    starts it again on the same port and data directory."""

    def __init__(
        self,
        data_dir: Path,
        port: int,
        camera_args: list[str] | None = None,
        reach_args: list[str] | None = None,
    ) -> None:
        self.camera_args = camera_args or ["--no-camera"]  # e.g. ["--images", DIR]
        # tests stay on loopback unless they test the LAN: [] is `companion serve`'s default
        # (every interface, tablets can join)
        self.reach_args = ["--local"] if reach_args is None else reach_args
        self.data_dir = data_dir
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = data_dir / "server.log"

    def start(self) -> None:
        command = [
            sys.executable,
            "-m",
            "companion.cli",
            "serve",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            *self.camera_args,
            *self.reach_args,
        ]
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        # generous: a busy machine (CI, a training run beside the suite) loads the models
        # and the app slowly; a healthy start here takes 1-3 s
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(self.base_url + "/static/icon.svg", timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start within {START_DEADLINE_S} s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None


def shot(page: object, name: str) -> Path:
    """Save a full-page PNG of `page` as test-artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.evaluate("window.scrollTo(0, 0)")  # type: ignore[attr-defined]  # sticky banner: top
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
