"""Table calibration files: the dice-set format plus play area and die size, validated on
load with the file and key named; measuring a set from rendered frames; the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.rules.registry import standard_dice_sets
from companion.vision.calibration import (
    FULL_FRAME,
    calibration_path,
    detect_play_area,
    load_calibration,
    measure,
    parse_calibration,
    save_calibration,
    unlike_their_names,
)
from companion.vision.colour import (
    DEFAULT_CALIBRATION_DIR,
    CalibrationError,
    DiceSet,
    SetDie,
    builtin_dice_set,
    colour_distance,
    load_dice_set,
)
from tests.live.replay import ClipReader, render_throw

REPO = Path(__file__).resolve().parents[2]
GOOD: dict[str, Any] = {
    "format": "companion-dice-set/1",
    "name": "kitchen",
    "dice": [{"colour": "red", "lab": [40, 50, 30]}, {"colour": "white", "lab": [90, 0, 3]}],
}


def test_shipped_files_still_load_without_the_new_keys() -> None:
    for name in ("qwixx-default", "sixto-default", "sixes-default"):
        calibration = load_calibration(DEFAULT_CALIBRATION_DIR / f"{name}.json")
        assert calibration.play_area == FULL_FRAME and calibration.die_side is None
        assert calibration.dice_set.colours == standard_dice_sets()[name.split("-")[0]]


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"play_area": [0.1, 0.1, 0.9, 0.8]}, None),
        ({"play_area": [0.5, 0.1, 0.4, 0.8]}, "x0 < x1"),
        ({"play_area": [0, 0, 1]}, "four numbers"),
        ({"play_area": [0, 0, 1.5, 1]}, "fractions 0..1"),
        ({"die_size": {"side_px": 44.0, "frame": [640, 480]}}, None),
        ({"die_size": {"side_px": 1}}, "4 to 2000 pixels"),
        ({"die_size": {"side": 44}}, "'side_px'"),
        ({"die_size": {"side_px": 44, "frame": [640]}}, "[width, height]"),
        ({"playarea": [0, 0, 1, 1]}, "unknown key"),
    ],
)
def test_new_keys_are_validated(extra: dict[str, Any], problem: str | None) -> None:
    data = GOOD | extra
    if problem is None:
        calibration = parse_calibration(data, "kitchen.json")
        assert calibration.name == "kitchen"
        return
    with pytest.raises(CalibrationError) as caught:
        parse_calibration(data, "kitchen.json")
    assert "kitchen.json" in str(caught.value) and problem in str(caught.value)


def test_save_round_trips_and_the_dice_set_loader_accepts_it(tmp_path: Path) -> None:
    calibration = parse_calibration(
        GOOD | {"play_area": [0.1, 0.2, 0.9, 0.8], "die_size": {"side_px": 40, "frame": [640, 480]}}
    )
    path = save_calibration(calibration, tmp_path / "kitchen.json")
    again = load_calibration(path)
    assert again == parse_calibration(json.loads(path.read_text()), str(path))
    assert again.play_area == (0.1, 0.2, 0.9, 0.8) and again.die_side == 40.0
    assert load_dice_set(path).colours == ("red", "white")  # `companion read --dice-set`


def test_broken_files_name_the_problem(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(CalibrationError, match="broken.json: not JSON"):
        load_calibration(broken)
    with pytest.raises(CalibrationError, match="no such calibration file"):
        load_calibration(tmp_path / "missing.json")
    with pytest.raises(CalibrationError, match="use 1-48 letters"):
        calibration_path("../etc/passwd")


@pytest.mark.parametrize("name", ["kitchen\n", "kitchen\r\n", "../kitchen", "kitchen/x", ""])
def test_a_name_is_only_letters_digits_dashes_and_underscores(name: str) -> None:
    """A calibration's or a setup's name names a file and a folder: "kitchen\n" passed the
    pattern (its `$` matched before the line break), so `/setups/kitchen%0A` on the server
    machine answered 200 for a setup whose folder's name ends in a line break."""
    from companion.vision.adapt_store import SetupError, check_setup

    with pytest.raises(CalibrationError, match="use 1-48 letters"):
        calibration_path(name)
    with pytest.raises(SetupError, match="use 1-48 letters"):
        check_setup(name)


