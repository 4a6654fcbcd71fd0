"""How many rolls would be applied without a tap, and how many of those wrongly.

    .venv/bin/python bench/auto_apply.py --suite [--models M] [--curve PNG] [--signals]
    .venv/bin/python bench/auto_apply.py DIR [--every K --offset J] [--models M]

Each photo of a YOLO-labelled folder is one roll whose dice count the game knows (the
labelled count). Its dice are read with every look the pipeline takes (the eight symmetric
views, the wide crop, the finder's peak, the embedding's OOD score, the die's size),
scored and calibrated by the classifier manifest's confidence, and
companion.vision.confidence.decide_roll decides at the shipped threshold
(``confidence.auto_apply_threshold``, or --threshold): apply at once, or ask. A roll
applied is wrong unless every labelled die was found and read right with no false die.
For each folder: the share applied without a tap, the wrong ones among them with their
95 % Clopper-Pearson upper bound (target: at most 1 in 500, 0 on a folder under 500
rolls, the bound under 1 in 250).

--suite: the calibration sources **leave one source out** (each source's dice scored by a
look model and map fitted without it, as models/recipe/confidence_fit.py chooses the
threshold), pooled; then the validation parts and the measure-only folders with the
shipped map (never fitted on). It draws the risk-coverage curve of the pooled
leave-one-source-out rolls and of the held-out folders (default
docs/benchmarks/auto-apply-risk-coverage.png) and the leave-one-source-out reliability
diagram (docs/benchmarks/confidence-loso-reliability.png). --signals adds, per look,
the pooled leave-one-source-out figures of a map fitted on the raw probability with only
that look added: which wrong rolls each look catches.

Each folder is read once per model pair and kept in .cache/sure/
(models/recipe/sure_features.py). A folder given as DIR is read the same way.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.vision.classifier import PipClassifier
from companion.vision.confidence import (
    LOOK_FEATURES,
    UPPER_BOUND_PER,
    CalibrationRoll,
    ConfidenceMap,
    RiskPoint,
    choose_bounded_threshold,
    expected_calibration_error,
    fit_confidence_map,
    reliability_bins,
    risk_coverage,
    upper_bound,
)
from companion.vision.datasets import (
    CROP_DIE_SHARE,
    FOLDERS,
    SKOVY,
    every_nth,
    is_crop_folder,
    load_measure_only,
    load_split,
    read_labelled_folder,
)
from companion.vision.finder import DiceFinder

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # models.recipe: the fit and the per-folder features

from models.recipe.confidence_fit import (  # noqa: E402
    Loso,
    die_confidences,
    die_features,
    fit_die_confidence,
    leave_one_source_out,
    read_sources,
    rolls_of,
    training_ood,
)
from models.recipe.sure_features import Features, cached_features  # noqa: E402

CURVE = REPO / "docs" / "benchmarks" / "auto-apply-risk-coverage.png"
RELIABILITY = REPO / "docs" / "benchmarks" / "confidence-loso-reliability.png"


@dataclass(frozen=True)
class Line:
    """One folder's rolls at a threshold."""

    name: str
    rolls: int
    applied: int
    wrong: int
    right_rolls: int

    @classmethod
    def of(cls, name: str, rolls: Sequence[CalibrationRoll], threshold: float | None) -> Line:
        applied = [r for r in rolls if threshold is not None and r.confidence >= threshold]
        return cls(
            name,
            len(rolls),
            len(applied),
            sum(not r.right for r in applied),
            sum(r.right for r in rolls),
        )

    def text(self) -> str:
        share = self.applied / max(1, self.rolls)
        bound = upper_bound(self.wrong, self.applied)
        bound_text = f"1 in {1 / bound:.0f}" if self.applied else "-"
        return (
            f"| {self.name} | {self.rolls} | {100 * share:.1f} % ({self.applied}) | "
            f"{self.wrong} | {bound_text} | {self.right_rolls} |"
        )


def last_clean_point(rolls: Sequence[CalibrationRoll]) -> RiskPoint | None:
    """The lowest threshold on the curve with no wrong roll applied (None: the surest roll
    is wrong)."""
    clean = [p for p in risk_coverage(rolls) if p.wrong == 0]
    return clean[-1] if clean else None


HEADER = (
    "| folder | rolls | applied without a tap | applied wrong | 95 % upper bound on the "
    "wrong share | rolls read entirely right |\n|---|---|---|---|---|---|"
)


def rolls_needed(upper_per: int) -> int:
    """How many rolls applied with none wrong bring the 95 % bound under 1 in upper_per."""
    n = 1
    while upper_bound(0, n) >= 1 / upper_per:
        n += 1
    return n


