"""A setup that fine-tunes its whole classifier in a background process
(companion.vision.adapt_deep_learn), end to end: the real store (SQLite, crops on disk),
the real child process (`python -m models.recipe.adapt_deep`, torch) and the real
classifier through onnxruntime, on the adaptation fixture (tests/fixtures/adapt: the ringed
ones classifier 1.4 misreads about half the time). Taught the even cells as 16 rolls of 8
dice, the fine-tuned net is adopted, reads the odd cells better than the shipped one and
vouches for no more than its folds showed; it is not fine-tuned again before new rolls
come; a restart reads it back; forgetting the setup removes it."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.table.learning import Learning
from companion.vision.adapt import fit_value_head, likeness_from
from companion.vision.adapt_deep_learn import (
    DEEP_DIR,
    DeepClassifier,
    DeepJob,
    DeepLearner,
    StoppedFineTune,
    available,
)
from companion.vision.adapt_files import ADAPTED_DIR
from companion.vision.adapt_gate import Verdict
from companion.vision.adapt_learn import ConfirmedDie, SetupLearner, error_share
from companion.vision.adapt_store import SetupStore
from companion.vision.classifier import PipClassifier
from companion.vision.types import DieBox, DieReading

PER_ROLL = 8


def test_the_test_setup_can_fine_tune() -> None:
    assert available(), "torch (the `train` extra) is part of the test setup"


def errors(
    classifier: PipClassifier, image: np.ndarray, boxes: list[DieBox], values: np.ndarray
) -> int:
    readings = classifier.read(image, boxes)
    return sum(value != int(truth) for (value, _, _), truth in zip(readings, values, strict=True))


def test_a_setup_fine_tunes_in_a_child_process_adopts_on_evidence_and_keeps_it(
    tmp_path: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    image, boxes, values = fine_tune_mosaic
    classifier = PipClassifier.load()
    # the server's side: `companion serve --fine-tune` gives every setup its deep half
    learning = Learning(tmp_path / "server", classifier_factory=lambda: classifier, fine_tune=True)
    learner = learning.learner("kitchen")
    store = learner.store
    assert learner.deep_learner is not None and learner.deep_classifier() is None
    taught = list(range(0, len(boxes), 2))
    for roll in range(0, len(taught), PER_ROLL):
        cells = taught[roll : roll + PER_ROLL]
        dice = [ConfirmedDie(boxes[k], int(values[k])) for k in cells]
        learner.record(image, dice, photo=f"roll {roll // PER_ROLL}", throw=roll // PER_ROLL)
    asyncio.run(learning.refresh_and_tell("kitchen"))

    # the child process ran and its verdict was kept, for the camera panel too
    assert asyncio.run(learning.fine_tune_and_tell("kitchen"))
    status = learning.status("kitchen")
    assert status is not None and status["deep_verdict"]["adopted"]  # type: ignore[index]
    verdict = learner.deep_learner.verdict
    assert verdict is not None and verdict.adopted, verdict
    deep = learner.deep_classifier()
    assert deep is not None
    # which reads: the fine-tuned net over no adopted head; over an adopted head, the one
    # that erred on the smaller share of its own left-out dice
    head = learner.current().head
    reading = learner.reader_classifier()
    if head.active and error_share(head.gate) <= error_share(verdict):
        assert not isinstance(reading, DeepClassifier)
    else:
        assert reading is deep
    no_head = replace(learner.current(), head=fit_value_head([]))
    assert learner.classifier_over(classifier, no_head) is deep
    read = list(range(1, len(boxes), 2))
    held_boxes, held_values = [boxes[k] for k in read], values[read]
    cold = errors(classifier, image, held_boxes, held_values)
    assert cold >= 8, f"the shipped net misreads only {cold}: re-choose the fixture"
    assert errors(deep, image, held_boxes, held_values) <= cold // 2
    # no die surer than the folds vouch for
    sure = tuple(
        DieReading(box, int(value), 0.9999)
        for box, value in zip(held_boxes[:4], held_values[:4], strict=True)
    )
    assert all(r.confidence == pytest.approx(verdict.ceiling) for r in deep.vouched(sure))
    assert verdict.ceiling < 0.999
    # nothing new confirmed: not fine-tuned again, nothing left of the child's folders
    assert not learner.refresh_deep() and learner.deep_learner.verdict is verdict
    assert not list((store.crops_dir / "kitchen" / ADAPTED_DIR).glob(".deep-*"))

    again = SetupLearner(SetupStore(tmp_path / "server"), "kitchen", classifier, deep=True)
    restored = again.deep_classifier()
    assert restored is not None and restored.verdict == verdict
    assert again.classifier_over(classifier, no_head) is restored
    assert errors(restored, image, held_boxes, held_values) == errors(
        deep, image, held_boxes, held_values
    )
    summary = again.summary()
    assert summary.deep_adopted and summary.deep_verdict.startswith("fine-tuned classifier: ")
    # each taught die's left-out sureness came back with the verdict; while the fine-tuned
    # net reads, the page's bars are its folds', not the value head's
    state = again.deep_learner.state  # type: ignore[union-attr]
    adaptation = again.current()
    used = [s for k, s in enumerate(again.stored) if k not in set(adaptation.held)]
    assert state is not None and set(state.sureness) == {s.example_id for s in used}
    assert all(0.0 <= p <= 1.0 for p in state.sureness.values())
    deep_reads = isinstance(again.reader_classifier(), DeepClassifier)
    by_value: dict[int, list[float]] = {}
    for k, s in enumerate(used):
        how_sure = state.sureness[s.example_id] if deep_reads else adaptation.sureness[k]
        by_value.setdefault(s.example.value, []).append(how_sure)
    for face, group in by_value.items():
        known = [g for g in group if g == g]  # NaN: no reading of it
        mean = sum(known) / len(known) if known else 0.0
        assert summary.face_sureness[face - 1] == pytest.approx(mean, abs=1e-6)

    # forgetting the setup on the host's page: gone from disk, from the panel, from reading
    asyncio.run(learning.delete_setup("kitchen"))
    assert learning.status("kitchen")["deep_verdict"] is None  # type: ignore[index]
    assert learner.deep_classifier() is None
    assert not (store.crops_dir / "kitchen" / ADAPTED_DIR / DEEP_DIR).exists()
    fresh = SetupLearner(SetupStore(tmp_path / "server"), "kitchen", classifier, deep=True)
    assert fresh.deep_classifier() is None
    assert not isinstance(fresh.reader_classifier(), DeepClassifier)
    learning.close()


def test_a_setup_without_fine_tuning_asked_for_has_no_deep_half(tmp_path: Path) -> None:
    learner = SetupLearner(SetupStore(tmp_path), "kitchen", PipClassifier.load())
    assert learner.deep_learner is None and not learner.refresh_deep()
    assert learner.summary().deep_verdict == ""


def taught_setup(
    root: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> SetupLearner:
    """A setup with 8 rolls of the fixture's even cells confirmed and its head refreshed."""
    image, boxes, values = fine_tune_mosaic
    learner = SetupLearner(SetupStore(root), "kitchen", PipClassifier.load(), deep=True)
    for roll in range(8):
        cells = range(2 * PER_ROLL * roll, 2 * PER_ROLL * (roll + 1), 2)
        dice = [ConfirmedDie(boxes[k], int(values[k])) for k in cells]
        learner.record(image, dice, photo=f"roll {roll}", throw=roll)
    learner.refresh()
    return learner