def test_measuring_a_rendered_set_finds_its_colours_size_and_area() -> None:
    """The real colour stage measures each die of a rendered Qwixx throw at rest (the boxes
    come from the clip's ground truth); the colours land near the shipped calibration, the
    side near the rendered 44 px, and the play area the whole picture, or, asked for,
    around the dice."""
    throw = render_throw(standard_dice_sets()["qwixx"], seed=77)
    reader = ClipReader()
    reader.throw = throw
    rest = [i for i, f in enumerate(throw.frames) if f.phase == "rest"][:4]

    class Indexed:  # measure() numbers frames 0..n; the clip knows them by their own index
        def read(self, image: object, frame_index: int = 0) -> Any:
            return reader.read(image, rest[frame_index])

    frames = [throw.frames[i].image for i in rest]
    whole, notes = measure(frames, Indexed(), builtin_dice_set("qwixx"), "test-table")
    assert notes == [] and whole.play_area == FULL_FRAME  # none given: the whole picture
    calibration, notes = measure(
        frames, Indexed(), builtin_dice_set("qwixx"), "test-table", play_area="auto"
    )
    assert len(notes) == 1 and notes[0].startswith("play area detected around the dice")
    shipped = builtin_dice_set("qwixx")
    for measured, reference in zip(calibration.dice_set.dice, shipped.dice, strict=True):
        assert measured.colour == reference.colour
        assert colour_distance(measured.lab, reference.lab) < 25, measured
    assert calibration.die_side is not None and 40 <= calibration.die_side <= 48
    x0, y0, x1, y1 = calibration.play_area
    for d in throw.frames[rest[0]].dice:
        assert x0 * 640 < d.cx < x1 * 640 and y0 * 480 < d.cy < y1 * 480
    assert (x0, y0, x1, y1) != FULL_FRAME


def test_a_die_measured_as_another_colour_is_noted() -> None:
    """A purple die measured into the red slot (a café's off-shade set, seen in a trial):
    the file is saved, and the person is told which die looks wrong."""
    shipped = builtin_dice_set("qwixx")
    purple_red = tuple(
        SetDie(d.colour, (20.6, 31.9, -20.8)) if d.colour == "red" else d for d in shipped.dice
    )
    notes = unlike_their_names(DiceSet("cafe", purple_red, "measured"))
    assert notes == [
        "the die measured as red looks purple: check that the set's red die is in view and "
        "no die of another set is"
    ]
    assert unlike_their_names(shipped) == []


def test_a_die_never_seen_is_an_error() -> None:
    throw = render_throw(standard_dice_sets()["qwixx"][:-1], seed=78)
    reader = ClipReader()
    reader.throw = throw
    index = throw.rest_index
    frames = [throw.frames[index].image]

    class Indexed:
        def read(self, image: object, frame_index: int = 0) -> Any:
            return reader.read(image, index)

    with pytest.raises(CalibrationError, match="not seen by the camera: blue"):
        measure(frames, Indexed(), builtin_dice_set("qwixx"), "x")


def test_detected_area_is_the_full_frame_without_dice() -> None:
    assert detect_play_area([]) == FULL_FRAME


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", "calibrate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_checks_a_file(tmp_path: Path) -> None:
    good = run_cli("--check", str(DEFAULT_CALIBRATION_DIR / "sixto-default.json"))
    assert good.returncode == 0 and json.loads(good.stdout)["name"] == "sixto"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(GOOD | {"play_area": [1, 1, 0, 0]}))
    refused = run_cli("--check", str(bad))
    assert refused.returncode == 2 and "play_area" in refused.stderr
    assert run_cli().returncode == 2
