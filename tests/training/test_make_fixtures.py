"""models/README.md names `python -m models.recipe.make_fixtures` as the way to rewrite
tests/fixtures/crops: asking it for --help must not rewrite anything, and a run must give
back the committed crops (same photos, same boxes) now that ../shared/data holds more
folders than the three the fixtures' licences name. A run replaces only the crops it wrote
(those its SOURCES.txt names): a folder of someone's own photos given as --out is refused
and left as it was (its PNGs were deleted), and so is a file given as the folder (or
as a folder above it), in one line instead of a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from models.recipe import make_fixtures
from tests.images import read_image

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


def test_a_folder_of_someone_elses_photos_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo = tmp_path / "holiday.png"
    photo.write_bytes(b"a photo of mine")
    assert make_fixtures.main(["--out", str(tmp_path)]) != 0
    assert photo.read_bytes() == b"a photo of mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["holiday.png"]
    assert "holds files but no SOURCES.txt" in capsys.readouterr().err


@pytest.mark.parametrize("out_below_file", ["", "crops"], ids=["the_file", "a_folder_in_it"])
def test_a_file_given_as_the_folder_is_refused_in_one_line_and_kept(
    out_below_file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes")
    out = notes / out_below_file if out_below_file else notes
    assert make_fixtures.main(["--out", str(out)]) != 0
    assert notes.read_bytes() == b"my notes"
    assert capsys.readouterr().err.splitlines() == [
        f"make_fixtures: {notes} is a file, not a folder: name a folder with --out"
    ]


def test_a_rerun_replaces_only_the_crops_its_sources_name(tmp_path: Path) -> None:
    header = make_fixtures.SOURCES_HEADER + make_fixtures.LICENCES
    lines = [header, "1_byler_00.png\tbyler-d6-train/a.jpg\tcx=1", "../outside.png\tx\ty"]
    (tmp_path / "SOURCES.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "holiday.png").write_bytes(b"a photo of mine")
    assert make_fixtures.previous_crops(tmp_path) == [tmp_path / "1_byler_00.png"]
    # the committed fixtures (the default folder) are replaced crop by crop
    committed = sorted(make_fixtures.previous_crops(COMMITTED))
    assert committed == sorted(COMMITTED.glob("*.png")) and len(committed) == 60


@pytest.mark.slow
def test_a_run_writes_the_committed_crops_again(tmp_path: Path) -> None:
    assert make_fixtures.main(["--out", str(tmp_path)]) == 0
    written = (tmp_path / "SOURCES.txt").read_text(encoding="utf-8")
    assert written == (COMMITTED / "SOURCES.txt").read_text(encoding="utf-8")
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == sorted(p.name for p in COMMITTED.glob("*.png"))
    assert len(names) == 60
    for name in names:
        fresh = read_image(tmp_path / name).astype(int)
        committed = read_image(COMMITTED / name).astype(int)
        # one grey level apart at most: OpenCV builds round the resampling differently
        assert np.abs(fresh - committed).max() <= 1, name
