"""Fine-tune the whole classifier on a setup's confirmed dice (issue 24 item 1, deeper
than the value head): torch, so a training-only path, never needed to read.

The setup's value head (companion/vision/adapt.py) can only move the boundary on the
shipped embedding; a table whose dice the shipped net does not tell apart (the casino
dice, the fancy trays) needs the features to move too. This starts from the shipped ONNX
file (`from_onnx.load_folded_onnx`: the folded net, BatchNorm frozen, as every
continuation from a file trains it) and takes a few steps over the confirmed crops, its
last block and final layer training (`DeepSettings.frozen`), held near the shipped
weights by an L2-SP penalty (``anchor`` x the squared distance of every
weight to its shipped value, Li et al. 2018), with the crops' eight symmetric views, a
jitter of the box (shift and scale, as the finder's boxes vary) and the training's
photometric augmentation (models/recipe/augment.py). It exports an ONNX file of the same
contract and a manifest that names the file it was derived from, so the runtime loads it
with its usual checks (`PipClassifier.load`).

The crops are the setup store's (companion/vision/adapt_store.py: CROP_SIZE px, the
classifier's own margin around the die), so the app can fine-tune on what it keeps;
`store_crops` cuts them from a photo the same way. `check_deep` is the fold check of
companion/vision/adapt_gate.py for this reader, as the value head's: every photo left out
once (at most MAX_FOLDS = 25 folds, each a fine-tune of a few seconds), the one-sided sign
test, no face read worse, and the no-forgetting sample read by the net fine-tuned on all.

What keeps a check within a table's 2 minutes on one core (issue 24 item 3): the frozen
layers run once per jittered view of a crop (`frozen_views`), not once per step; the folds
read in torch, float, against the shipped file's own weights read the same way
(`net_judged`), so only the net fine-tuned on all is exported (int8, as the shipped file)
and read through the runtime, for the no-forgetting sample and the app."""

from __future__ import annotations

import copy
import dataclasses
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from companion.vision.adapt import GATE_MIN_PHOTOS, VIEWS, likeness_from
from companion.vision.adapt_anchor import read_anchor
from companion.vision.adapt_deep_learn import (  # the app reads what main writes
    LIKENESS_FILE,
    UNREADABLE,
    VERDICT_FILE,
    save_likeness,
)
from companion.vision.adapt_fit import Likeness
from companion.vision.adapt_gate import (
    MAX_FOLDS,
    Judged,
    Verdict,
    decide,
    fold_map,
    fold_of_photos,
)
from companion.vision.adapt_learn import crop_features, model_crops
from companion.vision.adapt_look import looks_of
from companion.vision.adapt_store import CROP_SIZE
from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier, crop_die, symmetric_views
from companion.vision.confidence import CONFIDENCE_KEY, ConfidenceMap
from companion.vision.model import Manifest, parse_manifest, save_manifest, sha256_of
from companion.vision.types import DieBox
from models.recipe.augment import photometric
from models.recipe.from_onnx import conv_widths, freeze_batchnorm, load_folded_onnx
from models.recipe.nets import ClassifierNet
from models.recipe.training import to_tensor

CLASSIFIER_CONVS = 7  # models/recipe/nets.py's ClassifierNet, whatever its widths
CALIBRATION_CROPS = 256  # an int8 source's fine-tune is calibrated on this many stored crops
CALIBRATION_BATCH = 32
JITTER_SHIFT = 0.06  # of the crop's side, each way
JITTER_SCALE = 0.08  # the window's side within 1 +- this
VIEW_BUDGET = 2048  # jittered views a check keeps through the frozen layers (113 MB at most)
MOST_VIEWS = 16  # of one crop: a setup of 25 photos has about 100 to 400 crops


