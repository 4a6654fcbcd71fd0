"""How a reader that learns its table gets better as rolls are confirmed.

    .venv/bin/python bench/adapt.py DIR --shots 0,5,10,25,50
    .venv/bin/python bench/adapt.py ../shared/data/byler-d6-train --every 5 --offset 4
    .venv/bin/python bench/adapt.py ../shared/data/chase-casino-crops --shots 0,5,10,25,50
    .venv/bin/python bench/adapt.py ../shared/data/byler-d6-train --every 5 --offset 4 --colours

On a labelled folder, for each K of --shots: adapt on the labelled dice of the first K
photos (by sorted name, as if those rolls had been confirmed: the dice the pipeline found
there, with their labelled values, and the labelled dice it missed where the labels put
them, as a host adds them), then read the rest with the adapted reader
(companion.vision.adapt_learn; the pipeline's finder, the classifier with the setup's
value head, companion.vision.adapt), judged by the fold check the app runs
(companion.vision.adapt_gate: k-fold by photo over the K photos, a one-sided sign test,
the shipped no-forgetting sample): a refused head reads as cold. Printed per K: value
accuracy of the found dice, recall, false dice (and per 100 photos), and the share of the
remaining photos that would go in without a tap and of those applied wrong (a die missed,
misread or false); the same figures of the cold reader on the same photos beside them; the
fold check's verdict; the adaptation's wall time (the taught dice's features through the
classifier, and `adapt`, fold check included; the no-forgetting sample's features are made
once per classifier, timed apart); whether adapted is no worse than cold on value
accuracy, recall and rolls applied wrong. The last line is ``adapted_value_accuracy_k25: X``.

Without a tap: the camera's own decision (companion.vision.confidence.decide_roll): as
many dice found as labelled and the roll's calibrated confidence (the product of its dice's)
at least the classifier manifest's shipped ``auto_apply_threshold``. A classifier without a
confidence map, or whose map names no threshold (the app then applies no roll without a
tap, and both readers would apply none), falls back to a stand-in that still compares them:
every die's top probability at least ``min_confidence``. An
adopted value head's confidences go through the map its own folds refitted (from 30
left-out dice; else the shipped map), then its folds' ceiling, as in the app.

The finder runs once per photo: the adapted reader reads the boxes the cold pipeline found
(its finder is the same), through the same classify, peak-rule, calibrate and colour stages
(companion.vision.pipeline), so each K costs only the classifier.

A folder of single-die crops (chase-casino-crops, tomitomi-dish-crops) is read crop by crop
by the classifier alone on the whole-crop box (as bench/vision_eval.py reads it); a
chase crop's photo is its file name without ``_detection_N`` (two dice per photo).

--shuffle SEED takes the photos in a seeded random order (a folder sorted by name can hold
one face after another, as tomitomi-dish-crops does). --finder adapts the finder's heat head
too (companion.vision.adapt_finder), judged by the same fold check with each left-out
photo's missed + false + misread dice through the pipeline (both arms of a fold reading with
the value head fitted without that fold's photos, as a deployment would have had it, never
with the head fitted on all K: `check_finder`, the app's own check,
companion.vision.adapt_finder_check, each fold's value head judged by its own fold check),
and the app's 16 no-forgetting calibration photos (models/adapt_anchor_photos/); the
finder's features file is made once per shipped finder (by its
sha256, so per --models) under .cache/models/finder-features/ and made again when either
of its two files is missing or they do not match each other and that finder; --part calibration|validation reads only that part of a training
folder (companion/vision/datasets.py), e.g. rune55-webcams' validation groups; --names REGEX
only the photos whose file name matches, e.g. one camera of a folder that holds several
(rune55-webcams' dice-tower camera, whose frames are numbered: '^[0-9]+_jpg').
--poison SHARE gives that share of the adaptation dice a wrong value (seeded), as wrong
taps would; the figures then show what the held-back check (adapt.held_back) saves.
--colours (byler-d6-train: colours.csv) names the remaining dice's body colours with the
setup's own colours of the first K photos beside the shipped prototypes (each confirmed
die a prototype of its name, adapt.OwnColours), strict and lenient
(colour-alternatives.csv), against the hand labels.
--plot PNG draws value accuracy, recall, false dice per 100 photos and rolls applied wrong
per 100 photos of one or more runs' --json files, adapted and cold (--plot OUT.png A.json
B.json ...); an adopted K is drawn as a filled dot on the adapted line, a refused one as a
ring.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.adapt import (
    Adaptation,
    AdaptedClassifier,
    Example,
    OwnColours,
    adapt,
    own_colours,
)
from companion.vision.adapt_anchor import read_anchor_photos
from companion.vision.adapt_deep_learn import DeepClassifier
from companion.vision.adapt_files import atomic_write
from companion.vision.adapt_finder import (
    AdaptedFinder,
    FinderHead,
    FinderRows,
    Spot,
)
from companion.vision.adapt_finder_check import (
    ClassifierFor,
    FinderPhoto,
    check_finder_head,
    fold_classifiers,
)
from companion.vision.adapt_gate import Judged, Verdict
from companion.vision.adapt_learn import ConfirmedDie, anchor_for, new_examples
from companion.vision.adapt_look import chroma_signature
from companion.vision.adapt_store import NewExample
from companion.vision.classifier import PipClassifier
from companion.vision.colour import colour_readings, measure_die, name_colour
from companion.vision.confidence import decide_roll
from companion.vision.datasets import (
    LabelledImage,
    bench_photos,
    every_nth,
    is_crop_folder,
)
from companion.vision.finder import DiceFinder
from companion.vision.model import sha256_of
from companion.vision.pipeline import (
    DiceReader,
    calibrate_for,
    classify,
    confirm_weak,
    trace_dice,
)
from companion.vision.scoring import Figures, match, off_dice, ratio, score
from companion.vision.types import DieBox, DieReading

if TYPE_CHECKING:  # torch only where --deep runs
    from models.recipe.adapt_deep import DeepSettings


@dataclass
class Photo:
    """One photo (or, in a crop folder, the crops of one photo) with its labels."""

    name: str
    images: list[LabelledImage] = field(default_factory=list)


def group_photos(images: Sequence[LabelledImage], crops: bool) -> list[Photo]:
    """Photos by sorted name; a crop folder's crops grouped by the photo they were cut
    from (``NAME_detection_N`` -> ``NAME``)."""
    photos: dict[str, Photo] = {}
    for image in images:
        name = image.path.stem.split("_detection_")[0] if crops else image.path.name
        photos.setdefault(name, Photo(name)).images.append(image)
    return [photos[name] for name in sorted(photos)]


def found_boxes(
    reader: DiceReader, truth: LabelledImage, picture: np.ndarray, crops: bool
) -> tuple[DieBox, ...]:
    """The boxes the classifier reads: the finder's after its box filters, or for a crop
    the whole-crop box."""
    if crops:
        return tuple(DieBox(d.cx, d.cy, d.side, d.side) for d in truth.dice)
    return trace_dice(picture, reader.finder, reader.classifier).filtered


def read_boxes(
    reader: DiceReader,
    classifier: PipClassifier,
    picture: np.ndarray,
    boxes: Sequence[DieBox],
    crops: bool,
) -> tuple[DieReading, ...]:
    """The rest of DiceReader.read after its finder (companion.vision.pipeline): classify,
    the finder's peak rule (not for crops: no finder there), calibrate, colour."""
    confidence_map = classifier.confidence_map
    looks = confidence_map is not None and confidence_map.needs_looks
    readings = classify(classifier, picture, boxes, looks) if boxes else ()
    if not crops:
        readings = confirm_weak(readings, reader.finder.peak_rule)
    readings = calibrate_for(classifier, readings)
    return colour_readings(picture, readings, reader.dice_set)[0]


