"""The live table in the web server: camera rolls flow into the game.

`CameraHub` owns the camera worker (companion.live.camera, its own thread: source ->
DiceReader -> settle) for the server's lifetime (started and stopped by the app factory's
lifespan) and turns each settled throw into a game action:

    worker thread: RollEvent + the frame it was read from
      -> run_coroutine_threadsafe -> the server's loop: `_on_throw`
      -> the attached table's snapshot says which dice it expects (Turn.dice, a DiceSpec)
      -> companion.live.match.match_roll: a rules Roll, or a Mismatch naming the problems
      -> Roll: applied at once (mode "auto") or held for the active player's confirmation
         (mode "confirm"); Mismatch: held, shown on the table view with the problem dice
         marked; the host corrects a die (value/colour, or "not a die"), adds a die the
         finder missed where it lies, or asks for a re-throw. A held reading is never
         applied by itself.
      -> every applied roll keeps a 320 px JPEG of the table beside the action in SQLite.

Decisions (also in docs/live-table.md):
- One camera, one table: the host attaches the camera on the table page; until a host
  does, it follows the most recently created open table. The attachment is stored in
  SQLite (`server_settings`) and restored at start-up while that table is open; once it
  is finished or gone, the newest open table gets the rolls again.
- What a throw means comes from the engine: `Turn.on_throw()` names the roll it must be
  and the moves it implies first (Sixto's keep/re-roll step: a new settled throw is the
  active player re-rolling, so the hub sends that player's `reroll` move, by the player's
  seat, then the roll; "keep" stays a tap). In confirm mode the player confirms both as
  one step.
- A throw while the game expects no roll (players still crossing) is not applied and not
  held: the status line says so, and the thrower throws again when the game asks.
- Faults stay in the worker thread (its status shows them, it reconnects with back-off);
  a failing hub callback is logged and noted, never raised into the server.

The web layer holds no rules: what a roll must contain comes from the engine's Turn, and
the engine accepts or refuses every move (a refusal is noted in the status)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import cv2
import numpy as np

from companion.live.camera import CameraWorker
from companion.live.match import Mismatch, match_roll
from companion.live.settle import RollEvent, SettleConfig
from companion.rules.base import Move, Reason, Rejection, Roll, Throw
from companion.rules.session import CAMERA, HOST
from companion.vision.annotate import annotate
from companion.vision.types import DieBox, DieReading, FrameReading
from companion.web.settings import CameraSettings
from companion.web.snapshot import Snapshot
from companion.web.tables import Table, Tables
from companion.web.views import describe_move

logger = logging.getLogger(__name__)

PHOTO_WIDTH = 320
PHOTO_QUALITY = 70
PICTURE_QUALITY = 80
MODES = ("auto", "confirm")
MODE_KEY = "camera_mode"
ATTACH_KEY = "camera_table"  # server_settings: the table a host attached the camera to
ADDED = "added"  # flag of a die the host added to a held reading (the finder missed it)
DEFAULT_SIDE_FRACTION = 0.09  # an added die's side with no other dice and no calibration
PROBLEM_BGR = (40, 40, 230)  # red outline of a die the mismatch names
TARGET_REFRESH_S = 1.0
SETTLE_SECONDS = 0.2
MIN_STABLE_FRAMES = 3

Mode = Literal["auto", "confirm"]


def encode_jpeg(image: np.ndarray, quality: int, width: int | None = None) -> bytes:
    """`image` as JPEG bytes, scaled down to `width` pixels wide when given."""
    if width is not None and image.shape[1] > width:
        height = max(1, round(image.shape[0] * width / image.shape[1]))
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return bytes(buffer.tobytes())


def mark_problems(
    image: np.ndarray, dice: tuple[DieReading, ...], boxes: list[DieBox]
) -> np.ndarray:
    """The annotated reading with each die named by a problem outlined again in red."""
    h, w = image.shape[:2]
    out = annotate(image, FrameReading(w, h, dice))
    for box in boxes:
        x0, y0, x1, y1 = box.box
        pad = max(3, int(0.15 * max(box.w, box.h)))
        cv2.rectangle(out, (x0 - pad, y0 - pad), (x1 + pad, y1 + pad), PROBLEM_BGR, 3)
    return out


class FrameKeeper:
    """The worker's reader: the DiceReader, plus the picture and reading of the frame read
    last (the worker calls `read` and then the settle stage and the event callback on one
    thread, so in the callback these belong to the event's frame). Dice outside the
    calibrated play area, or far from the calibrated die size, are dropped here."""

    def __init__(self, reader: Any | None) -> None:
        self.reader = reader
        self.last_image: np.ndarray | None = None
        self.last_reading: FrameReading | None = None
        self.play_area: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
        self.die_side: float | None = None
        # The frame width the calibrated side was measured in: a camera now running at
        # another resolution sees the dice bigger or smaller by the width ratio.
        self.die_side_frame_width: int | None = None

    def set_dice_set(self, dice_set: Any) -> None:
        if self.reader is not None and getattr(self.reader, "dice_set", None) is not dice_set:
            self.reader.dice_set = dice_set  # one attribute store: safe across threads

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        if self.reader is None:
            h, w = getattr(image, "shape", (0, 0))[:2]
            reading = FrameReading(int(w), int(h), (), frame_index=frame_index)
        else:
            reading = self.reader.read(image, frame_index)
            reading = self._inside(reading)
        if isinstance(image, np.ndarray):
            self.last_image = image
        self.last_reading = reading
        return reading

    def _inside(self, reading: FrameReading) -> FrameReading:
        x0, y0, x1, y1 = self.play_area
        side = self.die_side
        if (x0, y0, x1, y1) == (0.0, 0.0, 1.0, 1.0) and side is None:
            return reading
        w, h = max(reading.width, 1), max(reading.height, 1)
        if side is not None and self.die_side_frame_width:
            side *= w / self.die_side_frame_width
        kept = tuple(
            d
            for d in reading.dice
            if x0 <= d.where.cx / w <= x1
            and y0 <= d.where.cy / h <= y1
            # a die half or twice the calibrated size is something else (a score pad digit,
            # a die on the shelf behind)
            and (side is None or 0.5 * side <= max(d.where.w, d.where.h) <= 2.0 * side)
        )
        return reading if len(kept) == len(reading.dice) else replace(reading, dice=kept)


@dataclass
class Pending:
    """A reading held for a person: a mismatch to fix, or a roll to confirm."""

    pending_id: str
    table_id: str
    kind: Literal["mismatch", "confirm"]
    state_id: int
    dice: tuple[DieReading, ...]
    width: int
    height: int
    image: np.ndarray = field(repr=False)
    message: str
    problems: list[dict[str, Any]]
    roll: Roll | None
    implied: tuple[Move, ...]  # the moves the throw implies before its roll (Turn.on_throw)
    picture: bytes = field(repr=False, default=b"")

    def to_json(self, snapshot: Snapshot) -> dict[str, Any]:
        return {
            "id": self.pending_id,
            "kind": self.kind,
            "state_id": self.state_id,
            "message": self.message,
            "problems": self.problems,
            "implies": [describe_move(snapshot.game, move) for move in self.implied],
            "width": self.width,
            "height": self.height,
            "dice": [
                {
                    "index": i,
                    "value": d.value,
                    "colour": d.colour,
                    "box": list(d.where.box),
                    "flags": list(d.flags),
                }
                for i, d in enumerate(self.dice)
            ],
            "roll": [[d.colour, d.value] for d in self.roll.dice] if self.roll else None,
        }


@dataclass
class TableNote:
    """What the camera last did for a table, for its status line."""

    text: str = ""
    at: float = 0.0
    last_roll: list[list[Any]] | None = None
    last_roll_seq: int | None = None


ReaderFactory = Callable[[], Any]


def default_reader_factory() -> Any:
    """The real pipeline: both ONNX models checked against their manifests."""
    from companion.vision.pipeline import DiceReader

    return DiceReader.load()


class CameraHub:
    """See the module docstring. Create in the lifespan, `start(loop)`, `stop()`."""

    def __init__(
        self,
        settings: CameraSettings,
        tables: Tables,
        reader_factory: ReaderFactory | None = None,
    ) -> None:
        self.settings = settings
        self.tables = tables
        self.enabled = settings.source != "none"
        self._reader_factory = reader_factory or default_reader_factory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: CameraWorker | None = None
        self._worker_lock = threading.Lock()
        self._keeper = FrameKeeper(None)
        self._reader: Any | None = None
        self._reader_error: str | None = None
        self._source_name = ""
        self._starting = False
        self._stopped = False
        self._explicit_table: str | None = None
        self._target: str | None = None
        self._pending: dict[str, Pending] = {}
        # One change at a time to a table's held reading: two taps sent together (two
        # fixes, a fix and a confirm) each finish, held picture included, before the next
        # starts; otherwise a slower picture render of the first could overwrite the
        # second's, marking problems the dice no longer have. One lock for every table:
        # the camera watches one table, and taps on a held reading come seconds apart,
        # so nobody waits on it, and there is no per-table lock to forget.
        self._held_lock = asyncio.Lock()
        self._notes: dict[str, TableNote] = {}
        self._modes: dict[str, Mode | None] = {}  # None: the host chose no mode
        self._live_camera = False  # the running source is a live camera (not a replay)
        self._refresher: asyncio.Task[None] | None = None
        self._starter: threading.Thread | None = None
        self.calibration: Any | None = None  # companion.vision.calibration.TableCalibration
        self.events_seen = 0

    # -- life -----------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Load the models and open the source on a starter thread (so the server answers
        at once), then run the worker. With --no-camera only the status exists."""
        self._loop = loop
        if not self.enabled:
            return
        self._refresher = loop.create_task(self._follow_target())
        self._spawn_starter()

    def _spawn_starter(self) -> None:
        self._starting = True
        self._starter = threading.Thread(
            target=self._start_worker, name="camera-start", daemon=True
        )
        self._starter.start()

    def _start_worker(self) -> None:
        try:
            if self._reader is None and self._reader_error is None:
                try:
                    self._reader = self._reader_factory()
                except Exception as exc:  # the preview still runs without models
                    logger.error("dice reader not loaded: %s", exc)
                    self._reader_error = f"dice reader not loaded: {exc}"
            self._keeper.reader = self._reader
            plan = self._plan()
            self._source_name = plan.name
            self._live_camera = plan.live
            settle = settle_config(plan.pace_fps or 30.0, self._keeper.play_area)
            worker = CameraWorker(
                plan.open,
                self._keeper,
                self._event_from_thread,
                settle=settle,
                pace_fps=plan.pace_fps,
                reopen_at_end=plan.reopen_at_end,
            )
            with self._worker_lock:
                if self._stopped:
                    return
                self._worker = worker
                worker.start()
            logger.info("camera started on %s", plan.name)
        except Exception as exc:
            logger.exception("camera could not start")
            self._reader_error = self._reader_error or f"camera could not start: {exc}"
        finally:
            self._starting = False

    def _plan(self) -> Any:
        from companion.live import demo

        s = self.settings
        if s.source == "demo":
            # no option given: a webcam when one answers, else the bundled demo clip, looping
            plan = demo.plan_source()
            if plan.name == "demo clip":
                return replace(plan, reopen_at_end=True)
            return plan
        return demo.plan_source(camera=s.index, video=s.video, images=s.images)

    def stop(self) -> None:
        self._stopped = True
        if self._refresher is not None:
            self._refresher.cancel()
        if self._starter is not None:
            # loading the models takes a second or two; let it finish before the process
            # may exit (a native thread torn down mid-load aborts the interpreter)
            self._starter.join(timeout=15)
        with self._worker_lock:
            worker = self._worker
            self._worker = None
        if worker is not None:
            worker.stop()

    def restart(self) -> None:
        """Stop the worker and start it again from the source's beginning (a replayed file
        plays again; a camera is opened afresh)."""
        if not self.enabled:
            return
        with self._worker_lock:
            worker = self._worker
            self._worker = None
        if worker is not None:
            worker.stop()
        self._spawn_starter()

    def worker_status(self) -> Any:
        """The worker's CameraStatus, or None while no worker runs."""
        worker = self._worker
        return worker.status() if worker is not None else None

    def preview_jpeg(self) -> bytes | None:
        worker = self._worker
        return worker.preview_jpeg() if worker is not None else None

    def latest(self) -> tuple[np.ndarray | None, FrameReading | None]:
        return self._keeper.last_image, self._keeper.last_reading

    def set_calibration(self, calibration: Any) -> None:
        """Use a table calibration (play area, die size, dice set) from now on (the settle
        stage's motion watch takes the new play area when the camera next (re)starts)."""
        self.calibration = calibration
        self._keeper.play_area = tuple(calibration.play_area)
        self._keeper.die_side = calibration.die_side
        self._keeper.die_side_frame_width = calibration.frame[0] if calibration.frame else None
        self._apply_dice_set()

    # -- which table ----------------------------------------------------------------------
    async def target_table(self, cached: bool = True) -> Table | None:
        """The table camera rolls go to: the one a host attached, else the newest open
        table (`cached`: as the follower last found it, refreshed every second; a throw
        does not wait for a query)."""
        table_id = self._explicit_table or (self._target if cached else None)
        if table_id is not None:
            table = await self.tables.get(table_id)
            if table is not None and not table.snapshot.finished:
                return table
        rows = await asyncio.to_thread(self.tables.store.tables, False)
        for row in rows:
            table = await self.tables.get(row.table_id)
            if table is not None and not table.snapshot.finished:
                return table
        return None

    async def attach(self, table_id: str) -> None:
        """Camera rolls go to `table_id` from now on, also after a restart (stored first:
        what the host was told must survive)."""
        await asyncio.to_thread(self.tables.store.set_server_setting, ATTACH_KEY, table_id)
        self._explicit_table = table_id
        await self._refresh_target()

    async def restore_attachment(self) -> None:
        """At start-up: attach the camera to the table a host attached it to before the
        restart, while that table exists and is open; else leave the newest-table rule.
        Never raises (a store in trouble only costs the attachment)."""
        try:
            table_id = await asyncio.to_thread(self.tables.store.server_setting, ATTACH_KEY)
            if table_id is None:
                return
            table = await self.tables.get(table_id)
        except Exception:
            logger.warning("the camera's attachment was not restored", exc_info=True)
            return
        if table is None or table.snapshot.finished:
            logger.info("camera was attached to table %s, now finished or gone", table_id)
            return
        self._explicit_table = table_id
        logger.info("camera attached to table %s again", table_id)

    async def _refresh_target(self) -> None:
        table = await self.target_table(cached=False)
        new = table.table_id if table else None
        if new != self._target:
            self._target = new
            logger.info("camera rolls go to table %s", new)
        self._apply_dice_set(table)

    async def _follow_target(self) -> None:
        while True:
            try:
                await self._refresh_target()
            except Exception:  # never let the follower die: log and try again
                logger.warning("camera target refresh failed", exc_info=True)
            await asyncio.sleep(TARGET_REFRESH_S)

    def _apply_dice_set(self, table: Table | None = None) -> None:
        if table is None:
            return
        self._keeper.set_dice_set(self.dice_set_for(table))

    def dice_set_for(self, table: Table) -> Any:
        """The dice set the colour stage assigns to at this table: the dice the game
        declares (`Game.dice_colours`), measured by the active calibration when it holds
        those colours, else the shipped standard set of that name or each colour's typical
        look; None when the game declares none (colours named one by one)."""
        from companion.vision.colour import CalibrationError, builtin_dice_set

        colours = table.game.dice_colours(table.session.options)
        if colours is None:
            return None
        calibration = self.calibration
        if calibration is not None and sorted(calibration.dice_set.colours) == sorted(colours):
            return calibration.dice_set
        try:
            return builtin_dice_set(table.game.name, colours)
        except CalibrationError:
            logger.warning("no dice set for %s's colours %s", table.game.name, colours)
            return None

    def attached_to(self, table_id: str) -> bool:
        return self._target == table_id

    # -- per-table mode -------------------------------------------------------------------
    async def mode(self, table_id: str) -> Mode:
        """The table's mode: the host's choice, else `default_camera_mode` of the source."""
        if table_id not in self._modes:
            self._modes[table_id] = await asyncio.to_thread(self._read_mode, table_id)
        return self._modes[table_id] or default_camera_mode(self._live_camera)

    def _read_mode(self, table_id: str) -> Mode | None:
        value = self.tables.store.table_setting(table_id, MODE_KEY)
        if value == "confirm":
            return "confirm"
        return "auto" if value == "auto" else None

    async def set_mode(self, table_id: str, mode: Mode) -> None:
        await asyncio.to_thread(self.tables.store.set_table_setting, table_id, MODE_KEY, mode)
        self._modes[table_id] = mode

    # -- throws ---------------------------------------------------------------------------
    def _event_from_thread(self, event: RollEvent) -> None:
        """Called on the worker thread: hand the throw and its frame to the loop."""
        loop = self._loop
        image = self._keeper.last_image
        if loop is None or image is None or loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._guarded_throw(event, image), loop)

    async def _guarded_throw(self, event: RollEvent, image: np.ndarray) -> None:
        try:
            await self.on_throw(event, image)
        except Exception as exc:
            logger.exception("camera throw not handled")
            if self._target:
                self._note(self._target, f"the camera's roll was not handled: {exc}")

    def _note(self, table_id: str, text: str) -> TableNote:
        note = self._notes.setdefault(table_id, TableNote())
        note.text = text
        note.at = time.time()
        return note

    async def on_throw(self, event: RollEvent, image: np.ndarray) -> None:
        """One settled throw: match it against the attached table's expected dice and apply,
        hold for confirmation, or hold as a mismatch."""
        self.events_seen += 1
        table = await self.target_table()
        if table is None:
            logger.info("a throw settled but no table is open")
            return
        snapshot = table.snapshot
        throw = expected_throw(snapshot)
        if throw is None:
            self._note(
                table.table_id,
                f"dice thrown, but the game expects no roll now ({snapshot.turn.step.replace('_', ' ')})",
            )
            return
        result = match_roll(event.dice, throw.dice)
        pending_id = secrets.token_hex(6)
        if isinstance(result, Mismatch):
            boxes = [b for p in result.problems for b in p.boxes]
            picture = await asyncio.to_thread(self._picture, image, event.dice, boxes)
            self._pending[table.table_id] = Pending(
                pending_id,
                table.table_id,
                "mismatch",
                snapshot.state_id,
                event.dice,
                event.width,
                event.height,
                image,
                result.message,
                [p.to_json() for p in result.problems],
                None,
                throw.moves,
                picture,
            )
            self._note(table.table_id, f"not applied: {result.message}")
            return
        if await self.mode(table.table_id) == "confirm":
            picture = await asyncio.to_thread(self._picture, image, event.dice, [])
            self._pending[table.table_id] = Pending(
                pending_id,
                table.table_id,
                "confirm",
                snapshot.state_id,
                event.dice,
                event.width,
                event.height,
                image,
                "confirm the camera's roll",
                [],
                result,
                throw.moves,
                picture,
            )
            self._note(table.table_id, "waiting for the active player to confirm the roll")
            return
        self._pending.pop(table.table_id, None)
        await self._apply(table, snapshot.state_id, throw.moves, result, image, event.dice, CAMERA)

    @staticmethod
    def _picture(image: np.ndarray, dice: tuple[DieReading, ...], boxes: list[DieBox]) -> bytes:
        return encode_jpeg(mark_problems(image, dice, boxes), PICTURE_QUALITY, 800)

    async def _apply(
        self,
        table: Table,
        state_id: int,
        implied: tuple[Move, ...],
        roll: Roll,
        image: np.ndarray,
        dice: tuple[DieReading, ...],
        by: str,
    ) -> int | None:
        """Apply the moves the throw implies (each by its player's seat), then the roll;
        store the photo beside the roll. Returns the roll's log seq, or None when the
        engine refused (noted)."""
        action_id = f"camera-{secrets.token_hex(8)}"
        try:
            for number, move in enumerate(implied):
                done = await table.act(move, str(move.player), f"{action_id}-{number}", state_id)
                state_id = done.state_id
            result = await table.apply_roll(
                roll.dice, by=by, action_id=action_id, expected_state_id=state_id
            )
        except Rejection as exc:
            self._note(table.table_id, f"the game refused the camera's roll: {exc.message}")
            return None
        note = self._note(table.table_id, "roll applied")
        note.last_roll = [[d.colour, d.value] for d in roll.dice]
        note.last_roll_seq = result.state_id
        try:
            h, w = image.shape[:2]
            photo = await asyncio.to_thread(
                lambda: encode_jpeg(
                    annotate(image, FrameReading(w, h, dice)), PHOTO_QUALITY, PHOTO_WIDTH
                )
            )
            await asyncio.to_thread(self.tables.store.add_photo, table.table_id, action_id, photo)
        except Exception:  # the roll stands; only its evidence is missing
            logger.warning("photo of roll %s not stored", action_id, exc_info=True)
        return result.state_id

    # -- people acting on a held reading --------------------------------------------------
    def pending(self, table_id: str) -> Pending | None:
        return self._pending.get(table_id)

    def pending_picture(self, table_id: str) -> bytes | None:
        held = self._pending.get(table_id)
        return held.picture if held else None

    def _take(self, table: Table, pending_id: str) -> Pending:
        held = self._pending.get(table.table_id)
        if held is None or held.pending_id != pending_id:
            raise Rejection(Reason.STALE_STATE, "no_such_reading", "that camera reading is gone")
        if held.state_id != table.snapshot.state_id:
            self._pending.pop(table.table_id, None)
            raise Rejection(
                Reason.STALE_STATE,
                "stale_reading",
                "the game moved on since the camera read these dice; throw again",
            )
        return held

    async def confirm(self, table: Table, pending_id: str, by: str) -> int | None:
        """The active player (or the host) accepts a held roll."""
        async with self._held_lock:
            held = self._take(table, pending_id)
            if held.kind != "confirm" or held.roll is None:
                raise Rejection(
                    Reason.WRONG_DICE, "fix_first", "these dice do not match: fix them first"
                )
            self._pending.pop(table.table_id, None)
            return await self._apply(
                table, held.state_id, held.implied, held.roll, held.image, held.dice, CAMERA
            )

    async def fix(
        self,
        table: Table,
        pending_id: str,
        index: int,
        value: int | None,
        colour: str | None,
        remove: bool,
    ) -> dict[str, Any]:
        """The host corrects die `index` of a held reading (or removes it: not a die). When
        the corrected dice match, they are applied as the host's roll."""
        async with self._held_lock:
            held = self._take(table, pending_id)
            if not 0 <= index < len(held.dice):
                raise Rejection(Reason.MALFORMED, "no_such_die", f"there is no die {index + 1}")
            dice = list(held.dice)
            if remove:
                del dice[index]
            else:
                old = dice[index]
                flags = tuple(f for f in old.flags if f not in ("unreadable", "extra"))
                dice[index] = replace(
                    old,
                    value=value if value is not None else old.value,
                    colour=colour if colour is not None else old.colour,
                    confidence=1.0,
                    flags=flags,
                )
            held.dice = tuple(dice)
            return await self._rematch(table, held)

    async def add(
        self, table: Table, pending_id: str, x: float, y: float, value: int, colour: str
    ) -> dict[str, Any]:
        """The host adds a die the finder missed: `value` and `colour`, centred on (x, y) in
        pixels of the held frame, as big as the other dice (`added_die_side`). Then the dice
        are matched again as after `fix`."""
        async with self._held_lock:
            held = self._take(table, pending_id)
            for name, where, size in (("x", x, held.width), ("y", y, held.height)):
                if not 0 <= where < size:
                    raise Rejection(
                        Reason.MALFORMED,
                        f"add.{name}",
                        f"add.{name} {where:g} lies outside the picture (0 to {size})",
                    )
            for i, die in enumerate(held.dice):
                x0, y0, x1, y1 = die.where.box
                if x0 <= x <= x1 and y0 <= y <= y1:
                    raise Rejection(
                        Reason.ILLEGAL_MOVE, "on_a_die", f"die {i + 1} lies there: tap it to fix it"
                    )
            side = added_die_side(held.dice, held.width, held.height, self.calibration)
            added = DieReading(DieBox(x, y, side, side), value, 1.0, colour, 1.0, flags=(ADDED,))
            held.dice = (*held.dice, added)
            return await self._rematch(table, held)

    async def _rematch(self, table: Table, held: Pending) -> dict[str, Any]:
        """Match a corrected held reading again: apply it as the host's roll when it matches,
        else keep holding it with the problems that remain."""
        throw = expected_throw(table.snapshot)
        if throw is None:
            self._pending.pop(table.table_id, None)
            raise Rejection(Reason.ILLEGAL_MOVE, "no_roll_now", "the game expects no roll now")
        result = match_roll(held.dice, throw.dice)
        if isinstance(result, Mismatch):
            boxes = [b for p in result.problems for b in p.boxes]
            # a corrected roll that no longer matches is no roll to confirm
            held.kind = "mismatch"
            held.roll = None
            held.message = result.message
            held.problems = [p.to_json() for p in result.problems]
            held.picture = await asyncio.to_thread(self._picture, held.image, held.dice, boxes)
            return {"applied": False, "pending": held.to_json(table.snapshot)}
        self._pending.pop(table.table_id, None)
        seq = await self._apply(
            table, held.state_id, throw.moves, result, held.image, held.dice, HOST
        )
        return {"applied": seq is not None, "state_id": seq}

    def dismiss(self, table: Table, pending_id: str) -> None:
        """Forget a held reading: the host asks for a re-throw."""
        self._take(table, pending_id)
        self._pending.pop(table.table_id, None)
        self._note(table.table_id, "re-throw the dice")

    # -- status ---------------------------------------------------------------------------
    async def status_json(self, table: Table) -> dict[str, Any]:
        worker = self._worker
        status = worker.status().to_json() if worker is not None else None
        held = self._pending.get(table.table_id)
        if held is not None and held.state_id != table.snapshot.state_id:
            self._pending.pop(table.table_id, None)  # the game moved on (a manual roll)
            held = None
        note = self._notes.get(table.table_id, TableNote())
        throw = expected_throw(table.snapshot)
        spec = throw.dice if throw else None
        return {
            "enabled": self.enabled,
            "source": self._source_name,
            "starting": self._starting,
            "attached": self.attached_to(table.table_id),
            "mode": await self.mode(table.table_id),
            "status": status,
            "error": self._reader_error,
            "line": status_line(self.enabled, self._starting, status, self._reader_error),
            "expects": list(spec.colours) if spec else None,
            "kept": [[d.colour, d.value] for d in spec.kept] if spec else [],
            "implies": [describe_move(table.game, m) for m in throw.moves] if throw else [],
            "pending": held.to_json(table.snapshot) if held else None,
            "note": note.text,
            "note_at": note.at,
            "last_roll": note.last_roll,
            "last_roll_seq": note.last_roll_seq,
            "calibration": getattr(self.calibration, "name", None),
        }


