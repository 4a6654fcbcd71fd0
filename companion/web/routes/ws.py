"""The live channel of a screen: `/t/{table_id}/ws?view=table|sheet`. On connect (and on
every reconnect) the server sends the full live fragment; after every accepted change it
pushes the new one. A screen may also send actions and undos here (the same checks as the
HTTP API). Connections from a foreign Origin, or without the table's device cookie, are
refused before the handshake completes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from companion.rules.base import Rejection
from companion.table.access import DeviceRateLimiter, Viewer
from companion.table.store import StorageError
from companion.table.tables import OpenRefused, Subscription, Table, TableLoadError, Tables
from companion.table.text import INVALID_UNICODE, invalid_text, invalid_text_at
from companion.web.deps import (
    Access,
    TextCheckedRoute,
    client_key,
    cookie_name,
    is_same_origin,
)
from companion.web.errors import status_for
from companion.web.fragments import MODES, LiveDrawings, live_fragment
from companion.web.routes.api import (
    ActionRequest,
    UndoRequest,
    perform_action,
    perform_undo,
    too_fast,
)

logger = logging.getLogger(__name__)
WATCHER = Viewer(seat=None, host=False)  # how a device whose token was revoked is drawn
# the close reason of a screen whose game the history deleted (table.js names it in its banner)
DELETED_CLOSE_REASON = "game_deleted"
# the same, to a device the next game has no place for (its place freed there): its banner
# asks for the next game's code, where it promised "your place is kept" and the tap failed
DELETED_NO_PLACE_REASON = "game_deleted no_place"
# the close reason of a socket asking for a view no screen draws (a page older than the
# server's views, or an address typed by hand): table.js asks for a reload, not the code
UNKNOWN_VIEW_REASON = "unknown view"
router = APIRouter(route_class=TextCheckedRoute)


class ActMessage(ActionRequest):
    type: Literal["act"]


class UndoMessage(UndoRequest):
    type: Literal["undo"]


class SyncMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["sync"]


class PingMessage(BaseModel):
    """A page's question whether its quiet socket still carries anything (table.js asks
    after 15 s with nothing heard): answered with a pong, nothing read or drawn."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["ping"]


PONG = json.dumps({"type": "pong"})
# a ping is told from other messages before the rate is spent: a message this short is
# read at no cost worth limiting (table.js sends {"type":"ping"}: 15 characters)
PING_MAX_CHARS = 64
ClientMessage = TypeAdapter(
    Annotated[ActMessage | UndoMessage | SyncMessage | PingMessage, Field(discriminator="type")]
)
ReadMessage = ActMessage | UndoMessage | SyncMessage | PingMessage


async def push_to_screen(
    table: Table,
    token: str,
    view: str,
    drawings: LiveDrawings,
    subscription: Subscription,
    send_text: Callable[[str], Awaitable[None]],
    tables: Tables,
) -> None:
    """Send one screen its live fragment whenever the table's state changes (and on a sync
    request: a finished screen's next place freed at the next game is drawn anew so,
    `Tables.with_next_place`), and a host's screen the seats taken and who is away whenever they change
    after it connected (its join panel folds once every seat is taken; the page drew the
    seats of its load)."""
    sent = -1
    seats_sent = seats_message(table)
    while True:
        current = table.viewer(token)  # a seat change takes effect on the next push
        if current is None:  # its seat was freed: a last picture without its controls
            if not table.deleted:  # a deleted game is shown no more, not even once
                await send_text((await live_fragment(drawings, table, WATCHER, view)).message)
            return
        current = await tables.with_next_place(table, token, current)
        # drawn and encoded once for every screen of the same view (render.py)
        fragment = await live_fragment(drawings, table, current, view)
        if fragment.state_id != sent:
            await send_text(fragment.message)
            sent = fragment.state_id
        seats = seats_message(table)
        if current.host and seats != seats_sent:
            await send_text(json.dumps(seats))
            seats_sent = seats
        if await subscription.queue.get() < 0:  # a sync request: send even if unchanged
            sent = -1


def seats_message(table: Table) -> dict[str, object]:
    """The host's "seats" frame: the seats taken, how many there are, and the names of the
    seated players with no page open (`Table.seats_away`)."""
    players = table.snapshot.players
    away = [players[seat] for seat in sorted(table.seats_away())]
    return {
        "type": "seats",
        "taken": sorted(table.seats_taken()),
        "seats": len(players),
        "away": away,
    }


def malformed(status: int, rule: str, message: str) -> dict[str, object]:
    """The error frame for a message refused before it is read: `rule` says which check
    refused it, `message` names the field."""
    return {
        "type": "error",
        "status": status,
        "reason": "malformed",
        "rule": rule,
        "message": message,
    }


