"""bench/model_pairs.py reads the figures of a pair measured as it stands (``--as-shipped``,
``--under-rule``) from the table that ends bench/vision_eval.py --suite's output. It once
read an older form of that output and found nothing, silently; so the table printed by
vision_eval's own `print_table` is read back here: the pooled count's four folders, skovy's
missed / false / misread and chase's labelled boxes, and a text with no table is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.model_pairs import from_suite, main, planned_pairs
from bench.vision_eval import FolderResult, print_table
from companion.vision.datasets import BYLER, CHASE, EPANEMU, MATTEO, RUNE55, SKOVY, TOMITOMI
from companion.vision.scoring import Figures


def folder(
    name: str, part: str, labelled: int, matched: int, right: int, false: int
) -> FolderResult:
    pipeline = Figures(images=10, labelled=labelled, matched=matched, right=right, false=false)
    boxes = Figures(images=10, labelled=labelled, matched=labelled, right=right - 1)
    return FolderResult(f"{name} ({part})", pipeline, boxes, 1.0, [])


def test_the_suite_table_is_read_back(capsys: pytest.CaptureFixture[str]) -> None:
    results = [
        folder(BYLER, "validation", 274, 273, 271, 1),  # 1 + 1 + 2 = 4
        folder(EPANEMU, "validation", 445, 402, 364, 21),  # 43 + 21 + 38 = 102
        folder(MATTEO, "validation", 255, 255, 254, 2),  # 0 + 2 + 1 = 3
        folder(RUNE55, "validation", 1005, 905, 868, 4),  # 100 + 4 + 37 = 141
        folder(TOMITOMI, "validation", 256, 208, 166, 9),  # a crop folder: not pooled
        folder(SKOVY, "measure only", 98, 97, 97, 1),
        folder(CHASE, "measure only", 279, 257, 250, 3),
    ]
    print("byler-d6-train (validation): 40 images, 3.0 s\nmissed_false_misread: 999\n")
    print_table(results)
    figures = from_suite("rule+c15", capsys.readouterr().out)
    assert figures.per_folder == {BYLER: 4, EPANEMU: 102, MATTEO: 3, RUNE55: 141}
    assert figures.pooled == 250
    assert figures.skovy == "missed 1 false 1 misread 0"
    assert figures.chase == "249 of 279"  # the classifier alone on the labelled boxes


def test_an_output_without_the_table_is_refused() -> None:
    with pytest.raises(SystemExit, match="no folder's figures"):
        from_suite("rule+c15", "byler-d6-train (validation): 40 images\nmissed_false_misread: 4\n")


def test_skip_names_the_pairs_under_one_rule_too() -> None:
    """A pair known from an earlier run is skipped by its name, `rule+CLASSIFIER` as well
    (`--skip rule+c15` was refused as "no such pair", so a rule pair already measured had to
    be measured again)."""
    finders = [("fnow", Path("models")), ("s41q", Path("/tmp/s41q"))]
    classifiers = [("c15", Path("models")), ("s43", Path("/tmp/s43"))]
    plan = planned_pairs(finders, classifiers, Path("models"))
    names = [pair.name for pair in plan]
    assert names == [
        "fnow+c15", "fnow+s43", "s41q+c15", "s41q+s43", "rule+c15", "rule+s43",
    ]  # fmt: skip
    assert [pair.judged for pair in plan] == [True] * 4 + [False] * 2
    assert [pair.name for pair in planned_pairs(finders, classifiers, None)] == names[:4]


def test_an_unknown_skip_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--finder", "a=models", "--classifier", "b=models", "--skip", "rule+b"]
    with pytest.raises(SystemExit):
        main(argv)  # no --under-rule: there is no rule+b
    assert "--skip rule+b: no such pair" in capsys.readouterr().err