def default_camera_mode(live_camera: bool) -> Mode:
    """The mode of a table whose host chose none. A live camera reads real dice, where the
    models still misread some (docs/BENCHMARKS.md: 2 of 274 dice on byler-d6-train, 34 of
    379 on epanemu-dice3's oblique phone photos), so its rolls wait for the active
    player's "Use this roll"; a replayed source (the demo clip, a video, a folder of
    images) applies a matching roll at once."""
    return "confirm" if live_camera else "auto"


def settle_config(
    fps: float, play_area: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
) -> SettleConfig:
    """The settle stage for the live table: a roll is reported after SETTLE_SECONDS of
    still, unchanged dice, at least MIN_STABLE_FRAMES frames (6 at 30 fps: the roll goes out
    167 ms after the first still frame; a tumbling die never looks still and alike in that
    many frames in a row; 3 at the demo clip's 10 fps), which keeps the rest-to-screen
    delay under 300 ms at 30 fps
    (docs/benchmarks/live.md)."""
    frames = max(MIN_STABLE_FRAMES, round(fps * SETTLE_SECONDS))
    return SettleConfig.model_validate({"stable_frames": frames, "play_area": play_area})


def status_line(
    enabled: bool, starting: bool, status: dict[str, Any] | None, error: str | None
) -> str:
    """The camera status in a few words for the table view."""
    if not enabled:
        return "camera off (manual dice entry)"
    if status is None:
        return "camera starting…" if starting else (error or "camera not running")
    parts = []
    if status["connected"]:
        parts.append(f"camera live · {status['fps']} fps · {status['settle']}")
    elif status["ended"]:
        parts.append("camera source ended")
    elif status["running"]:
        parts.append(f"camera lost: reconnecting (attempt {status['reconnect_attempts']})")
    else:
        parts.append("camera stopped")
    if status["last_error"]:
        parts.append(str(status["last_error"]))
    if status["corrupt_frames"]:
        parts.append(f"{status['corrupt_frames']} unreadable frames skipped")
    if error:
        parts.append(error)
    return " · ".join(parts)


def added_die_side(
    dice: tuple[DieReading, ...], width: int, height: int, calibration: Any | None
) -> float:
    """The side of a die the host adds to a reading: the median side of the other dice in
    it; without any, the calibrated side (scaled to this frame's width when the calibration
    names its frame); else DEFAULT_SIDE_FRACTION of the frame's shorter side."""
    if dice:
        return float(statistics.median(max(d.where.w, d.where.h) for d in dice))
    side = getattr(calibration, "die_side", None)
    if side is not None:
        frame = getattr(calibration, "frame", None)
        return float(side * width / frame[0]) if frame and frame[0] else float(side)
    return DEFAULT_SIDE_FRACTION * min(width, height)


def expected_throw(snapshot: Snapshot) -> Throw | None:
    """What a camera throw means now, as the engine declares it (`Turn.on_throw`): the roll
    it must be and any moves it implies first; None when the game is over or expects no
    dice."""
    if snapshot.finished:
        return None
    return snapshot.turn.on_throw()
