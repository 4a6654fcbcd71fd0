"""The server's side of a reader that learns its table (issue 15): every confirmed camera
roll teaches the setup the camera is calibrated for.

`Learning` owns the setup store (companion.vision.adapt_store, in the data directory) and
one `SetupLearner` per setup. A setup is a calibration name (a camera with a dice set): a
table whose camera has no calibration has no setup and stores nothing, and neither does a
roll entered by tapping the dice (there is no photo to learn from).

Nothing here runs on the event loop but the bookkeeping: recording a roll's dice (crops,
the shipped classifier once more, SQLite, PNG files) and refreshing the heads run in worker
threads (`asyncio.to_thread`); a refresh asked for while one runs is done once more after
it, so a burst of confirmed rolls costs at most two. Each finished refresh is handed to
the listeners (the camera, which then reads with the adapted head).

It also keeps, per setup, whether each applied camera roll went in without a tap, for the
camera panel's "in the last hour" share (in the store too, so a restart keeps the hour), and
the teaching round's snapshots (a frame and its dice, shown as crops until confirmed).

`attach_camera(runtime)` joins it to the camera (companion.table.camera_runtime): the dice
are embedded with the camera's own classifier once it is loaded, and each refresh of the
setup the camera is calibrated for puts a `LearntReader` in the camera's place (one
attribute store: the worker thread reads with it from its next frame). When the camera is
calibrated for a setup, and again when its models have loaded, the setup's heads are put
in place at once in a worker thread (`restore_camera`): after a restart the head the last
refresh saved reads the first roll, and its verdict is on the camera panel, before any
refresh.

The finder learns beside the classifier when the shipped finder's features file is there
(models/dice_finder_features.onnx, companion.vision.adapt_finder): each setup's learner
then also keeps the confirmed photos and judges a heat head for the finder every few of
them (companion.vision.adapt_finder_learn); the camera reads with it only once adopted."""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.table.camera_runtime import CameraRuntime
from companion.vision.adapt import Adaptation, AdaptedClassifier
from companion.vision.adapt_deep_learn import StoppedFineTune
from companion.vision.adapt_finder import AdaptedFinder
from companion.vision.adapt_gate import REASONS, Verdict
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner, SetupSummary
from companion.vision.adapt_store import (
    CROP_SIZE,
    SetupStore,
    StoredExample,
    check_setup,
    roll_photo,
)
from companion.vision.classifier import PipClassifier, crop_die
from companion.vision.colour import DiceSet
from companion.vision.finder import DiceFinder
from companion.vision.model import ModelError
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieReading, FrameReading

logger = logging.getLogger(__name__)

WINDOW_S = 3600.0  # "in the last hour"
SNAPSHOTS_KEPT = 4  # teaching snapshots held at once (one page, a few tabs)
ADDED_FLAG = "added"  # a die the host added to a held reading (companion.web.camera)

ClassifierFactory = Callable[[], PipClassifier]
FinderFactory = Callable[[], AdaptedFinder | None]
Listener = Callable[[str, Adaptation], None]


@dataclass(frozen=True)
class TeachSnapshot:
    """A frame of the teaching round and the dice read in it, until confirmed."""

    token: str
    setup: str
    image: np.ndarray = field(repr=False)
    dice: tuple[DieReading, ...]
    at: float


@dataclass
class _Refresh:
    running: bool = False
    again: bool = False


def confirmed_dice(dice: Sequence[DieReading], by_host: bool) -> list[ConfirmedDie]:
    """A roll's dice as confirmed: a die the host added, a die of a roll the host fixed
    (corrected), or read as shown. Dice without a value (none in an applied roll) are
    left out."""
    out = []
    for die in dice:
        if die.value is None:
            continue
        if ADDED_FLAG in die.flags:
            source = "added"
        elif by_host:
            source = "corrected"
        else:
            source = "read"
        out.append(ConfirmedDie(die.where, die.value, source, die.colour, die.set_index))
    return out


