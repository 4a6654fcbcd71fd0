"""Render the bundled demo clip (companion/live/data/demo_qwixx/, JPEG frames at 10 fps): a
Qwixx set thrown, coming to rest, picked up by a hand and thrown again, drawn by our own
renderer with a fixed seed (see companion/live/demo.py).

    .venv/bin/python scripts/make_demo_clip.py [--out DIR] [--throws N] [--quality Q]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

from companion.live.demo import DEMO_CLIP, DEMO_FPS, DEMO_SEED, render_throws

MAX_BYTES = 2_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEMO_CLIP, help="folder for the frames")
    parser.add_argument("--throws", type=int, default=3)
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    parser.add_argument("--quality", type=int, default=50, help="JPEG quality of each frame")
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("frame_*.jpg"):
        old.unlink()
    count = 0
    size = 0
    phases: dict[str, int] = {}
    for frame in render_throws(seed=args.seed, throws=args.throws):
        ok, data = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, args.quality])
        if not ok:
            print("JPEG encoding failed", file=sys.stderr)
            return 1
        (args.out / f"frame_{count:04d}.jpg").write_bytes(data.tobytes())
        count += 1
        size += len(data)
        phases[frame.phase] = phases.get(frame.phase, 0) + 1
    print(
        f"{args.out}: {count} frames for {DEMO_FPS:g} fps ({count / DEMO_FPS:.1f} s), "
        f"{size / 1e6:.2f} MB; frames per phase: {phases}"
    )
    if size > MAX_BYTES:
        print(f"larger than {MAX_BYTES / 1e6:.0f} MB: lower --quality", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
