"""Rebuild both vision models: the dice finder and the pip classifier.

    .venv/bin/pip install torch==2.13.0      # the optional `train` extra, CPU wheel
    nice -n 5 .venv/bin/python models/train.py [--quick] [--only finder|classifier|evaluate]

Trains on the training part of ../shared/data (companion.vision.datasets documents the
fixed split: training, calibration, validation) plus synthetic scenes from
companion.synth, with a fixed seed; exports ONNX (opset 17, dynamic batch); then
the evaluate stage: the finder's peak rule and the classifier's confidence map are chosen
on the calibration part, both models are measured through the runtime wrappers on the
validation part (never trained on, never used to tune), and the figures, the training data
and the sha256 go into the manifests beside the .onnx files (companion.vision.model's
Manifest, the type the runtime checks at load).

Stages, each a function: `classifier_stages`, `finder_stages`, `evaluate_stage`.

A run can move to another machine: ``--pack FILE`` writes the training set (real photos
and crops, the synthetic scenes as their seed) into one file of at most about 50 MB
(models/recipe/pack.py), and ``--from-pack FILE --device cuda`` trains from it on a CUDA
GPU exactly as on the CPU (nothing else needs one); the evaluate stage then runs here on
the ONNX files brought back (``--only evaluate --out DIR``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import json
import logging
import math
import os
import pickle
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import onnx
import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `companion` and `models.recipe` without installing

from companion.synth import SURFACES  # noqa: E402
from companion.vision.classifier import EXPECTED_LABELS, PipClassifier, crop_square  # noqa: E402
from companion.vision.datasets import (  # noqa: E402
    FOLDERS,
    DatasetSplit,
    LabelledImage,
    load_split,
)
from companion.vision.finder import DiceFinder  # noqa: E402
from companion.vision.model import (  # noqa: E402
    LABELS_METADATA_KEY,
    parse_manifest,
    save_manifest,
    sha256_of,
)
from models.recipe import data as recipe_data  # noqa: E402
from models.recipe import manifests  # noqa: E402
from models.recipe.checkpoint import (  # noqa: E402
    CANDIDATE_FOLDER,
    STATE_FILE,
    BoxOver,
    Checkpointer,
    Progress,
    load_state,
)
from models.recipe.confidence_fit import fit as fit_confidence  # noqa: E402
from models.recipe.confidence_fit import write_into_manifest  # noqa: E402
from models.recipe.evaluate import best_peak_rule, evaluate  # noqa: E402
from models.recipe.manifests import (  # noqa: E402
    CLASSIFIER_SIZE,
    CROP_MARGIN,
    FINDER_HEADS,
    FINDER_LONG_SIDE,
    Stage,
    StageError,
    parse_stages,
)
from models.recipe.nets import ClassifierExport, FinderExport  # noqa: E402
from models.recipe.pack import SyntheticRecipe, read_pack, scene_sha256, write_pack  # noqa: E402
from models.recipe.training import (  # noqa: E402
    CLASSIFIER_NETS,
    FINDER_NETS,
    Classifier,
    ClassifierStage,
    FinderStage,
    resolve_device,
    train_classifier,
    train_finder,
)

logger = logging.getLogger("train")
T = TypeVar("T")

MODELS = REPO / "models"
CHECKPOINTS = REPO / ".cache" / "models"
QUICK_SCENES, QUICK_EPOCHS, QUICK_STEPS = 30, 2, 60
MODEL_OF = {"pip_classifier": "classifier", "dice_finder": "finder"}
# flags that belong to one session, not to the run: a resume takes them anew
SESSION_FLAGS = ("--resume", "--box", "--save-every", "--threads", "--workers", "--device")


SAMPLE_CACHE = REPO / ".cache" / "samples"


def cached(key: str, make: Callable[[], T], what: str) -> T:
    """``make()``, kept in .cache/samples/KEY.pkl (git-ignored) and reused by later runs
    and resumes: rendering the synthetic scenes and mining hard negatives cost minutes
    that a restarted run should not pay again. The key names everything the result
    depends on."""
    path = SAMPLE_CACHE / f"{key}.pkl"
    if path.is_file():
        logger.info("%s: reused %s", what, path.name)
        with path.open("rb") as handle:
            return pickle.load(handle)  # type: ignore[no-any-return]
    logger.info("%s", what)
    value = make()
    SAMPLE_CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, path)
    return value


def scene_cache_key(count: int, seed: int, translucent: float, fancy: float) -> str:
    """The sample cache's name for a stage's rendered scenes: everything they depend on.
    Without fancy scenes it is the name from before --fancy (those caches still hold:
    the default scenes are unchanged); with them the share is in it, so caches of
    different shares never mix."""
    key = f"scenes-{count}-{seed}-{translucent:g}"
    return key if fancy <= 0 else f"{key}-fancy{fancy:g}"


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# ----------------------------------------------------------------------------------------
# What every stage needs


@dataclass
class Run:
    """One command's data, device and output folder. ``split`` is None when training
    from a pack (no validation or calibration photos there: evaluate here afterwards)."""

    args: argparse.Namespace
    device: torch.device
    train_images: list[LabelledImage]
    train_crops: list[LabelledImage]
    val_crops: tuple[np.ndarray, np.ndarray]
    split: DatasetSplit | None
    synthetic: SyntheticRecipe
    command: str
    argv: list[str] = field(default_factory=list)
    began: float = field(default_factory=time.time)
    today: str = field(default_factory=lambda: dt.date.today().isoformat())
    _scenes: dict[int, list[recipe_data.Scene]] = field(default_factory=dict)

    @property
    def out(self) -> Path:
        return Path(self.args.out)

    def scenes(self, seed: int) -> list[recipe_data.Scene]:
        """The synthetic scenes of a stage's seed (rendered once per seed)."""
        if seed not in self._scenes:
            count = QUICK_SCENES if self.args.quick else self.synthetic.count
            recipe = self.synthetic
            self._scenes[seed] = cached(
                scene_cache_key(count, seed, recipe.translucent, recipe.fancy),
                lambda: recipe_data.render_scenes(
                    count, seed, recipe.translucent, fancy=recipe.fancy
                ),
                f"rendering {count} synthetic scenes (seed {seed})",
            )
            self._check_renderer(seed, self._scenes[seed])
        return self._scenes[seed]

    def _check_renderer(self, seed: int, scenes: list[recipe_data.Scene]) -> None:
        expected = self.synthetic.first_scene_sha256
        checked = seed == self.synthetic.seed and expected and scenes
        if checked and scene_sha256(scenes[0].encoded) != expected:
            logger.warning(
                "the renderer here draws another first scene from seed %d than the pack's "
                "(renderer changed since the pack was made)",
                seed,
            )

    def checkpointer(self, model: str) -> Checkpointer:
        """The model's state keeping: in --state DIR/MODEL (resumed from there when a
        state is saved), or none for a plain run."""
        state_dir = self.args.state
        if state_dir is None:
            return Checkpointer(None, Progress(model), {})
        folder = Path(state_dir) / model
        resumed = load_state(folder) if (folder / STATE_FILE).is_file() else None
        if resumed is not None and resumed.progress.model != model:
            raise SystemExit(f"{folder}: holds a {resumed.progress.model} run, not a {model} one")
        return Checkpointer(
            folder,
            resumed.progress if resumed else Progress(model),
            {"argv": self.argv},
            self.args.save_every,
            self.args.box,
            resumed=resumed,
            began=self.began,
        )

    def stage_export(self, name: str, number: int) -> Path | None:
        """A finished stage's export kept for the next stage (None before the first)."""
        if number < 0:
            return None
        folder = Path(self.args.state) / MODEL_OF[name] if self.args.state else CHECKPOINTS
        path = folder / f"{name}.stage{number}.onnx"
        if not path.is_file():
            raise SystemExit(f"{path}: the export of finished stage {number} is missing")
        return path

    def keep_stage_export(self, path: Path, name: str, number: int) -> Path:
        """Keep a finished stage's export where the next stage (maybe in a later
        session, on another machine) finds it: the state folder, else .cache/models."""
        if self.args.state is None:
            return stage_copy(path, name, number)
        kept = Path(self.args.state) / MODEL_OF[name] / f"{name}.stage{number}.onnx"
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(path.read_bytes())
        return kept

    def trained_on(self, scenes: list[recipe_data.Scene]) -> dict[str, Any]:
        """The manifests' ``trained_on``: real images per folder, the split, the scenes."""
        real: dict[str, dict[str, int]] = {}
        for labelled in self.train_images + self.train_crops:
            entry = real.setdefault(labelled.folder, {"images": 0, "dice": 0})
            entry["images"] += 1
            entry["dice"] += len(labelled.dice)
        return {
            "real": real,
            "split": SPLIT_TEXT,
            "synthetic": {
                "images": len(scenes),
                "dice": sum(len(s.dice) for s in scenes),
                "unreadable_dice": sum(v is None for s in scenes for v in s.values),
                "description": "companion.synth.render_scene 512x384 scenes: "
                f"{len(SURFACES)} surfaces, random dice colours and sizes 22-130 px, camera "
                "tilt 0-45 deg, touching, cocked and half-hidden dice, "
                f"{self.synthetic.translucent:.0%} translucent, clutter, shadows, glare, "
                "blur, noise, JPEG" + fancy_text(self.synthetic.fancy),
            },
        }


