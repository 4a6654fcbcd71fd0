"""The finder's half of a setup's learning in the app (issue 24 item 1,
companion.vision.adapt_finder_learn) with the real models (onnxruntime) and a real SQLite
store: the shipped features file belongs to the shipped finder; a setup keeps its
confirmed photos and dice; its refresh judges a finder head by the fold check and writes
the verdict beside the setup, which a restart reads back; confirmed dice that are not dice
are refused; an adopted head is what the setup's reader finds with, and only over the
finder it was fitted for; a damaged head file is refused naming the file; forgetting the
setup removes photos, head and verdict."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from companion.synth import render_scene
from companion.table.learning import Learning
from companion.vision.adapt_files import load_finder_head
from companion.vision.adapt_finder import AdaptedFinder, FinderRows, Spot, fit_finder_head
from companion.vision.adapt_finder_learn import FinderState
from companion.vision.adapt_gate import Verdict
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import PhotoDie, SetupStore
from companion.vision.classifier import PipClassifier
from companion.vision.finder import DiceFinder
from companion.vision.model import ModelError, default_models_dir
from companion.vision.pipeline import DiceReader
from companion.vision.types import DieBox
from models.recipe.finder_features import features_current

SETUP = "back-room"


@pytest.fixture(scope="module")
def classifier() -> PipClassifier:
    return PipClassifier.load()


@pytest.fixture(scope="module")
def finder() -> AdaptedFinder:
    return AdaptedFinder.load(DiceFinder.load())


def photos(count: int, seed: int = 40) -> list[tuple[np.ndarray, list[ConfirmedDie]]]:
    """Rendered table photos with their readable dice as confirmed."""
    out = []
    for k in range(count):
        image, dice = render_scene(seed + k, 640, 480)
        confirmed = [
            ConfirmedDie(DieBox(d.cx, d.cy, d.side, d.side, d.angle, 1.0), int(d.value))
            for d in dice
            if d.value is not None
        ]
        out.append((image, confirmed))
    return out


def spots(dice: list[ConfirmedDie]) -> list[Spot]:
    return [Spot(d.where.cx, d.where.cy, d.where.w) for d in dice]


def teach(
    learner: SetupLearner, shots: list[tuple[np.ndarray, list[ConfirmedDie]]], first: int = 0
) -> None:
    for k, (image, dice) in enumerate(shots, start=first):
        learner.record(image, dice, table_id="t1", photo=f"table t1 roll {k}", throw=k)


def test_the_shipped_features_file_is_made_from_the_shipped_finder(tmp_path: Path) -> None:
    # a new finder shipped without `python -m models.recipe.finder_features` fails here
    assert features_current(default_models_dir())
    learning = Learning(tmp_path)  # the server's: its setups' finders learn
    try:
        assert isinstance(learning.finder(), AdaptedFinder)
    finally:
        learning.close()


def test_a_setup_keeps_its_photos_judges_its_finder_and_a_restart_keeps_the_verdict(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, SETUP, classifier, finder=finder)
    shots = photos(6)
    teach(learner, shots[:4])
    learner.refresh()
    assert not learner.refresh_finder()
    assert learner.finder_verdict is None  # under 5 photos: not judged yet
    assert "judged from 5 confirmed photos" in learner.summary().finder_verdict
    teach(learner, shots[4:], first=4)
    learner.refresh()
    assert learner.refresh_finder()
    assert not learner.refresh_finder()  # judged: again only after 5 more photos
    kept = store.photos(SETUP)
    assert [p.photo for p in kept] == [f"table t1 roll {k}" for k in range(6)]
    assert [len(p.dice) for p in kept] == [len(d) for _, d in shots]
    assert all(store.photo_image(SETUP, p.photo_id) is not None for p in kept)
    verdict = learner.finder_verdict
    assert verdict is not None and verdict.folds == 6
    assert verdict.dice == sum(len(d) for _, d in shots)
    assert verdict.anchor_dice > 0  # the shipped no-forgetting photos were read
    saved = json.loads((learner.folder / "adapted" / "finder_head.json").read_text())
    assert saved["derived_from"]["sha256"] == finder.base.model.manifest.sha256
    assert saved["photos"] == [p.photo_id for p in kept]
    # a new process: the verdict is read back, and nothing is judged again until 5 more
    again = SetupLearner(SetupStore(tmp_path), SETUP, classifier, finder=finder)
    assert again.finder_verdict == verdict
    assert again.finder_learner is not None
    assert again.finder_learner.job(lambda left_out: classifier) is None
    assert again.summary().finder_verdict.startswith("finding the dice: ")
    assert again.forget() > 0
    assert again.finder_verdict is None
    assert store.photos(SETUP) == [] and not (again.folder / "adapted").exists()


def test_confirmed_dice_that_are_not_dice_do_not_teach_the_finder(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    """Every confirmed box moved onto the bare table (a setup of wrong boxes): the head
    fitted on them finds table, not dice, and is refused: on its folds (judged against
    its own wrong boxes, where it may even look better) or by the other tables' photos,
    which it reads far worse than the shipped finder."""
    learner = SetupLearner(SetupStore(tmp_path), SETUP, classifier, finder=finder)
    rng = np.random.default_rng(7)
    for k, (image, dice) in enumerate(photos(6, seed=60)):
        moved = []
        for d in dice:
            x, y = rng.uniform(40, 600), rng.uniform(40, 440)
            moved.append(ConfirmedDie(DieBox(x, y, d.where.w, d.where.h, 0.0, 1.0), d.value))
        learner.record(image, moved, photo=f"wrong {k}")
    learner.refresh()
    assert learner.refresh_finder()
    verdict = learner.finder_verdict
    assert verdict is not None and verdict.folds == 6
    assert not verdict.adopted
    if verdict.adapted_errors < verdict.shipped_errors:  # it looks better on its wrong boxes
        # (finder 1.6.0 on this setup: 54 against 70, 5-1) and is refused by the sign
        # test or, past it, by the other tables' photos; never for want of a gain it shows
        assert verdict.reason in ("not_significant", "forgets")
    assert verdict.anchor_adapted_errors > verdict.anchor_shipped_errors
    base = DiceReader.load()
    assert learner.reader(base).finder is base.finder


def test_an_adopted_head_is_what_the_setup_finds_with_and_only_over_its_own_finder(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    """The wiring, with a verdict set by hand: the fold check's own outcome is tested
    above and in tests/vision/test_adapt_finder.py."""
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, SETUP, classifier, finder=finder)
    shots = photos(3, seed=80)
    teach(learner, shots)
    learner.refresh()
    rows = FinderRows.join(
        [finder.photo_rows(image, spots(dice), k) for k, (image, dice) in enumerate(shots)]
    )
    head = fit_finder_head(rows)
    assert head is not None and learner.finder_learner is not None
    with learner.lock:
        learner.finder_learner.keep(
            FinderState(head, Verdict(reason="adopted", folds=5), (1, 2, 3))
        )
    base = DiceReader.load()
    reading = learner.reader(base).finder
    assert isinstance(reading, AdaptedFinder) and reading.head is head
    image = shots[0][0]
    adapted_maps = reading.maps(reading.prepare(image)[0])
    shipped_maps = base.finder.maps(base.finder.prepare(image)[0])
    assert np.array_equal(adapted_maps[1:], shipped_maps[1:])  # only the heat changes
    assert not np.allclose(adapted_maps[0], shipped_maps[0])
    # a restart reads the saved head (its load checks passed)
    again = SetupLearner(SetupStore(tmp_path), SETUP, classifier, finder=finder)
    restored = again.reader(base).finder
    assert isinstance(restored, AdaptedFinder) and restored.head is not None
    assert np.array_equal(restored.head.weights, head.weights)
    # another finder file (the camera loaded other models): the head does not apply
    other = DiceFinder.load()
    other.model.manifest = dataclasses.replace(other.model.manifest, sha256="0" * 64)
    assert again.reader_finder(other) is other


def test_a_damaged_finder_head_file_is_refused_naming_the_file(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    learner = SetupLearner(SetupStore(tmp_path), SETUP, classifier, finder=finder)
    rows = FinderRows.join([finder.photo_rows(image, spots(dice), 0)
                            for image, dice in photos(1, seed=90)])  # fmt: skip
    head = fit_finder_head(rows)
    assert head is not None and learner.finder_learner is not None
    learner.finder_learner.keep(FinderState(head, Verdict(reason="adopted", folds=5)))
    assert load_finder_head(learner.folder, finder) is not None  # read back as saved
    (weights,) = (learner.folder / "adapted").glob("finder_head-*.npz")
    weights.write_bytes(weights.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ModelError, match=weights.name):
        load_finder_head(learner.folder, finder)
    # the learner itself logs it and finds with the shipped finder
    again = SetupLearner(SetupStore(tmp_path), SETUP, classifier, finder=finder)
    base = DiceReader.load()
    assert again.reader_finder(base.finder) is base.finder


def test_a_big_photo_is_kept_shrunk_with_its_dice(tmp_path: Path) -> None:
    store = SetupStore(tmp_path)
    image = np.full((2160, 3840, 3), 90, np.uint8)  # a 4K frame: kept at 1920 x 1080
    photo_id = store.add_photo(SETUP, "roll 1", image, [PhotoDie(1000.0, 500.0, 80.0, 4, 7)])
    (kept,) = store.photos(SETUP)
    assert (kept.photo_id, kept.width, kept.height) == (photo_id, 1920, 1080)
    assert kept.dice == (PhotoDie(500.0, 250.0, 40.0, 4, 7),)
    assert store.photo_image(SETUP, photo_id).shape == (1080, 1920, 3)  # type: ignore[union-attr]


def test_a_check_is_due_after_five_new_photos_however_many_are_kept(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    """A setup with 30 kept photos whose latest 25 were judged: no check until 5 photos
    come after the last one judged (not on every refresh for the 5 never judged)."""
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, SETUP, classifier, finder=finder)
    table = np.full((120, 160, 3), 90, np.uint8)
    ids = [store.add_photo(SETUP, f"roll {k}", table, [PhotoDie(50.0, 50.0, 20.0, 3)])
           for k in range(30)]  # fmt: skip
    assert learner.finder_learner is not None
    job = learner.finder_learner.job(lambda left_out: classifier)
    assert job is not None and [p.photo_id for p in job.photos] == ids[-25:]
    learner.finder_learner.keep(FinderState(None, Verdict(reason="no_gain"), tuple(ids[-25:])))
    for k in range(30, 35):
        assert learner.finder_learner.job(lambda left_out: classifier) is None
        store.add_photo(SETUP, f"roll {k}", table, [PhotoDie(50.0, 50.0, 20.0, 3)])
    assert learner.finder_learner.job(lambda left_out: classifier) is not None


def test_a_deleted_die_is_taken_off_its_photo_and_a_photo_without_a_key_is_not_kept(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, SETUP, classifier, finder=finder)
    ((image, dice),) = photos(1, seed=95)
    ids = learner.record(image, dice, table_id="t1", photo="table t1 roll 1", throw=1)
    (kept,) = store.photos(SETUP)
    assert [d.example_id for d in kept.dice] == ids
    assert store.delete_example(SETUP, ids[0])
    (kept,) = store.photos(SETUP)
    assert [d.example_id for d in kept.dice] == ids[1:]
    # where it lay stays, set aside: mostly a real die with a wrong value, so the finder
    # learns its cells neither as a die nor as the table
    ((aside),) = kept.aside
    assert (aside.cx, aside.cy) == pytest.approx((dice[0].where.cx, dice[0].where.cy), abs=1)
    spot = Spot(aside.cx, aside.cy, aside.side)
    with_aside = finder.photo_rows(image, spots(dice[1:]), 0, [spot])
    without = finder.photo_rows(image, spots(dice[1:]), 0)
    assert len(with_aside.targets) < len(without.targets)  # its peak no longer "table"
    assert with_aside.targets.sum() == without.targets.sum() == len(dice) - 1
    # dice stored without a photo key are each a photo of their own for the value head's
    # folds: no whole photo can stand for them
    learner.record(image, dice)
    assert len(store.photos(SETUP)) == 1


def test_forgetting_one_table_keeps_the_other_tables_dice_and_drops_heads_learnt_from_it(
    tmp_path: Path, classifier: PipClassifier, finder: AdaptedFinder
) -> None:
    """Two tables share the setup (a café): t2's host forgets what t2 taught. Its dice,
    crops and roll photos go; t1's stay. The heads learnt from t2's dice go with them:
    the value head is refitted on t1's dice alone, and the finder head, judged on all
    six photos, is dropped, too few photos being left to judge one again."""
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, SETUP, classifier, finder=finder)
    shots = photos(6)
    first = [learner.record(image, dice, table_id="t1", photo=f"table t1 roll {k}", throw=k)
             for k, (image, dice) in enumerate(shots[:2])]  # fmt: skip
    second = [learner.record(image, dice, table_id="t2", photo=f"table t2 roll {k}", throw=k)
              for k, (image, dice) in enumerate(shots[2:])]  # fmt: skip
    learner.refresh()
    assert learner.refresh_finder() and learner.finder_verdict is not None
    assert (learner.folder / "adapted" / "finder_head.json").exists()

    assert learner.forget_table("t3") == 0  # a table that taught nothing: the heads stay
    assert (learner.folder / "adapted" / "finder_head.json").exists()
    assert learner.forget_table("t2") == sum(len(ids) for ids in second)
    kept = [s.example_id for s in store.examples(SETUP)]
    assert kept == [k for ids in first for k in ids]
    assert all(store.crop_png(SETUP, k) is None for ids in second for k in ids)
    assert [p.photo for p in store.photos(SETUP)] == ["table t1 roll 0", "table t1 roll 1"]
    assert not (learner.folder / "adapted").exists()
    assert learner.refresh().used == len(kept)
    assert not learner.refresh_finder()  # 2 photos: too few to judge a finder head again
    assert learner.finder_verdict is None
