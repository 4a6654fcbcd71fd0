"""A training run that survives being stopped (models/training/README.md).

A run keeps its whole state in one folder (``models/training/NAME/``, small enough to
commit): ``state.pt`` (the net, the optimiser, the learning-rate schedule, the torch
random state, where in the stage the run is, the training seconds spent, the best
figure so far) and ``progress.json`` (the same in words, for people and for the next
session). Every ``save_every`` minutes of training, and when the run's time box ends, the
state is written and a candidate ONNX file with its manifest is exported beside it
(``candidate/``), so a stop at any moment loses at most ``save_every`` minutes and never
leaves a run without something to evaluate.

Resuming is exact, not approximate: every batch is drawn from a random generator seeded
by (stage seed, epoch, step) (`batch_rng`), not from one generator carried along, so the
sampler's position is just the step number; a run stopped and resumed reaches the same
weights as one that was not (tests/vision/test_training_resume.py), given the same seed
and threads. A time-budgeted stage (``min=M``) counts the training seconds of all its
sessions together, so its learning-rate schedule goes on where it stopped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

logger = logging.getLogger("train")

STATE_FILE = "state.pt"
PROGRESS_FILE = "progress.json"
CANDIDATE_FOLDER = "candidate"
STATE_VERSION = 1


def batch_rng(seed: int, *position: int) -> np.random.Generator:
    """The random generator of one batch: a function of the stage seed and the batch's
    position alone, so a resumed run draws exactly the batches it would have drawn."""
    return np.random.default_rng([seed, *position])


@dataclass
class Progress:
    """Where a run is: the stage of the chain, the steps done in it, the training seconds
    spent in it (over every session), the best validation figure so far and at which
    step, and a line per finished stage (the manifests' ``*_stages``)."""

    model: str
    stage: int = 0
    steps_done: int = 0
    seconds: float = 0.0
    best: float | None = None
    best_step: int | None = None
    finished_stages: list[str] = field(default_factory=list)
    history: list[dict[str, float]] = field(default_factory=list)
    finished: bool = False
    sessions: int = 0


@dataclass
class RunState:
    """What ``state.pt`` holds: the progress plus the tensors to go on from."""

    progress: Progress
    net: dict[str, torch.Tensor]
    optimiser: dict[str, Any]
    cycle: dict[str, Any] | None
    torch_rng: torch.Tensor
    arguments: dict[str, Any]


def save_state(folder: Path, state: RunState) -> None:
    """Write state.pt and progress.json atomically (a kill mid-write keeps the old pair)."""
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "version": STATE_VERSION,
        "progress": asdict(state.progress),
        "net": state.net,
        "optimiser": state.optimiser,
        "cycle": state.cycle,
        "torch_rng": state.torch_rng,
        "arguments": state.arguments,
    }
    partial = folder / (STATE_FILE + ".partial")
    torch.save(payload, partial)
    os.replace(partial, folder / STATE_FILE)
    words = {**asdict(state.progress), "arguments": state.arguments, "saved": _now()}
    partial_json = folder / (PROGRESS_FILE + ".partial")
    partial_json.write_text(json.dumps(words, indent=1) + "\n", encoding="utf-8")
    os.replace(partial_json, folder / PROGRESS_FILE)


def load_state(path: Path) -> RunState:
    """A saved state, from a state.pt file or the folder holding it; on any machine (the
    tensors are mapped to the CPU, paths inside are relative to the repository)."""
    file = path / STATE_FILE if path.is_dir() else path
    if not file.is_file():
        raise SystemExit(f"--resume {path}: no {STATE_FILE} there")
    payload = torch.load(file, map_location="cpu", weights_only=False)
    if payload.get("version") != STATE_VERSION:
        raise SystemExit(f"--resume {path}: state version {payload.get('version')}, not 1")
    return RunState(
        Progress(**payload["progress"]),
        payload["net"],
        payload["optimiser"],
        payload["cycle"],
        payload["torch_rng"],
        payload["arguments"],
    )


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


