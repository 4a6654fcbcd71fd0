"""`companion serve`: build the Settings from the command line, create the app and run it
under uvicorn; print the address to open and the join codes of the open tables."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

import uvicorn
from pydantic import ValidationError

from companion.web.app import create_app
from companion.web.settings import CameraSettings, Settings
from companion.web.store import StorageError, Store

logger = logging.getLogger(__name__)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The one Settings object from the parsed `serve` arguments (raises ValidationError)."""
    camera = CameraSettings(
        index=getattr(args, "camera", None),
        video=getattr(args, "video", None),
        images=getattr(args, "images", None),
        disabled=bool(getattr(args, "no_camera", False)),
        calibration=getattr(args, "calibration", None),
    )
    values: dict[str, object] = {
        "host": args.host,
        "port": args.port,
        "lan": args.lan,
        "camera": camera,
        "sqlite_synchronous": getattr(args, "sqlite_synchronous", "NORMAL"),
    }
    if args.data_dir:
        values["data_dir"] = Path(args.data_dir)
    return Settings.model_validate(values)


def lan_address() -> str:
    """This machine's address on the local network (no packet is sent: a UDP socket's
    `connect` only picks the outgoing interface); 127.0.0.1 when there is none."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.254.254.254", 1))
        address = str(probe.getsockname()[0])
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    return address


def public_url(settings: Settings) -> str:
    host = lan_address() if settings.lan else settings.host
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def startup_message(settings: Settings) -> str:
    """What the terminal shows: where to open the companion, and the open tables' codes."""
    url = public_url(settings)
    if settings.lan:
        lines = [
            f"Table Companion: open {url}/ (on this machine also "
            f"http://127.0.0.1:{settings.port}/)",
            f"Players join at {url}/join",
        ]
    else:
        lines = [
            f"Table Companion: open {url}/ on this machine",
            "Only this machine can connect; start with --lan so tablets can join.",
        ]
    store = Store.open(settings.database_path, settings.sqlite_synchronous)
    try:
        for row in store.tables(finished=False):
            lines.append(f"  {row.game:<7} table {row.table_id}: join code {row.code}")
    finally:
        store.close()
    lines.append(f"Camera source: {settings.camera.source} (manual dice entry always works)")
    return "\n".join(lines)


def run_serve(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except ValidationError as exc:
        print(f"companion serve: {exc}", file=sys.stderr)
        return 2
    if settings.camera.calibration is not None:
        from companion.vision.calibration import load_calibration
        from companion.vision.colour import CalibrationError

        try:  # a broken file is refused here, with its problem, not deep in the start-up
            load_calibration(settings.camera.calibration)
        except CalibrationError as exc:
            print(f"companion serve: {exc}", file=sys.stderr)
            return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    app.state.public_url = public_url(settings)
    try:
        message = startup_message(settings)
    except StorageError as exc:
        # refuse to start rather than serve a store that cannot keep actions; the file is
        # left untouched for the owner to restore or move away
        print(f"companion serve: cannot start: {exc.message}", file=sys.stderr)
        return 3
    print(message, flush=True)
    config = uvicorn.Config(
        app,
        host=settings.bind_host,
        port=settings.port,
        ws_max_size=settings.max_ws_message_bytes,
        log_level="warning",
        proxy_headers=False,
    )
    uvicorn.Server(config).run()
    return 0
