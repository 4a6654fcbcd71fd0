"""A setup's whole classifier fine-tuned on its confirmed dice, in a background process
(issue 24 item 1, deeper than the value head).

The value head (companion.vision.adapt) moves the boundary on the shipped embedding; on a
table whose dice the shipped net does not tell apart the features must move too. That
needs torch, which the app does not: the fine-tune and its fold check are
models/recipe/adapt_deep.py, run by `DeepLearner.run` as a child process (`python -m
models.recipe.adapt_deep`, one torch thread, at lowered priority) so the table keeps playing
while it trains; where torch or the recipe is not installed (`available()` is False) the
setup learns with its heads only, as before.

- `job(stored, held)`: when MIN_PHOTOS confirmed photos are stored and REFIT_EVERY more
  than at the last check (or never checked for this classifier), a `DeepJob`: the stored
  crops (the store's 64 px framing), their confirmed values and photo keys, the dice held
  back as suspected wrong taps left out;
- `DeepJob.run()` (seconds to two minutes, no lock held): the child process writes
  `verdict.json`, and when adopted the fine-tuned `pip_classifier.onnx` and its manifest
  (`deep_adapted`: the shipped file's sha256, the settings, the verdict), into a new
  folder beside the setup, which then replaces `adapted/deep/` (the shipped models are
  never written);
- `classifier()`: the adopted net (`DeepClassifier`, loaded with the runtime's manifest
  checks; only over the classifier file it was fine-tuned from), which the camera reads
  with in place of the shipped net and the value head; its dice are no surer than its own
  left-out photos vouch for (`Verdict.ceiling`, as an adopted value head's).

A restart reads the saved verdict and net back; forgetting the setup removes the folder
with the rest of its adapted files."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from companion.vision.adapt_files import ADAPTED_DIR
from companion.vision.adapt_gate import Verdict
from companion.vision.adapt_store import SetupStore, StoredExample
from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.model import ModelError, OnnxModel
from companion.vision.types import DieReading

logger = logging.getLogger(__name__)

DEEP_DIR = "deep"  # under the setup's adapted/ folder
VERDICT_FILE = "verdict.json"  # models/recipe/adapt_deep.py's VERDICT_FILE
MIN_PHOTOS = 5  # the fold check's sign test cannot adopt on fewer photos
REFIT_EVERY = 5  # new confirmed photos before the net is fine-tuned and judged again
TIMEOUT_S = 900.0  # a check that takes longer is given up (logged); the shipped net reads
REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "models" / "recipe" / "adapt_deep.py"


def available() -> bool:
    """Whether this installation can fine-tune: torch importable, the recipe beside it."""
    return RECIPE.is_file() and importlib.util.find_spec("torch") is not None


class DeepClassifier(PipClassifier):
    """A setup's fine-tuned net: reads like any classifier, and vouches for no more than
    its fold check's left-out photos showed (`Verdict.ceiling`)."""

    def __init__(self, model: OnnxModel, verdict: Verdict) -> None:
        super().__init__(model)
        self.verdict = verdict

    def vouched(self, readings: tuple[DieReading, ...]) -> tuple[DieReading, ...]:
        ceiling = self.verdict.ceiling
        return tuple(
            r if r.value is None or r.confidence <= ceiling else replace(r, confidence=ceiling)
            for r in readings
        )


@dataclass(frozen=True)
class DeepState:
    """A check's outcome: its verdict, the photos it was judged on, the shipped file it
    fine-tuned (sha256), and the adopted net (None: the shipped net reads)."""

    verdict: Verdict
    photos: int
    from_sha256: str
    classifier: DeepClassifier | None = field(default=None, repr=False)


