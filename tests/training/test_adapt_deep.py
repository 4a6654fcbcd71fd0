"""A setup's whole classifier fine-tuned on its confirmed dice (models/recipe/adapt_deep.py),
with the real shipped classifier, torch and onnxruntime, on the adaptation fixture
(tests/fixtures/adapt: tomitomi-dish-crops' validation crops, never trained on, painted
with a large ringed one that classifier 1.4 misreads about half the time). Taught the even
cells, the fine-tuned net is adopted by its fold check and reads the odd cells better than
the shipped one; its files carry a manifest that passes the runtime's load checks and names
the file it came from and its verdict; taught random values, it is refused. Needs torch
(the `train` extra, which the test setup installs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from companion.vision import adapt_look
from companion.vision.adapt_anchor import read_anchor
from companion.vision.adapt_deep_learn import LIKENESS_FILE, load_likeness
from companion.vision.adapt_learn import model_crops
from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.model import parse_manifest, sha256_of
from companion.vision.types import DieBox
from models.recipe.adapt_deep import (
    UNREADABLE,
    DeepSettings,
    check_deep,
    errors_of,
    judged_crops,
    net_judged,
    shipped_net,
    store_crops,
    tail_logits,
)

MODELS = Path(__file__).resolve().parents[2] / "models"
SETTINGS = DeepSettings(steps=40)  # fewer steps than the app's, to keep the suite quick


@pytest.fixture(scope="module")
def cells(
    fine_tune_mosaic: tuple[np.ndarray, list[DieBox], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The fixture's 256 cells as stored crops, and their values."""
    image, boxes, values = fine_tune_mosaic
    return store_crops(PipClassifier.load(MODELS), image, boxes), values


def photos_of(count: int) -> list[str]:
    """Eight cells to a photo, as a table's rolls come eight dice at a time."""
    return [f"photo {k // 8}" for k in range(count)]


def test_a_setup_whose_dice_the_shipped_net_misreads_adopts_its_fine_tuned_net(
    tmp_path: Path, cells: tuple[np.ndarray, np.ndarray]
) -> None:
    crops, values = cells
    taught, read = np.arange(0, len(values), 2), np.arange(1, len(values), 2)
    checked = check_deep(
        MODELS, crops[taught], values[taught], photos_of(len(taught)), SETTINGS, tmp_path
    )
    verdict = checked.verdict
    assert verdict.adopted, verdict.words()
    assert verdict.adapted_errors < verdict.shipped_errors
    # which dice it reads (the rest the shipped net reads), kept beside it
    assert checked.like is not None
    kept = load_likeness(tmp_path / LIKENESS_FILE, checked.like.prototypes.shape[1])
    assert kept is not None and kept.floor == checked.like.floor
    assert np.array_equal(kept.prototypes, checked.like.prototypes)
    assert (
        verdict.anchor_dice == 200
        and verdict.anchor_adapted_errors <= verdict.anchor_shipped_errors
    )
    shipped = PipClassifier.load(MODELS)
    cold = int(errors_of(shipped, crops[read], values[read]).sum())
    assert cold >= 8, f"the shipped net misreads only {cold}: re-choose the fixture"
    assert checked.classifier is not None
    assert int(errors_of(checked.classifier, crops[read], values[read]).sum()) <= cold // 2
    # the files beside the setup: the runtime's load checks, the source and the verdict named
    loaded = PipClassifier.load(tmp_path)
    manifest = parse_manifest(tmp_path / "pip_classifier.json")
    assert manifest.sha256 == sha256_of(tmp_path / CLASSIFIER_FILE)
    record = manifest.raw["deep_adapted"]
    assert record["from_sha256"] == sha256_of(MODELS / CLASSIFIER_FILE)
    assert record["verdict"]["reason"] == "adopted" and record["dice"] == len(taught)
    assert int(errors_of(loaded, crops[read], values[read]).sum()) <= cold // 2
    # its confidence map refitted on its folds (128 left-out dice), in place of the shipped
    # net's map over the shipped net's looks; monotone, never certain, and read back, under
    # the shipped threshold
    fitted = loaded.confidence_map
    assert fitted is not None and fitted.looks is None
    shipped_map = PipClassifier.load(MODELS).confidence_map
    # the roll's auto-apply threshold stays the shipped reader's (whatever it is)
    assert fitted.threshold == (shipped_map.threshold if shipped_map else None)
    assert (
        manifest.raw["confidence"]["points"]
        != parse_manifest(MODELS / "pip_classifier.json").raw["confidence"]["points"]
    )
    assert 0.5 < fitted.ys[-1] < 1.0 and list(fitted.ys) == sorted(fitted.ys)
    assert len(checked.sureness) == len(taught) and np.isfinite(checked.sureness).all()
    assert ((checked.sureness >= 0.0) & (checked.sureness <= 1.0)).all()