class LearntReader:
    """The camera's reader with a setup's heads: the base DiceReader's finder (or the
    setup's adopted finder head over it) with the adapted classifier (the setup's adopted
    fine-tuned net, or the shipped net with the setup's value head); a dice set the camera
    is given that is the setup's calibrated set (by name and colours) is read with the
    setup's own colours of those dice instead.

    The heads read only the setup's dice: given another set (a Sixto table at a camera
    calibrated for Qwixx dice; a game whose dice change, None), the camera reads with the
    shipped models (`learnt` False) until it is given the calibrated set again. Without a
    `calibrated` set (a reader made outside the app) the heads read every set."""

    def __init__(
        self,
        base: DiceReader,
        setup: str,
        adaptation: Adaptation,
        finder: DiceFinder | None = None,
        classifier: PipClassifier | None = None,
        calibrated: DiceSet | None = None,
        dice_set: DiceSet | None = None,
    ) -> None:
        self.base = base
        self.setup = setup
        self.adaptation = adaptation
        self.calibrated = calibrated
        self.finder = finder or base.finder  # the setup's adopted finder head, else base's
        # the setup's adopted fine-tuned net (SetupLearner.classifier_over), else its head
        self.classifier = classifier or AdaptedClassifier(base.classifier, adaptation.head)
        self._learnt_reader = DiceReader(self.finder, self.classifier, dice_set)
        self._shipped_reader = DiceReader(base.finder, base.classifier, dice_set)
        self._reader = self._learnt_reader
        self.dice_set = dice_set

    @property
    def dice_set(self) -> DiceSet | None:
        return self._given

    @dice_set.setter
    def dice_set(self, dice_set: DiceSet | None) -> None:
        self._given = dice_set
        if self.calibrated is not None and not _same_set(dice_set, self.calibrated):
            self._shipped_reader.dice_set = dice_set
            self._reader = self._shipped_reader  # one attribute store: the worker's next read
            return
        own = self.adaptation.dice_set
        self._learnt_reader.dice_set = own if _same_set(dice_set, own) else dice_set
        self._reader = self._learnt_reader

    @property
    def learnt(self) -> bool:
        """Whether the setup's heads read the dice now (the setup's own dice set given)."""
        return self._reader is self._learnt_reader

    def read(self, image: object, frame_index: int = 0) -> FrameReading:
        return self._reader.read(image, frame_index)


def _same_set(given: DiceSet | None, other: DiceSet | None) -> bool:
    """Whether `given` is `other`'s set: the same name and colours in the same order."""
    return (
        given is not None
        and other is not None
        and (given.name, given.colours) == (other.name, other.colours)
    )


