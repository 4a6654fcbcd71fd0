"""FastAPI dependencies: the app's settings, tables, templates and limiter (all created by
`create_app` and kept on `app.state`), and the device looking at a table. Handlers take
them through the Annotated aliases below."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from starlette.requests import HTTPConnection

from companion.rules.base import Reason
from companion.table.access import JoinLimiter, Viewer
from companion.table.tables import OpenRefused, Table, Tables
from companion.table.text import invalid_text, invalid_text_at
from companion.web.errors import refusal, refusal_body, refused, slow_down
from companion.web.fragments import LiveDrawings
from companion.web.hosts import LOOPBACK_NAMES, arrived_at, host_name
from companion.web.long_pages import PageBuilder, check_read_rate
from companion.web.settings import Settings

logger = logging.getLogger(__name__)

COOKIE_PREFIX = "tc_"


def cookie_name(table_id: str) -> str:
    """The cookie that holds a device's token for `table_id` (companion.table.access)."""
    return f"{COOKIE_PREFIX}{table_id}"


def is_same_origin(origin: str | None, host: str | None, scheme: str = "http") -> bool:
    """True when the Origin header is absent (not a browser page) or is exactly this
    server's origin, `scheme://host[:port]` as the request arrived (`scheme`: http, or ws
    for a WebSocket): comparing only host and port let `https://` and a trailing `/` by."""
    if origin is None:
        return True
    if not host:
        return False
    web_scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    return origin.lower() == f"{web_scheme}://{host}".lower()


class TextCheckedRequest(Request):
    """A request whose JSON body holds only valid Unicode (companion/table/text.py)."""

    async def json(self) -> object:
        parsed = await super().json()
        found = invalid_text_at(parsed)
        if found is not None:
            # an HTTPException passes FastAPI's body reader unchanged (anything else there
            # becomes "400 error parsing the body"): 422 naming the field
            raise refused(422, invalid_text(found))
        return parsed


class TextCheckedRoute(APIRoute):
    """Every route of the app: its JSON body is checked for invalid Unicode as it is
    parsed, before validation or the handler sees it (an import's record is checked in
    the import process instead: records.checked_record)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[object, object, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            return await handler(TextCheckedRequest(request.scope, request.receive))

        return checked


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_tables(request: Request) -> Tables:
    tables: Tables = request.app.state.tables
    return tables


def get_templates(request: Request) -> Jinja2Templates:
    templates: Jinja2Templates = request.app.state.templates
    return templates


def get_drawings(request: Request) -> LiveDrawings:
    drawings: LiveDrawings = request.app.state.drawings
    return drawings


def get_limiter(request: Request) -> JoinLimiter:
    limiter: JoinLimiter = request.app.state.limiter
    return limiter


SettingsDep = Annotated[Settings, Depends(get_settings)]
TablesDep = Annotated[Tables, Depends(get_tables)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]
DrawingsDep = Annotated[LiveDrawings, Depends(get_drawings)]
LimiterDep = Annotated[JoinLimiter, Depends(get_limiter)]


def get_pages(request: Request) -> PageBuilder:
    pages: PageBuilder = request.app.state.pages
    return pages


PagesDep = Annotated[PageBuilder, Depends(get_pages)]
ReadRate = Depends(check_read_rate)


class NoAccess(HTTPException):
    """No (valid) device cookie for this table: pages redirect to the join page, the API
    answers 401."""

    def __init__(self, table_id: str, page: bool) -> None:
        body = refusal_body(Reason.NOT_ALLOWED, "join_first", "enter this table's join code first")
        super().__init__(status_code=401, detail=body)
        self.table_id = table_id
        self.page = page


class DeletedGame(HTTPException):
    """A page of a finished game the history deleted, asked by a device that held it: the
    page says so and, where the game played again has a place for it (`viewer`: kept at
    the delete, Tables.kept_place, or taken before by following it), offers it."""

    def __init__(
        self, table_id: str, viewer: Viewer | None, kept: bool, played_again: bool
    ) -> None:
        super().__init__(status_code=410, detail="this game was deleted from the history")
        self.table_id = table_id
        self.viewer = viewer
        self.kept = kept
        self.played_again = played_again


@dataclass(frozen=True, slots=True)
class Access:
    """A table and the device looking at it (with its token, for seat changes)."""

    table: Table
    viewer: Viewer
    token: str


# a table id no table has: the error page says the link may be typed wrong or another
# server's (companion.web.app)
NO_SUCH_TABLE = "no such table"


async def _access(request: Request, table_id: str, tables: Tables, page: bool) -> Access:
    if len(table_id) > 64:
        raise HTTPException(status_code=404, detail=NO_SUCH_TABLE)
    table = await opened(tables, table_id, request)
    token = request.cookies.get(cookie_name(table_id), "")
    if table is None:
        await _refuse_deleted(request, tables, table_id, token, page)
        raise HTTPException(status_code=404, detail=NO_SUCH_TABLE)
    viewer = table.viewer(token)
    if viewer is None:
        raise NoAccess(table_id, page)
    return Access(table, await tables.with_next_place(table, token, viewer), token)


async def _refuse_deleted(
    request: Request, tables: Tables, table_id: str, token: str, page: bool
) -> None:
    """A device that held the finished game the history deleted is told so (410
    `game_deleted`; a screen offline at the delete read "enter the join code again"), its
    page offering the next game where it has a place there (kept, or followed before: that
    device read a bare error page); a device that never held it learns nothing (the 404
    of a table id no table has: docs/RELIABILITY.md)."""
    if not token:
        return
    kept = await tables.kept_place(table_id, token)
    if kept is None and not await tables.deleted_for(table_id, token):
        return
    if not page:
        message = "this game was deleted from the history"
        raise refusal(410, Reason.GAME_OVER, "game_deleted", message)
    if kept is not None:  # deleted, after the host started the next game from it
        raise DeletedGame(table_id, kept[1], kept=True, played_again=True)
    next_id = await tables.next_of_deleted(table_id)
    followed = await followed_to(request, tables, table_id)
    now = followed[2] if followed is not None else None
    raise DeletedGame(table_id, now, kept=False, played_again=next_id is not None)


async def followed_to(
    request: Request, tables: Tables, deleted_id: str
) -> tuple[Table, str, Viewer] | None:
    """Tables.followed_to for this request's client, by the cookies it holds: its open of
    the next game is limited as `opened` limits it (429, rule open_rate)."""
    try:
        return await tables.followed_to(
            deleted_id,
            lambda next_id: request.cookies.get(cookie_name(next_id), ""),
            client=client_key(request),
        )
    except OpenRefused as refused:
        raise too_many_opens(refused) from refused


async def opened(tables: Tables, table_id: str, request: Request) -> Table | None:
    """tables.get for this request's client: its opens of stored tables are limited
    (429, rule open_rate) and count against its share of memory (Tables.client_tables)."""
    try:
        return await tables.get(table_id, client=client_key(request))
    except OpenRefused as refused:
        raise too_many_opens(refused) from refused


def too_many_opens(refused: OpenRefused) -> HTTPException:
    """The 429 (rule open_rate) of a client past its opens of stored tables."""
    return slow_down("open_rate", "stored tables opened", refused.wait_s)


async def page_access(request: Request, table_id: str, tables: TablesDep) -> Access:
    return await _access(request, table_id, tables, page=True)


async def api_access(request: Request, table_id: str, tables: TablesDep) -> Access:
    return await _access(request, table_id, tables, page=False)


PageAccess = Annotated[Access, Depends(page_access)]
ApiAccess = Annotated[Access, Depends(api_access)]


def same_origin(request: Request) -> None:
    """Refuse state-changing requests sent by another site's page."""
    origin, host = request.headers.get("origin"), request.headers.get("host")
    if not is_same_origin(origin, host, request.url.scheme):
        message = "requests from other sites are refused"
        raise refusal(403, Reason.NOT_ALLOWED, "foreign_origin", message)