def test_a_setup_forgotten_while_its_child_runs_keeps_nothing(
    tmp_path: Path,
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The child is stopped and nothing is kept; the server's log says it was stopped, in
    a line, not a warning with a traceback ("fine-tune failed (-15)" right after the host
    pressed Forget read as a fault)."""
    caplog.set_level(logging.INFO, logger="companion.vision.adapt_learn")
    learner = taught_setup(tmp_path, fine_tune_mosaic)
    deep = learner.deep_learner
    assert deep is not None
    jobs: list[DeepJob] = []
    made = threading.Event()
    run = DeepJob.run

    def noting_run(job: DeepJob) -> None:  # the job as it starts, for the test to wait on
        jobs.append(job)
        made.set()
        run(job)

    monkeypatch.setattr(DeepJob, "run", noting_run)
    outcome: list[bool] = []
    worker = threading.Thread(target=lambda: outcome.append(learner.refresh_deep()))
    worker.start()
    assert made.wait(timeout=120), "no fine-tune was started"
    assert jobs[0].started.wait(timeout=120), "the child never started"
    learner.forget()  # stops the child: its work is moot
    worker.join(timeout=120)
    assert outcome == [False]
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == [], warned
    assert (
        "setup kitchen: fine-tune stopped (the setup forgotten, a taught die changed, or the server stopping): nothing kept"
        in caplog.text
    )
    assert learner.deep_classifier() is None and deep.verdict is None
    adapted = learner.folder / ADAPTED_DIR
    assert not (adapted / DEEP_DIR).exists() and not list(adapted.glob(".deep-*"))


def test_a_failing_child_is_logged_and_not_started_again_before_new_rolls(
    tmp_path: Path,
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    learner = taught_setup(tmp_path, fine_tune_mosaic)
    deep = learner.deep_learner
    assert deep is not None
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    assert not learner.refresh_deep()
    assert "fine-tune failed" in caplog.text and deep.attempted == 8
    assert deep.verdict is None and learner.deep_classifier() is None
    assert not list((learner.folder / ADAPTED_DIR).glob(".deep-*"))
    assert deep.job(learner.stored, ()) is None  # due again only after 5 more photos


def test_the_false_dice_the_host_removed_are_taught_as_unreadable(tmp_path: Path) -> None:
    """With the finder's photos kept, a die the shipped pair shows on a stored photo away
    from every confirmed die is a false die the host removed: the job teaches its crop as
    "unreadable", under its photo's key; a photo whose every die was confirmed adds
    nothing, nor one on which more dice were removed than confirmed (a part taught)."""
    from companion.synth import render_scene
    from companion.vision.adapt_deep_learn import UNREADABLE
    from companion.vision.adapt_finder import AdaptedFinder
    from companion.vision.classifier import crop_die
    from companion.vision.finder import DiceFinder
    from companion.vision.pipeline import trace_dice
    from companion.vision.scoring import pair_closest

    classifier = PipClassifier.load()
    finder = AdaptedFinder.load(DiceFinder.load())
    learner = SetupLearner(SetupStore(tmp_path), "den", classifier, finder=finder, deep=True)
    assert learner.deep_learner is not None and learner.deep_learner.removed is not None
    image, dice = render_scene(60, 640, 480)
    shown = [r.where for r in trace_dice(image, finder, classifier).kept]
    readable = [d for d in dice if d.value is not None]
    paired = pair_closest([(d.cx, d.cy, d.side) for d in readable], shown)
    assert len(paired) == len(shown) == len(readable) >= 4, "all shown, nothing else"
    confirmed = [
        ConfirmedDie(DieBox(d.cx, d.cy, d.side, d.side, d.angle, 1.0), int(d.value))
        for d in readable
        if d.value is not None  # all of them: narrows the type
    ]
    # five rolls of the whole scene; one whose first die the host "removed"; one on which
    # only one die was taught; a die deleted from the first roll later (a wrong tap: a
    # real die) is set aside, not taught as a false one
    first_ids = []
    for k in range(5):
        first_ids += [learner.record(image, confirmed, photo=f"roll {k}", throw=k)]
    learner.record(image, confirmed[1:], photo="roll 5", throw=5)
    learner.record(image, confirmed[:1], photo="roll 6", throw=6)
    assert learner.store.delete_example("den", first_ids[0][0])
    learner.refresh()
    job = learner.deep_learner.job(learner.stored, ())
    assert job is not None and job.removed is learner.deep_learner.removed
    crops, values, photos, ids = job.taught()
    extra = len(values) - len(job.values)
    assert extra == 1 and values[-1] == UNREADABLE and photos[-1] == "roll 5"
    assert ids[-1] == -1 and list(ids[:-1]) == list(job.ids)  # the removed die is no stored die
    first = readable[0]
    removed = min(shown, key=lambda b: np.hypot(b.cx - first.cx, b.cy - first.cy))
    expected = crop_die(image, removed, classifier.margin, crops.shape[1])

    # the stored photo is a JPEG, on which the finder's box moves a few pixels: the crop
    # matches the removed die's better than any other die's, not to the bit
    def apart(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.abs(a.astype(float) - b.astype(float)).mean())

    others = [crop_die(image, b, classifier.margin, crops.shape[1]) for b in shown if b != removed]
    assert apart(crops[-1], expected) < min(apart(crops[-1], other) for other in others)
    assert (values[:-1] == job.values).all() and len(crops) == len(values) == len(photos)


def test_a_damaged_sureness_field_drops_the_bars_not_the_verdict(tmp_path: Path) -> None:
    from companion.vision.adapt_deep_learn import read_sureness

    path = tmp_path / "verdict.json"
    assert read_sureness(None, path) == {}  # a verdict written before the field
    assert read_sureness({"3": 0.5, "four": 0.9}, path) == {}
    assert read_sureness([1, 2], path) == {}
    assert read_sureness({"3": 2.0, "4": 0.7, "5": float("nan")}, path) == {4: 0.7}


def test_a_fine_tuned_net_reads_only_dice_like_the_setups_and_the_shipped_net_the_rest(
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> None:
    """DeepClassifier's split, with another real classifier file (stage 30's small net)
    standing in for a setup's fine-tuned net: the setup's dice are the mosaic's sixes (each
    a photo of its own), so its likeness (adapt.likeness_from, on that net's embeddings)
    takes in the sixes and leaves out most other faces; every die then reads exactly as
    the net that should read it does, with the eight views and the second margin too."""
    image, boxes, values = fine_tune_mosaic
    stand_in = Path("models/training/stage30-classifier/classifier/candidate")
    tuned, shipped = PipClassifier.load(stand_in), PipClassifier.load()
    assert tuned.model.manifest.sha256 != shipped.model.manifest.sha256
    sixes = [k for k in range(len(boxes)) if values[k] == 6]
    own = tuned.classify(image, [boxes[k] for k in sixes]).embeddings
    assert own is not None
    like = likeness_from(own, [f"photo {k}" for k in sixes])
    assert like is not None
    deep = DeepClassifier(tuned.model, Verdict(), "sha", like, shipped)
    read = deep.classify(image, boxes, looks=True)
    alone = tuned.classify(image, boxes, looks=True)
    cold = shipped.classify(image, boxes, looks=True)
    assert alone.embeddings is not None
    mine = like.mask(alone.embeddings)
    assert mine[sixes].all() and 0 < (~mine).sum() < len(boxes)
    for field in ("probabilities", "views", "wide"):
        got, tuned_read, cold_read = (getattr(c, field) for c in (read, alone, cold))
        assert np.allclose(got[mine], tuned_read[mine], atol=1e-6), field
        assert np.allclose(got[~mine], cold_read[~mine], atol=1e-6), field
    # without a likeness (a net fine-tuned before it was kept) it reads every die itself
    plain = DeepClassifier(tuned.model, Verdict(), "sha", None, shipped)
    assert np.allclose(plain.classify(image, boxes).probabilities, alone.probabilities, atol=1e-6)


def test_the_setup_page_says_the_fine_tune_runs_while_it_runs(
    tmp_path: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """A fine-tune takes about a minute: while its child runs the host's page says so, on
    how many photos and since when, not the line of before ("fine-tuned from 5 confirmed
    photos on", with 8 stored, read as if nothing happened)."""
    learner = taught_setup(tmp_path, fine_tune_mosaic)
    deep = learner.deep_learner
    assert deep is not None
    before = learner.summary().deep_verdict
    assert "now" not in before
    job = deep.job(learner.stored, ())  # made: running from now until the child ends
    assert job is not None
    words = learner.summary().deep_verdict
    assert words.startswith("fine-tuning the classifier on 8 confirmed photos now (started "), words
    assert "the camera reads as before until it is judged" in words
    deep.running = None  # the child ended (refresh_deep's `finally`)
    assert learner.summary().deep_verdict == before


def eight_rolls_to_fine_tune_on(
    root: Path, mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> tuple[Learning, SetupLearner, DeepLearner]:
    """A fine-tuning server's setup "kitchen" with eight confirmed rolls of the mosaic,
    refreshed (its fine-tune not started): the server's learning, the setup's learner and
    its fine-tune."""
    image, boxes, values = mosaic
    learning = Learning(root, PipClassifier.load, lambda: None, fine_tune=True)
    learner = learning.learner("kitchen")
    for roll in range(8):
        cells = range(2 * PER_ROLL * roll, 2 * PER_ROLL * (roll + 1), 2)
        learner.record(
            image, [ConfirmedDie(boxes[k], int(values[k])) for k in cells], photo=f"r{roll}"
        )
    assert asyncio.run(learning.refresh_and_tell("kitchen")) is not None
    deep = learner.deep_learner
    assert deep is not None
    return learning, learner, deep


def test_the_camera_line_says_the_fine_tune_runs_while_it_runs(
    tmp_path: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """While a fine-tune ran only the setup's page said so: the host page's camera line
    kept the verdict it would replace, and its tooltip that old verdict, the finder's
    with the classifier's verbs after "finder: ". The line and the tooltip say what the
    setup's page says."""
    learning, learner, deep = eight_rolls_to_fine_tune_on(tmp_path, fine_tune_mosaic)
    learning._finder_verdicts["kitchen"] = Verdict(reason="no_gain", folds=8, dice=64).to_json()
    before = learning.status("kitchen")
    assert before is not None
    lines = before["reads_details"]
    assert isinstance(lines, list) and len(lines) == 2, lines
    assert lines[0].startswith("reads with the models it came with: ")
    assert lines[1].startswith("finding the dice: reads with the models it came with: ")
    job = deep.job(learner.stored, ())  # made: running from now until the child ends
    assert job is not None
    status = learning.status("kitchen")
    assert status is not None
    said = learner.summary().deep_verdict
    running = "fine-tuning the classifier on 8 confirmed photos now (started "
    assert said.startswith(running) and said.endswith("reads as before until it is judged")
    # the same words as the setup's page (the seconds may have ticked), not the old verdict
    assert str(status["reads"]).startswith(running) and str(status["reads"]).endswith(
        "reads as before until it is judged"
    )
    details = status["reads_details"]
    assert isinstance(details, list) and details[0] == status["reads"], details
    assert not any("fine-tuned classifier" in d or d.startswith("finder: ") for d in details)
    deep.running = None  # the child ended
    assert learning.status("kitchen") == before


def test_the_camera_line_says_the_shutdown_stopped_the_fine_tune(
    tmp_path: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """A fine-tune the shutdown stopped was said on the setup's page only: the host page's
    camera line and its tooltip kept quiet about it, as if nothing waited. The line says
    so briefly, the tooltip in the setup's page's words; a new roll's fine-tune ends it."""
    learning, learner, deep = eight_rolls_to_fine_tune_on(tmp_path, fine_tune_mosaic)
    before = learning.status("kitchen")
    assert before is not None and "shut" not in str(before["reads"])
    deep.stopped = StoppedFineTune("same dice", 8, deep.sha256, 1_800_000_000.0)
    status = learning.status("kitchen")
    assert status is not None
    assert str(status["reads"]).startswith(str(before["reads"]) + " · "), status["reads"]
    assert str(status["reads"]).endswith(deep.stopped.brief_words())
    assert "stopped by the server's shutdown" in deep.stopped.brief_words()
    details = status["reads_details"]
    assert isinstance(details, list) and details[0] == deep.stopped.words(), details
    assert details[1:] == before["reads_details"]
    deep.stopped = None  # a new roll confirmed: its fine-tune is due again
    assert learning.status("kitchen") == before


def test_a_fine_tune_judges_the_dice_the_value_head_judges_not_the_ones_the_host_added(
    tmp_path: Path, fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray]
) -> None:
    """The fine-tune's figures counted the dice the host added (no camera reading: the
    value head's check teaches them, judges none) as dice judged: the job says which the
    host added, and its child judges the others (tests/training/test_adapt_deep.py)."""
    image, boxes, values = fine_tune_mosaic
    learner = SetupLearner(SetupStore(tmp_path), "kitchen", PipClassifier.load(), deep=True)
    for roll in range(8):
        cells = list(range(2 * PER_ROLL * roll, 2 * PER_ROLL * (roll + 1), 2))
        dice = [
            ConfirmedDie(boxes[k], int(values[k]), "added" if k == cells[0] else "read")
            for k in cells
        ]
        learner.record(image, dice, photo=f"roll {roll}", throw=roll)
    adaptation = learner.refresh()
    assert adaptation.head.gate.dice == 8 * (PER_ROLL - 1)  # the value head's
    deep = learner.deep_learner
    assert deep is not None
    job = deep.job(learner.stored, adaptation.held)
    assert job is not None and job.judged is not None
    assert len(job.judged) == len(job.ids) and sum(job.judged) == adaptation.head.gate.dice
    added = {s.example_id for s in learner.stored if s.source == "added"}
    assert {i for i, j in zip(job.ids, job.judged, strict=True) if not j} == added
    deep.running = None


def test_a_fine_tune_the_shutdown_stopped_is_not_begun_again_over_the_same_photos(
    tmp_path: Path,
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fine-tune running when the server shut down began again from scratch at the next
    start, over the same photos (minutes of work, which the next closing time stopped
    again). The shutdown records it: the next start begins it again only once the
    confirmed photos changed, and the setup's page says so meanwhile."""
    image, boxes, values = fine_tune_mosaic
    classifier = PipClassifier.load()
    learning = Learning(tmp_path / "server", classifier_factory=lambda: classifier, fine_tune=True)
    learner = learning.learner("kitchen")
    for roll in range(8):
        cells = range(2 * PER_ROLL * roll, 2 * PER_ROLL * (roll + 1), 2)
        dice = [ConfirmedDie(boxes[k], int(values[k])) for k in cells]
        learner.record(image, dice, photo=f"roll {roll}", throw=roll)
    learner.refresh()
    jobs: list[DeepJob] = []
    made = threading.Event()
    run = DeepJob.run

    def noting_run(job: DeepJob) -> None:
        jobs.append(job)
        made.set()
        run(job)

    monkeypatch.setattr(DeepJob, "run", noting_run)
    outcome: list[bool] = []
    worker = threading.Thread(target=lambda: outcome.append(learner.refresh_deep()))
    worker.start()
    assert made.wait(timeout=120), "no fine-tune was started"
    assert jobs[0].started.wait(timeout=120), "the child never started"
    learning.close()  # the server shuts down
    worker.join(timeout=120)
    assert outcome == [False]

    # the next start: the same photos, so no fine-tune; the page says why
    again = SetupLearner(SetupStore(tmp_path / "server"), "kitchen", classifier, deep=True)
    deep = again.deep_learner
    assert deep is not None and deep.verdict is None
    adaptation = again.refresh()
    assert deep.job(again.stored, adaptation.held) is None
    said = again.summary().deep_verdict
    assert said.startswith(
        "the fine-tune on 8 confirmed photos was stopped when the server shut down ("
    ), said
    assert "not started again over the same photos, only once a new roll is confirmed" in said
    # a new roll confirmed: it is due again, and the record goes
    cells = range(1, 2 * PER_ROLL, 2)
    again.record(image, [ConfirmedDie(boxes[k], int(values[k])) for k in cells], photo="roll 8")
    adaptation = again.refresh()
    job = deep.job(again.stored, adaptation.held)
    assert job is not None and len(set(job.photos)) == 9
    deep.running = None
    assert deep.stopped is None
    assert not again.summary().deep_verdict.startswith("the fine-tune on 8")
