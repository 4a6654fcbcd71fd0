"""The training recipe's side of the models' contract: the stages of a chain as the command
line gives them, and each manifest built from the runtime's own manifest type
(companion.vision.model.Manifest, written by its `to_json`), so that what train.py writes
is what model.py checks. No torch here: tests run it without the `train` extra."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from companion.vision.classifier import EXPECTED_LABELS
from companion.vision.finder import PeakRule
from companion.vision.model import InputSpec, Manifest

MEAN, STD, SCALE = (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), 1 / 255
CLASSIFIER_SIZE = 48
CROP_MARGIN = 1.3
FINDER_LONG_SIDE = 512
FINDER_STRIDE = 4
# Finder output channels: centre heat (sigmoid), log side (input px), centre offset
# (x, y in cells), rotation as (cos 4θ, sin 4θ) because a square repeats every 90°.
FINDER_HEADS = ("heat", "log_side", "offset_x", "offset_y", "cos4", "sin4")
# the versions the next exports get, above the shipped ones (classifier 2.0.x, the wide net
# trained from scratch on new data, the calibration part held back; finder 1.7.x)
CLASSIFIER_VERSION = "2.1.0"
FINDER_VERSION = "1.8.0"
PEAK_RULE_OPTIONS = ("sure_threshold", "min_confidence", "weak_threshold", "weak_min_confidence")
CLASSIFIER_FIGURES = (
    "images",
    "dice",
    "classifier_accuracy_on_labelled_boxes",
    "classifier_unreadable_on_labelled_boxes",
    "confusions",
    "value_accuracy_of_found",
    "unreadable_rate_of_found",
)
FINDER_FIGURES = ("images", "dice", "recall", "false_dice_per_100_images", "missed_false_misread")
VALIDATION_NOTE = (
    "measured through onnxruntime on the validation part (never trained on, never used to "
    "tune); match rule: found centre within 0.6 x side of the labelled centre"
)


class StageError(ValueError):
    """A stage of --classifier-continue / --finder-continue that cannot be read."""


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
    # (folder, N) pairs: that real folder's dice N times per epoch in place of real=N, so a
    # big new folder does not outweigh the old ones (stage 12's classifier forgot them)
    folder_repeat: tuple[tuple[str, int], ...] = ()
    # the share of classifier crops shrunk to a small die's pixels and blown up again, as
    # the runtime blows up a 10-25 px die to its 48 px input (recipe/data.small_die_look)
    small_share: float = 0.0

    def repeat_for(self, folder: str) -> int:
        """How many times a real photo (or die) of ``folder`` is drawn per epoch."""
        return dict(self.folder_repeat).get(folder, self.real_repeat)

    def describe(self, done: int, unit: str, hard: Mapping[Path, np.ndarray]) -> str:
        """The stage as the manifests' ``*_stages`` record it, e.g. "38 epochs lr 0.0007
        seed 20261134 hard negatives 358 real x3"."""
        text = f"{done} {unit} lr {self.lr:g} seed {self.seed}"
        if hard:
            text += f" hard negatives {sum(len(rows) for rows in hard.values())}"
        if self.real_repeat > 1:
            text += f" real x{self.real_repeat}"
        for folder, repeat in self.folder_repeat:
            text += f" {folder} x{repeat}"
        if self.small_share > 0:
            text += f" small dice {self.small_share:g}"
        return text


def parse_stages(text: str) -> list[Stage]:
    """``COUNT:LR:SEED[:hard][:real=N][:min=M][:small=S][:FOLDER=N]``, comma-separated;
    raises StageError. FOLDER=N: that real folder's dice N times per epoch (overrides
    real=N); small=S: that share of the classifier's crops given a small die's look."""
    stages = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        fields = item.split(":")
        if len(fields) < 3:
            raise StageError(f"stage {item!r}: expected COUNT:LR:SEED[:options]")
        try:
            count, lr, seed = int(fields[0]), float(fields[1]), int(fields[2])
            stages.append(Stage(count, lr, seed, **stage_options(item, fields[3:])))
        except ValueError as exc:
            if isinstance(exc, StageError):
                raise
            raise StageError(f"stage {item!r}: {exc}") from exc
    return stages


def stage_options(item: str, options: list[str]) -> dict[str, Any]:
    """One stage's options after COUNT:LR:SEED as Stage's keyword arguments; raises
    ValueError (StageError naming the stage where the value is read but not allowed)."""
    chosen: dict[str, Any] = {}
    folder_repeat: list[tuple[str, int]] = []
    for option in options:
        if option == "hard":
            chosen["hard"] = True
        elif option.startswith("real="):
            chosen["real_repeat"] = int(option[5:])
        elif option.startswith("min="):
            chosen["minutes"] = float(option[4:])
        elif option.startswith("small="):
            chosen["small_share"] = float(option[6:])
            if not 0.0 <= chosen["small_share"] <= 1.0:
                raise StageError(f"stage {item!r}: small={option[6:]} is not a share 0-1")
        elif "=" in option and option.split("=", 1)[0]:
            name, repeat = option.split("=", 1)
            if int(repeat) < 0:
                raise StageError(f"stage {item!r}: {name} repeat must be >= 0")
            folder_repeat.append((name, int(repeat)))
        else:
            raise StageError(f"stage {item!r}: unknown option {option!r}")
    return {**chosen, "folder_repeat": tuple(folder_repeat)}


