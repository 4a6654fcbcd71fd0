"""A setup's stored dice and its teaching round (issue 15), for the host.

Two ways in, one page (setup.html, web/static/js/setup.js):
- on the server machine, any setup by name: ``/setups/NAME`` (beside the calibration
  page, which is local-only too), with the teaching round and "forget this setup";
- from a table's host device, the setup of the camera attached to that table:
  ``/t/TABLE/setup``, with "Forget what the camera learnt" (one button, tap again): the
  dice this table taught; other tables' and the teaching rounds' stay.

Each shows every stored die of the setup as a picture, grouped by value and colour, the
held-back ones (dice whose value disagrees with the rest of their face) first for a look
(keep or delete), and how sure the reader has become of each face and each set die.

The teaching round (``/api/setups/NAME/teach``): the page takes a snapshot of what the
camera reads now (the frame and its dice, kept by the server), shows each die's crop with
its value, the person taps a die to change its value, and confirms; the dice are stored as
taught (or corrected) and the heads refreshed. Handlers only translate: the work runs in
companion.table.learning, off the event loop."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from companion.rules.base import Reason, Rejection
from companion.table.camera_hub import DEMO_TEACHES_NOTHING, CameraHub
from companion.table.learning import Learning, rolls_words
from companion.vision.adapt_store import SetupError, StoredExample, check_setup
from companion.vision.calibration import calibration_path, load_calibration
from companion.vision.colour import CalibrationError, DiceSet, builtin_dice_set
from companion.web.deps import (
    ApiAccess,
    PageAccess,
    SameOrigin,
    SettingsDep,
    TemplatesDep,
    TextCheckedRoute,
    is_local,
    require_local,
)
from companion.web.errors import refusal

router = APIRouter(route_class=TextCheckedRoute)
NO_STORE = {"Cache-Control": "no-store"}
LOCAL_SETUPS = "open the setups on the machine the camera is connected to"
GAME_TAUGHT_NOTHING = "this game taught the camera no dice: there is nothing it learnt to show"
# a stored die's id is an SQLite row id: an id outside its range is a 422 naming the field,
# not an overflow in the store
ExampleId = Annotated[int, Path(ge=1, le=2**63 - 1)]


class TeachRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str = Field(min_length=1, max_length=32, description="the snapshot's token")
    values: list[int] = Field(max_length=12, description="each die's value 1-6, in order")


def learning_of(request: Request) -> Learning:
    learning: Learning = request.app.state.learning
    return learning


def camera_of(request: Request) -> CameraHub:
    camera: CameraHub = request.app.state.camera
    return camera


def setup_name(name: str) -> str:
    try:
        return check_setup(name)
    except SetupError as exc:
        raise Rejection(Reason.MALFORMED, "setup", str(exc)) from exc


def table_setup(request: Request, access: ApiAccess) -> str:
    """The setup of the camera attached to this table, for its host."""
    require_host(access)
    camera = camera_of(request)
    if not camera.feed.attached_to(access.table.table_id):
        raise Rejection(Reason.NOT_ALLOWED, "not_attached", "the camera serves another table")
    if camera.calibration is None:
        # the demo camera reads with no calibration even when one is chosen: say why
        demo = camera.runtime.plays_demo
        if demo:
            raise refusal(404, "not_found", "demo_camera", DEMO_TEACHES_NOTHING)
        message = "the camera has no calibration, so no setup learns: calibrate first"
        raise refusal(404, "not_found", "no_setup", message)
    return camera.calibration.name


def require_host(access: ApiAccess) -> None:
    if not access.viewer.host:
        raise Rejection(Reason.NOT_ALLOWED, "host_only", "only the host's device may do this")


async def table_setup_to_read(request: Request, access: ApiAccess) -> tuple[str, bool]:
    """The setup a table's host reads, and whether its dice may be changed there: the
    camera's while it serves the table (`table_setup`); once the camera serves another
    table (or none), whether this game is over or still played, the setup the game
    taught, to read only (its "What the camera learnt" link went with the camera, and
    the host could no longer read what the camera learnt during the game). Forgetting a
    finished game's dice is deleting the game from the history
    (companion.web.routes.pages); a running game's, once the camera is back."""
    require_host(access)
    table_id = access.table.table_id
    if camera_of(request).feed.attached_to(table_id):
        return table_setup(request, access), True
    setup = await learning_of(request).setup_taught_by(table_id)
    if setup is not None:
        return setup, False
    if not access.table.snapshot.finished:
        table_setup(request, access)  # refused: the camera serves another table
    raise refusal(404, "not_found", "taught_nothing", GAME_TAUGHT_NOTHING)


