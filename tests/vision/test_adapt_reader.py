"""A setup that learns, end to end with the real pip classifier (onnxruntime) and a real
SQLite store: confirmed dice stored and reloaded across a restart, the adapted reader
beating the cold one on the held-back part of a fixture folder (also when a share of the
taught values are wrong taps), and a deleted setup leaving no crop behind.

The fixture (tests/fixtures/adapt, made by its make.py) is the 256 crops of
tomitomi-dish-crops' validation blocks, which no model trains on, as one mosaic in a fixed
shuffled order, each one painted with a large ringed spot (a table of logo dice) that
classifiers 1.4 and 1.5 misread about half the time; the even cells are the rolls a table
confirmed, the odd ones are read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from companion.synth import render_scene
from companion.vision.adapt import AdaptedClassifier, ValueHead, adapt, fit_value_head
from companion.vision.adapt_files import embedding_width, load_head
from companion.vision.adapt_gate import MIN_MAP_DICE, Verdict, fold_map
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner, embed_crops, model_key
from companion.vision.adapt_store import SetupError, SetupStore, ViewUpdate
from companion.vision.classifier import PipClassifier
from companion.vision.confidence import ConfidenceMap, upper_bound
from companion.vision.finder import DiceFinder
from companion.vision.pipeline import DiceReader, calibrate_for
from companion.vision.types import DieBox, DieReading

# classifier 2.0.2 misreads 12 of the 128 read cells cold (adapted: 3; 1.5.0 14 and 0, with the
# ring's grey at 230); a classifier that misreads fewer than this makes the comparison say
# little: re-choose the fixture then
MIN_COLD_ERRORS = 8


@pytest.fixture(scope="module")
def classifier() -> PipClassifier:
    return PipClassifier.load()


def confirm(
    boxes: list[DieBox], values: np.ndarray, cells: range | list[int]
) -> list[ConfirmedDie]:
    return [ConfirmedDie(boxes[k], int(values[k])) for k in cells]


def record_cells(
    learner: SetupLearner, image: np.ndarray, dice: list[ConfirmedDie], cells: list[int]
) -> None:
    """Each cell as the photo of its own roll (the fixture's crops come from separate photos)."""
    for die, k in zip(dice, cells, strict=True):
        learner.record(image, [die], photo=f"cell {k}", throw=k)


def errors(
    classifier: PipClassifier, image: np.ndarray, boxes: list[DieBox], values: np.ndarray
) -> int:
    readings = classifier.read(image, boxes)
    return sum(value != int(truth) for (value, _, _), truth in zip(readings, values, strict=True))


def wrong_taps(values: np.ndarray, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`values` with `share` of them replaced by another value, and which."""
    rng = np.random.default_rng(seed)
    wrong = rng.random(len(values)) < share
    out = values.copy()
    out[wrong] = (out[wrong] - 1 + rng.integers(1, 6, int(wrong.sum()))) % 6 + 1
    return out, wrong


def taught_and_read(
    mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> tuple[list[int], list[int]]:
    _, boxes, _ = mosaic
    return list(range(0, len(boxes), 2)), list(range(1, len(boxes), 2))


def taught_learner(
    store: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> tuple[SetupLearner, ValueHead]:
    """A setup with the mosaic's even cells confirmed, and the head it refreshes to."""
    image, boxes, values = mosaic
    taught, _ = taught_and_read(mosaic)
    learner = SetupLearner(SetupStore(store), "kitchen", classifier)
    record_cells(learner, image, confirm(boxes, values, taught), taught)
    return learner, learner.refresh().head


def test_the_adapted_reader_beats_the_cold_one_on_the_held_back_part(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    _, read = taught_and_read(mosaic)
    learner, head = taught_learner(tmp_path, classifier, mosaic)
    adapted = AdaptedClassifier(classifier, head)
    held_boxes, held_values = [boxes[k] for k in read], values[read]
    cold = errors(classifier, image, held_boxes, held_values)
    assert cold >= MIN_COLD_ERRORS, f"the cold reader misreads only {cold}: re-choose the fixture"
    assert learner.adaptation is not None and learner.adaptation.head.active
    assert errors(adapted, image, held_boxes, held_values) <= cold // 4


def test_an_adopted_head_vouches_for_no_more_than_its_left_out_photos_showed(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """The shipped map was fitted for the shipped head: a die read by the setup's head is
    at most as sure as the head's own left-out dice bound it (Verdict.ceiling), through the
    whole pipeline (real finder, real map); the shipped reader is not bounded so."""
    _, head = taught_learner(tmp_path, classifier, mosaic)
    assert head.active
    ceiling = head.gate.ceiling
    assert ceiling == pytest.approx(1.0 - upper_bound(head.gate.adapted_errors, head.gate.dice))
    assert 0.9 < ceiling < 0.995  # 128 left-out dice cannot vouch for one wrong in 500
    finder = DiceFinder.load()
    cold, learnt = (
        DiceReader(finder, classifier),
        DiceReader(finder, AdaptedClassifier(classifier, head)),
    )
    cold_sure = learnt_sure = 0.0
    for seed in range(4):
        scene_image, _ = render_scene(np.random.default_rng(seed), 640, 480)
        cold_read = [d.confidence for d in cold.read(scene_image).dice if d.value is not None]
        read = [d.confidence for d in learnt.read(scene_image).dice if d.value is not None]
        assert read, seed
        cold_sure, learnt_sure = max(cold_sure, *cold_read), max(learnt_sure, *read)
    assert cold_sure > ceiling  # else the bound would change nothing here
    assert learnt_sure <= ceiling + 1e-9


def test_a_verdict_bounds_only_an_adopted_head_and_the_more_it_erred_the_lower() -> None:
    refused = Verdict(reason="no_gain", dice=500, adapted_errors=0)
    assert refused.ceiling == 1.0
    bounds = [Verdict(reason="adopted", dice=150, adapted_errors=e).ceiling for e in (0, 1, 5)]
    assert bounds[0] == pytest.approx(0.980, abs=0.001)
    assert bounds[0] > bounds[1] > bounds[2]
    assert Verdict(reason="adopted", dice=1500, adapted_errors=0).ceiling >= 0.998
    assert "at most 0.980 sure" in Verdict(reason="adopted", dice=150).words()
    assert "sure" not in refused.words()


def test_a_poisoned_setup_never_reads_worse_than_the_cold_reader(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """A quarter of the taught values are wrong taps (four draws of them): most are held
    back for the host; the reader of each poisoned setup reads the held-back cells no worse
    than the cold one (the fold check refuses a head it cannot trust), and the learning
    still survives the poison on at least one draw (with classifier 1.5.0 and the 230 grey
    ring: two of four adopted, 14 errors to 0; the other two refused by the fold check, one
    for a face read worse, one not significant; 1.4.0 with the 200 ring: one of four)."""
    image, boxes, values = mosaic
    taught, read = taught_and_read(mosaic)
    held_boxes, held_values = [boxes[k] for k in read], values[read]
    cold = errors(classifier, image, held_boxes, held_values)
    better = 0
    for seed in (15, 16, 17, 18):
        tapped, wrong = wrong_taps(values[taught], 0.25, seed=seed)
        assert wrong.sum() >= 20
        learner = SetupLearner(SetupStore(tmp_path / str(seed)), "kitchen", classifier)
        dice = [ConfirmedDie(boxes[k], int(v)) for k, v in zip(taught, tapped, strict=True)]
        record_cells(learner, image, dice, taught)
        summary = learner.summary()
        caught = set(summary.held)
        ids = [s.example_id for s in learner.stored]
        wrong_ids = {ids[k] for k in np.flatnonzero(wrong)}
        assert len(caught & wrong_ids) >= 0.8 * len(wrong_ids), seed
        assert len(caught - wrong_ids) <= 3, seed  # few right taps held back
        head = learner.refresh().head
        adapted = errors(AdaptedClassifier(classifier, head), image, held_boxes, held_values)
        assert adapted <= cold, (seed, head.gate.words())
        assert head.active == head.gate.adopted
        better += adapted < cold
    assert better >= 1, "no poisoned setup learnt anything"


def test_stored_dice_come_back_after_a_restart(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, "kitchen", classifier)
    ids = learner.record(
        image, confirm(boxes, values, range(0, 40)), table_id="t1", photo="p1", throw=3
    )
    before = learner.refresh()
    probe = classifier.classify(image, boxes[100:110])
    store.close()

    again = SetupStore(tmp_path)  # a new process opening the same data directory
    reloaded = SetupLearner(again, "kitchen", classifier)
    after = reloaded.refresh()
    assert [s.example_id for s in reloaded.stored] == ids
    assert [s.example.value for s in reloaded.stored] == [int(v) for v in values[:40]]
    first = reloaded.stored[0]
    assert (first.table_id, first.photo, first.throw, first.source) == ("t1", "p1", 3, "read")
    assert first.example.probabilities is not None and first.example.lab is not None
    assert first.example.views is not None and first.example.views.shape == (
        8,
        embedding_width(classifier),
    )
    assert first.example.view_probabilities is not None
    assert after.head.gate == before.head.gate and after.head.active == before.head.active
    assert np.allclose(
        after.head.adjust(probe.probabilities, probe.embeddings),
        before.head.adjust(probe.probabilities, probe.embeddings),
    )
    crop = again.crop("kitchen", ids[0])
    assert crop is not None and crop.shape == (64, 64, 3)


def test_deleting_a_setup_deletes_its_crops_and_only_its_own(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    store = SetupStore(tmp_path)
    kitchen = SetupLearner(store, "kitchen", classifier).record(
        image, confirm(boxes, values, range(10))
    )
    SetupLearner(store, "garden", classifier).record(image, confirm(boxes, values, range(10, 15)))
    paths = [store.crop_path("kitchen", k) for k in kitchen]
    assert all(p.is_file() for p in paths)
    assert store.setups() == {"garden": 5, "kitchen": 10}

    assert store.delete_setup("kitchen") == 10
    assert not any(p.exists() for p in paths)
    assert not (tmp_path / "setups" / "kitchen").exists()
    assert store.examples("kitchen") == [] and store.setups() == {"garden": 5}
    assert len(list((tmp_path / "setups" / "garden").glob("*.png"))) == 5


def test_one_die_is_deleted_or_kept_by_the_host(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    store = SetupStore(tmp_path)
    ids = SetupLearner(store, "kitchen", classifier).record(image, confirm(boxes, values, range(3)))
    assert store.keep("kitchen", ids[1])
    assert [s.example.kept_by_host for s in store.examples("kitchen")] == [False, True, False]
    assert store.delete_example("kitchen", ids[0])
    assert not store.crop_path("kitchen", ids[0]).exists()
    assert not store.delete_example("kitchen", ids[0])  # gone already
    assert not store.delete_example("garden", ids[1])  # another setup's id
    assert [s.example_id for s in store.examples("kitchen")] == ids[1:]


def test_a_new_classifier_embeds_the_stored_crops_again(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = mosaic
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, "kitchen", classifier)
    ids = learner.record(image, confirm(boxes, values, range(6)))
    original = np.stack([s.example.embedding for s in store.examples("kitchen")])
    zero = np.zeros_like(original[0])
    store.set_features(
        [ViewUpdate(k, zero, np.zeros((8, len(zero))), np.zeros((8, 7))) for k in ids],
        "an older classifier",
    )
    learner.refresh()
    stored = store.examples("kitchen")
    assert {s.model for s in stored} == {model_key(classifier)}
    again = np.stack([s.example.embedding for s in stored])
    cosine = (
        (again * original).sum(1) / np.linalg.norm(again, axis=1) / np.linalg.norm(original, axis=1)
    )
    assert cosine.min() > 0.9  # from the 64 px crop, close to the frame's own
    crop = store.crop("kitchen", ids[0])
    assert crop is not None
    assert np.allclose(embed_crops(classifier, [crop]), again[:1], atol=1e-5)
    views = stored[0].example.views
    assert views is not None and np.allclose(views[0], again[0], atol=1e-5)


def test_a_record_kept_without_its_views_gets_them_from_its_crop(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """A store written before the views were kept: its records get them at the next
    refresh, made from their crops, and keep the embedding made from the photo."""
    image, boxes, values = mosaic
    store = SetupStore(tmp_path)
    learner = SetupLearner(store, "kitchen", classifier)
    learner.record(image, confirm(boxes, values, range(4)))
    with store._transaction() as db:  # as an older companion wrote them
        db.execute("UPDATE examples SET views = NULL, view_probabilities = NULL")
    before = store.examples("kitchen")
    assert all(s.example.views is None for s in before)
    learner.refresh()
    after = store.examples("kitchen")
    for old, new in zip(before, after, strict=True):
        assert new.example.views is not None and new.example.views.shape == (
            8,
            embedding_width(classifier),
        )
        assert new.example.view_probabilities is not None
        # probabilities (an int8 classifier's softmax is float, models/recipe/quantise.py)
        assert np.allclose(new.example.view_probabilities.sum(axis=1), 1.0, atol=1e-4)
        assert np.array_equal(new.example.embedding, old.example.embedding)
        # the views read the same die: its value stays the likeliest in most of them
        value = new.example.value - 1
        assert (new.example.view_probabilities.argmax(axis=1) == value).sum() >= 4


def test_an_older_store_file_gains_the_view_columns(tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / "setups.sqlite3")
    db.executescript(
        "CREATE TABLE examples (example_id INTEGER PRIMARY KEY AUTOINCREMENT, setup TEXT NOT NULL,"
        " value INTEGER NOT NULL, colour TEXT, set_index INTEGER, lab_l REAL, lab_a REAL,"
        " lab_b REAL, embedding BLOB NOT NULL, probabilities BLOB, model TEXT NOT NULL,"
        " table_id TEXT, photo TEXT, throw INTEGER, source TEXT NOT NULL,"
        " kept_by_host INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);"
        "INSERT INTO examples (setup, value, embedding, model, source, created_at)"
        " VALUES ('kitchen', 3, x'0000803f0000803f', 'm', 'read', 1.0);"
    )
    db.commit()
    db.close()
    (only,) = SetupStore(tmp_path).examples("kitchen")
    assert only.example.value == 3 and only.example.views is None


@pytest.mark.parametrize("name", ["", "../etc", "a/b", "x" * 49, "kitchen table"])
def test_a_setup_is_named_as_a_calibration_is(tmp_path: Path, name: str) -> None:
    with pytest.raises(SetupError):
        SetupStore(tmp_path).examples(name)


def test_adapting_five_hundred_dice_takes_no_model_call(
    classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """The fit works on stored embeddings alone (bench/adapt_speed.py times it)."""
    image, boxes, values = mosaic
    classified = classifier.classify(image, boxes)
    assert classified.embeddings is not None
    from companion.vision.adapt import Example

    examples = [
        Example(
            int(values[k % len(values)]),
            classified.embeddings[k % len(values)],
            classified.probabilities[k % len(values)],
        )
        for k in range(500)
    ]
    adaptation = adapt(examples, second_look_below=classifier.second_look_below)
    assert adaptation.used + len(adaptation.held) == 500
    assert adaptation.head.examples == adaptation.used
    assert adaptation.head.gate.dice == adaptation.used
    assert adaptation.head.gate.folds == 25  # every photo left out once, in at most 25 folds


def test_the_head_bench_reads_as_the_adapted_classifier(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    classifier: PipClassifier,
    mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> None:
    """bench/adapt_heads.py reads cached views instead of crops (read_cached): it must give
    what AdaptedClassifier.classify gives, second look included."""
    import importlib.util
    import sys

    from companion.vision.adapt_look import crop_looks
    from companion.vision.classifier import symmetric_views
    from companion.vision.pipeline import classify

    spec = importlib.util.spec_from_file_location(
        "adapt_heads", Path(__file__).resolve().parents[2] / "bench" / "adapt_heads.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "adapt_heads", bench)  # its dataclasses look it up
    spec.loader.exec_module(bench)
    image, boxes, values = mosaic
    _, read = taught_and_read(mosaic)
    learner, head = taught_learner(tmp_path, classifier, mosaic)
    assert head.active
    read_boxes = [boxes[k] for k in read]
    crops = classifier.crops(image, read_boxes)
    outputs = classifier.model.run(
        classifier.model.normalise(np.concatenate([crops, symmetric_views(crops)]))
    )
    assert classifier.embedding_index is not None
    views = outputs[classifier.embedding_index].reshape(8, len(read), -1).transpose(1, 0, 2)
    shipped = outputs[classifier.probabilities_index].reshape(8, len(read), -1).transpose(1, 0, 2)
    # a threshold above the shipped one, so that this fixture's dice get second looks
    looking = PipClassifier.load()
    looking.second_look_below = below = 0.99
    one_look = PipClassifier.load()
    one_look.second_look_below = 0.0
    expected = AdaptedClassifier(looking, head).classify(image, read_boxes)
    first = AdaptedClassifier(one_look, head).classify(image, read_boxes)
    assert not np.allclose(first.probabilities, expected.probabilities, atol=1e-4)  # it counts
    assert head.reads_by_look  # the learner measured its dice's looks
    looks = crop_looks(image, read_boxes, classifier.margin)
    probabilities, confidence = bench.read_cached(head, views, shipped, below, looks)
    assert np.allclose(probabilities, expected.probabilities, atol=1e-4)
    assert expected.confidence is not None
    assert np.allclose(confidence, expected.confidence, atol=1e-4)
    cold = looking.classify(image, read_boxes).probabilities
    assert np.allclose(bench.read_cached(None, views, shipped, below)[0], cold, atol=1e-4)
    # the pipeline's dice carry the head's confidence: a head taught a dozen dice (few of
    # each face) gives some of them less than their top probability
    few = fit_value_head([s.example for s in learner.stored[:12]])
    assert few.active
    small = AdaptedClassifier(classifier, few).classify(image, read_boxes)
    assert small.confidence is not None
    assert (small.confidence < small.probabilities.max(axis=1) - 1e-6).any()
    readings = classify(AdaptedClassifier(classifier, few), image, read_boxes)
    assert np.allclose([r.confidence for r in readings], small.confidence, atol=1e-5)


def load_bench(monkeypatch: pytest.MonkeyPatch, name: str) -> Any:
    """A bench/ script as a module (its dataclasses look it up in sys.modules)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_the_bench_finder_check_reads_each_fold_with_a_head_that_never_saw_it(
    monkeypatch: pytest.MonkeyPatch,
    classifier: PipClassifier,
    mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> None:
    """bench/adapt.py's finder fold check reads a fold's left-out photos with the value
    head fitted (and gated) without them, not with the head fitted on all K photos (which
    has seen their dice); with none left out (the no-forgetting sample), the full head."""
    from companion.vision.adapt_learn import new_examples

    bench = load_bench(monkeypatch, "adapt")
    image, boxes, values = mosaic
    cells = list(range(0, len(boxes), 2))
    made = new_examples(classifier, image, confirm(boxes, values, cells))
    examples = [bench.as_example(n, f"cell {k}") for n, k in zip(made, cells, strict=True)]
    below = classifier.second_look_below
    full = adapt(examples, second_look_below=below).head
    assert full.active and full.delta is not None
    classifier_for = bench.fold_classifiers(classifier, examples, None, full)
    assert classifier_for(frozenset()).head is full
    left_out = frozenset({"cell 0", "cell 2", "cell 4", "cell 6"})
    fold = classifier_for(left_out)
    assert classifier_for(left_out) is fold  # made once per fold
    rest = [e for e in examples if e.photo not in left_out]
    alone = adapt(rest, second_look_below=below).head
    assert np.array_equal(fold.head.counts, alone.counts) and fold.head.examples <= len(rest)
    assert fold.head.delta is not None and alone.delta is not None
    assert np.array_equal(fold.head.delta.weights, alone.delta.weights)
    assert not np.array_equal(fold.head.delta.weights, full.delta.weights)


def test_the_bench_features_cache_is_per_finder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bench/adapt.py makes the finder's features file in a folder named by the finder
    file's sha256: another --models with another finder does not reuse it."""
    bench = load_bench(monkeypatch, "adapt")
    one, two = tmp_path / "one.onnx", tmp_path / "two.onnx"
    one.write_bytes(b"a finder")
    two.write_bytes(b"another finder")
    root = tmp_path / "cache"
    assert bench.features_cache(one, root) == bench.features_cache(one, root)
    assert bench.features_cache(one, root) != bench.features_cache(two, root)
    assert bench.features_cache(one, root).parent == root


def test_an_adopted_head_is_scored_by_the_map_its_folds_refitted_and_keeps_it_on_restart(
    tmp_path: Path, classifier: PipClassifier, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """The shipped map scores the shipped head's probabilities; an adopted head's raw
    confidence is mapped by the isotonic fit on its own left-out dice (issue 24 item 2),
    under the shipped auto-apply threshold and the folds' ceiling; a refused head's reader
    keeps the shipped map; the map is saved with the head and read back by a restart."""
    learner, head = taught_learner(tmp_path, classifier, mosaic)
    assert head.active
    fold_map_ = head.confidence_map
    assert fold_map_ is not None
    shipped_map = classifier.confidence_map
    assert shipped_map is not None
    adapted = AdaptedClassifier(classifier, head)
    assert adapted.confidence_map is not None
    assert adapted.confidence_map.xs == fold_map_.xs and adapted.confidence_map.ys == fold_map_.ys
    assert adapted.confidence_map.threshold == shipped_map.threshold
    assert adapted.confidence_map.looks is None  # its raw confidence, not the shipped looks
    assert list(fold_map_.ys) == sorted(fold_map_.ys)  # isotonic
    assert fold_map_.ys[-1] < 1.0  # no block of left-out dice claims certainty
    # through the reader: a die the head reads is scored by the fold map, then capped at
    # the folds' ceiling
    reader = DiceReader(DiceFinder.load(), adapted)
    scene, _ = render_scene(np.random.default_rng(3), 640, 480)
    read = [d for d in reader.read(scene).dice if d.value is not None]
    assert read
    for die in read:
        confidence = adapted.classify(scene, [die.where]).confidence
        assert confidence is not None  # the head's own raw confidence
        raw = float(confidence[0])
        expected = min(fold_map_(raw), head.gate.ceiling)
        assert die.confidence == pytest.approx(expected, abs=1e-6)
    # below the ceiling the map decides, and says otherwise than the shipped map would: a
    # die read at a raw confidence no left-out die was read at
    raw = 0.25
    assert fold_map_(raw) < head.gate.ceiling - 0.05
    unsure = (DieReading(read[0].where, 3, raw),)
    assert calibrate_for(adapted, unsure)[0].confidence == pytest.approx(fold_map_(raw))
    assert abs(calibrate_for(classifier, unsure)[0].confidence - fold_map_(raw)) > 1e-3

    refused = ValueHead(None, head.counts, Verdict("no_gain", folds=5), fold_map_)
    kept = AdaptedClassifier(classifier, refused).confidence_map
    assert kept is not None and kept.to_json() == shipped_map.to_json()

    saved = load_head(learner.folder, classifier)
    assert saved is not None and saved.head.confidence_map is not None
    assert saved.head.confidence_map.xs == pytest.approx(fold_map_.xs, abs=1e-6)
    assert saved.head.confidence_map.ys == pytest.approx(fold_map_.ys, abs=1e-6)


def test_the_folds_refit_a_map_only_from_enough_left_out_dice() -> None:
    assert fold_map([0.9] * (MIN_MAP_DICE - 1), [True] * (MIN_MAP_DICE - 1)) is None
    fitted = fold_map([0.6] * 15 + [0.95] * 15, [False] * 5 + [True] * 10 + [True] * 15)
    assert fitted is not None and fitted.threshold is None
    assert fitted(0.6) == pytest.approx((10 + 0.5) / 16)
    assert fitted(0.95) == pytest.approx((15 + 0.5) / 16)
    # below the least sure left-out die it falls to 0 at raw 0, not flat at its value
    assert fitted(0.3) == pytest.approx(fitted(0.6) / 2)
    assert fitted(0.0) == 0.0
    # all read right: one pooled block, yet a die read at half its raw is half as sure
    pooled = fold_map([0.8] * 10 + [0.99] * 30, [True] * 40)
    assert pooled is not None and pooled(0.99) == pytest.approx(40.5 / 41)
    assert pooled(0.4) == pytest.approx(pooled(0.8) / 2)
    # saved with 6 decimals and read back: a least sure die at raw 1e-8 or tied raws
    # must not make two points of one
    for raws in ([1e-8] + [0.9] * 40, [0.1234567] * 3 + [0.12345671] * 2 + [0.99] * 30):
        fitted = fold_map(raws, [False] * 5 + [True] * (len(raws) - 5))
        assert fitted is not None
        again = ConfidenceMap.from_json(fitted.to_json())
        assert again.xs == fitted.xs and again.ys == pytest.approx(fitted.ys, abs=1e-6)