def fancy_text(fancy: float) -> str:
    """The manifests' words for the fancy scenes (nothing when there are none)."""
    if fancy <= 0:
        return ""
    return (
        f"; {fancy:.0%} of the scenes in the fancy style (companion/synth/fancy.py: 20-60 "
        "marbled, speckled, glitter, two-tone, metallic dice, gold, silver, coloured and "
        "engraved pips, symbols, trays and bowls, patterned cloths, other polyhedral dice, "
        "tokens and coins as hard negatives)"
    )


SPLIT_TEXT = (
    "companion/vision/datasets.py: epanemu-dice3 train/ but every 8th photo with its copies "
    "(calibration; valid/ held out), byler-d6-train all but every 5th image by name from "
    "index 4 (validation) and from index 1 (calibration), matteop65-d6 train/ but the six_ "
    "session (calibration; valid/ held out), tomitomi-dish-crops (classifier only) but "
    "blocks 3, 11 (calibration) and 7, 15 (validation)"
)


def validation_crops(images: list[LabelledImage]) -> tuple[np.ndarray, np.ndarray]:
    """Each labelled die of ``images`` as the classifier's input crop, and its label."""
    crops, labels = [], []
    for labelled in images:
        image = labelled.load()
        for die in labelled.dice:
            side = die.side * CROP_MARGIN
            crops.append(crop_square(image, die.cx, die.cy, side, CLASSIFIER_SIZE))
            labels.append(die.value - 1)
    return np.stack(crops), np.asarray(labels)


