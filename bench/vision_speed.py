"""Speed of the whole dice-reading pipeline (finder -> classifier -> colour -> Qwixx set),
one thread, on rendered frames with six dice: median milliseconds per frame for 640x640,
1280x720 and 1920x1080. The last line is `ms_per_frame_1280x720: X`. Each size also prints
the median CPU time of this thread (`cpu_ms_per_frame_...`): onnxruntime computes in it with
one intra-op thread, so on a shared, loaded machine that is the fair figure when the wall
time waits for the cores.

    .venv/bin/python bench/vision_speed.py [--frames 30] [--models DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from companion.synth import render_scene
from companion.vision.pipeline import DiceReader

SIZES = ((640, 640), (1920, 1080), (1280, 720))  # 1280x720 last: its line ends the output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--distinct", type=int, default=5, help="different scenes per size")
    parser.add_argument(
        "--models", type=Path, default=None, help="a folder with both models (default models/)"
    )
    args = parser.parse_args(argv)
    reader = DiceReader.load(args.models, dice_set="qwixx", threads=1)
    for width, height in SIZES:
        rng = np.random.default_rng(width * height)
        size = 0.06 * min(width, height) + 20
        frames = [
            render_scene(rng, width, height, dice_set="qwixx", size=size)[0]
            for _ in range(args.distinct)
        ]
        reader.read(frames[0])  # warm-up: first-run allocations
        times, cpu = [], []
        found = 0
        for k in range(args.frames):
            started, started_cpu = time.perf_counter(), time.thread_time()
            reading = reader.read(frames[k % len(frames)])
            times.append((time.perf_counter() - started) * 1000.0)
            cpu.append((time.thread_time() - started_cpu) * 1000.0)
            found += len(reading.dice)
        print(
            f"  {width}x{height}: {args.frames} frames, mean dice found "
            f"{found / args.frames:.1f} of 6",
            flush=True,
        )
        print(f"cpu_ms_per_frame_{width}x{height}: {statistics.median(cpu):.1f}", flush=True)
        print(f"ms_per_frame_{width}x{height}: {statistics.median(times):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
