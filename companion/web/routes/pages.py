"""The HTML pages: start (pick a game), join (enter a code), seat choice, the table view
(every sheet), a player's own sheet, the live fragment, and the history. Pages render the
same live fragment the WebSocket pushes (render.py)."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from typing import Annotated, Any
from urllib.parse import urlencode

import qrcode  # type: ignore[import-untyped]
import qrcode.image.svg  # type: ignore[import-untyped]
from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from companion.rules.base import Reason, Rejection
from companion.rules.registry import all_games, find_game
from companion.table.access import hash_token
from companion.table.camera_hub import CameraHub
from companion.table.data_folder import FolderWatch
from companion.table.learning import Learning
from companion.table.records import check_players
from companion.table.store import TableRow
from companion.table.tables import Table, TableLoadError, Tables
from companion.table.text import invalid_text_at, printable
from companion.web.deps import (
    COOKIE_PREFIX,
    NO_SUCH_TABLE,
    Access,
    DrawingsDep,
    LimiterDep,
    PageAccess,
    PagesDep,
    ReadRate,
    SameOrigin,
    SettingsDep,
    TablesDep,
    TemplatesDep,
    TextCheckedRoute,
    cookie_name,
    is_local,
)
from companion.web.fragments import live_html
from companion.web.long_pages import render_page
from companion.web.routes.api import (
    carry_kept_place,
    games_catalogue_json,
    join_table,
    next_game_url,
    set_device_cookie,
    too_fast,
)
from companion.web.settings import Settings
from companion.web.views import for_display

logger = logging.getLogger(__name__)
router = APIRouter(route_class=TextCheckedRoute)


def public_url(request: Request) -> str | None:
    """The address tablets open (Settings.public_url: the LAN address by default), or None
    when no other device can reach this server (--local, or the machine is on no network).
    Settings built in code without addresses (tests, embedding) fall back to the address
    this browser used, unless they listen on loopback only."""
    settings: Settings = request.app.state.settings
    if settings.public_url is not None:
        return settings.public_url
    if settings.lan and settings.lan_addresses is None:
        return str(request.base_url).rstrip("/")
    return None


def reach_notice(request: Request) -> dict[str, str] | None:
    """Why tablets cannot join and the fix, for the table page (None: they can)."""
    settings: Settings = request.app.state.settings
    if public_url(request) is not None:
        return None
    if settings.loopback_only:
        return {
            "kind": "local",
            "title": "Tablets cannot join: the companion listens on this computer only",
            "fix": "It was started with --local. Stop it (Ctrl+C) and start it again with "
            "scripts/start (without --local); tablets on the same Wi-Fi can then join.",
        }
    return {
        "kind": "offline",
        "title": "Tablets cannot join: this computer is on no network",
        "fix": "Connect it to the Wi-Fi the tablets use, then stop the companion (Ctrl+C) "
        "and start it again.",
    }


# the light margin round a QR code, in modules: the standard's 4 (ISO/IEC 18004), so a
# phone's camera finds the code's edge on any table
QR_QUIET_ZONE = 4


def qr_svg(text: str) -> Markup:
    """A QR code of `text` as inline SVG (pure-python qrcode; nothing from the internet)."""
    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, border=QR_QUIET_ZONE)
    buffer = io.BytesIO()
    image.save(buffer)
    svg = buffer.getvalue().decode("utf-8")
    svg = re.sub(r"^<\?xml[^>]*>\s*", "", svg)
    svg = re.sub(r'width="[^"]*" height="[^"]*" ', "", svg, count=1)
    return Markup(svg.replace("<svg ", '<svg class="qr" role="img" aria-label="join QR code" ', 1))


# the games in progress the start page lists at once, newest first ("Older games" pages on)
START_PAGE_GAMES = 30
# the finished games the history lists at once, the latest finished first
HISTORY_GAMES = 30
# a browser's table cookies a listing looks at (a browser keeps about 180 per site)
MAX_LISTED_COOKIES = 200
# `older`: how many newer games a listing passes over (its "Older games" link)
Older = Annotated[int, Query(ge=0, le=1_000_000_000)]
OlderField = Annotated[int, Form(ge=0, le=1_000_000_000)]  # the same, sent by a page's form


@router.get("/", response_class=HTMLResponse, dependencies=[ReadRate])
async def start_page(
    request: Request, tables: TablesDep, templates: TemplatesDep, older: Older = 0
) -> Response:
    """Pick a game and its options; the games in progress this browser may open, at most
    START_PAGE_GAMES of them (`older`: how many newer ones to pass over). Each listing read
    every running table's row and drew them all on the event loop (0.77 s a request on a
    store of 3,000 running tables), so it is bounded, and a client address may ask for it
    at the rate of the long pages (ReadRate: 429 read_rate beyond)."""
    rows, total = await visible_games(request, tables, False, older, START_PAGE_GAMES)
    local = is_local(request)
    joined = await joined_among(request, tables, rows) if local else None
    playing = [playing_entry(row, local, tables.damage(row.table_id), joined) for row in rows]
    hosted = await hosted_among(request, tables, playing) if not local else set()
    for entry in playing:  # "Remove it" only where the remove is allowed (remove_broken_table)
        entry["removable"] = local or entry["table_id"] in hosted
    camera: CameraHub = request.app.state.camera
    context = {
        "games_json": games_catalogue_json(),
        "playing": playing,
        "running": listing_pages(older, total, START_PAGE_GAMES),
        "camera_line": await camera_line(request, tables, playing),
        "local": local,  # the server's own screen: its calibration page is a link away
        # the server's own screen hands the camera to a game ("Use the camera here")
        "camera_here": camera.served_table_id if local and camera.enabled else None,
        "camera_buttons": local and camera.enabled,
        "folder_problem": await folder_problem(request) if local else None,
    }
    return templates.TemplateResponse(request, "start.html", context)


async def folder_problem(request: Request) -> str | None:
    """Why the data folder can no longer be written, for the server's own screen (None
    while it can): SQLite writes on through its open files, so nothing else says so
    before the next start refuses the folder (FolderWatch, at most every few seconds)."""
    watch: FolderWatch = request.app.state.folder_watch
    return await watch.problem()


async def joined_among(request: Request, tables: Tables, rows: list[TableRow]) -> set[str]:
    """The ids of `rows` whose table this browser has joined (a valid device token in its
    cookies): one lookup per listed row's cookie, none for a row it holds no cookie for."""
    tokens = table_cookies(request)
    named = [row for row in rows if row.table_id in tokens]
    seen = await asyncio.to_thread(tables.seen_with, named, tokens) if named else []
    return {row.table_id for row in seen}


