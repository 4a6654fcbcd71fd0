"""What adapting to a setup costs: fitting the heads on 500 stored dice, and reading a
frame with the adapted head against the cold reader.

    .venv/bin/python bench/adapt_speed.py [--dice 500] [--frames 60]

1. 500 real dice (the labelled dice of byler-d6-train's calibration part, then of
   epanemu-dice3's, read by the shipped classifier) are recorded into a fresh setup store
   in a temporary folder (companion.vision.adapt_learn.SetupLearner.record, one call per
   photo); then `refresh()` (load the records from SQLite, the held-back check, the
   check on left-out photos, the fit) and `adapt()` alone (on the examples in memory) are
   timed, median of --repeats runs; and the dearest case of `adapt()`, where the check
   lets the setup's head read (three fits for the check, then the fit on all the dice),
   whether or not it does for these dice. Issue 15's target: under 1 s for 500 dice on
   this machine.
2. The clip's own dice are taught too: the frames of the bundled demo clip (640x480,
   six Qwixx dice) after the first --frames, as the cold reader reads them (confirmed as
   shown), so that the head knows the table it reads, as a setup's head does. The first
   --frames frames are then read by the cold reader and by the same reader with the
   setup's head fitted on all those dice and reading (`AdaptedClassifier`; the head is
   made to read even where the check would keep the shipped head alone, which costs
   nothing over the cold reader: a head unsure of a die asks for the second look, eight
   times the classifier's work for that die), the two alternating
   frame by frame so that both see the same load; median ms per frame of each and the
   median of the per-frame differences; and the head alone (`ValueHead.adjust` on six
   dice), median of 2000 calls. Target: at most 1 ms more per frame than the cold reader.

One thread for onnxruntime (as the camera runs it). The last line is
``adapted_extra_ms_per_frame: X``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt import (
    AdaptedClassifier,
    ValueHead,
    adapt,
    check_folds,
    fit_value_head,
    held_back,
)
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import SetupStore
from companion.vision.datasets import BYLER, EPANEMU, load_split
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieBox

DEMO = Path(__file__).resolve().parents[1] / "companion" / "live" / "data" / "demo_qwixx"


def record_dice(learner: SetupLearner, wanted: int) -> tuple[int, float]:
    """Record `wanted` labelled dice; returns how many and the median ms per photo."""
    split = load_split()
    photos = [*split.calibration[BYLER], *split.calibration[EPANEMU]]
    count, times = 0, []
    for k, photo in enumerate(photos):
        if count >= wanted:
            break
        dice = [
            ConfirmedDie(DieBox(d.cx, d.cy, d.side, d.side), d.value)
            for d in photo.dice[: wanted - count]
        ]
        image = photo.load()
        started = time.perf_counter()
        learner.record(image, dice, photo=photo.path.name, throw=k)
        times.append(1000 * (time.perf_counter() - started))
        count += len(dice)
    return count, statistics.median(times)


def time_fit(learner: SetupLearner, repeats: int) -> tuple[float, float, float]:
    """Median ms of `refresh()`, of `adapt()` alone, and of its dearest case (the check
    and the fit on all the dice, module docstring)."""
    refresh, alone, dearest = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        adaptation = learner.refresh()
        refresh.append(1000 * (time.perf_counter() - started))
        examples = [s.example for s in learner.stored]
        started = time.perf_counter()
        adapt(examples, second_look_below=learner.classifier.second_look_below)
        alone.append(1000 * (time.perf_counter() - started))
        started = time.perf_counter()
        skip = set(held_back(examples))
        used = [e for k, e in enumerate(examples) if k not in skip]
        check_folds(used, learner.anchor(), second_look_below=learner.classifier.second_look_below)
        dearest.append(1000 * (time.perf_counter() - started))
    print(f"  held back {len(adaptation.held)}; {adaptation.head.gate.words()}")
    return statistics.median(refresh), statistics.median(alone), statistics.median(dearest)


def teach_clip(learner: SetupLearner, cold: DiceReader, skip: int) -> int:
    """Record the clip's frames after the first `skip` as read cold; how many dice."""
    count = 0
    for path in sorted(DEMO.glob("*.jpg"))[skip:]:
        picture = cv2.imread(str(path))
        assert picture is not None, path
        read = [(d.where, d.value) for d in cold.read(picture).dice if d.value is not None]
        learner.record(
            picture, [ConfirmedDie(where, value) for where, value in read], photo=path.name
        )
        count += len(read)
    return count


def reading_head(learner: SetupLearner) -> ValueHead:
    """The setup's head fitted on its used dice and reading (no check)."""
    adaptation = learner.refresh()
    held = set(adaptation.held)
    return fit_value_head([s.example for k, s in enumerate(learner.stored) if k not in held])


def time_frames(cold: DiceReader, adapted: DiceReader, frames: int) -> tuple[float, float, float]:
    """Median ms per frame of each reader and the median of the per-frame differences
    (adapted minus cold on the same frame, read one right after the other)."""
    pictures = [cv2.imread(str(p)) for p in sorted(DEMO.glob("*.jpg"))[:frames]]
    cold.read(pictures[0])
    adapted.read(pictures[0])  # warm-up
    cold_ms: list[float] = []
    adapted_ms: list[float] = []
    for k, picture in enumerate(pictures):
        # alternate which goes first, so that neither always finds the caches warm
        order = ((cold, cold_ms), (adapted, adapted_ms))
        for reader, times in order if k % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            reader.read(picture)
            times.append(1000 * (time.perf_counter() - started))
    differences = [a - c for a, c in zip(adapted_ms, cold_ms, strict=True)]
    return statistics.median(cold_ms), statistics.median(adapted_ms), statistics.median(differences)


def time_head(learner: SetupLearner, head: ValueHead, calls: int) -> float:
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(7), 6).astype(np.float32)
    embeddings = np.stack([s.example.embedding for s in learner.stored[:6]])
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        head.adjust(probabilities, embeddings)
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dice", type=int, default=500)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    cold = DiceReader.load(dice_set="qwixx", threads=1)
    with tempfile.TemporaryDirectory() as folder:
        learner = SetupLearner(SetupStore(Path(folder)), "bench", cold.classifier, cold.dice_set)
        count, record_ms = record_dice(learner, args.dice)
        print(f"recorded {count} dice, median {record_ms:.1f} ms per photo", flush=True)
        refresh_ms, adapt_ms, dearest_ms = time_fit(learner, args.repeats)
        print(f"refresh_ms_{count}_dice: {refresh_ms:.1f}")
        print(f"adapt_ms_{count}_dice: {adapt_ms:.1f}")
        print(f"adapt_ms_{count}_dice_head_reading: {dearest_ms:.1f}", flush=True)
        taught = teach_clip(learner, cold, args.frames)
        head = reading_head(learner)
        print(f"  the clip's own dice taught: {taught}; the head reads on {head.examples}")
        assert head.active
        classifier = AdaptedClassifier(cold.classifier, head)
        adapted = DiceReader(cold.finder, classifier, learner.reader(cold).dice_set)
        cold_ms, adapted_ms, extra_ms = time_frames(cold, adapted, args.frames)
        head_ms = time_head(learner, head, 2000)
        learner.store.close()
    print(f"cold_ms_per_frame: {cold_ms:.2f}")
    print(f"adapted_ms_per_frame: {adapted_ms:.2f}")
    print(f"head_ms_per_frame: {head_ms:.3f}")
    print(f"adapted_extra_ms_per_frame: {extra_ms:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