def dice_set_of(request: Request, settings: SettingsDep, setup: str) -> DiceSet | None:
    """The setup's dice set: the camera's when it is calibrated for it, else its file's,
    else the standard set of that name (the setup "qwixx" learnt while the shipped
    qwixx-default.json was in use: its page said the setup had no dice set)."""
    calibration = camera_of(request).calibration
    if calibration is not None and calibration.name == setup:
        return calibration.dice_set
    try:
        return load_calibration(calibration_path(setup, settings.camera.calibration_dir)).dice_set
    except CalibrationError:
        pass
    try:
        return builtin_dice_set(setup)
    except CalibrationError:
        return None


def example_json(
    stored: StoredExample,
    held: set[int],
    crops: str,
    table_id: str | None = None,
    read_only: bool = False,
) -> dict[str, object]:
    """A stored die for the page; `editable` when this page may delete or keep it: the
    server machine's every die, a table's host the dice confirmed at that table (none on
    a finished game's page, `read_only`); `this_game` when confirmed at that table."""
    out = stored.to_json()
    out["held_back"] = stored.example_id in held
    out["crop"] = f"{crops}/{stored.example_id}.png"
    out["this_game"] = table_id is not None and stored.table_id == table_id
    out["editable"] = not read_only and (table_id is None or stored.table_id == table_id)
    return out


async def setup_json(
    request: Request,
    settings: SettingsDep,
    setup: str,
    crops: str,
    table_id: str | None = None,
    read_only: bool = False,
) -> dict[str, object]:
    """Summary, every stored die (held-back first) and the share without a tap; `table_id`:
    a table's host asks (only that table's dice are editable, none when `read_only`)."""
    learning = learning_of(request)
    summary = await learning.summary(setup, dice_set_of(request, settings, setup))
    held = set(summary.held)
    stored = await learning.examples(setup)
    examples = [example_json(s, held, crops, table_id, read_only) for s in stored]
    groups: dict[str, list[int]] = defaultdict(list)
    for s in stored:
        if s.example_id not in held:
            groups[f"{s.example.value} {s.example.colour or 'any colour'}"].append(s.example_id)
    rolls, share = learning.share_without_tap(setup)
    return {
        "summary": summary.to_json(),
        "examples": examples,
        "groups": [{"name": name, "ids": ids} for name, ids in sorted(groups.items())],
        "rolls_last_hour": rolls,
        "share_without_tap": round(share, 3),
        "rolls_words": rolls_words(rolls, share),
        "read_only": read_only,
        **({} if table_id is None else taught_where(stored, table_id)),
    }


def taught_where(stored: list[StoredExample], table_id: str) -> dict[str, int]:
    """For a table's host: how many of the setup's dice this table taught, other tables
    taught, and teaching rounds on the server machine taught (forgetting here forgets
    only the first)."""
    here = sum(s.table_id == table_id for s in stored)
    server = sum(s.table_id is None for s in stored)
    return {"this_table": here, "other_tables": len(stored) - here - server, "server": server}


# -- by name, on the server machine ---------------------------------------------------------
@router.get("/setups/{name}", response_class=HTMLResponse)
async def setup_page(request: Request, name: str, templates: TemplatesDep) -> Response:
    require_local(request, LOCAL_SETUPS)
    setup = setup_name(name)
    context = {
        "setup": setup,
        "api": f"/api/setups/{setup}",
        "local": True,
        "back": "/calibrate",
    }
    return templates.TemplateResponse(request, "setup.html", context)


@router.get("/api/setups/{name}")
async def setup_state(request: Request, name: str, settings: SettingsDep) -> dict[str, object]:
    require_local(request, LOCAL_SETUPS)
    setup = setup_name(name)
    return await setup_json(request, settings, setup, f"/api/setups/{setup}/crops")