@dataclass(frozen=True)
class DeepJob:
    """One fine-tune and fold check to run in the child process (`run`)."""

    folder: Path  # the setup's folder
    models_dir: Path  # the shipped classifier's folder
    crops: np.ndarray = field(repr=False)
    values: np.ndarray
    photos: tuple[str, ...]

    def run(self) -> DeepState:
        """Run the child process (no lock held), put its folder in place of the last
        one, and read it back. Raises on a failed or timed-out child (nothing replaced)."""
        adapted = self.folder / ADAPTED_DIR
        adapted.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".deep-", dir=adapted))
        try:
            np.savez(
                work / "job.npz", crops=self.crops, values=self.values, photos=np.array(self.photos)
            )
            out = work / "out"
            command = [
                sys.executable, "-m", "models.recipe.adapt_deep", "--crops", str(work / "job.npz"),
                "--models", str(self.models_dir), "--out", str(out),
            ]  # fmt: skip
            environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
            done = subprocess.run(
                command, cwd=REPO, env=environment, capture_output=True, text=True,
                timeout=TIMEOUT_S, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"fine-tune failed ({done.returncode}): {done.stderr[-800:]}")
            target = adapted / DEEP_DIR
            old = adapted / f".deep-old-{work.name}"
            if target.exists():
                target.replace(old)
            out.replace(target)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        state = read_state(self.folder)
        assert state is not None
        return state


def read_state(folder: Path) -> DeepState | None:
    """The saved check of the setup in `folder` (None: never checked). A damaged verdict
    file raises ModelError naming it; the net is loaded with the runtime's checks."""
    out = Path(folder) / ADAPTED_DIR / DEEP_DIR
    path = out / VERDICT_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        verdict = Verdict.from_json(raw["verdict"])
        photos, source = int(raw["photos"]), str(raw["from_sha256"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{path}: not a fine-tune verdict ({exc})") from exc
    if not verdict.adopted:
        return DeepState(verdict, photos, source)
    model = OnnxModel.load(out / CLASSIFIER_FILE)
    derived = model.manifest.raw.get("deep_adapted", {})
    if not isinstance(derived, dict) or derived.get("from_sha256") != source:
        raise ModelError(f"{out / CLASSIFIER_FILE}: its manifest does not name {source[:12]}")
    return DeepState(verdict, photos, source, DeepClassifier(model, verdict))


class DeepLearner:
    """The fine-tuned net's half of a setup's learning (module docstring). Not locked
    itself: companion.vision.adapt_learn.SetupLearner calls it under its lock, but for
    `DeepJob.run`."""

    def __init__(self, store: SetupStore, setup: str, folder: Path, shipped: PipClassifier) -> None:
        self.store = store
        self.setup = setup
        self.folder = folder
        self.shipped = shipped
        self.state: DeepState | None = None
        self.restore()

    @property
    def sha256(self) -> str:
        return self.shipped.model.manifest.sha256

    def restore(self) -> None:
        """The saved check, when it was made for the shipped classifier (a damaged one is
        logged and the shipped net reads)."""
        try:
            state = read_state(self.folder)
        except ModelError:
            logger.warning("setup %s: saved fine-tune not read", self.setup, exc_info=True)
            state = None
        self.state = state if state is not None and state.from_sha256 == self.sha256 else None

    def classifier(self) -> DeepClassifier | None:
        """The adopted net (None: not adopted, never checked, or made for another net)."""
        return self.state.classifier if self.state is not None else None

    @property
    def verdict(self) -> Verdict | None:
        return self.state.verdict if self.state is not None else None

    def job(self, stored: Sequence[StoredExample], held: Sequence[int]) -> DeepJob | None:
        """The check to run now, when one is due (module docstring); None otherwise."""
        left_out = set(held)
        use = [s for k, s in enumerate(stored) if k not in left_out]
        photos = [s.photo if s.photo is not None else f"die {s.example_id}" for s in use]
        count = len(set(photos))
        checked = self.state.photos if self.state is not None else None
        if count < MIN_PHOTOS or (checked is not None and count < checked + REFIT_EVERY):
            return None
        crops, values, keys = [], [], []
        for s, photo in zip(use, photos, strict=True):
            crop = self.store.crop(self.setup, s.example_id)
            if crop is not None:
                crops.append(crop)
                values.append(s.example.value)
                keys.append(photo)
        if len(set(keys)) < MIN_PHOTOS:
            return None
        return DeepJob(
            self.folder,
            self.shipped.model.path.parent,
            np.stack(crops),
            np.array(values, np.int64),
            tuple(keys),
        )

    def keep(self, state: DeepState) -> None:
        self.state = state if state.from_sha256 == self.sha256 else None

    def forget(self) -> None:
        """The setup's learning is gone (its adapted folder removed with the rest)."""
        shutil.rmtree(self.folder / ADAPTED_DIR / DEEP_DIR, ignore_errors=True)
        self.state = None
