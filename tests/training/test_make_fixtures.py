"""models/README.md names `python -m models.recipe.make_fixtures` as the way to rewrite
tests/fixtures/crops: asking it for --help must not rewrite anything, and a run must give
back the committed crops (same photos, same boxes) now that ../shared/data holds more
folders than the three the fixtures' licences name."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from models.recipe import make_fixtures

COMMITTED = Path(__file__).resolve().parents[1] / "fixtures" / "crops"


def test_help_prints_usage_and_leaves_the_fixtures_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "1_byler_00.png"
    kept.write_bytes(b"a fixture")
    monkeypatch.setattr(make_fixtures, "OUT", tmp_path)
    monkeypatch.setattr(sys, "argv", ["make_fixtures", "--help"])
    with pytest.raises(SystemExit) as done:
        make_fixtures.main()
    assert done.value.code == 0
    assert "--out" in capsys.readouterr().out
    assert kept.read_bytes() == b"a fixture"


@pytest.mark.slow
def test_a_run_writes_the_committed_crops_again(tmp_path: Path) -> None:
    assert make_fixtures.main(["--out", str(tmp_path)]) == 0
    written = (tmp_path / "SOURCES.txt").read_text(encoding="utf-8")
    assert written == (COMMITTED / "SOURCES.txt").read_text(encoding="utf-8")
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == sorted(p.name for p in COMMITTED.glob("*.png"))
    assert len(names) == 60
    for name in names:
        fresh = cv2.imread(str(tmp_path / name)).astype(int)
        committed = cv2.imread(str(COMMITTED / name)).astype(int)
        # one grey level apart at most: OpenCV builds round the resampling differently
        assert np.abs(fresh - committed).max() <= 1, name