# ----------------------------------------------------------------------------------------
# Export


def export_onnx(
    module: nn.Module,
    example: torch.Tensor,
    path: Path,
    outputs: tuple[str, ...],
    dynamic: dict[int, str],
    labels: tuple[str, ...],
) -> None:
    """The module (moved to the CPU) as ONNX opset 17 with its labels in the metadata."""
    module.cpu().eval()
    torch.onnx.export(
        module,
        (example,),
        str(path),
        input_names=["image"],
        output_names=list(outputs),
        dynamic_axes={"image": dynamic, **{name: {0: "batch"} for name in outputs}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(path))
    entry = model.metadata_props.add()
    entry.key, entry.value = LABELS_METADATA_KEY, json.dumps(list(labels))
    model.producer_name = "table-companion models/train.py"
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def export_classifier(net: Classifier, path: Path) -> None:
    example = torch.zeros(2, 3, CLASSIFIER_SIZE, CLASSIFIER_SIZE)
    export_onnx(
        ClassifierExport(net), example, path, ("probabilities", "embedding"), {0: "batch"},
        EXPECTED_LABELS,
    )  # fmt: skip


def export_finder(net: nn.Module, path: Path) -> None:
    example = torch.zeros(1, 3, 288, FINDER_LONG_SIDE)
    dynamic = {0: "batch", 2: "height", 3: "width"}
    export_onnx(FinderExport(net), example, path, ("maps",), dynamic, ("die",))


def save_weights(net: nn.Module, name: str) -> None:
    """Keep the torch weights (git-ignored) so a later run can fine-tune from them."""
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), CHECKPOINTS / f"{name}.pt")


def stage_copy(path: Path, name: str, number: int) -> Path:
    """Keep an intermediate stage's export for the next stage to continue from."""
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    kept = CHECKPOINTS / f"{name}.stage{number}.onnx"
    kept.write_bytes(path.read_bytes())
    return kept


# ----------------------------------------------------------------------------------------
# Stages


def stage_chain(continuation: str, first: Stage, start_from: Path | None) -> list[Stage]:
    """The stages of one model: the first from scratch (unless continuing from a file, or
    'scratch' given as that file: then the continuation stages alone)."""
    try:
        stages = parse_stages(continuation)
    except StageError as exc:
        raise SystemExit(str(exc)) from exc
    if start_from is None:
        stages.insert(0, first)
    elif not stages:
        raise SystemExit("--*-from needs --*-continue stages")
    return stages


def check_folder_repeats(stages: list[Stage], run: Run) -> None:
    """A stage's FOLDER=N must name a training folder: fail before minutes of sample
    making, not after."""
    known = {im.folder for im in run.train_images + run.train_crops}
    for stage in stages:
        for folder, _ in stage.folder_repeat:
            if folder not in known:
                raise SystemExit(
                    f"stage option {folder}=N: no training folder {folder!r} "
                    f"(training folders: {', '.join(sorted(known))})"
                )


def classifier_stages(run: Run) -> None:
    """Train the classifier's chain of stages, export it, write its manifest. With a
    state folder (--state, --resume) the chain goes on from the stage and step saved
    there, saves as it goes, and stops cleanly at the end of the session's box."""
    args = run.args
    start = None if str(args.classifier_from) == "scratch" else args.classifier_from
    stages = stage_chain(
        args.classifier_continue,
        Stage(args.classifier_epochs, args.classifier_lr, args.seed),
        args.classifier_from,
    )
    check_folder_repeats(stages, run)
    checkpoint = run.checkpointer("classifier")
    target = run.out / "pip_classifier.onnx"
    previous = run.stage_export("pip_classifier", checkpoint.progress.stage - 1) or start
    for number, stage in enumerate(stages):
        if number < checkpoint.progress.stage:
            continue  # finished in an earlier session: its export is `previous`
        set_seed(stage.seed)
        scenes = run.scenes(stage.seed)
        hard = classifier_hard_negatives(run) if stage.hard else {}
        bank = recipe_data.build_crop_bank(
            run.train_images, scenes, stage.seed, hard, run.train_crops
        )
        settings = ClassifierStage(
            QUICK_EPOCHS if args.quick else stage.count, stage.seed, stage.lr, stage.minutes,
            stage.real_repeat, previous, args.workers, stage.folder_repeat, args.classifier_net,
            stage.small_share,
        )  # fmt: skip
        writer = functools.partial(classifier_writer, run, scenes, bank)
        checkpoint.export = functools.partial(
            export_candidate, writer, "pip_classifier.onnx", checkpoint, stage, hard
        )
        net, done = train_classifier(bank, run.val_crops, settings, run.device, checkpoint)
        checkpoint.next_stage(stage.describe(done, "epochs", hard))
        export_classifier(net, target)
        if number < len(stages) - 1:  # the next stage continues from this export
            previous = run.keep_stage_export(target, "pip_classifier", number)
        checkpoint.finish(net, number == len(stages) - 1)
    save_weights(net, "pip_classifier")
    done_log = checkpoint.progress.finished_stages
    logger.info("classifier stages: %s", "; ".join(done_log))
    write_classifier(run, net, target, scenes, bank, done_log)
    logger.info("wrote %s", target)


