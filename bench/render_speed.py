"""How fast the renderer draws training scenes: CPU milliseconds per 512x384 scene, one
thread, for the training recipe's options (models/recipe/data.py: one die in ten
translucent), for each webcam condition of companion.synth alone and for the fancy style
(every scene fancy, and the share train.py --fancy 0.3 renders), also in scenes/s.

    .venv/bin/python bench/render_speed.py [--scenes 100] [--module companion.synth]
        [--only NAME ...]

CPU time of this process (not wall time: the machine is shared), after one warm-up scene.
`--module` times another module with the same `render_scene(rng, width, height,
**options)`, e.g. the renderer before companion.synth (companion/vision/render.py of
commit f55548b, put on the path); it is timed on the recipe's options only.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import cv2
import numpy as np

CONDITIONS: dict[str, dict[str, object]] = {
    "recipe (translucent 0.1)": {"translucent": 0.1},
    "greyscale": {"greyscale": 1.0},
    "infrared": {"infrared": 1.0},
    "fisheye": {"fisheye": 1.0},
    "vignetting": {"vignetting": 1.0},
    "container": {"container": 1.0},
    "strong glare": {"strong_glare": 1.0},
    "pile": {"pile": 1.0},
    "dice 15-250 px": {"sizes": (15.0, 250.0)},
    # the fancy style (companion/synth/fancy.py, train.py --fancy): 20-60 dice a scene
    "fancy (every scene)": {"translucent": 0.1, "fancy": 1.0},
    "recipe + fancy 0.3": {"translucent": 0.1, "fancy": 0.3},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=int, default=100)
    parser.add_argument("--module", default="companion.synth")
    parser.add_argument(
        "--only", nargs="*", default=None, metavar="NAME",
        help="time only the conditions whose name starts with one of these (e.g. fancy)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    render_scene = importlib.import_module(args.module).render_scene
    chosen = CONDITIONS if args.module == "companion.synth" else dict(list(CONDITIONS.items())[:1])
    if args.only:
        chosen = {k: v for k, v in chosen.items() if any(k.startswith(o) for o in args.only)}
    for name, options in chosen.items():
        rng = np.random.default_rng(1)
        render_scene(rng, 512, 384, **options)
        started = time.process_time()
        for _ in range(args.scenes):
            render_scene(rng, 512, 384, **options)
        ms = (time.process_time() - started) / args.scenes * 1000
        rate = 1000 / ms
        print(f"{name:<26} {ms:6.1f} ms CPU per 512x384 scene ({rate:5.1f} scenes/s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