async def hosted_among(
    request: Request, tables: Tables, playing: list[dict[str, object]]
) -> set[str]:
    """The ids of the listed games that cannot be opened whose host's device this browser
    is (its cookie's token): one lookup per such game, none for a game that opens."""
    tokens = table_cookies(request)
    broken = [str(t["table_id"]) for t in playing if "broken" in t]

    def hosts() -> set[str]:
        devices = {i: tables.store.device(hash_token(tokens[i])) for i in broken if i in tokens}
        return {i for i, d in devices.items() if d is not None and d.table_id == i and d.host}

    return await asyncio.to_thread(hosts) if broken else set()


def listing_pages(skip: int, total: int, per_page: int) -> dict[str, int | None]:
    """A listing's place among its pages (the template _listing.html says it): how many
    games in all, the first one's number, and the `older` of the newer and the older page
    (None: there is none)."""
    return {
        "total": total,
        "first": skip + 1,
        "newer": max(0, skip - per_page) if skip else None,
        "older": skip + per_page if skip + per_page < total else None,
    }


def table_cookies(request: Request) -> dict[str, str]:
    """The device tokens this browser's cookies hold, by table id (at most
    MAX_LISTED_COOKIES of them)."""
    tokens: dict[str, str] = {}
    for name, token in request.cookies.items():
        table_id = name.removeprefix(COOKIE_PREFIX)
        if name.startswith(COOKIE_PREFIX) and token and len(table_id) <= 64:
            tokens[table_id] = token
        if len(tokens) >= MAX_LISTED_COOKIES:
            break
    return tokens