def export_candidate(
    write: Callable[[nn.Module, Path, list[str]], None],
    file: str,
    checkpoint: Checkpointer,
    stage: Stage,
    hard: dict[Path, np.ndarray],
    net: nn.Module,
    folder: Path,
) -> None:
    """The candidate a save exports into ``folder``: the net as it is, with its manifest
    naming the stages so far (``write``: write_classifier or write_finder, bound to the
    run's data)."""
    folder.mkdir(parents=True, exist_ok=True)
    stages = list(checkpoint.progress.finished_stages)
    if checkpoint.saved_steps:  # a save mid-stage; finish() exports with the stage done
        stages.append(
            stage.describe(checkpoint.saved_steps, "steps", hard) + " (stage in progress)"
        )
    write(net, folder / file, stages)


def classifier_writer(
    run: Run,
    scenes: list[recipe_data.Scene],
    bank: recipe_data.CropBank,
    net: nn.Module,
    target: Path,
    done_log: list[str],
) -> None:
    write_classifier(run, net, target, scenes, bank, done_log)  # type: ignore[arg-type]


def finder_writer(
    run: Run, synthetic: list[recipe_data.Scene], net: nn.Module, target: Path, log: list[str]
) -> None:
    write_finder(run, net, target, synthetic, log)


def write_classifier(
    run: Run,
    net: Classifier,
    target: Path,
    scenes: list[recipe_data.Scene],
    bank: recipe_data.CropBank,
    done_log: list[str],
) -> None:
    """Export the classifier to ``target`` with its manifest (a candidate or the end)."""
    export_classifier(net, target)
    trained_on = {
        **run.trained_on(scenes),
        "crops": {"total": len(bank), "per_class": np.bincount(bank.labels).tolist()},
        "classifier_net": run.args.classifier_net,
        "classifier_stages": inherited_stages(run.args.classifier_from) + done_log,
        "unreadable_class": "background patches of real and synthetic tables, synthetic "
        "cocked/half-hidden/tumbling dice, real dice shifted 0.65-0.9 side off centre "
        "(partial), hard negatives of the finder",
    }
    manifest = manifests.classifier_manifest(
        created=run.today, command=run.command, seed=run.args.seed, trained_on=trained_on,
        embedding_width=net.fc.in_features,
    )  # fmt: skip
    save_manifest(manifest, target)


def inherited_stages(start: Path | None) -> list[str]:
    """The classifier stages of the model a run continues (--classifier-from's manifest),
    so that a continued model's manifest lists all of its training, not only this run's."""
    manifest = None if start is None else start.with_suffix(".json")
    if manifest is None or str(start) == "scratch" or not manifest.exists():
        return []
    trained_on = parse_manifest(manifest).raw.get("trained_on", {})
    stages = trained_on.get("classifier_stages", []) if isinstance(trained_on, dict) else []
    return [str(line) for line in stages] if isinstance(stages, list) else []


def classifier_hard_negatives(run: Run) -> dict[Path, np.ndarray]:
    """The false boxes of the finder this run made (in --out), else the shipped one's."""
    miner = run.out / "dice_finder.onnx"
    return mine_hard_negatives(
        run.train_images, miner if miner.exists() else MODELS / "dice_finder.onnx"
    )