@dataclass
class Checkpointer:
    """Decides when a training loop saves and when it stops, and does the saving.

    ``folder`` None: a plain run (no state kept, no box). ``box_minutes``: this session's
    time box; the loop stops cleanly when it ends (state saved, candidate exported) and
    the next ``--resume`` goes on. ``export`` writes the candidate ONNX file and manifest
    of a net into a folder (the trainer's own export, so the candidate is what would
    ship)."""

    folder: Path | None
    progress: Progress
    arguments: dict[str, Any]
    save_every_minutes: float = 10.0
    box_minutes: float | None = None
    export: Callable[[nn.Module, Path], None] | None = None
    resumed: RunState | None = None
    began: float = field(default_factory=time.time)
    last_save: float = field(default_factory=time.time)
    saved_steps: int = 0  # the steps of the stage at the last save (candidates say it)
    stop_at_step: int | None = None

    def resumes_stage(self) -> bool:
        """Whether `resume_into` will load this stage's weights from the saved state."""
        state = self.resumed
        return bool(
            state is not None and state.progress.stage == self.progress.stage and state.optimiser
        )

    def resume_into(
        self,
        net: nn.Module,
        optimiser: torch.optim.Optimizer,
        cycle: Any,
    ) -> int:
        """Load the saved tensors into a fresh net/optimiser/schedule of the stage the
        state is in; returns the steps already done (0 for a new stage)."""
        self.last_save = time.time()  # saves count from the training's start, not the data's
        state = self.resumed
        if state is None or not self.resumes_stage():
            return 0  # a new stage (a finished stage's state holds no optimiser)
        net.load_state_dict(state.net)
        optimiser.load_state_dict(state.optimiser)
        if cycle is not None and state.cycle is not None:
            cycle.load_state_dict(state.cycle)
        torch.set_rng_state(state.torch_rng)
        self.resumed = None  # only the stage it was saved in starts from it
        self.progress.sessions += 1
        logger.info(
            "resumed stage %d at step %d (%.0f training seconds)",
            self.progress.stage, self.progress.steps_done, self.progress.seconds,
        )  # fmt: skip
        return self.progress.steps_done

    def stage_seconds(self, since: float) -> float:
        """Training seconds of the current stage, this session's included."""
        return self.progress.seconds + (time.time() - since)

    def box_over(self, steps_done: int) -> bool:
        """Whether the session's box has ended (its minutes, or ``stop_at_step``: a stop
        at a known step, for tests that compare a stopped run with one that went on)."""
        if self.stop_at_step is not None and steps_done >= self.stop_at_step:
            return True
        if self.box_minutes is None:
            return False
        return time.time() - self.began >= 60 * self.box_minutes

    def due(self) -> bool:
        return (
            self.folder is not None and time.time() - self.last_save >= 60 * self.save_every_minutes
        )

    def save(
        self,
        net: nn.Module,
        optimiser: torch.optim.Optimizer,
        cycle: Any,
        steps_done: int,
        seconds: float,
    ) -> None:
        """The state at ``steps_done`` and a candidate export beside it."""
        if self.folder is None:
            return
        # a copy: the live progress keeps this session's starting seconds, which
        # stage_seconds adds this session's time to
        saved = replace(self.progress, steps_done=steps_done, seconds=seconds)
        self.saved_steps = steps_done
        state = RunState(
            saved,
            {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
            optimiser.state_dict(),
            cycle.state_dict() if cycle is not None else None,
            torch.get_rng_state(),
            self.arguments,
        )
        save_state(self.folder, state)
        if self.export is not None:
            # each module's own mode, not net.train(): a stage started from an ONNX file
            # keeps its folded BatchNorm in eval mode, and one net.train(True) here put it
            # back into batch statistics until the next freeze (stage 12's finder never
            # froze again; its classifier drifted from each save to the epoch's end)
            modes = [(module, module.training) for module in net.modules()]
            device = next(net.parameters()).device
            self.export(net, self.folder / CANDIDATE_FOLDER)
            net.to(device)
            for module, mode in modes:
                module.training = mode
        self.last_save = time.time()
        logger.info(
            "saved %s at stage %d step %d (%.0f training seconds)",
            self.folder, self.progress.stage, steps_done, seconds,
        )  # fmt: skip

    def note(self, step: int, **figures: float) -> None:
        """A line of the run's history (loss, validation figure) and the best so far."""
        self.progress.history.append({"stage": self.progress.stage, "step": step, **figures})
        value = figures.get("val_accuracy")
        if value is not None and (self.progress.best is None or value > self.progress.best):
            self.progress.best, self.progress.best_step = value, step

    def finish(self, net: nn.Module, last: bool) -> None:
        """A stage is done (next_stage called): keep that in the state, with the net and
        its candidate export, so a stop before the next stage loses nothing."""
        if self.folder is None:
            return
        self.progress.finished = last
        self.saved_steps = 0
        state = RunState(
            self.progress,
            {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
            {},
            None,
            torch.get_rng_state(),
            self.arguments,
        )
        save_state(self.folder, state)
        if self.export is not None:
            self.export(net, self.folder / CANDIDATE_FOLDER)
        self.last_save = time.time()

    def next_stage(self, description: str) -> None:
        self.progress.finished_stages.append(description)
        self.progress.stage += 1
        self.progress.steps_done = 0
        self.progress.seconds = 0.0


class BoxOver(Exception):
    """The session's time box ended: the state is saved, the run goes on with --resume."""