def test_a_setup_taught_random_values_keeps_the_shipped_net(
    cells: tuple[np.ndarray, np.ndarray],
) -> None:
    crops, values = cells
    taught = np.arange(0, 96, 2)
    rng = np.random.default_rng(7)
    wrong = rng.integers(1, 7, len(taught))
    checked = check_deep(MODELS, crops[taught], wrong, photos_of(len(taught)), SETTINGS)
    assert not checked.verdict.adopted
    assert checked.verdict.reason in ("no_gain", "not_significant", "face_worse")


def test_a_check_measures_each_crop_s_look_once(
    monkeypatch: pytest.MonkeyPatch, cells: tuple[np.ndarray, np.ndarray]
) -> None:
    # a look is the crop's own, whichever net reads it: the folds, the full net's likeness
    # and the no-forgetting sample's two readings share one measure of each crop (before,
    # each crop was measured four times and each sample die twice)
    crops, values = cells
    measured: list[int] = []
    signature = adapt_look.chroma_signature

    def counted(crop: np.ndarray) -> np.ndarray:
        measured.append(1)
        return signature(crop)

    monkeypatch.setattr(adapt_look, "chroma_signature", counted)
    taught = np.arange(0, 48)
    checked = check_deep(
        MODELS, crops[taught], values[taught], photos_of(48), DeepSettings(steps=1)
    )
    assert checked.verdict.reason != "too_few" and checked.like is not None
    sample = read_anchor()[0]
    assert sample, "the no-forgetting sample is part of the check"
    assert len(measured) == len(taught) + len(sample)


def test_too_few_photos_or_one_face_is_not_judged(cells: tuple[np.ndarray, np.ndarray]) -> None:
    crops, values = cells
    few = check_deep(MODELS, crops[:24], values[:24], photos_of(24), SETTINGS)
    assert few.verdict.reason == "too_few" and few.classifier is None
    ones = np.flatnonzero(values == 1)[:40]
    unreadable = np.full(8, UNREADABLE)
    one_face = check_deep(
        MODELS,
        np.concatenate([crops[ones], crops[:8]]),
        np.concatenate([values[ones], unreadable]),
        photos_of(48),
        SETTINGS,
    )
    assert one_face.verdict.reason == "too_few"


def test_the_frozen_layers_then_the_tail_are_the_whole_net(
    cells: tuple[np.ndarray, np.ndarray],
) -> None:
    # a check runs the frozen layers once per cached view and trains the tail on them
    crops, _ = cells
    shipped = PipClassifier.load(MODELS)
    net = shipped_net(MODELS)
    batch = torch.from_numpy(shipped.model.normalise(model_crops(shipped, list(crops[:32]))))
    frozen = SETTINGS.frozen
    with torch.no_grad():
        whole = net(batch)
        split = tail_logits(net, frozen, net.features[:frozen](batch))
    assert torch.allclose(whole, split, atol=1e-5)
    assert not torch.allclose(whole, tail_logits(net, frozen - 1, net.features[:frozen](batch)))


def test_the_folds_float_reading_of_the_shipped_file_reads_as_the_runtime(
    cells: tuple[np.ndarray, np.ndarray],
) -> None:
    # the folds' shipped arm is the shipped file's weights in torch: what the camera reads
    crops, values = cells
    shipped = PipClassifier.load(MODELS)
    by_torch = net_judged(shipped_net(MODELS), shipped, crops, values)
    by_runtime = judged_crops(shipped, crops, values)
    assert by_torch.views.shape == by_runtime.views.shape
    assert np.abs(by_torch.probabilities - by_runtime.probabilities).mean() < 0.005
    torch_read = by_torch.probabilities.argmax(axis=-1)
    assert (torch_read == by_runtime.probabilities.argmax(axis=-1)).mean() >= 0.99
    second_look = shipped.second_look_below
    assert (
        abs(
            int(by_torch.errors(None, second_look).sum())
            - int(by_runtime.errors(None, second_look).sum())
        )
        <= 2
    )


def test_the_dice_the_host_added_are_taught_not_judged(
    tmp_path: Path, cells: tuple[np.ndarray, np.ndarray]
) -> None:
    """The fine-tune's figures counted the dice the host added (the finder missed them,
    the camera never read them) among the dice judged, the value head's check did not: on
    one setup's page the two verdicts spoke of different dice. They count the same now:
    an added die is taught, not judged, in the check and in the app's child alike."""
    from models.recipe.adapt_deep import main

    crops, values = cells
    added = np.zeros(48, bool)
    added[::6] = True  # one die of every six photos' worth: 8 added
    checked = check_deep(
        MODELS, crops[:48], values[:48], photos_of(48), DeepSettings(steps=1), judged_dice=~added
    )
    assert checked.verdict.dice == 40, checked.verdict
    # the app's child: the job file says which dice the host added (too few photos here,
    # so only the count is written, quickly)
    job = tmp_path / "job.npz"
    np.savez(
        job, crops=crops[:16], values=values[:16], photos=np.array(photos_of(16)),
        ids=np.arange(16), judged=~added[:16],
    )  # fmt: skip
    out = tmp_path / "out"
    assert (
        main(["--crops", str(job), "--models", str(MODELS), "--out", str(out), "--nice", "0"]) == 0
    )
    written = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert written["verdict"]["dice"] == 16 - int(added[:16].sum()) == 13
