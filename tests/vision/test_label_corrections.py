"""The label corrections used by bench/vision_eval.py: the shipped list is well formed and
each entry still fits its photo, broken rows are refused naming the row, and a correction
does what its kind says (also in the benchmark's scoring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.vision.datasets import (
    FOLDERS,
    DatasetError,
    LabelledDie,
    LabelledImage,
    corrected,
    default_data_root,
    parse_label_file,
    read_label_corrections,
)
from companion.vision.scoring import score
from companion.vision.types import DieBox, DieReading
from tests.images import read_image

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "bench" / "label_corrections.csv"
DATA = default_data_root()
HEADER = "folder,image,kind,cx,cy,side,value,reason\n"


def _photo(name: str = "a.jpg", folder: str = "byler-d6-train") -> LabelledImage:
    dice = (LabelledDie(100, 100, 40, 40, 5), LabelledDie(300, 100, 40, 40, 2))
    return LabelledImage(Path("/data") / folder / "images" / name, folder, 640, 480, dice)


def _write(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "corrections.csv"
    path.write_text("# a comment line\n" + HEADER + rows, encoding="utf-8")
    return path


def test_each_kind_changes_only_what_it_names(tmp_path: Path) -> None:
    corrections = read_label_corrections(
        _write(
            tmp_path,
            "byler-d6-train,a.jpg,value,104,97,,4,shows four\n"
            "byler-d6-train,a.jpg,missing,500,300,36,6,unlabelled six\n"
            "byler-d6-train,a.jpg,ignore,20,20,30,,cut by the edge\n"
            "byler-d6-train,b.jpg,drop,,,,,every die labelled 1\n",
        )
    )
    fixed, ignore = corrected(_photo(), corrections)
    assert fixed is not None
    assert [(d.cx, d.value) for d in fixed.dice] == [(100, 4), (300, 2), (500, 6)]
    assert ignore == ((20.0, 20.0, 30.0),)
    assert corrected(_photo("b.jpg"), corrections) == (None, ())
    # the same file name in another data folder is a different photo
    other = _photo(folder="matteop65-d6")
    assert corrected(other, corrections) == (other, ())


@pytest.mark.parametrize(
    ("row", "complaint"),
    [
        ("nowhere,a.jpg,drop,,,,,x\n", "unknown folder"),
        ("byler-d6-train,a.jpg,swap,,,,,x\n", "kind must be"),
        ("byler-d6-train,a.jpg,drop,,,,,\n", "needs its reason"),
        ("byler-d6-train,a.jpg,value,1,2,,7,x\n", "needs a value 1-6"),
        ("byler-d6-train,a.jpg,missing,1,2,,3,x\n", "needs the die's side"),
        ("byler-d6-train,a.jpg,ignore,one,2,3,,x\n", "must be numbers"),
        ("byler-d6-train,a.jpg,drop\n", "3 fields"),
    ],
)
def test_a_broken_row_is_refused_naming_it(tmp_path: Path, row: str, complaint: str) -> None:
    path = _write(tmp_path, "byler-d6-train,z.jpg,drop,,,,,fine\n" + row)
    with pytest.raises(DatasetError, match=f"correction 2: .*{complaint}"):
        read_label_corrections(path)


def test_a_value_correction_far_from_every_label_is_refused(tmp_path: Path) -> None:
    corrections = read_label_corrections(
        _write(tmp_path, "byler-d6-train,a.jpg,value,200,300,,4,nothing here\n")
    )
    with pytest.raises(DatasetError, match=r"no labelled die near \(200, 300\)"):
        corrected(_photo(), corrections)


def test_the_benchmark_excuses_one_reading_per_ignored_die() -> None:
    def reading(cx: float, cy: float, value: int) -> DieReading:
        return DieReading(DieBox(cx, cy, 40, 40), value, 0.9)

    found = (reading(101, 99, 5), reading(300, 100, 3), reading(20, 20, 1), reading(22, 21, 1))
    plain = score([(_photo(), found, ())])
    assert (plain.matched, plain.right, plain.false) == (2, 1, 2)
    excused = score([(_photo(), found, ((20.0, 20.0, 30.0),))])
    # the region excuses the die nobody labelled; its second reading is a duplicate
    assert (excused.matched, excused.right, excused.false) == (2, 1, 1)


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")  # CI has it
def test_every_shipped_correction_fits_its_photo() -> None:
    corrections = read_label_corrections(SHIPPED)
    assert corrections, "the shipped list is empty"
    for name, items in corrections.items():
        folder = items[0].folder
        assert folder in FOLDERS
        photos = [p for p in (DATA / folder).rglob(name) if p.is_file()]
        assert len(photos) == 1, f"{name}: {len(photos)} photos in {folder}"
        photo = photos[0]
        label_dir = (
            photo.parent.parent / "labels" if photo.parent.name == "images" else photo.parent
        )
        height, width = read_image(photo).shape[:2]
        dice = parse_label_file(
            label_dir / (photo.stem + ".txt"),
            width,
            height,
            pip_pattern_boxes=folder == "matteop65-d6",
        )
        labelled = LabelledImage(photo, folder, width, height, dice)
        fixed, ignore = corrected(labelled, corrections)
        for c in items:
            assert 0 <= c.cx < width and 0 <= c.cy < height, f"{name}: outside the photo"
            if c.kind == "value":
                # the correction changes the label: the old value was not already this
                assert fixed is not None and fixed.dice != labelled.dice, name
            if c.kind in ("missing", "ignore"):
                assert all(
                    abs(d.cx - c.cx) > d.side / 2 or abs(d.cy - c.cy) > d.side / 2 for d in dice
                ), f"{name}: a die is already labelled at ({c.cx}, {c.cy})"
