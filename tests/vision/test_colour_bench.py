"""bench/vision_colour.py renders and calibrates the dice set of any registered game, as
`companion read --dice-set` reads one (cli.game_dice_set), not only the shipped sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import vision_colour
from companion.rules.registry import standard_dice_sets
from companion.vision.colour import parse_dice_set
from tests.tiny_game import tiny_game_registered


def test_the_colour_bench_renders_and_calibrates_a_registered_games_dice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with tiny_game_registered(monkeypatch) as tiny:
        assert vision_colour.main(["--scenes", "2", "--dice-set", tiny]) == 0
        assert f"rendered {tiny} scenes: 2" in capsys.readouterr().out
        calibrate = ["--calibrate", str(tmp_path), "--scenes", "1", "--dice-set", tiny]
        assert vision_colour.main(calibrate) == 0
    written = tmp_path / f"{tiny}-default.json"
    assert parse_dice_set(json.loads(written.read_text())).colours == standard_dice_sets()["qwixx"]
    assert [path.name for path in tmp_path.iterdir()] == [written.name]  # that set only


def test_the_colour_bench_refuses_a_name_that_is_no_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        vision_colour.main(["--scenes", "1", "--dice-set", "no_such_game"])
    said = capsys.readouterr().err
    assert "no_such_game" in said and "no registered game" in said and "qwixx" in said
