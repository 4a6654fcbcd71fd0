"""companion.vision.datasets: the new folders read with their own label conventions (crops
whose box is the whole crop), the calibration part held back from the training folders,
near-twins kept on one side of the split, and the measure-only folders never in it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.datasets import (
    BYLER,
    CHASE,
    CROP_DIE_SHARE,
    EPANEMU,
    MATTEO,
    MEASURE_ONLY,
    RUNE55,
    SKOVY,
    TOMITOMI,
    DatasetError,
    DatasetSplit,
    bench_photos,
    default_data_root,
    epanemu_photo,
    load_measure_only,
    load_split,
    named_like,
    near_twin_groups,
    read_crop_folder,
    read_labelled_folder,
    rune55_group,
)

DATA = default_data_root()


@pytest.fixture(scope="module")
def split() -> DatasetSplit:
    return load_split(DATA)


def _crop_folder(tmp_path: Path, labels: dict[str, str]) -> Path:
    (tmp_path / "images").mkdir(parents=True)
    (tmp_path / "labels").mkdir()
    for stem, text in labels.items():
        cv2.imwrite(str(tmp_path / "images" / f"{stem}.jpg"), np.full((60, 80, 3), 90, np.uint8))
        (tmp_path / "labels" / f"{stem}.txt").write_text(text, encoding="utf-8")
    return tmp_path


def test_tomitomi_crops_are_single_centred_dice_of_part_of_the_crop() -> None:
    crops = read_labelled_folder(DATA / TOMITOMI)
    assert len(crops) == 2400
    assert Counter(c.dice[0].value for c in crops) == {v: 400 for v in range(1, 7)}
    for crop in crops[::97]:
        (die,) = crop.dice
        assert (crop.width, crop.height) == (128, 128)
        assert (die.cx, die.cy) == (64, 64)
        assert die.side == pytest.approx(128 * CROP_DIE_SHARE[TOMITOMI])
        assert crop.path.name.startswith(f"p{die.value}_")  # p<pips>_<number>.jpg


def test_chase_crops_are_read_as_one_die_filling_the_crop() -> None:
    crops = read_labelled_folder(DATA / CHASE)
    assert len(crops) == 279
    assert Counter(c.dice[0].value for c in crops) == {1: 57, 2: 43, 3: 50, 4: 45, 5: 45, 6: 39}
    for crop in crops:
        (die,) = crop.dice
        assert (die.w, die.h) == (crop.width, crop.height)
        assert (die.cx, die.cy) == (crop.width / 2, crop.height / 2)


def test_a_crop_label_that_is_not_the_whole_crop_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    folder = _crop_folder(
        tmp_path / CHASE, {"good": "2 0.5 0.5 1.0 1.0\n", "bad": "2 0.4 0.5 0.5 1\n"}
    )
    with pytest.raises(DatasetError, match=r"bad\.txt: a crop's box must be the whole crop"):
        read_crop_folder(folder)


def test_a_crop_label_with_two_dice_is_refused(tmp_path: Path) -> None:
    folder = _crop_folder(tmp_path / TOMITOMI, {"p1_00001": "0 0.5 0.5 1 1\n0 0.5 0.5 1 1\n"})
    with pytest.raises(DatasetError, match=r"p1_00001\.txt: a crop's label holds one die"):
        read_crop_folder(folder)


def test_a_well_formed_crop_folder_gives_its_dice(tmp_path: Path) -> None:
    folder = _crop_folder(tmp_path / CHASE, {"a": "4 0.5 0.5 1 1\n", "b": "0 0.5 0.5 1 1\n"})
    crops = read_crop_folder(folder)
    assert [(c.path.stem, c.dice[0].value, c.dice[0].w, c.dice[0].h) for c in crops] == [
        ("a", 5, 80, 60),
        ("b", 1, 80, 60),
    ]


def test_skovy_is_read_as_labelled_scenes() -> None:
    measure = load_measure_only(DATA)
    assert set(measure) == set(MEASURE_ONLY)
    skovy = measure[SKOVY]
    assert (len(skovy), sum(len(im.dice) for im in skovy)) == (49, 98)
    assert Counter(d.value for im in skovy for d in im.dice) == {
        1: 8, 2: 17, 3: 19, 4: 25, 5: 18, 6: 11
    }  # fmt: skip
    assert all(60 <= d.w <= 90 for im in skovy for d in im.dice)  # 60-88 px wide


def test_the_measure_only_folders_are_never_in_the_split(split: DatasetSplit) -> None:
    everything = [*split.train, *split.train_crops, *split.all_calibration()]
    everything += split.all_validation()
    assert not [im for im in everything if im.folder in MEASURE_ONLY]
    assert not [im for im in everything for name in MEASURE_ONLY if name in im.path.parts]


def test_the_calibration_part_is_held_back_from_training_and_validation(
    split: DatasetSplit,
) -> None:
    trained = {im.path for im in (*split.train, *split.train_crops)}
    held_back = {im.path for im in split.all_calibration()}
    validation = {im.path for im in split.all_validation()}
    assert held_back and not held_back & trained and not held_back & validation
    assert not trained & validation
    assert set(split.calibration) == {BYLER, EPANEMU, MATTEO, RUNE55, TOMITOMI}
    assert all(split.calibration[name] for name in split.calibration)
    # the finder never trains on single-die crops; the classifier's crops are tomitomi's
    assert {im.folder for im in split.train} == {BYLER, EPANEMU, MATTEO, RUNE55}
    assert {im.folder for im in split.train_crops} == {TOMITOMI}


def test_every_copy_of_an_epanemu_photo_is_on_one_side(split: DatasetSplit) -> None:
    held_back = {epanemu_photo(im.path) for im in split.calibration[EPANEMU]}
    trained = {epanemu_photo(im.path) for im in split.train if im.folder == EPANEMU}
    assert held_back and not held_back & trained
    copies = Counter(epanemu_photo(im.path) for im in split.calibration[EPANEMU])
    assert max(copies.values()) == 3  # a photo comes with its augmented copies


def test_the_matteop65_calibration_part_is_one_whole_session(split: DatasetSplit) -> None:
    names = {im.path.name for im in split.calibration[MATTEO]}
    assert names and all(name.startswith("six_") for name in names)
    assert not [im for im in split.train if im.path.name.startswith("six_")]
    # the session holds every value (so the confidence map sees all six faces)
    assert {d.value for im in split.calibration[MATTEO] for d in im.dice} == set(range(1, 7))


def test_tomitomi_near_twins_never_straddle_two_parts(split: DatasetSplit) -> None:
    part = {im.path: "train" for im in split.train_crops}
    part.update({im.path: "calibration" for im in split.calibration[TOMITOMI]})
    part.update({im.path: "validation" for im in split.validation[TOMITOMI]})
    assert len(part) == 2400
    paths = sorted(part)
    groups = near_twin_groups(paths)
    assert sum(len(g) for g in groups) > 200  # the README counts 219 crops with a twin
    assert all(len({part[paths[k]] for k in group}) == 1 for group in groups)
    assert 200 <= len(split.calibration[TOMITOMI]) <= 300
    assert 200 <= len(split.validation[TOMITOMI]) <= 300


def test_rune55_is_read_as_greyscale_scenes_with_pips_as_class_plus_one() -> None:
    images = read_labelled_folder(DATA / RUNE55)
    assert len(images) == 1489 and sum(len(im.dice) for im in images) == 5232
    assert {(im.width, im.height) for im in images} == {(640, 640)}
    values = Counter(d.value for im in images for d in im.dice)
    assert set(values) == set(range(1, 7)) and min(values.values()) > 500
    first = images[0]  # 00000_jpg.rf.03fc...: "cls xc yc w h", pips = cls + 1
    label = DATA / RUNE55 / "labels" / f"{first.path.stem}.txt"
    cls, xc, yc, w, h = label.read_text(encoding="utf-8").split()[:5]
    assert first.dice[0].value == int(cls) + 1
    assert first.dice[0].cx == pytest.approx(float(xc) * 640)
    assert first.dice[0].w == pytest.approx(float(w) * 640)
    picture = first.load()
    assert np.abs(picture[..., 0].astype(int) - picture[..., 2]).max() < 30  # greyscale


def test_rune55_groups_of_similar_photos_never_straddle_two_parts(split: DatasetSplit) -> None:
    part = {im.path: "train" for im in split.train if im.folder == RUNE55}
    part.update({im.path: "calibration" for im in split.calibration[RUNE55]})
    part.update({im.path: "validation" for im in split.validation[RUNE55]})
    assert len(part) == 1489
    by_group: dict[str, set[str]] = {}
    for path, where in part.items():
        by_group.setdefault(rune55_group(path), set()).add(where)
    assert all(len(parts) == 1 for parts in by_group.values())
    assert 200 <= len(split.validation[RUNE55]) <= 350
    assert 200 <= len(split.calibration[RUNE55]) <= 350


def test_rune55_groups_join_a_photos_copies_and_neighbouring_frames() -> None:
    group = rune55_group
    assert group(Path("00117_jpg.rf.d1.jpg")) == group(Path("00117_jpg.rf.3a.jpg"))
    assert group(Path("00117_jpg.rf.d1.jpg")) == group(Path("00113_jpg.rf.77.jpg"))
    assert group(Path("00117_jpg.rf.d1.jpg")) != group(Path("00121_jpg.rf.d1.jpg"))
    assert group(Path("IMG_0662_jpeg_jpg.rf.a.jpg")) == group(Path("IMG_0668_jpeg.rf.b.jpg"))
    assert group(Path("AKYvOkMr5c4xXRkTjuMD_jpg.rf.c.jpg")) == "AKYvOkMr5c4xXRkTjuMD"


def test_near_twin_groups_join_copies_and_leave_other_pictures_alone(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    ramp = np.add.outer(np.arange(64.0), 2 * np.arange(64.0))  # brighter to the right

    def picture(centre: tuple[int, int]) -> np.ndarray:
        image = ramp.copy()
        cv2.circle(image, centre, 12, 0.0, -1)
        return image

    base = picture((20, 30))
    noisy = base + rng.normal(0, 1.5, base.shape)
    paths = []
    for name, image in (("a", base), ("b", picture((44, 30))), ("c", noisy)):
        paths.append(tmp_path / f"{name}.png")
        cv2.imwrite(str(paths[-1]), np.clip(image, 0, 255).astype(np.uint8))
    assert near_twin_groups(paths) == [[0, 2]]


def test_one_camera_of_rune55_is_chosen_by_its_file_names(split: DatasetSplit) -> None:
    validation = split.validation[RUNE55]
    tower = named_like(validation, "^[0-9]+_jpg")
    board = named_like(validation, "^(?![0-9]+_jpg)")
    assert tower and board
    assert len(tower) + len(board) == len(validation)
    assert all(im.path.name[:5].isdigit() for im in tower)
    assert not any(im.path.name[:5].isdigit() for im in board)
    assert named_like(validation, None) == list(validation)
    # the benches' FOLDER --part validation --names REGEX: the same photos, by file name
    folder = default_data_root() / RUNE55
    chosen = bench_photos(folder, "validation", "^[0-9]+_jpg")
    assert chosen == sorted(tower, key=lambda im: im.path.name)
    assert len(bench_photos(folder, None, "^[0-9]+_jpg")) > len(chosen)  # every part
