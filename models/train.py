"""Rebuild both vision models: the dice finder and the pip classifier.

    .venv/bin/pip install torch==2.13.0      # the optional `train` extra, CPU wheel
    nice -n 5 .venv/bin/python models/train.py [--quick] [--only finder|classifier]

Trains on the training part of ../shared/data (companion.vision.datasets documents the
fixed split) plus synthetic scenes from companion.vision.render, with a fixed seed;
exports ONNX (opset 17, dynamic batch), measures both models through the runtime
wrappers on the validation part (never trained on, never used to tune) and writes the
figures, the training data and the sha256 into the manifests beside the .onnx files.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn
from torch.nn import functional as F

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `companion` and `models.recipe` without installing

from companion.vision.classifier import EXPECTED_LABELS, PipClassifier  # noqa: E402
from companion.vision.datasets import (  # noqa: E402
    FOLDERS,
    LabelledImage,
    load_split,
)
from companion.vision.finder import DiceFinder  # noqa: E402
from companion.vision.model import LABELS_METADATA_KEY, sha256_of  # noqa: E402
from companion.vision.render import SURFACES  # noqa: E402
from models.recipe import data as recipe_data  # noqa: E402
from models.recipe.evaluate import best_peak_rule, evaluate  # noqa: E402
from models.recipe.from_onnx import freeze_batchnorm, load_folded_onnx  # noqa: E402
from models.recipe.nets import (  # noqa: E402
    FINDER_HEADS,
    FINDER_STRIDE,
    ClassifierExport,
    ClassifierNet,
    FinderExport,
    FinderNet,
)

logger = logging.getLogger("train")

MODELS = REPO / "models"
CHECKPOINTS = REPO / ".cache" / "models"
MEAN, STD, SCALE = (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), 1 / 255
CLASSIFIER_SIZE = 48
CROP_MARGIN = 1.3
FINDER_LONG_SIDE = 512
FINDER_WINDOW = 192
# the versions the next exports get (classifier 2.0.0: trained from scratch on new data,
# the calibration part held back, with the embedding output)
CLASSIFIER_VERSION = "2.0.0"
FINDER_VERSION = "1.5.0"


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def budget_lr(max_lr: float, progress: float) -> float:
    """Learning rate of a time-budgeted continuation: 5% warm-up, then cosine down to
    max_lr / 100 as ``progress`` (the larger of step and wall-time fraction) reaches 1."""
    if progress < 0.05:
        return max_lr * (0.1 + 0.9 * progress / 0.05)
    fraction = min(1.0, (progress - 0.05) / 0.95)
    return max_lr * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * fraction)))


def to_tensor(batch_bgr: np.ndarray) -> torch.Tensor:
    """N x H x W x 3 BGR uint8 -> normalised RGB NCHW, as the manifests declare."""
    rgb = batch_bgr[..., ::-1].astype(np.float32) * SCALE
    rgb = (rgb - np.float32(MEAN)) / np.float32(STD)
    return torch.from_numpy(np.ascontiguousarray(rgb.transpose(0, 3, 1, 2)))


# ----------------------------------------------------------------------------------------
# Classifier


def validation_crops(images: list[LabelledImage]) -> tuple[np.ndarray, np.ndarray]:
    from companion.vision.classifier import crop_square

    crops, labels = [], []
    for labelled in images:
        image = labelled.load()
        for die in labelled.dice:
            side = die.side * CROP_MARGIN
            crops.append(crop_square(image, die.cx, die.cy, side, CLASSIFIER_SIZE))
            labels.append(die.value - 1)
    return np.stack(crops), np.asarray(labels)


def train_classifier(
    bank: recipe_data.CropBank,
    val: tuple[np.ndarray, np.ndarray],
    epochs: int,
    seed: int,
    init_onnx: Path | None = None,
    max_lr: float = 4e-3,
    budget_minutes: float | None = None,
    real_repeat: int = 1,
) -> tuple[ClassifierNet, int]:
    """Train (or continue from an exported ONNX) the classifier; returns the net and the
    epochs done. ``real_repeat`` > 1 shows each real photo's die that many times per
    epoch (real dice are the hard part); ``budget_minutes`` ends a continuation by wall
    time with the learning rate annealed over it (see budget_lr)."""
    rng = np.random.default_rng(seed + 1)
    net = ClassifierNet(classes=len(EXPECTED_LABELS))
    if init_onnx is not None:
        load_folded_onnx(net, init_onnx)
        logger.info("classifier starts from %s (BatchNorm folded and frozen)", init_onnx)
    pool = np.arange(len(bank))
    if real_repeat > 1 and bank.real_die is not None:
        extra = np.flatnonzero(bank.real_die)
        pool = np.concatenate([pool] + [extra] * (real_repeat - 1))
    batch = 128
    steps_per_epoch = math.ceil(len(pool) / batch)
    total_steps = epochs * steps_per_epoch
    optimiser = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    schedule = (
        None
        if budget_minutes is not None
        else torch.optim.lr_scheduler.OneCycleLR(
            optimiser, max_lr=max_lr, total_steps=total_steps, pct_start=0.1
        )
    )
    val_x, val_y = to_tensor(val[0]), torch.from_numpy(val[1])
    began, done_steps, epochs_done = time.time(), 0, 0
    for epoch in range(epochs):
        net.train()
        if init_onnx is not None:
            freeze_batchnorm(net)
        order = rng.permutation(pool)
        started, total_loss = time.time(), 0.0
        for step in range(steps_per_epoch):
            if schedule is None:
                progress = max(
                    done_steps / total_steps, (time.time() - began) / (60 * budget_minutes)
                )
                for group in optimiser.param_groups:
                    group["lr"] = budget_lr(max_lr, progress)
            indices = order[step * batch : (step + 1) * batch]
            samples = [
                recipe_data.classifier_sample(bank, int(i), CLASSIFIER_SIZE, CROP_MARGIN, rng)
                for i in indices
            ]
            x = to_tensor(np.stack([s[0] for s in samples]))
            y = torch.tensor([s[1] for s in samples])
            loss = F.cross_entropy(net(x), y, label_smoothing=0.05)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if schedule is not None:
                schedule.step()
            done_steps += 1
            total_loss += float(loss.detach())
        epochs_done += 1
        net.eval()
        with torch.no_grad():
            predicted = net(val_x).argmax(1)
        accuracy = float((predicted == val_y).float().mean())
        logger.info(
            "classifier epoch %d/%d loss %.4f val accuracy (labelled boxes) %.4f  %.0fs",
            epoch + 1, epochs, total_loss / steps_per_epoch, accuracy, time.time() - started,
        )  # fmt: skip
        if budget_minutes is not None and time.time() - began >= 60 * budget_minutes:
            logger.info("classifier: time budget reached after %d epochs", epochs_done)
            break
    net.eval()
    return net, epochs_done


# ----------------------------------------------------------------------------------------
# Finder


class FinderStream(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    """Endless augmented finder windows (one worker process makes them while training)."""

    def __init__(self, scenes: list[recipe_data.Scene], seed: int) -> None:
        self.scenes = scenes
        self.seed = seed

    def __iter__(self):  # type: ignore[no-untyped-def]
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(self.seed + (info.id if info else 0))
        while True:
            scene = self.scenes[int(rng.integers(len(self.scenes)))]
            window, targets, mask = recipe_data.finder_sample(
                scene, FINDER_WINDOW, FINDER_STRIDE, rng
            )
            yield to_tensor(window[None])[0], torch.from_numpy(targets), torch.from_numpy(mask)


def focal_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss on the centre heat map."""
    prob = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    positive = target.eq(1).float()
    pos = -torch.log(prob) * (1 - prob) ** 2 * positive
    neg = -torch.log(1 - prob) * prob**2 * (1 - target) ** 4 * (1 - positive)
    return (pos.sum() + neg.sum()) / positive.sum().clamp(min=1)


