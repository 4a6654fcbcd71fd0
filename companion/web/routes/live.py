"""The live table's pages and API: the camera picture and status of a table, the host's
camera controls (attach, mode, fix or add a die, re-throw, restart), the active player's
confirmation, roll photos, the game log with its photos, dice statistics and calibration.

Thin handlers: the work is in companion.table.camera_hub.CameraHub (app.state.camera); every
table route sits behind the table's access check (its device cookie)."""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from companion.live.stats import Fairness, report_from_counts
from companion.rules.base import COLOURS, Game, Move, Reason, Rejection
from companion.rules.registry import find_game, standard_dice_sets
from companion.rules.session import AUTO, CAMERA, implied_before, undo_target
from companion.table.access import hash_token
from companion.table.camera_hub import CameraHub
from companion.table.dice import effective_entries, roll_of, taken_back
from companion.table.held_reading import answer_rights
from companion.table.roll_intake import who_answers
from companion.table.store import LogEntry, implied_seqs
from companion.table.tables import TableLoadError, Tables
from companion.table.text import printable
from companion.table.words import score_text, with_names
from companion.web.deps import (
    ApiAccess,
    PageAccess,
    PagesDep,
    ReadRate,
    SameOrigin,
    TablesDep,
    TemplatesDep,
    TextCheckedRoute,
    cookie_name,
    is_local,
    page_access,
    require_local,
)
from companion.web.long_pages import render_page
from companion.web.views import colour_class, describe_move, taken_back_words

logger = logging.getLogger(__name__)
LOCAL_CALIBRATION = "calibrate on the machine the camera is connected to"
router = APIRouter(route_class=TextCheckedRoute)
NO_STORE = {"Cache-Control": "no-store"}


def get_hub(request: Request) -> CameraHub:
    hub: CameraHub = request.app.state.camera
    return hub