def confirmed(truth: LabelledImage, found: Sequence[DieReading]) -> list[ConfirmedDie]:
    """The labelled dice of a photo as a table confirms them: the found ones where the
    finder put them with their labelled value (read as shown, or corrected), the missed
    ones where the labels put them (added by the host)."""
    pairs = dict(match(truth, found))
    dice = []
    for i, die in enumerate(truth.dice):
        j = pairs.get(i)
        if j is None:
            dice.append(
                ConfirmedDie(DieBox(die.cx, die.cy, die.side, die.side), die.value, "added")
            )
        else:
            source = "read" if found[j].value == die.value else "corrected"
            dice.append(ConfirmedDie(found[j].where, die.value, source))
    return dice


def as_example(new: NewExample, photo: str) -> Example:
    return Example(
        new.value, new.embedding, new.probabilities, new.lab, new.colour, new.set_index,
        photo=photo, views=new.views, view_probabilities=new.view_probabilities,
        look=chroma_signature(new.crop),
    )  # fmt: skip


def poisoned(examples: list[Example], share: float, seed: int) -> list[Example]:
    """``share`` of the examples with another value than their own (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for e in examples:
        if rng.random() < share:
            wrong = (e.value - 1 + int(rng.integers(1, 6))) % 6 + 1
            e = replace(e, value=wrong)
        out.append(e)
    return out


@dataclass
class Run:
    """The cold readings of every photo, and the folder's data to adapt on."""

    photos: list[Photo]
    pictures: dict[Path, np.ndarray]
    cold: dict[Path, tuple[DieReading, ...]]
    crops: bool
    boxes: dict[Path, tuple[DieBox, ...]] = field(default_factory=dict)


def read_cold(reader: DiceReader, photos: list[Photo], crops: bool) -> Run:
    pictures: dict[Path, np.ndarray] = {}
    cold: dict[Path, tuple[DieReading, ...]] = {}
    boxes: dict[Path, tuple[DieBox, ...]] = {}
    for k, photo in enumerate(photos, start=1):
        for truth in photo.images:
            picture = pictures[truth.path] = truth.load()
            boxes[truth.path] = found_boxes(reader, truth, picture, crops)
            cold[truth.path] = read_boxes(
                reader, reader.classifier, picture, boxes[truth.path], crops
            )
        if k % 25 == 0 or k == len(photos):
            print(f"  cold: {k}/{len(photos)} photos read", flush=True)
    return Run(photos, pictures, cold, crops, boxes)