async def visible_games(
    request: Request, tables: Tables, finished: bool, skip: int, limit: int
) -> tuple[list[TableRow], int]:
    """The running (or the finished) games this browser may see, newest first, `skip`
    passed over and at most `limit`, and how many it may see in all: on the machine running
    the server, read by the index (Store.newest_tables); elsewhere, the tables its cookies
    name (Tables.seen_with: a valid device token), never every stored table. Read from the
    store, none opened: one that cannot be opened is listed as the server's own screen
    lists it, saying so once an open has found it."""
    if is_local(request):
        return await asyncio.to_thread(tables.store.newest_tables, finished, limit, skip)
    tokens = table_cookies(request)

    def seen() -> list[TableRow]:
        return tables.seen_with(tables.store.tables_among(list(tokens), finished), tokens)

    rows = await asyncio.to_thread(seen)
    return rows[skip : skip + limit], len(rows)


async def visible_table(request: Request, tables: Tables, table_id: str) -> TableRow | None:
    """The stored table `table_id` when this browser may see it (the rule of
    `visible_games`): one lookup by its id, and one of its cookie's token."""
    token = request.cookies.get(cookie_name(table_id))
    local = is_local(request)

    if not local and not token:
        return None

    def seen() -> TableRow | None:
        row = tables.store.table(table_id)
        if row is None or local or not token:
            return row
        return next(iter(tables.seen_with([row], {table_id: token})), None)

    return await asyncio.to_thread(seen)


async def camera_line(
    request: Request, tables: Tables, playing: list[dict[str, object]]
) -> str | None:
    """The start page's line on the camera, naming the table it serves when this browser
    may see it: among the games listed, or else looked up by its id (an older game than
    the page lists was "a game in progress")."""
    camera: CameraHub = request.app.state.camera
    visible = {str(t["table_id"]): str(t["words"]) for t in playing if "words" in t}
    served = camera.served_table_id
    if served is not None and served not in visible:
        row = await visible_table(request, tables, served)
        entry = playing_entry(row, False, tables.damage(served)) if row is not None else {}
        if "words" in entry:
            visible[served] = str(entry["words"])
    return camera.new_table_line(visible)


def listing_problem(row: TableRow) -> str | None:
    """Why a stored table cannot be listed as a game (None: it can): what an older server
    or a damaged file left in its header."""
    if row.problem is not None:
        return f"its stored header is {row.problem}"
    try:
        find_game(row.game)
        check_players(row.players, len(row.players))
    except Rejection as exc:
        return printable(exc.message)  # it may quote what is stored
    return None


def playing_entry(
    row: TableRow, local: bool, damage: TableLoadError | None, joined: set[str] | None = None
) -> dict[str, object]:
    """A game in progress on the start page; one that cannot be shown or opened says so
    (with a button to remove it) instead of failing the whole page, and one whose log no
    longer replays (`damage`'s log entry; its header is sound) links to that log, which
    opens read-only. Its link opens the table; on the server's own screen, for a table this
    browser has not joined (`joined`: the ids it has), the join form with the code filled
    in: that screen shows the code anyway, and the table's page would only send it to an
    empty join form."""
    entry: dict[str, object] = {
        "table_id": row.table_id,
        "created_at": row.created_at,
        "code": row.code if local else None,  # the server's own screen, as the terminal
        "href": f"/t/{row.table_id}",
    }
    if local and joined is not None and row.table_id not in joined:
        entry["href"] = f"/join?{urlencode({'code': row.code})}"
    problem = listing_problem(row)
    if problem is None and damage is not None and damage.log_entry is not None:
        entry |= {"log_href": f"/t/{row.table_id}/log", "log_entry": damage.log_entry}
    problem = problem or (str(damage) if damage is not None else None)
    if problem is not None:
        return entry | {"title": "A stored game that cannot be opened", "broken": problem}
    title, players = find_game(row.game).title, ", ".join(row.players)
    return entry | {"title": title, "players": players, "words": f"{title}: {players}"}


