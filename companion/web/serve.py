"""`companion serve`: build the Settings from the command line, create the app and run it
under uvicorn; print the address to open and the join codes of the open tables."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import socket
import sys
from pathlib import Path

import uvicorn
from pydantic import ValidationError
from starlette.types import ASGIApp

from companion.rules.base import Rejection
from companion.rules.registry import find_game
from companion.table.camera_settings import CameraSettings
from companion.table.data_folder import data_dir_problem
from companion.table.store import StorageError, Store, TableRow
from companion.table.text import printable
from companion.web.app import create_app
from companion.web.connections import guarded_protocol
from companion.web.settings import Settings

logger = logging.getLogger(__name__)

WILDCARDS = ("0.0.0.0", "::")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The one Settings object from the parsed `serve` arguments (raises ValidationError).
    By default the server listens on every interface so tablets can join; --local keeps it
    on this machine, --host on one address (--lan, once needed for tablets, is the default
    now and accepted so old commands still work)."""
    camera = CameraSettings(
        index=getattr(args, "camera", None),
        video=getattr(args, "video", None),
        images=getattr(args, "images", None),
        hold=getattr(args, "hold", None),
        disabled=bool(getattr(args, "no_camera", False)),
        calibration=getattr(args, "calibration", None),
    )
    host = getattr(args, "host", None)
    local = bool(getattr(args, "local", False))
    if host in WILDCARDS:  # "every interface" said in so many words: the default
        host = None
    lan = not local and host is None
    values: dict[str, object] = {
        "lan": lan,
        "lan_addresses": lan_addresses() if lan else (),
        "port": args.port,
        "host_names": tuple(getattr(args, "host_name", None) or ()),
        "camera": camera,
        "sqlite_synchronous": getattr(args, "sqlite_synchronous", "FULL"),
        "fine_tune": bool(getattr(args, "fine_tune", False)),
    }
    if host is not None:
        values["host"] = host
    if args.data_dir:
        values["data_dir"] = Path(args.data_dir)
    return Settings.model_validate(values)


def settings_problem(exc: ValidationError) -> str:
    """What is wrong with the command line, in its own words: the sentence each check
    raises (pydantic's report adds the whole input and a link, meant for programmers)."""
    said = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        field = ".".join(str(part) for part in error["loc"])
        said.append(message if "--" in message or not field else f"{field}: {message}")
    return "; ".join(said)


def lan_address() -> str | None:
    """This machine's address on the local network: the one its default route leaves by
    (no packet is sent: a UDP socket's `connect` only picks the outgoing interface); None
    when it is on no network."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.254.254.254", 1))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if ipaddress.ip_address(address).is_loopback else address


def lan_addresses() -> tuple[str, ...]:
    """Every IPv4 address of this machine other devices may reach it by, the default
    route's first (the one the table page shows); the others (a second network card, a
    VPN) are served too."""
    found: list[str] = []
    primary = lan_address()
    if primary is not None:
        found.append(primary)
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:  # the machine's own name does not resolve: the primary is enough
        infos = []
    for info in infos:
        address = str(info[4][0])
        if not ipaddress.ip_address(address).is_loopback and address not in found:
            found.append(address)
    return tuple(found)


def reach_lines(settings: Settings) -> list[str]:
    """Who can open the companion, and how to change it: the first lines of the terminal."""
    local = f"http://127.0.0.1:{settings.port}/"
    url = settings.public_url
    if url is not None:
        also = f" (on this machine also {local})" if settings.lan else ""
        return [
            f"Table Companion: open {url}/{also}",
            f"Tablets and phones on the same network join at {url}/join with the table's code",
        ]
    if settings.lan:
        return [
            f"Table Companion: open {local} on this machine",
            "This machine is on no network, so no tablet can join: connect it to the Wi-Fi "
            "the tablets use and start again.",
        ]
    return [
        f"Table Companion: open {local} on this machine",
        "Only this machine can connect (--local); start without --local so tablets can join.",
    ]


STARTUP_TABLES_SHOWN = 10  # running tables the terminal names at start-up, newest first


def startup_message(settings: Settings) -> str:
    """What the terminal shows: where to open the companion, and the open tables' codes."""
    lines = reach_lines(settings)
    # a quick look for the open tables: the server's own open says where the store is
    store = Store.open(settings.database_path, settings.sqlite_synchronous, announce=False)
    try:
        # the newest few: a café's store may hold thousands of running tables, and the
        # start page on this machine lists them all
        rows, running = store.newest_tables(False, STARTUP_TABLES_SHOWN)
    finally:
        store.close()
    for row in rows:
        lines.append(f"  {game_words(row)} (join code {row.code}, table {row.table_id})")
    if running > len(rows):
        lines.append(
            f"  and {running - len(rows)} older games in progress (the start page lists them)"
        )
    lines.append(f"Camera source: {settings.camera.source} (manual dice entry always works)")
    return "\n".join(lines)