def examples_of(run: Run, classifier: PipClassifier, shots: int) -> list[Example]:
    examples: list[Example] = []
    for photo in run.photos[:shots]:
        for truth in photo.images:
            picture = run.pictures[truth.path]
            dice = confirmed(truth, run.cold[truth.path])
            made = new_examples(classifier, picture, dice)
            examples += [as_example(n, photo.name) for n in made]
    return examples


@dataclass
class Outcome:
    """One reader on the remaining photos: the scored figures and the tap decisions."""

    figures: Figures
    photos: int = 0
    applied: int = 0
    applied_wrong: int = 0

    def to_json(self) -> dict[str, float | int]:
        f = self.figures
        return {
            "photos": self.photos,
            "dice": f.labelled,
            "recall": ratio(f.matched, f.labelled),
            "value_accuracy_of_found": ratio(f.right, f.matched),
            "misread": f.misread,
            "missed": f.missed,
            "false": f.false,
            "false_per_100_photos": round(100 * f.false / max(1, self.photos), 2),
            "errors": f.errors,
            "applied_wrong_per_100_photos": round(
                100 * self.applied_wrong / max(1, self.photos), 2
            ),
            "applied_without_tap": ratio(self.applied, self.photos),
            "applied_wrong": self.applied_wrong,
        }


@dataclass(frozen=True)
class TapRule:
    """When a roll goes in without a tap (module docstring): the shipped auto-apply
    threshold, or (None: no map, or a map with no threshold) the stand-in at
    ``min_confidence``."""

    threshold: float | None
    min_confidence: float

    @classmethod
    def of(cls, classifier: PipClassifier) -> TapRule:
        shipped = classifier.confidence_map
        return cls(None if shipped is None else shipped.threshold, classifier.min_confidence)

    def applies(self, dice: Sequence[DieReading], expected: int) -> bool:
        if self.threshold is not None:
            return decide_roll(dice, expected, self.threshold).apply
        return len(dice) == expected and all(
            d.value is not None and d.confidence >= self.min_confidence for d in dice
        )


def outcome(
    run: Run, photos: Sequence[Photo], readings: dict[Path, tuple[DieReading, ...]], rule: TapRule
) -> Outcome:
    rows = []
    result = Outcome(Figures())
    for photo in photos:
        found_all: list[DieReading] = []
        expected = 0
        for truth in photo.images:
            found = readings[truth.path]
            rows.append((truth, found, ()))
            found_all += found
            expected += len(truth.dice)
        part = score([(t, readings[t.path], ()) for t in photo.images])
        right = part.whole == len(photo.images)
        result.photos += 1
        if rule.applies(found_all, expected):
            result.applied += 1
            result.applied_wrong += not right
    result.figures = score(rows)
    return result


def adapted_readings(
    run: Run, reader: DiceReader, adaptation: Adaptation, photos: Sequence[Photo]
) -> dict[Path, tuple[DieReading, ...]]:
    classifier = AdaptedClassifier(reader.classifier, adaptation.head)
    return {
        t.path: read_boxes(reader, classifier, run.pictures[t.path], run.boxes[t.path], run.crops)
        for photo in photos
        for t in photo.images
    }


# ----------------------------------------------------------------------------------------
# The finder's heat head (--finder, companion.vision.adapt_finder)


@dataclass
class FinderBench:
    """The features finder, each photo's training cells (made once), and the calibration
    photos the head must read no worse (the no-forgetting sample of the finder)."""

    finder: AdaptedFinder
    anchor: list[LabelledImage]
    rows: dict[Path, FinderRows] = field(default_factory=dict)
    pictures: dict[Path, np.ndarray] = field(default_factory=dict)

    def rows_of(self, run: Run, photo: Photo) -> FinderRows:
        parts = []
        for k, t in enumerate(photo.images):
            if t.path not in self.rows:
                spots = [Spot(d.cx, d.cy, d.side) for d in t.dice]
                self.rows[t.path] = self.finder.photo_rows(run.pictures[t.path], spots, k)
            parts.append(self.rows[t.path])
        return FinderRows.join(parts)

    def picture(self, image: LabelledImage) -> np.ndarray:
        if image.path not in self.pictures:
            self.pictures[image.path] = image.load()
        return self.pictures[image.path]


def features_cache(finder_file: Path, root: Path) -> Path:
    """Where the features file of the finder in `finder_file` is made:
    ``root/<the file's sha256, first 16>`` (another --models with another finder gets a
    folder of its own)."""
    return root / sha256_of(finder_file)[:16]