@router.post("/t/{table_id}/remove", dependencies=[SameOrigin])
async def remove_broken_table(request: Request, table_id: str, tables: TablesDep) -> Response:
    """Remove a stored game that cannot be opened (the start page offers it): from the
    server's own machine or the table's host device; a game that opens is kept. Who asks
    is checked first: opening the table (replaying its log) for any device that knew its
    id went past the limit on opens, and told it the table was there and sound."""
    row = await asyncio.to_thread(tables.store.table, table_id) if len(table_id) <= 64 else None
    if row is None:
        raise HTTPException(status_code=404, detail=NO_SUCH_TABLE)
    token = request.cookies.get(cookie_name(table_id), "")
    devices = await asyncio.to_thread(tables.store.devices, table_id)
    device = devices.get(hash_token(token)) if token else None
    if not is_local(request) and (device is None or not device.host):
        raise Rejection(Reason.NOT_ALLOWED, "host_only", "only the host's device may remove it")
    if await tables.openable(table_id) is not None:
        raise Rejection(
            Reason.NOT_ALLOWED, "table_opens", "only a game that cannot be opened is removed"
        )
    await tables.remove_damaged(table_id)
    return RedirectResponse("/", status_code=303)


@router.post("/t/{table_id}/end", dependencies=[SameOrigin])
async def end_left_game(request: Request, table_id: str, tables: TablesDep) -> Response:
    """End a game in progress from the server's own screen (its start page offers it): a
    table whose host went home with the host's device stayed in progress for ever. It goes
    to the history as a game ended on the server's machine (it said "ended by the host",
    who had left); elsewhere the host's device ends it (Host tools)."""
    elsewhere = "only the server's own screen ends a game here; the host's device ends it"
    table = await server_screens_table(request, tables, table_id, elsewhere)
    await table.end_by_host(on_server=True)
    return RedirectResponse("/", status_code=303)


@router.post("/t/{table_id}/camera", dependencies=[SameOrigin])
async def use_camera_here(request: Request, table_id: str, tables: TablesDep) -> Response:
    """Hand the camera to a game in progress from the server's own screen (its start page
    offers "Use the camera here"), as its host's "Use the camera at this table" does on the
    server's machine (CameraHub.take_for); elsewhere a table's host has that button."""
    elsewhere = (
        "only the server's own screen hands the camera to a game here; a table's host has "
        '"Use the camera at this table"'
    )
    table = await server_screens_table(request, tables, table_id, elsewhere)
    camera: CameraHub = request.app.state.camera
    await camera.take_for(table.table_id, on_server=True)
    return RedirectResponse("/", status_code=303)


@router.post("/t/{table_id}/delete", dependencies=[SameOrigin])
async def delete_finished_game(
    request: Request, table_id: str, tables: TablesDep, older: OlderField = 0
) -> Response:
    """Delete a finished game from the history, from the server's own screen (its history
    page offers it, asking once: a test game, a mistaken one): gone from the store, its
    moves, record and photos with it (Tables.delete_finished). A game in progress is
    refused (`game_in_progress`: end it first); another device is refused (`local_only`).
    `older`: the history page the button was on, which the owner is sent back to."""
    if not is_local(request):
        raise Rejection(
            Reason.NOT_ALLOWED, "local_only", "only the server's own screen deletes a game"
        )
    row = await tables.delete_finished(table_id) if len(table_id) <= 64 else None
    if row is None:
        raise HTTPException(status_code=404, detail=NO_SUCH_TABLE)
    # what the camera learnt from its confirmed rolls goes too (a mistaken game's taps)
    learning: Learning = request.app.state.learning
    forgotten = await learning.forget_game(table_id)
    logger.info(
        "finished game %s (%s: %s) deleted on the server's machine (%d learnt dice with it)",
        table_id,
        printable(row.game),
        printable(", ".join(str(name) for name in row.players)),
        forgotten,
    )
    return RedirectResponse(await history_after_delete(tables, older), status_code=303)


async def history_after_delete(tables: Tables, older: int) -> str:
    """The history page to go back to after a delete on the page `older`: that page (it
    opened at the first, and an owner clearing old test games paged back each time), or
    the last one still there when the delete emptied it."""
    _, total = await asyncio.to_thread(tables.store.newest_tables, True, 0)
    while older and older >= total:
        older = max(0, older - HISTORY_GAMES)
    return f"/history?older={older}" if older else "/history"