def validation_problem(exc: ValidationError) -> str:
    """The first three problems of a message, each named by its field path."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])


def read_message(text: str) -> ReadMessage | dict[str, object]:
    """The message in `text`, or the error frame refusing it: JSON, valid Unicode in every
    string and key (companion/table/text.py), one of the message types."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return malformed(422, "message", f"messages are JSON objects ({type(exc).__name__})")
    found = invalid_text_at(parsed, "message")
    if found is not None:
        return malformed(422, INVALID_UNICODE, invalid_text(found).message)
    try:
        return ClientMessage.validate_python(parsed)
    except ValidationError as exc:
        return malformed(422, "message", validation_problem(exc))


async def answer_to(access: Access, message: ActMessage | UndoMessage) -> dict[str, object]:
    """Perform an act or an undo (the same checks as the HTTP API): its ack, or the error
    frame that refused it, carrying its action id."""
    action_id = message.action_id
    try:
        if isinstance(message, ActMessage):
            body = ActionRequest(
                action_id=action_id,
                expected_state_id=message.expected_state_id,
                move=message.move,
                race=message.race,
            )
            result = await perform_action(access, body)
        else:
            undo = UndoRequest(action_id=action_id, expected_state_id=message.expected_state_id)
            result = await perform_undo(access, undo)
    except Rejection as exc:
        return {"type": "error", "action_id": action_id, "status": status_for(exc), **exc.to_json()}
    except StorageError as exc:
        return {
            "type": "error",
            "action_id": action_id,
            "status": 503,
            "reason": "storage",
            "rule": exc.problem,
            "message": exc.message,
        }
    except HTTPException as exc:
        return {
            "type": "error",
            "action_id": action_id,
            "status": exc.status_code,
            "reason": "error",
            "rule": "http",
            "message": str(exc.detail),
        }
    return {"type": "ack", "action_id": action_id, **result}


async def admit(websocket: WebSocket, table_id: str, view: str) -> tuple[Table, str] | None:
    """The table and device token of a screen let onto the channel, or None once the socket
    is refused (closed with 1008, before the handshake completes): a foreign Origin, an
    unknown table, no seat or table view for the device's cookie; 1013 past the client's
    limit on opening stored tables (as a request's 429 open_rate). A device that held a
    game the history deleted is told so (Tables.deleted_for: 1008 `game_deleted`, after
    the handshake, which carries no reason), and so is a socket asking for an unknown view
    (1008 `unknown view`: it was told "join this table first", which its device had; the
    view is checked before any table is opened, so it tells a stranger nothing)."""
    origin, host = websocket.headers.get("origin"), websocket.headers.get("host")
    if not is_same_origin(origin, host, websocket.url.scheme):
        await websocket.close(code=1008, reason="foreign origin")
        return None
    if view not in MODES:
        await websocket.accept()
        await websocket.close(code=1008, reason=UNKNOWN_VIEW_REASON)
        return None
    tables = websocket.app.state.tables
    token = websocket.cookies.get(cookie_name(table_id), "")
    try:
        table = await opened_for_socket(websocket, table_id, token)
    except OpenRefused:
        await websocket.close(code=1013, reason="too many tables opened; try again later")
        return None
    viewer = table.viewer(token) if table is not None else None
    if table is None and await tables.deleted_for(table_id, token):
        # a reason is heard only once the socket is open (a refused handshake reaches the
        # page as 1006, a lost network): its page says the game was deleted at once
        why = await deleted_close_reason(websocket, table_id, token)
        await websocket.accept()
        await websocket.close(code=1008, reason=why)
        return None
    if table is None or viewer is None:
        await websocket.close(code=1008, reason="join this table first")
        return None
    return table, token


async def opened_for_socket(websocket: WebSocket, table_id: str, token: str) -> Table | None:
    """The table a socket asks for, or None: none without a cookie for it (a stranger's
    socket replayed stored games it could never watch), else opened as a request opens
    it (deps.opened): counted against the client's opens and its share of memory; raises
    OpenRefused past them."""
    if not token or len(table_id) > 64:
        return None
    try:
        tables = websocket.app.state.tables
        table: Table | None = await tables.get(table_id, client=client_key(websocket))
    except TableLoadError:
        return None
    return table


async def deleted_close_reason(websocket: WebSocket, table_id: str, token: str) -> str:
    """How a screen of the deleted game `table_id` is told: whether the next game has a
    place for its device (Tables.place_after_delete), which its "Next game ready" takes."""
    tables = websocket.app.state.tables
    try:
        place = await tables.place_after_delete(
            table_id, token, lambda next_id: websocket.cookies.get(cookie_name(next_id), "")
        )
    except (StorageError, TableLoadError):  # told it was deleted all the same
        return DELETED_CLOSE_REASON
    return DELETED_CLOSE_REASON if place is not None else DELETED_NO_PLACE_REASON


