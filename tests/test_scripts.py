"""scripts/setup, the first step of scripts/start and scripts/test, run in a copy of the
checkout whose .venv is a stand-in that only writes down what pip was asked to do."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def checkout_with_a_venv(tmp_path: Path, stamps: list[str]) -> Path:
    """A copy of scripts/setup and pyproject.toml beside a .venv holding `stamps`, each newer
    than pyproject.toml; its pip appends its arguments to pip.log."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "setup", tmp_path / "scripts" / "setup")
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    os.utime(tmp_path / "pyproject.toml", (1_000_000_000, 1_000_000_000))
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in (("python", "exit 0"), ("pip", f'echo "$*" >> {tmp_path}/pip.log')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    for stamp in stamps:
        (tmp_path / ".venv" / stamp).touch()
    return tmp_path


@pytest.mark.parametrize(
    ("stamps", "arguments", "installs"),
    [
        # scripts/start after scripts/test: the test install holds the package already
        ([".installed[test]"], [], []),
        ([".installed"], [], []),
        ([], [], ["install -q -e ."]),
        # scripts/test after scripts/start still installs the test extras
        ([".installed"], ["--test"], ["install -q -e .[test]"]),
        ([".installed[test]"], ["--test"], []),
    ],
)
def test_setup_installs_only_what_is_missing(
    tmp_path: Path, stamps: list[str], arguments: list[str], installs: list[str]
) -> None:
    checkout = checkout_with_a_venv(tmp_path, stamps)
    if arguments and not Path("/usr/bin/chromium").exists():
        pytest.skip("scripts/setup --test would install Chromium through apt-get")
    subprocess.run([checkout / "scripts" / "setup", *arguments], check=True, timeout=60)
    log = checkout / "pip.log"
    assert (log.read_text().splitlines() if log.exists() else []) == installs