@router.post("/t/{table_id}/next_seat", dependencies=[SameOrigin])
async def take_kept_place(
    request: Request, table_id: str, tables: TablesDep, settings: SettingsDep
) -> Response:
    """The button of a deleted finished game's page (deleted_game.html): the device takes
    the place the game played again kept for it (api.carry_kept_place), and goes there."""
    token = request.cookies.get(cookie_name(table_id), "")
    new, token, now = await carry_kept_place(request, tables, settings, table_id, token)
    response = RedirectResponse(next_game_url(new.table_id, now), status_code=303)
    set_device_cookie(response, settings, new.table_id, token)
    return response


async def server_screens_table(
    request: Request, tables: Tables, table_id: str, elsewhere: str
) -> Table:
    """The table a button of the server's own start page acts on; refused (local_only,
    `elsewhere` in words) from any other device, 404 when there is no such table. One
    that cannot be opened raises TableLoadError (409 stored_table, saying why) as on its
    own pages: the start page lists a game from its stored header, unopened."""
    if not is_local(request):
        raise Rejection(Reason.NOT_ALLOWED, "local_only", elsewhere)
    table = await tables.get(table_id) if len(table_id) <= 64 else None
    if table is None:
        raise HTTPException(status_code=404, detail=NO_SUCH_TABLE)
    return table


NOT_JOINED = (
    "This device has not joined that table, so it cannot open it. Enter the table's join "
    "code (the host's screen shows it) to see it."
)


@router.get("/join", response_class=HTMLResponse)
async def join_page(
    request: Request, templates: TemplatesDep, code: str = "", why: str = ""
) -> Response:
    """The join form; `why=not_joined`: a table page sent this device here (it has not
    joined that table), and the page says so."""
    note = NOT_JOINED if why == "not_joined" else None
    context = {"code": code[:16], "error": None, "note": note}
    return templates.TemplateResponse(request, "join.html", context)


@router.post("/join", dependencies=[SameOrigin])
async def join_form(
    request: Request,
    code: Annotated[str, Form(max_length=16)],
    tables: TablesDep,
    limiter: LimiterDep,
    settings: SettingsDep,
    templates: TemplatesDep,
) -> Response:
    try:
        table, token = await join_table(code, request, tables, limiter)
    except HTTPException as exc:
        message = exc.detail["message"] if isinstance(exc.detail, dict) else str(exc.detail)
        return templates.TemplateResponse(
            request,
            "join.html",
            {"code": code, "error": message},
            status_code=exc.status_code,
            headers=exc.headers,
        )
    response = RedirectResponse(f"/t/{table.table_id}/seat", status_code=303)
    set_device_cookie(response, settings, table.table_id, token)
    return response


def _page_context(request: Request, access: Any) -> dict[str, Any]:
    table = access.table
    return {
        "table_id": table.table_id,
        "code": table.code,
        "game": table.game,
        "players": table.snapshot.players,
        "viewer": access.viewer,
        "address": public_url(request),
        "local": is_local(request),  # the server's own screen: calibration is a link away
    }


@router.get("/t/{table_id}/seat", response_class=HTMLResponse)
async def seat_page(request: Request, access: PageAccess, templates: TemplatesDep) -> Response:
    context = _page_context(request, access) | _game_over(access)
    context |= {"seats": seat_choices(access), "error": None}
    return templates.TemplateResponse(request, "seat.html", context)


def _game_over(access: Access) -> dict[str, object]:
    """What the seat page says of a finished game: that it is over, and whether the host
    started the next one (which has its own join code); its host frees no seat."""
    snapshot = access.table.snapshot
    return {"over": snapshot.finished, "played_again": snapshot.next_table is not None}


def seat_choices(access: Access) -> list[dict[str, object]]:
    """The seat page's buttons: a seat is open unless another device holds it or this
    device holds another (a player's device keeps its seat until the host frees it)."""
    taken = access.table.seats_taken()
    mine = access.viewer.seat
    held = mine is not None and not access.viewer.host
    return [
        {
            "seat": i,
            "name": name,
            "taken": i in taken and i != mine,
            "mine": i == mine,
            "closed": held and i != mine,
        }
        for i, name in enumerate(access.table.snapshot.players)
    ]


