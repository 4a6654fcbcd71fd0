"""`pip install .` as pipx or a packager does it: a normal (not editable) wheel, installed
into a fresh virtual environment outside the checkout, runs without the repository.

The wheel is built offline from a copy of the source with the test environment's setuptools
(`--no-build-isolation --no-index`) and installed with `--no-deps` into a new venv. Its
dependencies (numpy, onnxruntime, fastapi ...) come from the test environment through a
`.pth` line: a folder added that way is only put on `sys.path` (its own `.pth` files, among
them the editable install of this checkout, are not run), so `companion` can come from the
wheel alone, and the test checks that it does. Every command runs in a folder outside the
checkout: `companion read` on a photo reads the same dice as the checkout does (the models
and the standard dice set's calibration ship inside the package), and `companion serve`
answers its start page, its static files and a table page (the templates ship too).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import httpx
import pytest

from tests.web.conftest import free_port

REPO = Path(__file__).resolve().parents[1]
PHOTO = REPO / "companion" / "live" / "data" / "demo_qwixx" / "frame_0075.jpg"
NOT_SOURCE = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    "test-artifacts", "companion-data", ".hypothesis", ".cache", "tests",
)  # fmt: skip

pytestmark = pytest.mark.slow


def run(command: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the checkout with the wheel of this checkout installed."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = run([*pip, "wheel", str(source), "--no-deps", "--no-build-isolation", "--no-index",
                 "-w", str(root / "dist")], cwd=root)  # fmt: skip
    # a new user's first install printed ~350 lines of setuptools warnings about the data
    # folders; setup.py says they are data, so the build is quiet about them
    assert "absent from the `packages`" not in built.stdout + built.stderr
    (wheel,) = (root / "dist").glob("table_companion-*.whl")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
    python = venv / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                  cwd=root).stdout.strip()  # fmt: skip
    Path(purelib, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        cwd=root)  # fmt: skip
    shutil.rmtree(source)  # nothing may read the copied source from here on
    return venv


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Path) -> None:
    found = run(
        [str(installed / "bin" / "python"), "-c",
         "import companion, companion.assets as a; "
         "print(companion.__file__); print(a.web_dir()); print(a.models_dir()); "
         "print(a.asset_dir('calibration')); print(a.checkout())"],
        cwd=installed.parent,
    ).stdout.split("\n")  # fmt: skip
    package, web, models, calibration, checkout = found[:5]
    site = str(installed)
    assert package.startswith(site) and web.startswith(site) and models.startswith(site)
    assert calibration.startswith(site) and checkout == "None"
    assert (Path(web) / "templates" / "table.html").is_file()
    # the models and their manifests, the finder with its features output (a setup's
    # finder head learns on it), the adaptation checks' no-forgetting samples, and no
    # training code
    shipped = sorted(p.name for p in Path(models).iterdir())
    assert shipped == ["adapt_anchor.csv", "adapt_anchor.png", "adapt_anchor_photos",
                       "dice_finder.json", "dice_finder.onnx", "dice_finder_features.json",
                       "dice_finder_features.onnx", "pip_classifier.json",
                       "pip_classifier.onnx"]  # fmt: skip
    photos = sorted(p.name for p in (Path(models) / "adapt_anchor_photos").iterdir())
    assert "labels.csv" in photos and "NOTICE.txt" in photos and len(photos) == 18


def dice_read(output: str) -> list[tuple[int, str, int | None]]:
    reading = json.loads(output.strip().splitlines()[-1])
    return sorted((d["value"], d["colour"], d["set_index"]) for d in reading["dice"])


def test_companion_read_reads_a_photo_as_the_checkout_does(installed: Path) -> None:
    elsewhere = installed.parent / "reading"
    elsewhere.mkdir()
    command = ["read", str(PHOTO), "--json", "--dice-set", "qwixx"]
    ours = run([str(installed / "bin" / "companion"), *command], cwd=elsewhere)
    checkout = run([sys.executable, "-m", "companion.cli", *command], cwd=REPO)
    assert len(dice_read(ours.stdout)) == 6
    assert dice_read(ours.stdout) == dice_read(checkout.stdout)


def test_companion_serve_answers_its_start_page(installed: Path) -> None:
    elsewhere = installed.parent / "serving"
    elsewhere.mkdir()
    port = free_port()
    server = subprocess.Popen(
        [str(installed / "bin" / "companion"), "serve", "--local", "--port", str(port),
         "--no-camera", "--data-dir", str(elsewhere / "data")],
        cwd=elsewhere, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        page = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                page = httpx.get(base + "/", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert page is not None, f"no answer; server said: {server.stdout and server.stdout.read()}"
        assert page.status_code == 200 and "New game" in page.text
        assert httpx.get(base + "/static/css/companion.css").status_code == 200
        with httpx.Client(base_url=base) as host:
            table = host.post(
                "/api/tables",
                json={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
            ).json()
            sheet = host.get(table["url"])
            assert sheet.status_code == 200 and "Ann" in sheet.text
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert (elsewhere / "data" / "companion.sqlite3").is_file()  # its data went where asked


def test_an_editable_install_prints_only_what_a_person_needs(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`scripts/setup` installs the checkout editable: setuptools' warning about folders
    named like the package (the package is that folder here) stays out of the first start
    (issue 26 item 12)."""
    root = tmp_path_factory.mktemp("editable")
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # into a prefix of its own (the test environment builds it: it has setuptools);
    # --ignore-installed: without it pip first uninstalls the running environment's own
    # install of the package (a developer's editable one), whatever --prefix says
    done = run([*pip, "install", "--no-deps", "--no-build-isolation", "--no-index",
                "--ignore-installed", "--prefix", str(root / "prefix"), "-e", str(source)],
               cwd=root)  # fmt: skip
    said = "\n".join(
        line
        for line in (done.stdout + done.stderr).splitlines()
        if not line.startswith("WARNING: Location")  # this machine's pip index setting
    )
    assert "Editable installation" not in said and "same name as your package" not in said
    assert "absent from the `packages`" not in said