HubDep = Annotated[CameraHub, Depends(get_hub)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModeRequest(Strict):
    mode: Literal["auto", "sure", "confirm"] = Field(
        description="auto: apply a matching roll at once; sure: apply the rolls the camera is "
        "sure of and ask about the unsure dice; confirm: the active player confirms each roll"
    )


class HeldRequest(Strict):
    id: str = Field(min_length=1, max_length=32, description="the held reading's id")


class ConfirmRequest(HeldRequest):
    # StrictInt: a JSON true (or "1") is no die value (it was taken as a 1)
    roll: list[tuple[str, StrictInt]] | None = Field(
        default=None,
        max_length=64,
        description="the dice the person saw, as [colour, value] pairs: refused when the "
        "question holds other dice now (never applies dice nobody saw)",
    )


class AddDie(Strict):
    x: float = Field(ge=0, le=100_000, description="its centre: pixels from the frame's left")
    y: float = Field(ge=0, le=100_000, description="its centre: pixels from the frame's top")
    value: int = Field(ge=1, le=6, strict=True, description="its value")
    colour: str = Field(min_length=1, max_length=20, description="its colour")


class FixRequest(HeldRequest):
    """Either `index` (correct or drop a die of the reading) or `add` (a die the camera
    missed, where the host tapped on the held picture)."""

    # strict, as the seat and the state id: a JSON true was die 1, or a 1
    index: int | None = Field(
        default=None, ge=0, le=63, strict=True, description="which die of the reading"
    )
    value: int | None = Field(default=None, ge=1, le=6, strict=True, description="its value")
    colour: str | None = Field(default=None, max_length=20, description="its colour")
    remove: bool = Field(default=False, description="not a die: drop it")
    add: AddDie | None = Field(default=None, description="a missed die to add (not with index)")

    @model_validator(mode="after")
    def one_die(self) -> FixRequest:
        if self.index is not None and self.add is not None:
            raise ValueError("give index (fix a die) or add (a missed die), not both")
        if self.index is None and self.add is None:
            raise ValueError("give index (fix a die) or add (a missed die)")
        if self.add is not None and (
            self.value is not None or self.colour is not None or self.remove
        ):
            raise ValueError("with add, value and colour go inside add (and remove is not used)")
        return self


class CalibrationRequest(Strict):
    name: str = Field(min_length=1, max_length=48, description="file name in calibration/")
    dice_set: str = Field(max_length=20, description="the set shown: qwixx, sixto or sixes")
    play_area: tuple[float, float, float, float] | Literal["auto"] | None = Field(
        default=None,
        description='fractions x0, y0, x1, y1; none: the whole picture; "auto": around the '
        "dice in view",
    )
    frames: int = Field(default=5, ge=1, le=30, description="recent frames to measure")

    @field_validator("play_area")
    @classmethod
    def within_the_picture(cls, area: object) -> object:
        """Fractions of the picture, left before right and top before bottom (as a stored
        calibration's must be): NaN, an infinity or an area inside out is refused here,
        naming the field, not measured."""
        if isinstance(area, tuple):
            x0, y0, x1, y1 = area
            if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
                raise ValueError("fractions 0..1 of the picture with x0 < x1 and y0 < y1")
        return area


class UseCalibration(Strict):
    name: str = Field(min_length=1, max_length=48)


def require_host(access: ApiAccess) -> None:
    if not access.viewer.host:
        raise Rejection(Reason.NOT_ALLOWED, "host_only", "only the host's device may do this")


# -- the camera of a table ---------------------------------------------------------------
@router.get("/t/{table_id}/camera.jpg")
async def camera_picture(access: ApiAccess, hub: HubDep) -> Response:
    """The latest camera frame with every die outlined, value and colour (JPEG); only for
    the table the camera serves: anyone may start a table, and the camera shows another
    table's game and players. Not on the server machine either: beside "this table does
    not get camera rolls" the other table's live picture read as this table's (the
    calibration page shows the camera's picture there)."""
    if not hub.feed.attached_to(access.table.table_id):
        raise HTTPException(status_code=404, detail="the camera serves another table")
    jpeg = hub.runtime.preview_jpeg()
    if jpeg is None:
        raise HTTPException(status_code=404, detail="no camera picture yet")
    return Response(jpeg, media_type="image/jpeg", headers=NO_STORE)


@router.get("/t/{table_id}/camera/held.jpg")
async def held_picture(access: ApiAccess, hub: HubDep, thumb: bool = False) -> Response:
    """The picture of the reading held for a person, its problem (or unsure) dice marked;
    `thumb`: small and cropped to the dice (the question in the banner)."""
    jpeg = hub.held.picture(access.table.table_id, thumbnail=thumb)
    if jpeg is None:
        raise HTTPException(status_code=404, detail="no camera reading is held")
    return Response(jpeg, media_type="image/jpeg", headers=NO_STORE)


@router.get("/t/{table_id}/photos/{action_id}.jpg")
async def roll_photo(action_id: str, access: ApiAccess, tables: TablesDep) -> Response:
    if len(action_id) > 80:
        raise HTTPException(status_code=404, detail="no such photo")
    jpeg = await asyncio.to_thread(tables.store.photo, access.table.table_id, action_id)
    if jpeg is None:
        raise HTTPException(status_code=404, detail="no photo of that action")
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "max-age=86400"})


