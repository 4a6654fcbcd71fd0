"""Time the shipped models on ONE CPU thread, as the pipeline runs them: the finder on a
rendered 1280x720 frame with 6 dice, the classifier on those dice as one batch.
Prints wall and CPU milliseconds.

    .venv/bin/python -m models.recipe.speed [--runs 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import cv2
import numpy as np

from companion.synth import render_scene
from companion.vision.classifier import PipClassifier
from companion.vision.finder import DiceFinder
from companion.vision.types import DieBox


def _timed(function, runs: int) -> str:  # type: ignore[no-untyped-def]
    """Wall time and this thread's CPU time: on a shared, loaded machine the CPU time
    is the fair figure (onnxruntime with one intra-op thread computes in this thread)."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.thread_time()
        function()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return (
        f"wall median {statistics.median(wall):6.2f} ms  "
        f"cpu median {statistics.median(cpu):6.2f} ms  cpu min {min(cpu):6.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    finder = DiceFinder.load(intra_op_num_threads=1)
    classifier = PipClassifier.load(intra_op_num_threads=1)
    image, dice = render_scene(np.random.default_rng(3), 1280, 720, n_dice=6, size=70)
    cv2.setNumThreads(1)  # resizing and cropping on the same one thread
    found = finder.find(image)
    print(f"frame 1280x720, {len(dice)} dice rendered, {len(found)} found")
    six = [DieBox(d.cx, d.cy, d.side, d.side, d.angle) for d in dice]
    print(f"finder.find         {_timed(lambda: finder.find(image), args.runs)}")
    print(f"classifier.read x{len(six)}  {_timed(lambda: classifier.read(image, six), args.runs)}")
    both = _timed(lambda: classifier.read(image, finder.find(image)), args.runs)
    print(f"find + read         {both}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
