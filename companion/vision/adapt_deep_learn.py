"""A setup's classifier fine-tuned on its confirmed dice, in a background process
(issue 24 item 1, deeper than the value head).

The value head (companion.vision.adapt) moves the boundary on the shipped embedding; on a
table whose dice the shipped net does not tell apart the features must move too. That
needs torch, which the app does not: the fine-tune and its fold check are
models/recipe/adapt_deep.py, run by `DeepLearner.run` as a child process (`python -m
models.recipe.adapt_deep`, one torch thread, at lowered priority) so the table keeps playing
while it trains; where torch or the recipe is not installed (`available()` is False) the
setup learns with its heads only, as before.

- `job(stored, held)`: when MIN_PHOTOS confirmed photos are stored and REFIT_EVERY more
  than at the last check (or never checked for this classifier), a `DeepJob`: the stored
  crops (the store's 64 px framing), their confirmed values and photo keys, the dice held
  back as suspected wrong taps left out, the dice the host added taught but not judged
  (as by the value head's check: both verdicts count the same dice); with the finder's stored photos, the false dice
  the host removed from them are added as "unreadable" (`RemovedDice`, in `run`);
- `DeepJob.run()` (seconds to two minutes, no lock held): the child process writes
  `verdict.json`, and when adopted the fine-tuned `pip_classifier.onnx` and its manifest
  (`deep_adapted`: the shipped file's sha256, the settings, the verdict), into a new
  folder beside the setup, which then replaces `adapted/deep/` (the shipped models are
  never written);
- `classifier()`: the adopted net (`DeepClassifier`, loaded with the runtime's manifest
  checks; only over the classifier file it was fine-tuned from), which the camera reads
  with in place of the shipped net and the value head; its dice are no surer than its own
  left-out photos vouch for (`Verdict.ceiling`, as an adopted value head's). It reads only
  the dice like the setup's own (`likeness.npz`: its embeddings of the setup's dice and
  the floor, companion.vision.adapt_fit.Likeness, as the value head reads); a die of
  another kind is read by the shipped net, as the fold check and the no-forgetting check
  judged it.

A restart reads the saved verdict and net back; forgetting the setup removes the folder
with the rest of its adapted files. A fine-tune the server's shutdown stopped is recorded
(`StoppedFineTune`, beside them): the next start begins it again only once the confirmed
dice changed, not over the same ones (minutes of work that the next shutdown, a café's
closing time, may stop again), and the setup's page says so meanwhile."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.vision.adapt import CLASSES, GATE_MIN_PHOTOS
from companion.vision.adapt_files import ADAPTED_DIR, atomic_write, embedding_width, npz_bytes
from companion.vision.adapt_finder_learn import REFIT_EVERY as FINDER_REFIT_EVERY
from companion.vision.adapt_fit import Likeness
from companion.vision.adapt_gate import Verdict
from companion.vision.adapt_look import crop_looks
from companion.vision.adapt_store import CROP_SIZE, SetupStore, StoredExample
from companion.vision.classifier import CLASSIFIER_FILE, Classified, PipClassifier, crop_die
from companion.vision.finder import DiceFinder
from companion.vision.model import ModelError, OnnxModel
from companion.vision.pipeline import trace_dice
from companion.vision.scoring import off_dice
from companion.vision.types import DieBox, DieReading

logger = logging.getLogger(__name__)

DEEP_DIR = "deep"  # under the setup's adapted/ folder
VERDICT_FILE = "verdict.json"  # written by models/recipe/adapt_deep.py whatever the verdict
LIKENESS_FILE = "likeness.npz"  # beside an adopted net: which dice it reads (DeepClassifier)
MIN_PHOTOS = GATE_MIN_PHOTOS  # the fold check's sign test cannot adopt on fewer photos
REFIT_EVERY = FINDER_REFIT_EVERY  # new photos before it is judged again, as the finder's head
TIMEOUT_S = 900.0  # a check that takes longer is given up (logged); the shipped net reads
WORK_PREFIX = ".deep-"  # the child's folders beside the setup's adapted files
STOPPED_FILE = "fine-tune-stopped.json"  # beside them: a fine-tune the shutdown stopped
UNREADABLE = CLASSES  # a value of 7 teaches the class "unreadable": a box on no die
REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "models" / "recipe" / "adapt_deep.py"


def available() -> bool:
    """Whether this installation can fine-tune: torch and onnx importable (the training
    extra), the recipe beside the package (a checkout, not a wheel)."""
    return RECIPE.is_file() and all(
        importlib.util.find_spec(name) is not None for name in ("torch", "onnx")
    )


class DeepClassifier(PipClassifier):
    """A setup's fine-tuned net: reads like any classifier, the dice unlike the setup's
    with the shipped net (``like`` and ``shipped``: module docstring; either None, every
    die with the fine-tuned net), and vouches for no more than its fold check's left-out
    photos showed (`Verdict.ceiling`)."""

    def __init__(
        self,
        model: OnnxModel,
        verdict: Verdict,
        source: str,
        like: Likeness | None = None,
        shipped: PipClassifier | None = None,
    ) -> None:
        super().__init__(model)
        self.verdict = verdict
        self.source = source  # the sha256 of the shipped file it was fine-tuned from
        self.like = like
        self.shipped = shipped

    def classify(
        self, image_bgr: np.ndarray, boxes: Sequence[DieBox], looks: bool = False
    ) -> Classified:
        mine = super().classify(image_bgr, boxes, looks)
        if self.like is None or self.shipped is None or mine.embeddings is None:
            return mine
        chroma = crop_looks(image_bgr, boxes, self.margin) if self.like.looks is not None else None
        unlike = np.flatnonzero(~self.like.mask(mine.embeddings, chroma))
        if not len(unlike):
            return mine
        theirs = self.shipped.classify(image_bgr, [boxes[int(k)] for k in unlike], looks)
        return mine.with_rows(unlike, theirs)

    def vouched(self, readings: tuple[DieReading, ...]) -> tuple[DieReading, ...]:
        return self.verdict.vouch(readings)


def save_likeness(path: Path, like: Likeness) -> None:
    """Write which dice a fine-tuned net reads (`DeepClassifier`), synced."""
    atomic_write(path, npz_bytes(like.arrays()))


def load_likeness(path: Path, width: int) -> Likeness | None:
    """The likeness beside a fine-tuned net (None: none there, a net fine-tuned before it
    was kept; it reads every die); a damaged file raises ModelError naming it."""
    if not path.is_file():
        return None
    try:
        with np.load(path) as data:
            return Likeness.from_arrays(data, width)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"{path}: not a likeness file for this net ({exc})") from exc


@dataclass(frozen=True)
class DeepState:
    """A check's outcome: its verdict, the photos it was judged on, the shipped file it
    fine-tuned (sha256), the adopted net (None: the shipped net reads), and per stored die
    (by id) how sure the net fine-tuned without its photo was of its value (the setup
    page's bars while this net reads)."""

    verdict: Verdict
    photos: int
    from_sha256: str
    classifier: DeepClassifier | None = field(default=None, repr=False)
    sureness: dict[int, float] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RemovedDice:
    """The false dice the host removed from a setup's stored photos (kept for the finder's
    head, companion.vision.adapt_finder_learn), found again: the dice the shipped pair
    shows on a stored photo (the finder's boxes its peak rule keeps) away from every
    confirmed die of it, cut as the store cuts a die and taught as "unreadable"
    (UNREADABLE), as bench/adapt.py --deep teaches them. A die the host deleted from the
    setup later (mostly a real die confirmed with a wrong value) stays on its photo as a
    spot set aside (`StoredPhoto.aside`) and is taught as neither. A photo on which the
    host removed more dice than it confirmed is left out: that is a part of a scene taught
    (dice set aside, a teaching round on a few), not a roll with a few false dice, and its
    removed boxes are likely real dice (a few real dice left beside a roll are the case
    this cannot tell). One read per photo, so `DeepJob.run` makes them, off the lock."""

    store: SetupStore
    setup: str
    finder: DiceFinder
    classifier: PipClassifier

    def crops(self, keys: set[str]) -> tuple[list[np.ndarray], list[str]]:
        """Crops and their photo keys, from the latest stored photo of each key given; a
        photo whose file is gone or damaged gives none."""
        crops, names = [], []
        for photo in self.store.latest_photos(self.setup):
            image = None
            if photo.photo in keys:
                image = self.store.photo_image(self.setup, photo.photo_id)
            if image is None:
                continue
            shown = [r.where for r in trace_dice(image, self.finder, self.classifier).kept]
            removed = off_dice([(d.cx, d.cy, d.side) for d in photo.spots], shown)
            if len(removed) > len(photo.dice):
                continue
            crops += [crop_die(image, box, self.classifier.margin, CROP_SIZE) for box in removed]
            names += [photo.photo] * len(removed)
        return crops, names


@dataclass
class DeepJob:
    """One fine-tune and fold check to run in the child process: `run` (no lock held),
    then `install` (under the learner's lock, only if the setup was not forgotten
    meanwhile) or `discard`."""

    folder: Path  # the setup's folder
    models_dir: Path  # the shipped classifier's folder
    crops: np.ndarray = field(repr=False)
    values: np.ndarray
    photos: tuple[str, ...]
    ids: tuple[int, ...]  # the stored dice's ids, crop by crop
    removed: RemovedDice | None = None  # None: only the confirmed dice are taught
    shipped: PipClassifier | None = field(default=None, repr=False)  # reads unlike dice
    work: Path | None = None  # the child's folder, beside the setup's adapted files
    child: subprocess.Popen[str] | None = field(default=None, repr=False)
    started: threading.Event = field(default_factory=threading.Event, repr=False)
    stopped: threading.Event = field(default_factory=threading.Event, repr=False)
    began: float = field(default_factory=time.monotonic, repr=False)  # when it was made
    # per crop, whether its die is judged: a die the host added (the finder missed it; no
    # camera reading) is taught, not judged, as by the value head's check (None: all are)
    judged: tuple[bool, ...] | None = None

    def fingerprint(self) -> str:
        """What the job fine-tunes on, in short: its dice (ids, values, judged or not);
        the same photos confirmed give the same fingerprint."""
        return taught_fingerprint(self.ids, self.values, self.judged)

    def progress_words(self) -> str:
        """The host's line while the job runs: a minute or more, so the page says what is
        being done and since when, not the line of before."""
        seconds = round(time.monotonic() - self.began)
        return (
            f"fine-tuning the classifier on {len(set(self.photos))} confirmed photos now "
            f"(started {seconds} s ago, at low priority while the table plays): the camera "
            "reads as before until it is judged"
        )

    def run(self) -> None:
        """Run the child process into a folder of its own; raises (its folder removed) on
        a failed, stopped or timed-out child. Everything the child writes, its scratch
        files included (TMPDIR), lies in that folder."""
        adapted = self.folder / ADAPTED_DIR
        adapted.mkdir(parents=True, exist_ok=True)
        self.work = work = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=adapted))
        try:
            crops, values, photos, ids = self.taught()
            judged = np.ones(len(values), bool)
            if self.judged is not None:  # the removed false dice after them: not judged
                judged[: len(self.judged)] = self.judged
            np.savez(
                work / "job.npz", crops=crops, values=values, photos=photos, ids=ids, judged=judged
            )
            command = [
                sys.executable, "-m", "models.recipe.adapt_deep", "--crops", str(work / "job.npz"),
                "--models", str(self.models_dir), "--out", str(work / "out"),
            ]  # fmt: skip
            paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
            environment = {
                **os.environ,
                "OMP_NUM_THREADS": "1",
                "PYTHONPATH": os.pathsep.join(paths),
                "TMPDIR": str(work),
            }
            self.child = subprocess.Popen(
                command, cwd=REPO, env=environment, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            self.started.set()
            if self.stopped.is_set():  # stopped while it was being started
                self.child.terminate()
            try:
                _, errors = self.child.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.communicate()
                raise RuntimeError(f"fine-tune gave up after {TIMEOUT_S:.0f} s") from None
            if self.child.returncode != 0:
                raise RuntimeError(f"fine-tune failed ({self.child.returncode}): {errors[-800:]}")
        except BaseException:
            self.discard()
            raise

    def taught(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Crops, values, photo keys and stored die ids to fine-tune on: the confirmed
        dice, and the false dice the host removed from the same photos as "unreadable"
        (`RemovedDice`; id -1, no stored die)."""
        found: list[np.ndarray] = []
        keys: list[str] = []
        if self.removed is not None:
            try:
                found, keys = self.removed.crops(set(self.photos))
            except Exception:  # the confirmed dice still teach; the false ones wait
                logger.warning("fine-tune: the removed dice not found again", exc_info=True)
        ids = np.array(self.ids, np.int64)
        if not found:
            return self.crops, self.values, np.array(self.photos), ids
        logger.info("fine-tune: %d false dice the host removed taught as unreadable", len(found))
        return (
            np.concatenate([self.crops, np.stack(found)]),
            np.concatenate([self.values, np.full(len(found), UNREADABLE, np.int64)]),
            np.array(self.photos + tuple(keys)),
            np.concatenate([ids, np.full(len(found), -1, np.int64)]),
        )

    def stop(self) -> None:
        """Stop the child, running or about to start (the setup forgotten, the server
        shutting down); `run` then raises."""
        self.stopped.set()
        child = self.child
        if child is not None and child.poll() is None:
            child.terminate()

    def install(self) -> DeepState:
        """Put the child's folder in place of the last check's and read it back (the
        caller holds the learner's lock). The old folder is moved aside first and put
        back if the new one cannot be moved in."""
        assert self.work is not None, "install after run"
        adapted = self.folder / ADAPTED_DIR
        target, old = adapted / DEEP_DIR, adapted / f"{WORK_PREFIX}old"
        shutil.rmtree(old, ignore_errors=True)
        if target.exists():
            target.replace(old)
        try:
            (self.work / "out").replace(target)
        except OSError:
            if old.exists():
                old.replace(target)
            raise
        finally:
            self.discard()
            shutil.rmtree(old, ignore_errors=True)
        state = read_state(self.folder, self.shipped)
        if state is None:
            raise ModelError(f"{target}: the fine-tune wrote no verdict")
        return state

    def discard(self) -> None:
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            with contextlib.suppress(OSError):  # a forgotten setup's folder, made again
                self.work.parent.rmdir()


def taught_fingerprint(
    ids: Sequence[int], values: Sequence[int] | np.ndarray, judged: Sequence[bool] | None
) -> str:
    """A job's dice in short (`DeepJob.fingerprint`)."""
    raw = json.dumps([list(map(int, ids)), [int(v) for v in values], list(judged or ())])
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class StoppedFineTune:
    """A fine-tune the server's shutdown stopped (`DeepLearner.stop_for_shutdown`): what it
    fine-tuned on (`DeepJob.fingerprint`), its photos, the shipped file it started from
    and when it was stopped. The next start does not begin it again over the same dice:
    minutes of work the next shutdown may stop again, for nothing new; a changed set of
    confirmed dice (the next confirmed roll) starts it."""

    fingerprint: str
    photos: int
    from_sha256: str
    stopped_at: float

    def words(self) -> str:
        when = time.strftime("%H:%M on %d %b", time.localtime(self.stopped_at))
        return (
            f"the fine-tune on {self.photos} confirmed photos was stopped when the server "
            f"shut down ({when}); it is not started again over the same photos, only once "
            "a new roll is confirmed: the camera reads as before until then"
        )

    def brief_words(self) -> str:
        """The host page's camera line's few words for it (`words` in its tooltip)."""
        return (
            "fine-tune stopped by the server's shutdown: begun again once a new roll is confirmed"
        )

    def save(self, folder: Path) -> None:
        raw = json.dumps(
            {
                "fingerprint": self.fingerprint,
                "photos": self.photos,
                "from_sha256": self.from_sha256,
                "stopped_at": self.stopped_at,
            }
        )
        adapted = folder / ADAPTED_DIR
        adapted.mkdir(parents=True, exist_ok=True)
        atomic_write(adapted / STOPPED_FILE, raw.encode())

    @classmethod
    def read(cls, folder: Path) -> StoppedFineTune | None:
        """The record in the setup's folder (None: none; a damaged one is logged)."""
        path = folder / ADAPTED_DIR / STOPPED_FILE
        if not path.is_file():
            return None
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                str(raw["fingerprint"]),
                int(raw["photos"]),
                str(raw["from_sha256"]),
                float(raw["stopped_at"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            logger.warning("%s: not read; the fine-tune runs when due", path, exc_info=True)
            return None

    @staticmethod
    def remove(folder: Path) -> None:
        with contextlib.suppress(OSError):
            (folder / ADAPTED_DIR / STOPPED_FILE).unlink()


def read_state(folder: Path, shipped: PipClassifier | None = None) -> DeepState | None:
    """The saved check of the setup in `folder` (None: never checked). A damaged verdict
    file raises ModelError naming it; the net is loaded with the runtime's checks, to read
    the dice unlike the setup's with ``shipped``."""
    out = Path(folder) / ADAPTED_DIR / DEEP_DIR
    path = out / VERDICT_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        verdict = Verdict.from_json(raw["verdict"])
        photos, source = int(raw["photos"]), str(raw["from_sha256"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{path}: not a fine-tune verdict ({exc})") from exc
    sureness = read_sureness(raw.get("sureness"), path)
    if not verdict.adopted:
        return DeepState(verdict, photos, source, sureness=sureness)
    model = OnnxModel.load(out / CLASSIFIER_FILE)
    derived = model.manifest.raw.get("deep_adapted", {})
    if not isinstance(derived, dict) or derived.get("from_sha256") != source:
        raise ModelError(f"{out / CLASSIFIER_FILE}: its manifest does not name {source[:12]}")
    deep = DeepClassifier(model, verdict, source, None, shipped)
    deep.like = load_likeness(out / LIKENESS_FILE, embedding_width(deep))
    return DeepState(verdict, photos, source, deep, sureness)


def read_sureness(raw: object, path: Path) -> dict[int, float]:
    """Each stored die's left-out sureness as a verdict file holds it (since 2026-12-04;
    an older verdict has none, and the value head's bars show). Only a die id with a
    probability is kept; a damaged field is logged and dropped, not the verdict or net."""
    if raw is None:
        return {}
    try:
        items = [(int(k), float(v)) for k, v in dict(raw).items()]  # type: ignore[call-overload]
    except (ValueError, TypeError) as exc:
        logger.warning("%s: its 'sureness' is not read (%s)", path, exc)
        return {}
    return {k: v for k, v in items if 0.0 <= v <= 1.0}


class DeepLearner:
    """The fine-tuned net's half of a setup's learning (module docstring). Not locked
    itself: companion.vision.adapt_learn.SetupLearner calls it under its lock, but for
    `DeepJob.run`."""

    def __init__(
        self,
        store: SetupStore,
        setup: str,
        folder: Path,
        shipped: PipClassifier,
        finder: DiceFinder | None = None,
    ) -> None:
        self.store = store
        self.setup = setup
        self.folder = folder
        self.shipped = shipped
        # the shipped finder, when the setup keeps its photos: the host's removed false
        # dice are taught too (`RemovedDice`)
        self.removed = RemovedDice(store, setup, finder, shipped) if finder is not None else None
        self.state: DeepState | None = None
        self.attempted: int | None = None  # photos of the last job made, failed or not
        self.running: DeepJob | None = None
        self.stopped: StoppedFineTune | None = None  # one the last shutdown stopped
        self.restore()

    @property
    def sha256(self) -> str:
        return self.shipped.model.manifest.sha256

    def restore(self) -> None:
        """The saved check, when it was made for the shipped classifier (a damaged one is
        logged and the shipped net reads); a child's folder left by a crash is removed."""
        for stale in (self.folder / ADAPTED_DIR).glob(f"{WORK_PREFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)
        try:
            state = read_state(self.folder, self.shipped)
        except ModelError:
            logger.warning("setup %s: saved fine-tune not read", self.setup, exc_info=True)
            state = None
        self.state = state if state is not None and state.from_sha256 == self.sha256 else None
        self.attempted = self.state.photos if self.state is not None else None
        stopped = StoppedFineTune.read(self.folder)
        self.stopped = (
            stopped if stopped is not None and stopped.from_sha256 == self.sha256 else None
        )

    def classifier(self) -> DeepClassifier | None:
        """The adopted net (None: not adopted, never checked, or made for another net)."""
        return self.state.classifier if self.state is not None else None

    @property
    def verdict(self) -> Verdict | None:
        return self.state.verdict if self.state is not None else None

    def job(self, stored: Sequence[StoredExample], held: Sequence[int]) -> DeepJob | None:
        """The check to run now, when one is due (module docstring); None otherwise. A job
        counts as attempted when made, so a child that fails is not started again until
        REFIT_EVERY more photos have come."""
        left_out = set(held)
        crops, values, keys, ids, judged = [], [], [], [], []
        for k, s in enumerate(stored):
            if k in left_out:
                continue
            crop = self.store.crop(self.setup, s.example_id)
            if crop is not None:
                crops.append(crop)
                values.append(s.example.value)
                ids.append(s.example_id)
                judged.append(s.source != "added")
                # the value head's photo key (adapt_store.photo_key): its folds are these
                keys.append(
                    str(s.example.photo) if s.example.photo is not None else f"die {s.example_id}"
                )
        count = len(set(keys))
        if count < MIN_PHOTOS or (
            self.attempted is not None and count < self.attempted + REFIT_EVERY
        ):
            return None
        if self.stopped is not None:
            if self.stopped.fingerprint == taught_fingerprint(ids, values, judged):
                return None  # the shutdown stopped it over these very dice: not again
            self.forget_stopped()
        self.attempted = count
        job = DeepJob(
            self.folder,
            self.shipped.model.path.parent,
            np.stack(crops),
            np.array(values, np.int64),
            tuple(keys),
            tuple(ids),
            self.removed,
            self.shipped,
            judged=tuple(judged),
        )
        self.running = job
        return job

    def keep(self, state: DeepState) -> None:
        self.state = state if state.from_sha256 == self.sha256 else None

    def invalidate(self) -> None:
        """The setup was forgotten, or a taught die deleted or kept: the net learnt
        without it, or from it, no longer reads, and a child running now is stopped (its
        work is moot); the next refresh fine-tunes again."""
        self.stop()
        shutil.rmtree(self.folder / ADAPTED_DIR / DEEP_DIR, ignore_errors=True)
        self.state, self.attempted = None, None
        self.forget_stopped()

    def forget_stopped(self) -> None:
        self.stopped = None
        StoppedFineTune.remove(self.folder)

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()

    def stop_for_shutdown(self) -> None:
        """The server stops: a fine-tune running now is stopped, and recorded so that the
        next start does not begin it again over the same dice (`StoppedFineTune`)."""
        running = self.running
        if running is None:
            return
        stopped = StoppedFineTune(
            running.fingerprint(), len(set(running.photos)), self.sha256, time.time()
        )
        try:
            stopped.save(self.folder)
            self.stopped = stopped
        except OSError:
            logger.warning(
                "setup %s: the stopped fine-tune not recorded", self.setup, exc_info=True
            )
        running.stop()