class ScreenChannel:
    """One accepted screen's socket: its subscription to the table, the lock that keeps the
    pusher's and the answerer's frames whole, and the two tasks that share it."""

    def __init__(self, websocket: WebSocket, table: Table, token: str, view: str) -> None:
        state = websocket.app.state
        self.websocket = websocket
        self.table = table
        self.token = token
        self.view = view
        self.drawings: LiveDrawings = state.drawings
        self.limiter: DeviceRateLimiter = state.device_limiter
        self.ping_limiter: DeviceRateLimiter = state.ping_limiter
        self.limit: int = state.settings.max_ws_message_bytes
        self.send_lock = asyncio.Lock()
        self.subscription = table.subscribe(token)

    async def send(self, frame: dict[str, object]) -> None:
        await self.send_text(json.dumps(frame))

    async def send_text(self, text: str) -> None:
        async with self.send_lock:
            await self.websocket.send_text(text)

    async def serve(self) -> None:
        """Push states and answer messages until either side ends; then close."""
        pusher = asyncio.create_task(self.push_states())
        receiver = asyncio.create_task(self.receive_actions())
        try:
            done, _ = await asyncio.wait({pusher, receiver}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                exc = task.exception()
                if exc is not None and not isinstance(exc, WebSocketDisconnect):
                    logger.warning("table %s socket ended: %r", self.table.table_id, exc)
        finally:
            await self.close(pusher, receiver)

    async def close(self, *tasks: asyncio.Task[None]) -> None:
        self.table.unsubscribe(self.subscription)
        for task in tasks:
            task.cancel()
        if self.websocket.client_state.name == "CONNECTED":
            # a device that lost the table (its seat freed) is told so with 1008, as a
            # refused handshake is meant: the page says "enter the join code again" and
            # stops reconnecting (with 1000 it said "Offline" beside the freed-seat note)
            lost = self.table.viewer(self.token) is None
            # a game the history deleted says so: its screen read "enter the join code
            # again", even beside a "Next game ready" button that still worked
            why = ""
            if lost and self.table.deleted:
                why = await deleted_close_reason(self.websocket, self.table.table_id, self.token)
            with contextlib.suppress(RuntimeError):
                await self.websocket.close(code=1008 if lost else 1000, reason=why)

    async def push_states(self) -> None:
        await push_to_screen(
            self.table,
            self.token,
            self.view,
            self.drawings,
            self.subscription,
            self.send_text,
            self.websocket.app.state.tables,
        )

    async def receive_actions(self) -> None:
        """Answer every message until the screen disconnects or its device loses the table."""
        while True:
            text = await self.receive_text()
            if text is None:
                continue
            viewer = self.table.viewer(self.token)
            if viewer is None:
                return
            await self.answer(text, viewer)

    async def receive_text(self) -> str | None:
        """The next text message; None for a binary frame, answered here rather than let it
        end the socket. A disconnect raises WebSocketDisconnect."""
        incoming = await self.websocket.receive()
        if incoming["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(incoming.get("code", 1000))
        text: str | None = incoming.get("text")
        if text is None:
            await self.send(malformed(422, "message", "messages are JSON text, not binary frames"))
        return text

    def is_free_ping(self, text: str) -> bool:
        """Whether `text` is a ping within the device's ping allowance: the page's own
        keep-alive spends none of the rate its taps may use (a page that had tapped fast
        got a 429 for its ping, and pings shortened the taps' burst). Past the allowance a
        ping is a message like any other, so a flood of them meets the device's rate."""
        if len(text) > PING_MAX_CHARS or not isinstance(read_message(text), PingMessage):
            return False
        return too_fast(self.ping_limiter, self.token) is None

    async def answer(self, text: str, viewer: Viewer) -> None:
        """Answer one message: a ping within its allowance (a pong, spending no rate),
        refused (a flood, too large, malformed: naming the field), a ping (a pong), a sync (the current state pushed even if unchanged), or an act or
        undo performed."""
        if self.is_free_ping(text):
            await self.send_text(PONG)
            return
        refusal = too_fast(self.limiter, self.token)
        if refusal is not None:  # a flooding device: refuse, do not read further
            await self.send({"type": "error", "status": 429, **refusal})
            return
        if len(text) > self.limit:
            await self.send(malformed(413, "too_large", f"messages are at most {self.limit} bytes"))
            return
        message = read_message(text)
        if isinstance(message, dict):
            await self.send(message)
            return
        if isinstance(message, PingMessage):
            await self.send_text(PONG)
            return
        if isinstance(message, SyncMessage):
            self.subscription.notify(-1)
            return
        frame = await answer_to(Access(self.table, viewer, self.token), message)
        await self.send(frame)
        if frame.get("reason") == "stale_state":  # refused as drawn on an old state: send
            self.subscription.notify(-1)  # the screen the current one (after the refusal)


@router.websocket("/t/{table_id}/ws")
async def table_socket(websocket: WebSocket, table_id: str, view: str = "table") -> None:
    admitted = await admit(websocket, table_id, view)
    if admitted is None:
        return
    table, token = admitted
    await websocket.accept()
    await ScreenChannel(websocket, table, token, view).serve()