@dataclasses.dataclass(frozen=True)
class DeepSettings:
    """How far a setup's fine-tune goes: steps of ``batch`` crops at learning rate ``lr``
    (Adam, cosine to zero), the L2-SP weight ``anchor``, the random seed, torch threads,
    and how many leading convolutions stay at the shipped weights (``frozen``: the last
    block and the final layer train, issue 24's "its last blocks"; the whole wide net
    took 225 s on 25 photos, most of it the backward pass through the early full-size
    layers, where a table may wait 2 minutes)."""

    steps: int = 60
    batch: int = 32
    lr: float = 3e-4
    anchor: float = 1.0
    seed: int = 20261204
    threads: int = 1
    frozen: int = 5  # the leading convolutions kept at the shipped weights (of 7)


def store_crops(
    classifier: PipClassifier, image_bgr: np.ndarray, boxes: Sequence[DieBox]
) -> np.ndarray:
    """N x CROP_SIZE x CROP_SIZE x 3 BGR crops in the setup store's framing."""
    return np.stack([crop_die(image_bgr, box, classifier.margin, CROP_SIZE) for box in boxes])


def jittered(crop: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A size x size window of a stored crop: shifted and scaled around its centre (the
    border repeated where it leaves the crop), one of the eight symmetric views,
    photometrically jittered."""
    full = crop.shape[0]
    window = full * (1 + rng.uniform(-JITTER_SCALE, JITTER_SCALE))
    x0, y0 = full / 2 + rng.uniform(-JITTER_SHIFT, JITTER_SHIFT, 2) * full - window / 2
    scale = size / window
    matrix = np.array([[scale, 0, -x0 * scale], [0, scale, -y0 * scale]])
    out = cv2.warpAffine(
        crop, matrix, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    out = np.rot90(out, int(rng.integers(4)))
    if rng.random() < 0.5:
        out = out[:, ::-1]
    return photometric(np.ascontiguousarray(out), rng, strength=0.5)


def classifier_net_for(onnx_path: Path) -> ClassifierNet:
    """The ClassifierNet with the exported file's channels: the small net (1.5.0) or the
    wide one (`--classifier-net wide`), whichever ships."""
    widths = conv_widths(onnx_path)
    if len(widths) != CLASSIFIER_CONVS:
        raise ValueError(
            f"{onnx_path}: {len(widths)} convolutions; a setup fine-tunes the small or the "
            f"wide classifier ({CLASSIFIER_CONVS})"
        )
    return ClassifierNet(widths=(widths[0], widths[1], widths[3], widths[5]))


def shipped_net(source: Path) -> ClassifierNet:
    """The classifier file in ``source`` (a folder) as a torch net: folded, BatchNorm
    frozen, in eval mode (an int8 file's weights read back through its integers)."""
    net = classifier_net_for(source / CLASSIFIER_FILE)
    load_folded_onnx(net, source / CLASSIFIER_FILE)
    freeze_batchnorm(net)
    net.eval()
    return net


def input_side(source: Path) -> int:
    """The input side the classifier's manifest declares."""
    return parse_manifest((source / CLASSIFIER_FILE).with_suffix(".json")).input.size[1]


def frozen_views(
    net: ClassifierNet, crops: np.ndarray, side: int, settings: DeepSettings
) -> torch.Tensor:
    """N x V x C x H x W: each stored crop's V jittered views (`jittered`; V is VIEW_BUDGET
    shared over the crops, 2 to MOST_VIEWS) through the net's leading ``settings.frozen``
    convolutions. Those layers never change, so a check makes this once and its folds and
    the fine-tune on all train the rest on it: run on every step, they were most of a
    check's time."""
    rng = np.random.default_rng(settings.seed)
    per_crop = int(np.clip(VIEW_BUDGET // max(len(crops), 1), 2, MOST_VIEWS))
    leading = net.features[: settings.frozen]
    made = []
    with torch.no_grad():
        for crop in crops:
            made.append(
                leading(to_tensor(np.stack([jittered(crop, side, rng) for _ in range(per_crop)])))
            )
    return torch.stack(made)


def tail_logits(net: ClassifierNet, frozen: int, leading: torch.Tensor) -> torch.Tensor:
    """The logits from the frozen convolutions' output: the rest of the features, the
    pooling, the dropout and the final layer (ClassifierNet.forward after them)."""
    pooled = F.adaptive_avg_pool2d(net.features[frozen:](leading), 1).flatten(1)
    return net.fc(net.dropout(pooled))


def tuned(
    start: ClassifierNet,
    views: torch.Tensor,
    values: np.ndarray,
    settings: DeepSettings,
    taught: np.ndarray | None = None,
) -> ClassifierNet:
    """A copy of ``start`` (`shipped_net`) fine-tuned on the crops' cached views
    (`frozen_views` of ``start``) and their values 1..6, or UNREADABLE for a box on no die;
    ``taught``: the rows it learns from (None: all), as a fold leaves its photos out."""
    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    rows_of = np.arange(len(views)) if taught is None else np.asarray(taught)
    net = copy.deepcopy(start)
    for block in list(net.features)[: settings.frozen]:
        block.requires_grad_(False)
    trainable = [p for p in net.parameters() if p.requires_grad]
    shipped = [p.detach().clone() for p in trainable]
    optimiser = torch.optim.Adam(trainable, lr=settings.lr)
    targets = torch.as_tensor(np.asarray(values) - 1, dtype=torch.long)
    loss_of = nn.CrossEntropyLoss()
    net.train()
    freeze_batchnorm(net)  # train() would set BatchNorm moving again
    for step in range(settings.steps):
        for group in optimiser.param_groups:
            group["lr"] = settings.lr * 0.5 * (1 + np.cos(np.pi * step / settings.steps))
        rows = torch.as_tensor(rows_of[rng.integers(0, len(rows_of), settings.batch)])
        which = torch.as_tensor(rng.integers(0, views.shape[1], settings.batch))
        logits = tail_logits(net, settings.frozen, views[rows, which])
        penalty = sum(((p - q) ** 2).sum() for p, q in zip(trainable, shipped, strict=True))
        loss = loss_of(logits, targets[rows]) + settings.anchor * penalty
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    net.eval()
    return net


def fine_tune(
    source: Path, crops: np.ndarray, values: np.ndarray, settings: DeepSettings
) -> ClassifierNet:
    """The shipped classifier in ``source`` (a folder) fine-tuned on the stored crops
    (`store_crops`) with their values (`tuned` on their `frozen_views`)."""
    torch.set_num_threads(settings.threads)
    start = shipped_net(source)
    views = frozen_views(start, crops, input_side(source), settings)
    return tuned(start, views, values, settings)


def export_adapted(
    net: ClassifierNet,
    source: Path,
    out_dir: Path,
    record: dict[str, object],
    calibration: np.ndarray,
    confidence: ConfidenceMap | None = None,
) -> Path:
    """out_dir/pip_classifier.onnx and its manifest: the source's, with ``record`` and
    the source file's sha256 as ``deep_adapted``, and ``confidence`` in place of the
    source's map when given (the map fitted for the shipped net says nothing of this one),
    with the source map's auto-apply threshold. An int8 source gives an int8 copy
    (`export_int8`, ``calibration``: the stored crops it was tuned on), so the setup's net
    reads at the shipped one's cost (issue 24 item 3)."""
    from models.train import export_classifier  # the training script's one exporter

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / CLASSIFIER_FILE
    manifest = parse_manifest((source / CLASSIFIER_FILE).with_suffix(".json"))
    if manifest.raw.get("quantised"):
        manifest = export_int8(net, source, target, calibration)
    else:
        export_classifier(copy.deepcopy(net), target)
    entry = {"from_sha256": sha256_of(source / CLASSIFIER_FILE), **record}
    manifest = manifest.with_fields(deep_adapted=entry)
    if confidence is not None:
        # the roll's auto-apply threshold stays the shipped reader's, as for a value head
        # (AdaptedClassifier): only the map from raw confidence to "read right" is the folds'
        shipped = manifest.raw.get(CONFIDENCE_KEY)
        threshold = ConfidenceMap.from_json(shipped).threshold if shipped else None
        refitted = dataclasses.replace(confidence, threshold=threshold)
        manifest = manifest.with_fields(**{CONFIDENCE_KEY: refitted.to_json()})
    save_manifest(manifest, target)
    return target


def export_int8(net: ClassifierNet, source: Path, target: Path, crops: np.ndarray) -> Manifest:
    """The fine-tuned net quantised as its int8 source was
    (`quantise.quantise_classifier_file`), its activation ranges from at most
    CALIBRATION_CROPS of the setup's stored crops cut as the source reads them (the only
    photos a table has); returns the written manifest (the source's, its ``quantised``
    naming the setup's calibration)."""
    from models.recipe.quantise import quantise_classifier_file
    from models.train import export_classifier

    shipped = PipClassifier.load(source)
    chosen = crops[:CALIBRATION_CROPS]
    manifest = shipped.model.manifest
    with tempfile.TemporaryDirectory() as scratch:
        float_file = Path(scratch) / CLASSIFIER_FILE
        export_classifier(copy.deepcopy(net), float_file)
        float_raw = {key: value for key, value in manifest.raw.items() if key != "quantised"}
        save_manifest(dataclasses.replace(manifest, raw=float_raw), float_file)
        batches = calibration_batches(shipped, chosen)
        calibration = f"{len(chosen)} of the setup's confirmed crops"
        quantise_classifier_file(float_file, target, batches, calibration)
    return parse_manifest(target.with_suffix(".json"))


def calibration_batches(classifier: PipClassifier, crops: np.ndarray) -> list[np.ndarray]:
    """Stored crops as ``classifier``'s input (its size, colour order and normalisation), in
    batches of CALIBRATION_BATCH: what onnxruntime's quantisation reads."""
    return [
        classifier.model.normalise(model_crops(classifier, list(crops[i : i + CALIBRATION_BATCH])))
        for i in range(0, len(crops), CALIBRATION_BATCH)
    ]


def loaded(
    net: ClassifierNet,
    source: Path,
    record: dict[str, object],
    calibration: np.ndarray,
    confidence: ConfidenceMap | None = None,
) -> PipClassifier:
    """The net exported into a temporary folder and loaded through the runtime's checks
    (the session keeps the model; the folder goes)."""
    with tempfile.TemporaryDirectory() as scratch:
        export_adapted(net, source, Path(scratch), record, calibration, confidence)
        return PipClassifier.load(Path(scratch))


def net_outputs(
    net: ClassifierNet, reader: PipClassifier, batch: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities (N x 7) and embeddings (N x D) of model-size crops (`model_crops`) by a
    torch net, normalised as ``reader``'s manifest says (ClassifierExport's outputs)."""
    with torch.no_grad():
        embeddings = net.embed(torch.from_numpy(reader.model.normalise(batch)))
        probabilities = torch.softmax(net.fc(embeddings), dim=1)
    return probabilities.numpy(), embeddings.numpy()


def net_judged(
    net: ClassifierNet,
    reader: PipClassifier,
    crops: np.ndarray,
    values: np.ndarray,
    looks: np.ndarray | None = None,
) -> Judged:
    """`judged_crops` by a torch net: stored crops cut as ``reader`` reads them (its size and
    colour order), their eight views in one batch. The folds read so, float, the fine-tuned
    nets and the shipped file's own weights alike (`shipped_net`): a fold's wins are the
    fine-tune's, not float arithmetic's over int8, and no fold pays for an int8 export.
    ``looks``: the crops' looks where the caller has them (a look is the crop's alone, and
    no net's: `check_deep` measures them once for all its folds); None: measured here."""
    batch = model_crops(reader, list(crops))
    count = len(batch)
    probabilities, embeddings = net_outputs(
        net, reader, np.concatenate([batch, symmetric_views(batch)])
    )
    return Judged(
        embeddings.reshape(VIEWS, count, -1).transpose(1, 0, 2),
        probabilities.reshape(VIEWS, count, -1).transpose(1, 0, 2),
        np.asarray(values, np.int64) - 1,
        looks_of(list(crops)) if looks is None else looks,
    )


def judged_crops(
    classifier: PipClassifier,
    crops: np.ndarray,
    values: np.ndarray,
    looks: np.ndarray | None = None,
) -> Judged:
    """Stored crops as dice to read by ``classifier`` (its eight views in one batch); a
    value of UNREADABLE is the class "unreadable" (a box on no die: read as a value, an
    error). ``looks``: the crops' looks where the caller has them (None: measured here)."""
    made = crop_features(classifier, model_crops(classifier, list(crops)))
    truth = np.asarray(values, np.int64) - 1
    measured = looks_of(list(crops)) if looks is None else looks
    return Judged(made.views, made.view_probabilities, truth, measured)


def errors_of(classifier: PipClassifier, crops: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per crop: read as something else than its value, as the camera reads it (the crop,
    or its views' mean under the classifier's second-look threshold)."""
    if not len(crops):
        return np.zeros(0, bool)
    return judged_crops(classifier, crops, values).errors(None, classifier.second_look_below)


def first_embeddings(classifier: PipClassifier, crops: np.ndarray) -> np.ndarray:
    """N x D embeddings of stored crops as cut (no views)."""
    assert classifier.embedding_index is not None, "a classifier with an embedding output"
    batch = classifier.model.normalise(model_crops(classifier, list(crops)))
    return np.asarray(classifier.model.run(batch)[classifier.embedding_index])


def unlike_of(like: Likeness | None, judged: Judged) -> np.ndarray:
    """N booleans: the judged crop (as cut) is unlike the setup's dice (None: none is)."""
    if like is None:
        return np.zeros(len(judged), bool)
    return ~like.mask(judged.views[:, 0], judged.looks)


def gated_reads(
    second_look_below: float, unlike: np.ndarray, judged: Judged, shipped: np.ndarray
) -> np.ndarray:
    """N x 7: the fine-tuned net's reading of the judged crops (under the classifier's
    second-look threshold), the shipped net's (``shipped``, N x 7) for those ``unlike`` the
    setup's dice (companion.vision.adapt_deep_learn.DeepClassifier reads so)."""
    reads = judged.reads(None, second_look_below)
    reads[unlike] = shipped[unlike]
    return reads


def fine_tuned_likeness(
    net: PipClassifier,
    crops: np.ndarray,
    photos: Iterable[object],
    looks: np.ndarray | None = None,
) -> Likeness | None:
    """Which crops the net fine-tuned on these crops reads (adapt.likeness_from on its own
    embeddings of them, and their looks: ``looks`` where the caller has them, else measured
    here); ``photos``: each crop's photo key, in any iterable (check_deep's is an array of
    them), read once into a list."""
    measured = looks_of(list(crops)) if looks is None else looks
    return likeness_from(first_embeddings(net, crops), list(photos), measured)


@dataclasses.dataclass(frozen=True)
class DeepCheck:
    """What `check_deep` found: the verdict, the net fine-tuned on every crop (loaded
    through the runtime; None when too few photos to judge), the wall seconds, per crop
    how sure the net fine-tuned without its photo is of its value (the first view's
    probability; NaN where no fold read it), as the value head's check says per die, and
    which crops that net reads (the rest keep the shipped net's reading)."""

    verdict: Verdict
    classifier: PipClassifier | None
    seconds: float
    sureness: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    like: Likeness | None = None


def check_deep(
    source: Path,
    crops: np.ndarray,
    values: np.ndarray,
    photos: Sequence[object],
    settings: DeepSettings,
    out_dir: Path | None = None,
    judged_dice: np.ndarray | None = None,
) -> DeepCheck:
    """The fold check for a fine-tuned classifier (module docstring): per fold, a net
    fine-tuned without that fold's photos reads their crops against the shipped one; the
    sign test over the folds; the shipped no-forgetting sample (models/adapt_anchor.*) read
    by the net fine-tuned on all, no worse than the shipped net. ``out_dir`` keeps that
    net's ONNX file and manifest (with the verdict) there. ``judged_dice``: per crop, whether
    its die is judged (None: every die); a die the host added is taught, not judged, as
    the value head's check does (companion.vision.adapt_gate), so the two verdicts count
    the same dice."""
    started = time.perf_counter()
    values = np.asarray(values, np.int64)
    shipped = PipClassifier.load(source)
    # the dice judge; the boxes on no die are taught, not judged: the host's removed false
    # dice were chosen because the shipped pair showed them, so counting them would hand
    # the fine-tuned net wins by their choice, and a box read as "unreadable" is no die
    # whose value the ceiling vouches for
    real = values != UNREADABLE
    if judged_dice is not None:
        real &= np.asarray(judged_dice, bool)
    faces = set(values[real].tolist())
    count = len(set(photos))
    if count < GATE_MIN_PHOTOS or len(faces) < 2:
        return DeepCheck(Verdict(dice=int(real.sum())), None, time.perf_counter() - started)
    folds = fold_of_photos(photos, min(count, MAX_FOLDS))
    keys = np.array([str(p) for p in photos])
    torch.set_num_threads(settings.threads)
    start = shipped_net(source)
    views = frozen_views(start, crops, input_side(source), settings)
    as_cut = model_crops(shipped, list(crops))  # each fold's taught crops for its likeness
    # a crop's look is its own, whichever net reads it: measured once here, not again by
    # every fold's judging and the full net's likeness (the same numbers, a quarter the work)
    looks = looks_of(list(crops))
    shipped_judged = net_judged(start, shipped, crops, values, looks)
    shipped_reads = shipped_judged.reads(None, shipped.second_look_below)
    shipped_errors = shipped_reads.argmax(axis=1) != shipped_judged.truth
    adapted_errors = np.zeros(len(values), bool)
    sureness = np.full(len(values), np.nan)
    raw: list[float] = []  # the left-out dice read as a value: top probability, read right
    right: list[bool] = []
    for part in range(int(folds.max()) + 1):
        out = folds == part
        fold_net = tuned(start, views, values, settings, np.flatnonzero(~out))
        taught = net_outputs(fold_net, shipped, as_cut[~out])[1]
        like = likeness_from(taught, list(keys[~out]), looks[~out])
        judged = net_judged(fold_net, shipped, crops[out], values[out], looks[out])
        unlike = unlike_of(like, judged)
        reads = gated_reads(shipped.second_look_below, unlike, judged, shipped_reads[out])
        read_as = reads.argmax(axis=1)
        adapted_errors[out] = read_as != judged.truth
        first = judged.probabilities[:, 0].copy()  # the crop as cut, by whichever net reads it
        first[unlike] = shipped_judged.probabilities[out][unlike, 0]
        sureness[out] = first[np.arange(len(judged.truth)), judged.truth]
        as_value = read_as < UNREADABLE - 1
        raw += reads.max(axis=1)[as_value].tolist()
        right += (read_as == judged.truth)[as_value].tolist()
    parts = int(folds.max()) + 1
    per_fold = (
        np.bincount(folds, shipped_errors & real, parts),
        np.bincount(folds, adapted_errors & real, parts),
    )
    full_net = tuned(start, views, values, settings)
    record: dict[str, object] = {"dice": int(len(values)), **dataclasses.asdict(settings)}
    confidence = fold_map(raw, right)
    if out_dir is None:
        full = loaded(full_net, source, record, crops, confidence)
    else:  # exported once, where it is kept; the verdict joins its manifest below
        export_adapted(full_net, source, out_dir, record, crops, confidence)
        full = PipClassifier.load(out_dir)
    full_like = fine_tuned_likeness(full, crops, keys, looks)
    if out_dir is not None and full_like is not None:
        save_likeness(out_dir / LIKENESS_FILE, full_like)
    anchor_crops, anchor_values = read_anchor()
    checked = None
    if anchor_crops:
        sample = np.stack(anchor_crops)
        cold = judged_crops(shipped, sample, anchor_values)
        cold_reads = cold.reads(None, shipped.second_look_below)
        warm = judged_crops(full, sample, anchor_values, cold.looks)
        warm_reads = gated_reads(
            full.second_look_below, unlike_of(full_like, warm), warm, cold_reads
        )
        checked = (
            len(anchor_values),
            int((cold_reads.argmax(axis=1) != cold.truth).sum()),
            int((warm_reads.argmax(axis=1) != warm.truth).sum()),
        )
    worse = tuple(
        face
        for face in sorted(faces)
        if adapted_errors[real & (values == face)].sum()
        > shipped_errors[real & (values == face)].sum()
    )
    verdict = dataclasses.replace(decide(*per_fold, checked, worse), dice=int(real.sum()))
    if out_dir is not None:
        manifest = full.model.manifest
        entry = {**manifest.raw["deep_adapted"], "verdict": verdict.to_json()}
        save_manifest(manifest.with_fields(deep_adapted=entry), out_dir / CLASSIFIER_FILE)
    return DeepCheck(verdict, full, time.perf_counter() - started, sureness, full_like)


# ----------------------------------------------------------------------------------------
# The app's background process (companion/vision/adapt_deep_learn.py runs it)


def main(argv: list[str] | None = None) -> int:
    """``python -m models.recipe.adapt_deep --crops NPZ --models DIR --out DIR``: NPZ holds
    ``crops`` (N x 64 x 64 x 3 BGR, the store's), ``values`` (1-6, or 7 for a box on no
    die), ``photos`` (N photo keys) and optionally ``ids`` (N stored die ids, negative for
    none) and ``judged`` (N booleans: False for a die the host added, taught only); --out gets verdict.json (with each stored die's left-out sureness, by id), and
    the fine-tuned pip_classifier.onnx and .json when adopted. Progress goes to stderr."""
    import argparse
    import json
    import logging
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--crops", type=Path, required=True)
    parser.add_argument(
        "--models", type=Path, required=True, help="the shipped classifier's folder"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=DeepSettings.steps)
    parser.add_argument("--nice", type=int, default=10, help="lower this process's priority by")
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)  # the table's own reading comes first
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    with np.load(args.crops, allow_pickle=False) as data:
        crops, values, photos = data["crops"], data["values"], [str(p) for p in data["photos"]]
        ids = data["ids"] if "ids" in data.files else np.full(len(values), -1)
        judged = data["judged"] if "judged" in data.files else np.ones(len(values), bool)
    if not (len(crops) == len(values) == len(photos) == len(ids) == len(judged)):
        raise SystemExit(f"{args.crops}: crops, values and photos differ in length")
    settings = DeepSettings(steps=args.steps)
    source_sha256 = sha256_of(args.models / CLASSIFIER_FILE)  # before: the file may change
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=args.out))
    checked = check_deep(args.models, crops, values, photos, settings, scratch, judged)
    if checked.verdict.adopted:
        for name in (CLASSIFIER_FILE, Path(CLASSIFIER_FILE).with_suffix(".json").name):
            (scratch / name).replace(args.out / name)
        if (scratch / LIKENESS_FILE).is_file():
            (scratch / LIKENESS_FILE).replace(args.out / LIKENESS_FILE)
    for leftover in scratch.iterdir():
        leftover.unlink()
    scratch.rmdir()
    record = {
        "verdict": checked.verdict.to_json(),
        "seconds": round(checked.seconds, 1),
        "dice": int(len(values)),
        "photos": len(set(photos)),
        "from_sha256": source_sha256,
        "settings": dataclasses.asdict(settings),
        "sureness": {
            str(int(i)): round(float(p), 4)
            for i, p in zip(ids, checked.sureness, strict=False)
            if i >= 0 and np.isfinite(p)
        },
    }
    (args.out / VERDICT_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    logging.info("%s", checked.verdict.words())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