@router.get("/api/setups/{name}/crops/{example_id}.png")
async def setup_crop(request: Request, name: str, example_id: ExampleId) -> Response:
    require_local(request, LOCAL_SETUPS)
    return await crop_answer(request, setup_name(name), example_id)


@router.delete("/api/setups/{name}/examples/{example_id}", dependencies=[SameOrigin])
async def delete_die(request: Request, name: str, example_id: ExampleId) -> dict[str, object]:
    require_local(request, LOCAL_SETUPS)
    return await delete_answer(request, setup_name(name), example_id)


@router.post("/api/setups/{name}/examples/{example_id}/keep", dependencies=[SameOrigin])
async def keep_die(request: Request, name: str, example_id: ExampleId) -> dict[str, object]:
    require_local(request, LOCAL_SETUPS)
    return await keep_answer(request, setup_name(name), example_id)


@router.delete("/api/setups/{name}", dependencies=[SameOrigin])
async def forget_setup(request: Request, name: str) -> dict[str, object]:
    """Forget every stored die of the setup, records and crops."""
    require_local(request, LOCAL_SETUPS)
    deleted = await learning_of(request).delete_setup(setup_name(name))
    return {"deleted": deleted}


# -- the teaching round ----------------------------------------------------------------------
@router.post("/api/setups/{name}/teach/snapshot", dependencies=[SameOrigin])
async def teach_snapshot(request: Request, name: str) -> dict[str, object]:
    """Keep what the camera reads now, for the person to confirm."""
    require_local(request, LOCAL_SETUPS)
    setup = setup_name(name)
    camera = camera_of(request)
    refused = camera.teaching_refused  # the demo camera: as at a table, drawn dice teach nothing
    if refused is not None:
        raise Rejection(Reason.NOT_ALLOWED, "demo_camera", refused)
    image, reading = camera.runtime.latest()
    if image is None or reading is None:
        raise Rejection(Reason.NOT_ALLOWED, "no_picture", "the camera delivers no picture")
    dice = [d for d in reading.dice if d.value is not None]
    if not dice:
        raise Rejection(Reason.WRONG_DICE, "no_dice", "no die read: throw the dice in view")
    taken = learning_of(request).snapshot(setup, image, dice)
    base = f"/api/setups/{setup}/teach/{taken.token}"
    return {
        "token": taken.token,
        "dice": [
            {"index": i, "value": d.value, "colour": d.colour, "crop": f"{base}/{i}.png"}
            for i, d in enumerate(taken.dice)
        ],
    }


@router.get("/api/setups/{name}/teach/{token}/{index}.png")
async def teach_crop(request: Request, name: str, token: str, index: int) -> Response:
    require_local(request, LOCAL_SETUPS)
    learning = learning_of(request)
    taken = learning.snapshot_of(setup_name(name), token)
    png = None if taken is None else await learning.snapshot_crop(taken, index)
    if not png:
        raise HTTPException(status_code=404, detail="no such die in that snapshot")
    return Response(png, media_type="image/png", headers=NO_STORE)


@router.post("/api/setups/{name}/teach", dependencies=[SameOrigin])
async def teach(
    request: Request, name: str, body: TeachRequest, settings: SettingsDep
) -> dict[str, object]:
    """Store the snapshot's dice with the confirmed values."""
    require_local(request, LOCAL_SETUPS)
    setup = setup_name(name)
    learning = learning_of(request)
    taken = learning.snapshot_of(setup, body.token)
    if taken is None:
        raise Rejection(Reason.STALE_STATE, "no_snapshot", "that snapshot is gone: take another")
    if len(body.values) != len(taken.dice):
        raise Rejection(
            Reason.MALFORMED, "values", f"give {len(taken.dice)} values, one per die, in order"
        )
    if any(not 1 <= v <= 6 for v in body.values):
        raise Rejection(Reason.MALFORMED, "values", "a die's value is 1 to 6")
    ids = await learning.teach(taken, body.values, dice_set_of(request, settings, setup))
    return {"stored": ids}


