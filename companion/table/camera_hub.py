"""The live table's camera: a settled throw goes through in one pass, each step a function
of what it is handed, none calling back into this hub.

    worker thread (companion.live.worker): source -> DiceReader -> settle -> RollEvent
      (the event carries the frame it was read from)
      -> camera_runtime.CameraRuntime hands it to the server's loop: `CameraHub.on_throw`
      -> camera_feed.CameraFeed: the table the camera feeds, and its camera mode
      -> the engine says what a throw means there (`Snapshot.throw`, the Turn's
         `on_throw` with the table's automatic passes: the roll it must be, and the moves
         it implies first: the passes of those who have not acted, Sixto's re-roll)
      -> camera_decision.decide_throw, the one decision: match the dice to that roll
         (live.match), then sure or held (the calibrated confidence against the shipped
         threshold), giving a roll to apply (mode "auto"; mode "sure" when the camera is
         sure of it) or a question (held_reading.HeldReading): a mismatch for the host to
         fix (`fix`, `add`: a die the finder missed, or a re-throw), a matching roll for
         the active player to confirm (mode "confirm"), or one whose unsure dice they
         answer with a tap each (mode "sure"). A question is never applied by itself.
      -> roll_intake.RollIntake.take, the one intake: a roll is applied (the implied moves
         and the roll, `Table.act_throw`), its photo kept in SQLite and its dice handed to
         learning.Learning (the camera's setup learns from them in worker threads; issue
         15); a question is held with its picture.
      -> the table publishes its new snapshot: every screen (the tablets' WebSockets,
         companion.web.routes.ws) draws it.

A person's answer to a question (`confirm`, `fix`, `add`) is the same pass from the
middle: held_reading's pure functions (`confirmed`, `fix_die`, `add_die`, `rematch`) give
the roll or the changed question, and the intake takes it.

The demo camera (companion.live.demo.DemoThrows) is told here what to throw: the dice of
the roll the fed table expects now (`Turn.chance`), once per state, nothing while players
still act; so it never feeds a game dice it does not use.

Each part owns one thing: the runtime its threads, reader and status; the feed which table
and how; the decision what a throw is; a held reading is a frozen value changed by pure
functions; the intake applies and holds. This hub hands each throw along and answers the
routes (companion/web/routes/live.py). It imports nothing of the web layer: the words of a
move (a view's label) are handed in (`describe`).

Decisions (also in docs/live-table.md):
- A throw while the game expects no dice (players still crossing) is neither applied nor
  held: the status line says so, and the thrower throws again when the game asks.
- Faults stay in the worker thread (its status shows them, it reconnects with back-off);
  a failing throw is logged and noted, never raised into the server.

The service holds no rules: what a roll must contain and what a throw implies come from
the engine's Turn, and the engine accepts or refuses every move (a refusal is noted)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from companion.live.demo import DemoThrow, can_draw
from companion.live.settle import RollEvent
from companion.rules.base import Move, Reason, Rejection, Roll, Throw
from companion.rules.session import HOST
from companion.table.access import Viewer
from companion.table.camera_decision import decide_throw, mode_line
from companion.table.camera_feed import (
    CHOSEN_LEFT_S,
    FOLLOW_IDLE_S,
    CameraFeed,
    dice_set_for,
    throws_calibrated_set,
)
from companion.table.camera_runtime import CameraRuntime, ReaderFactory, default_camera_mode
from companion.table.camera_settings import CameraSettings
from companion.table.held_reading import (
    CameraRoll,
    DieChange,
    HeldReading,
    HeldReadings,
    Mode,
    add_die,
    added_die_side,
    confirm_refusal,
    confirmed,
    die_change,
    fix_die,
    fix_refusal,
    held_json,
    rematch,
    rethrow_refusal,
)
from companion.table.learning import Learning
from companion.table.roll_intake import Answerer, RollIntake, Taken, log_roll
from companion.table.snapshot import Snapshot
from companion.table.store import StorageError
from companion.table.tables import Table, Tables
from companion.table.words import names_of, score_text, with_names

if TYPE_CHECKING:
    from companion.vision.calibration import TableCalibration

logger = logging.getLogger(__name__)

TARGET_REFRESH_S = 1.0
# the minutes after which a game that rests, and a chosen table that was left, let the
# camera go (camera_feed.plays_on, is_left), as the pages say them
RESTS_MINUTES = round(FOLLOW_IDLE_S / 60)
LEFT_MINUTES = round(CHOSEN_LEFT_S / 60)
# the demo camera's pause before the roll that closes a race (Turn.race: e.g. a pound after
# a call): at a real table the roller picks the dice up, shakes and throws, so the players
# have seconds to be first, not the instant the demo would take
RACE_PAUSE_S = 8.0
RACE_WAIT = "time for the race (the first tap wins)"
# ... and before a roll that closes a choice (players listed while the roll is due, not a
# race: Sixmix's tied starter, Sixis' opener): time to read the banner and choose
CHOICE_PAUSE_S = 15.0
CHOICE_WAIT = "time to choose before the roll (the choice is in the banner)"
# the note of a table whose camera went to another (the newest open table, or attached);
# no names: the devices of this table need not be joined at the other one (the re-probe
# read another table's game and players so). No "Use the camera at this table takes it
# back" either: every device of the table reads the note, players have no such button,
# and a host off the server machine is refused while the other table holds the camera;
# the host's button says what taking it back needs (`held_elsewhere`)
CAMERA_ELSEWHERE = "the camera now serves another table"
CAMERA_BACK = "the camera serves this table again"
# what starting a new table does to the camera, said on the start page before it happens
# the button's name in quotes (unquoted it read as an instruction), and "the server
# machine" in a café owner's words
NEW_TABLE_TAKES_CAMERA = (
    "The camera serves {table}. A new table takes it; that table's \"Use the camera at this "
    'table" button takes it back.'
)
NEW_TABLE_LEAVES_CAMERA = (
    "The camera stays with {table}: it was chosen for that game. A new table gets it when "
    "that game ends or has had no device connected and no action for 10 minutes, or from "
    '"Use the camera here" beside a game on this page, on the computer running the companion.'
)
NEW_TABLE_WAITS_FOR_CAMERA = (
    "The camera stays with {table} while that game plays on. A new table gets it when that "
    'game ends or rests for 10 minutes, or from "Use the camera here" beside a game on this page, '
    "on the computer running the companion."
)
A_GAME_IN_PROGRESS = "a game in progress"
# server_settings: the calibration file the calibration page put in use ("": none)
CALIBRATION_KEY = "camera_calibration"
CALIBRATION_NOT_RESTORED = (
    "The calibration in use before the restart did not load ({problem}); none is in use."
)
# why the camera learns nothing at a table, in the camera line's words
NOT_CALIBRATED = (
    "The camera is not learning: it learns a table's dice once it is calibrated for them "
    "(Calibrate the camera, on the server machine)."
)
DEMO_TEACHES_NOTHING = (
    "The camera is not learning: the demo camera's dice are drawn, and drawn dice teach "
    "nothing about a real table."
)
# why the calibration page measures nothing now (POST /api/calibration refuses with it, the
# page says it above the picture): the demo camera's empty table or drawn dice are not the
# host's dice under the host's light
DEMO_MEASURES_NOTHING = (
    "The demo camera plays (no webcam answered at start): this picture is a drawn table, "
    "with dice only while a game waits for a roll, and there are no dice of yours to "
    "measure. Plug a webcam in, then Restart the camera (a table's Camera settings) or "
    "restart the companion, and calibrate with it."
)
OTHER_DICE = (
    "The camera learns {setup}'s dice, not this table's: it reads these with the shipped "
    "models and learns nothing from them (calibrate the camera for this game's dice, on the "
    "server machine, to teach it them)."
)
NO_FIXED_DICE = (
    "The camera is not learning: the dice of {game} are not one fixed set, so no calibration "
    "is for them; it reads them with the shipped models."
)

# a move's words at a table, for a button or a status line (the web's views.describe_move)
DescribeMove = Callable[[Table, Move], str]


def new_table_line(target: str | None, hold: str | None, visible: Mapping[str, str]) -> str | None:
    """What starting a new table does to the camera (the start page says it first): None
    while the camera serves no table; `hold`: why the table served keeps it (CameraFeed.hold).
    ``visible`` holds the words ("Qwixx: Ann, Bob") of the tables this browser may see; any
    other is only "a game in progress"."""
    if target is None:
        return None
    words = {"attached": NEW_TABLE_LEAVES_CAMERA, "playing": NEW_TABLE_WAITS_FOR_CAMERA}.get(
        hold or "", NEW_TABLE_TAKES_CAMERA
    )
    return words.format(table=visible.get(target, A_GAME_IN_PROGRESS))


def expected_throw(snapshot: Snapshot) -> Throw | None:
    """What a camera throw means now, as the engine declares it (`Snapshot.throw`: the
    Turn's `on_throw` with the table's automatic passes): the roll it must be and any moves
    it implies first; None when the game is over or expects no dice."""
    return snapshot.throw


def demo_throw(table: Table, rethrows: int = 0) -> tuple[DemoThrow | None, str]:
    """What the demo camera throws at `table` now, or why nothing: only a roll the game
    asks for (`Turn.chance`), so that it never throws while players act (a throw there
    would close their step or be Sixto's re-roll before the player chose). `rethrows`: the
    host's re-throws so far (each asks for a new throw of the same state)."""
    snapshot = table.snapshot
    turn = snapshot.turn
    if snapshot.finished:
        return None, "the game is over"
    if not turn.chance or turn.dice is None:
        return None, "waiting until the game asks for dice"
    colours = turn.dice.colours + tuple(d.colour for d in turn.dice.kept)
    if not can_draw(colours):
        return None, f"it has no dice for {table.game.title}'s colours"
    kept = tuple((d.colour, d.value) for d in turn.dice.kept)
    key = f"{table.table_id}:{snapshot.state_id}:{rethrows}"
    if not turn.players:
        return DemoThrow(key, turn.dice.colours, kept), ""
    if turn.race:
        return DemoThrow(key, turn.dice.colours, kept, RACE_PAUSE_S, RACE_WAIT), ""
    return DemoThrow(key, turn.dice.colours, kept, CHOICE_PAUSE_S, CHOICE_WAIT), ""


class CameraHub:
    """See the module docstring. Create in the lifespan, `start(loop)`, `stop()`."""

    def __init__(
        self,
        settings: CameraSettings,
        tables: Tables,
        describe: DescribeMove,
        reader_factory: ReaderFactory | None = None,
        learning: Learning | None = None,
    ) -> None:
        self.settings = settings
        self.learning = learning
        self.tables = tables
        self.describe = describe
        self.runtime = CameraRuntime(settings, reader_factory)
        self.feed = CameraFeed(tables)
        self.intake = RollIntake(tables.store, learning)
        self.events_seen = 0
        self._said_none_served = False  # the log said a throw found no table (said once)
        self._rethrows: dict[str, int] = {}  # per table: the host's re-throws (demo keys)
        # tables whose host started the replayed source (demo, video, photos) before
        # every seat was taken
        self._started_by_host: set[str] = set()
        # tables a recording's throw came to while seats were free: it plays again once
        # they are taken (`_replay_once_seated`)
        self._replay_when_seated: set[str] = set()
        self._follower: asyncio.Task[None] | None = None
        # why the calibration page's last choice is not in use after a restart (None: it is)
        self.calibration_problem: str | None = None

    @property
    def held(self) -> HeldReadings:
        """The questions held per table (the intake holds them)."""
        return self.intake.held

    @property
    def enabled(self) -> bool:
        return self.runtime.enabled

    @property
    def calibration(self) -> TableCalibration | None:
        return self.runtime.calibration

    @property
    def chosen_calibration(self) -> TableCalibration | None:
        """The calibration the host chose, in use or waiting for a real camera."""
        return self.runtime.chosen

    @property
    def teaching_refused(self) -> str | None:
        """Why no setup may be taught from the camera now, in words (the teaching round
        refuses with it, the calibration page says it instead of offering the round): the
        demo camera plays, and its drawn dice teach nothing about a real table. None while
        a real source plays."""
        return DEMO_TEACHES_NOTHING if self.runtime.plays_demo else None

    @property
    def measuring_refused(self) -> str | None:
        """Why the calibration page may measure nothing now, in words: the demo camera
        plays (a newcomer's first evening: its picture is no table of theirs). None while a
        real source plays."""
        return DEMO_MEASURES_NOTHING if self.runtime.plays_demo else None

    @property
    def served_table_id(self) -> str | None:
        """The table the camera serves, as the follower last found it (None: none, or no
        camera: what `new_table_line` names)."""
        return self.feed.target_id if self.enabled else None

    def new_table_line(self, visible: Mapping[str, str]) -> str | None:
        """The start page's line on the camera (module function `new_table_line`); None
        without a camera."""
        return new_table_line(self.served_table_id, self.feed.hold, visible)

    # -- life -----------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the runtime (models and source on a starter thread) and the follower that
        looks up the target table every second. With --no-camera only the status exists."""
        self.runtime.start(loop, self.on_throw)
        if self.enabled:
            self._follower = loop.create_task(self._follow_target())

    def stop(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
        self.runtime.stop()

    async def _follow_target(self) -> None:
        """Look up the table the camera feeds every TARGET_REFRESH_S, and at once when a
        table is added (its first throw is read with its own dice set, not the last
        table's)."""
        added = asyncio.Event()
        self.tables.added.append(lambda _table_id: added.set())
        while True:
            added.clear()  # before the look-up: a table added during it wakes the next
            try:
                await self._refresh_target()
            except Exception:  # never let the follower die: log and try again
                logger.warning("camera target refresh failed", exc_info=True)
            with contextlib.suppress(TimeoutError):  # the periodic look-up
                await asyncio.wait_for(added.wait(), TARGET_REFRESH_S)

    async def _refresh_target(self) -> None:
        before = self.feed.target_id
        table = await self.feed.refresh()
        self._note_move(before, table)
        if table is not None:
            self._use_dice_of(table)
            await self._next_question(table)  # a question closed by the game moving on
            await self._replay_once_seated(table)
        self._direct_demo(table)

    def _direct_demo(self, table: Table | None) -> None:
        """Tell the demo camera (when it runs) what the fed table expects now."""
        director = self.runtime.demo
        if director is None:
            return
        if table is None:
            director.expect(None, "no table is open")
            return
        if self.held.current(table) is not None:
            # a question is open: never throw over it (it holds until answered or dropped)
            director.expect(None, "waiting for the answer to the camera's question")
            return
        missing = self.waits_for_seats(table)
        if missing:
            director.expect(None, waiting_for_seats(missing))
            return
        throw, why = demo_throw(table, self._rethrows.get(table.table_id, 0))
        director.expect(throw, why)

    def waits_for_seats(self, table: Table) -> list[str]:
        """The players a replayed source waits for at `table`: those who have no seat yet,
        until the host says start (`start_before_seats_taken`). The demo camera throws nothing meanwhile;
        a video or a folder of photos plays at its own pace, so its throws are not taken
        (with automatic passes each still photo ended the crossing and handed out
        penalties at a table nobody sat at). A live camera sees the real dice people
        throw, so it waits for nobody."""
        runtime = self.runtime
        # with no source named, a webcam that answers is used in the demo camera's place
        demo = runtime.demo is not None and not runtime.live_camera
        replays = demo or runtime.settings.source in ("video", "images")
        if not replays or table.table_id in self._started_by_host:
            return []
        taken = table.seats_taken()
        return [name for seat, name in enumerate(table.snapshot.players) if seat not in taken]

    def start_before_seats_taken(self, table: Table) -> None:
        """The host's Start: the demo camera, video or photos play without waiting for the
        free seats (a recording plays again from its start: `_replay_once_seated`)."""
        self._started_by_host.add(table.table_id)
        self._direct_demo(table)

    def _not_taken_for_seats(self, table: Table) -> bool:
        """Whether a replayed throw comes while seats are free: it is not taken, the note
        says whom the camera waits for, and, before the game's first roll, the recording
        plays again from its start once they sit."""
        missing = self.waits_for_seats(table)
        if not missing:
            return False
        self.intake.note(table.table_id, f"throw not taken: {waiting_for_seats(missing)}")
        if not any(isinstance(action.move, Roll) for action in table.session.actions):
            # its skipped throws are the game's first; mid-game (a seat the host freed) it
            # plays on: from its start, its first throws came again in the game's middle
            self._replay_when_seated.add(table.table_id)
        return True

    async def _replay_once_seated(self, table: Table) -> None:
        """A recording whose throws came while seats were free plays again from its start
        once every seat is taken (or the host's Start): the throws it skipped are the
        game's, as the demo camera's first throw is."""
        if table.table_id not in self._replay_when_seated or self.waits_for_seats(table):
            return
        self._replay_when_seated.discard(table.table_id)
        self.intake.note(table.table_id, "everyone has a seat: the recording plays from its start")
        await asyncio.to_thread(self.runtime.restart)

    def _use_dice_of(self, table: Table) -> None:
        dice_set = dice_set_for(table.game, table.session.options, self.runtime.calibration)
        self.runtime.reader.use_dice_set(dice_set)

    def _note_move(self, before: str | None, table: Table | None) -> None:
        """When the camera went from table `before` to `table`: the table that lost it
        says where it went, and a table it comes back to says so (not where it went)."""
        if before is None or table is None or table.table_id == before:
            return
        self.intake.note(before, CAMERA_ELSEWHERE)
        if self.intake.note_of(table.table_id).text.startswith(CAMERA_ELSEWHERE):
            self.intake.note(table.table_id, CAMERA_BACK)

    def held_elsewhere(self, table_id: str) -> str | None:
        """Why a host of `table_id` off the server machine may not take the camera now, in
        words: another table holds it, chosen for that game (by its host, or on the server's
        own machine) or because its game plays on (anyone may start a table: a table of
        one's own must not be a way to take a running game's camera). None: a host may
        take it."""
        target = self.feed.target_id
        if target is None or target == table_id or self.feed.hold is None:
            return None
        # "attached": by its host or on the server's own start page, so no one is named
        attached = self.feed.hold == "attached"
        why = "it was chosen for that game" if attached else "its game plays on"
        # what frees it for this host's button; not "it comes here": once free, the camera
        # follows the newest table by itself, which need not be this one (`follows_next`)
        frees = "that game ends"
        if attached:  # a chosen table keeps it until it is left (camera_feed.is_left)
            frees += f" or has had no device connected and no action for {LEFT_MINUTES} minutes"
        else:
            frees += f" or rests {RESTS_MINUTES} minutes without an action"
        return (
            f"the camera serves another table ({why}): you can take it here once {frees}, "
            "or the server machine can move it here"
        )

    async def serves_elsewhere(self, table: Table) -> str | None:
        """What the players of `table` are told while another table keeps the camera from
        it (`feed.hold`): that it serves another table now, that they enter their rolls by
        hand meanwhile, and how it comes to them: by itself only where this is the table it
        would follow next (`feed.follows_next`; a table older than the one served, or with
        a newer one started since, waits for the server's own screen); a table chosen for
        it lets it go once left (camera_feed.is_left), one that plays on once it rests.
        The other table is
        not named: its players need not have joined here. None: the camera serves this
        table, or no table holds it (it follows the newest), or this game is over."""
        target = self.feed.target_id
        hold = self.feed.hold
        if target is None or target == table.table_id or hold is None:
            return None
        if table.snapshot.finished:
            return None
        why = " (it was chosen for that game)" if hold == "attached" else ""
        ends = "when that game ends"
        if hold == "attached":
            ends += f" or after {LEFT_MINUTES} minutes with no device connected there and no action"
        else:
            ends += f" or after {RESTS_MINUTES} minutes without an action there"
        if await self.feed.follows_next(table):
            comes = f"It comes to this table {ends}, or when the server's own screen moves it."
        else:
            comes = (
                f"It does not come to this table by itself: {ends} it goes on to a newer "
                "table (or to none), and the server's own screen can move it here."
            )
        return (
            f"The camera serves a game at another table now{why}: enter your rolls by hand "
            f"meanwhile (tap the dice you threw). {comes}"
        )

    def check_may_take(self, table_id: str) -> None:
        """Refuse a host's attach while another table holds the camera (`held_elsewhere`);
        the server machine's page does not ask."""
        why = self.held_elsewhere(table_id)
        if why is not None:
            raise Rejection(Reason.NOT_ALLOWED, "camera_held", why)

    async def take_for(self, table_id: str, on_server: bool) -> None:
        """Camera rolls go to `table_id`, for a person who asked: its host's "Use the
        camera at this table" or the server's own start page's "Use the camera here". The
        server's own machine always moves the camera; a host's device elsewhere only while
        no other table holds it (`check_may_take`: refused `camera_held`). A finished game
        is refused (`game_finished`): nobody throws there any more."""
        table = await self.tables.openable(table_id)
        if table is not None and table.snapshot.finished:
            raise Rejection(
                Reason.GAME_OVER,
                "game_finished",
                "this game has ended, so it takes no camera rolls; the camera stays where it is",
            )
        if not on_server:
            self.check_may_take(table_id)
        await self.attach(table_id)

    async def attach(self, table_id: str) -> None:
        before = self.feed.target_id
        table = await self.feed.attach(table_id)
        self._note_move(before, table)
        if table is not None:
            self._use_dice_of(table)
        self._direct_demo(table)

    def set_calibration(self, calibration: TableCalibration | None) -> None:
        """Use a table calibration from now on: its play area and die size in the reader,
        its dice set at the next target look-up (when it holds the game's dice); None: no
        calibration."""
        self.runtime.set_calibration(calibration)

    async def use_calibration(self, calibration: TableCalibration | None, file: str) -> None:
        """The calibration page's choice (None and "": none), stored before it is used so a
        restart keeps what the host was told (`restore_calibration`)."""
        await asyncio.to_thread(self.tables.store.set_server_setting, CALIBRATION_KEY, file)
        self.calibration_problem = None
        self.set_calibration(calibration)

    async def restore_calibration(self) -> None:
        """At start-up without --calibration: the file the calibration page put in use
        last, from the calibration folder (chosen again; while the demo camera plays it
        waits for a real camera, `CameraRuntime.calibration`). Never raises: a file that no
        longer loads is logged and said on the calibration page (`calibration_problem`)."""
        from companion.vision.calibration import calibration_path, load_calibration
        from companion.vision.colour import CalibrationError

        try:
            file = await asyncio.to_thread(self.tables.store.server_setting, CALIBRATION_KEY)
            if not file:
                return
            path = calibration_path(file, self.settings.calibration_dir)
            calibration = await asyncio.to_thread(load_calibration, path)
        except (CalibrationError, OSError, StorageError) as exc:
            logger.warning("the calibration in use before the restart is not: %s", exc)
            self.calibration_problem = CALIBRATION_NOT_RESTORED.format(problem=exc)
            return
        logger.info("camera calibration %s in use again", calibration.name)
        self.set_calibration(calibration)

    # -- throws ---------------------------------------------------------------------------
    async def on_throw(self, event: RollEvent) -> None:
        """One settled throw (on the loop): apply it, hold it, or say why not. Never
        raises: a failure is logged and noted on the target table."""
        try:
            await self._judge(event)
        except Exception as exc:
            logger.exception("camera throw not handled")
            if self.feed.target_id:
                self.intake.note(self.feed.target_id, f"the camera's roll was not handled: {exc}")
        finally:
            # the demo camera throws the next roll once the game asks for it
            self._direct_demo(await self.feed.target_table())

    async def _judge(self, event: RollEvent) -> None:
        self.events_seen += 1
        table = await self.feed.target_table()
        if table is None:
            if not self._said_none_served:  # a recording throws every few seconds
                logger.info(
                    "a throw settled but the camera serves no table: it is not read as a "
                    "roll (said once until a table takes the camera)"
                )
                self._said_none_served = True
            return
        self._said_none_served = False
        async with self.held.lock:
            if self.held.current(table) is not None:
                self._wait_behind_question(table, event)
                return
            if self._not_taken_for_seats(table):
                return
            if table.table_id in self._replay_when_seated:
                # every seat is taken, and the recording's replay from its start is due:
                # this throw is its middle (a roll before its first throw), so restart now
                await self._replay_once_seated(table)
                return
            await self._ask_or_apply(table, event, await self.mode(table.table_id))

    def _wait_behind_question(self, table: Table, event: RollEvent) -> None:
        """A throw while a question is open: it never replaces the question on screen (a
        confirm must apply the dice the person saw); it is the next question."""
        if self.held.wait(table.table_id, event):
            self.intake.note(
                table.table_id,
                "dice thrown again while the camera's question is open: that throw is asked next",
            )
        else:
            self.intake.note(table.table_id, "dice thrown again: too many throws wait, dropped")

    async def _ask_or_apply(self, table: Table, event: RollEvent, mode: Mode) -> None:
        """One pass of a throw on the table's state now: the decision, then the intake
        (it applies the roll or holds the question); or say why not."""
        snapshot = table.snapshot
        throw = expected_throw(snapshot)
        if throw is None:
            step = snapshot.turn.step.replace("_", " ")
            why = f"the game expects no roll now ({step})"
            self.intake.note(table.table_id, f"dice thrown, but {why}")
            log_roll(table, event.dice, f"refused (no_roll_expected): {why}")
            return
        outcome = decide_throw(
            event, throw, snapshot.state_id, table.table_id, mode, secrets.token_hex(6),
            self.runtime.auto_apply_threshold,
        )  # fmt: skip
        await self._take(table, outcome, tapped=False)

    async def _take(
        self,
        table: Table,
        outcome: CameraRoll | HeldReading,
        tapped: bool,
        answerer: Answerer | None = None,
    ) -> Taken:
        """Hand a decision to the intake, with the camera's setup (which learns from it)
        when the table throws the setup's dice, and the device whose answer it is."""
        return await self.intake.take(table, outcome, self._teaches(table), tapped, answerer)

    def _teaches(self, table: Table) -> str | None:
        """The setup `table`'s rolls teach: the camera's calibration, when the table's game
        throws its dice; else None (they are another set's dice)."""
        calibration = self.runtime.calibration
        if self.runtime.plays_demo or calibration is None:  # renders teach no real table
            return None
        if not throws_calibrated_set(table.game.dice_colours(table.session.options), calibration):
            return None
        return calibration.name

    async def _next_question(self, table: Table) -> None:
        """Once no question is open, the next throw that waited behind one is asked. It is
        asked even where the table applies rolls at once: nobody saw it judged, and the
        game may have moved on since it was thrown."""
        async with self.held.lock:
            while self.held.current(table) is None:
                event = self.held.next_waiting(table.table_id)
                if event is None:
                    return
                await self._ask_or_apply(table, event, "confirm")

    async def mode(self, table_id: str) -> Mode:
        return await self.feed.mode(table_id, default_camera_mode(self.runtime.live_camera))

    # -- people acting on a held reading --------------------------------------------------
    # Who may do what is checked here, under the lock, on the reading as held then: a check
    # before the lock let a fix landing in between (the host's, making a roll to confirm a
    # mismatch under the same id) pass the active player's value fix onto the mismatch.
    # The device is read again there too (`token`: its own; None: the `device` handed in,
    # no device's token), under the table's lock as a move's sender is (`Table.sender_now`):
    # a device whose seat the host freed while its tap waited confirmed the throw. The roll
    # an answer makes is checked once more by the table, where it is applied under the
    # table's lock (`answered_by`): a free landing between this check and the apply.
    async def confirm(
        self,
        table: Table,
        held_id: str,
        shown: Sequence[tuple[str, int]] | None = None,
        *,
        device: Viewer,
        token: str | None,
    ) -> int | None:
        """`device` (the active player's or the host's) accepts a held roll as read: the
        one they saw (`shown`, its dice, checked when given), then the next throw that
        waited is asked."""
        async with self.held.lock:
            device = await sender(table, device, token)
            held = self.held.take(table, held_id)
            active = table.snapshot.turn.active
            refusal = confirm_refusal(held.kind, device.host, device.seat, active)
            if refusal is not None:
                raise refusal
            answer = answered_by(device, token)
            taken = await self._take(table, confirmed(held, shown), True, answer)
            if taken.seq is not None:
                self.held.used(table.table_id, held_id)
        await self._next_question(table)
        return taken.seq

    def _take_to_change(
        self, table: Table, held_id: str, change: DieChange, device: Viewer
    ) -> HeldReading:
        """The reading a fix refers to, when `device` may make `change` to it as held now
        (`fix_refusal`); refused when it is gone. Called under the lock."""
        held = self.held.take(table, held_id)
        active = table.snapshot.turn.active
        refusal = fix_refusal(held.kind, change, device.host, device.seat, active)
        if refusal is not None:
            raise refusal
        return held

    async def fix(
        self,
        table: Table,
        held_id: str,
        index: int,
        value: int | None,
        colour: str | None,
        remove: bool,
        *,
        device: Viewer,
        token: str | None,
    ) -> dict[str, Any]:
        """`device` (the host, or the active player on a roll to confirm or answer)
        corrects die `index` of a held reading (or removes it: not a die). When the
        corrected dice match and no unsure die is left, they are applied as its roll."""
        async with self.held.lock:
            device = await sender(table, device, token)
            held = self._take_to_change(table, held_id, die_change(colour, remove), device)
            held = fix_die(held, index, value, colour, remove)
            answer = await self._rematch(table, held, device, token)
            if answer["applied"]:
                self.held.used(table.table_id, held_id)
        await self._next_question(table)
        return answer

    async def add(
        self,
        table: Table,
        held_id: str,
        x: float,
        y: float,
        value: int,
        colour: str,
        *,
        device: Viewer,
        token: str | None,
    ) -> dict[str, Any]:
        """The host adds a die the finder missed, where it lies (as big as the other dice,
        or as calibrated); then the dice are matched again as after `fix`."""
        async with self.held.lock:
            device = await sender(table, device, token)
            held = self._take_to_change(table, held_id, "add", device)
            calibration = self.runtime.calibration
            side = added_die_side(
                held.dice,
                held.width,
                held.height,
                calibration.die_side if calibration else None,
                calibration.frame[0] if calibration and calibration.frame else None,
            )
            added = add_die(held, x, y, value, colour, side)
            answer = await self._rematch(table, added, device, token)
        await self._next_question(table)
        return answer

    async def _rematch(
        self, table: Table, held: HeldReading, device: Viewer, token: str | None
    ) -> dict[str, Any]:
        """Match `device`'s corrected reading again: applied (as its roll) when it matches
        and no unsure die is left, else held again."""
        throw = expected_throw(table.snapshot)
        if throw is None:
            self.held.drop(table.table_id)
            raise Rejection(Reason.ILLEGAL_MOVE, "no_roll_now", "the game expects no roll now")
        corrected = rematch(held, throw, answerer(device))
        taken = await self._take(table, corrected, True, answered_by(device, token))
        if taken.held is not None:
            return {"applied": False, "pending": self._held_json(table, taken.held)}
        return {"applied": taken.seq is not None, "state_id": taken.seq}

    async def dismiss(
        self, table: Table, held_id: str, *, device: Viewer, token: str | None
    ) -> None:
        """Forget a held reading: the host asks for a re-throw (the demo camera throws
        again at once), or a throw that waited is asked next."""
        async with self.held.lock:
            refusal = rethrow_refusal((await sender(table, device, token)).host)
            if refusal is not None:
                raise refusal
            self.held.take(table, held_id)
            self.held.drop(table.table_id)
            self._rethrows[table.table_id] = self._rethrows.get(table.table_id, 0) + 1
            self.intake.note(table.table_id, "re-throw the dice")
        await self._next_question(table)

    # -- status ---------------------------------------------------------------------------
    def _held_json(self, table: Table, held: HeldReading) -> dict[str, object]:
        return held_json(held, lambda moves: implied_texts(table, moves, self.describe))

    async def status_json(self, table: Table) -> dict[str, Any]:
        held = self.held.current(table)
        throw = expected_throw(table.snapshot)
        attached = self.feed.attached_to(table.table_id)
        mode = await self.mode(table.table_id)
        return {
            **self.runtime.status_json(served=attached),
            "attached": attached,
            "mode": mode,
            # what the camera does with this table's rolls: said only where it reads them
            # (beside "The camera watches another table" it read as a promise)
            "mode_line": (
                mode_line(mode, self.runtime.auto_apply_threshold)
                if attached and not table.snapshot.finished
                else ""
            ),
            "sure_threshold": self.runtime.auto_apply_threshold,
            # the game waits for a roll (a throw now is no re-roll, nor closes anyone's
            # step): only then does a player's line say the camera watches for the next
            # roll (a Sixto tablet said so while its player chose Keep or Re-roll)
            "roll_due": not table.snapshot.finished and table.snapshot.turn.chance,
            "expects": list(throw.dice.colours) if throw else None,
            "kept": [[d.colour, d.value] for d in throw.dice.kept] if throw else [],
            "implies": implied_texts(table, throw.implied, self.describe) if throw else [],
            "pending": self._held_json(table, held) if held else None,
            "waiting_behind": self.held.waiting_count(table.table_id),
            "waits_for_seats": self.waits_for_seats(table) if attached else [],
            **self._note_json(table, attached),
            "learning": self._learning_json(table),
            "taught_setup": await self._taught_setup(table, attached),
            "finished": table.snapshot.finished,
            "elsewhere": await self.serves_elsewhere(table) if self.enabled else None,
            **self._finished_line(table),
        }

    def _note_json(self, table: Table, attached: bool) -> dict[str, object]:
        """What the camera last did for the table; once its game is over no sentence (the
        last "roll applied" read under "The game is over" as if the camera read on), nor
        CAMERA_ELSEWHERE while the camera serves another table: the camera line says that
        already (a player's tablet read "The camera watches another table." and "the camera
        now serves another table" at once)."""
        note = self.intake.note_of(table.table_id).to_json()
        elsewhere = not attached and note["note"] == CAMERA_ELSEWHERE
        if table.snapshot.finished or elsewhere:
            note.update(note="", note_age_s=None)
        return note

    def _finished_line(self, table: Table) -> dict[str, str]:
        """A finished table's camera line says so (the camera moved on: its own line would
        speak of another table, or of none)."""
        if not table.snapshot.finished or not self.enabled:
            return {}
        return {"line": "the game is over: the camera reads no more rolls for this table"}

    async def _taught_setup(self, table: Table, attached: bool) -> str | None:
        """The setup a game the camera serves no more (over, or left for another table
        mid-game) taught its dice to, for its host's link to what the camera learnt (read
        only there, companion.web.routes.setups); None otherwise."""
        if self.learning is None or attached:
            return None
        return await self.learning.setup_taught_by(table.table_id)

    def _learning_json(self, table: Table) -> dict[str, object] | None:
        """What the camera learns at this table, for its camera line: the setup's status
        (companion.table.learning.Learning.status) with whether this table teaches it, or
        why it learns nothing (the demo camera; no calibration; another set's dice). None:
        learning off."""
        if self.learning is None:
            return None
        calibration = self.runtime.calibration
        if self.runtime.plays_demo:
            return {"setup": None, "teaches": False, "why": DEMO_TEACHES_NOTHING}
        if calibration is None:
            return {"setup": None, "teaches": False, "why": NOT_CALIBRATED}
        status = self.learning.status(calibration.name) or {}
        if self._teaches(table) is None:  # the reasons left: no fixed set, another set
            if table.game.dice_colours(table.session.options) is None:
                why = NO_FIXED_DICE.format(game=table.game.title)
            else:
                why = OTHER_DICE.format(setup=calibration.name)
            return {**status, "teaches": False, "why": why}
        return {**status, "teaches": True}


async def sender(table: Table, device: Viewer, token: str | None) -> Viewer:
    """The device answering a held reading as it stands now: `token`'s, read again under
    the table's lock (refused, `seat_freed`, once its seat was freed); `device` as handed
    in where no token is (a test's, the server's own)."""
    return device if token is None else await table.sender_now(token)


def answerer(device: Viewer) -> str:
    """Who answers a held reading from `device`: the host, or the seat (the `by` of the
    roll it may become)."""
    return HOST if device.host else str(device.seat)


def answered_by(device: Viewer, token: str | None) -> Answerer | None:
    """The device answering, for the table to check again where it applies the roll (a
    free of its seat may land after the hub's own check); None where no token is."""
    return None if token is None else Answerer(token, answerer(device))


def waiting_for_seats(players: Sequence[str]) -> str:
    """Whom a replayed source waits for, in words."""
    names = names_of(tuple(players), list(range(len(players))))
    return f"waiting for {names} to take a seat (or the host's Start)"


def implied_texts(table: Table, moves: Sequence[Move], describe: DescribeMove) -> list[str]:
    """The moves a throw implies, in words with their players' names, one line a player in
    the order they come ("Bob: Pass (no cross)"). A player with several of them (Qwixx's
    active player passes both the white sum and the colour step) is named once and each
    kind of move said once (players read "Cat: Pass (no cross), Cat: Pass (no cross)" as two
    passes of different turns). What the moves cost their player, as the engine scores the
    state after the moves before them, is added up and said once ("Cat: Pass (no cross),
    \N{MINUS SIGN}5 penalty")."""
    players = table.snapshot.players
    state: object | None = table.snapshot.state
    words: dict[int | str, list[str]] = {}  # a player's seat, or a move of no player's
    penalties: dict[int | str, int] = {}
    for index, move in enumerate(moves):
        text = with_names(describe(table, move), players)
        after = _played(table, state, move)
        named = 0 <= move.player < len(players)
        key: int | str = move.player if named else f"move {index}"
        said = words.setdefault(key, [])
        if text not in said:
            said.append(text)
        if named:
            penalties[key] = penalties.get(key, 0) + _penalty(table, state, after, move.player)
        state = after
    texts = []
    for key, said in words.items():
        text = ", ".join(said)
        if penalties.get(key, 0):
            text += f", {score_text(-penalties[key])} penalty"
        texts.append(f"{players[key]}: {text}" if isinstance(key, int) else text)
    return texts


def _penalty(table: Table, before: object | None, after: object | None, player: int) -> int:
    """The points `player` lost from `before` to `after` (0: none, or a state is unknown)."""
    if before is None or after is None:
        return 0
    scores = table.game.scores
    return max(0, scores(before)[player].total - scores(after)[player].total)


def _played(table: Table, state: object | None, move: Move) -> object | None:
    """The state after `move`, or None (no state, or the engine refuses it now)."""
    if state is None:
        return None
    try:
        return table.game.play(state, move)
    except Rejection:
        return None
