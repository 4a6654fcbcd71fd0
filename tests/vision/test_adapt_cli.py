"""`companion calibrate NAME --teach ROUNDS` as a user runs it: a real subprocess with the
real models on rendered Qwixx throws at rest, answers typed on its standard input; and the
answer format of a round, good and bad."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from companion.rules.registry import standard_dice_sets
from companion.vision.adapt_cli import parse_corrections
from companion.vision.adapt_store import SetupStore
from companion.vision.calibration import TableCalibration, save_calibration
from companion.vision.colour import builtin_dice_set
from tests.live.replay import render_throw

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "count", "fixes"),
    [
        ("", 6, {}),
        ("3=5", 6, {2: 5}),
        ("1=6 6=1", 6, {0: 6, 5: 1}),
        ("2=4, 4=2", 5, {1: 4, 3: 2}),
    ],
)
def test_a_round_answer_names_the_dice_to_correct(
    text: str, count: int, fixes: dict[int, int]
) -> None:
    assert parse_corrections(text, count) == fixes


@pytest.mark.parametrize("text", ["7=1", "0=3", "3=7", "3:5", "three=5", "y"])
def test_a_bad_answer_is_refused_with_the_format(text: str) -> None:
    with pytest.raises(ValueError, match="DIE=VALUE"):
        parse_corrections(text, 6)


def test_the_teaching_round_stores_the_confirmed_dice_and_shows_the_bars(tmp_path: Path) -> None:
    kitchen = dataclasses.replace(builtin_dice_set("qwixx"), name="kitchen")
    calibration = save_calibration(TableCalibration(kitchen), tmp_path / "kitchen.json")
    images = []
    for k, seed in enumerate((1601, 1602)):
        throw = render_throw(standard_dice_sets()["qwixx"], seed=seed)
        path = tmp_path / f"round_{k}.png"
        cv2.imwrite(str(path), throw.frames[throw.rest_index].image)
        images += ["--image", str(path)]
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "companion.cli", "calibrate", "kitchen", "--out", str(calibration),
         "--teach", "2", *images, "--data-dir", str(data)],
        input="9=1\n3=5\n\n",  # a die 9 that is not there (asked again), die 3 shows 5; right as read
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "teaching kitchen: 2 rounds" in out
    assert "'9=1': write DIE=VALUE" in out
    assert out.count("each die of the set:") == 2 and "face 5" in out
    store = SetupStore(data)
    stored = store.examples("kitchen")
    first = [s for s in stored if s.throw == 1]
    assert len(first) >= 3 and len(stored) > len(first)
    assert first[2].example.value == 5 and first[2].source in ("corrected", "taught")
    assert {s.source for s in stored if s.throw == 2} == {"taught"}
    assert {s.photo for s in stored} == {"calibrate round 1", "calibrate round 2"}
    sheet = data / "setups" / "kitchen-dice.png"
    assert str(sheet) in out
    picture = cv2.imread(str(sheet))
    assert picture is not None and picture.shape[0] == 6 * 64  # a row per face