# -- from a table's host device --------------------------------------------------------------
@router.get("/t/{table_id}/setup", response_class=HTMLResponse)
async def table_setup_page(
    request: Request, access: PageAccess, templates: TemplatesDep
) -> Response:
    setup, editable = await table_setup_to_read(request, access)
    table_id = access.table.table_id
    context = {
        "setup": setup,
        "api": f"/api/tables/{table_id}/setup",
        "local": False,
        "read_only": not editable,  # a game the camera serves no more
        "finished": access.table.snapshot.finished,  # its read-only words: over, or left
        "back": f"/t/{table_id}",
        # teaching is the server machine's (its page by name); forgetting is here too
        "server_page": f"/setups/{setup}" if editable else None,
        "on_server": is_local(request),
    }
    return templates.TemplateResponse(request, "setup.html", context)


@router.get("/api/tables/{table_id}/setup")
async def table_setup_state(
    request: Request, access: ApiAccess, settings: SettingsDep
) -> dict[str, object]:
    setup, editable = await table_setup_to_read(request, access)
    crops = f"/api/tables/{access.table.table_id}/setup/crops"
    return await setup_json(
        request, settings, setup, crops, access.table.table_id, read_only=not editable
    )


@router.get("/api/tables/{table_id}/setup/crops/{example_id}.png")
async def table_setup_crop(request: Request, access: ApiAccess, example_id: ExampleId) -> Response:
    setup, _ = await table_setup_to_read(request, access)
    return await crop_answer(request, setup, example_id)


@router.delete("/api/tables/{table_id}/setup/examples/{example_id}", dependencies=[SameOrigin])
async def table_delete_die(
    request: Request, access: ApiAccess, example_id: ExampleId
) -> dict[str, object]:
    setup = table_setup(request, access)
    await check_this_tables_die(request, access, setup, example_id)
    return await delete_answer(request, setup, example_id)


@router.post("/api/tables/{table_id}/setup/examples/{example_id}/keep", dependencies=[SameOrigin])
async def table_keep_die(
    request: Request, access: ApiAccess, example_id: ExampleId
) -> dict[str, object]:
    setup = table_setup(request, access)
    await check_this_tables_die(request, access, setup, example_id)
    return await keep_answer(request, setup, example_id)


@router.delete("/api/tables/{table_id}/setup", dependencies=[SameOrigin])
async def table_forget_setup(request: Request, access: ApiAccess) -> dict[str, object]:
    """The table's host forgets what the camera learnt at this table, in one action from
    the table: the dice confirmed here and the photos of its rolls. A café's tables may
    share the setup: what other tables and the server machine's teaching rounds taught
    stays (only the setup's page on the server machine forgets it all), and the heads are
    refitted on it. From the host's tablet too: forgetting was the server machine's
    alone, five taps deep, and a host away from it could not forget at all."""
    setup = table_setup(request, access)
    learning = learning_of(request)
    deleted = await learning.forget_table(setup, access.table.table_id)
    return {"deleted": deleted, "kept": await asyncio.to_thread(learning.store.count, setup)}


async def check_this_tables_die(
    request: Request, access: ApiAccess, setup: str, example_id: int
) -> None:
    """A table's host changes only the dice confirmed at that table: the setup is the
    camera's, shared by every table it served (and any host can start a table)."""
    found, table_id = await learning_of(request).example_table(setup, example_id)
    if not found:
        raise HTTPException(status_code=404, detail="no such die in this setup")
    if table_id != access.table.table_id:
        raise Rejection(
            Reason.NOT_ALLOWED,
            "another_tables_die",
            "this die was confirmed in another game or taught on the server machine: "
            "only the setup's page on the server machine changes it",
        )


# -- shared answers ----------------------------------------------------------------------------
async def crop_answer(request: Request, setup: str, example_id: int) -> Response:
    png = await learning_of(request).crop_png(setup, example_id)
    if png is None:
        raise HTTPException(status_code=404, detail="no such die in this setup")
    return Response(png, media_type="image/png", headers={"Cache-Control": "max-age=3600"})


async def delete_answer(request: Request, setup: str, example_id: int) -> dict[str, object]:
    if not await learning_of(request).delete_example(setup, example_id):
        raise HTTPException(status_code=404, detail="no such die in this setup")
    return {"deleted": example_id}


async def keep_answer(request: Request, setup: str, example_id: int) -> dict[str, object]:
    if not await learning_of(request).keep(setup, example_id):
        raise HTTPException(status_code=404, detail="no such die in this setup")
    return {"kept": example_id}