def finder_loss(out: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    heat = focal_loss(out[:, 0], targets[:, 0])
    centres = mask[:, 0].sum().clamp(min=1)
    size = (F.l1_loss(out[:, 1], targets[:, 1], reduction="none") * mask[:, 0]).sum() / centres
    offset = (
        F.l1_loss(out[:, 2:4], targets[:, 2:4], reduction="none") * mask[:, :1]
    ).sum() / centres
    rotated = mask[:, 1].sum().clamp(min=1)
    rotation = (
        F.l1_loss(out[:, 4:6], targets[:, 4:6], reduction="none") * mask[:, 1:2]
    ).sum() / rotated
    return heat + size + offset + 0.5 * rotation


def train_finder(
    scenes: list[recipe_data.Scene],
    steps: int,
    seed: int,
    init_onnx: Path | None = None,
    max_lr: float = 3e-3,
    budget_minutes: float | None = None,
) -> tuple[FinderNet, int]:
    """Train (or continue from an exported ONNX) the finder; returns the net and the
    steps done (``budget_minutes`` ends a continuation by wall time, see budget_lr)."""
    net = FinderNet()
    if init_onnx is not None:
        load_folded_onnx(net, init_onnx)
        logger.info("finder starts from %s (BatchNorm folded and frozen)", init_onnx)
    loader = torch.utils.data.DataLoader(
        FinderStream(scenes, seed + 2), batch_size=24, num_workers=1, persistent_workers=True
    )
    optimiser = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    schedule = (
        None
        if budget_minutes is not None
        else torch.optim.lr_scheduler.OneCycleLR(
            optimiser, max_lr=max_lr, total_steps=steps, pct_start=0.1
        )
    )
    net.train()
    if init_onnx is not None:
        freeze_batchnorm(net)
    started, running = time.time(), 0.0
    for step, (x, targets, mask) in enumerate(loader, start=1):
        if schedule is None:
            progress = max((step - 1) / steps, (time.time() - started) / (60 * budget_minutes))
            if progress >= 1:
                logger.info("finder: time budget reached after %d steps", step - 1)
                step -= 1
                break
            for group in optimiser.param_groups:
                group["lr"] = budget_lr(max_lr, progress)
        loss = finder_loss(net(x), targets, mask)
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        optimiser.step()
        if schedule is not None:
            schedule.step()
        value = float(loss.detach())
        running = 0.98 * running + 0.02 * value if step > 1 else value
        if step % 50 == 0 or step == steps:
            logger.info(
                "finder step %d/%d loss %.4f  %.0fs", step, steps, running, time.time() - started
            )
        if step >= steps:
            break
    net.eval()
    return net, step


# ----------------------------------------------------------------------------------------
# Export and manifests


def export_onnx(
    module: nn.Module,
    example: torch.Tensor,
    path: Path,
    outputs: tuple[str, ...],
    dynamic: dict[int, str],
    labels: tuple[str, ...],
) -> None:
    module.eval()
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


def save_weights(net: nn.Module, name: str) -> None:
    """Keep the torch weights (git-ignored) so a later run can fine-tune from them."""
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), CHECKPOINTS / f"{name}.pt")