def game_words(row: TableRow) -> str:
    """A game in progress as the start page names it ("Qwixx: Ann, Bob"); a game this
    server does not know (an older or newer server's) by its stored name."""
    try:
        title = find_game(row.game).title
    except Rejection:
        title = printable(row.game)
    return f"{title}: {printable(', '.join(row.players))}"


def source_problem(camera: CameraSettings) -> str | None:
    """A --video file or --images folder that is not there, said at start (a mistyped
    path), where a webcam that does not open is retried as one unplugged for a moment would
    be. An empty folder is fine: the frames may be written into it later (a replay)."""
    if camera.video is not None and not camera.video.is_file():
        return f"--video {camera.video}: no such file"
    if camera.images is not None and not camera.images.is_dir():
        return f"--images {camera.images}: no such folder"
    return None


def port_taken(settings: Settings) -> str | None:
    """Why the server cannot listen, when another program already does on its port (a
    companion started twice, say): said before the terminal names an address that serves
    that other program. None when the port is free (uvicorn says any other problem)."""
    host = settings.bind_host
    probe = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        probe.bind((host, settings.port))
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            return None
        return (
            f"port {settings.port} is taken: another program listens on it (a companion "
            f"started before?). Open http://127.0.0.1:{settings.port}/ to see what it is, "
            f"stop it, or start on another port: --port {settings.port + 1}"
        )
    finally:
        probe.close()
    return None


SWITCH_INTERVAL_S = 0.001


def run_serve(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except ValidationError as exc:
        print(f"companion serve: {settings_problem(exc)}", file=sys.stderr)
        return 2
    problem = source_problem(settings.camera)
    if problem is not None:
        print(f"companion serve: {problem}", file=sys.stderr)
        return 2
    if settings.camera.calibration is not None:
        from companion.vision.calibration import load_calibration
        from companion.vision.colour import CalibrationError

        try:  # a broken file is refused here, with its problem, not deep in the start-up
            load_calibration(settings.camera.calibration)
        except CalibrationError as exc:
            print(f"companion serve: {exc}", file=sys.stderr)
            return 2
    cannot_start = port_taken(settings) or data_dir_problem(settings.data_dir)
    if cannot_start is not None:
        print(f"companion serve: cannot start: {cannot_start}", file=sys.stderr)
        return 3
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    try:
        message = startup_message(settings)
    except StorageError as exc:
        # refuse to start rather than serve a store that cannot keep actions; the file is
        # left untouched for the owner to restore or move away
        print(f"companion serve: cannot start: {exc.message}", file=sys.stderr)
        return 3
    print(message, flush=True)
    # a worker thread (the replay, the renders, the store's writes) keeps the interpreter
    # until the switch interval runs out each time the event loop lets go of it for a
    # system call: 1 ms instead of 5 ms bounds that wait (issue 25, item 5)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    uvicorn.Server(uvicorn_config(app, settings)).run()
    return 0


# the transport's WebSocket limit is this many times the app's: a message over the app's
# limit reaches the app, which answers it with a 413 frame and keeps the socket (with equal
# limits the transport closed the socket with 1009 first, and the 413 was never sent)
WS_TRANSPORT_FACTOR = 4


def uvicorn_config(app: ASGIApp, settings: Settings) -> uvicorn.Config:
    """How uvicorn serves the app: the h11 protocol with a header deadline and a cap on
    connections per client (companion/web/connections.py), idle keep-alive connections
    closed, the WebSocket limit above the app's own."""
    return uvicorn.Config(
        app,
        host=settings.bind_host,
        port=settings.port,
        http=guarded_protocol(
            settings.header_timeout_s,
            settings.max_connections_per_client,
            settings.body_timeout_s,
            settings.max_connections,
        ),
        timeout_keep_alive=settings.keep_alive_s,
        ws_max_size=settings.max_ws_message_bytes * WS_TRANSPORT_FACTOR,
        log_level="warning",
        proxy_headers=False,
    )
