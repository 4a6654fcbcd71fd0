"""A new table taught through the app's own learner (companion.vision.adapt_learn.
SetupLearner with the shipped finder's features, as companion.table.learning gives every
setup): the first K photos of a folder recorded as confirmed rolls (their labelled dice,
values as labelled), one refresh, and what it decided, with its wall time.

    .venv/bin/python bench/adapt_app.py ../shared/data/skovy-catan-webcam --photos 25
    .venv/bin/python bench/adapt_app.py rune55-webcams:validation --photos 25

FOLDER is a labelled folder (bench/vision_eval.py's kind) or NAME:PART for a part of the
fixed split (companion/vision/datasets.py), its photos sorted by name. Prints the value
head's and the finder head's verdicts (companion.vision.adapt_gate.Verdict.words), the
refresh's seconds (value head with its fold check, then the finder check over the latest
25 photos: its cells, 2 x 25 pipeline reads, the 16 no-forgetting photos twice), and
whether a new learner on the same store (a restart) reads the same verdicts back. The
store lives in a temporary folder, removed at the end. bench/adapt.py measures the same
checks per K, with the reading of the remaining photos; this one measures the app's path.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from companion.vision.adapt_finder import AdaptedFinder
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import SetupStore
from companion.vision.classifier import PipClassifier
from companion.vision.datasets import LabelledImage, load_split, read_labelled_folder
from companion.vision.finder import DiceFinder
from companion.vision.types import DieBox

SETUP = "bench-table"


def photos_of(spec: str, count: int) -> list[LabelledImage]:
    if ":" in spec and not Path(spec).exists():
        name, part = spec.split(":", 1)
        images = getattr(load_split(), part)[name]
    else:
        images = read_labelled_folder(Path(spec))
    return sorted(images, key=lambda i: i.path.name)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--photos", type=int, default=25)
    args = parser.parse_args(argv)
    images = photos_of(args.folder, args.photos)
    root = Path(tempfile.mkdtemp(prefix="adapt-app-"))
    try:
        classifier = PipClassifier.load()
        finder = AdaptedFinder.load(DiceFinder.load())
        learner = SetupLearner(SetupStore(root), SETUP, classifier, finder=finder)
        for k, image in enumerate(images):
            dice = [
                ConfirmedDie(DieBox(d.cx, d.cy, d.side, d.side, 0.0, 1.0), d.value)
                for d in image.dice
            ]
            learner.record(image.load(), dice, table_id="bench", photo=f"roll {k}", throw=k)
        started = time.perf_counter()
        adaptation = learner.refresh()
        learner.refresh_finder()  # as the server's refresh loop does after it
        seconds = time.perf_counter() - started
        print(f"{args.folder}: {len(images)} photos, {sum(len(i.dice) for i in images)} dice")
        print(f"value head: {adaptation.head.gate.words()}")
        verdict = learner.finder_verdict
        print(f"finder head: {verdict.words() if verdict else 'not judged'}")
        print(f"refresh: {seconds:.1f} s")
        again = SetupLearner(SetupStore(root), SETUP, classifier, finder=finder)
        same = again.finder_verdict == verdict and again.saved() is not None
        print(f"a restart reads the same verdicts back: {'yes' if same else 'NO'}")
        return 0 if same else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