def write_manifest(path: Path, body: dict[str, object]) -> None:
    onnx_path = path.with_suffix(".onnx")
    body = {**body, "sha256": sha256_of(onnx_path)}
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


def input_block(shape: list[object], size: list[int]) -> dict[str, object]:
    return {
        "name": "image",
        "shape": shape,
        "layout": "NCHW",
        "colour_order": "RGB",
        "size": size,
        "scale": SCALE,
        "mean": list(MEAN),
        "std": list(STD),
        "formula": "value = (pixel * scale - mean) / std, per channel",
    }


@dataclass(frozen=True)
class Stage:
    """One training run of a chain: steps (finder) or epochs (classifier), peak learning
    rate, seed (also seeds that stage's synthetic scenes) and options."""

    count: int
    lr: float
    seed: int
    hard: bool = False
    real_repeat: int = 1
    minutes: float | None = None

    def describe(self, done: int, unit: str, hard: dict[Path, np.ndarray]) -> str:
        """The stage as the manifests' ``*_stages`` record it, e.g. "38 epochs lr 0.0007
        seed 20261134 hard negatives 358 real x3"."""
        text = f"{done} {unit} lr {self.lr:g} seed {self.seed}"
        if hard:
            text += f" hard negatives {sum(len(rows) for rows in hard.values())}"
        if self.real_repeat > 1:
            text += f" real x{self.real_repeat}"
        return text


