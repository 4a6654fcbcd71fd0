"""A setup that learns from its confirmed rolls: record a roll's dice, refresh the heads,
read with them.

`SetupLearner` ties the store (companion.vision.adapt_store) to the heads
(companion.vision.adapt) for one setup:

- `record(image, dice)`: each confirmed die of one photo (read as shown, corrected by a
  tap, added by the host, or taught) is cut out as a 64 px crop, read once more by the
  *shipped* classifier in one batch with its seven other symmetric views (the embeddings
  and shipped probabilities of all eight, which the value head learns from, and the
  shipped head's reading after its second look, which the poisoning check weighs), its
  body colour measured, and stored;
- `refresh()`: loads the setup's dice (their features made again from their crops where
  another classifier made them, or the views were not kept), holds back the suspect ones,
  fits the heads and judges the value head by the fold check (companion.vision.adapt_gate,
  with the no-forgetting sample of companion.vision.adapt_anchor), then writes the head
  and its verdict beside the setup (companion.vision.adapt_files), in about a second for
  500 dice (bench/adapt_speed.py); with no die left it removes the setup's head;
- `saved()` / `from_saved()`: what the last refresh wrote (a restart reads with it before
  refitting: companion.table.learning.Learning.restore);
- `forget()`: every stored die and the adapted head deleted, under the lock;
- `reader(base)`: the base DiceReader's finder with the adapted classifier and the setup's
  own dice colours; with a features finder (`finder=`, companion.vision.adapt_finder) the
  finder's half learns too (companion.vision.adapt_finder_learn.FinderLearner): `record`
  also keeps the photo, `refresh_finder` judges the finder's heat head every few photos
  (outside the lock: it takes seconds) and `reader` reads with it once adopted.

Every call is synchronous and may take milliseconds (record) to a few hundred
(refresh of thousands of dice), `refresh_finder` seconds (25 photos through the pipeline
twice): a server runs them off its event loop. One lock keeps a
refresh from reading a half-recorded roll's state."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt import (
    FACES,
    VIEWS,
    Adaptation,
    AdaptedClassifier,
    OwnColours,
    adapt,
)
from companion.vision.adapt_anchor import anchor_dice, read_anchor
from companion.vision.adapt_deep_learn import MIN_PHOTOS as DEEP_MIN_PHOTOS
from companion.vision.adapt_deep_learn import DeepClassifier, DeepLearner
from companion.vision.adapt_deep_learn import available as deep_available
from companion.vision.adapt_files import SavedHead, load_head, remove_head, save_head
from companion.vision.adapt_finder import AdaptedFinder
from companion.vision.adapt_finder_check import MIN_PHOTOS, fold_classifiers
from companion.vision.adapt_finder_learn import FinderJob, FinderLearner, photo_die
from companion.vision.adapt_gate import Judged, Verdict
from companion.vision.adapt_look import chroma_signature
from companion.vision.adapt_store import (
    CROP_SIZE,
    NewExample,
    SetupStore,
    StoredExample,
    ViewUpdate,
    photo_key,
)
from companion.vision.classifier import PipClassifier, crop_die, symmetric_views
from companion.vision.colour import DiceSet, measure_die
from companion.vision.finder import DiceFinder
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieBox

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConfirmedDie:
    """One die of a confirmed photo: where it lies, its confirmed value, how it was
    confirmed (adapt_store.SOURCES) and its colour name and set die when known."""

    where: DieBox
    value: int
    source: str = "read"
    colour: str | None = None
    set_index: int | None = None


def with_set_dice(dice: Sequence[ConfirmedDie], dice_set: DiceSet | None) -> list[ConfirmedDie]:
    """The dice with each unassigned one given the set die of its colour (the first of
    that colour no other die of the photo has: Qwixx's two whites take one each)."""
    if dice_set is None:
        return list(dice)
    taken = {d.set_index for d in dice if d.set_index is not None}
    out = []
    for die in dice:
        if die.set_index is None and die.colour is not None:
            free = [j for j, c in enumerate(dice_set.colours) if c == die.colour and j not in taken]
            if free:
                taken.add(free[0])
                die = replace(die, set_index=free[0])
        out.append(die)
    return out


def model_key(classifier: PipClassifier) -> str:
    """What an embedding is tied to: the classifier file's sha256."""
    return classifier.model.manifest.sha256


@dataclass(frozen=True)
class CropFeatures:
    """What the shipped classifier makes of N crops and their views: the reading after its
    second look (N x 7), and per view (VIEWS, the first the crop as cut) the embeddings
    (N x V x D) and probabilities (N x V x 7)."""

    probabilities: np.ndarray
    views: np.ndarray
    view_probabilities: np.ndarray

    @property
    def embeddings(self) -> np.ndarray:
        return np.asarray(self.views[:, 0])


def crop_features(classifier: PipClassifier, crops: np.ndarray) -> CropFeatures:
    """N crops (H x W x 3 in the model's colour order and size) and their seven symmetric
    views in one batch through the classifier. The reading is the classifier's own
    (`PipClassifier.classify`): the crop as cut, or the mean of the eight views for a die
    read under its second-look threshold."""
    index = classifier.embedding_index
    if index is None:
        raise ValueError(f"{classifier.model.path}: the classifier has no embedding output")
    count = len(crops)
    batch = np.concatenate([crops, symmetric_views(crops)])
    outputs = classifier.model.run(classifier.model.normalise(batch))
    probabilities = outputs[classifier.probabilities_index].reshape(VIEWS, count, -1)
    embeddings = outputs[index].reshape(VIEWS, count, -1)
    reading = probabilities[0].copy()
    unsure = reading.max(axis=1) < classifier.second_look_below
    reading[unsure] = probabilities[:, unsure].mean(axis=0)
    return CropFeatures(reading, embeddings.transpose(1, 0, 2), probabilities.transpose(1, 0, 2))


def new_examples(
    classifier: PipClassifier, image: np.ndarray, dice: Sequence[ConfirmedDie]
) -> list[NewExample]:
    """The dice of one photo as records to store (no table, photo or throw yet): one batch
    through the shipped classifier for their features (`crop_features`)."""
    if not dice:
        return []
    features = crop_features(classifier, classifier.crops(image, [d.where for d in dice]))
    key = model_key(classifier)
    out = []
    for k, die in enumerate(dice):
        body = measure_die(image, die.where)
        out.append(
            NewExample(
                crop=crop_die(image, die.where, classifier.margin, CROP_SIZE),
                value=die.value,
                embedding=features.embeddings[k],
                model=key,
                source=die.source,
                probabilities=features.probabilities[k] if die.source != "added" else None,
                lab=None if body is None else body.lab,
                colour=die.colour,
                set_index=die.set_index,
                views=features.views[k],
                view_probabilities=features.view_probabilities[k],
            )
        )
    return out


def model_crops(classifier: PipClassifier, crops: Sequence[np.ndarray]) -> np.ndarray:
    """Stored 64 px BGR crops as the model takes them (its size and colour order)."""
    height, width = classifier.size
    batch = np.stack([cv2.resize(c, (width, height), interpolation=cv2.INTER_AREA) for c in crops])
    return batch[..., ::-1] if classifier.model.manifest.input.colour_order == "RGB" else batch


def embed_crops(classifier: PipClassifier, crops: Sequence[np.ndarray]) -> np.ndarray:
    """N x D embeddings of stored 64 px BGR crops."""
    return crop_features(classifier, model_crops(classifier, crops)).embeddings


def anchor_for(classifier: PipClassifier, models_dir: Path | None = None) -> Judged | None:
    """The no-forgetting sample (companion.vision.adapt_anchor) as the classifier reads it,
    its crops' eight views in one batch; None when its files are not there."""
    crops, values = read_anchor(models_dir)
    if not crops:
        return None
    made = crop_features(classifier, model_crops(classifier, crops))
    return anchor_dice(made.views, made.view_probabilities, values, crops)


@dataclass(frozen=True)
class SetupSummary:
    """What a setup has learnt, for the pages: confirmed dice stored and used, held-back
    ids, and per face and per set die how many dice and how sure the reader has become of
    such a die (the mean `Adaptation.sureness` of its dice; 0 with none)."""

    setup: str
    stored: int
    used: int
    held: tuple[int, ...]
    faces: tuple[int, ...]
    face_sureness: tuple[float, ...]
    set_dice: tuple[int, ...]
    set_die_sureness: tuple[float, ...]
    set_colours: tuple[str, ...]
    adopted: bool = False
    verdict: str = ""
    finder_adopted: bool = False
    finder_verdict: str = ""  # "" while the finder is not judged (or does not learn)
    photos: int = 0  # confirmed photos kept for the finder
    deep_adopted: bool = False
    deep_verdict: str = ""  # "" while the fine-tuned net is not judged (or not asked for)

    def to_json(self) -> dict[str, object]:
        return {
            "adopted": self.adopted,
            "verdict": self.verdict,
            "finder_adopted": self.finder_adopted,
            "finder_verdict": self.finder_verdict,
            "deep_adopted": self.deep_adopted,
            "deep_verdict": self.deep_verdict,
            "photos": self.photos,
            "setup": self.setup,
            "stored": self.stored,
            "used": self.used,
            "held": list(self.held),
            "faces": list(self.faces),
            "face_sureness": [round(p, 3) for p in self.face_sureness],
            "set_dice": list(self.set_dice),
            "set_die_sureness": [round(p, 3) for p in self.set_die_sureness],
            "set_colours": list(self.set_colours),
        }


def error_share(verdict: Verdict) -> float:
    """The share of its left-out dice an adopted reader read wrong (1.0 with none)."""
    return verdict.adapted_errors / verdict.dice if verdict.dice else 1.0


def _update(stored: StoredExample, features: CropFeatures, k: int, key: str) -> ViewUpdate:
    """The new features of one stored die: all of them after a model change; only the
    views (its embedding from the photo itself kept) when the same classifier made it."""
    same = stored.model == key
    return ViewUpdate(
        stored.example_id,
        stored.example.embedding if same else features.embeddings[k],
        features.views[k],
        features.view_probabilities[k],
        None if same else features.probabilities[k],
    )


def _mean_sureness(values: Sequence[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return float(sum(known) / len(known)) if known else 0.0


class SetupLearner:
    """See the module docstring."""

    def __init__(
        self,
        store: SetupStore,
        setup: str,
        classifier: PipClassifier,
        dice_set: DiceSet | None = None,
        anchor_dir: Path | None = None,
        finder: AdaptedFinder | None = None,
        deep: bool = False,
    ) -> None:
        self.store = store
        self.setup = setup
        self.classifier = classifier
        self.dice_set = dice_set
        self.anchor_dir = anchor_dir  # the no-forgetting sample's folder (None: the models')
        self._lock = threading.RLock()
        self._anchor: tuple[str, Judged | None] | None = None
        self._looks: dict[int, np.ndarray | None] = {}  # per stored die: its crop's look
        self.stored: list[StoredExample] = []
        self.adaptation: Adaptation | None = None
        # the finder's half (None: only the value head learns); `forget` bumps the
        # generation, so a finder check that ran meanwhile writes nothing back
        self.finder_learner = (
            FinderLearner(store, setup, self.folder, finder, anchor_dir)
            if finder is not None
            else None
        )
        # the fine-tuned net's half (None: not asked for, or torch not installed)
        self.deep_learner = (
            DeepLearner(
                store,
                setup,
                self.folder,
                classifier,
                finder.with_head(None) if finder is not None else None,
            )
            if deep and deep_available()
            else None
        )
        self._generation = 0
        self._finder_running = threading.Lock()
        self._deep_running = threading.Lock()

    @property
    def folder(self) -> Path:
        """Where the setup's crops and its adapted head lie."""
        return self.store.crops_dir / self.setup

    def anchor(self) -> Judged | None:
        """The no-forgetting sample as this classifier reads it (made once per classifier;
        None when the sample's files are not there)."""
        key = model_key(self.classifier)
        if self._anchor is None or self._anchor[0] != key:
            self._anchor = (key, anchor_for(self.classifier, self.anchor_dir))
        return self._anchor[1]

    @property
    def lock(self) -> threading.RLock:
        """The lock every refresh, record and forget holds (a caller that must act on a
        state no refresh changes meanwhile holds it too: companion.table.learning)."""
        return self._lock

    def forget(self) -> int:
        """Delete every stored die of the setup, its crops and its adapted head, under the
        lock (a refresh running now finishes first; none writes a head after); returns
        how many dice were deleted. The shipped reader reads until new dice are taught."""
        with self._lock:
            count = self.store.delete_setup(self.setup)
            remove_head(self.folder)
            self.stored, self.adaptation = [], None
            self._looks.clear()  # a die stored later may take a deleted die's id
            self._generation += 1
            if self.finder_learner is not None:
                self.finder_learner.forget()
            if self.deep_learner is not None:
                self.deep_learner.invalidate()
            return count

    def forget_table(self, table_id: str) -> int:
        """Delete the dice one table confirmed and the photos of its rolls, under the lock;
        the other tables' dice and the taught ones stay. Every head learnt from the
        forgotten dice goes too (value head, finder head, fine-tuned net: a check running
        now writes nothing back): the caller refits from the dice that stay (`refresh`,
        which leaves the shipped reader reading when too few are left). Returns how many
        dice were deleted."""
        with self._lock:
            count = self.store.delete_table(self.setup, table_id)
            if not count:  # the table taught nothing: every head learnt from the same dice
                return 0
            remove_head(self.folder)
            self.stored, self.adaptation = [], None
            self._looks.clear()
            self._generation += 1
            if self.finder_learner is not None:
                self.finder_learner.forget()
            if self.deep_learner is not None:
                self.deep_learner.invalidate()
            return count

    def saved(self) -> SavedHead | None:
        """The head and verdict the last refresh wrote for this classifier (None: none)."""
        return load_head(self.folder, self.classifier)

    def record(
        self,
        image: np.ndarray,
        dice: Sequence[ConfirmedDie],
        *,
        table_id: str | None = None,
        photo: str | None = None,
        throw: int | None = None,
    ) -> list[int]:
        """Store the confirmed dice of one photo; returns their ids."""
        made = new_examples(self.classifier, image, with_set_dice(dice, self.dice_set))
        rows = [replace(e, table_id=table_id, photo=photo, throw=throw) for e in made]
        with self._lock:
            ids = self.store.add(self.setup, rows)
            if self.finder_learner is not None and ids and photo is not None:
                self._record_photo(image, dice, ids, photo_key(photo, table_id, ids[0]))
            return ids

    def _record_photo(
        self, image: np.ndarray, dice: Sequence[ConfirmedDie], ids: Sequence[int], key: str
    ) -> None:
        """The photo for the finder, under the key its dice count in (the folds' photo;
        a die stored without a photo key is a photo of its own, so none is kept). A
        failure is logged: the dice are stored, the value head learns from them."""
        assert self.finder_learner is not None
        spots = [photo_die(d.where, d.value, k) for d, k in zip(dice, ids, strict=True)]
        try:
            self.finder_learner.record(image, spots, key)
        except Exception:
            logger.warning("setup %s: a photo not kept for the finder", self.setup, exc_info=True)

    def refresh(self) -> Adaptation:
        """Fit the value head on every stored die of the setup (module docstring); the
        finder's head is judged by `refresh_finder`, which takes seconds."""
        with self._lock:
            stored = self.store.examples(self.setup)
            stored = self._with_looks(self._embedded_now(stored))
            adaptation = adapt(
                [s.example for s in stored],
                self.dice_set,
                self.anchor(),
                second_look_below=self.classifier.second_look_below,
            )
            self.stored, self.adaptation = stored, adaptation
            if stored:
                save_head(self.folder, self.setup, adaptation.head, self.classifier)
            else:  # no confirmed die left: no head either, the shipped one reads
                remove_head(self.folder)
                self._generation += 1  # a finder check running now writes nothing back
                if self.finder_learner is not None:
                    self.finder_learner.forget()
                if self.deep_learner is not None:
                    self.deep_learner.invalidate()
        logger.info("setup %s: %s", self.setup, adaptation.head.gate.words())
        return adaptation

    def refresh_finder(self) -> bool:
        """Judge the finder's head when a check is due (every REFIT_EVERY new photos, from
        MIN_PHOTOS on), the value head as the last `refresh` left it; returns whether a
        new verdict was kept. The check runs without the learner's lock (rolls keep being
        stored, pages keep reading); one at a time; a setup forgotten meanwhile gets
        nothing written back. A failure is logged and the shipped finder keeps reading."""
        if self.finder_learner is None or not self._finder_running.acquire(blocking=False):
            return False
        try:
            with self._lock:
                adaptation = self.adaptation or self.refresh()
                job = self._finder_job(self.stored, adaptation)
                generation = self._generation
            if job is None:
                return False
            try:
                state = job.run()  # seconds
            except Exception:
                logger.warning("setup %s: finder check failed", self.setup, exc_info=True)
                return False
            with self._lock:
                if generation != self._generation:
                    return False
                self.finder_learner.keep(state, job)
                return True
        finally:
            self._finder_running.release()

    def refresh_deep(self) -> bool:
        """Fine-tune and judge the whole classifier when due (companion.vision.
        adapt_deep_learn: a child process, up to minutes, without the learner's lock, one
        at a time; the value head's held-back dice left out); returns whether a new
        verdict was kept. Its folder is put in place under the lock, and only if the setup
        was not forgotten meanwhile; a failure is logged and the last verdict stands."""
        deep = self.deep_learner
        if deep is None or not self._deep_running.acquire(blocking=False):
            return False
        try:
            with self._lock:
                adaptation = self.adaptation or self.refresh()
                job = deep.job(self.stored, adaptation.held)
                generation = self._generation
            if job is None:
                return False
            try:
                job.run()
                with self._lock:
                    if generation != self._generation:  # forgotten or a die deleted since
                        job.discard()
                        return False
                    state = job.install()
                    deep.keep(state)
            except Exception:
                if job.stopped.is_set():  # asked for: not a fault to alarm the owner with
                    logger.info(
                        "setup %s: fine-tune stopped (the setup forgotten, a taught die "
                        "changed, or the server stopping): nothing kept",
                        self.setup,
                    )
                else:
                    logger.warning("setup %s: fine-tune failed", self.setup, exc_info=True)
                return False
            finally:
                deep.running = None
            logger.info("setup %s: fine-tuned net: %s", self.setup, state.verdict.words())
            return True
        finally:
            self._deep_running.release()

    def forget_deep(self) -> None:
        """A taught die was deleted or kept: the fine-tuned net no longer reads (it learnt
        the dice as they were) and a child running now keeps nothing; the next refresh
        fine-tunes again (`DeepLearner.invalidate`)."""
        if self.deep_learner is None:
            return
        with self._lock:
            self._generation += 1
            self.deep_learner.invalidate()

    def deep_classifier(self) -> DeepClassifier | None:
        """The adopted fine-tuned net (None: none, or it is not the learner's classifier's)."""
        if self.deep_learner is None:
            return None
        with self._lock:
            return self.deep_learner.classifier()

    def _finder_job(self, stored: list[StoredExample], adaptation: Adaptation) -> FinderJob | None:
        """The finder check to run now, when one is due."""
        if self.finder_learner is None or not stored:
            return None
        examples = [s.example for s in stored]
        classifier_for = fold_classifiers(
            self.classifier, examples, self.anchor(), adaptation.head, regate=False
        )
        return self.finder_learner.job(classifier_for)

    def _with_looks(self, stored: list[StoredExample]) -> list[StoredExample]:
        """The stored dice with their crops' looks (companion.vision.adapt_look), measured
        once per die from its stored crop (None where the crop is gone: the head then
        leaves that die to the shipped one when it is judged)."""
        for s in stored:
            if s.example_id not in self._looks:
                crop = self.store.crop(self.setup, s.example_id)
                self._looks[s.example_id] = None if crop is None else chroma_signature(crop)
        return [
            replace(s, example=replace(s.example, look=self._looks[s.example_id])) for s in stored
        ]

    def _embedded_now(self, stored: list[StoredExample]) -> list[StoredExample]:
        """The stored dice with the current classifier's features: those made by another
        classifier, or kept without their views, made again from their crops and written
        back (a die whose crop is gone and whose embedding is stale is left out)."""
        key = model_key(self.classifier)
        stale = [s for s in stored if s.model != key or s.example.views is None]
        if not stale:
            return stored
        ready = []
        for s in stale:
            crop = self.store.crop(self.setup, s.example_id)
            if crop is not None:
                ready.append((s, crop))
        if ready:
            features = crop_features(
                self.classifier, model_crops(self.classifier, [c for _, c in ready])
            )
            self.store.set_features(
                [_update(s, features, k, key) for k, (s, _) in enumerate(ready)], key
            )
        logger.info(
            "setup %s: %d dice's features made again for %s", self.setup, len(ready), key[:12]
        )
        missing = {s.example_id for s in stale if s.model != key} - {s.example_id for s, _ in ready}
        return [s for s in self.store.examples(self.setup) if s.example_id not in missing]

    def reader(self, base: DiceReader) -> DiceReader:
        """`base`'s finder (the setup's adopted finder head over it, when it has one for
        that finder) with this setup's classifier and dice colours: the last refresh's,
        else the saved head (a restart), else refresh first."""
        adaptation = self.current()
        finder = self.reader_finder(base.finder)
        classifier = self.classifier_over(base.classifier, adaptation)
        return DiceReader(finder, classifier, adaptation.dice_set or base.dice_set)

    def classifier_over(self, base: PipClassifier, adaptation: Adaptation) -> PipClassifier:
        """What reads the setup's dice over `base`: the adopted fine-tuned net when it was
        made from `base`'s file and either no value head is adopted or the net erred on a
        smaller share of its left-out dice than the head did on its own (each was judged
        against the shipped net, not against the other); else `base` with the value head."""
        deep = self.deep_classifier()
        if deep is not None and deep.source == model_key(base):
            head = adaptation.head
            if not head.active or error_share(deep.verdict) < error_share(head.gate):
                return deep
        return AdaptedClassifier(base, adaptation.head)

    def reader_finder(self, base: DiceFinder) -> DiceFinder:
        """The finder to read with: the adopted finder head's when it adapts `base` (the
        same finder file), else `base`."""
        learner = self.finder_learner
        with self._lock:
            adapted = learner.finder() if learner is not None else None
        if adapted is None or adapted.base.model.manifest.sha256 != base.model.manifest.sha256:
            return base
        return adapted

    @property
    def finder_verdict(self) -> Verdict | None:
        """The finder check's last verdict (None: no finder half, or never judged)."""
        if self.finder_learner is None:
            return None
        with self._lock:
            return self.finder_learner.verdict

    def current(self) -> Adaptation:
        """The last refresh's adaptation, else the saved head's (a restart), else a refresh."""
        return self.adaptation or self.from_saved() or self.refresh()

    def reader_classifier(self) -> PipClassifier:
        """This setup's classifier over the learner's own (`classifier_over`)."""
        return self.classifier_over(self.classifier, self.current())

    def from_saved(self) -> Adaptation | None:
        """The saved head as an Adaptation (no colours, nothing held: a refresh adds them)."""
        saved = self.saved()
        if saved is None:
            return None
        return Adaptation(saved.head, None, OwnColours(), (), saved.head.examples)

    def summary(self) -> SetupSummary:
        """Counts and sureness per face and per set die (refresh first when never done)."""
        if self.adaptation is None:
            self.refresh()
        with self._lock:
            adaptation = self.adaptation or self.refresh()
            stored = list(self.stored)
        held = set(adaptation.held)
        used_stored = [s for k, s in enumerate(stored) if k not in held]
        used = [s.example for s in used_stored]
        sure = self._reader_sureness(adaptation, used_stored)
        faces = tuple(range(1, FACES + 1))
        colours = self.dice_set.colours if self.dice_set is not None else ()
        by_face = [[p for e, p in zip(used, sure, strict=True) if e.value == v] for v in faces]
        by_die = [
            [p for e, p in zip(used, sure, strict=True) if e.set_index == j]
            for j in range(len(colours))
        ]
        return SetupSummary(
            self.setup,
            len(stored),
            adaptation.used,
            tuple(stored[k].example_id for k in adaptation.held),
            tuple(len(group) for group in by_face),
            tuple(_mean_sureness(group) for group in by_face),
            tuple(len(group) for group in by_die),
            tuple(_mean_sureness(group) for group in by_die),
            colours,
            adaptation.head.active,
            adaptation.head.gate.words(),
            *self._finder_summary(),
            *self._deep_summary(),
        )

    def _reader_sureness(
        self, adaptation: Adaptation, used: Sequence[StoredExample]
    ) -> Sequence[float]:
        """Per used die, how sure the reader that reads now was of its value on its own
        left-out photo: the fine-tuned net's folds when that net reads, else (and for a
        die stored after its check, or a verdict written before the field was) the value
        head's check's (`Adaptation.sureness`)."""
        reader = self.classifier_over(self.classifier, adaptation)
        with self._lock:
            state = self.deep_learner.state if self.deep_learner is not None else None
        if not isinstance(reader, DeepClassifier) or state is None:
            return adaptation.sureness
        return [
            state.sureness.get(s.example_id, head)
            for s, head in zip(used, adaptation.sureness, strict=True)
        ]

    def learning_now(self) -> str | None:
        """The host's words for the fine-tune running now (None: none runs)."""
        if self.deep_learner is None:
            return None
        with self._lock:
            running = self.deep_learner.running
        return running.progress_words() if running is not None else None

    def _deep_summary(self) -> tuple[bool, str]:
        """(adopted, the verdict's words) of the fine-tuned net ("" while not judged)."""
        if self.deep_learner is None:
            return False, ""
        with self._lock:
            verdict = self.deep_learner.verdict
            running = self.deep_learner.running
            stopped = self.deep_learner.stopped
        if running is not None:
            return verdict is not None and verdict.adopted, running.progress_words()
        adopted = verdict is not None and verdict.adopted
        if verdict is None:
            said = f"the classifier is fine-tuned from {DEEP_MIN_PHOTOS} confirmed photos on"
        else:
            said = "fine-tuned classifier: " + verdict.words()
        if stopped is not None:  # the shutdown stopped the last one: the page says so first
            said = stopped.words() + ("" if verdict is None else "; until then, " + said)
        return adopted, said

    def _finder_summary(self) -> tuple[bool, str, int]:
        """(adopted, the verdict's words, photos kept) of the finder's half."""
        if self.finder_learner is None:
            return False, "", 0
        with self._lock:
            verdict = self.finder_learner.verdict
            photos = len(self.store.photos(self.setup))
        if verdict is None:
            waiting = (
                f"the finder is judged from {MIN_PHOTOS} confirmed photos on ({photos} so far)"
            )
            return False, waiting, photos
        return verdict.adopted, verdict.finder_words(), photos
