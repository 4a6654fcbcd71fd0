"""Whether a setup's finder head (companion.vision.adapt_finder) may read in place of the
shipped finder: the fold check of companion.vision.adapt_gate, with pipeline errors.

Every confirmed photo is left out once (k = min(photos, MAX_FOLDS) folds, round-robin in
the order first seen). Per fold the head is fitted on the other photos' cells and the
left-out photos go through the whole pipeline twice, with the shipped finder and with the
head; an error is a missed, false or misread die against the photo's confirmed dice
(companion.vision.scoring). Both arms read a fold with the same classifier, the one the
setup would have read with had those photos never been confirmed: the value head fitted
and gated without them (`fold_classifiers`); the value head fitted on all has seen the
left-out dice, and would flatter the arm that finds more of them. (The app refits it
without the fold under the full head's verdict rather than judging it again per fold:
25 fold checks of the value head cost about half a minute.) The sign test over the
folds decides as for the value head; then the head fitted on all reads the no-forgetting
photos (other tables' photos, companion.vision.adapt_anchor.read_anchor_photos) with no
more errors than the shipped finder, each through the value head fitted on all.

Used by the app (companion.vision.adapt_learn.SetupLearner.refresh) and the bench
(bench/adapt.py --finder) alike."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from companion.vision.adapt import (
    AdaptedClassifier,
    Example,
    ValueHead,
    adapt,
    fit_value_head,
    held_back,
)
from companion.vision.adapt_finder import AdaptedFinder, FinderHead, FinderRows, fit_finder_head
from companion.vision.adapt_gate import MAX_FOLDS, Judged, Verdict, decide, fold_of_photos
from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledImage
from companion.vision.finder import DiceFinder
from companion.vision.pipeline import trace_dice
from companion.vision.scoring import score

MIN_PHOTOS = 5  # under this the sign test cannot pass: the verdict is "too_few"


@dataclass(frozen=True)
class FinderPhoto:
    """One confirmed photo as the finder check sees it: its name (the photo key its dice
    carry, so a fold leaves out the photo's dice from the value head too) and its pictures
    with their confirmed dice (a photo of single-die crops has several)."""

    name: str
    images: tuple[LabelledImage, ...]


ClassifierFor = Callable[[frozenset[str]], PipClassifier]
Picture = Callable[[LabelledImage], np.ndarray]
RowsOf = Callable[[FinderPhoto], FinderRows]


def photo_errors(
    finder: DiceFinder, classifier: PipClassifier, image: LabelledImage, picture: np.ndarray
) -> int:
    """Missed + false + misread dice of one photo through the pipeline."""
    return score([(image, trace_dice(picture, finder, classifier).kept, ())]).errors


def value_head_without(
    examples: Sequence[Example],
    left_out: Collection[str],
    anchor: Judged | None,
    second_look_below: float,
) -> ValueHead:
    """The value head the setup would read with had the `left_out` photos never been
    confirmed: `adapt` (held-back dice, fold check, gate) on the other photos' dice."""
    rest = [e for e in examples if e.photo not in left_out]
    return adapt(rest, anchor=anchor, second_look_below=second_look_below).head


def value_head_refitted_without(
    examples: Sequence[Example], left_out: Collection[str], full: ValueHead
) -> ValueHead:
    """The value head fitted without the `left_out` photos under the verdict `full` was
    given (adopted: refitted on the rest, its suspect dice held back; refused: the
    shipped head). What `value_head_without` gives but for its own fold check, which
    costs about a second per fold: the app's choice (`fold_classifiers(regate=False)`)."""
    rest = [e for e in examples if e.photo not in left_out]
    held = set(held_back(rest))
    return fit_value_head([e for k, e in enumerate(rest) if k not in held], full.gate)


def fold_classifiers(
    base: PipClassifier,
    examples: Sequence[Example],
    anchor: Judged | None,
    full: ValueHead,
    regate: bool = True,
) -> ClassifierFor:
    """Per set of left-out photo names, the classifier a fold reads them with: the base
    classifier with the value head fitted (and, with `regate`, gated by its own fold
    check: `value_head_without`; else under the full head's verdict:
    `value_head_refitted_without`) without those photos, made once per set; with none
    left out, `full` (the head fitted on all, which the no-forgetting photos are read
    with)."""
    made: dict[frozenset[str], PipClassifier] = {frozenset(): AdaptedClassifier(base, full)}

    def classifier_for(left_out: frozenset[str]) -> PipClassifier:
        if left_out not in made:
            if regate:
                head = value_head_without(examples, left_out, anchor, base.second_look_below)
            else:
                head = value_head_refitted_without(examples, left_out, full)
            made[left_out] = AdaptedClassifier(base, head)
        return made[left_out]

    return classifier_for


def check_finder_head(
    finder: AdaptedFinder,
    photos: Sequence[FinderPhoto],
    rows_of: RowsOf,
    picture_of: Picture,
    classifier_for: ClassifierFor,
    anchor: Sequence[LabelledImage],
) -> tuple[Verdict, FinderHead | None]:
    """The verdict of the module docstring and the head fitted on all photos (None
    unless adopted). `rows_of` gives a photo's training cells, `picture_of` an image's
    pixels (both may cache)."""
    if len(photos) < MIN_PHOTOS:
        return Verdict(), None
    shipped_finder = finder.with_head(None)
    folds = fold_of_photos([p.name for p in photos], min(len(photos), MAX_FOLDS))
    shipped = np.zeros(int(folds.max()) + 1, np.int64)
    adapted = np.zeros_like(shipped)
    for part in range(len(shipped)):
        rows = [rows_of(p) for p, f in zip(photos, folds, strict=True) if f != part]
        fold_finder = finder.with_head(fit_finder_head(FinderRows.join(rows)))
        left_out = [p for p, f in zip(photos, folds, strict=True) if f == part]
        classifier = classifier_for(frozenset(p.name for p in left_out))
        for photo in left_out:
            for image in photo.images:
                picture = picture_of(image)
                shipped[part] += photo_errors(shipped_finder, classifier, image, picture)
                adapted[part] += photo_errors(fold_finder, classifier, image, picture)
    full = fit_finder_head(FinderRows.join([rows_of(p) for p in photos]))
    classifier = classifier_for(frozenset())
    full_finder = finder.with_head(full)
    on_anchor = [
        (photo_errors(shipped_finder, classifier, image, picture_of(image)),
         photo_errors(full_finder, classifier, image, picture_of(image)))
        for image in anchor
    ]  # fmt: skip
    checked = (
        (
            sum(len(i.dice) for i in anchor),
            sum(a for a, _ in on_anchor),
            sum(b for _, b in on_anchor),
        )
        if on_anchor
        else None
    )
    dice = sum(len(image.dice) for p in photos for image in p.images)
    verdict = replace(decide(shipped, adapted, checked), dice=dice)
    return verdict, full if verdict.adopted else None
