"""A setup's finder that learns from its confirmed photos (issue 24, item 1): the photos
kept, the heat head refitted and judged, the verdict and head kept beside the setup.

`FinderLearner` is the finder's half of companion.vision.adapt_learn.SetupLearner:

- `record(image, dice, photo)`: the confirmed photo is stored whole with its confirmed
  dice (companion.vision.adapt_store.SetupStore.add_photo), the host's added dice among
  them; the false dice it removed are the shipped peaks away from every confirmed die;
- `job(classifier_for)`: when REFIT_EVERY photos have been stored since the last one
  judged (or the check has never run for this finder), a `FinderJob` over a snapshot of
  the latest JUDGED_PHOTOS photos (25: one per fold, so a check costs the same after any
  number): the fold check of companion.vision.adapt_finder_check, run by
  `SetupLearner.refresh_finder` without the learner's lock (it takes seconds: 25 folds,
  each left-out photo through the pipeline twice);
- `keep(state)`: the job's head and verdict written beside the setup
  (companion.vision.adapt_files.save_finder_head) and put in place;
- `finder()`: the features finder with the adopted head (None: not adopted), which the
  camera reads with (companion.table.learning.LearntReader); `restore()` reads the saved
  head after a restart.

Each photo's training cells are made once per learner (one finder pass) and kept."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.vision.adapt_anchor import read_anchor_photos
from companion.vision.adapt_files import load_finder_head, save_finder_head
from companion.vision.adapt_finder import AdaptedFinder, FinderHead, FinderRows, Spot
from companion.vision.adapt_finder_check import (
    MIN_PHOTOS,
    ClassifierFor,
    FinderPhoto,
    check_finder_head,
)
from companion.vision.adapt_gate import MAX_FOLDS, Verdict
from companion.vision.adapt_store import PhotoDie, SetupStore, StoredPhoto
from companion.vision.datasets import DatasetError, LabelledDie, LabelledImage
from companion.vision.types import DieBox

logger = logging.getLogger(__name__)

REFIT_EVERY = 5  # new confirmed photos before the finder's head is judged again
JUDGED_PHOTOS = MAX_FOLDS  # the latest photos a check fits and judges on (one per fold)


@dataclass(frozen=True)
class FinderState:
    """The finder check's outcome: the head (None: the shipped finder reads), its verdict
    and the stored photos it judged (their ids)."""

    head: FinderHead | None
    verdict: Verdict
    photo_ids: tuple[int, ...] = ()


def photo_die(where: DieBox, value: int, example_id: int | None = None) -> PhotoDie:
    """A confirmed die as a stored photo keeps it: its centre and side (the longer one),
    and the stored die it is."""
    side = float(max(where.w, where.h))
    return PhotoDie(float(where.cx), float(where.cy), side, int(value), example_id)


def as_labelled(store: SetupStore, photo: StoredPhoto) -> LabelledImage:
    """A stored photo as the scoring of companion.vision.scoring takes it."""
    dice = tuple(LabelledDie(d.cx, d.cy, d.side, d.side, d.value) for d in photo.dice)
    return LabelledImage(
        store.photo_path(photo.setup, photo.photo_id), photo.setup, photo.width, photo.height, dice
    )


@dataclass
class FinderJob:
    """One fold check over a snapshot of the setup's photos (module docstring)."""

    finder: AdaptedFinder
    photos: list[StoredPhoto]
    images: list[LabelledImage]
    rows: dict[int, FinderRows]
    classifier_for: ClassifierFor
    anchor: list[LabelledImage]
    pictures: dict[Path, np.ndarray] = field(default_factory=dict)

    def picture(self, image: LabelledImage) -> np.ndarray:
        if image.path not in self.pictures:
            self.pictures[image.path] = image.load()
        return self.pictures[image.path]

    def rows_of(self, photo: FinderPhoto) -> FinderRows:
        stored = next(p for p in self.photos if p.photo == photo.name)
        if stored.photo_id not in self.rows:
            spots = [Spot(d.cx, d.cy, d.side) for d in stored.dice]
            aside = [Spot(d.cx, d.cy, d.side) for d in stored.aside]
            picture = self.picture(photo.images[0])
            self.rows[stored.photo_id] = self.finder.photo_rows(
                picture, spots, stored.photo_id, aside
            )
        return self.rows[stored.photo_id]

    def run(self) -> FinderState:
        """The check; a photo whose file is gone or damaged is left out of it."""
        readable = []
        for photo, image in zip(self.photos, self.images, strict=True):
            try:
                self.picture(image)
            except DatasetError:
                logger.warning("setup photo %s not read: left out of the finder check", image.path)
                continue
            readable.append((photo, image))
        self.photos = [p for p, _ in readable]
        self.images = [i for _, i in readable]
        judged = [FinderPhoto(p.photo, (i,)) for p, i in readable]
        verdict, head = check_finder_head(
            self.finder.with_head(None),
            judged,
            self.rows_of,
            self.picture,
            self.classifier_for,
            self.anchor,
        )
        return FinderState(head, verdict, tuple(p.photo_id for p in self.photos))


