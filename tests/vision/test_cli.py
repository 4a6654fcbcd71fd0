"""The `companion read` contract, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.synth import render_scene

REPO = Path(__file__).resolve().parents[2]
COMPANION = REPO / ".venv" / "bin" / "companion"


def run_read(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(COMPANION)] if COMPANION.exists() else [sys.executable, "-m", "companion.cli"]
    return subprocess.run(
        [*command, "read", *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


@pytest.fixture(scope="module")
def pictures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pictures")
    # a plain scene (camera straight down, dice apart): this file tests the command's
    # contract; hard scenes are test_pipeline's
    dice_image, dice = render_scene(
        np.random.default_rng(21),
        640,
        480,
        dice_set="qwixx",
        values=[3, 5, 1, 6, 2, 4],
        size=60,
        clutter=0.0,
        camera_tilt=0.0,
        touching=0.0,
    )
    paths = {
        "dice": folder / "dice.png",
        "grey": folder / "grey.png",
        "tiny": folder / "tiny.png",
        "corrupt": folder / "corrupt.jpg",
        "empty": folder / "empty.png",
        "missing": folder / "missing.png",
    }
    cv2.imwrite(str(paths["dice"]), dice_image)
    cv2.imwrite(str(paths["grey"]), np.full((300, 400), 128, np.uint8))
    cv2.imwrite(str(paths["tiny"]), np.zeros((1, 1, 3), np.uint8))
    paths["corrupt"].write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg" * 10)
    paths["empty"].write_bytes(b"")
    (folder / "truth.json").write_text(json.dumps([d.value for d in dice]))
    return paths


def test_json_lines_for_good_and_bad_files(pictures: dict[str, Path], tmp_path: Path) -> None:
    order = ["dice", "grey", "tiny", "corrupt", "empty", "missing"]
    result = run_read(
        *(str(pictures[k]) for k in order),
        "--json",
        "--dice-set",
        "qwixx",
        "--annotate",
        str(tmp_path / "out"),
    )
    assert result.returncode == 1  # some files could not be read
    assert "Traceback" not in result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["image"] for line in lines] == [str(pictures[k]) for k in order]
    by_name = dict(zip(order, lines, strict=True))

    dice = by_name["dice"]
    assert (dice["width"], dice["height"]) == (640, 480)
    assert dice["ms"] > 0
    truth = json.loads((pictures["dice"].parent / "truth.json").read_text())
    qwixx = ["white", "white", "red", "yellow", "green", "blue"]
    # this file tests the command's contract; the finder's recall is test_pipeline's
    assert len(dice["dice"]) >= 4
    assert len(dice["dice"]) + len(dice["missing"]) == 6
    assert sorted([d["colour"] for d in dice["dice"]] + dice["missing"]) == sorted(qwixx)
    for die in dice["dice"]:
        assert die["value"] == truth[qwixx.index(die["colour"])] or die["colour"] == "white"
    assert sorted(d["value"] for d in dice["dice"] if d["colour"] == "white") in (
        [3, 5],
        [3],
        [5],
        [],
    )
    for die in dice["dice"]:
        x0, y0, x1, y1 = die["box"]
        assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
        assert 0 <= die["confidence"] <= 1 and isinstance(die["flags"], list)

    assert by_name["grey"]["dice"] == []
    assert by_name["tiny"]["dice"] == [] and by_name["tiny"]["problems"]
    assert "error" in by_name["corrupt"] and "readable" in by_name["corrupt"]["error"]
    assert by_name["empty"]["error"] == "empty file"
    assert by_name["missing"]["error"] == "no such file"

    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["dice.annotated.png", "grey.annotated.png", "tiny.annotated.png"]
    annotated = cv2.imread(str(tmp_path / "out" / "dice.annotated.png"))
    assert annotated is not None and annotated.shape == (480, 640, 3)


def test_readable_lines_and_success_status(pictures: dict[str, Path]) -> None:
    result = run_read(str(pictures["dice"]), str(pictures["grey"]))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{pictures['dice']}: 640x480") and " dice: " in lines[0]
    assert lines[1].endswith("no dice found")


def test_a_folder_is_read_image_by_image(pictures: dict[str, Path], tmp_path: Path) -> None:
    """A folder names its images in name order (its other files and subfolders aside);
    a folder without images is a clear error."""
    folder = tmp_path / "photos"
    (folder / "sub").mkdir(parents=True)
    for name in ("b.png", "a.png"):
        (folder / name).write_bytes(pictures["dice"].read_bytes())
    (folder / "notes.txt").write_text("not an image", encoding="utf-8")
    result = run_read("--json", str(folder))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["image"] for line in lines] == [str(folder / "a.png"), str(folder / "b.png")]
    assert all(len(line["dice"]) == 6 for line in lines)
    empty = run_read(str(folder / "sub"))
    assert empty.returncode == 1 and "a folder with no images" in empty.stderr


def test_bad_dice_set_file_is_a_clear_error(tmp_path: Path, pictures: dict[str, Path]) -> None:
    bad = tmp_path / "set.json"
    bad.write_text(
        json.dumps(
            {
                "format": "companion-dice-set/1",
                "name": "x",
                "dice": [{"colour": "mauve", "lab": [1, 2, 3]}],
            }
        )
    )
    result = run_read(str(pictures["grey"]), "--dice-set", str(bad))
    assert result.returncode == 2
    assert "colour 'mauve'" in result.stderr and "Traceback" not in result.stderr
    result = run_read(str(pictures["grey"]), "--dice-set", "yahtzee")
    assert result.returncode == 2 and "unknown dice set 'yahtzee'" in result.stderr


def test_each_image_is_a_roll_with_its_confidence_and_decision(pictures: dict[str, Path]) -> None:
    from companion.vision.classifier import PipClassifier

    confidence_map = PipClassifier.load().confidence_map
    assert confidence_map is not None
    threshold = confidence_map.threshold  # None: no roll is sure enough (issue 23)
    result = run_read(str(pictures["dice"]), str(pictures["grey"]), "--json")
    assert result.returncode == 0, result.stderr
    dice, grey = (json.loads(line) for line in result.stdout.splitlines())
    assert dice["expected_dice"] == len(dice["dice"])  # no --dice, no set: as found
    product = float(np.prod([d["confidence"] for d in dice["dice"]]))
    assert dice["roll_confidence"] == pytest.approx(product, abs=1e-3)
    assert dice["sure"] == (threshold is not None and dice["roll_confidence"] >= threshold)
    assert dice["sure"] == (dice["unsure"] == [])
    for unsure in dice["unsure"]:
        die = dice["dice"][unsure["index"]]
        assert unsure["confidence"] == pytest.approx(die["confidence"], abs=1e-4)
        assert len(set(unsure["choices"])) == 2 and set(unsure["choices"]) <= set(range(1, 7))
    assert (grey["roll_confidence"], grey["sure"]) == (0.0, False)

    # a roll of one die more than was found is never sure, and says so
    more = run_read(str(pictures["dice"]), "--json", "--dice", str(len(dice["dice"]) + 1))
    line = json.loads(more.stdout)
    assert (line["expected_dice"], line["roll_confidence"], line["sure"]) == (
        len(dice["dice"]) + 1,
        0.0,
        False,
    )
    bad = run_read(str(pictures["dice"]), "--dice", "0")
    assert bad.returncode == 2 and "--dice must be 1 or more" in bad.stderr
