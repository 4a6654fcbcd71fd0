"""Judge finder x classifier pairs by the ship rule of models/README.md: for each pair, the
peak rule and the confidence map chosen on the calibration parts (`train.py --only
evaluate`), then the pooled missed + false + misread dice on the validation parts as
labelled, skovy-catan-webcam (measure only: all 98 dice right, no false die) and
chase-casino-crops (measure only, read as single dice by the classifier alone).

    .venv/bin/python bench/model_pairs.py \\
        --finder shipped=models --finder s12=models/training/stage12-finder/finder/candidate \\
        --classifier shipped=models \\
        --classifier s12=models/training/stage12-classifier/classifier/candidate --jobs 2

A NAME=PATH is a folder holding dice_finder.onnx/.json (or pip_classifier.onnx/.json).
Each pair is put together in .cache/pairs/FINDER+CLASSIFIER (git-ignored) and evaluated in
a process of its own (``--jobs`` at a time). ``--as-shipped`` also measures the shipped
pair with its shipped peak rule and map (what users have now): the baseline of the rule.
``--under-rule DIR`` also measures every classifier beside DIR's finder under DIR's peak
rule, as it stands, chosen again for no pair (pairs named ``rule+CLASSIFIER``): between
classifiers this close the rule chosen per pair on the calibration photos moves the pooled
count by as much as the classifiers differ (models/README.md, "Does a peak rule chosen
less tightly carry better?"), so a gain that shows under the pair's own rule and not under
one fixed rule is the rule's draw, not better reading.
Prints one table; the per-folder figures are in each pair's manifests.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.datasets import CHASE, FOLDERS, SKOVY, default_data_root  # noqa: E402

PAIRS = REPO / ".cache" / "pairs"
FILES = {"finder": "dice_finder", "classifier": "pip_classifier"}


@dataclass
class PairFigures:
    name: str
    per_folder: dict[str, int]
    skovy: str
    chase: str

    @property
    def pooled(self) -> int:
        return sum(self.per_folder.values())


def named_folder(text: str) -> tuple[str, Path]:
    name, _, path = text.partition("=")
    if not path:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=PATH")
    return name, Path(path)


def assemble(finder: tuple[str, Path], classifier: tuple[str, Path], shipped: bool) -> Path:
    """A models folder holding the pair (the runtime reads both from one folder)."""
    folder = PAIRS / (f"{finder[0]}+{classifier[0]}" + ("-as-shipped" if shipped else ""))
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for (_, source), stem in ((finder, FILES["finder"]), (classifier, FILES["classifier"])):
        for suffix in (".onnx", ".json"):
            shutil.copy(source / f"{stem}{suffix}", folder / f"{stem}{suffix}")
    return folder


def run(command: list[str], log: Path) -> str:
    with log.open("a", encoding="utf-8") as handle:
        done = subprocess.run(command, cwd=REPO, text=True, capture_output=True, check=False)
        handle.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed; see {log}")
    return done.stdout + done.stderr


def judge(folder: Path, evaluate: bool) -> PairFigures:
    """The pair's figures: evaluate (peak rule, map, validation figures) unless as shipped."""
    python, log = sys.executable, folder / "evaluate.log"
    if evaluate:
        run([python, "models/train.py", "--only", "evaluate", "--out", str(folder)], log)
    else:
        measured = run(
            [python, "bench/vision_eval.py", "--suite", "--models", str(folder),
             "--diagram", str(folder / "reliability.png")],
            log,
        )  # fmt: skip
        return from_suite(folder.name, measured)
    manifest = json.loads((folder / "dice_finder.json").read_text(encoding="utf-8"))
    figures = {k: v for k, v in manifest["validation"].items() if isinstance(v, dict)}
    per_folder = {name: int(f["missed_false_misread"]) for name, f in figures.items()}
    data = default_data_root()
    vision_eval = [python, "bench/vision_eval.py", "--models", str(folder), "--corrections", ""]
    skovy = run([*vision_eval, str(data / SKOVY)], log)
    chase = run([*vision_eval, str(data / CHASE)], log)
    return PairFigures(folder.name, per_folder, skovy_line(skovy), chase_line(chase))