def parse_stages(text: str) -> list[Stage]:
    """``COUNT:LR:SEED[:hard][:real=N][:min=M]``, comma-separated."""
    stages = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        fields = item.split(":")
        if len(fields) < 3:
            raise SystemExit(f"stage {item!r}: expected COUNT:LR:SEED[:options]")
        options: dict[str, object] = {}
        for option in fields[3:]:
            if option == "hard":
                options["hard"] = True
            elif option.startswith("real="):
                options["real_repeat"] = int(option[5:])
            elif option.startswith("min="):
                options["minutes"] = float(option[4:])
            else:
                raise SystemExit(f"stage {item!r}: unknown option {option!r}")
        stages.append(Stage(int(fields[0]), float(fields[1]), int(fields[2]), **options))  # type: ignore[arg-type]
    return stages


def render_for(seed: int, args: argparse.Namespace) -> list[recipe_data.Scene]:
    count = 30 if args.quick else args.synthetic
    logger.info("rendering %d synthetic scenes (seed %d)", count, seed)
    return recipe_data.render_scenes(count, seed, args.translucent)


def mine_hard_negatives(
    images: list[LabelledImage], finder_onnx: Path, threshold: float = 0.3
) -> dict[Path, np.ndarray]:
    """Boxes an exported finder reports on TRAINING images far from every labelled die:
    (cx, cy, side) rows per image, used as hard negatives. epanemu-dice3 is left out: some
    of its background dice are unlabelled, so its "false" boxes may be real dice."""
    import shutil
    import tempfile

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few minutes: smoke-test run")
    parser.add_argument(
        "--only",
        choices=("finder", "classifier", "evaluate"),
        help="train one model, or only measure the models in --out",
    )
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--finder-steps", type=int, default=1500)
    parser.add_argument(
        "--finder-from",
        type=Path,
        default=None,
        help="continue training this exported dice_finder.onnx (fine-tune at --finder-lr)",
    )
    parser.add_argument("--finder-lr", type=float, default=3e-3)
    parser.add_argument(
        "--finder-continue",
        default="",
        help="continuation stages after the first, comma-separated STEPS:LR:SEED[:hard]"
        "[:real=N][:min=M] (hard: mine the previous stage's false boxes on training images "
        "as hard negatives; real=N: the real photos N times in the scene pool; min=M: stop "
        "after M minutes, learning rate annealed over them)",
    )
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
        help="continuation stages, comma-separated EPOCHS:LR:SEED[:real=N][:hard][:min=M] "
        "(real=N: each real photo's die N times per epoch; hard: the false boxes of the "
        "finder in --out (else models/) on training photos join the unreadable class)",
    )
    parser.add_argument("--synthetic", type=int, default=700, help="synthetic scenes per stage")
    parser.add_argument(
        "--translucent",
        type=float,
        default=recipe_data.TRANSLUCENT,
        help="chance a rendered die is of see-through plastic (default %(default)s; models "
        "1.3.0 and the stage-9 finder run of 2026-11-30 were trained without: 0)",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--data", type=Path, default=None, help="default ../shared/data")
    parser.add_argument("--out", type=Path, default=MODELS, help="where the models go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.set_num_threads(args.threads)
    set_seed(args.seed)
    command = "python models/train.py" + " ".join(
        [""] + [a for a in (argv if argv is not None else sys.argv[1:])]
    )

    split = load_split(args.data)
    train_images = list(split.train)
    synthetic_count = 0 if args.only == "evaluate" else 30 if args.quick else args.synthetic
    logger.info("rendering %d synthetic scenes", synthetic_count)
    synthetic = recipe_data.render_scenes(synthetic_count, args.seed, args.translucent)
    synthetic_dice = sum(len(s.dice) for s in synthetic)
    synthetic_unreadable = sum(v is None for s in synthetic for v in s.values)
    real_counts = {}
    for labelled in train_images + list(split.train_crops):
        entry = real_counts.setdefault(labelled.folder, {"images": 0, "dice": 0})
        entry["images"] += 1
        entry["dice"] += len(labelled.dice)
    trained_on = {
        "real": real_counts,
        "split": "companion/vision/datasets.py: epanemu-dice3 train/ but every 8th photo "
        "with its copies (calibration; valid/ held out), byler-d6-train all but every 5th "
        "image by name from index 4 (validation) and from index 1 (calibration), matteop65-d6 "
        "train/ but the six_ session (calibration; valid/ held out), tomitomi-dish-crops "
        "(classifier only) but blocks 3, 11 (calibration) and 7, 15 (validation)",
        "synthetic": {
            "images": synthetic_count,
            "dice": synthetic_dice,
            "unreadable_dice": synthetic_unreadable,
            "description": "companion.vision.render.render_scene 512x384 scenes: "
            f"{len(SURFACES)} surfaces, random dice colours and sizes 22-130 px, camera tilt "
            "0-45 deg, touching, cocked and half-hidden dice, "
            f"{args.translucent:.0%} translucent, clutter, shadows, glare, blur, "
            "noise, JPEG",
        },
    }
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    today = dt.date.today().isoformat()

    if args.only in (None, "classifier"):
        stages = parse_stages(args.classifier_continue)
        if args.classifier_from is None:
            stages.insert(0, Stage(args.classifier_epochs, args.classifier_lr, args.seed))
        elif not stages:
            parser.error("--classifier-from needs --classifier-continue stages")
        if str(args.classifier_from) == "scratch":
            args.classifier_from = None
        val = validation_crops(list(split.all_validation()))
        previous, done_log = args.classifier_from, []
        for number, stage in enumerate(stages):
            set_seed(stage.seed)
            scenes = synthetic if stage.seed == args.seed else render_for(stage.seed, args)
            hard_negatives: dict[Path, np.ndarray] = {}
            if stage.hard:  # mined by the finder this run made, else the shipped one
                miner = out / "dice_finder.onnx"
                hard_negatives = mine_hard_negatives(
                    train_images, miner if miner.exists() else MODELS / "dice_finder.onnx"
                )
            bank = recipe_data.build_crop_bank(
                train_images, scenes, stage.seed, hard_negatives, list(split.train_crops)
            )
            net, done = train_classifier(
                bank,
                val,
                epochs=2 if args.quick else stage.count,
                seed=stage.seed,
                init_onnx=previous,
                max_lr=stage.lr,
                budget_minutes=stage.minutes,
                real_repeat=stage.real_repeat,
            )
            done_log.append(stage.describe(done, "epochs", hard_negatives))
            export_onnx(
                ClassifierExport(net),
                torch.zeros(2, 3, CLASSIFIER_SIZE, CLASSIFIER_SIZE),
                out / "pip_classifier.onnx",
                ("probabilities", "embedding"),
                {0: "batch"},
                EXPECTED_LABELS,
            )
            if number < len(stages) - 1:  # the next stage continues from this export
                previous = CHECKPOINTS / f"pip_classifier.stage{number}.onnx"
                CHECKPOINTS.mkdir(parents=True, exist_ok=True)
                previous.write_bytes((out / "pip_classifier.onnx").read_bytes())
        save_weights(net, "pip_classifier")
        logger.info("classifier stages: %s", "; ".join(done_log))
        write_manifest(
            out / "pip_classifier.json",
            {
                "name": "pip_classifier",
                "version": CLASSIFIER_VERSION,
                "task": "read the top face of one six-sided pip die from a crop",
                "created": today,
                "input": input_block(
                    ["batch", 3, CLASSIFIER_SIZE, CLASSIFIER_SIZE], [CLASSIFIER_SIZE] * 2
                ),
                "crop": "square of crop_margin x the die's side around its centre, turned "
                "by the box angle (cv2.getRotationMatrix2D(centre, angle)), resized",
                "outputs": {
                    "names": ["probabilities", "embedding"],
                    "shapes": {
                        "probabilities": ["batch", len(EXPECTED_LABELS)],
                        "embedding": ["batch", ClassifierNet().fc.in_features],
                    },
                    "meaning": "probabilities: batch x 7 softmax probabilities in label "
                    "order; embedding: the pooled features of the crop before the final "
                    "linear layer (probabilities = softmax(embedding x W^T + b))",
                },
                "labels": list(EXPECTED_LABELS),
                "options": {"crop_margin": CROP_MARGIN, "min_confidence": 0.7},
                "trained_on": {
                    **trained_on,
                    "crops": {"total": len(bank), "per_class": np.bincount(bank.labels).tolist()},
                    "classifier_stages": done_log,
                    "unreadable_class": "background patches of real and synthetic tables, "
                    "synthetic cocked/half-hidden/tumbling dice, real dice shifted 0.65-0.9 "
                    "side off centre (partial)",
                },
                "seed": args.seed,
                "training_command": command,
                "validation": {},
            },
        )
        logger.info("wrote %s", out / "pip_classifier.onnx")

    if args.only in (None, "finder"):
        stages = parse_stages(args.finder_continue)
        if args.finder_from is None:
            stages.insert(0, Stage(args.finder_steps, args.finder_lr, args.seed))
        elif not stages:
            parser.error("--finder-from needs --finder-continue stages")
        previous, finder_log = args.finder_from, []
        for number, stage in enumerate(stages):
            set_seed(stage.seed)
            scenes_synthetic = (
                synthetic if stage.seed == args.seed else render_for(stage.seed, args)
            )
            hard: dict[Path, np.ndarray] = {}
            if stage.hard and previous is not None:
                hard = mine_hard_negatives(train_images, previous)
            # real=N: every real photo N times in the scene pool (the synthetic scenes once)
            scenes = [
                recipe_data.scene_from_labelled(im, hard.get(im.path)) for im in train_images
            ] * stage.real_repeat + scenes_synthetic
            net, done = train_finder(
                scenes,
                steps=60 if args.quick else stage.count,
                seed=stage.seed,
                init_onnx=previous,
                max_lr=stage.lr,
                budget_minutes=stage.minutes,
            )
            finder_log.append(stage.describe(done, "steps", hard))
            if number < len(stages) - 1:
                previous = CHECKPOINTS / f"dice_finder.stage{number}.onnx"
                CHECKPOINTS.mkdir(parents=True, exist_ok=True)
                export_onnx(
                    FinderExport(net),
                    torch.zeros(1, 3, 288, FINDER_LONG_SIDE),
                    previous,
                    ("maps",),
                    {0: "batch", 2: "height", 3: "width"},
                    ("die",),
                )
        save_weights(net, "dice_finder")
        logger.info("finder stages: %s", "; ".join(finder_log))
        export_onnx(
            FinderExport(net),
            torch.zeros(1, 3, 288, FINDER_LONG_SIDE),
            out / "dice_finder.onnx",
            ("maps",),
            {0: "batch", 2: "height", 3: "width"},
            ("die",),
        )
        manifest = {
            "name": "dice_finder",
            "version": FINDER_VERSION,
            "task": "find six-sided dice in a table photo (CenterNet-style, stride 4)",
            "created": today,
            "input": input_block(
                ["batch", 3, "height", "width"], [FINDER_LONG_SIDE, FINDER_LONG_SIDE]
            ),
            "resize": "scale so the long side is long_side, pad right/bottom with grey 127 "
            "to a multiple of pad_multiple",
            "outputs": {
                "names": ["maps"],
                "meaning": f"batch x {len(FINDER_HEADS)} x H/4 x W/4: "
                + ", ".join(FINDER_HEADS)
                + " (heat = sigmoid centre score; log_side = ln(side in input px); offset in "
                "cells; angle = atan2(sin4, cos4)/4 degrees, DieBox convention)",
            },
            "labels": ["die"],
            "options": {
                "long_side": FINDER_LONG_SIDE,
                "pad_multiple": 32,
                "stride": FINDER_STRIDE,
                "threshold": 0.3,
                "max_dice": 64,
                "suppress_distance": 0.6,
                "max_input_side": 110,  # the biggest die side in the training windows
                "min_input_side": 6.5,  # a little over the smallest (6)
                "zoom_min_side": 0.7,
            },
            "trained_on": {
                **trained_on,
                "finder_windows": "192x192, dice 6-110 px",
                "finder_stages": finder_log,
            },
            "seed": args.seed,
            "training_command": command,
            "validation": {},
        }
        write_manifest(out / "dice_finder.json", manifest)

    # The finder's peak rule needs both models: which peaks are dice once the classifier
    # has read them (companion.vision.finder.PeakRule); chosen on training images, written
    # into the finder's manifest.
    classifier = PipClassifier.load(out)
    finder_or_none = DiceFinder.load(out) if (out / "dice_finder.onnx").exists() else None
    if finder_or_none is not None:
        # chosen on the calibration part (never trained on by models since 2026-12-01)
        tuning = [im for im in split.all_calibration() if im.folder in FOLDERS]
        rule = best_peak_rule(tuning, finder_or_none, classifier)
        path = out / "dice_finder.json"
        body = json.loads(path.read_text(encoding="utf-8"))
        for name in ("sure_threshold", "min_confidence", "weak_threshold", "weak_min_confidence"):
            body["options"].pop(name, None)
        body["options"]["threshold"] = rule.threshold
        if rule.sure_threshold > rule.threshold:
            body["options"].update(
                sure_threshold=rule.sure_threshold, min_confidence=rule.min_confidence
            )
        if rule.weak_threshold is not None:
            body["options"].update(
                weak_threshold=rule.weak_threshold, weak_min_confidence=rule.weak_min_confidence
            )
        body.pop("sha256", None)
        write_manifest(path, body)
        logger.info("finder peak rule %s (chosen on %d calibration images)", rule, len(tuning))
        finder_or_none = DiceFinder.load(out)

    # Final figures, through onnxruntime, on the validation part only.
    figures: dict[str, dict[str, object]] = {}
    for folder, images in split.validation.items():
        figures[folder] = evaluate(images, finder_or_none, classifier).summary()
        logger.info("validation %s: %s", folder, json.dumps(figures[folder]))
    note = (
        "measured through onnxruntime on the validation part (never trained on, never used "
        "to tune); match rule: found centre within 0.6 x side of the labelled centre"
    )
    for name, keys in (
        ("pip_classifier", ("images", "dice", "classifier_accuracy_on_labelled_boxes",
                            "classifier_unreadable_on_labelled_boxes", "confusions",
                            "value_accuracy_of_found", "unreadable_rate_of_found")),
        ("dice_finder", ("images", "dice", "recall", "false_dice_per_100_images",
                         "missed_false_misread")),
    ):  # fmt: skip
        path = out / f"{name}.json"
        if not path.exists() or (name == "dice_finder" and finder_or_none is None):
            continue
        body = json.loads(path.read_text(encoding="utf-8"))
        body["validation"] = {
            "note": note,
            **{
                # without a finder the summary has no pipeline figures: keep what it has
                folder: {k: figures[folder][k] for k in keys if k in figures[folder]}
                for folder in figures
                if name == "pip_classifier" or folder in FOLDERS  # the finder: scenes
            },
        }
        body.pop("sha256", None)
        write_manifest(path, body)
    logger.info("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
