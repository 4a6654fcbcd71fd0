"""How many rolls would be applied without a tap, and how many of those wrongly.

    .venv/bin/python bench/auto_apply.py DIR [--every K --offset J] [--models M]
    .venv/bin/python bench/auto_apply.py --suite

Each photo of a YOLO-labelled folder (the folders bench/vision_eval.py takes) is one roll
whose dice count the game knows (the labelled count). The whole pipeline reads it, its
dice confidences calibrated by the classifier manifest's map, and
companion.vision.confidence.decide_roll decides at the shipped threshold (the manifest's
``confidence.auto_apply_threshold``, or --threshold): apply at once, or ask about the dice
it names. A roll applied is wrong unless every labelled die was found and read right with
no false die (a die nobody labelled counts false, as in vision_eval). Beside the wrong
rolls counted, the number the roll confidences expected (the sum of 1 - confidence over the
rolls applied): a calibrated roll confidence expects about as many as happen.

Prints the share of photos applied without a tap, the number of those applied wrong (the
target: at most 1 in 500, none on a folder under 500 photos), and for the rolls asked
about: how many for a dice count that was not the game's, how many dice the question
names, and how often it names every die that was read wrong (so that confirming the named
dice would make the roll right). --suite does it for every validation part of the scene
folders and skovy-catan-webcam (measure only).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from companion.vision.confidence import RollDecision, decide_roll
from companion.vision.datasets import (
    FOLDERS,
    SKOVY,
    LabelledImage,
    every_nth,
    load_measure_only,
    load_split,
    read_labelled_folder,
)
from companion.vision.pipeline import DiceReader
from companion.vision.scoring import match, score
from companion.vision.types import DieReading


@dataclass
class Tally:
    """One folder's rolls."""

    name: str
    photos: int = 0
    applied: int = 0
    applied_wrong: int = 0
    asked: int = 0
    asked_for_count: int = 0
    named_dice: int = 0
    named_every_error: int = 0  # asked, count right: the misread dice are all named
    asked_with_count_right: int = 0
    expected_wrong: float = 0.0  # the sum of 1 - roll confidence over the rolls applied

    def add(self, truth: LabelledImage, dice: Sequence[DieReading], decision: RollDecision) -> None:
        self.photos += 1
        right = score([(truth, dice, ())]).whole == 1
        if decision.apply:
            self.applied += 1
            self.applied_wrong += not right
            self.expected_wrong += 1.0 - decision.roll_confidence
            return
        self.asked += 1
        self.named_dice += len(decision.unsure)
        if decision.missing or decision.extra:
            self.asked_for_count += 1
            return
        self.asked_with_count_right += 1
        named = {u.index for u in decision.unsure}
        self.named_every_error += wrong_dice(truth, dice) <= named

    def lines(self) -> list[str]:
        share = self.applied / max(1, self.photos)
        return [
            f"{self.name}: {self.photos} photos (rolls)",
            f"applied_without_a_tap: {share:.4f} ({self.applied} of {self.photos})",
            f"applied_wrong: {self.applied_wrong} (1 in "
            f"{self.applied // self.applied_wrong if self.applied_wrong else '-'}); the roll "
            f"confidences expected {self.expected_wrong:.2f}",
            f"asked: {self.asked}, of them for the dice count: {self.asked_for_count}; "
            f"dice named per question: {self.named_dice / max(1, self.asked):.2f}",
            f"asked with the count right, the question names every misread die: "
            f"{self.named_every_error} of {self.asked_with_count_right}",
        ]


def wrong_dice(truth: LabelledImage, dice: Sequence[DieReading]) -> set[int]:
    """Indices of the readings that are not a labelled die's value (misread or false)."""
    pairs = {j: i for i, j in match(truth, dice)}
    return {
        j for j, die in enumerate(dice) if j not in pairs or truth.dice[pairs[j]].value != die.value
    }


def tally(
    name: str, images: Sequence[LabelledImage], reader: DiceReader, threshold: float | None
) -> Tally:
    result = Tally(name)
    for k, truth in enumerate(images, start=1):
        dice = reader.read(truth.load()).dice
        result.add(truth, dice, decide_roll(dice, len(truth.dice), threshold))
        if k % 50 == 0:
            print(f"  {name}: {k}/{len(images)} photos", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--suite", action="store_true", help="validation parts and skovy")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument(
        "--threshold", type=float, default=None, help="instead of the shipped threshold"
    )
    args = parser.parse_args(argv)
    if args.suite == (args.folder is not None):
        parser.error("give a folder or --suite, not both")
    reader = DiceReader.load(args.models)
    confidence_map = reader.classifier.confidence_map
    threshold = args.threshold
    if threshold is None and confidence_map is not None:
        threshold = confidence_map.threshold
    print(f"threshold: {threshold} ({'given' if args.threshold is not None else 'shipped'})")
    if args.suite:
        split = load_split(args.data)
        folders = [(f"{n} (validation)", split.validation[n]) for n in FOLDERS]
        folders.append((f"{SKOVY} (measure only)", load_measure_only(args.data)[SKOVY]))
    else:
        picked = every_nth(read_labelled_folder(args.folder), args.every, args.offset)
        folders = [(args.folder.name, tuple(picked))]
    for name, photos in folders:
        print("\n".join(tally(name, photos, reader, threshold).lines()), flush=True)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
