"""The web server's configuration: one validated pydantic model, built once by the CLI (or a
test) and injected into `create_app`. Nothing here is read at import time (STYLE.md
principle 10)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from companion.assets import web_dir
from companion.table.camera_settings import CameraSettings
from companion.table.data_folder import FOLDER_CHECK_S


class Settings(BaseModel):
    """Everything `companion serve` needs. Every field has a description and bounds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(
        default="127.0.0.1",
        min_length=1,
        max_length=255,
        description="address to listen on when `lan` is off (--local: 127.0.0.1, or --host)",
    )
    port: int = Field(default=8000, ge=1, le=65535, description="TCP port to listen on")
    lan: bool = Field(
        default=True,
        description="listen on every interface (0.0.0.0) so tablets on the network can join "
        "(the default, protected by the join code); off with --local or --host",
    )
    lan_addresses: tuple[str, ...] | None = Field(
        default=None,
        max_length=32,
        description="this machine's addresses on the local network, found by `companion "
        "serve` at start (serve.lan_addresses): the first is the address the table page and "
        "its QR code show; empty when the machine is on no network; None when nobody "
        "looked (Settings built in code: pages show the address the browser used)",
    )
    host_names: tuple[str, ...] = Field(
        default=(),
        max_length=32,
        description="other names tablets reach this server by (a router's DNS name, "
        "name.local): the Host-header check (DNS rebinding, companion.web.hosts) accepts "
        "them besides this server's own addresses (`companion serve --host-name NAME`)",
    )
    data_dir: Path = Field(
        default=Path("companion-data"),
        description="folder for the SQLite game store (created if missing)",
    )
    fine_tune: bool = Field(
        default=False,
        description="fine-tune each camera setup's pip classifier (its last block) on its confirmed "
        "rolls in a background process, adopted only on its fold check's evidence "
        "(companion.vision.adapt_deep_learn; needs torch, the `train` extra): "
        "`companion serve --fine-tune`",
    )
    web_dir: Path = Field(
        default_factory=web_dir,
        description="folder holding templates/ and static/ (the package's web assets: "
        "the repository's web/ in a checkout)",
    )
    camera: CameraSettings = Field(
        # `companion serve` always passes its CameraSettings (no option: the webcam or the
        # demo clip); Settings built in code (tests, embedding) start with no camera, so
        # nothing reads frames or rolls dice unless asked to
        default_factory=lambda: CameraSettings(disabled=True),
        description="roll source: a webcam, a video, a folder, the demo, or none",
    )
    join_attempts: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="wrong join codes a client may try per join_window_s before being slowed",
    )
    join_window_s: float = Field(
        default=60.0, gt=0, le=3600, description="window of the join-code attempt limiter"
    )
    join_attempts_per_hour: int = Field(
        default=30,
        ge=1,
        le=100_000,
        description="wrong join codes a client may try in an hour (a guesser's rate over "
        "time; join_attempts bounds a burst of typos)",
    )
    join_attempts_all_per_hour: int = Field(
        default=100,
        ge=1,
        le=1_000_000,
        description="wrong join codes every client together may try in an hour; beyond it "
        "only a client with no wrong code of its own in the hour may try (one try): many "
        "addresses guessing together are slowed, a player typing a code still joins",
    )
    max_table_devices: int = Field(
        # a real table has a device per player (at most 12) and a few screens (the host's
        # table view, a TV's scoreboard), and a browser that joins again keeps its device
        # (its cookie): only a client joining again and again without its cookie gets near
        # 100 (each join was a device row, and the table kept every one in memory)
        default=100,
        ge=2,
        le=100_000,
        description="devices one table keeps; one more takes the place of the oldest device "
        "without a seat (no host's), and is refused (403 table_full) only when every device "
        "holds a seat or is a host's",
    )
    max_body_bytes: int = Field(
        default=2_000_000,
        ge=1024,
        le=50_000_000,
        description="largest request body accepted (game record imports are the big ones)",
    )
    max_ws_message_bytes: int = Field(
        default=16_384, ge=256, le=1_000_000, description="largest WebSocket message accepted"
    )
    header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="seconds a connection has to send its request's headers (after opening "
        "or after its previous response) before it is closed (companion/web/connections.py)",
    )
    body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="seconds a request has for its whole body once its headers arrived, "
        "before its connection is closed (companion/web/connections.py)",
    )
    max_connections: int = Field(
        default=2048,
        ge=1,
        le=100_000,
        description="connections the whole server holds open at once (one over is closed "
        "at once; below the process's file descriptors, so no set of addresses takes them all)",
    )
    keep_alive_s: int = Field(
        default=5, ge=1, le=600, description="seconds an idle kept-alive connection stays open"
    )
    max_connections_per_client: int = Field(
        default=256,
        ge=1,
        le=100_000,
        description="connections one client address may hold open at once (HTTP and "
        "WebSocket; every browser of the server's own machine shares one)",
    )
    device_rate_per_s: float = Field(
        default=20.0,
        gt=0,
        le=10_000,
        description="actions and WebSocket messages one device may send per second on average",
    )
    device_burst: int = Field(
        default=60, ge=1, le=100_000, description="how many of them it may send at once"
    )
    ping_rate_per_s: float = Field(
        default=1.0,
        gt=0,
        le=10_000,
        description="keep-alive pings one device may send per second on average without "
        "spending its device rate (a page pings after 15 s of silence; past this allowance a "
        "ping counts as any message)",
    )
    ping_burst: int = Field(
        default=10, ge=1, le=100_000, description="how many pings it may send at once"
    )
    table_rate_per_s: float = Field(
        default=0.5,
        gt=0,
        le=10_000,
        description="table creations and record imports one client (address) may make per "
        "second on average",
    )
    table_burst: int = Field(
        default=30, ge=1, le=100_000, description="how many of them it may make at once"
    )
    table_idle_s: float = Field(
        default=600.0,
        gt=0,
        le=86_400,
        description="seconds a table nobody uses or watches stays in memory; it is opened "
        "from the store again on its next use",
    )
    client_tables: int = Field(
        default=8,
        ge=1,
        le=10_000,
        description="stored tables one client address may hold open in memory while no "
        "screen watches them; opening one more lets its least recently used one go",
    )
    open_rate_per_s: float = Field(
        default=0.5,
        gt=0,
        le=10_000,
        description="stored tables (not in memory: each open replays its game) one client "
        "address may open per second on average",
    )
    open_burst: int = Field(
        default=30, ge=1, le=100_000, description="how many of them it may open at once"
    )
    finished_token_s: float = Field(
        default=12 * 3600.0,
        gt=0,
        le=365 * 86_400,
        description="seconds a finished game's device tokens keep working (its final "
        "sheet, an undo of an engine ending); then they and its join code are refused",
    )
    read_rate_per_s: float = Field(
        default=2.0,
        gt=0,
        le=10_000,
        description="long pages (a game's log, its record, the history) each client address "
        "may ask for per second, on average (companion/web/long_pages.py)",
    )
    read_burst: int = Field(
        default=60, ge=1, le=100_000, description="how many of them it may ask for at once"
    )
    max_import_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        le=50_000_000,
        description="largest game record accepted for import (the longest real games' "
        "records are about 300 KB)",
    )
    max_record_actions: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="most actions an imported record may hold (real games: under 1,600)",
    )
    max_imports_waiting: int = Field(
        default=4,
        ge=1,
        le=1000,
        description="imports replayed or queued at once; more are refused (429) until one "
        "is done (they replay one at a time, off the event loop); one client address holds "
        "at most half of them (429 imports_busy_yours), so another still gets in",
    )
    # per address, not per request: 47 legal 8,600-action imports in a minute from one
    # device grew the store 4.7 -> 90 MB (every later start-up reads it); 20,000 actions
    # are a dozen of the longest real games (under 1,600 actions each) an hour
    import_actions_per_hour: int = Field(
        default=20_000,
        ge=1,
        le=10_000_000,
        description="actions one client address may import per hour, over all its records "
        "(429 import_actions past it): enough for any café's real records, not for filling "
        "the store",
    )
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        default="FULL",
        description=(
            "SQLite synchronous mode. In WAL mode both keep every acknowledged action when "
            "the server is killed; FULL (the default) also fsyncs each commit so it survives "
            "a power cut or a disk that fails mid-game, at a few ms per action"
        ),
    )
    secure_cookies: bool = Field(
        default=False, description="mark cookies Secure (only when served over HTTPS)"
    )
    data_folder_check_s: float = Field(
        default=FOLDER_CHECK_S,
        ge=0.0,
        le=3600.0,
        description=(
            "how often (seconds) the server's own start page and history look whether the "
            "data folder can still be written, and warn when it cannot"
        ),
    )

    @property
    def bind_host(self) -> str:
        """The address uvicorn listens on."""
        return "0.0.0.0" if self.lan else self.host

    @property
    def loopback_only(self) -> bool:
        """Whether only this machine can reach the server (--local): no tablet can join."""
        return not self.lan and _is_loopback(self.host)

    @property
    def public_host(self) -> str | None:
        """The address a tablet opens: the first LAN address, or the --host address; None
        when no other device can reach the server (loopback only, or on no network)."""
        if self.lan:
            return self.lan_addresses[0] if self.lan_addresses else None
        return None if self.loopback_only else self.host

    @property
    def public_url(self) -> str | None:
        """`http://<public_host>:<port>`, or None (see `public_host`)."""
        host = self.public_host
        if host is None:
            return None
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    @property
    def served_hosts(self) -> frozenset[str]:
        """Every address this server answers on, as a browser writes it in the Host header
        (without the port; IPv6 in brackets): the loopback names, the LAN addresses when
        listening on every interface, and the --host address. The Host-header check
        (DNS rebinding) must let these through."""
        names = {"127.0.0.1", "localhost", "[::1]"}
        listened = (*(self.lan_addresses or ()),) if self.lan else (self.host,)
        names.update(f"[{a}]" if ":" in a else a for a in listened)
        return frozenset(names)

    @property
    def database_path(self) -> Path:
        return self.data_dir / "companion.sqlite3"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: assume it names an interface other devices reach
        return False
