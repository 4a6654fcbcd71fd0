"""The app factory: `create_app(settings)` wires the store, the tables, the templates, the
limiter and the routers. Nothing is built at import time (STYLE.md principle 10)."""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from companion.rules.base import Move, Rejection
from companion.rules.registry import all_games
from companion.table.access import ActionBudget, DeviceRateLimiter, JoinLimiter
from companion.table.camera_hub import CameraHub
from companion.table.camera_runtime import ReaderFactory
from companion.table.data_folder import FolderWatch
from companion.table.learning import Learning
from companion.table.store import StorageError, Store
from companion.table.tables import Table, TableLoadError, Tables
from companion.table.text import printable
from companion.vision.calibration import load_calibration
from companion.web.deps import NO_SUCH_TABLE, DeletedGame, NoAccess
from companion.web.errors import status_for
from companion.web.fragments import LiveDrawings, page_templates
from companion.web.hosts import HostCheck
from companion.web.long_pages import PageBuilder
from companion.web.page_headers import PageHeaders
from companion.web.routes import api, live, pages, setups, ws
from companion.web.settings import Settings
from companion.web.views import colour_class, describe_move

logger = logging.getLogger(__name__)


class BodyLimit:
    """Refuse request bodies over `limit` bytes with 413, before they are read whole."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await _too_large(send, self.limit)
            return
        seen = 0
        refused = False

        async def limited() -> Message:
            # answer 413 here, at once: an exception raised into the app would be turned
            # into FastAPI's "400 error parsing the body" by its JSON body reader
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    refused = True
                    await _too_large(send, self.limit)
                    return {"type": "http.disconnect"}
            return message

        async def unless_refused(message: Message) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, limited, unless_refused)
        except Exception:
            if not refused:  # the app's own failure; a refused body's aftermath is not
                raise


class RefusalResponse(JSONResponse):
    """A refusal as JSON written in ASCII: text a request brought (a key named in a
    message) is escaped, so the answer itself can never fail to encode (a lone surrogate
    in a refused key turned a 422 into a 500 and a dropped connection)."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _wants_page(request: Request) -> bool:
    """A browser asking for a page (not the API, a static file or a script's fetch), or
    sending a page's form (the start page's buttons): a person reads the answer."""
    path = request.url.path
    return (
        request.method in ("GET", "POST")
        and "text/html" in request.headers.get("accept", "")
        and not path.startswith(("/api/", "/static/"))
    )