def finder_stages(run: Run) -> None:
    """Train the finder's chain of stages, export it, write its manifest (a state folder
    as for the classifier)."""
    args = run.args
    stages = stage_chain(
        args.finder_continue, Stage(args.finder_steps, args.finder_lr, args.seed), args.finder_from
    )
    check_folder_repeats(stages, run)
    checkpoint = run.checkpointer("finder")
    from_state = finder_state_start(args.finder_from, args.finder_net)
    start_file = from_state[1] if from_state else args.finder_from
    previous = run.stage_export("dice_finder", checkpoint.progress.stage - 1) or start_file
    for number, stage in enumerate(stages):
        if number < checkpoint.progress.stage:
            continue
        set_seed(stage.seed)
        synthetic = run.scenes(stage.seed)
        hard: dict[Path, np.ndarray] = {}
        if stage.hard and previous is not None:
            hard = mine_hard_negatives(run.train_images, previous)
        # real=N: every real photo N times in the scene pool (the synthetic scenes once),
        # FOLDER=N that folder's photos N times; round r holds the photos drawn > r times
        # (without per-folder repeats: the photos' list N times, as before)
        real_scenes = [
            (recipe_data.scene_from_labelled(im, hard.get(im.path)), stage.repeat_for(im.folder))
            for im in run.train_images
        ]
        rounds = max((times for _, times in real_scenes), default=0)
        scenes = [
            scene for r in range(rounds) for scene, times in real_scenes if times > r
        ] + synthetic
        starts_fresh = first_stage_starts_afresh(args.finder_net, previous, args.finder_from)
        # from a state folder, the first stage takes its net with BatchNorm live (the
        # export beside it only gives the false boxes to mine)
        state = from_state[0] if from_state and number == 0 else None
        settings = FinderStage(
            QUICK_STEPS if args.quick else stage.count, stage.seed, stage.lr, stage.minutes,
            None if starts_fresh or state else previous, args.workers, args.finder_net, state,
        )  # fmt: skip
        writer = functools.partial(finder_writer, run, synthetic)
        checkpoint.export = functools.partial(
            export_candidate, writer, "dice_finder.onnx", checkpoint, stage, hard
        )
        net, done = train_finder(scenes, settings, run.device, checkpoint)
        checkpoint.next_stage(stage.describe(done, "steps", hard))
        if number < len(stages) - 1:
            CHECKPOINTS.mkdir(parents=True, exist_ok=True)
            export_finder(net, CHECKPOINTS / "dice_finder.next.onnx")
            previous = run.keep_stage_export(
                CHECKPOINTS / "dice_finder.next.onnx", "dice_finder", number
            )
        checkpoint.finish(net, number == len(stages) - 1)
    save_weights(net, "dice_finder")
    logger.info("finder stages: %s", "; ".join(checkpoint.progress.finished_stages))
    write_finder(
        run, net, run.out / "dice_finder.onnx", synthetic, checkpoint.progress.finished_stages
    )


def first_stage_starts_afresh(net: str, previous: Path | None, finder_from: Path | None) -> bool:
    """Whether a lite0 or wide run's first stage starts from its own first weights
    (ImageNet's, random) though --finder-from names a finder: when that file is a net of
    another shape, it only gives the false boxes to mine. A small finder from a file of
    another shape is refused by load_folded_onnx (its convolutions do not match)."""
    return (
        net != "small"
        and previous is not None
        and previous == finder_from
        and finder_net_of(previous) != net
    )


def finder_state_start(path: Path | None, net: str) -> tuple[Path, Path] | None:
    """For --finder-from a state folder of an earlier finder run (DIR or DIR/finder,
    holding state.pt and candidate/dice_finder.onnx): its state file and its export;
    None for an exported file. The state's net must be of --finder-net's kind."""
    if path is None or not path.is_dir():
        return None
    folder = path / "finder" if (path / "finder" / STATE_FILE).is_file() else path
    state, export = folder / STATE_FILE, folder / CANDIDATE_FOLDER / "dice_finder.onnx"
    if not state.is_file() or not export.is_file():
        raise SystemExit(
            f"--finder-from {path}: a folder must hold a finder run's {STATE_FILE} and "
            f"{CANDIDATE_FOLDER}/dice_finder.onnx"
        )
    if finder_net_of(export) != net:
        raise SystemExit(
            f"--finder-from {path}: its net is {finder_net_of(export)}, not --finder-net {net}"
        )
    return state, export


def finder_net_of(path: Path) -> str:
    """Which net an exported finder is (its manifest's trained_on.finder_net; the small
    one before the field was written)."""
    return net_of_export(path, "finder_net")


def write_finder(
    run: Run, net: nn.Module, target: Path, synthetic: list[recipe_data.Scene], log: list[str]
) -> None:
    """Export the finder to ``target`` with its manifest (a candidate or the end)."""
    export_finder(net, target)
    trained_on = {
        **run.trained_on(synthetic),
        "finder_windows": "192x192, dice 6-110 px",
        "finder_net": run.args.finder_net,
        "finder_stages": log,
    }
    manifest = manifests.finder_manifest(
        created=run.today, command=run.command, seed=run.args.seed, trained_on=trained_on,
        heads=FINDER_HEADS,
    )  # fmt: skip
    save_manifest(manifest, target)


