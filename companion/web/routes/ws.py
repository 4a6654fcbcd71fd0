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
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from companion.rules.base import Rejection
from companion.web.auth import cookie_name, is_same_origin
from companion.web.deps import Access
from companion.web.errors import status_for
from companion.web.fragments import MODES, live_fragment
from companion.web.routes.api import (
    ActionRequest,
    UndoRequest,
    perform_action,
    perform_undo,
    too_fast,
)
from companion.web.store import StorageError
from companion.web.tables import Subscription, Table

logger = logging.getLogger(__name__)
router = APIRouter()


class ActMessage(ActionRequest):
    type: Literal["act"]


class UndoMessage(UndoRequest):
    type: Literal["undo"]


class SyncMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["sync"]


ClientMessage = TypeAdapter(
    Annotated[ActMessage | UndoMessage | SyncMessage, Field(discriminator="type")]
)


async def push_to_screen(
    table: Table,
    token: str,
    view: str,
    templates: Jinja2Templates,
    subscription: Subscription,
    send_text: Callable[[str], Awaitable[None]],
) -> None:
    """Send one screen its live fragment whenever the table's state changes (and on a sync
    request), and a host's screen the seats taken whenever they change after it connected
    (its join panel folds once every seat is taken; the page drew the seats of its load)."""
    sent = -1
    seats_sent = sorted(table.seats_taken())
    while True:
        current = table.viewer(token)  # a seat change takes effect on the next push
        if current is None:
            return
        # drawn and encoded once for every screen of the same view (render.py)
        fragment = await live_fragment(templates, table, current, view)
        if fragment.state_id != sent:
            await send_text(fragment.message)
            sent = fragment.state_id
        seats = sorted(table.seats_taken())
        if current.host and seats != seats_sent:
            seats_of = len(table.snapshot.players)
            await send_text(json.dumps({"type": "seats", "taken": seats, "seats": seats_of}))
            seats_sent = seats
        if await subscription.queue.get() < 0:  # a sync request: send even if unchanged
            sent = -1


@router.websocket("/t/{table_id}/ws")
async def table_socket(websocket: WebSocket, table_id: str, view: str = "table") -> None:
    app = websocket.app
    if not is_same_origin(websocket.headers.get("origin"), websocket.headers.get("host")):
        await websocket.close(code=1008, reason="foreign origin")
        return
    table = await app.state.tables.openable(table_id) if len(table_id) <= 64 else None
    token = websocket.cookies.get(cookie_name(table_id), "")
    viewer = table.viewer(token) if table is not None else None
    if table is None or viewer is None or view not in MODES:
        await websocket.close(code=1008, reason="join this table first")
        return
    await websocket.accept()
    send_lock = asyncio.Lock()
    subscription = table.subscribe()
    templates = app.state.templates
    limit = app.state.settings.max_ws_message_bytes

    async def send(message: dict[str, Any]) -> None:
        await send_text(json.dumps(message))

    async def send_text(text: str) -> None:
        async with send_lock:
            await websocket.send_text(text)

    async def push_states() -> None:
        await push_to_screen(table, token, view, templates, subscription, send_text)

    async def receive_actions() -> None:
        while True:
            incoming = await websocket.receive()
            if incoming["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(incoming.get("code", 1000))
            text = incoming.get("text")
            if text is None:  # a binary frame: answer it, do not let it end the socket
                await send(
                    {
                        "type": "error",
                        "status": 422,
                        "reason": "malformed",
                        "rule": "message",
                        "message": "messages are JSON text, not binary frames",
                    }
                )
                continue
            current = table.viewer(token)
            if current is None:
                return
            refusal = too_fast(app.state.device_limiter, token)
            if refusal is not None:  # a flooding device: refuse, do not read further
                await send({"type": "error", "status": 429, **refusal})
                continue
            if len(text) > limit:
                await send(
                    {
                        "type": "error",
                        "status": 413,
                        "reason": "malformed",
                        "rule": "too_large",
                        "message": f"messages are at most {limit} bytes",
                    }
                )
                continue
            try:
                message = ClientMessage.validate_json(text)
            except ValidationError as exc:
                problem = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
                )
                await send(
                    {
                        "type": "error",
                        "status": 422,
                        "reason": "malformed",
                        "rule": "message",
                        "message": problem,
                    }
                )
                continue
            if isinstance(message, SyncMessage):
                subscription.notify(-1)
                continue
            access = Access(table, current, token)
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
                    undo = UndoRequest(
                        action_id=action_id, expected_state_id=message.expected_state_id
                    )
                    result = await perform_undo(access, undo)
            except Rejection as exc:
                await send(
                    {
                        "type": "error",
                        "action_id": action_id,
                        "status": status_for(exc),
                        **exc.to_json(),
                    }
                )
                if exc.reason == "stale_state":
                    subscription.notify(-1)
                continue
            except StorageError as exc:
                await send(
                    {
                        "type": "error",
                        "action_id": action_id,
                        "status": 503,
                        "reason": "storage",
                        "rule": exc.problem,
                        "message": exc.message,
                    }
                )
                continue
            except HTTPException as exc:
                await send(
                    {
                        "type": "error",
                        "action_id": action_id,
                        "status": exc.status_code,
                        "reason": "error",
                        "rule": "http",
                        "message": str(exc.detail),
                    }
                )
                continue
            await send({"type": "ack", "action_id": action_id, **result})

    pusher = asyncio.create_task(push_states())
    receiver = asyncio.create_task(receive_actions())
    try:
        done, _ = await asyncio.wait({pusher, receiver}, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            exc = task.exception()
            if exc is not None and not isinstance(exc, WebSocketDisconnect):
                logger.warning("table %s socket ended: %r", table_id, exc)
    finally:
        table.unsubscribe(subscription)
        for task in (pusher, receiver):
            task.cancel()
        if websocket.client_state.name == "CONNECTED":
            with contextlib.suppress(RuntimeError):
                await websocket.close()