def _seat_refused(
    request: Request,
    access: Access,
    templates: Jinja2Templates,
    message: str,
    status: int,
    headers: dict[str, str] | None = None,
) -> Response:
    """The seat page again, saying why the choice was refused."""
    context = _page_context(request, access) | _game_over(access)
    context |= {"seats": seat_choices(access), "error": message}
    return templates.TemplateResponse(
        request, "seat.html", context, status_code=status, headers=headers
    )


@router.post("/t/{table_id}/seat", dependencies=[SameOrigin])
async def seat_form(
    request: Request,
    access: PageAccess,
    seat: Annotated[str, Form(max_length=8)],
    templates: TemplatesDep,
) -> Response:
    """The seat page's choice; counted against the device's rate as the API's seat
    request is (429 device_rate, said on the page)."""
    # isascii: str.isdigit() also accepts digits such as "¹" that int() refuses
    chosen = None if seat == "table" else int(seat) if seat.isascii() and seat.isdigit() else -1
    refusal = too_fast(request.app.state.device_limiter, access.token)
    if refusal is not None:
        retry = {"Retry-After": str(int(refusal["retry_after"]) + 1)}
        return _seat_refused(request, access, templates, refusal["message"], 429, retry)
    try:
        if chosen == -1:
            raise HTTPException(status_code=422, detail=f"no seat {seat!r}")
        await access.table.take_seat(access.token, chosen)
    except Rejection as exc:
        return _seat_refused(request, access, templates, exc.message, 409)
    target = f"/t/{access.table.table_id}" + ("/sheet" if chosen is not None else "")
    return RedirectResponse(target, status_code=303)


@router.get("/t/{table_id}", response_class=HTMLResponse)
async def table_page(
    request: Request, access: PageAccess, templates: TemplatesDep, drawings: DrawingsDep
) -> Response:
    _, live = await live_html(drawings, access.table, access.viewer, "table")
    address = public_url(request)
    # no QR code a tablet could not open: without a reachable address the page says why
    join_url = f"{address}/join?code={access.table.code}" if address else None
    context = _page_context(request, access) | {
        "live": Markup(live),
        "mode": "table",
        "join_url": join_url,
        "qr": qr_svg(join_url) if join_url and access.viewer.host else None,
        "reach": reach_notice(request),
        "seats_taken": access.table.seats_taken(),
        "seats_away": sorted(access.table.seats_away()),
        "auto_pass": access.table.auto_pass,
        "finished": access.table.snapshot.finished,
    }
    return templates.TemplateResponse(request, "table.html", context)


@router.get("/t/{table_id}/board", response_class=HTMLResponse)
async def board_page(
    request: Request, access: PageAccess, templates: TemplatesDep, drawings: DrawingsDep
) -> Response:
    """The scoreboard for a laptop or TV: every sheet at once, scaled to fit the screen,
    under the roll and whose turn it is (the table view's fragment; board.js fits it)."""
    _, live = await live_html(drawings, access.table, access.viewer, "table")
    context = _page_context(request, access) | {"live": Markup(live), "mode": "table"}
    return templates.TemplateResponse(request, "board.html", context)


@router.get("/t/{table_id}/sheet", response_class=HTMLResponse)
async def sheet_page(
    request: Request, access: PageAccess, templates: TemplatesDep, drawings: DrawingsDep
) -> Response:
    if access.viewer.seat is None:
        return RedirectResponse(f"/t/{access.table.table_id}/seat", status_code=303)
    _, live = await live_html(drawings, access.table, access.viewer, "sheet")
    context = _page_context(request, access) | {"live": Markup(live), "mode": "sheet"}
    return templates.TemplateResponse(request, "sheet.html", context)


@router.get("/t/{table_id}/live", response_class=HTMLResponse)
async def live_fragment(access: PageAccess, drawings: DrawingsDep, view: str = "table") -> Response:
    if view not in ("table", "sheet"):
        raise HTTPException(status_code=422, detail="view is 'table' or 'sheet'")
    state_id, html = await live_html(drawings, access.table, access.viewer, view)
    return HTMLResponse(html, headers={"X-State-Id": str(state_id)})


@router.get("/help", response_class=HTMLResponse)
async def help_page(request: Request, templates: TemplatesDep) -> Response:
    """How the companion works at a table, and a section per registered game (its anchor
    is the game's name: /help#qwixx). It shows no game, so it needs no join code."""
    return templates.TemplateResponse(request, "help.html", {"games": all_games()})