def evaluate_stage(run: Run) -> None:
    """The finder's peak rule and the classifier's confidence map, both chosen on the
    calibration part, then the figures on the validation part into both manifests."""
    if run.split is None:
        logger.info("trained from a pack: evaluate where the data is (--only evaluate)")
        return
    out = run.out
    if not (out / "pip_classifier.onnx").exists():
        # a finder-only run's --out: the peak rule and figures need a pair (the exports
        # and the state are written already)
        logger.info(
            "%s holds no classifier: judge the finder with one, e.g. bench/model_pairs.py "
            "--finder NAME=%s --classifier shipped=models",
            out,
            out,
        )
        return
    finder = None
    if (out / "dice_finder.onnx").exists():
        finder = choose_peak_rule(out, run.split)
        fit_confidence_map(out, run.args.data)  # the map belongs to the pair
    classifier = PipClassifier.load(out)
    figures: dict[str, dict[str, object]] = {}
    for folder, images in run.split.validation.items():
        figures[folder] = evaluate(images, finder, classifier).summary()
        logger.info("validation %s: %s", folder, json.dumps(figures[folder]))
    folders = tuple(figures)
    path = out / "pip_classifier.onnx"
    save_manifest(manifests.with_figures(classifier.model.manifest, figures, folders), path)
    if finder is not None:
        finder_manifest = parse_manifest(out / "dice_finder.json")
        scene_folders = tuple(f for f in folders if f in FOLDERS)
        updated = manifests.with_figures(finder_manifest, figures, scene_folders)
        save_manifest(updated, out / "dice_finder.onnx")
    logger.info("done")


def choose_peak_rule(out: Path, split: DatasetSplit) -> DiceFinder:
    """Which finder peaks are dice once read (companion.vision.finder.PeakRule): needs
    both models; chosen on the calibration photos, written into the finder's manifest."""
    finder = DiceFinder.load(out)
    classifier = PipClassifier.load(out)
    tuning = [im for name in FOLDERS for im in split.calibration.get(name, ())]
    rule = best_peak_rule(tuning, finder, classifier)
    save_manifest(manifests.with_peak_rule(finder.model.manifest, rule), out / "dice_finder.onnx")
    logger.info("finder peak rule %s (chosen on %d calibration images)", rule, len(tuning))
    return DiceFinder.load(out)


def fit_confidence_map(out: Path, data: Path | None) -> None:
    """The classifier's confidence map and auto-apply threshold, fitted on the
    calibration part with the pair in ``out`` (models/recipe/confidence_fit.py)."""
    confidence_map, record = fit_confidence(out, data)
    write_into_manifest(out, confidence_map, {**record, "command": "python models/train.py"})
    logger.info(
        "confidence map: %d points, auto-apply threshold %s (%s of %s calibration rolls "
        "applied, %s wrong)",
        len(confidence_map.xs), confidence_map.threshold, record["rolls_applied"],
        record["rolls"], record["rolls_applied_wrong"],
    )  # fmt: skip


def mine_hard_negatives(
    images: list[LabelledImage], finder_onnx: Path, threshold: float = 0.3
) -> dict[Path, np.ndarray]:
    """Boxes an exported finder reports on TRAINING images far from every labelled die:
    (cx, cy, side) rows per image, used as hard negatives. epanemu-dice3 is left out: some
    of its background dice are unlabelled, so its "false" boxes may be real dice."""
    key = f"hard-{sha256_of(finder_onnx)[:16]}-{threshold:g}-{len(images)}"
    return cached(
        key,
        lambda: _mine(images, finder_onnx, threshold),
        f"mining hard negatives with {finder_onnx.name}",
    )


def _mine(
    images: list[LabelledImage], finder_onnx: Path, threshold: float
) -> dict[Path, np.ndarray]:
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(finder_onnx, Path(folder) / "dice_finder.onnx")
        manifest = json.loads((MODELS / "dice_finder.json").read_text(encoding="utf-8"))
        manifest["sha256"] = sha256_of(Path(folder) / "dice_finder.onnx")
        (Path(folder) / "dice_finder.json").write_text(json.dumps(manifest), encoding="utf-8")
        finder = DiceFinder.load(Path(folder), threshold=threshold)
    hard: dict[Path, np.ndarray] = {}
    for labelled in images:
        if labelled.folder == "epanemu-dice3":
            continue
        rows = [
            (box.cx, box.cy, (box.w + box.h) / 2)
            for box in finder.find(labelled.load())
            if all(math.hypot(box.cx - d.cx, box.cy - d.cy) > 0.8 * d.side for d in labelled.dice)
        ]
        if rows:
            hard[labelled.path] = np.asarray(rows, np.float32)
    logger.info(
        "hard negatives: %d boxes on %d training images",
        sum(len(v) for v in hard.values()),
        len(hard),
    )
    return hard