class Learning:
    """See the module docstring. `Learning(data_dir)`; `close()` at shutdown."""

    def __init__(
        self,
        data_dir: Path,
        classifier_factory: ClassifierFactory | None = None,
        finder_factory: FinderFactory | None = None,
        fine_tune: bool = False,
    ) -> None:
        self.store = SetupStore(data_dir)
        # fine-tune each setup's whole classifier in a child process when torch is there
        # (companion.vision.adapt_deep_learn); `companion serve --fine-tune`
        self.fine_tune = fine_tune
        self._deep_tasks: dict[str, asyncio.Task[bool]] = {}
        self._classifier_factory = classifier_factory or PipClassifier.load
        self._classifier: PipClassifier | None = None
        self._finder_factory = finder_factory or features_finder
        self._finder: tuple[AdaptedFinder | None] | None = None  # loaded once (None inside: none)
        self._load_lock = threading.Lock()
        self._learners: dict[str, SetupLearner] = {}
        self._refresh: dict[str, _Refresh] = {}
        # the last hour's applied camera rolls, as stored (read once here, at startup)
        self._outcomes: dict[str, deque[tuple[float, bool]]] = {
            setup: deque(rolls)
            for setup, rolls in self.store.outcomes_since(time.time() - WINDOW_S).items()
        }
        self._snapshots: dict[str, TeachSnapshot] = {}
        self._learnt: dict[str, int] = {}  # per setup: confirmed dice used at its last refresh
        self._verdicts: dict[str, dict[str, object]] = {}  # per setup: its fold check's verdict
        # per setup: its finder check's verdict (None: not judged), for the camera panel
        self._finder_verdicts: dict[str, dict[str, object] | None] = {}
        self._asked: set[str] = set()  # setups whose first refresh the camera panel asked for
        self._tasks: set[asyncio.Task[list[int]]] = set()
        self._runtime: CameraRuntime | None = None
        self.listeners: list[Listener] = []
        self.listeners.append(self._count)

    def close(self) -> None:
        """At shutdown: stop the fine-tunes' child processes (their folders go; each is
        recorded, so the next start does not begin it again over the same dice), close
        the store."""
        with self._load_lock:
            learners = list(self._learners.values())
        for learner in learners:
            if learner.deep_learner is not None:
                learner.deep_learner.stop_for_shutdown()
        self.store.close()

    # -- the camera -----------------------------------------------------------------------
    def attach_camera(self, runtime: CameraRuntime) -> None:
        """Embed with the camera's classifier, and read with the camera's setup's heads
        after each of its refreshes (module docstring)."""
        self._runtime = runtime

        def camera_classifier() -> PipClassifier:
            base = _base_reader(runtime)
            return base.classifier if base is not None else PipClassifier.load()

        def camera_finder() -> AdaptedFinder | None:
            base = _base_reader(runtime)
            return features_finder(base.finder if base is not None else None)

        self._classifier_factory = camera_classifier
        self._finder_factory = camera_finder
        self.listeners.append(self._install)
        runtime.changed.append(self._camera_changed)

    def _camera_changed(self) -> None:
        """A calibration was set or the camera's models loaded (on the caller's thread,
        maybe the loop's): restore the camera's setup in a worker thread of its own."""
        threading.Thread(target=self.restore_camera, name="learning-restore", daemon=True).start()

    def restore_camera(self) -> Adaptation | None:
        """(worker thread) Put the heads of the setup the camera is calibrated for in the
        camera's place: the last refresh's when one ran in this process, else those the
        last refresh saved (a restart: `SetupLearner.from_saved`, the verdict seeded for the
        camera panel). A camera reading with another setup's heads goes back to its own
        reader first. Nothing happens while the camera's models load (this runs again when
        they have). Returns what was put in place (None: the shipped reader reads)."""
        runtime = self._runtime
        calibration = runtime.calibration if runtime is not None else None
        base = _base_reader(runtime)
        if runtime is None or base is None:
            return None
        self._follow_camera_models(base)
        current = runtime.reader.reader
        if isinstance(current, LearntReader) and (
            calibration is None or current.setup != calibration.name
        ):
            runtime.reader.reader = base
        if calibration is None:
            return None
        try:
            return self.restore(check_setup(calibration.name))
        except Exception:
            logger.warning("setup %s not restored", calibration.name, exc_info=True)
            return None

    def _follow_camera_models(self, base: DiceReader) -> None:
        """When the camera reads with other models than the learners embed with (a learner
        was made before the camera's models had loaded, or they were replaced), forget the
        loaded models and the learners: each setup is learnt again on the camera's own, and
        a head saved for the other classifier is not loaded (`load_head`)."""
        with self._load_lock:
            if self._classifier is None and self._finder is None:
                return
            classifier = self._classifier
            finder = self._finder[0] if self._finder is not None else None
            same_classifier = classifier is None or _same_model(classifier, base.classifier)
            camera_finder = getattr(base.finder, "base", base.finder)  # under its head
            same_finder = finder is None or _same_model(finder.base, camera_finder)
            if same_classifier and same_finder:
                return
            logger.info("the camera's models changed: its setups are learnt again on them")
            self._classifier = None
            self._finder = None
            self._learners.clear()
            self._learnt.clear()

    def restore(self, setup: str) -> Adaptation | None:
        """(worker thread) The setup's heads for the camera (`_install`): the last
        refresh's, else the saved ones, whose verdict the camera panel shows from now on
        (a damaged saved head is logged and the shipped reader reads). Under the learner's
        lock, so a refresh finishing meanwhile puts its own heads in place after these."""
        learner = self.learner(setup)
        with learner.lock:
            adaptation = learner.adaptation
            if adaptation is None:
                try:
                    adaptation = learner.from_saved()
                except ModelError:
                    logger.warning("setup %s: saved head not read", setup, exc_info=True)
                    return None
                if adaptation is None:
                    return None
                self._verdicts[setup] = adaptation.head.gate.to_json()
            self._finder_verdicts[setup] = _verdict_json(learner)
            self._install(setup, adaptation)
        return adaptation

    def _install(self, setup: str, adaptation: Adaptation) -> None:
        runtime = self._runtime
        calibration = runtime.calibration if runtime is not None else None
        base = _base_reader(runtime) if runtime is not None else None
        if runtime is None or base is None or calibration is None or calibration.name != setup:
            return
        learner = self._learners.get(setup)
        if learner is None:  # forgotten since (the camera's models changed): not its heads
            return
        finder = learner.reader_finder(base.finder)
        classifier = learner.classifier_over(base.classifier, adaptation)
        # the dice set the camera reads now (the reader in place keeps it; base's is the
        # one it had before the first LearntReader)
        given = runtime.reader.reader.dice_set if runtime.reader.reader is not None else None
        runtime.reader.reader = LearntReader(
            base, setup, adaptation, finder, classifier, calibration.dice_set, given
        )
        # the camera line's words: the heads in place may still leave the reading to the
        # shipped models (their verdicts say)
        words = reads_words(adaptation.head.gate.to_json(), self._finder_verdicts.get(setup))
        logger.info(
            "camera reads setup %s's dice (%d confirmed dice): %s",
            setup,
            adaptation.used,
            words or "not judged yet",
        )

    def _deep_verdict(self, setup: str) -> dict[str, object] | None:
        """The fine-tuned net's verdict, read from the setup's learner (None: not judged,
        fine-tuning off, or no learner since the camera's models changed)."""
        with self._load_lock:
            learner = self._learners.get(setup)
        deep = learner.deep_learner if learner is not None else None
        verdict = deep.verdict if deep is not None else None
        return verdict.to_json() if verdict is not None else None

    def _learning_now(self, setup: str) -> str | None:
        """The host's words for the fine-tune running now (None: none runs), as the
        setup's page says them."""
        with self._load_lock:
            learner = self._learners.get(setup)
        return learner.learning_now() if learner is not None else None

    def _stopped_fine_tune(self, setup: str) -> StoppedFineTune | None:
        """The fine-tune the last shutdown stopped, waiting for a new confirmed roll (None:
        none, or no learner since the camera's models changed)."""
        with self._load_lock:
            learner = self._learners.get(setup)
        deep = learner.deep_learner if learner is not None else None
        return deep.stopped if deep is not None else None

    def status(self, setup: str | None) -> dict[str, object] | None:
        """For the camera panel: confirmed dice the setup learnt from (None until its
        first refresh, which this asks for) and its rolls of the last hour."""
        if setup is None:
            return None
        if setup not in self._learnt and setup not in self._asked:  # once, not per poll
            self._asked.add(setup)
            self.refresh_soon(setup)
        rolls, share = self.share_without_tap(setup)
        now = self._learning_now(setup)
        stopped = self._stopped_fine_tune(setup)
        verdicts = (
            self._verdicts.get(setup),
            self._finder_verdicts.get(setup),
            self._deep_verdict(setup),
        )
        return {
            "setup": setup,
            "learnt": self._learnt.get(setup),
            "verdict": verdicts[0],
            "finder_verdict": verdicts[1],
            "deep_verdict": verdicts[2],
            # while a fine-tune runs the line says so, not the verdict it will replace
            "reads": now or reads_words(*verdicts, stopped=stopped),
            "reads_details": reads_details(*verdicts, now=now, stopped=stopped),
            "rolls_last_hour": rolls,
            "share_without_tap": round(share, 3),
            "rolls_words": rolls_words(rolls, share),
        }

    def roll_applied_soon(
        self,
        setup: str | None,
        image: np.ndarray | None,
        dice: Sequence[DieReading],
        *,
        tapped: bool,
        by_host: bool,
        table_id: str,
        throw: int,
    ) -> None:
        """`roll_applied` in a task of its own, with the camera's dice set: the caller
        (the intake answering a tap) does not wait for the dice to be stored."""
        if setup is None:
            return
        calibration = self._runtime.calibration if self._runtime is not None else None
        dice_set = calibration.dice_set if calibration and calibration.name == setup else None
        work = self.roll_applied(
            setup,
            image,
            dice,
            tapped=tapped,
            by_host=by_host,
            dice_set=dice_set,
            table_id=table_id,
            photo=roll_photo(table_id, throw),
            throw=throw,
        )
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- learners (worker threads) --------------------------------------------------------
    def classifier(self) -> PipClassifier:
        """The shipped classifier the dice are embedded with (loaded on first use)."""
        with self._load_lock:
            if self._classifier is None:
                self._classifier = self._classifier_factory()
            return self._classifier

    def finder(self) -> AdaptedFinder | None:
        """The shipped finder with its features output, which a setup's finder head learns
        on (loaded on first use; None when the features file is not there)."""
        with self._load_lock:
            if self._finder is None:
                self._finder = (self._finder_factory(),)
            return self._finder[0]

    def learner(self, setup: str, dice_set: DiceSet | None = None) -> SetupLearner:
        """The setup's learner (made on first use; a later dice set replaces the first)."""
        check_setup(setup)
        with self._load_lock:
            learner = self._learners.get(setup)
        if learner is None:
            learner = SetupLearner(
                self.store,
                setup,
                self.classifier(),
                dice_set,
                finder=self.finder(),
                deep=self.fine_tune,
            )
            with self._load_lock:
                learner = self._learners.setdefault(setup, learner)
        if dice_set is not None:
            learner.dice_set = dice_set
        return learner

    # -- rolls ----------------------------------------------------------------------------
    async def roll_applied(
        self,
        setup: str | None,
        image: np.ndarray | None,
        dice: Sequence[DieReading],
        *,
        tapped: bool,
        by_host: bool = False,
        dice_set: DiceSet | None = None,
        table_id: str | None = None,
        photo: str | None = None,
        throw: int | None = None,
    ) -> list[int]:
        """An applied camera roll: count it for the share without a tap, store its dice
        (off the loop) and refresh the setup's heads. Without a setup or a picture nothing
        is stored. A failure is logged, never raised: the roll stands."""
        if setup is None or image is None:
            return []
        at = time.time()
        self._outcomes.setdefault(setup, deque()).append((at, not tapped))
        confirmed = confirmed_dice(dice, by_host)
        try:
            await asyncio.to_thread(self.store.add_outcome, setup, at, not tapped)
            learner = await asyncio.to_thread(self.learner, setup, dice_set)
            ids = await asyncio.to_thread(
                learner.record, image, confirmed, table_id=table_id, photo=photo, throw=throw
            )
        except Exception:
            logger.warning("dice of a roll not stored for setup %s", setup, exc_info=True)
            return []
        self.refresh_soon(setup)
        return ids

    def share_without_tap(self, setup: str | None, now: float | None = None) -> tuple[int, float]:
        """Applied camera rolls of the setup in the last WINDOW_S and the share of them
        that went in without a tap (0.0 with none)."""
        if setup is None:
            return 0, 0.0
        now = time.time() if now is None else now
        outcomes = self._outcomes.get(setup, deque())
        while outcomes and outcomes[0][0] < now - WINDOW_S:
            outcomes.popleft()
        if not outcomes:
            return 0, 0.0
        return len(outcomes), sum(free for _, free in outcomes) / len(outcomes)

    def _count(self, setup: str, adaptation: Adaptation) -> None:
        self._learnt[setup] = adaptation.used
        self._verdicts[setup] = adaptation.head.gate.to_json()  # adapt_gate.Verdict

    # -- refreshing -----------------------------------------------------------------------
    def refresh_soon(self, setup: str) -> None:
        """Refresh the setup's heads in a worker thread (once more after a running one)."""
        state = self._refresh.setdefault(setup, _Refresh())
        if state.running:
            state.again = True
            return
        state.running = True
        asyncio.get_running_loop().create_task(self._refresh_loop(setup, state))

    async def _refresh_loop(self, setup: str, state: _Refresh) -> None:
        try:
            while True:
                state.again = False
                adaptation = await self.refresh_and_tell(setup)
                if adaptation is not None:
                    await self.refresh_finder_and_tell(setup)
                    self.fine_tune_soon(setup)
                if not state.again:
                    break
        finally:
            state.running = False

    async def refresh_finder_and_tell(self, setup: str) -> bool:
        """Judge the setup's finder head when due (off the loop, seconds) and, when a new
        verdict was kept, hand the setup's heads to the listeners again (the camera then
        finds with the adopted head, or stops); False when nothing changed or it failed."""

        def keep_verdict(learner: SetupLearner) -> None:
            self._finder_verdicts[setup] = _verdict_json(learner)

        return await self._judge_and_tell(
            setup, SetupLearner.refresh_finder, "finder", keep_verdict
        )

    async def _judge_and_tell(
        self,
        setup: str,
        judge: Callable[[SetupLearner], bool],
        what: str,
        judged: Callable[[SetupLearner], None] = lambda _: None,
    ) -> bool:
        """Run one of the learner's checks off the loop (`judged` then sees the learner)
        and, when a new verdict was kept, hand the setup's readers to the listeners."""
        try:
            learner = await asyncio.to_thread(self.learner, setup)
            changed = await asyncio.to_thread(judge, learner)
        except Exception:
            logger.warning("setup %s: %s not judged", setup, what, exc_info=True)
            return False
        judged(learner)
        adaptation = learner.adaptation
        if changed and adaptation is not None:
            self._tell(setup, adaptation)
        return changed

    def fine_tune_soon(self, setup: str) -> None:
        """With `fine_tune`: fine-tune and judge the setup's whole classifier when due, in
        a task of its own (a child process of up to minutes: the value head and finder
        refreshes go on meanwhile); one at a time per setup."""
        if not self.fine_tune or setup in self._deep_tasks:
            return
        task = asyncio.get_running_loop().create_task(self.fine_tune_and_tell(setup))
        self._deep_tasks[setup] = task
        task.add_done_callback(lambda _: self._deep_tasks.pop(setup, None))

    async def fine_tune_and_tell(self, setup: str) -> bool:
        """`SetupLearner.refresh_deep` off the loop; when a new verdict was kept, the
        setup's readers go to the listeners again (the camera then reads with the adopted
        net, or stops). False when nothing changed or it failed (logged)."""
        return await self._judge_and_tell(setup, SetupLearner.refresh_deep, "fine-tune")

    async def refresh_and_tell(self, setup: str) -> Adaptation | None:
        """Refresh now and hand the result to the listeners (the camera)."""
        adaptation = await self.refresh(setup)
        if adaptation is not None:
            self._tell(setup, adaptation)
        return adaptation

    def _tell(self, setup: str, adaptation: Adaptation) -> None:
        for listener in list(self.listeners):
            try:
                listener(setup, adaptation)
            except Exception:
                logger.exception("a learning listener failed")

    async def refresh(self, setup: str) -> Adaptation | None:
        """Refresh now (off the loop); None when it failed (logged)."""
        try:
            learner = await asyncio.to_thread(self.learner, setup)
            return await asyncio.to_thread(learner.refresh)
        except Exception:
            logger.warning("setup %s not refreshed", setup, exc_info=True)
            return None

    def idle(self, setup: str) -> bool:
        """Whether no refresh of the setup runs or waits (tests wait for this)."""
        state = self._refresh.get(setup)
        return (state is None or not state.running) and setup not in self._deep_tasks

    # -- what the pages show --------------------------------------------------------------
    async def summary(self, setup: str, dice_set: DiceSet | None = None) -> SetupSummary:
        learner = await asyncio.to_thread(self.learner, setup, dice_set)
        return await asyncio.to_thread(learner.summary)

    async def setup_taught_by(self, table_id: str) -> str | None:
        """The setup a table's game taught (most of) its dice to (None: it taught none):
        what its host reads once the camera serves it no more."""
        return await asyncio.to_thread(self.store.setup_of_table, table_id)

    async def examples(self, setup: str) -> list[StoredExample]:
        return await asyncio.to_thread(self.store.examples, check_setup(setup))

    async def crop_png(self, setup: str, example_id: int) -> bytes | None:
        return await asyncio.to_thread(self.store.crop_png, setup, example_id)

    async def example_table(self, setup: str, example_id: int) -> tuple[bool, str | None]:
        return await asyncio.to_thread(self.store.example_table, setup, example_id)

    async def delete_example(self, setup: str, example_id: int) -> bool:
        """Delete one die; the heads (and the page's next look) are without it at once."""
        found = await asyncio.to_thread(self.store.delete_example, setup, example_id)
        if found:
            await self._taught_dice_changed(setup)
        return found

    async def keep(self, setup: str, example_id: int) -> bool:
        """The host keeps a held-back die: it is learnt from from now on."""
        found = await asyncio.to_thread(self.store.keep, setup, example_id)
        if found:
            await self._taught_dice_changed(setup)
        return found

    async def _taught_dice_changed(self, setup: str) -> None:
        """A taught die was deleted or kept: the fine-tuned net learnt them as they were,
        so it stops reading at once and is fine-tuned again; the heads are refitted."""
        learner = await asyncio.to_thread(self.learner, setup)
        await asyncio.to_thread(learner.forget_deep)
        await self.refresh_and_tell(setup)
        self.fine_tune_soon(setup)

    async def delete_setup(self, setup: str) -> int:
        """Forget every stored die of the setup (records, crops and its adapted head),
        under the learner's lock (`SetupLearner.forget`): a refresh running now cannot
        write the head back."""
        learner = await asyncio.to_thread(self.learner, check_setup(setup))
        count = await asyncio.to_thread(learner.forget)
        self._outcomes.pop(setup, None)
        self._finder_verdicts.pop(setup, None)  # its finder head went with the dice
        await self.refresh_and_tell(setup)
        return count

    async def forget_table(self, setup: str, table_id: str) -> int:
        """Forget the dice one table confirmed (`SetupLearner.forget_table`): the heads are
        refitted on the dice that stay and handed to the camera at once (the shipped
        reader reads when too few stay); the finder and the fine-tuned net are judged
        again in the background, as after a roll."""
        learner = await asyncio.to_thread(self.learner, check_setup(setup))
        count = await asyncio.to_thread(learner.forget_table, table_id)
        if not count:
            return 0  # nothing forgotten: the heads stand
        self._finder_verdicts.pop(setup, None)  # its finder head went with the photos
        await self.refresh_and_tell(setup)
        self.refresh_soon(setup)
        return count

    async def forget_game(self, table_id: str) -> int:
        """A game deleted from the history teaches no more: the dice it confirmed and its
        roll photos are forgotten from every setup it taught (`forget_table` each), as if
        it was never played; its host's page, which forgets them, went with the game."""
        setups = await asyncio.to_thread(self.store.setups)
        return sum([await self.forget_table(setup, table_id) for setup in setups])

    # -- the teaching round ---------------------------------------------------------------
    def snapshot(self, setup: str, image: np.ndarray, dice: Sequence[DieReading]) -> TeachSnapshot:
        """Keep a frame and its dice until the person confirms them (the latest few)."""
        taken = TeachSnapshot(
            secrets.token_hex(8), check_setup(setup), image, tuple(dice), time.time()
        )
        self._snapshots[taken.token] = taken
        for token in sorted(self._snapshots, key=lambda t: self._snapshots[t].at)[:-SNAPSHOTS_KEPT]:
            del self._snapshots[token]
        return taken

    def snapshot_of(self, setup: str, token: str) -> TeachSnapshot | None:
        taken = self._snapshots.get(token)
        return taken if taken is not None and taken.setup == setup else None

    async def snapshot_crop(self, taken: TeachSnapshot, index: int) -> bytes | None:
        """The PNG of die `index` of a snapshot, framed as the classifier frames it."""
        if not 0 <= index < len(taken.dice):
            return None
        classifier = await asyncio.to_thread(self.classifier)
        box = taken.dice[index].where

        def encode() -> bytes:
            crop = crop_die(taken.image, box, classifier.margin, CROP_SIZE)
            ok, buffer = cv2.imencode(".png", crop)
            return bytes(buffer.tobytes()) if ok else b""

        return await asyncio.to_thread(encode)

    async def teach(
        self, taken: TeachSnapshot, values: Sequence[int], dice_set: DiceSet | None
    ) -> list[int]:
        """Store a snapshot's dice with the values the person confirmed (a changed value
        counts as corrected) and refresh; the snapshot is used up."""
        self._snapshots.pop(taken.token, None)
        dice = [
            ConfirmedDie(
                d.where,
                int(v),
                "taught" if d.value == v else "corrected",
                d.colour,
                d.set_index,
            )
            for d, v in zip(taken.dice, values, strict=True)
        ]
        learner = await asyncio.to_thread(self.learner, taken.setup, dice_set)
        ids = await asyncio.to_thread(
            learner.record, taken.image, dice, photo=f"teach-{taken.token}"
        )
        self.refresh_soon(taken.setup)
        return ids


