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
from .from_onnx import freeze_batchnorm, load_folded_onnx
from .manifests import CLASSIFIER_SIZE, CROP_MARGIN, FINDER_STRIDE, MEAN, SCALE, STD
from .nets import ClassifierNet, FinderNet

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
    rgb = batch_bgr[..., ::-1].astype(np.float32) * SCALE
    rgb = (rgb - np.float32(MEAN)) / np.float32(STD)
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

    def progress(self, done_steps: int, began: float) -> float:
        """How far a budgeted stage is (the larger of steps and wall time), 0..1."""
        assert self.budget_minutes is not None
        return max(
            done_steps / self.total_steps, (time.time() - began) / (60 * self.budget_minutes)
        )

    def set_budget_lr(self, optimiser: torch.optim.Optimizer, progress: float) -> None:
        for group in optimiser.param_groups:
            group["lr"] = budget_lr(self.max_lr, progress)


# ----------------------------------------------------------------------------------------
# Classifier


def classifier_pool(bank: recipe_data.CropBank, real_repeat: int) -> np.ndarray:
    """The bank's indices one epoch draws: every crop once, a real die ``real_repeat``
    times."""
    pool = np.arange(len(bank))
    if real_repeat > 1 and bank.real_die is not None:
        extra = np.flatnonzero(bank.real_die)
        pool = np.concatenate([pool] + [extra] * (real_repeat - 1))
    return pool


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
    """What one classifier stage trains with."""

    epochs: int
    seed: int
    max_lr: float = 4e-3
    budget_minutes: float | None = None
    real_repeat: int = 1
    init_onnx: Path | None = None


def train_classifier(
    bank: recipe_data.CropBank,
    val: tuple[np.ndarray, np.ndarray],
    stage: ClassifierStage,
    device: torch.device,
) -> tuple[ClassifierNet, int]:
    """Train (or continue from an exported ONNX) the classifier on ``device``; returns the
    net (on the CPU) and the epochs done."""
    rng = np.random.default_rng(stage.seed + 1)
    net = ClassifierNet(classes=len(EXPECTED_LABELS))
    if stage.init_onnx is not None:
        load_folded_onnx(net, stage.init_onnx)
        logger.info("classifier starts from %s (BatchNorm folded and frozen)", stage.init_onnx)
    net.to(device)
    pool = classifier_pool(bank, stage.real_repeat)
    steps_per_epoch = math.ceil(len(pool) / CLASSIFIER_BATCH)
    schedule = Schedule(stage.max_lr, stage.epochs * steps_per_epoch, stage.budget_minutes)
    optimiser, cycle = schedule.optimiser(net)
    began, done_steps, epochs_done = time.time(), 0, 0
    for epoch in range(stage.epochs):
        net.train()
        if stage.init_onnx is not None:
            freeze_batchnorm(net)
        order = rng.permutation(pool)
        started, total_loss = time.time(), 0.0
        for step in range(steps_per_epoch):
            if cycle is None:
                schedule.set_budget_lr(optimiser, schedule.progress(done_steps, began))
            indices = order[step * CLASSIFIER_BATCH : (step + 1) * CLASSIFIER_BATCH]
            total_loss += classifier_step(net, bank, indices, rng, optimiser, device)
            if cycle is not None:
                cycle.step()  # type: ignore[attr-defined]
            done_steps += 1
        epochs_done += 1
        accuracy = validation_accuracy(net, val, device)
        logger.info(
            "classifier epoch %d/%d loss %.4f val accuracy (labelled boxes) %.4f  %.0fs",
            epoch + 1, stage.epochs, total_loss / steps_per_epoch, accuracy, time.time() - started,
        )  # fmt: skip
        if stage.budget_minutes is not None and time.time() - began >= 60 * stage.budget_minutes:
            logger.info("classifier: time budget reached after %d epochs", epochs_done)
            break
    net.eval()
    return net.cpu(), epochs_done


def classifier_step(
    net: nn.Module,
    bank: recipe_data.CropBank,
    indices: np.ndarray,
    rng: np.random.Generator,
    optimiser: torch.optim.Optimizer,
    device: torch.device,
) -> float:
    """One batch of augmented crops; returns its loss."""
    samples = [
        recipe_data.classifier_sample(bank, int(i), CLASSIFIER_SIZE, CROP_MARGIN, rng)
        for i in indices
    ]
    x = to_tensor(np.stack([s[0] for s in samples])).to(device)
    y = torch.tensor([s[1] for s in samples], device=device)
    loss = F.cross_entropy(net(x), y, label_smoothing=0.05)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return float(loss.detach())


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


@dataclass(frozen=True)
class FinderStage:
    """What one finder stage trains with."""

    steps: int
    seed: int
    max_lr: float = 3e-3
    budget_minutes: float | None = None
    init_onnx: Path | None = None


def train_finder(
    scenes: list[recipe_data.Scene], stage: FinderStage, device: torch.device
) -> tuple[FinderNet, int]:
    """Train (or continue from an exported ONNX) the finder on ``device``; returns the net
    (on the CPU) and the steps done."""
    net = FinderNet()
    if stage.init_onnx is not None:
        load_folded_onnx(net, stage.init_onnx)
        logger.info("finder starts from %s (BatchNorm folded and frozen)", stage.init_onnx)
    net.to(device)
    loader = torch.utils.data.DataLoader(
        FinderStream(scenes, stage.seed + 2),
        batch_size=FINDER_BATCH,
        num_workers=1,
        persistent_workers=True,
        pin_memory=device.type == "cuda",
    )
    schedule = Schedule(stage.max_lr, stage.steps, stage.budget_minutes)
    optimiser, cycle = schedule.optimiser(net)
    net.train()
    if stage.init_onnx is not None:
        freeze_batchnorm(net)
    started, running, step = time.time(), 0.0, 0
    for step, (x, targets, mask) in enumerate(loader, start=1):
        if cycle is None:
            progress = schedule.progress(step - 1, started)
            if progress >= 1:
                logger.info("finder: time budget reached after %d steps", step - 1)
                step -= 1
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
        running = 0.98 * running + 0.02 * value if step > 1 else value
        if step % 50 == 0 or step == stage.steps:
            logger.info(
                "finder step %d/%d loss %.4f  %.0fs",
                step, stage.steps, running, time.time() - started,
            )  # fmt: skip
        if step >= stage.steps:
            break
    net.eval()
    return net.cpu(), step