def finder_bench(reader: DiceReader, root: Path) -> FinderBench:
    """The features file made into `features_cache` of the reader's finder under `root`
    (models/recipe/finder_features.py) and loaded; made again unless both its files are
    there and match each other and the finder (`features_current`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's models/
    from models.recipe.finder_features import features_current
    from models.recipe.finder_features import main as make_features

    models = Path(reader.finder.model.path).parent
    cache = features_cache(Path(reader.finder.model.path), root)
    if not features_current(cache):
        cache.mkdir(parents=True, exist_ok=True)
        for name in ("dice_finder.onnx", "dice_finder.json"):
            atomic_write(cache / name, (models / name).read_bytes())
        make_features(["--models", str(cache)])
    anchor = read_anchor_photos()  # the app's no-forgetting photos
    return FinderBench(AdaptedFinder.load(reader.finder, models_dir=cache), anchor)


def check_finder(
    bench: FinderBench, run: Run, classifier_for: ClassifierFor, photos: Sequence[Photo]
) -> tuple[Verdict, FinderHead | None]:
    """The app's fold check of the finder's head (companion.vision.adapt_finder_check):
    every photo left out once, each fold read with the value head fitted without it
    (`fold_classifiers`), then the no-forgetting calibration photos."""
    by_name = {p.name: p for p in photos}

    def picture_of(image: LabelledImage) -> np.ndarray:
        found = run.pictures.get(image.path)
        return found if found is not None else bench.picture(image)

    return check_finder_head(
        bench.finder,
        [FinderPhoto(p.name, tuple(p.images)) for p in photos],
        lambda photo: bench.rows_of(run, by_name[photo.name]),
        picture_of,
        classifier_for,
        bench.anchor,
    )


def finder_readings(
    run: Run,
    reader: DiceReader,
    finder: DiceFinder,
    classifier: PipClassifier,
    photos: Sequence[Photo],
) -> dict[Path, tuple[DieReading, ...]]:
    """The photos read with the adapted finder: its boxes, then the rest of the pipeline."""
    out = {}
    for photo in photos:
        for t in photo.images:
            picture = run.pictures[t.path]
            boxes = trace_dice(picture, finder, classifier).filtered
            out[t.path] = read_boxes(
                DiceReader(finder, classifier, reader.dice_set),
                classifier,
                picture,
                boxes,
                run.crops,
            )
    return out


def no_worse(adapted: dict[str, float | int], cold: dict[str, float | int]) -> bool:
    """The issue's target: value accuracy, recall and rolls applied wrong no worse."""
    return (
        adapted["value_accuracy_of_found"] >= cold["value_accuracy_of_found"]
        and adapted["recall"] >= cold["recall"]
        and adapted["applied_wrong"] <= cold["applied_wrong"]
    )


def bench_shots(
    run: Run,
    reader: DiceReader,
    shots: Sequence[int],
    poison: float,
    seed: int,
    anchor: Judged | None,
    finder: FinderBench | None = None,
    deep: DeepSettings | None = None,
) -> list[dict[str, object]]:
    rule = TapRule.of(reader.classifier)
    print(
        f"without a tap: roll confidence >= {rule.threshold} (the shipped threshold)"
        if rule.threshold is not None
        else "without a tap: the shipped classifier names no auto-apply threshold (the app "
        f"applies none); stand-in: every die's top probability >= {rule.min_confidence}"
    )
    results = []
    for k in shots:
        rest = run.photos[k:]
        if not rest:
            print(f"K={k}: no photo left to read")
            continue
        started = time.perf_counter()
        examples = poisoned(examples_of(run, reader.classifier, k), poison, seed)
        features_s = time.perf_counter() - started
        adaptation = adapt(
            examples, anchor=anchor, second_look_below=reader.classifier.second_look_below
        )
        adapt_s = time.perf_counter() - started
        readings = adapted_readings(run, reader, adaptation, rest)
        finder_row: dict[str, object] = {}
        if finder is not None and not run.crops:
            classifier = AdaptedClassifier(reader.classifier, adaptation.head)
            per_fold = fold_classifiers(reader.classifier, examples, anchor, adaptation.head)
            verdict, head = check_finder(finder, run, per_fold, run.photos[:k])
            finder_row = {"finder_verdict": verdict.to_json(), "finder_head": head is not None}
            if head is not None:
                adapted_finder = finder.finder.with_head(head)
                readings = finder_readings(run, reader, adapted_finder, classifier, rest)
            adapt_s = time.perf_counter() - started
        cold = outcome(run, rest, run.cold, rule).to_json()
        adapted = outcome(run, rest, readings, rule).to_json()
        if deep is not None and k > 0:
            finder_row.update(deep_row(run, reader, k, rest, rule, deep, poison, seed))
        row = {
            **finder_row,
            "shots": k,
            "examples": len(examples),
            "held_back": len(adaptation.held),
            "head": adaptation.head.active,
            "verdict": adaptation.head.gate.to_json(),
            "features_s": round(features_s, 2),
            "adapt_s": round(adapt_s, 2),
            "no_worse": no_worse(adapted, cold),
            "adapted": adapted,
            "cold": cold,
        }
        print_row(row)
        results.append(row)
    return results