def reads_words(
    verdict: dict[str, object] | None,
    finder: dict[str, object] | None = None,
    deep: dict[str, object] | None = None,
    *,
    stopped: StoppedFineTune | None = None,
) -> str | None:
    """What the camera reads a setup's dice with, in the camera line's words, with the
    value head's reason when it keeps the shipped models, and briefly a fine-tune the
    shutdown stopped (None: not judged yet, none stopped)."""
    said = [] if verdict is None else [_reader_words(verdict, finder, deep)]
    if stopped is not None:  # the setup's page says so too (SetupLearner._deep_summary)
        said.append(stopped.brief_words())
    return " · ".join(said) or None


def _reader_words(
    verdict: dict[str, object], finder: dict[str, object] | None, deep: dict[str, object] | None
) -> str:
    if any(v is not None and v.get("adopted") for v in (verdict, finder, deep)):
        return "reads with what it learnt"
    try:
        reason = Verdict.from_json(verdict).reason_words
    except (TypeError, ValueError):  # a verdict saved by another version: its reason as said
        reason = REASONS.get(str(verdict.get("reason")), str(verdict.get("reason")))
    return f"reads with the models it came with: {reason}"


def reads_details(
    verdict: dict[str, object] | None,
    finder: dict[str, object] | None = None,
    deep: dict[str, object] | None = None,
    *,
    now: str | None = None,
    stopped: StoppedFineTune | None = None,
) -> list[str]:
    """The camera line's tooltip, a line each: the fine-tune running now (its old
    verdict left out: it is being replaced) or else the one the shutdown stopped, the
    value head's, the finder's (in its own verbs) and the fine-tuned classifier's
    verdicts, as the setup's page says them."""
    lines = [now] if now else [stopped.words()] if stopped is not None else []
    for raw, words in ((verdict, Verdict.words), (finder, Verdict.finder_words)):
        if raw is not None:
            lines.append(_said(raw, words))
    if deep is not None and not now:
        lines.append("fine-tuned classifier: " + _said(deep, Verdict.words))
    return lines