def input_spec(shape: tuple[int | str, ...], size: int) -> InputSpec:
    """The models' input: RGB NCHW, (pixel / 255 - 0.5) / 0.25."""
    return InputSpec("image", shape, "NCHW", "RGB", (size, size), SCALE, MEAN, STD)


def _common(created: str, command: str, seed: int, trained_on: dict[str, Any]) -> dict[str, Any]:
    return {
        "created": created,
        "input": {"formula": "value = (pixel * scale - mean) / std, per channel"},
        "trained_on": trained_on,
        "seed": seed,
        "training_command": command,
        "validation": {},
    }


def classifier_manifest(
    *, created: str, command: str, seed: int, trained_on: dict[str, Any], embedding_width: int
) -> Manifest:
    """The pip classifier's manifest before its figures (sha256 filled in when saved)."""
    return Manifest(
        name="pip_classifier",
        version=CLASSIFIER_VERSION,
        task="read the top face of one six-sided pip die from a crop",
        input=input_spec(("batch", 3, CLASSIFIER_SIZE, CLASSIFIER_SIZE), CLASSIFIER_SIZE),
        output_names=("probabilities", "embedding"),
        labels=EXPECTED_LABELS,
        sha256="",
        output_shapes={
            "probabilities": ("batch", len(EXPECTED_LABELS)),
            "embedding": ("batch", embedding_width),
        },
        raw={
            **_common(created, command, seed, trained_on),
            "crop": "square of crop_margin x the die's side around its centre, turned by the "
            "box angle (cv2.getRotationMatrix2D(centre, angle)), resized",
            "outputs": {
                "meaning": "probabilities: batch x 7 softmax probabilities in label order; "
                "embedding: the pooled features of the crop before the final linear layer "
                "(probabilities = softmax(embedding x W^T + b))"
            },
            "options": {"crop_margin": CROP_MARGIN, "min_confidence": 0.7},
        },
    )


def finder_manifest(
    *, created: str, command: str, seed: int, trained_on: dict[str, Any], heads: tuple[str, ...]
) -> Manifest:
    """The dice finder's manifest before its peak rule and figures."""
    return Manifest(
        name="dice_finder",
        version=FINDER_VERSION,
        task="find six-sided dice in a table photo (CenterNet-style, stride 4)",
        input=input_spec(("batch", 3, "height", "width"), FINDER_LONG_SIDE),
        output_names=("maps",),
        labels=("die",),
        sha256="",
        raw={
            **_common(created, command, seed, trained_on),
            "resize": "scale so the long side is long_side, pad right/bottom with grey 127 to "
            "a multiple of pad_multiple",
            "outputs": {
                "meaning": f"batch x {len(heads)} x H/4 x W/4: "
                + ", ".join(heads)
                + " (heat = sigmoid centre score; log_side = ln(side in input px); offset in "
                "cells; angle = atan2(sin4, cos4)/4 degrees, DieBox convention)"
            },
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
        },
    )


def with_peak_rule(manifest: Manifest, rule: PeakRule) -> Manifest:
    """The finder's manifest with ``rule`` as its options (bands it does not use left out:
    a manifest with the threshold alone has the rule of the first models)."""
    options = {k: v for k, v in manifest.raw["options"].items() if k not in PEAK_RULE_OPTIONS}
    options["threshold"] = rule.threshold
    if rule.sure_threshold > rule.threshold:
        options.update(sure_threshold=rule.sure_threshold, min_confidence=rule.min_confidence)
    if rule.weak_threshold is not None:
        options.update(
            weak_threshold=rule.weak_threshold, weak_min_confidence=rule.weak_min_confidence
        )
    return manifest.with_fields(options=options)


def with_figures(
    manifest: Manifest, figures: Mapping[str, Mapping[str, object]], folders: tuple[str, ...]
) -> Manifest:
    """The manifest with its ``validation`` figures: per folder of ``folders`` the keys its
    model is judged by (a summary without pipeline figures keeps what it has)."""
    keys = CLASSIFIER_FIGURES if manifest.name == "pip_classifier" else FINDER_FIGURES
    validation: dict[str, object] = {"note": VALIDATION_NOTE}
    for folder in folders:
        if folder in figures:
            validation[folder] = {k: figures[folder][k] for k in keys if k in figures[folder]}
    return manifest.with_fields(validation=validation)
