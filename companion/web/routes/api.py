"""The JSON API: create/import/join tables, read a table's state, send actions and undos,
seats, ending a game and exporting its record. Thin handlers: validate (pydantic), call the
table, translate a Rejection into an HTTP answer (app.py maps reasons to codes)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from companion.rules import registry
from companion.rules.base import Game, Reason, Rejection, Roll
from companion.rules.codec import encode
from companion.rules.registry import all_games, find_game
from companion.rules.session import RecordError
from companion.table.access import (
    ActionBudget,
    DeviceRateLimiter,
    JoinAttempt,
    Viewer,
    actor_for,
    hash_token,
    normalise_code,
)
from companion.table.records import OPTIONS_JSON_MAX, PLAYER_NAME_MAX, PLAYERS_MAX
from companion.table.snapshot import Snapshot
from companion.table.tables import Table, TableLoadError, Tables
from companion.table.words import for_display
from companion.web.deps import (
    ApiAccess,
    LimiterDep,
    PagesDep,
    ReadRate,
    SameOrigin,
    SettingsDep,
    TablesDep,
    TextCheckedRoute,
    client_key,
    cookie_name,
    followed_to,
    opened,
)
from companion.web.errors import refusal, refusal_body, refused, slow_down
from companion.web.settings import Settings
from companion.web.start_words import start_refusal
from companion.web.views import (
    move_attr,
    option_fields,
    roll_refusal_for,
    spoken_to,
    undo_refusal_for,
)

router = APIRouter(prefix="/api", dependencies=[SameOrigin], route_class=TextCheckedRoute)

ACTION_ID = r"^[A-Za-z0-9_-]{8,64}$"
MAX_MOVE_JSON = 4096
COOKIE_MAX_AGE = 60 * 60 * 24 * 60


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateTable(Strict):
    """A new table. Tables.create checks the names and options again, with the same
    functions as an imported record (check_players, check_options_size)."""

    game: str = Field(max_length=20, description="one of the registered games")
    options: dict[str, Any] = Field(default_factory=dict, description="the game's Options")
    players: list[Annotated[str, Field(min_length=1, max_length=PLAYER_NAME_MAX)]] = Field(
        default_factory=list,
        max_length=PLAYERS_MAX,
        description="a name per seat (default Player N); without options.players, one seat per name",
    )

    @field_validator("options")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value)) > OPTIONS_JSON_MAX:
            raise ValueError(f"options larger than {OPTIONS_JSON_MAX} bytes")
        return value


class JoinRequest(Strict):
    code: str = Field(min_length=1, max_length=16, description="the table's join code")


class ActionRequest(Strict):
    action_id: str = Field(pattern=ACTION_ID, description="client-chosen id; retries reuse it")
    expected_state_id: int | None = Field(
        default=None,
        ge=0,
        le=10_000_000,
        strict=True,  # a JSON true was taken as state 1
        description="the state id the screen showed",
    )
    move: dict[str, Any] = Field(description="the move JSON a box or button carries")
    race: bool = Field(
        default=False,
        strict=True,
        description="a hint from screens drawn before the engine declared races, with no "
        "effect: the game's turn says whether a move races (Sixes' pound), and a race move "
        "drawn earlier in the same step is judged by the rules, not refused as stale",
    )

    @field_validator("move")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value)) > MAX_MOVE_JSON:
            raise ValueError(f"a move is at most {MAX_MOVE_JSON} bytes of JSON")
        return value

    @model_validator(mode="after")
    def _race_has_state(self) -> ActionRequest:
        # without the state it was drawn at, a race move cannot be told from a late one
        if self.race and self.expected_state_id is None:
            raise ValueError("a race move needs the expected_state_id its screen showed")
        return self


class UndoRequest(Strict):
    action_id: str = Field(pattern=ACTION_ID)
    expected_state_id: int | None = Field(default=None, ge=0, le=10_000_000, strict=True)


class SeatRequest(Strict):
    # strict: a JSON true sat the device at seat 1, "1" at seat 1 too
    seat: int | None = Field(ge=0, le=99, strict=True, description="0-based seat; null: table view")


def set_device_cookie(response: Response, settings: Settings, table_id: str, token: str) -> None:
    response.set_cookie(
        cookie_name(table_id),
        token,
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="lax",
        secure=settings.secure_cookies,
    )


def games_catalogue() -> list[dict[str, object]]:
    """Every registered game (read from the registry now: registry.all_games, which raises
    GameRegistrationError for a name with no game behind it), its player range, default
    options per player count, and how the start page presents each option (for the start
    page's form)."""
    return [_catalogue_entry(game) for game in all_games()]


def _catalogue_entry(registered: object) -> dict[str, object]:
    """The start page's entry of one registered game (`games_catalogue`)."""
    assert isinstance(registered, Game)
    game = registered
    high = game.players.high if game.players.high is not None else max(game.players.low, 8)
    defaults = {}
    for count in range(game.players.low, min(high, 12) + 1):
        try:
            defaults[str(count)] = encode(game.options_for(count))
        except (Rejection, TypeError, ValueError):
            continue
    return {
        "name": game.name,
        "title": game.title,
        "low": game.players.low,
        "high": game.players.high,
        "defaults": defaults,
        "schema": game.options_schema(),
        # labels, help, "more options", input kinds
        "fields": [asdict(f) for f in option_fields(game.name, game.options_type)],
    }


def games_catalogue_json() -> str:
    """`games_catalogue` as JSON, built once for each set of registered games (6 ms a
    build, on the event loop, for every start page); a game registered later makes a
    new set, listed at once."""
    return _catalogue_json(tuple(all_games()))


@functools.cache
def _catalogue_json(games: tuple[object, ...]) -> str:
    """The JSON of `games` (the registry's Game objects, which key the cache: a game
    registered again under its name is a new object, so no stale entry is served)."""
    return json.dumps([_catalogue_entry(game) for game in games])


def state_payload(snapshot: Snapshot, seat: int | None) -> dict[str, Any]:
    """A table's state as JSON, with the legal moves of `seat`."""
    game = snapshot.game
    turn = snapshot.turn
    legal = game.legal_moves(snapshot.state, seat) if seat is not None else []
    return {
        "state_id": snapshot.state_id,
        "game": game.name,
        "players": list(snapshot.players),
        "turn": {
            "step": turn.step,
            "active": turn.active,
            "players": list(turn.players),
            "chance": turn.chance,
            "dice": list(turn.dice.colours) if turn.dice else None,
        },
        "scores": [
            {"seat": s.player, "total": s.total, "breakdown": [list(b) for b in s.breakdown]}
            for s in snapshot.scores
        ],
        "outcome": (
            {
                "reason": snapshot.outcome.reason,
                # names, as the end card says it (the engine writes "player 2 wins")
                "message": for_display(snapshot.outcome.message, snapshot.players),
                "winners": list(snapshot.outcome.winners),
            }
            if snapshot.outcome
            else None
        ),
        "finished": snapshot.finished,
        # the table the host started to play this game again (POST .../next_seat goes there)
        "next_table": snapshot.next_table,
        "state": game.state_to_json(snapshot.state),
        "legal_moves": [json.loads(move_attr(game, m)) for m in legal],
    }


def _created(table_id: str, code: str, token: str, settings: Settings) -> Response:
    body = {"table_id": table_id, "code": code, "url": f"/t/{table_id}"}
    response = Response(json.dumps(body), status_code=201, media_type="application/json")
    set_device_cookie(response, settings, table_id, token)
    return response


@router.get("/games")
async def list_games() -> list[dict[str, object]]:
    return games_catalogue()


@router.get("/games/{game}/moves")
async def move_schemas(game: Annotated[str, Path(max_length=20)]) -> dict[str, object]:
    """One JSON Schema per move kind of `game`, as every move is checked when it arrives
    (Game.move_schema, generated from the move dataclasses)."""
    rules = find_game(game)
    return {kind: rules.move_schema(kind) for kind in rules.move_kinds()}


def check_table_rate(request: Request) -> None:
    """Table creations and imports per client (address): a token bucket (Settings
    table_rate_per_s, table_burst); 429 once its burst is spent."""
    wait = request.app.state.table_limiter.take(client_key(request))
    if wait > 0:
        raise slow_down("table_rate", "new tables", wait)


@router.post("/tables", status_code=201, dependencies=[Depends(check_table_rate)])
async def create_table(body: CreateTable, tables: TablesDep, settings: SettingsDep) -> Response:
    """A new table; a refusal names options by their labels and players by their names
    (start_words), and two players of one name are refused. Names without a number of
    players (options.players) seat one player per name; a number given must match them."""
    options = body.options
    if body.players and "players" not in options:  # every game's Options has "players"
        options = {**options, "players": len(body.players)}
    try:
        table = await tables.create(body.game, options, body.players)
    except Rejection as exc:
        if exc.reason != Reason.BAD_OPTIONS or body.game not in registry.GAME_NAMES:
            raise
        raise start_refusal(exc, body.game, body.players) from exc
    token = await table.add_device(host=True)
    return _created(table.table_id, table.code, token, settings)


@router.post(
    "/import",
    status_code=201,
    dependencies=[Depends(check_table_rate)],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def import_record(request: Request, tables: TablesDep, settings: SettingsDep) -> Response:
    """A new table continuing a game record (docs/game-records.md). The record is read,
    checked and replayed off the event loop (Tables.import_record), at most
    Settings.max_import_bytes and max_record_actions long; one client address holds at
    most half of the import slots (max_imports_waiting) and imports at most
    import_actions_per_hour actions an hour. A record its table's host's device exported
    (`from_table`, and this request holds that table's host cookie) leaves that table's
    screens a pointer here once its game is over (Tables.point_continuation)."""
    client = client_key(request)
    budget: ActionBudget = request.app.state.import_budget
    left = budget.left(client)
    if left == 0:  # spent: refused before the body is read
        raise _over_budget(budget, client)
    refused = tables.take_import_slot(client, settings.max_imports_waiting)
    if refused is not None:
        raise _imports_busy(refused)
    # a record longer than what is left is refused once parsed, before it is replayed
    most = min(settings.max_record_actions, left)
    try:
        body = await _import_body(request, settings)
        imported = await tables.import_record(body, most, _import_admission(budget, client))
    except RecordError as exc:
        if exc.rejection.rule == "too_long" and most < settings.max_record_actions:
            raise _over_budget(budget, client) from exc
        rejection = exc.rejection
        raise refusal(422, rejection.reason, rejection.rule, str(exc), index=exc.index) from exc
    finally:
        tables.free_import_slot(client)
    token = await tables.add_device(imported.table_id, host=True)
    if imported.from_table is not None:  # its host's device: the old screens point here
        held = request.cookies.get(cookie_name(imported.from_table))
        await tables.point_continuation(imported, held)
    return _created(imported.table_id, imported.code, token, settings)


def _imports_busy(rule: str) -> HTTPException:
    """The 429 of an import that finds no slot: all taken, or half taken by its address."""
    message = (
        "this device's imports already hold half of the import slots; try again when one "
        "of them is done"
        if rule == "imports_busy_yours"
        else "other imports are being read; try again in a few seconds"
    )
    return refusal(429, "too_many_requests", rule, message, {"Retry-After": "2"})


async def _import_body(request: Request, settings: Settings) -> bytes:
    """The record's bytes; 413 over max_import_bytes (an announced length over it is
    refused before the body is read)."""
    length = request.headers.get("content-length", "")
    too_large = length.isdigit() and int(length) > settings.max_import_bytes
    body = b"" if too_large else await request.body()
    if too_large or len(body) > settings.max_import_bytes:
        message = f"a game record is at most {settings.max_import_bytes} bytes"
        raise refusal(413, "malformed", "too_large", message)
    return body


def _import_admission(budget: ActionBudget, client: str) -> Callable[[int], None]:
    """Tables.import_record's `admit`: a checked record's actions are spent from its
    address's hourly budget, or it is refused (429 import_actions) and not stored (two
    imports of one address read at once may each have fitted alone)."""

    def admit(actions: int) -> None:
        if budget.wait(client, actions) > 0:
            raise _over_budget(budget, client, actions)
        budget.spend(client, actions)

    return admit


def _over_budget(budget: ActionBudget, client: str, actions: int | None = None) -> HTTPException:
    """The 429 of an address past its imported actions an hour: try again when what is
    left holds the record (`actions`, when known), else when anything more is left."""
    left = budget.left(client)
    what = f"imported actions (at most {budget.limit} an hour; {left} left"
    what += f", this record holds {actions})" if actions is not None else ")"
    return slow_down("import_actions", what, budget.wait(client, actions or left + 1))


def _too_many_codes(attempt: JoinAttempt) -> HTTPException:
    """The 429 of a join code not checked: this device's wrong codes (join_limit), or every
    device's of the hour with one of its own among them (join_limit_all)."""
    retry = int(attempt.wait_s) + 1
    if attempt.crowded:
        rule = "join_limit_all"
        message = (
            "many wrong codes were tried on this server in the last hour, this device's "
            f"among them; try again in {retry} s"
        )
    else:
        rule, message = "join_limit", f"too many wrong codes; try again in {retry} s"
    return refusal(429, "too_many_attempts", rule, message, {"Retry-After": str(retry)})


async def join_table(
    code_text: str, request: Request, tables: TablesDep, limiter: LimiterDep
) -> tuple[Table, str]:
    """The table of a join code and this browser's device token for it: the one it holds,
    or a new one (403 table_full once the table holds Settings.max_table_devices); counts
    wrong codes per client and answers 429 when they come too fast."""
    client = client_key(request)
    attempt = limiter.begin(client)  # counted now, before any await
    if attempt.wait_s > 0:
        raise _too_many_codes(attempt)
    code = normalise_code(code_text)
    table_id = await tables.table_id_for_code(code) if code.isalnum() else None
    table = await opened(tables, table_id, request) if table_id else None
    if table is None:
        message = f"no table has the code {code_text.strip()[:16]!r}"
        raise refusal(404, "unknown_code", "join_code", message)
    limiter.forgive(client, attempt.stamp)
    if table.closed_to_devices():
        message = "this game finished a while ago; its result is in the history"
        raise refusal(410, Reason.GAME_OVER, "table_closed", message)
    existing = request.cookies.get(cookie_name(table.table_id))
    if existing is not None and table.viewer(existing) is not None:
        return table, existing
    return table, await new_player_device(table, request.app.state.settings)


async def new_player_device(table: Table, settings: Settings) -> str:
    """A new device token for a player's browser joining `table`, or 403 (table_full) when
    the table already holds `settings.max_table_devices` devices."""
    try:
        return await table.add_device(host=False, limit=settings.max_table_devices)
    except Rejection as exc:
        raise refused(403, exc) from exc


@router.post("/join")
async def join(
    body: JoinRequest,
    request: Request,
    tables: TablesDep,
    limiter: LimiterDep,
    settings: SettingsDep,
) -> Response:
    table, token = await join_table(body.code, request, tables, limiter)
    viewer = table.viewer(token)
    assert viewer is not None
    response = Response(
        json.dumps({"table_id": table.table_id, "seat": viewer.seat, "host": viewer.host}),
        media_type="application/json",
    )
    set_device_cookie(response, settings, table.table_id, token)
    return response


@router.get("/tables/{table_id}/state")
async def table_state(access: ApiAccess) -> dict[str, Any]:
    payload = state_payload(access.table.snapshot, access.viewer.seat)
    payload["viewer"] = {"seat": access.viewer.seat, "host": access.viewer.host}
    return payload


async def perform_action(access: ApiAccess, body: ActionRequest) -> dict[str, Any]:
    """Shared by the HTTP route and the WebSocket: decode, check who acts, act. A roll is
    the next throw: it makes first the moves the engine says a throw implies now (the
    table's automatic passes, Sixto's re-roll: `Table.act_throw`)."""
    table = access.table
    move = table.game.move_from_json(body.move)
    snapshot = table.snapshot
    by = actor_for(access.viewer, move, snapshot.turn, snapshot.throw)
    try:
        token, expected = access.token, body.expected_state_id
        if isinstance(move, Roll):
            result = await table.act_throw(move, by, body.action_id, expected, token=token)
        else:
            result = await table.act(move, by, body.action_id, expected, token=token)
    except Rejection as exc:
        # the engine says "you" and "player 3"; the player reads the names the table knows
        # (a refusal of the seat itself speaks to this device, not to the seat's player)
        mover = None if isinstance(move, Roll) or exc.rule == "own_sheet_only" else move.player
        message = roll_refusal_for(table.snapshot, access.viewer, exc.message)  # who enters it
        text = spoken_to(message, snapshot.players, mover, access.viewer.seat)
        raise Rejection(exc.reason, exc.rule, text) from exc
    return {"state_id": result.state_id, "duplicate": result.duplicate}


async def perform_undo(access: ApiAccess, body: UndoRequest) -> dict[str, Any]:
    """Shared by the HTTP route and the WebSocket. A refusal names the players by the
    names the table knows (`acted_on`: "Ann's move since needs your last action"), as a move's does."""
    table = access.table
    try:
        result = await table.undo(
            access.viewer.by, body.action_id, body.expected_state_id, token=access.token
        )
    except Rejection as exc:
        message = undo_refusal_for(table.snapshot, access.viewer, exc.message)  # the host's words
        text = spoken_to(message, table.snapshot.players, None, access.viewer.seat)
        raise Rejection(exc.reason, exc.rule, text) from exc
    return {"state_id": result.state_id, "duplicate": result.duplicate}


def too_fast(limiter: DeviceRateLimiter, token: str) -> dict[str, Any] | None:
    """The refusal for a device over its rate (see DeviceRateLimiter), or None."""
    wait = limiter.take(hash_token(token))
    if wait <= 0:
        return None
    message = f"this device sends too fast; wait {wait:.1f} s"
    return refusal_body("too_many_requests", "device_rate", message, retry_after=round(wait, 2))


def sends_too_fast(body: dict[str, Any]) -> HTTPException:
    """The 429 of too_fast's refusal body, with its Retry-After."""
    retry = str(int(body["retry_after"]) + 1)
    return HTTPException(status_code=429, detail=body, headers={"Retry-After": retry})


def check_rate(request: Request, access: ApiAccess) -> None:
    slowed = too_fast(request.app.state.device_limiter, access.token)
    if slowed is not None:
        raise sends_too_fast(slowed)


@router.post("/tables/{table_id}/actions", dependencies=[Depends(check_rate)])
async def act(body: ActionRequest, access: ApiAccess) -> dict[str, Any]:
    return await perform_action(access, body)


@router.post("/tables/{table_id}/undo", dependencies=[Depends(check_rate)])
async def undo(body: UndoRequest, access: ApiAccess) -> dict[str, Any]:
    return await perform_undo(access, body)


@router.post("/tables/{table_id}/seat", dependencies=[Depends(check_rate)])
async def take_seat(body: SeatRequest, access: ApiAccess) -> dict[str, Any]:
    """Sit at `seat` (or watch: null). Counted against the device's rate as actions are;
    the seat the device already has stores nothing and redraws no screen."""
    await access.table.take_seat(access.token, body.seat)
    return {"seat": body.seat}


def require_host(access: ApiAccess) -> None:
    if not access.viewer.host:
        raise Rejection(Reason.NOT_ALLOWED, "host_only", "only the host's device may do this")


@router.post("/tables/{table_id}/seats/{seat}/free")
async def free_seat(
    seat: Annotated[int, Path(ge=0, le=99, description="0-based seat")], access: ApiAccess
) -> dict[str, Any]:
    require_host(access)
    await access.table.free_seat(seat)
    return {"freed": seat}


@router.post("/tables/{table_id}/end")
async def end_game(access: ApiAccess) -> dict[str, Any]:
    require_host(access)
    await access.table.end_by_host()
    return {"finished": True}


def next_game_url(table_id: str, viewer: Viewer) -> str:
    """Where a device carried to the next game goes: its sheet, the host's table view, or
    (a screen that only watched, a TV) the scoreboard."""
    if viewer.seat is not None:
        return f"/t/{table_id}/sheet"
    return f"/t/{table_id}" if viewer.host else f"/t/{table_id}/board"


def _carried(new: Table, token: str, viewer: Viewer, settings: Settings, status: int) -> Response:
    body = {
        "table_id": new.table_id,
        "code": new.code,
        "seat": viewer.seat,
        "host": viewer.host,
        "url": next_game_url(new.table_id, viewer),
    }
    response = Response(json.dumps(body), status_code=status, media_type="application/json")
    set_device_cookie(response, settings, new.table_id, token)
    return response


def check_next_game_rate(request: Request) -> None:
    """`check_table_rate` for the next game, spent only when it is made: 429 that says the
    next game was not started and why."""
    wait = request.app.state.table_limiter.take(client_key(request))
    if wait > 0:
        raise slow_down("table_rate", "new tables", wait, "the next game was not started")


@router.post("/tables/{table_id}/play_again", status_code=201)
async def play_again(
    access: ApiAccess, request: Request, tables: TablesDep, settings: SettingsDep
) -> Response:
    """The host plays a finished game again: a new table of the same game and options, the
    same names in the same seats (Tables.play_again); the host's device is its host (and
    keeps its seat, if it had one). Every device of this table is shown the way there on
    its finished screen (`next_seat`). 201 when made, 200 when an earlier tap made it.
    Making it counts against the device's new tables (429 `table_rate`, "the next game was
    not started: ..."); a tap that finds it made does not."""
    require_host(access)
    new, made = await tables.play_again(access.table, admit=lambda: check_next_game_rate(request))
    held = request.cookies.get(cookie_name(new.table_id))
    token, viewer = await new.carry_over(access.viewer, access.token, held)
    return _carried(new, token, viewer, settings, 201 if made else 200)


NOT_AT_THIS_TABLE = (
    "only a device that was at this game may take its seat in the next one this way; "
    "ask the host for the next game's join code"
)


@router.post("/tables/{table_id}/next_seat")
async def next_seat(
    table_id: Annotated[str, Path(max_length=64)],
    request: Request,
    tables: TablesDep,
    settings: SettingsDep,
) -> Response:
    """A device of this finished game takes its place at the game the host started to play
    it again, in one tap and without a join code: its same seat (a watching screen: a
    viewer, sent to the scoreboard; the host's device: its host). Only a device holding
    this table's valid token (403 `not_at_this_table` otherwise: the network is shared);
    404 `no_next_game` before the host started one; 403 `seat_taken` when another device
    sits there already; 403 `joined_after_next_game` for a device that joined this game
    only after the next one was started (its old code joins it, but carries no one). A
    device of this game makes one device there: asking again (a double tap, its new cookie
    lost) gets the same one, and once the host freed it there 403 `carried_once`
    (Table.carry_over). A next game that can no longer be opened: 409
    `next_game_unopenable`, and the host's tap starts another (201, `next_game_for`)."""
    table = await opened(tables, table_id, request)
    token = request.cookies.get(cookie_name(table_id), "")
    if table is None:  # deleted from the history: a place kept there, or none
        new, token, now = await carry_kept_place(request, tables, settings, table_id, token)
        return _carried(new, token, now, settings, 200)
    viewer = table.viewer(token)
    if viewer is None:
        raise refusal(403, Reason.NOT_ALLOWED, "not_at_this_table", NOT_AT_THIS_TABLE)
    slowed = too_fast(request.app.state.device_limiter, token)
    if slowed is not None:
        raise sends_too_fast(slowed)
    if table.next_table_id is None:
        message = "the host has not started a next game from this one"
        raise refusal(404, Reason.NOT_ALLOWED, "no_next_game", message)
    new, made = await next_game_for(tables, table, viewer, request)
    held = request.cookies.get(cookie_name(new.table_id))
    token, now = await new.carry_over(viewer, token, held, settings.max_table_devices)
    return _carried(new, token, now, settings, 201 if made else 200)


async def carry_kept_place(
    request: Request, tables: Tables, settings: Settings, deleted_id: str, token: str
) -> tuple[Table, str, Viewer]:
    """A device of the finished game `deleted_id`, which the history deleted after the host
    started the next game from it, takes the place kept for it there (Tables.kept_place:
    one the next game would have carried, its token still in its time); its table, token
    and what it is there. Any other device: 403 `not_at_this_table`, as for a game still
    stored, and the next game's code is told to no one who could not have reached it."""
    kept = await tables.kept_place(deleted_id, token)
    if kept is None:
        return await followed_already(request, tables, deleted_id)
    slowed = too_fast(request.app.state.device_limiter, token)
    if slowed is not None:
        raise sends_too_fast(slowed)
    next_id, before = kept
    new = await opened(tables, next_id, request)
    if new is None:
        message = "the next game is no longer stored; ask the host for a new game's join code"
        raise refusal(404, Reason.NOT_ALLOWED, "no_next_game", message)
    held = request.cookies.get(cookie_name(new.table_id))
    token, now = await new.carry_over(before, token, held, settings.max_table_devices, kept=True)
    return new, token, now


async def followed_already(
    request: Request, tables: Tables, deleted_id: str
) -> tuple[Table, str, Viewer]:
    """A device of the deleted game `deleted_id` that had followed the next game before the
    delete kept no place there (its own token opens it), though its screen still offers
    "Next game ready": it goes on by the token it holds there (deps.followed_to). Any
    other: 403."""
    followed = await followed_to(request, tables, deleted_id)
    if followed is None:
        raise refusal(403, Reason.NOT_ALLOWED, "not_at_this_table", NOT_AT_THIS_TABLE)
    return followed


async def next_game_for(
    tables: Tables, finished: Table, viewer: Viewer, request: Request
) -> tuple[Table, bool]:
    """The game that plays `finished` again, for a device of it; whether this request made
    it. One that can no longer be opened (damaged, or no longer stored) is started again
    by the host's tap (Tables.play_again makes another in its place, counted as Play again
    is); any other device is told so, and to ask the host (409 `next_game_unopenable`):
    before, the button every finished screen shows led nowhere, the host's too."""
    assert finished.next_table_id is not None
    try:
        new = await opened(tables, finished.next_table_id, request)
    except TableLoadError as exc:
        why = str(exc)
    else:
        if new is not None:
            return new, False
        why = "it is no longer stored"
    if viewer.host:
        return await tables.play_again(finished, admit=lambda: check_next_game_rate(request))
    message = (
        f"the next game cannot be opened ({why}); ask the host to tap the next game's button "
        "on their screen: that starts another"
    )
    raise refusal(409, "damaged", "next_game_unopenable", message)


class AutoPassRequest(Strict):
    on: bool = Field(description="the next roll passes for those who have not acted")


@router.post("/tables/{table_id}/auto_pass")
async def auto_pass(body: AutoPassRequest, access: ApiAccess) -> dict[str, bool]:
    """The table's option: the next roll (camera or typed) closes an open step for those
    who have not acted (Qwixx's white sum, Sixto's crossing); on by default."""
    require_host(access)
    await access.table.set_auto_pass(body.on)
    return {"auto_pass": body.on}


@router.get("/tables/{table_id}/record", dependencies=[ReadRate])
async def export_record(access: ApiAccess, pages: PagesDep) -> Response:
    """The game record, encoded on the page thread and kept per state (long_pages.py): a
    10,000-action record is 2 MB of JSON."""
    table = access.table
    state_id = table.snapshot.state_id
    record = table.record_builder()
    body = await pages.kept(
        # the host's end changes the record (ended_by_host) but not the state id
        ("record", table.table_id, state_id, table.snapshot.ended_by_host),
        lambda: json.dumps(record(), indent=1).encode("utf-8"),
    )
    name = f"{table.game.name}-{table.code}-{state_id}.json"
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