SameOrigin = Depends(same_origin)


LOOPBACK = ("127.0.0.1", "::1")
# headers a reverse proxy names its client in: a request that carries one came from some
# other device, whatever its peer address (uvicorn runs with proxy_headers=False, so they
# change no address either: a device on the network sending one is refused all the same)
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")


def proxy_signs(request: Request) -> list[str]:
    """What shows that a proxy on this machine passed a loopback request on: a header
    naming its client; a Host naming neither a loopback name nor the address the connection
    reached (a browser here that opened 127.0.0.1 names it; a proxy passing on the Host the
    phone sent, as `proxy_set_header Host $host` does, names the network's); HTTP/1.0,
    which no browser speaks and nginx sends by default (with no header of its own)."""
    signs = [name for name in PROXY_HEADERS if name in request.headers]
    named = host_name(request.headers.get("host", ""))
    if named not in LOOPBACK_NAMES and named != arrived_at(request.scope):
        signs.append(f"Host {named}")
    if request.scope.get("http_version") == "1.0":
        signs.append("HTTP/1.0")
    return signs


def is_local(request: Request) -> bool:
    """Whether the browser runs on the machine running the server (over loopback). A
    request a proxy on this machine passed on (proxy_signs) is not: behind a reverse proxy
    every device's peer is 127.0.0.1, and each would have had the owner's powers (delete a
    game, end one, the camera, calibration). The log says so once."""
    if request.client is None or request.client.host not in LOOPBACK:
        return False
    proxied = proxy_signs(request)
    if proxied and not getattr(request.app.state, "proxy_said", False):
        request.app.state.proxy_said = True
        logger.warning(
            "a request came through a proxy on this machine (%s): it is treated as another "
            "device's, and the server's own screen's powers are refused to it; open the "
            "companion on this machine at its own address (127.0.0.1), not through the "
            "proxy, and see docs/RELIABILITY.md, 'Behind a reverse proxy'",
            ", ".join(proxied),
        )
    return not proxied


def require_local(request: Request, message: str) -> None:
    """Refuse (403, rule local_only) what only the server's own machine may do: pages that
    write the server's files or show a setup by name; `message` says where to go instead."""
    if not is_local(request):
        raise refusal(403, Reason.NOT_ALLOWED, "local_only", message)


def client_key(request: HTTPConnection) -> str:
    """The limiter's key: the client's address (a request's or a WebSocket's)."""
    return request.client.host if request.client else "unknown"