def _said(raw: dict[str, object], words: Callable[[Verdict], str]) -> str:
    try:
        return words(Verdict.from_json(raw))
    except (TypeError, ValueError):  # a verdict saved by another version: its words as saved
        return str(raw.get("words", raw.get("reason")))


def _verdict_json(learner: SetupLearner) -> dict[str, object] | None:
    verdict = learner.finder_verdict
    return verdict.to_json() if verdict is not None else None


def features_finder(base: DiceFinder | None = None) -> AdaptedFinder | None:
    """`base` (default: the shipped finder) over the features file beside its own file;
    None, logged, when there is none or it was made for another finder: then only the
    value head learns."""
    try:
        finder = base if base is not None else DiceFinder.load()
        folder = Path(finder.model.path).parent
        return AdaptedFinder.load(finder, models_dir=folder)
    except ModelError as exc:
        logger.info("the finder does not learn: %s", exc)
        return None


def _same_model(mine: PipClassifier | DiceFinder, camera: PipClassifier | DiceFinder) -> bool:
    return bool(mine.model.manifest.sha256 == camera.model.manifest.sha256)


def _base_reader(runtime: CameraRuntime | None) -> DiceReader | None:
    """The camera's own DiceReader (under a LearntReader once one is in place); None
    while the models load, or when the camera reads with something else (a test's)."""
    reader = runtime.reader.reader if runtime is not None else None
    if isinstance(reader, LearntReader):
        return reader.base
    return reader if isinstance(reader, DiceReader) else None


def rolls_words(rolls: int, share: float) -> str:
    """The last hour's camera rolls with a setup and the share that went in without a tap,
    in words: every game's the camera served (counted per setup; a game host's Forget
    keeps them, as the rolls were played, and it sits beside this count), never one
    game's. "This camera setup" and "game" as the verdicts and the setup's page say."""
    if not rolls:
        return "no camera roll with this camera setup in the last hour, in any game"
    percent = int(100 * share + 0.5)
    noun = "camera roll" if rolls == 1 else "camera rolls"
    return (
        f"{percent} % of the last hour's {rolls} {noun} with this camera setup "
        "(every game's) went in without a tap"
    )