@router.get("/history", response_class=HTMLResponse, dependencies=[ReadRate])
async def history_page(
    request: Request, tables: TablesDep, templates: TemplatesDep, pages: PagesDep, older: Older = 0
) -> Response:
    """Finished games, the latest finished first, HISTORY_GAMES of them (`older`: how many
    later ones to pass over). The machine running the server sees all of them; another
    device sees the games it has a cookie for (no join code, no access). A stored game
    that cannot be shown is left out with a note naming it, never a 500. Drawn on the page
    thread and kept while the same games are listed (long_pages.py). Each request read
    every finished row (70-110 ms a request on 3,000 finished games with the page kept,
    0.5 s to build it), so it reads one page of them (`visible_games`)."""
    rows, total = await visible_games(request, tables, True, older, HISTORY_GAMES)
    finished = listing_pages(older, total, HISTORY_GAMES)
    # another device lists only the games it joined: it says so, or "No finished games yet"
    # on a phone would deny the evening's games the server's own screen lists
    local = is_local(request)
    folder = await folder_problem(request) if local else None

    def build() -> bytes:
        games, notes = [], []
        for row in rows:
            try:
                games.append(history_entry(row))
            except ValueError as exc:
                # the owner deletes a damaged game as any other (Delete this game), by its id
                text = f"A finished game (table {row.table_id}) cannot be shown: {exc}"
                notes.append({"table_id": row.table_id, "text": text})
        context = {"games": games, "notes": notes, "finished": finished, "local": local}
        context["folder_problem"] = folder
        return render_page(templates, request, "history.html", context)

    # the page says its place (the count, the links), so that is in its key with its rows;
    # and each row's winners: opening a table may put them right in place (Tables._load);
    # the server's own screen's page has a delete button per game, another device's none
    shown = tuple((r.table_id, r.finished_at, str((r.summary or {}).get("winners"))) for r in rows)
    key = ("history", local, folder, tuple(finished.items()), shown)
    return HTMLResponse(await pages.kept(key, build))


def history_entry(row: TableRow) -> dict[str, object]:
    """One finished game for the history page from its stored summary; raises
    ValueError naming what in the stored row does not fit."""
    if row.problem is not None:
        raise ValueError(f"its stored header is {row.problem}")
    summary = row.summary or {}
    if invalid_text_at(summary) is not None:  # e.g. names an older server let in
        raise ValueError("its stored summary holds text that is not valid Unicode")
    players = summary.get("players", row.players)
    if not isinstance(players, list):
        raise ValueError("its stored player names are not a list of names")
    try:
        check_players(players, len(players))  # the names a new table may have
    except Rejection as exc:
        raise ValueError(f"its stored player names break the rules: {exc.message}") from exc
    try:
        scores = sorted(
            ((int(s["seat"]), int(s["total"])) for s in summary.get("scores", [])),
            key=lambda seat_total: -seat_total[1],
        )
        winners = {int(w) for w in summary.get("winners", [])}
        message = str(summary.get("end_message", ""))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"its stored summary does not read ({exc!r:.80})") from exc
    if any(not 0 <= seat < len(players) for seat, _ in scores):
        raise ValueError(f"its stored scores name a seat beyond its {len(players)} player(s)")
    if not winners and summary.get("ended_by_host") and scores:
        # a host's end stored before its summary kept its winners (Game.winners, by the
        # game's own tie-breaks) and its table not opened since (opening it puts them
        # right: Tables._load): the highest total, all the stored scores can tell
        winners = {seat for seat, total in scores if total == scores[0][1]}
    scores.sort(key=lambda seat_total: seat_total[0] not in winners)  # a broken tie's winner first
    scores.sort(key=lambda seat_total: -seat_total[1])
    return {
        "table_id": row.table_id,
        "title": str(summary.get("title", row.game)),
        "players": ", ".join(players),
        "finished_at": row.finished_at,
        "message": for_display(message, players),
        "scores": [
            {"name": players[seat], "total": total, "winner": seat in winners}
            for seat, total in scores
        ],
    }