def held_out_rolls(
    finder: DiceFinder, classifier: PipClassifier, data: Path | None
) -> list[tuple[str, Features]]:
    """The validation parts of the scene folders and skovy (measure only), read."""
    split = load_split(data)
    folders = [(f"{n} (validation)", f"{n}-validation", split.validation[n]) for n in FOLDERS]
    folders.append((f"{SKOVY} (measure only)", f"{SKOVY}-measure", load_measure_only(data)[SKOVY]))
    return [
        (label, cached_features(key, list(images), finder, classifier))
        for label, key, images in folders
    ]


def signal_variants(
    sources: dict[str, Features], scenes: Sequence[str], loso_full: Loso, ood: object, sure: float
) -> list[str]:
    """Per look: the pooled leave-one-source-out rolls of a map over the raw probability
    plus that look alone, at its own bounded threshold and at the coverage of the full
    model's."""
    lines = [
        "| looks in the score | bounded threshold | most rolls applied with none wrong (95 % "
        "bound) | wrong rolls among the surest 50 % | among the surest 1000 |",
        "|---|---|---|---|---|",
    ]
    variants: list[tuple[str, tuple[str, ...]]] = [("raw only (isotonic on it)", ())]
    variants += [(f"raw + {name}", ("raw", name)) for name in LOOK_FEATURES if name != "raw"]
    variants.append(("all", LOOK_FEATURES))
    for label, keep in variants:
        loso = loso_full if keep == LOOK_FEATURES else masked_loso(sources, keep, ood, sure)
        pooled = loso.pooled_rolls(scenes)
        threshold = choose_bounded_threshold(pooled)
        ordered = sorted(pooled, key=lambda r: -r.confidence)
        clean = last_clean_point(pooled)
        clean_text = "0" if clean is None else (f"{clean.applied} (1 in {1 / clean.upper:.0f})")
        lines.append(
            f"| {label} | {threshold if threshold is None else round(threshold, 5)} | "
            f"{clean_text} | {sum(not r.right for r in ordered[: len(pooled) // 2])} | "
            f"{sum(not r.right for r in ordered[:1000])} |"
        )
    return lines


def masked_loso(
    sources: dict[str, Features], keep: Sequence[str], ood: object, sure: float
) -> Loso:
    """Leave one source out with only the looks in ``keep`` (none: the raw probability
    through the isotonic map, as before the looks)."""
    result = Loso({}, {})
    columns = [LOOK_FEATURES.index(k) for k in keep]
    for name, held in sources.items():
        others = [f for n, f in sources.items() if n != name]
        if not keep:
            m = [f.value > 0 for f in others]
            fitted = fit_confidence_map(
                list(np.concatenate([f.raw[k] for f, k in zip(others, m, strict=True)])),
                list(np.concatenate([f.right[k] for f, k in zip(others, m, strict=True)])),
            )
            confidence = np.where(held.value > 0, fitted.apply(held.raw), 0.0)
        else:
            confidence = masked_fit(others, held, columns, ood, sure)
        result.confidences[name] = confidence
        result.rolls[name] = rolls_of(held, confidence)
    return result