class FinderLearner:
    """See the module docstring. The caller (SetupLearner) holds its lock around every
    call but `FinderJob.run`."""

    def __init__(
        self,
        store: SetupStore,
        setup: str,
        folder: Path,
        finder: AdaptedFinder,
        anchor_dir: Path | None = None,
    ) -> None:
        self.store = store
        self.setup = setup
        self.folder = folder
        self.base = finder.with_head(None)
        self.anchor_dir = anchor_dir
        self.state: FinderState | None = None
        # each photo's rows with the spots they were made from: a die deleted since
        # changes the spots, and its rows are made again
        self._rows: dict[int, tuple[tuple[PhotoDie, ...], FinderRows]] = {}
        self._rows_lock = threading.Lock()

    def record(self, image: np.ndarray, dice: Sequence[PhotoDie], photo: str) -> int | None:
        """Store a confirmed photo with its dice (none: nothing to learn, not stored)."""
        if not dice:
            return None
        return self.store.add_photo(self.setup, photo, image, dice)

    def job(self, classifier_for: ClassifierFor) -> FinderJob | None:
        """A fold check to run when it is due (module docstring), else None: from
        MIN_PHOTOS photos with dice on, never judged, or REFIT_EVERY photos stored after
        the last one judged."""
        photos = self.store.latest_photos(self.setup)
        state = self.state or self.restore()
        if len(photos) < MIN_PHOTOS:
            return None
        if state is not None and state.photo_ids:
            last = max(state.photo_ids)
            if sum(p.photo_id > last for p in photos) < REFIT_EVERY:
                return None
        try:
            anchor = read_anchor_photos(self.anchor_dir)
        except DatasetError:
            logger.warning("finder's no-forgetting photos not read", exc_info=True)
            anchor = []
        # the latest JUDGED_PHOTOS only, so a check costs the same after a hundred rolls
        kept = photos[-JUDGED_PHOTOS:]
        spots = {p.photo_id: p.spots for p in kept}
        with self._rows_lock:
            known = {k: rows for k, (made, rows) in self._rows.items() if spots.get(k) == made}
        images = [as_labelled(self.store, p) for p in kept]
        return FinderJob(self.base, kept, images, known, classifier_for, anchor)

    def keep(self, state: FinderState, job: FinderJob | None = None) -> None:
        """Write the job's head and verdict beside the setup and read with them."""
        if job is not None:
            spots = {p.photo_id: p.spots for p in job.photos}
            with self._rows_lock:
                self._rows.update({k: (spots[k], v) for k, v in job.rows.items() if k in spots})
        save_finder_head(
            self.folder, self.setup, state.head, state.verdict, self.base, state.photo_ids
        )
        self.state = state
        logger.info("setup %s finder: %s", self.setup, state.verdict.words())

    def restore(self) -> FinderState | None:
        """The saved head and verdict (a restart), None when none is saved for this finder;
        a damaged file is logged and the shipped finder reads."""
        try:
            saved = load_finder_head(self.folder, self.base)
        except Exception:
            logger.warning("setup %s: saved finder head not read", self.setup, exc_info=True)
            return None
        if saved is None:
            return None
        self.state = FinderState(saved.head, saved.verdict, saved.photo_ids)
        return self.state

    def forget(self) -> None:
        """Nothing learnt (the caller removed the files)."""
        self.state = None
        with self._rows_lock:
            self._rows.clear()

    def finder(self) -> AdaptedFinder | None:
        """The finder with the adopted head; None while the shipped finder reads."""
        state = self.state or self.restore()
        if state is None or state.head is None:
            return None
        return self.base.with_head(state.head)

    @property
    def verdict(self) -> Verdict | None:
        state = self.state or self.restore()
        return state.verdict if state is not None else None