@router.get("/api/tables/{table_id}/camera")
async def camera_status(request: Request, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    body = await hub.status_json(access.table)
    turn = access.table.snapshot.turn
    viewer = access.viewer
    reading = hub.held.current(access.table)
    # what this device may do about the held reading: the checks /camera/confirm,
    # /camera/fix and /camera/dismiss make, so the page repeats none of them
    kind = reading.kind if reading is not None else None
    rights = answer_rights(kind, viewer.host, viewer.seat, turn.active)
    body["viewer"] = {"host": viewer.host, "seat": viewer.seat, **rights}
    # what the host's "Use the camera at this table" would be refused with (None: it
    # works): the button says so instead of offering what cannot work
    held = viewer.host and not is_local(request)
    body["take_back_refused"] = hub.held_elsewhere(access.table.table_id) if held else None
    body["state_id"] = access.table.snapshot.state_id
    # whom the camera's question waits for, by name (the player whose step is open, not
    # whoever threw: the camera cannot know; the host), for the other devices' line
    body["answered_by"] = who_answers(access.table, kind) if kind is not None else []
    return body


@router.post("/api/tables/{table_id}/camera/attach", dependencies=[SameOrigin])
async def attach_camera(request: Request, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    require_host(access)
    await hub.take_for(access.table.table_id, on_server=is_local(request))
    return {"attached": True}


@router.post("/api/tables/{table_id}/camera/mode", dependencies=[SameOrigin])
async def camera_mode(body: ModeRequest, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    require_host(access)
    await hub.feed.set_mode(access.table.table_id, body.mode)
    return {"mode": body.mode}


@router.post("/api/tables/{table_id}/camera/start", dependencies=[SameOrigin])
async def start_before_seats_taken(access: ApiAccess, hub: HubDep) -> dict[str, bool]:
    """The host's "Start the camera now": the demo camera throws, or the video or folder of
    photos plays, before every seat is taken."""
    require_host(access)
    hub.start_before_seats_taken(access.table)
    return {"started": True}


@router.post("/api/tables/{table_id}/camera/restart", dependencies=[SameOrigin])
async def camera_restart(request: Request, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    require_host(access)
    if not is_local(request) and not hub.feed.attached_to(access.table.table_id):
        raise Rejection(
            Reason.NOT_ALLOWED,
            "camera_elsewhere",
            "the camera serves another table: only that table's host or the server machine "
            "restarts it",
        )
    await asyncio.to_thread(hub.runtime.restart)
    return {"restarted": hub.enabled}


@router.post("/api/tables/{table_id}/camera/confirm", dependencies=[SameOrigin])
async def camera_confirm(body: ConfirmRequest, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    # who may confirm which reading the hub checks under its lock (`confirm_refusal`)
    seq = await hub.confirm(
        access.table, body.id, body.roll, device=access.viewer, token=access.token
    )
    return {"applied": seq is not None, "state_id": seq}


@router.post("/api/tables/{table_id}/camera/fix", dependencies=[SameOrigin])
async def camera_fix(body: FixRequest, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    # who may make which change the hub checks under its lock (`fix_refusal`)
    viewer, token = access.viewer, access.token
    if body.add is not None:
        add = body.add
        if add.colour not in COLOURS:
            raise Rejection(
                Reason.MALFORMED, "add.colour", f"add.colour {add.colour!r} is not a die colour"
            )
        return await hub.add(
            access.table, body.id, add.x, add.y, add.value, add.colour, device=viewer, token=token
        )
    if body.colour is not None and body.colour not in COLOURS:
        raise Rejection(Reason.MALFORMED, "colour", f"{body.colour!r} is not a die colour")
    assert body.index is not None  # FixRequest.one_die
    return await hub.fix(
        access.table,
        body.id,
        body.index,
        body.value,
        body.colour,
        body.remove,
        device=viewer,
        token=token,
    )


@router.post("/api/tables/{table_id}/camera/dismiss", dependencies=[SameOrigin])
async def camera_dismiss(body: HeldRequest, access: ApiAccess, hub: HubDep) -> dict[str, Any]:
    # only the host's (the camera state's may_rethrow): the hub checks under its lock
    await hub.dismiss(access.table, body.id, device=access.viewer, token=access.token)
    return {"dismissed": True}


# -- the game's log with photos ----------------------------------------------------------
def log_words(
    game: Game[object, object],
    players: tuple[str, ...],
    entry: LogEntry,
    move: Move | None,
    throw_by: str | None = None,
    met: object = None,
) -> dict[str, object]:
    """Who made a log entry and what it did, in words. A move the next throw made for a
    player (`throw_by`: who made that throw's roll; an automatic pass, Sixto's re-roll) is
    made by nobody's tap: it is "automatic", names that player and says why ("Ann: Re-roll
    all dice (the camera saw a new throw)"; it read "Ann: Re-roll all dice" as Ann's tap).
    `move`: the entry's move as `replay_log` decoded it (None: an undo, or a move it did not
    reach, which reads as stored); `met`: the state it met, where its words depend on it."""
    if entry.kind == "undo":
        text = "undo"
    elif move is None:  # as stored: the replay stopped before it (`LogReplay.damaged`)
        text = printable(str(entry.move)) if entry.move is not None else "(unreadable move)"
    else:
        text = with_names(describe_move(game, move, met), players)
    by = entry.by
    who = players[int(by)] if by.isdigit() and int(by) < len(players) else by
    automatic = by == AUTO or throw_by is not None
    if automatic and move is not None and 0 <= move.player < len(players):
        who = "automatic"
        text = f"{players[move.player]}: {text} ({why_implied(by, throw_by)})"
    return {"by": who, "text": text, "automatic": automatic}


def why_implied(by: str, throw_by: str | None) -> str:
    """Why a throw made this move: a pass because the next roll came; a player's move
    (Sixto's re-roll) because the camera saw a new throw, or a new roll was entered."""
    if by == AUTO:
        return "the next roll came"
    return "the camera saw a new throw" if throw_by == CAMERA else "a new roll was entered"


def throws_by(log: list[LogEntry]) -> dict[int, str]:
    """For each entry a throw implied (store.implied_seqs: its action id is its roll's with
    `-seq`), who made that throw's roll."""
    implied = implied_seqs(log)
    rolls = {e.action_id: e.by for e in log if e.kind == "move"}
    made = {}
    for entry in log:
        if entry.seq in implied:
            made[entry.seq] = rolls.get(entry.action_id.rsplit("-", 1)[0], AUTO)
    return made


def undid_text(
    game: Game[object, object],
    players: tuple[str, ...],
    undo: LogEntry,
    target: LogEntry,
    replay: LogReplay,
) -> str:
    """An undo in words by what it took back ("Undid: Cross purple box 5"); one that took back
    another's action names whose ("Undid Ann's: Cross purple box 5"). A penalty that action
    cost its player (`replay`'s costs) is named as the undo's news names it ("Undid: Pass
    (-5 penalty)")."""
    move, met = replay.moves.get(target.seq), replay.met.get(target.seq)
    undone = log_words(game, players, target, move, met=met)
    roll = roll_of(target)
    penalty = replay.costs.get(target.seq, 0)
    if roll is not None:  # as its struck-through row shows it: the dice
        undone["text"] = "roll " + ", ".join(f"{d.colour} {d.value}" for d in roll.dice)
    elif penalty and move is not None:
        undone["text"] = taken_back_words(game, move, met, penalty)
    if target.by == undo.by or undone["automatic"]:  # an automatic move names its player
        return f"Undid: {undone['text']}"
    return f"Undid {undone['by']}'s: {undone['text']}"


@dataclass(frozen=True, slots=True)
class LogReplay:
    """What one walk of a log found (`replay_log`), for every row of its page: each move
    decoded once (by seq), the state it met when it was made (undone moves too: where its
    words depend on it, a Sixis take names the side its card showed then), the penalty it
    cost its player (`Game.penalty` on that state: an undone pass's struck-through row and
    its undo row name it), and the first entry the engine refuses (its seq and why), after
    which the walk stops: those rows read as stored."""

    moves: dict[int, Move] = field(default_factory=dict)
    met: dict[int, object] = field(default_factory=dict)
    costs: dict[int, int] = field(default_factory=dict)
    damaged: tuple[int, str] | None = None


def replay_log(game: Game[object, object], options: object, log: list[LogEntry]) -> LogReplay:
    """Replay `log` once from the game's setup by the session's undo rule (`undo_target`):
    an undo of an action others came after plays theirs again (`LogReplay`). A move that no
    longer decodes or applies ends the walk (`LogReplay.damaged`), never the page. It
    replayed the log and then decoded every move again to name its penalty (outside the
    engine's try: a damaged entry failed the page), and again for each row's words."""
    implied = implied_seqs(log)

    def is_implied(entry: LogEntry) -> bool:
        return entry.seq in implied

    found = LogReplay()
    start = game.setup(options)
    standing: list[LogEntry] = []
    after: list[object] = []  # the state after each standing entry
    for entry in log:
        try:
            if entry.kind == "move":
                move = entry.move_in(game)
                met = after[-1] if after else start
                after.append(game.play(met, move))
                found.moves[entry.seq], found.met[entry.seq] = move, met
                penalty = int(game.penalty(met, move))
                if penalty:
                    found.costs[entry.seq] = penalty
                standing.append(entry)
                continue
            target = undo_target(standing, entry.by, is_implied)
            if target is None:
                continue
            first = target - implied_before(standing, target, is_implied)
            del standing[first : target + 1], after[first:]
            for kept in standing[first:]:  # those after it, played again without it
                after.append(game.play(after[-1] if after else start, found.moves[kept.seq]))
        except Rejection as exc:
            return replace(found, damaged=(entry.seq, exc.message))
    return found


@dataclass(frozen=True, slots=True)
class LogTable:
    """What the log page says of its table besides the log: an open table's, or one whose
    stored log no longer replays, read from its stored row (`damaged_log_table`)."""

    table_id: str
    code: str
    game: Game[object, object]
    options: object
    players: tuple[str, ...]
    ended_by_host: bool = False
    ended_on_server: bool = False
    damage: str | None = None  # why the table cannot be opened: the page shows it read-only


# a log page shows at most this many entries, the newest unless older ones are asked for: a
# 10,000-entry game's whole log was one 2.5 MB page, a long wait on a phone on a café's Wi-Fi
LOG_PAGE_ENTRIES = 200
# `to`: the number of the last entry a log page shows (none: the newest)
LastEntry = Annotated[int | None, Query(ge=1, le=1_000_000_000)]


@dataclass(frozen=True, slots=True)
class LogWindow:
    """The entries a log page shows, numbers `first` to `last` (from 1; seq is the
    entry's place in the log) of `total`."""

    first: int
    last: int
    total: int

    def links(self, path: str) -> list[dict[str, str]]:
        """The page's links to the other entries: the oldest, the older and the newer
        LOG_PAGE_ENTRIES, the newest (each only where it shows entries this page does not)."""
        links = []
        if self.first > 1 + LOG_PAGE_ENTRIES:
            links.append(("log-oldest", "Oldest", f"{path}?to={LOG_PAGE_ENTRIES}"))
        if self.first > 1:
            links.append(("log-older", "Older entries", f"{path}?to={self.first - 1}"))
        newer = self.last + LOG_PAGE_ENTRIES
        if self.last < self.total:
            href = f"{path}?to={newer}" if newer < self.total else path
            links.append(("log-newer", "Newer entries", href))
        if newer < self.total:
            links.append(("log-newest", "Newest", path))
        return [{"id": id_, "text": text, "href": href} for id_, text, href in links]


def log_window(total: int, to: int | None) -> LogWindow | None:
    """The entries of a log of `total` a page shows: LOG_PAGE_ENTRIES up to entry `to`
    (None: the newest); None when `to` is past the log's end."""
    if to is not None and to > total:
        return None
    last = total if to is None else to
    return LogWindow(max(1, last - LOG_PAGE_ENTRIES + 1), last, total)


@router.get("/t/{table_id}/log", response_class=HTMLResponse, dependencies=[ReadRate])
async def game_log(
    request: Request,
    table_id: str,
    tables: TablesDep,
    templates: TemplatesDep,
    pages: PagesDep,
    to: LastEntry = None,
) -> Response:
    """The game's actions in order, each camera roll with its photo, LOG_PAGE_ENTRIES at
    once up to entry `to` (the newest at first; a `to` past the end goes to the newest):
    read, drawn and kept per state on the page thread (long_pages.py). A table whose
    stored log no longer replays (it cannot be opened: every other page answers 409
    damaged) shows its log as stored to its devices, naming the damaged entry."""
    newest = RedirectResponse(f"/t/{table_id}/log", status_code=303)
    try:
        access = await page_access(request, table_id, tables)
    except TableLoadError as damage:
        about = await damaged_log_table(request, tables, table_id, damage)
        body = await pages.run(lambda: log_page(request, templates, tables, about, to))
        return newest if body is None else HTMLResponse(body)
    table, snapshot = access.table, access.table.snapshot
    if log_window(snapshot.state_id, to) is None:
        return newest
    about = LogTable(
        table.table_id,
        table.code,
        table.game,
        table.session.options,
        snapshot.players,
        snapshot.ended_by_host,
        snapshot.ended_on_server,
    )
    photos = await asyncio.to_thread(tables.store.photo_ids, table.table_id)

    def build() -> bytes:
        body = log_page(request, templates, tables, about, to, photos, snapshot.state_id)
        assert body is not None, "the window was checked against the state id"
        return body

    key = ("log", table.table_id, snapshot.state_id, snapshot.ended_by_host, len(photos), to)
    return HTMLResponse(await pages.kept(key, build))


async def damaged_log_table(
    request: Request, tables: Tables, table_id: str, damage: TableLoadError
) -> LogTable:
    """The log page's table that cannot be opened as its log no longer replays (`damage`,
    its header sound), for a device of it or the server's own screen (the start page's
    "Remove" asks the same); raises `damage` again (409 damaged) for any other, or where
    what is damaged is its header."""
    if damage.log_entry is None:
        raise damage
    row = await asyncio.to_thread(tables.store.table, table_id)
    devices = await asyncio.to_thread(tables.store.devices, table_id)
    token = request.cookies.get(cookie_name(table_id), "")
    if row is None or row.problem is not None:
        raise damage
    if not is_local(request) and (not token or hash_token(token) not in devices):
        raise damage
    try:
        game = find_game(row.game)
        options = game.parse_options(row.options)
    except Rejection:
        raise damage from None
    ended_by_host = bool((row.summary or {}).get("ended_by_host"))
    players = tuple(row.players)
    return LogTable(table_id, row.code, game, options, players, ended_by_host, damage=str(damage))


def log_page(
    request: Request,
    templates: Jinja2Templates,
    tables: Tables,
    about: LogTable,
    to: int | None = None,
    photos: set[str] | None = None,
    state_id: int | None = None,
) -> bytes | None:
    """The log page's HTML, drawn where this is called (the page thread): the stored log
    up to `state_id` (seq is the state id; None: all of it), its entries up to `to`
    (`log_window`); None when `to` is past its end."""
    log = tables.store.log(about.table_id)[:state_id]
    window = log_window(len(log), to)
    if window is None:
        return None
    context = log_context(about, log, window, photos or set())
    return render_page(templates, request, "log.html", context)


def log_context(
    about: LogTable, log: list[LogEntry], window: LogWindow, photos: set[str]
) -> dict[str, object]:
    """The log page's rows, those of `window`: each entry in words, its dice, its photo,
    whether it stands; the entry the replay stopped at (`LogReplay.damaged`) says why. The
    whole log is walked once (what an undo took back, a penalty, may be on another page)."""
    standing = {e.action_id for e in effective_entries(log)}
    taken = taken_back(log)  # what each undo took back, by the session's rule
    made_by_throw = throws_by(log)
    # each move, the state it met (its words, a view's describe_in, and its penalty depend
    # on it) and its penalty: one replay on the page thread
    replay = replay_log(about.game, about.options, log)
    costs, players, game = replay.costs, about.players, about.game
    damaged_seq, why = replay.damaged or (None, "")
    rows = []
    for entry in log[window.first - 1 : window.last]:
        roll = roll_of(entry)
        move, met = replay.moves.get(entry.seq), replay.met.get(entry.seq)
        words = log_words(game, players, entry, move, made_by_throw.get(entry.seq), met)
        if entry.seq in taken:
            words["text"] = undid_text(game, players, entry, taken[entry.seq], replay)
        if entry.seq in costs:  # "Pass (no cross), -5 penalty", as the engine scores it
            words["text"] = f"{words['text']}, {score_text(costs[entry.seq])} penalty"
        rows.append(
            {
                "seq": entry.seq,
                **words,
                "dice": [
                    {"colour": d.colour, "value": d.value, "css": colour_class(d.colour)}
                    for d in (roll.dice if roll else ())
                ],
                "photo": entry.action_id if entry.action_id in photos else None,
                "undone": entry.kind == "move" and entry.action_id not in standing,
                "damaged": printable(why) if entry.seq == damaged_seq else None,
            }
        )
    return {
        "table_id": about.table_id,
        "game": game,
        "code": about.code,
        "rows": rows,
        "window": window,
        "paged": window.total > LOG_PAGE_ENTRIES,
        "window_links": window.links(f"/t/{about.table_id}/log"),
        "damaged_seq": damaged_seq,
        "damaged_href": damaged_href(about.table_id, damaged_seq, window),
        "unopenable": about.damage,  # why the table cannot be opened
        # the host's end is no action of the log (the record keeps the moves only), but it
        # is why nothing follows: the page says so where the game stopped, on its last page
        "ended_by_host": about.ended_by_host and window.last == window.total,
        "ended_on_server": about.ended_on_server,
    }


def damaged_href(table_id: str, damaged_seq: int | None, window: LogWindow) -> str | None:
    """A link to the log page whose first row is the damaged entry, where this page does
    not show it (None: it does, or there is none)."""
    if damaged_seq is None or window.first <= damaged_seq <= window.last:
        return None
    to = damaged_seq + LOG_PAGE_ENTRIES - 1
    return f"/t/{table_id}/log" + (f"?to={to}" if to < window.total else "")


# -- dice statistics ---------------------------------------------------------------------
def report_json(report: list[Fairness]) -> list[dict[str, Any]]:
    out = []
    for item in report:
        most = max(item.counts) or 1
        out.append(
            item.to_json()
            | {
                "css": colour_class(item.colour),
                "bars": [round(100 * c / most) for c in item.counts],
            }
        )
    return out


DICE_PAGES_KEPT = 256


@router.get("/t/{table_id}/dice", response_class=HTMLResponse)
async def dice_page(
    request: Request,
    access: PageAccess,
    tables: TablesDep,
    templates: TemplatesDep,
    rolls: Literal["all", "camera"] = "all",
) -> Response:
    """How often each face came up per die colour, in this game and over every recorded
    game, with the chi-square verdict (companion.live.stats). The counts are kept as the
    games go (companion.table.dice): a request reads no log, and a page is drawn again only
    after a roll changed the counts (looping requests cost a dictionary lookup)."""
    tally = await tables.dice()
    table_id = access.table.table_id
    drawn: dict[tuple[str, str], tuple[object, int, bytes]] = request.app.state.dice_pages
    kept = drawn.get((table_id, rolls))
    if kept is not None and kept[0] is tally and kept[1] == tally.version:
        return HTMLResponse(kept[2])
    camera_only = rolls == "camera"
    this_game = tally.of(table_id).faces(camera_only)
    every_game = tally.total.faces(camera_only)
    context = {
        "table_id": table_id,
        "game": access.table.game,
        "which": rolls,
        "sections": [
            {
                "title": "This game",
                "rolls": this_game.rolls,
                "report": report_json(report_from_counts(this_game.counts)),
            },
            {
                "title": f"All recorded games ({len(tally.games)})",
                "rolls": every_game.rolls,
                "report": report_json(report_from_counts(every_game.counts)),
            },
        ],
    }
    page = templates.TemplateResponse(request, "dice.html", context)
    drawn.pop((table_id, rolls), None)
    if len(drawn) >= DICE_PAGES_KEPT:
        drawn.pop(next(iter(drawn)))  # the oldest drawn
    drawn[(table_id, rolls)] = (tally, tally.version, bytes(page.body))
    return page


# -- calibration -------------------------------------------------------------------------
@router.get("/calibrate", response_class=HTMLResponse)
async def calibrate_page(request: Request, templates: TemplatesDep, hub: HubDep) -> Response:
    require_local(request, LOCAL_CALIBRATION)
    from companion.vision.calibration import list_calibrations

    folder = hub.settings.calibration_dir
    context = {
        "sets": list(standard_dice_sets()),
        "files": [(f, calibration_setup(folder, f)) for f in list_calibrations(folder)],
        "active": chosen_name(hub),
        "demo": hub.runtime.plays_demo,
        "teaching_refused": hub.teaching_refused,
        "measuring_refused": hub.measuring_refused,
        "problem": hub.calibration_problem,
        "enabled": hub.enabled,
    }
    return templates.TemplateResponse(request, "calibrate.html", context)


def chosen_name(hub: CameraHub) -> str | None:
    """The setup of the calibration the host chose: in use, or while the demo camera plays
    waiting for a real camera (the demo reads its drawn dice with the shipped colours)."""
    chosen = hub.chosen_calibration
    return chosen.name if chosen is not None else None


def calibration_setup(folder: Path, file: str) -> str | None:
    """The setup a calibration file teaches: the name inside it (qwixx-default.json is
    setup "qwixx"), which names its stored dice; None when the file does not load."""
    from companion.vision.calibration import calibration_path, load_calibration
    from companion.vision.colour import CalibrationError

    try:
        return load_calibration(calibration_path(file, folder)).name
    except CalibrationError:
        return None


@router.get("/calibrate/camera.jpg")
async def calibrate_picture(request: Request, hub: HubDep) -> Response:
    require_local(request, LOCAL_CALIBRATION)
    from companion.live.worker import preview_jpeg_of

    # the frame the listed reading was made of (and Measure measures), not the newest
    # preview: the page checks those dice against this picture
    image, reading = hub.runtime.latest()
    jpeg = None
    if image is not None and reading is not None:
        jpeg = await asyncio.to_thread(preview_jpeg_of, image, reading)
    if jpeg is None:
        raise HTTPException(status_code=404, detail="no camera picture yet")
    return Response(jpeg, media_type="image/jpeg", headers=NO_STORE)


@router.get("/api/calibration")
async def calibration_reading(request: Request, hub: HubDep) -> dict[str, Any]:
    """What the camera reads now, and the calibration chosen (the calibration page draws
    both on every poll, so a choice made elsewhere shows without a reload)."""
    require_local(request, LOCAL_CALIBRATION)
    image, reading = hub.runtime.latest()
    status = hub.runtime.worker_status()
    worker_status = status.to_json() if status is not None else None
    return {
        "reading": reading.to_json() if reading is not None else None,
        "frame": [int(image.shape[1]), int(image.shape[0])] if image is not None else None,
        "status": worker_status,
        "active": chosen_name(hub),
        "demo": hub.runtime.plays_demo,
        "teaching_refused": hub.teaching_refused,
        "measuring_refused": hub.measuring_refused,
        "calibration": hub.calibration.to_json("active") if hub.calibration else None,
    }


async def frames_to_measure(hub: CameraHub, count: int) -> list[np.ndarray]:
    """The camera's next `count` distinct frames, as it delivers them (none: no picture)."""
    frames: list[np.ndarray] = []
    last_id = None
    for _ in range(count * 20):
        image, _reading = hub.runtime.latest()
        if image is not None and id(image) != last_id:
            frames.append(image)
            last_id = id(image)
            if len(frames) >= count:
                break
        await asyncio.sleep(0.05)
    return frames


@router.post("/api/calibration", dependencies=[SameOrigin])
async def save_calibration_from_camera(
    request: Request, body: CalibrationRequest, hub: HubDep
) -> dict[str, Any]:
    """Measure the dice in view over the next frames, save calibration/<name>.json and use
    it from now on."""
    require_local(request, LOCAL_CALIBRATION)
    refused = hub.measuring_refused
    if refused is not None:
        raise Rejection(Reason.NOT_ALLOWED, "demo_camera", refused)
    from companion.vision.calibration import (
        calibration_path,
        load_calibration,
        measure,
        save_calibration,
    )
    from companion.vision.colour import CalibrationError, builtin_dice_set

    standard = standard_dice_sets()
    if body.dice_set not in standard:
        raise Rejection(
            Reason.MALFORMED,
            "dice_set",
            f"dice_set {body.dice_set!r} is none of the standard sets: {', '.join(standard)}",
        )
    try:
        path = calibration_path(body.name, hub.settings.calibration_dir)
        reference = builtin_dice_set(body.dice_set, standard[body.dice_set])
    except CalibrationError as exc:
        raise Rejection(Reason.MALFORMED, "calibration", str(exc)) from exc
    reader = hub.runtime.reader.reader
    if reader is None:
        raise Rejection(Reason.NOT_ALLOWED, "no_reader", "the dice reader is not loaded")
    frames = await frames_to_measure(hub, body.frames)
    if not frames:
        raise Rejection(Reason.NOT_ALLOWED, "no_picture", "the camera delivers no picture")

    def work() -> tuple[Any, list[str]]:
        # the same models without a dice set: colours are measured here, not assigned
        plain = copy.copy(reader)
        plain.dice_set = None
        calibration, notes = measure(frames, plain, reference, body.name, body.play_area)
        save_calibration(calibration, path)
        # use what the file says (rounded as stored), so a restart with it behaves the same
        return load_calibration(path), notes

    try:
        calibration, notes = await asyncio.to_thread(work)
    except CalibrationError as exc:
        raise Rejection(Reason.ILLEGAL_MOVE, "calibration", str(exc)) from exc
    await hub.use_calibration(calibration, path.stem)
    saved = {"saved": str(path), "notes": notes[:10], "calibration": calibration.to_json("")}
    return {**saved, "demo": hub.runtime.plays_demo}


@router.post("/api/calibration/use", dependencies=[SameOrigin])
async def use_calibration(request: Request, body: UseCalibration, hub: HubDep) -> dict[str, Any]:
    require_local(request, LOCAL_CALIBRATION)
    from companion.vision.calibration import calibration_path, load_calibration
    from companion.vision.colour import CalibrationError

    try:
        path = calibration_path(body.name, hub.settings.calibration_dir)
        calibration = load_calibration(path)
    except CalibrationError as exc:
        raise Rejection(Reason.MALFORMED, "calibration", str(exc)) from exc
    await hub.use_calibration(calibration, path.stem)
    return {"active": calibration.name, "demo": hub.runtime.plays_demo}


@router.post("/api/calibration/none", dependencies=[SameOrigin])
async def use_no_calibration(request: Request, hub: HubDep) -> dict[str, None]:
    """Stop using a calibration: the whole picture, each game's shipped colours, nothing
    learnt (kept after a restart, as a choice of one is)."""
    require_local(request, LOCAL_CALIBRATION)
    await hub.use_calibration(None, "")
    return {"active": None}