def masked_fit(
    others: Sequence[Features], held: Features, columns: Sequence[int], ood: object, sure: float
) -> np.ndarray:
    from companion.vision.confidence import fit_look_model

    def cut(x: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        out[:, columns] = x[:, columns]
        return out

    ood_model = fit_die_confidence(others, ood, sure).looks.ood  # type: ignore[arg-type,union-attr]
    readable = [f.value > 0 for f in others]
    features = np.concatenate(
        [cut(die_features(f, ood_model, sure))[m] for f, m in zip(others, readable, strict=True)]
    )
    right = np.concatenate([f.right[m] for f, m in zip(others, readable, strict=True)])
    looks = fit_look_model(features, right, sure, ood_model)
    fitted = fit_confidence_map(list(looks.score(features)), list(right))
    held_features = die_features(held, ood_model, sure)
    scores = fitted.apply(looks.score(cut(held_features)))
    if ood_model is not None and LOOK_FEATURES.index("ood") in columns:  # and its gate
        scores = ood_model.gate(scores, held_features[:, LOOK_FEATURES.index("ood")])
    return np.where(held.value > 0, scores, 0.0)


def run_suite(args: argparse.Namespace) -> int:
    finder = DiceFinder.load(args.models)
    classifier = PipClassifier.load(args.models)
    shipped = classifier.confidence_map
    threshold = (
        args.threshold
        if args.threshold is not None
        else (shipped.threshold if shipped is not None else None)
    )
    print(f"threshold: {threshold} ({'given' if args.threshold is not None else 'shipped'})")
    sure = finder.peak_rule.sure_threshold
    sources, scenes = read_sources(finder, classifier, args.data)
    ood = training_ood(finder, classifier, args.data)
    loso = leave_one_source_out(sources, ood, sure)
    pooled = loso.pooled_rolls(scenes)
    chosen = choose_bounded_threshold(pooled)
    print(f"threshold chosen on the pooled leave-one-source-out rolls: {chosen}")
    clean = last_clean_point(pooled)
    if clean is not None:
        print(
            f"the curve's last point with no wrong roll: threshold {clean.threshold:.5f}, "
            f"{clean.applied} of {len(pooled)} rolls applied, 95 % upper bound 1 in "
            f"{1 / clean.upper:.0f} (needed: under 1 in {UPPER_BOUND_PER}, i.e. at least "
            f"{rolls_needed(UPPER_BOUND_PER)} rolls with none wrong)"
        )
    held: list[tuple[str, list[CalibrationRoll]]] = []
    if shipped is not None and shipped.looks is not None:
        for label, f in held_out_rolls(finder, classifier, args.data):
            held.append((label, rolls_of(f, die_confidences(f, shipped))))
    levels = [(f"the {'given' if args.threshold is not None else 'shipped'} threshold", threshold)]
    if clean is not None and clean.threshold != threshold:
        levels.append(("the curve's last point with none wrong (not shipped)", clean.threshold))
    for words, level in levels:
        print(f"\nat {words} ({level}):")
        print(HEADER)
        for name in scenes:
            print(Line.of(f"{name} (calibration, left out)", loso.rolls[name], level).text())
        print(Line.of("pooled, leave one source out", pooled, level).text())
        for label, rolls in held:
            print(Line.of(label, rolls, level).text())
    print("\nexpected calibration error per source, leave one source out (dice read):")
    print("| source | dice | ECE raw | ECE leave one source out |\n|---|---|---|---|")
    for name, f in sources.items():
        m = f.value > 0
        raw = expected_calibration_error(f.raw[m], f.right[m])
        out = expected_calibration_error(loso.confidences[name][m], f.right[m])
        print(f"| {name} | {int(m.sum())} | {100 * raw:.1f} % | {100 * out:.1f} % |")
    marked = threshold if threshold is not None else (clean.threshold if clean else None)
    draw_curves([("pooled leave-one-source-out", pooled), *held], marked, args.curve)
    print(f"wrote {args.curve}")
    draw_loso_reliability(sources, loso, RELIABILITY)
    print(f"wrote {RELIABILITY}")
    if args.signals:
        wrong = sum(int((~sources[n].whole).sum()) for n in scenes)
        by_count = sum(
            int((~sources[n].whole & (sources[n].found != sources[n].labelled)).sum())
            for n in scenes
        )
        print(
            f"\nthe dice count (found == the game's) alone stops {by_count} of the {wrong} "
            f"wrong rolls of the calibration sources; the looks must catch the other "
            f"{wrong - by_count} (same count, a die misread, or a missed die and a false one)"
        )
        print("\nwhich looks catch the wrong rolls (pooled, leave one source out):")
        print("\n".join(signal_variants(sources, scenes, loso, ood, sure)))
    return 0


def run_folder(args: argparse.Namespace) -> int:
    finder = DiceFinder.load(args.models)
    classifier = PipClassifier.load(args.models)
    shipped = classifier.confidence_map
    if shipped is None or shipped.looks is None:
        print("the classifier's manifest has no look model: fit one first", file=sys.stderr)
        return 1
    threshold = args.threshold if args.threshold is not None else shipped.threshold
    images = every_nth(read_labelled_folder(args.folder), args.every, args.offset)
    crops = is_crop_folder(args.folder)
    name = args.folder.name
    key = f"{name}-{args.every}-{args.offset}"
    f = cached_features(key, images, finder, classifier, crops)
    print(f"threshold: {threshold}")
    print(HEADER)
    print(Line.of(name, rolls_of(f, die_confidences(f, shipped)), threshold).text())
    return 0


# ----------------------------------------------------------------------------------------
# Pictures (OpenCV: no plotting library in the runtime)

W, H, M = 640, 420, 60
COLOURS = [(200, 90, 30), (40, 150, 40), (30, 30, 200), (150, 60, 150), (20, 140, 200)]


def draw_curves(
    curves: Sequence[tuple[str, Sequence[CalibrationRoll]]], threshold: float | None, path: Path
) -> None:
    """Risk (wrong share of the rolls applied, log scale 1e-4..1) against coverage (share
    of all rolls applied) per folder as the threshold falls; the pooled curve's 95 % upper
    bound dashed; the lines at 1 in 500 and 1 in 250; the shipped threshold a dot."""
    canvas = np.full((H + 2 * M, W + 2 * M, 3), 255, np.uint8)

    def at(coverage: float, risk: float) -> tuple[int, int]:
        y = (np.log10(max(risk, 1e-4)) + 4) / 4
        return int(M + coverage * W), int(M + H - y * H)

    cv2.rectangle(canvas, at(0, 1e-4), at(1, 1), (120, 120, 120), 1)
    for risk, label in ((1 / 500, "1 in 500"), (1 / 250, "1 in 250")):
        cv2.line(canvas, at(0, risk), at(1, risk), (170, 170, 170), 1)
        cv2.putText(canvas, label, at(0.01, risk * 1.15), 0, 0.4, (90, 90, 90), 1, cv2.LINE_AA)
    for k, exponent in enumerate(range(-4, 1)):
        cv2.putText(
            canvas, f"1e{exponent}", (4, at(0, 10.0**exponent)[1] + 4), 0, 0.38, (0, 0, 0), 1
        )
        cv2.putText(
            canvas, f"{k * 25} %", (at(k / 4, 1e-4)[0] - 12, M + H + 18), 0, 0.38, (0, 0, 0), 1
        )
    for k, (label, rolls) in enumerate(curves):
        colour = COLOURS[k % len(COLOURS)]
        points = risk_coverage(rolls)
        total = max(1, len(rolls))
        path_points = [at(p.applied / total, p.wrong / p.applied) for p in points]
        for a, b in zip(path_points, path_points[1:], strict=False):
            cv2.line(canvas, a, b, colour, 2 if k == 0 else 1, cv2.LINE_AA)
        if k == 0:
            bound = [at(p.applied / total, p.upper) for p in points]
            for j, (a, b) in enumerate(zip(bound, bound[1:], strict=False)):
                if j % 2 == 0:
                    cv2.line(canvas, a, b, colour, 1, cv2.LINE_AA)
        if threshold is not None:
            applied = [p for p in points if p.threshold >= threshold]
            if applied:
                p = applied[-1]
                cv2.circle(
                    canvas, at(p.applied / total, max(p.wrong / p.applied, 1e-4)), 5, colour, -1
                )
        cv2.putText(canvas, label, (M + 8, M + 16 + 16 * k), 0, 0.42, colour, 1, cv2.LINE_AA)
    cv2.putText(
        canvas,
        "wrong share of rolls applied (log; none wrong: the bottom line) vs share of rolls",
        (8, 18), 0, 0.4, (0, 0, 0), 1, cv2.LINE_AA,
    )  # fmt: skip
    cv2.putText(
        canvas,
        "applied, as the threshold falls; dotted: 95 % bound (pooled); dot: the threshold (none",
        (8, 36), 0, 0.4, (0, 0, 0), 1, cv2.LINE_AA,
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), canvas)