# ----------------------------------------------------------------------------------------
# The command


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few minutes: smoke-test run")
    parser.add_argument(
        "--only",
        choices=("finder", "classifier", "evaluate"),
        help="train one model, or only choose the rules and measure the models in --out",
    )
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--finder-steps", type=int, default=1500)
    parser.add_argument(
        "--finder-from",
        type=Path,
        default=None,
        help="continue training this exported dice_finder.onnx (BatchNorm folded and frozen), "
        "or the net saved in a finder run's state folder (BatchNorm live; its candidate "
        "export gives the hard negatives)",
    )
    parser.add_argument(
        "--finder-net", choices=FINDER_NETS, default=None,
        help="small: the 154 k-parameter finder (default, or the net of --finder-from's "
        "file); wide: the same net with 1.5 times "
        "its channels, from random weights; lite0: EfficientNet-Lite0's "
        "first 8 blocks from ImageNet weights (models/recipe/lite_finder.py); with "
        "--finder-from, that finder's false boxes are the first stage's hard negatives",
    )  # fmt: skip
    parser.add_argument("--finder-lr", type=float, default=3e-3)
    parser.add_argument(
        "--finder-continue",
        default="",
        help="continuation stages after the first, comma-separated STEPS:LR:SEED[:hard]"
        "[:real=N][:min=M][:FOLDER=N] (hard: mine the previous stage's false boxes on training "
        "images as hard negatives; real=N: the real photos N times in the scene pool; min=M: "
        "stop after M minutes, learning rate annealed over them; FOLDER=N, e.g. "
        "rune55-webcams=1: that folder's photos N times in place of real=N)",
    )
    parser.add_argument(
        "--classifier-net", choices=CLASSIFIER_NETS, default=None,
        help="small: the 166 k-parameter classifier (default, or the net of "
        "--classifier-from's file); wide: the same net with twice "
        "its channels, from random weights; lite0: EfficientNet-Lite0's "
        "first 8 blocks from ImageNet weights, pooled (models/recipe/lite_classifier.py)",
    )  # fmt: skip
    parser.add_argument("--classifier-epochs", type=int, default=16)
    parser.add_argument("--classifier-lr", type=float, default=4e-3)
    parser.add_argument(
        "--classifier-from",
        type=Path,
        default=None,
        help="continue training this exported pip_classifier.onnx (skips the first stage); "
        "'scratch': the --classifier-continue stages alone, the first from scratch",
    )
    parser.add_argument(
        "--classifier-continue",
        default="",
        help="continuation stages, comma-separated EPOCHS:LR:SEED[:real=N][:hard][:min=M]"
        "[:small=S][:FOLDER=N] (small=S: that share of the crops given the look of an 8-26 "
        "px die blown up to the input; real=N: each real photo's die N times per epoch; hard: "
        "the false boxes of the finder in --out (else models/) on training photos join the "
        "unreadable class; FOLDER=N: that folder's dice N times in place of real=N)",
    )
    parser.add_argument("--synthetic", type=int, default=700, help="synthetic scenes per stage")
    parser.add_argument(
        "--translucent",
        type=float,
        default=recipe_data.TRANSLUCENT,
        help="chance a rendered die is of see-through plastic (default %(default)s; models "
        "1.3.0 and the stage-9 finder run of 2026-11-30 were trained without: 0)",
    )
    parser.add_argument(
        "--fancy", type=float, default=0.0, metavar="SHARE",
        help="share of the synthetic scenes in the fancy style (companion/synth/fancy.py: "
        "fancy dice, trays and bowls, patterned cloths, things that are not d6 dice as hard "
        "negatives); 0 (default): the scenes of before, byte for byte, from the same caches",
    )  # fmt: skip
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument(
        "--device", default="cpu", help="cpu (default) or cuda: where the nets train"
    )
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument(
        "--pack", type=Path, default=None, metavar="FILE",
        help="write the training set into FILE (at most about 50 MB) and stop",
    )  # fmt: skip
    parser.add_argument(
        "--from-pack", type=Path, default=None, metavar="FILE",
        help="train from a pack (--pack) instead of ../shared/data",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=MODELS,
        help="where the models go (default: the repository's models/, the shipped files: "
        "give a scratch folder for a candidate)",
    )  # fmt: skip
    parser.add_argument(
        "--state", type=Path, default=None, metavar="DIR",
        help="keep the run's whole state in DIR/classifier and DIR/finder (e.g. "
        "models/training/NAME, committed): saved every --save-every minutes with a "
        "candidate export beside it, so the run can go on with --resume DIR",
    )  # fmt: skip
    parser.add_argument(
        "--resume", type=Path, default=None, metavar="DIR",
        help="go on with the run saved in DIR (its own arguments; this command's --box, "
        "--save-every, --threads, --workers and --device apply)",
    )  # fmt: skip
    parser.add_argument(
        "--box", type=float, default=None, metavar="MINUTES",
        help="this session's time box: stop cleanly after MINUTES (state saved, candidate "
        "exported) so that --resume goes on",
    )  # fmt: skip
    parser.add_argument("--save-every", type=float, default=10.0, metavar="MINUTES")
    parser.add_argument(
        "--workers", type=int, default=1,
        help="processes making the augmented batches beside the training (0: inline)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    # a net not named is the one of the file continued (the shipped finder is lite0, the
    # shipped classifier wide), else the small one
    args.finder_net = args.finder_net or net_of_export(args.finder_from, "finder_net")
    args.classifier_net = args.classifier_net or net_of_export(
        args.classifier_from, "classifier_net"
    )
    return args


def net_of_export(path: Path | None, key: str) -> str:
    """Which net an exported .onnx file is (its manifest's trained_on[key]; "small" for
    none, a file from before the field was written, a state folder or 'scratch')."""
    if path is None or path.suffix != ".onnx" or not path.with_suffix(".json").is_file():
        return "small"
    trained_on = parse_manifest(path.with_suffix(".json")).raw.get("trained_on", {})
    return str(trained_on.get(key, "small")) if isinstance(trained_on, dict) else "small"


def session_flags_removed(argv: list[str]) -> list[str]:
    """``argv`` without the flags that belong to one session (SESSION_FLAGS, with their
    values): what a state keeps to resume the run with."""
    kept, skip = [], False
    for item in argv:
        if skip:
            skip = False
            continue
        name = item.split("=", 1)[0]
        if name in SESSION_FLAGS:
            skip = "=" not in item
            continue
        kept.append(item)
    return kept


def session_flags_only(argv: list[str]) -> list[str]:
    """The SESSION_FLAGS of ``argv`` with their values, in order."""
    kept, take = [], False
    for item in argv:
        if take:
            kept.append(item)
            take = False
        elif item.split("=", 1)[0] in SESSION_FLAGS:
            kept.append(item)
            take = "=" not in item
    return kept


def resumed_arguments(argv: list[str]) -> list[str]:
    """--resume DIR: the run's saved arguments, then this command's session flags."""
    args = parse_args(argv)
    folder = args.resume
    saved = next(
        (load_state(folder / model).arguments for model in ("classifier", "finder")
         if (folder / model / STATE_FILE).is_file()),
        None,
    )  # fmt: skip
    if saved is None:
        raise SystemExit(f"--resume {folder}: no saved run there (classifier/ or finder/)")
    return [*saved["argv"], "--state", str(folder), *session_flags_only(argv)]


def prepare(args: argparse.Namespace, command: str) -> Run:
    """The run's data: the split of ../shared/data, or a pack's training set."""
    device = resolve_device(args.device)
    if not 0.0 <= args.fancy <= 1.0:
        raise SystemExit(f"--fancy {args.fancy}: a share is 0-1")
    recipe = SyntheticRecipe(args.synthetic, args.seed, args.translucent, "", args.fancy)
    if args.from_pack is not None:
        pack = read_pack(args.from_pack)
        logger.info("training from the pack %s (made %s)", args.from_pack, pack.made)
        packed = pack.synthetic
        if args.fancy > 0:  # this command's share over the pack's
            packed = dataclasses.replace(packed, fancy=args.fancy)
        return Run(
            args, device, list(pack.train), list(pack.train_crops), pack.validation_crops,
            None, packed, command,
        )  # fmt: skip
    split = load_split(args.data)
    val = validation_crops(list(split.all_validation())) if args.only != "evaluate" else (
        np.zeros((0, CLASSIFIER_SIZE, CLASSIFIER_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    )  # fmt: skip
    return Run(
        args, device, list(split.train), list(split.train_crops), val, split, recipe, command
    )


def pack_training_set(run: Run, path: Path) -> None:
    """--pack: the training set and the first stage's scene recipe in one file."""
    made_with = run.synthetic
    first = recipe_data.render_scenes(
        1, run.args.seed, made_with.translucent, fancy=made_with.fancy
    )
    recipe = SyntheticRecipe(
        made_with.count, run.args.seed, made_with.translucent,
        scene_sha256(first[0].encoded), made_with.fancy,
    )  # fmt: skip
    made: dict[str, object] = {
        "command": run.command,
        "data": str(run.args.data or "../shared/data"),
    }
    size = write_pack(path, run.train_images, run.train_crops, run.val_crops, recipe, made)
    logger.info("wrote %s: %.1f MB", path, size / 1e6)


def main(argv: list[str] | None = None) -> int:
    given = list(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if parse_args(given).resume is not None:
        given = resumed_arguments(given)
    args = parse_args(given)
    torch.set_num_threads(args.threads)
    set_seed(args.seed)
    saved_argv = session_flags_removed(given)
    command = "python models/train.py " + " ".join(saved_argv)
    run = prepare(args, command.strip())
    run.argv = strip_state(saved_argv)
    if args.pack is not None:
        pack_training_set(run, args.pack)
        return 0
    run.out.mkdir(parents=True, exist_ok=True)
    try:
        if args.only in (None, "classifier"):
            classifier_stages(run)
        if args.only in (None, "finder"):
            finder_stages(run)
    except BoxOver as stop:
        logger.info(
            "%s: the state and a candidate are in %s; go on with "
            "python models/train.py --resume %s --box MINUTES",
            stop, args.state, args.state,
        )  # fmt: skip
        return 0
    evaluate_stage(run)
    return 0


def strip_state(argv: list[str]) -> list[str]:
    """The arguments without --state DIR (the resume names the folder itself)."""
    kept, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item == "--state":
            skip = True
        elif not item.startswith("--state="):
            kept.append(item)
    return kept


if __name__ == "__main__":
    sys.exit(main())