async def _too_large(send: Send, limit: int) -> None:
    body = (
        f'{{"reason":"malformed","rule":"too_large","message":"request bodies are at most '
        f'{limit} bytes"}}'
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def sentence(message: str) -> str:
    """A message as a sentence on a page: its first letter upper case and a full stop
    unless it ends with one (Jinja's `capitalize` lowered every other capital, a player's
    name or a button's, and the page added a second full stop to a message that had one)."""
    if not message:
        return message
    ending = "" if message.endswith((".", "!", "?")) else "."
    return message[0].upper() + message[1:] + ending


def _timestamp(value: float | None) -> Markup:
    """A moment as a <time> element: UTC in the page, shown in the browser's own time zone
    by local-time.js (the server does not know where its players are)."""
    if value is None:
        return Markup("")
    moment = datetime.fromtimestamp(value, UTC)
    return Markup('<time datetime="{}" data-local>{}</time>').format(
        moment.isoformat(timespec="seconds"), moment.strftime("%Y-%m-%d %H:%M UTC")
    )


def _move_words(table: Table, move: Move) -> str:
    """A move's words at `table` (its view's label), for the camera's status line."""
    return describe_move(table.game, move)


def _camera_with_learning(
    app: FastAPI, settings: Settings, reader_factory: ReaderFactory | None
) -> CameraHub:
    """The camera hub and the setups that learn from its confirmed rolls
    (companion/table/learning.py), both on app.state."""
    learning = Learning(settings.data_dir, fine_tune=settings.fine_tune)
    app.state.learning = learning
    camera = CameraHub(settings.camera, app.state.tables, _move_words, reader_factory, learning)
    learning.attach_camera(camera.runtime)
    app.state.camera = camera
    return camera


def create_app(settings: Settings, reader_factory: ReaderFactory | None = None) -> FastAPI:
    """The companion's web app for `settings`. `reader_factory` builds the camera's dice
    reader (default: the real ONNX pipeline, companion.table.camera_runtime)."""
    mimetypes.add_type("application/manifest+json", ".webmanifest")
    app = FastAPI(
        title="Table Companion",
        lifespan=_lifespan(settings, reader_factory),
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.limiter = JoinLimiter(
        settings.join_attempts,
        settings.join_window_s,
        settings.join_attempts_per_hour,
        settings.join_attempts_all_per_hour,
    )
    app.state.device_limiter = DeviceRateLimiter(settings.device_rate_per_s, settings.device_burst)
    app.state.ping_limiter = DeviceRateLimiter(settings.ping_rate_per_s, settings.ping_burst)
    app.state.table_limiter = DeviceRateLimiter(settings.table_rate_per_s, settings.table_burst)
    app.state.read_limiter = DeviceRateLimiter(settings.read_rate_per_s, settings.read_burst)
    app.state.import_budget = ActionBudget(settings.import_actions_per_hour, 3600.0)
    app.state.pages = PageBuilder()  # long pages, built off the loop (long_pages.py)
    app.state.public_url = None
    app.state.dice_pages = {}  # (table, which rolls) -> the dice page drawn (routes/live.py)
    # the server's own start page and history warn once the data folder cannot be written
    app.state.folder_watch = FolderWatch(settings.data_dir, settings.data_folder_check_s)
    templates = page_templates(settings.web_dir / "templates")
    templates.env.globals["colour_class"] = colour_class
    templates.env.filters["timestamp"] = _timestamp
    templates.env.filters["sentence"] = sentence
    app.state.templates = templates
    app.mount("/static", StaticFiles(directory=settings.web_dir / "static"), name="static")
    for routes in (pages, api, ws, live, setups):
        app.include_router(routes.router)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(HostCheck, settings=settings)  # before anything but the headers
    _headers_outermost(app)  # on every answer: a Host's refusal, an unexpected failure's
    _add_error_answers(app, templates)
    _add_deleted_game_answer(app, templates)
    return app


def _headers_outermost(app: FastAPI) -> None:
    """PageHeaders around the whole app, Starlette's own error layer included: as a
    middleware it sat inside that layer, whose 500 of an unexpected failure carried none
    of the headers."""
    build = app.build_middleware_stack

    def with_headers() -> ASGIApp:
        return PageHeaders(build())

    app.build_middleware_stack = with_headers  # type: ignore[method-assign]


Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def _lifespan(settings: Settings, reader_factory: ReaderFactory | None) -> Lifespan:
    """What runs while the server serves: the store, the tables and the camera's threads."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        all_games()  # a broken registration stops the server here, named (not a 500 later)
        store = Store.open(settings.database_path, settings.sqlite_synchronous)
        app.state.store = store
        app.state.tables = Tables(
            store,
            idle_s=settings.table_idle_s,
            client_tables=settings.client_tables,
            open_limiter=DeviceRateLimiter(settings.open_rate_per_s, settings.open_burst),
            token_finished_s=settings.finished_token_s,
        )
        app.state.tables.attach_loop(asyncio.get_running_loop())
        app.state.tables.start()  # the dice counts, read in the background
        # the live fragments' caches and render thread: the web side's (fragments.py)
        app.state.drawings = LiveDrawings(app.state.templates)
        # the camera runs on its own threads, started and stopped with the server
        camera = _camera_with_learning(app, settings, reader_factory)
        if settings.camera.calibration is not None:
            camera.set_calibration(load_calibration(settings.camera.calibration))
        else:
            await camera.restore_calibration()  # the calibration page's last choice
        await camera.feed.restore()  # before the first throw can be routed
        camera.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            camera.stop()
            app.state.pages.close()
            app.state.learning.close()
            app.state.drawings.close()
            app.state.tables.close()
            store.close()

    return lifespan


def _add_deleted_game_answer(app: FastAPI, templates: Jinja2Templates) -> None:
    """A page of a game the history deleted, asked by a device that held it
    (deps.DeletedGame): one tap to the next game where it has a place, no code shown."""

    @app.exception_handler(DeletedGame)
    async def deleted_game_answer(request: Request, exc: DeletedGame) -> Response:
        context = {
            "table_id": exc.table_id,
            "viewer": exc.viewer,
            "kept": exc.kept,
            "played_again": exc.played_again,
        }
        return templates.TemplateResponse(request, "deleted_game.html", context, status_code=410)


def _add_error_answers(app: FastAPI, templates: Jinja2Templates) -> None:
    """How each kind of refusal is answered: JSON for the API and scripts, a page for a
    person's browser."""

    def page_or_json(
        request: Request, status: int, body: Mapping[str, object], log_href: str | None = None
    ) -> Response:
        """`log_href`: a link to the table's log; a damaged game's page says it in plain words."""
        if _wants_page(request):  # a person with a stale link reads a page, not JSON
            message = printable(str(body.get("message", "")))
            # only a table id no table has may be typed wrong or another server's
            unknown_table = status == 404 and message == NO_SUCH_TABLE
            context = {"status": status, "message": message, "unknown_table": unknown_table}
            context |= {"log_href": log_href, "damaged": body.get("rule") == "stored_table"}
            return templates.TemplateResponse(request, "error.html", context, status_code=status)
        return RefusalResponse(body, status_code=status)

    @app.exception_handler(Rejection)
    async def rejection_answer(request: Request, exc: Rejection) -> Response:
        # a form's refusal (the history's "Delete this game" on a reopened game) is a page
        return page_or_json(request, status_for(exc), exc.to_json())

    @app.exception_handler(StorageError)
    async def storage_answer(request: Request, exc: StorageError) -> Response:
        # 503: the request was fine, the server cannot keep it now; nothing was applied
        return RefusalResponse(
            {"reason": "storage", "rule": exc.problem, "message": exc.message},
            status_code=503,
            headers={"Retry-After": "30"},
        )

    @app.exception_handler(TableLoadError)
    async def damaged_answer(request: Request, exc: TableLoadError) -> Response:
        # what is stored is the trouble, not the request nor the server: say what it is
        body = {"reason": "damaged", "rule": "stored_table", "message": str(exc)}
        # a log that no longer replays is still shown as stored, to the table's devices
        table_id = request.path_params.get("table_id")
        log_page = exc.log_entry is not None and isinstance(table_id, str)
        return page_or_json(request, 409, body, f"/t/{table_id}/log" if log_page else None)

    @app.exception_handler(NoAccess)
    async def no_access_answer(request: Request, exc: NoAccess) -> Response:
        if exc.page:  # the join page says why it came up (a history link, an old bookmark)
            return RedirectResponse("/join?why=not_joined", status_code=303)
        return RefusalResponse(exc.detail, status_code=401)

    @app.exception_handler(StarletteHTTPException)
    async def http_answer(request: Request, exc: StarletteHTTPException) -> Response:
        detail: Any = exc.detail
        if exc.status_code == 400 and detail == UNPARSED_BODY:
            detail = _unparsed_body(exc)
        elif not isinstance(detail, dict):
            detail = {"reason": "error", "rule": "http", "message": str(detail)}
        answer = page_or_json(request, exc.status_code, detail)
        answer.headers.update(exc.headers or {})
        return answer

    @app.exception_handler(RequestValidationError)
    async def validation_answer(request: Request, exc: RequestValidationError) -> Response:
        return RefusalResponse(_validation_body(exc), status_code=422)


# FastAPI's answer when reading a JSON body fails other than as bad JSON (an integer of
# more than 4,300 digits, nesting deeper than the parser's recursion, bytes that are not
# UTF-8): said here with the field it concerns, as every other malformed request is
UNPARSED_BODY = "There was an error parsing the body"


def _unparsed_body(exc: StarletteHTTPException) -> dict[str, object]:
    cause = exc.__cause__
    why = f"{type(cause).__name__}: {cause}" if cause is not None else "unreadable"
    return {
        "reason": "malformed",
        "rule": "body",
        "message": f"body: not JSON this server can read ({why[:200]})",
    }


def _validation_body(exc: RequestValidationError) -> dict[str, object]:
    """A refused request body in words: the first problems, each naming its field."""
    problems = [
        f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
    ]
    return {
        "reason": "malformed",
        "rule": "request",
        "message": "; ".join(problems[:5]),
        "problems": problems[:20],
    }