def draw_loso_reliability(sources: dict[str, Features], loso: Loso, path: Path) -> None:
    """One reliability panel per source, its dice scored leaving it out."""
    side, top = 300, 60
    panels = []
    for name, f in sources.items():
        m = f.value > 0
        confidence, right = loso.confidences[name][m], f.right[m]
        canvas = np.full((top + side + 40, side + 60, 3), 255, np.uint8)

        def at(x: float, y: float) -> tuple[int, int]:
            return int(30 + x * side), int(top + side - y * side)

        cv2.rectangle(canvas, at(0, 1), at(1, 0), (120, 120, 120), 1)
        cv2.line(canvas, at(0, 0), at(1, 1), (160, 160, 160), 1, cv2.LINE_AA)
        for b in reliability_bins(confidence, right):
            if b.count:
                cv2.rectangle(
                    canvas, at(b.low + 0.01, b.accuracy), at(b.high - 0.01, 0), (200, 140, 60), -1
                )
                cv2.circle(canvas, at(b.confidence, b.confidence), 3, (40, 40, 200), -1)
                cv2.putText(
                    canvas, str(b.count), at(b.low + 0.01, b.accuracy + 0.02), 0, 0.32, (0, 0, 0), 1
                )
        ece = expected_calibration_error(confidence, right)
        cv2.putText(canvas, name, (8, 18), 0, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
        cv2.putText(
            canvas,
            f"{int(m.sum())} dice, ECE {100 * ece:.1f} % (left out)",
            (8, 38),
            0,
            0.42,
            (0, 0, 0),
            1,
            cv2.LINE_AA,
        )
        panels.append(canvas)
    while len(panels) % 3:
        panels.append(np.full_like(panels[0], 255))
    rows = [np.hstack(panels[k : k + 3]) for k in range(0, len(panels), 3)]
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.vstack(rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--suite", action="store_true")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--curve", type=Path, default=CURVE)
    parser.add_argument("--signals", action="store_true")
    args = parser.parse_args(argv)
    if args.suite and args.folder is not None:
        parser.error("give a folder or --suite, not both")
    if not args.suite and args.folder is None:
        parser.error("give a labelled folder (e.g. ../shared/data/matteop65-d6/valid) or --suite")
    return run_suite(args) if args.suite else run_folder(args)


__all__ = ["CROP_DIE_SHARE", "ConfidenceMap", "dataclasses", "main"]

if __name__ == "__main__":
    sys.exit(main())
