"""The fold check that decides whether a setup's adapted reader reads (issue 24), end to
end with the real pip classifier (onnxruntime), a real SQLite store and the shipped
no-forgetting sample (models/adapt_anchor.*): a setup whose dice the shipped classifier
misreads is adopted on its left-out photos; a setup of random wrong labels is refused; the
head and its verdict are written with a manifest the load checks pass, and a restart
reads with them before any refit.

The fixture is tests/fixtures/adapt (see tests/vision/test_adapt_reader.py): the 256 crops
of tomitomi-dish-crops' validation blocks, no model's training data, shuffled, each one
painted with a large ringed spot (logo dice) that classifier 1.4 misreads about half the
time."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.vision.adapt import ValueHead
from companion.vision.adapt_anchor import read_anchor
from companion.vision.adapt_files import (
    ADAPTED_DIR,
    HEAD_FILE,
    MANIFEST_FILE,
    embedding_width,
    load_head,
    save_head,
    write_head_file,
)
from companion.vision.adapt_fit import Delta
from companion.vision.adapt_gate import REASONS, SIGN_ALPHA, Verdict, decide, sign_test
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner
from companion.vision.adapt_store import SetupStore
from companion.vision.classifier import PipClassifier
from companion.vision.model import ModelError
from companion.vision.types import DieBox

Mosaic = tuple[np.ndarray, list[DieBox], np.ndarray]


@pytest.fixture(scope="module")
def classifier() -> PipClassifier:
    return PipClassifier.load()


def taught(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic, values: np.ndarray
) -> SetupLearner:
    """A setup that confirmed the even cells with `values`, each cell a photo of its own."""
    image, boxes, _ = mosaic
    learner = SetupLearner(SetupStore(tmp_path), "kitchen", classifier)
    for k in range(0, len(boxes), 2):
        learner.record(image, [ConfirmedDie(boxes[k], int(values[k]))], photo=f"cell {k}")
    return learner


def read_values(classifier: PipClassifier, mosaic: Mosaic, cells: range) -> list[int | None]:
    image, boxes, _ = mosaic
    return [value for value, _, _ in classifier.read(image, [boxes[k] for k in cells])]


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    [(0, 0, 1.0), (5, 0, 1 / 32), (4, 0, 1 / 16), (9, 1, 11 / 1024), (3, 4, 99 / 128)],
)
def test_the_sign_test_is_one_sided_over_untied_folds(wins: int, losses: int, p: float) -> None:
    assert sign_test(wins, losses) == pytest.approx(p)


@pytest.mark.parametrize(
    ("shipped", "adapted", "anchor", "reason", "worse"),
    [
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], (200, 10, 10), "adopted", ()),
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], (200, 10, 10), "face_worse", (2,)),
        ([1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0], (200, 10, 10), "not_significant", ()),  # 4 wins
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 6], (200, 10, 10), "no_gain", ()),
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], (200, 10, 11), "forgets", ()),
        ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], None, "adopted", ()),  # no sample: not checked
    ],
)
def test_the_verdict_needs_fewer_errors_the_sign_test_every_face_and_no_forgetting(
    shipped: list[int],
    adapted: list[int],
    anchor: tuple[int, int, int] | None,
    reason: str,
    worse: tuple[int, ...],
) -> None:
    verdict = decide(np.array(shipped), np.array(adapted), anchor, worse)
    assert verdict.reason == reason and verdict.adopted == (reason == "adopted")
    assert Verdict.from_json(json.loads(json.dumps(verdict.to_json()))) == verdict


def test_the_no_forgetting_sample_ships_beside_the_models() -> None:
    crops, values = read_anchor()
    assert len(crops) == len(values) >= 150 and set(values.tolist()) == {1, 2, 3, 4, 5, 6}
    assert all(c.shape == (64, 64, 3) for c in crops)


def test_a_setup_the_shipped_classifier_misreads_is_adopted_on_its_left_out_photos(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    _, _, values = mosaic
    learner = taught(tmp_path, classifier, mosaic, values)
    verdict = learner.refresh().head.gate
    assert verdict.shipped_errors >= 8, "the shipped classifier reads the fixture: re-choose it"
    assert verdict.adopted, verdict.words()
    assert verdict.folds == 25 and verdict.adapted_errors < verdict.shipped_errors
    assert verdict.p_value <= SIGN_ALPHA and verdict.wins >= 5
    assert verdict.anchor_dice == len(read_anchor()[1])  # checked on other tables' dice
    assert verdict.anchor_adapted_errors <= verdict.anchor_shipped_errors
    summary = learner.summary()
    assert summary.adopted and summary.verdict.startswith("learnt and in use")


def test_a_setup_of_random_wrong_labels_is_refused_and_reads_as_cold(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    _, _, values = mosaic
    wrong = np.random.default_rng(24).integers(1, 7, len(values))
    learner = taught(tmp_path, classifier, mosaic, wrong)
    adaptation = learner.refresh()
    assert not adaptation.head.gate.adopted and not adaptation.head.active
    assert adaptation.head.gate.reason in ("no_gain", "not_significant", "face_worse", "forgets")
    assert "reads with the models it came with" in learner.summary().verdict
    image, boxes, _ = mosaic
    read = [boxes[k] for k in range(1, len(boxes), 2)]
    adapted = learner.reader_classifier().classify(image, read)
    cold = classifier.classify(image, read)
    assert np.array_equal(adapted.probabilities, cold.probabilities)


def test_the_adapted_head_is_written_with_a_manifest_the_load_checks_pass(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    _, _, values = mosaic
    learner = taught(tmp_path, classifier, mosaic, values)
    head = learner.refresh().head
    folder = learner.folder / ADAPTED_DIR
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert manifest["derived_from"]["sha256"] == classifier.model.manifest.sha256
    width = embedding_width(classifier)
    assert manifest["verdict"]["adopted"] and manifest["head"]["shape"] == [6, width + 1]
    saved = load_head(learner.folder, classifier)
    assert saved is not None and saved.verdict == head.gate
    assert saved.head.delta is not None and head.delta is not None
    assert np.array_equal(saved.head.delta.weights, head.delta.weights)
    # which crops it reads comes back with it: the setup's dice and the floor
    assert saved.head.delta.like is not None and head.delta.like is not None
    assert saved.head.delta.like.floor == head.delta.like.floor
    assert np.array_equal(saved.head.delta.like.prototypes, head.delta.like.prototypes)
    taught_dice, columns = saved.head.delta.like.prototypes.shape
    assert (
        columns == width and 100 <= taught_dice <= 128
    )  # the 128 taught cells, less any held back
    # a damaged head file fails its check, naming the file
    head_file = folder / manifest["head"]["file"]
    head_file.write_bytes(head_file.read_bytes()[:-8])
    with pytest.raises(ModelError, match=head_file.name):
        load_head(learner.folder, classifier)


def test_saving_a_head_is_atomic_across_its_two_files(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    """The head file is named by its content and written before the manifest that names
    it: a crash after the new head file is written (and before the manifest is replaced)
    leaves the old head reading; a refused head's manifest replaces the old one before the
    old head file goes; no temporary file is left behind."""
    _, _, values = mosaic
    learner = taught(tmp_path, classifier, mosaic, values)
    adopted = learner.refresh().head
    assert adopted.delta is not None
    folder = learner.folder / ADAPTED_DIR
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    name = manifest["head"]["file"]
    assert name == f"value_head-{manifest['head']['sha256'][:12]}.npz"
    assert sorted(p.name for p in folder.iterdir()) == sorted([name, MANIFEST_FILE])

    # the crash: another head's file written, the manifest not yet replaced
    other = Delta(adopted.delta.seen, adopted.delta.weights * 0.5)
    written = write_head_file(folder, other)
    assert written.name != name and (folder / name).is_file()
    saved = load_head(learner.folder, classifier)
    assert saved is not None and saved.head.delta is not None
    assert np.array_equal(saved.head.delta.weights, adopted.delta.weights)

    # a refused head: the manifest says so, and no head file is left
    refused = ValueHead(None, adopted.counts, Verdict("no_gain", folds=5))
    save_head(learner.folder, "kitchen", refused, classifier)
    assert [p.name for p in folder.iterdir()] == [MANIFEST_FILE]
    saved = load_head(learner.folder, classifier)
    assert saved is not None and not saved.head.active and saved.verdict.reason == "no_gain"

    # adopted again: the same content, the same name
    save_head(learner.folder, "kitchen", adopted, classifier)
    assert sorted(p.name for p in folder.iterdir()) == sorted([name, MANIFEST_FILE])


def test_a_head_saved_in_the_first_layout_still_reads(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    """A manifest written before content addressing names ``value_head.npz``: it is read
    (with its sha256 check); the next save deletes the old file."""
    _, _, values = mosaic
    learner = taught(tmp_path, classifier, mosaic, values)
    adopted = learner.refresh().head
    folder = learner.folder / ADAPTED_DIR
    path = folder / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    (folder / manifest["head"]["file"]).rename(folder / HEAD_FILE)
    manifest["head"]["file"] = HEAD_FILE
    path.write_text(json.dumps(manifest), encoding="utf-8")
    saved = load_head(learner.folder, classifier)
    assert saved is not None and saved.head.delta is not None and adopted.delta is not None
    assert np.array_equal(saved.head.delta.weights, adopted.delta.weights)
    (folder / HEAD_FILE).unlink()
    with pytest.raises(ModelError, match=HEAD_FILE):
        load_head(learner.folder, classifier)
    manifest["head"]["file"] = "../elsewhere.npz"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ModelError, match="head.file"):
        load_head(learner.folder, classifier)


def test_a_head_fitted_for_another_classifier_is_not_read(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic
) -> None:
    _, _, values = mosaic
    learner = taught(tmp_path, classifier, mosaic, values)
    learner.refresh()
    path = learner.folder / ADAPTED_DIR / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["derived_from"]["sha256"] = "0" * 64
    path.write_text(json.dumps(manifest), encoding="utf-8")
    assert load_head(learner.folder, classifier) is None


@pytest.mark.parametrize("labels", ["right", "random"])
def test_a_restart_keeps_the_adapted_reader_and_its_verdict(
    tmp_path: Path, classifier: PipClassifier, mosaic: Mosaic, labels: str
) -> None:
    _, _, values = mosaic
    confirmed = values if labels == "right" else np.random.default_rng(24).integers(1, 7, 256)
    learner = taught(tmp_path, classifier, mosaic, confirmed)
    before = learner.refresh().head
    cells = range(1, 256, 2)
    read_before = read_values(learner.reader_classifier(), mosaic, cells)
    learner.store.close()

    again = SetupLearner(SetupStore(tmp_path), "kitchen", classifier)  # a new process
    saved = again.saved()
    assert saved is not None and saved.verdict == before.gate
    assert saved.head.active == before.active == (labels == "right")
    assert read_values(again.reader_classifier(), mosaic, cells) == read_before
    assert again.adaptation is None  # read with what was saved, no refit
    if labels == "right":
        assert read_before != read_values(classifier, mosaic, cells)  # it reads adapted


def test_the_fold_check_reads_with_the_classifiers_own_second_look(
    tmp_path: Path, mosaic: Mosaic
) -> None:
    """The gate reads the left-out dice as the camera's classifier does, with its own
    second-look threshold (its manifest's ``second_look_below``), not a constant: with
    no die given a second look, the shipped head's errors over the folds are the dice
    that classifier misreads."""
    image, boxes, values = mosaic
    cells = list(range(0, len(boxes), 2))
    classifier = PipClassifier.load()  # its own instance: the threshold is changed
    shipped_look = classifier.classify(image, [boxes[k] for k in cells]).probabilities
    classifier.second_look_below = 0.0  # every die read by one look, never its eight views
    one_look = classifier.classify(image, [boxes[k] for k in cells]).probabilities
    truth = values[cells] - 1
    misread = int((one_look.argmax(axis=1) != truth).sum())
    assert misread != int((shipped_look.argmax(axis=1) != truth).sum())  # the test can tell
    learner = taught(tmp_path, classifier, mosaic, values)
    assert learner.refresh().head.gate.shipped_errors == misread


def test_a_verdict_that_keeps_the_shipped_models_says_so_in_the_camera_lines_words() -> None:
    """The setup page and the camera panel say the same thing in the same words: "reads
    with the models it came with: too few confirmed photos ..." (the page said "kept as it
    came: ...", with nothing to say what was kept)."""
    words = Verdict(reason="too_few").words()
    assert words.startswith("reads with the models it came with: too few confirmed photos")


def test_a_verdict_on_dice_the_shipped_models_already_read_right_says_so() -> None:
    """A café whose dice the shipped models read without a mistake read "what it learnt
    read this camera setup's dice no better" on the host's page and the camera line, as if the
    learning had failed: it says the models it came with already read them all right, on
    the page and on the camera line alike."""
    from companion.table.learning import reads_words

    perfect = Verdict(reason="no_gain", folds=11, dice=21, shipped_errors=0, adapted_errors=0)
    said = (
        "they already read all 21 of this camera setup's dice right on photos "
        "kept out of its learning: nothing to improve yet"
    )
    assert perfect.words().startswith(f"reads with the models it came with: {said} (")
    assert reads_words(perfect.to_json()) == f"reads with the models it came with: {said}"
    assert perfect.words().count("the models it came with") == 1  # said once, not twice
    # a table where the shipped models erred and the learning did not help keeps its words
    erred = Verdict(reason="no_gain", folds=11, dice=21, shipped_errors=3, adapted_errors=3)
    assert "no better on photos kept out of its learning" in erred.words()
    assert reads_words(erred.to_json()) == (
        "reads with the models it came with: what it learnt read this camera setup's dice no "
        "better on photos kept out of its learning"
    )


def test_the_finders_verdict_says_it_finds_the_dice_not_reads_them() -> None:
    """The host's page said "finder: ... what it learnt read this camera setup's dice no better":
    a word of the code, and a verb of the classifier's. The finder's line says what it
    does: finding the dice."""
    worse = Verdict(reason="no_gain", folds=15, dice=30, shipped_errors=5, adapted_errors=5)
    words = worse.finder_words()
    assert words.startswith(
        "finding the dice: reads with the models it came with: what it learnt found this camera "
        "setup's dice no better on photos kept out of its learning ("
    ), words
    assert "forgets" not in words and " read this table" not in words
    assert "finds other tables' dice worse" in Verdict(reason="forgets").finder_words()
    perfect = Verdict(reason="no_gain", folds=5, dice=10)
    assert "they already found all 10 of this camera setup's dice right" in perfect.finder_words()


def test_a_verdicts_figures_say_one_error_one_fold_one_die() -> None:
    """The café's page read "1 errors adapted against 1 shipped, 1 folds won": one of a
    thing is said in the singular, more (or none) in the plural."""
    one = Verdict(
        reason="no_gain", folds=1, dice=1, shipped_errors=1, adapted_errors=1, wins=1,
        losses=1, anchor_dice=1, anchor_shipped_errors=1, anchor_adapted_errors=1,
    )  # fmt: skip
    words = one.words()
    assert "(1 fold, 1 die): 1 error adapted against 1 shipped, 1 fold won, 1 lost" in words
    assert "other tables' dice: 1 error against 1 of 1" in words
    assert "errors" not in words and "folds" not in words, words
    many = Verdict(reason="no_gain", folds=5, dice=20, shipped_errors=0, adapted_errors=2)
    assert "(5 folds, 20 dice): 2 errors adapted against 0 shipped, 0 folds won" in many.words()


def test_a_learner_refused_for_reading_worse_says_worse_not_no_better() -> None:
    """A learner that made more errors than the shipped models on the left-out photos, or
    on other tables' dice, was refused with "read this camera setup's dice no better": the rule
    is the same, the sentence says what the figures show."""
    worse = Verdict(reason="no_gain", folds=5, dice=20, shipped_errors=2, adapted_errors=4)
    assert worse.words().startswith(
        "reads with the models it came with: what it learnt read this camera setup's dice worse "
        "on photos kept out of its learning ("
    ), worse.words()
    assert "found this camera setup's dice worse" in worse.finder_words()
    level = Verdict(reason="no_gain", folds=5, dice=20, shipped_errors=2, adapted_errors=2)
    assert "read this camera setup's dice no better on photos" in level.words()
    forgot = Verdict(
        reason="no_gain", folds=5, dice=20, shipped_errors=2, adapted_errors=2,
        anchor_dice=30, anchor_shipped_errors=1, anchor_adapted_errors=3,
    )  # fmt: skip
    assert forgot.reason_words == (
        "what it learnt read this camera setup's dice no better on photos kept out of its "
        "learning, and reads other tables' dice worse"
    )
    assert "and finds other tables' dice worse" in forgot.finder_words()
    unsure = Verdict(
        reason="not_significant", folds=5, dice=20, shipped_errors=4, adapted_errors=2,
        anchor_dice=30, anchor_shipped_errors=1, anchor_adapted_errors=3,
    )  # fmt: skip
    assert unsure.reason_words.endswith(
        "not yet by enough to trust, and reads other tables' dice worse"
    )
    assert Verdict(reason="forgets", anchor_dice=30, anchor_adapted_errors=3).reason_words == (
        "what it learnt reads other tables' dice worse"
    )


def test_a_finder_that_finds_other_tables_dice_worse_says_so_where_nothing_was_missed() -> None:
    """A setup whose dice the shipped finder already found all of (skovy-catan-webcam in
    the app: 0 / 0 errors on the folds, 3 / 2 on the calibration photos) read "nothing to
    improve yet": its learnt finder was worse, on the no-forgetting sample only, and the
    verdict did not say so. It says so in the value head's words, for both halves."""
    verdict = Verdict(
        reason="no_gain", folds=25, dice=50, anchor_dice=50,
        anchor_shipped_errors=2, anchor_adapted_errors=3,
    )  # fmt: skip
    assert verdict.finder_words().startswith(
        "finding the dice: reads with the models it came with: they already found all 50 "
        "of this camera setup's dice right on photos kept out of its learning: nothing to improve "
        "yet, and what it learnt finds other tables' dice worse ("
    ), verdict.finder_words()
    assert verdict.reason_words.endswith(
        "nothing to improve yet, and what it learnt reads other tables' dice worse"
    )
    level = replace(verdict, anchor_adapted_errors=2)  # no worse elsewhere: as before
    assert level.reason_words.endswith("nothing to improve yet")


def test_a_verdict_speaks_of_the_camera_setup_not_of_a_table() -> None:
    """ "this table" meant the camera setup in a verdict ("read this table's dice better")
    and one game on the same page ("This table taught 6 dice"): a host read the verdict as
    judged on this game's dice alone. A verdict says "this camera setup's dice"."""
    for reason in REASONS:
        verdict = Verdict(reason=reason, folds=5, dice=20, shipped_errors=2, adapted_errors=1)
        for words in (verdict.words(), verdict.finder_words()):
            assert "this table" not in words, words
    assert "read this camera setup's dice better" in Verdict(reason="adopted").words()
    assert "found this camera setup's dice no better" in Verdict(reason="no_gain").finder_words()
    perfect = Verdict(reason="no_gain", folds=5, dice=10)
    assert "already read all 10 of this camera setup's dice right" in perfect.words()