def deep_row(
    run: Run,
    reader: DiceReader,
    shots: int,
    rest: Sequence[Photo],
    rule: TapRule,
    settings: DeepSettings,
    poison: float,
    seed: int,
) -> dict[str, object]:
    """--deep: the whole classifier fine-tuned on the first K photos' confirmed dice
    (models/recipe/adapt_deep.py; the same dice the value head learns, the same poisoned
    share, and the finder's boxes on no labelled die as "unreadable", as the host's removed
    false dice), judged by its own fold check (`check_deep`), and the rest read through
    the same stages by the net fine-tuned on all, whatever the verdict ("deep": what it
    would do) and as the verdict decides ("deep_checked": cold unless adopted)."""
    from models.recipe.adapt_deep import UNREADABLE, check_deep, store_crops

    crops, values, names = [], [], []
    for photo in run.photos[:shots]:
        for truth in photo.images:
            dice = confirmed(truth, run.cold[truth.path])
            # the finder's boxes on no confirmed die: not dice, taught as "unreadable" (7)
            false = off_dice([(d.cx, d.cy, d.side) for d in truth.dice], run.boxes[truth.path])
            where = [d.where for d in dice] + false
            if where:
                crops.append(store_crops(reader.classifier, run.pictures[truth.path], where))
                values += [d.value for d in dice] + [UNREADABLE] * len(false)
                names += [photo.name] * len(where)
    rng = np.random.default_rng(seed)
    taught = np.array(
        [
            (v - 1 + int(rng.integers(1, 6))) % 6 + 1
            if v != UNREADABLE and rng.random() < poison
            else v
            for v in values
        ]
    )
    source = reader.classifier.model.path.parent
    checked = check_deep(source, np.concatenate(crops), taught, names, settings)
    row: dict[str, object] = {
        "deep_verdict": checked.verdict.to_json(),
        "deep_s": round(checked.seconds, 2),
        "deep_dice": len(values),
    }
    if checked.classifier is None:
        return row
    # as the app reads with it: the dice unlike the setup's by the shipped net
    classifier = DeepClassifier(
        checked.classifier.model, checked.verdict, "", checked.like, reader.classifier
    )
    readings = {
        t.path: read_boxes(reader, classifier, run.pictures[t.path], run.boxes[t.path], run.crops)
        for photo in rest
        for t in photo.images
    }
    deep = outcome(run, rest, readings, rule).to_json()
    row["deep"] = deep
    row["deep_checked"] = (
        deep if checked.verdict.adopted else outcome(run, rest, run.cold, rule).to_json()
    )
    return row


def print_row(row: dict[str, object]) -> None:
    k = row["shots"]
    a, c, verdict = row["adapted"], row["cold"], row["verdict"]
    assert isinstance(a, dict) and isinstance(c, dict) and isinstance(verdict, dict)
    print(
        f"K={k}: {row['examples']} dice taught ({row['held_back']} held back); adaptation "
        f"{row['adapt_s']} s (features {row['features_s']} s); remaining {a['photos']} photos "
        f"/ {a['dice']} dice\n  value head: {verdict['words']}"
    )
    finder_verdict = row.get("finder_verdict")
    if isinstance(finder_verdict, dict):
        print(f"  finder head: {finder_verdict['words']}")
    deep = row.get("deep")
    readers = [("adapted", a), ("cold", c)] + ([("deep", deep)] if isinstance(deep, dict) else [])
    # deep: the net fine-tuned on all K photos reading the rest whatever its verdict
    for name, figures in readers:
        print(
            f"  {name:>7}: value accuracy of found {100 * figures['value_accuracy_of_found']:.2f} % "
            f"({figures['misread']} misread), recall {100 * figures['recall']:.2f} % "
            f"({figures['missed']} missed), {figures['false']} false dice, without a tap "
            f"{100 * figures['applied_without_tap']:.1f} % of photos, "
            f"{figures['applied_wrong']} of them wrong"
        )
    print(
        f"  adapted no worse than cold (value accuracy, recall, applied wrong): {row['no_worse']}"
    )
    for key in (
        "value_accuracy_of_found",
        "recall",
        "false",
        "applied_without_tap",
        "applied_wrong",
    ):
        print(f"adapted_{key}_k{k}: {a[key]}")
        print(f"cold_{key}_k{k}: {c[key]}")
    deep_verdict = row.get("deep_verdict")
    if isinstance(deep_verdict, dict):
        print(
            f"  deep: {row['deep_dice']} crops taught, fine-tuned and fold-checked in "
            f"{row['deep_s']} s: {deep_verdict['words']}"
        )
        print(f"deep_adopted_k{k}: {deep_verdict['adopted']}")
    if isinstance(deep, dict):
        for key in ("value_accuracy_of_found", "recall", "false", "applied_wrong"):
            print(f"deep_{key}_k{k}: {deep[key]}")
    print(f"adopted_k{k}: {verdict['adopted']}")
    if isinstance(finder_verdict, dict):
        print(f"finder_adopted_k{k}: {finder_verdict['adopted']}")
    print(f"adapt_seconds_k{k}: {row['adapt_s']}")