def skovy_line(text: str) -> str:
    found = re.search(r"missed (\d+) \+ false (\d+) \+ misread (\d+)", text)
    return "?" if found is None else "missed {} false {} misread {}".format(*found.groups())


def chase_line(text: str) -> str:
    found = re.search(r"classifier_accuracy_on_labelled_boxes: ([\d.]+) \((\d+) of (\d+)", text)
    return "?" if found is None else f"{found.group(2)} of {found.group(3)}"


SUITE_ROW = re.compile(
    r"^\| (\S+) \((validation|measure only)\) \|.*?\| (\d+) \+ (\d+) \+ (\d+) = (\d+) \|"
    r" [\d.]+ % \((\d+) of (\d+)\)",
    re.MULTILINE,
)


def from_suite(name: str, text: str) -> PairFigures:
    """A pair's figures as measured (no rule chosen), read from the table that ends
    bench/vision_eval.py --suite's output: one row per folder."""
    per_folder: dict[str, int] = {}
    skovy = chase = "?"
    for row in SUITE_ROW.finditer(text):
        folder, part, missed, false, misread, count, right, dice = row.groups()
        if folder == SKOVY:
            skovy = f"missed {missed} false {false} misread {misread}"
        elif folder == CHASE:
            chase = f"{right} of {dice}"
        elif part == "validation" and folder in FOLDERS:  # the pooled count's folders
            per_folder[folder] = int(count)
    if not per_folder:
        raise SystemExit(f"{name}: no folder's figures in bench/vision_eval.py --suite's output")
    return PairFigures(name, per_folder, skovy, chase)


@dataclass(frozen=True)
class PlannedPair:
    finder: tuple[str, Path]
    classifier: tuple[str, Path]
    judged: bool  # its peak rule and map chosen for it (train.py --only evaluate)

    @property
    def name(self) -> str:
        return f"{self.finder[0]}+{self.classifier[0]}"


def planned_pairs(
    finders: list[tuple[str, Path]],
    classifiers: list[tuple[str, Path]],
    under_rule: Path | None,
) -> list[PlannedPair]:
    """Every finder with every classifier, judged; with ``--under-rule DIR`` also every
    classifier beside DIR's finder as it stands (``rule+CLASSIFIER``). ``--skip`` names
    any of them."""
    plan = [PlannedPair(f, c, True) for f in finders for c in classifiers]
    if under_rule is not None:
        plan += [PlannedPair(("rule", under_rule), c, False) for c in classifiers]
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--finder", type=named_folder, action="append", required=True)
    parser.add_argument("--classifier", type=named_folder, action="append", required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--as-shipped", action="store_true")
    parser.add_argument(
        "--under-rule",
        type=Path,
        metavar="DIR",
        help="also each classifier with DIR's finder and DIR's peak rule as it stands",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="FINDER+CLASSIFIER",
        help="a pair not to judge again (its figures are known), e.g. shipped+shipped",
    )
    args = parser.parse_args(argv)
    plan = planned_pairs(args.finder, args.classifier, args.under_rule)
    unknown = set(args.skip) - {pair.name for pair in plan}
    if unknown:
        parser.error(f"--skip {', '.join(sorted(unknown))}: no such pair")
    tasks = [
        (assemble(pair.finder, pair.classifier, False), pair.judged)
        for pair in plan
        if pair.name not in args.skip
    ]
    if args.as_shipped:
        shipped = ("shipped", REPO / "models")
        tasks.append((assemble(shipped, shipped, True), False))
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda task: judge(*task), tasks))
    folders = sorted({name for r in results for name in r.per_folder})
    print("| pair | " + " | ".join(folders) + " | pooled | skovy | chase (single dice) |")
    print("|---" * (len(folders) + 4) + "|")
    for r in sorted(results, key=lambda r: r.pooled):
        cells = " | ".join(str(r.per_folder.get(name, "")) for name in folders)
        print(f"| {r.name} | {cells} | **{r.pooled}** | {r.skovy} | {r.chase} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