def print_table(results: Sequence[dict[str, object]]) -> None:
    print(
        "| K | dice taught (held back) | photos / dice read | value accuracy of found, "
        "adapted (cold) | recall, adapted (cold) | false dice, adapted (cold) | "
        "applied wrong, adapted (cold) | fold check: errors adapted / shipped, folds won-lost, p "
        "| verdict | finder head: errors adapted / shipped, won-lost, p, calibration photos' errors adapted / shipped | adaptation s "
        "| fine-tuned net (--deep): errors adapted / shipped, won-lost, p, no-forgetting sample's "
        "errors adapted / shipped | its value accuracy of found, unjudged | fine-tune s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in results:
        a, c, v = row["adapted"], row["cold"], row["verdict"]
        assert isinstance(a, dict) and isinstance(c, dict) and isinstance(v, dict)
        print(
            f"| {row['shots']} | {row['examples']} ({row['held_back']}) | {a['photos']} / "
            f"{a['dice']} | {100 * a['value_accuracy_of_found']:.2f} % "
            f"({100 * c['value_accuracy_of_found']:.2f}) | {100 * a['recall']:.1f} % "
            f"({100 * c['recall']:.1f}) | {a['false']} ({c['false']}) | {a['applied_wrong']} "
            f"({c['applied_wrong']}) | {v['adapted_errors']} / {v['shipped_errors']}, "
            f"{v['wins']}-{v['losses']}, {v['p_value']:.3f} | {v['reason']} | "
            f"{_finder_cell(row.get('finder_verdict'))} | {row['adapt_s']} | "
            f"{_finder_cell(row.get('deep_verdict'))} | {_deep_reading(row.get('deep'))} | "
            f"{row.get('deep_s', '-')} |"
        )


def _deep_reading(figures: object) -> str:
    if not isinstance(figures, dict):
        return "-"
    return f"{100 * figures['value_accuracy_of_found']:.2f} %"


def _finder_cell(verdict: object) -> str:
    """A fold check's figures (the finder head's or the fine-tuned net's), "-" when none."""
    if not isinstance(verdict, dict):
        return "-"
    return (
        f"{verdict['adapted_errors']} / {verdict['shipped_errors']}, {verdict['wins']}-"
        f"{verdict['losses']}, {verdict['p_value']:.3f}, {verdict['anchor_adapted_errors']} / "
        f"{verdict['anchor_shipped_errors']}: {verdict['reason']}"
    )


# ----------------------------------------------------------------------------------------
# Colour names (byler-d6-train)


def byler_colours(
    folder: Path,
) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], set[str]]]:
    truth: dict[tuple[str, int], str] = {}
    lenient: dict[tuple[str, int], set[str]] = defaultdict(set)
    with open(folder / "colours.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            truth[(row["image"], int(row["die_index"]))] = row["body_colour"]
    with open(folder / "colour-alternatives.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            lenient[(row["image"], int(row["die_index"]))].add(row["alt_body_colour"])
    return truth, lenient


def bench_colours(run: Run, folder: Path, shots: Sequence[int]) -> None:
    """Colour names of the dice of the remaining photos: shipped prototypes alone and
    with the setup's own (the hand-labelled colours of the first K photos' dice)."""
    truth, alternatives = byler_colours(folder)
    measured: list[tuple[int, tuple[str, int], tuple[float, float, float]]] = []
    for k, photo in enumerate(run.photos):
        for image in photo.images:
            for i, die in enumerate(image.dice):
                body = measure_die(
                    run.pictures[image.path], DieBox(die.cx, die.cy, die.side, die.side)
                )
                key = (image.path.name, i)
                if body is not None and key in truth:
                    measured.append((k, key, body.lab))
    for shots_k in shots:
        taught = [
            Example(1, np.zeros(1, np.float32), lab=lab, colour=truth[key])
            for k, key, lab in measured
            if k < shots_k
        ]
        own = own_colours(taught)
        rest = [(key, lab) for k, key, lab in measured if k >= shots_k]
        namers = {"cold": lambda lab: name_colour(lab).name, "adapted": _namer(own)}
        for name, namer in namers.items():
            strict = sum(namer(lab) == truth[key] for key, lab in rest)
            lenient = sum(
                namer(lab) == truth[key] or namer(lab) in alternatives[key] for key, lab in rest
            )
            n = max(1, len(rest))
            print(
                f"colour K={shots_k} {name}: {len(rest)} dice, strict {100 * strict / n:.2f} %, "
                f"lenient {100 * lenient / n:.2f} %"
            )
            print(f"{name}_colour_lenient_k{shots_k}: {round(lenient / n, 4)}")
            print(f"{name}_colour_strict_k{shots_k}: {round(strict / n, 4)}")


def _namer(own: OwnColours) -> Callable[[Sequence[float]], str]:
    return own.name


# ----------------------------------------------------------------------------------------
# The plot


PLOT_COLOURS = ((180, 90, 20), (40, 140, 40), (30, 30, 200), (150, 60, 150), (0, 140, 220),
                (120, 120, 120), (200, 160, 0), (60, 60, 140))  # fmt: skip
PANELS = (  # title, key, is a share (drawn in %)
    ("value accuracy of found dice", "value_accuracy_of_found", True),
    ("recall", "recall", True),
    ("false dice per 100 photos", "false_per_100_photos", False),
    ("rolls applied wrong per 100 photos", "applied_wrong_per_100_photos", False),
)
PANEL_W, PANEL_H, MARGIN = 420, 260, 70


@dataclass(frozen=True)
class Panel:
    """One panel's place on the canvas and its value range."""

    x0: int
    y0: int
    low: float
    high: float

    def point(self, k: int, max_k: int, value: float) -> tuple[int, int]:
        share = (value - self.low) / max(self.high - self.low, 1e-9)
        return self.x0 + int(PANEL_W * k / max_k), self.y0 + int(PANEL_H * (1 - share))


def value_range(values: Sequence[float], share: bool) -> tuple[float, float]:
    """Shares: from the lowest value (rounded down to 5 %) to 100 %; counts: 0 to the most."""
    if share:
        return min(0.9, np.floor(20 * min(values)) / 20), 1.0
    return 0.0, max(1.0, float(np.ceil(max(values))))


def plot(out: Path, runs: Sequence[Path]) -> int:
    """Four panels (PANELS), one colour per run (solid: adapted, dashed: cold), K on the x
    axis; on the adapted line a filled dot where the fold check adopted the head, a ring
    where it refused it (then adapted reads as cold)."""
    width, height = 2 * PANEL_W + 3 * MARGIN, 2 * PANEL_H + 3 * MARGIN + 50
    canvas = np.full((height, width, 3), 255, np.uint8)
    data = [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in runs]
    max_k = max(row["shots"] for _, rows in data for row in rows) or 1
    for n, (title, key, share) in enumerate(PANELS):
        values = [row[w][key] for _, rows in data for row in rows for w in ("adapted", "cold")]
        low, high = value_range(values, share)
        panel = Panel(MARGIN + (n % 2) * (PANEL_W + MARGIN), MARGIN + (n // 2) * (PANEL_H + MARGIN), low, high)  # fmt: skip
        _axes(canvas, panel, title, share, max_k)
        for r, (_, rows) in enumerate(data):
            colour = PLOT_COLOURS[r % len(PLOT_COLOURS)]
            for which, dashed in (("cold", True), ("adapted", False)):  # adapted on top
                points = [panel.point(row["shots"], max_k, row[which][key]) for row in rows]
                adopted = [bool(row.get("head")) or bool(row.get("finder_head")) for row in rows]
                _polyline(canvas, points, colour, dashed, adopted)
    x = MARGIN
    for r, (name, _) in enumerate(data):  # the legend in a row under the panels
        colour = PLOT_COLOURS[r % len(PLOT_COLOURS)]
        cv2.putText(canvas, name, (x, height - 40), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)  # fmt: skip
        x += 12 + cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)[0][0]
    cv2.putText(canvas, "solid: adapted, dashed: cold; filled dot: adopted by the fold check, "
                "ring: refused (reads as cold); x: confirmed photos K", (MARGIN, height - 16),
                cv2.FONT_HERSHEY_SIMPLEX, 0.45, (60, 60, 60), 1, cv2.LINE_AA)  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), canvas)
    print(f"wrote {out}")
    return 0


def _text(canvas: np.ndarray, text: str, where: tuple[int, int], scale: float = 0.4) -> None:
    cv2.putText(canvas, text, where, cv2.FONT_HERSHEY_SIMPLEX, scale, (90, 90, 90), 1, cv2.LINE_AA)


def _axes(canvas: np.ndarray, panel: Panel, title: str, share: bool, max_k: int) -> None:
    x0, y0, w, h = panel.x0, panel.y0, PANEL_W, PANEL_H
    cv2.rectangle(canvas, (x0, y0), (x0 + w, y0 + h), (170, 170, 170), 1)
    for k in range(5):
        value = panel.low + (panel.high - panel.low) * k / 4
        y = y0 + int(h * (1 - k / 4))
        cv2.line(canvas, (x0, y), (x0 + w, y), (235, 235, 235), 1)
        _text(canvas, f"{100 * value:.0f}%" if share else f"{value:.1f}", (x0 - 48, y + 4))
    for k in range(0, max_k + 1, max(1, max_k // 5)):
        _text(canvas, str(k), (x0 + int(w * k / max_k) - 6, y0 + h + 16))
    _text(canvas, title, (x0, y0 - 10), 0.5)


def _polyline(
    canvas: np.ndarray,
    points: list[tuple[int, int]],
    colour: tuple[int, int, int],
    dashed: bool,
    filled: list[bool],
) -> None:
    for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
        if not dashed:
            cv2.line(canvas, (xa, ya), (xb, yb), colour, 2, cv2.LINE_AA)
            continue
        steps = max(1, int(np.hypot(xb - xa, yb - ya) // 8))
        for s in range(0, steps, 2):
            a = (xa + (xb - xa) * s // steps, ya + (yb - ya) * s // steps)
            b = (xa + (xb - xa) * (s + 1) // steps, ya + (yb - ya) * (s + 1) // steps)
            cv2.line(canvas, a, b, colour, 1, cv2.LINE_AA)
    for point, adopted in zip(points, filled, strict=True):
        if dashed:  # the cold reader: small dots
            cv2.circle(canvas, point, 2, colour, -1, cv2.LINE_AA)
        elif adopted:
            cv2.circle(canvas, point, 5, colour, -1, cv2.LINE_AA)
        else:  # refused: a ring, the adapted reader reads as cold
            cv2.circle(canvas, point, 5, (255, 255, 255), -1, cv2.LINE_AA)
            cv2.circle(canvas, point, 5, colour, 1, cv2.LINE_AA)


# ----------------------------------------------------------------------------------------


def parse_shots(text: str) -> list[int]:
    try:
        shots = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--shots {text!r}: whole numbers like 0,5,10,25,50"
        ) from exc
    if not shots or shots[0] < 0:
        raise argparse.ArgumentTypeError(f"--shots {text!r}: K >= 0")
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--shots", type=parse_shots, default=parse_shots("0,5,10,25,50"))
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument(
        "--poison", type=float, default=0.0, help="share of wrong adaptation values"
    )
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--colours", action="store_true", help="colour names too (byler's colours.csv)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the per-K figures here")
    parser.add_argument(
        "--shuffle", type=int, default=None, metavar="SEED",
        help="take the photos in a seeded random order instead of by name",
    )  # fmt: skip
    parser.add_argument(
        "--finder", action="store_true", help="adapt the finder's heat head too (fold-checked)"
    )
    parser.add_argument(
        "--names", default=None, metavar="REGEX",
        help="only the photos whose file name matches (e.g. '^[0-9]+_jpg' for rune55's tower camera)",
    )  # fmt: skip
    parser.add_argument(
        "--part", choices=("calibration", "validation"), default=None,
        help="only that part of the folder (companion/vision/datasets.py's split)",
    )  # fmt: skip
    parser.add_argument(
        "--plot", type=Path, default=None, metavar="PNG", help="plot the --json files given"
    )
    parser.add_argument(
        "--deep", type=int, default=None, metavar="STEPS",
        help="also fine-tune the whole classifier for STEPS steps on the taught dice "
        "(models/recipe/adapt_deep.py; needs torch), judge it by its own fold check and "
        "read the rest with it",
    )  # fmt: skip
    parser.add_argument("--deep-anchor", type=float, default=1.0, help="its L2-SP weight")
    parser.add_argument("--deep-lr", type=float, default=3e-4, help="its peak learning rate")
    parser.add_argument("runs", type=Path, nargs="*", help="with --plot: the --json files")
    args = parser.parse_args(argv)
    if args.plot:
        return plot(args.plot, [args.folder, *args.runs] if args.folder else args.runs)
    if args.folder is None:
        parser.error("give a labelled folder")
    return run_folder(args)


def run_folder(args: argparse.Namespace) -> int:
    crops = is_crop_folder(args.folder)
    # --part: e.g. rune55-webcams' validation groups; --names: one camera of a folder
    images = bench_photos(args.folder, args.part, args.names)
    images = every_nth(images, args.every, args.offset)
    photos = group_photos(images, crops)
    if args.shuffle is not None:  # a table's rolls come in any order, not by file name
        order = np.random.default_rng(args.shuffle).permutation(len(photos))
        photos = [photos[int(k)] for k in order]
    if not photos:
        print(f"{args.folder}: no labelled photos", file=sys.stderr)
        return 1
    print(f"{args.folder}: {len(photos)} photos, {sum(len(i.dice) for i in images)} dice, "
          f"single-die crops: {crops}, poisoned share: {args.poison}", flush=True)  # fmt: skip
    reader = DiceReader.load(args.models)
    run = read_cold(reader, photos, crops)
    started = time.perf_counter()
    anchor = anchor_for(reader.classifier)
    print(f"no-forgetting sample: {len(anchor) if anchor else 0} dice, features "
          f"{time.perf_counter() - started:.2f} s (once per classifier)")  # fmt: skip
    finder = finder_bench(reader, Path(".cache/models/finder-features")) if args.finder else None
    deep = None
    if args.deep:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's models/
        from models.recipe.adapt_deep import DeepSettings

        deep = DeepSettings(steps=args.deep, anchor=args.deep_anchor, lr=args.deep_lr)
    results = bench_shots(run, reader, args.shots, args.poison, args.seed, anchor, finder, deep)
    print()
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if args.colours:
        bench_colours(run, args.folder, args.shots)
    k25 = next((r for r in results if r["shots"] == 25), None)
    if k25 is not None:
        adapted = k25["adapted"]
        assert isinstance(adapted, dict)
        print(f"adapted_value_accuracy_k25: {adapted['value_accuracy_of_found']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
