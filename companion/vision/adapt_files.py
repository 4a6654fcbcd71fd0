"""A setup's adapted reader on disk, beside the setup's crops (``setups/<setup>/adapted/``):
the value head (``value_head-<sha12>.npz``, named by the first 12 hex digits of its
sha256: the seen faces and the weights the head adds to the shipped final layer, and the
setup's dice embeddings with the floor of likeness that say which crops it reads,
companion.vision.adapt_fit.Delta and Likeness) and its manifest (``value_head.json``: what
it is, the classifier it adapts by name, version and sha256, the embedding width, the
labels, the face counts, the fold check's verdict, the name and sha256 of the .npz, and
the confidence map the fold check refitted for it when it had enough left-out dice). A refused
head leaves a manifest with ``"head": null`` and its verdict, so a restart shows why the
shipped reader reads. `save_head` is crash-atomic across the two files (the manifest is
replaced in one rename and names a head file written before it); a setup with no
confirmed dice left has no ``adapted/`` folder at all (`remove_head`).

Why a head file and not an adapted ONNX classifier: the app runs without torch and without
the ``onnx`` package (a test and training extra), so it cannot write a graph; the head is
one N x D by D x 6 product (D: the embedding width, 96 or 192) on the shipped
classifier's own embedding output, applied by companion.vision.adapt.AdaptedClassifier to
the shipped ONNX session. The shipped models are never written.

`load_head` checks the manifest as companion.vision.model checks a model's: the file's
sha256, the classifier it was fitted for (another classifier: stale, None, refitted by the
next refresh), the weights' shape against the embedding width; a damaged file raises
ModelError naming the file and the field. A manifest of the first layout, naming
``value_head.npz``, is still read (the same checks: its sha256 is in the manifest); the
next refresh writes the new layout and deletes the old file.

The finder's heat head (companion.vision.adapt_finder) lies beside it the same way:
``finder_head-<sha12>.npz`` (its C + 1 weights) and ``finder_head.json`` (name
``setup_finder_head``, the finder it adapts by name, version and sha256, the features
width, the verdict, the file's name, shape and sha256; ``"head": null`` when refused),
saved crash-atomically in the same order and checked the same way by `load_finder_head`
(a head fitted for another finder is stale: None)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.vision.adapt import FACES, ValueHead
from companion.vision.adapt_finder import AdaptedFinder, FinderHead
from companion.vision.adapt_fit import Delta, Likeness
from companion.vision.adapt_gate import Verdict
from companion.vision.classifier import PipClassifier
from companion.vision.confidence import ConfidenceMap
from companion.vision.model import ModelError, sha256_of

ADAPTED_DIR = "adapted"
HEAD_FILE = "value_head.npz"  # the head file's name before content addressing (still read)
HEAD_PREFIX = "value_head-"
HEAD_SUFFIX = ".npz"
MANIFEST_FILE = "value_head.json"
NAME = "setup_value_head"
VERSION = "1"


@dataclass(frozen=True)
class SavedHead:
    """What a restart finds: the head (inactive when refused) and its verdict."""

    head: ValueHead
    verdict: Verdict


def _classifier_of(classifier: PipClassifier) -> dict[str, object]:
    manifest = classifier.model.manifest
    return {"name": manifest.name, "version": manifest.version, "sha256": manifest.sha256}


def embedding_width(classifier: PipClassifier) -> int:
    """The classifier's embedding width as its manifest declares it (-1: not declared)."""
    shape = classifier.model.manifest.output_shapes.get("embedding")
    last = shape[-1] if shape else -1
    return last if isinstance(last, int) else -1


def head_file_name(data: bytes) -> str:
    """The head file's name for its bytes: ``value_head-<first 12 hex of sha256>.npz``."""
    return f"{HEAD_PREFIX}{hashlib.sha256(data).hexdigest()[:12]}{HEAD_SUFFIX}"


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The arrays as one .npz file's bytes (a head's weights with its likeness, or a
    fine-tuned net's likeness: `Likeness.arrays` names them in one place)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy types allow_pickle among **kwds
    return buffer.getvalue()


def write_head_file(out: Path, delta: Delta) -> Path:
    """Write the head's weights under their content-addressed name (synced to disk) and
    return its path; a file of that name already there holds the same bytes. No manifest
    names it yet: until `save_head` replaces the manifest, the previous head reads."""
    likeness = {} if delta.like is None else delta.like.arrays()
    data = npz_bytes({"seen": np.array(delta.seen, np.int64), "weights": delta.weights, **likeness})
    path = out / head_file_name(data)
    atomic_write(path, data)
    return path


def save_head(folder: Path, setup: str, head: ValueHead, classifier: PipClassifier) -> Path:
    """Write the head (when active) and its manifest into ``folder/adapted``; returns the
    manifest's path. Crash-atomic across the two files: the head goes to a file named by
    its content (``value_head-<sha12>.npz``, written under a unique temporary name, synced,
    renamed), then the manifest naming it replaces the old one in one rename (synced, the
    folder too), and only then are the head files no manifest names deleted. A crash at
    any point leaves the old manifest with its own head file, or the new with its own."""
    out = Path(folder) / ADAPTED_DIR
    out.mkdir(parents=True, exist_ok=True)
    manifest = _manifest_start(
        NAME,
        "the setup's value head on the pip classifier's embedding (issue 24)",
        setup,
        _classifier_of(classifier),
    )
    manifest |= {
        "labels": list(classifier.model.manifest.labels),
        "counts": [int(c) for c in head.counts],
        "verdict": head.gate.to_json(),
        "head": None,
    }
    keep: set[str] = set()
    if head.delta is not None:
        path = write_head_file(out, head.delta)
        keep.add(path.name)
        spec: dict[str, object] = {
            "file": path.name,
            "seen": list(head.delta.seen),
            "shape": list(head.delta.weights.shape),
            "sha256": sha256_of(path),
        }
        if head.confidence_map is not None:  # refitted on the fold check's left-out dice
            spec["confidence"] = head.confidence_map.to_json()
        manifest["head"] = spec
    return _write_manifest(out / MANIFEST_FILE, manifest, keep, HEAD_PREFIX.rstrip("-"))


def _manifest_start(
    name: str, task: str, setup: str, derived_from: dict[str, object]
) -> dict[str, object]:
    return {
        "name": name,
        "version": VERSION,
        "task": task,
        "setup": setup,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "derived_from": derived_from,
    }


def _write_manifest(path: Path, manifest: dict[str, object], keep: set[str], prefix: str) -> Path:
    """The manifest in one rename, then the head files (``prefix*.npz``) it does not name
    deleted: a crash leaves the old manifest with its own head file, or the new."""
    atomic_write(path, (json.dumps(manifest, indent=1) + "\n").encode())
    for old in path.parent.glob(f"{prefix}*{HEAD_SUFFIX}"):
        if old.name not in keep:
            old.unlink(missing_ok=True)
    return path


def remove_head(folder: Path) -> None:
    """Remove the setup's adapted head and manifest (``folder/adapted``): the shipped
    reader reads (a setup with no confirmed dice left)."""
    shutil.rmtree(Path(folder) / ADAPTED_DIR, ignore_errors=True)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: a unique temporary file beside it, synced,
    renamed over `path`, and the folder synced so the rename survives a power cut."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as temporary:
            temporary.write(data)
            temporary.flush()
            os.fsync(temporary.fileno())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform that cannot open a folder (Windows): nothing to sync
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_head(folder: Path, classifier: PipClassifier) -> SavedHead | None:
    """The saved head for this classifier (module docstring); None when none is saved or
    it was fitted for another classifier."""
    path = Path(folder) / ADAPTED_DIR / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        verdict = Verdict.from_json(raw["verdict"])
        derived = raw["derived_from"]["sha256"]
        counts = np.array(raw["counts"], np.int64)
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{path}: malformed adapted-head manifest ({exc!r})") from exc
    if raw.get("name") != NAME or len(counts) != FACES:
        raise ModelError(f"{path}: not a {NAME} manifest (name, counts)")
    if derived != classifier.model.manifest.sha256:
        return None  # fitted for another classifier: the next refresh fits it again
    spec = raw.get("head")
    if spec is None:
        return SavedHead(ValueHead(None, counts, verdict), verdict)
    delta = _delta(path, spec, embedding_width(classifier))
    confidence_map = None
    if spec.get("confidence") is not None:
        try:
            confidence_map = ConfidenceMap.from_json(spec["confidence"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"{path}: head.confidence is not a confidence map ({exc})") from exc
    return SavedHead(ValueHead(delta, counts, verdict, confidence_map), verdict)


def _checked_file(manifest_path: Path, name: str, named_right: bool, sha256: object) -> Path:
    """The head file a manifest names (``head.file``), checked: a file of the right kind of
    name beside the manifest, there, with the manifest's ``head.sha256``."""
    if Path(name).name != name or not named_right:
        raise ModelError(f"{manifest_path}: 'head.file' {name!r} is not a head file beside it")
    head_path = manifest_path.parent / name
    if not head_path.is_file():
        raise ModelError(f"{head_path}: adapted head file not found")
    if sha256_of(head_path) != sha256:
        raise ModelError(f"{head_path}: sha256 does not match the manifest's 'head.sha256'")
    return head_path


def _delta(manifest_path: Path, spec: dict[str, object], width: int) -> Delta:
    name = str(spec.get("file", HEAD_FILE))
    head_path = _checked_file(manifest_path, name, name.endswith(HEAD_SUFFIX), spec.get("sha256"))
    with np.load(head_path) as data:
        seen = tuple(int(c) for c in data["seen"])
        weights = np.asarray(data["weights"], np.float64)
        like = None  # a head saved before it read only like dice reads every crop
        if "prototypes" in data:
            try:
                like = Likeness.from_arrays(data, width)
            except ValueError as exc:
                raise ModelError(f"{head_path}: {exc}") from exc
    if list(seen) != spec.get("seen") or list(weights.shape) != spec.get("shape"):
        raise ModelError(f"{head_path}: 'head.seen' or 'head.shape' does not match the file")
    if weights.shape != (len(seen), width + 1):
        raise ModelError(
            f"{head_path}: weights {weights.shape} do not fit embedding width {width} "
            f"('head.shape')"
        )
    return Delta(seen, weights, like)


FINDER_PREFIX = "finder_head-"
FINDER_MANIFEST = "finder_head.json"
FINDER_NAME = "setup_finder_head"


@dataclass(frozen=True)
class SavedFinderHead:
    """What a restart finds for the finder: the head (None when refused) and its verdict."""

    head: FinderHead | None
    verdict: Verdict
    photo_ids: tuple[int, ...] = ()  # the stored photos the verdict judged


def _finder_of(finder: AdaptedFinder) -> dict[str, object]:
    manifest = finder.base.model.manifest
    return {"name": manifest.name, "version": manifest.version, "sha256": manifest.sha256}


def save_finder_head(
    folder: Path,
    setup: str,
    head: FinderHead | None,
    verdict: Verdict,
    finder: AdaptedFinder,
    photo_ids: Sequence[int] = (),
) -> Path:
    """Write the finder head (when adopted) and its manifest into ``folder/adapted`` as
    `save_head` writes the value head (crash-atomic across the two files); returns the
    manifest's path."""
    out = Path(folder) / ADAPTED_DIR
    out.mkdir(parents=True, exist_ok=True)
    manifest = _manifest_start(
        FINDER_NAME,
        "the setup's heat head on the dice finder's stride-4 features (issue 24)",
        setup,
        _finder_of(finder),
    )
    manifest |= {
        "features": finder.features_width,
        "verdict": verdict.to_json(),
        "photos": [int(k) for k in photo_ids],
        "head": None,
    }
    keep: set[str] = set()
    if head is not None:
        buffer = io.BytesIO()
        np.savez(buffer, weights=np.asarray(head.weights, np.float64))
        data = buffer.getvalue()
        path = out / f"{FINDER_PREFIX}{hashlib.sha256(data).hexdigest()[:12]}{HEAD_SUFFIX}"
        atomic_write(path, data)
        keep.add(path.name)
        manifest["head"] = {
            "file": path.name,
            "shape": list(head.weights.shape),
            "sha256": sha256_of(path),
        }
    return _write_manifest(out / FINDER_MANIFEST, manifest, keep, FINDER_PREFIX)


def load_finder_head(folder: Path, finder: AdaptedFinder) -> SavedFinderHead | None:
    """The saved finder head for this finder; None when none is saved or it was fitted
    for another finder; a damaged file raises ModelError naming the file and the field."""
    path = Path(folder) / ADAPTED_DIR / FINDER_MANIFEST
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        verdict = Verdict.from_json(raw["verdict"])
        derived = raw["derived_from"]["sha256"]
        photo_ids = tuple(int(k) for k in raw.get("photos", ()))
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{path}: malformed finder-head manifest ({exc!r})") from exc
    if raw.get("name") != FINDER_NAME:
        raise ModelError(f"{path}: not a {FINDER_NAME} manifest ('name')")
    if derived != finder.base.model.manifest.sha256:
        return None  # fitted for another finder: the next refresh fits it again
    spec = raw.get("head")
    if spec is None:
        return SavedFinderHead(None, verdict, photo_ids)
    name = str(spec.get("file", ""))
    head_path = _checked_file(path, name, name.startswith(FINDER_PREFIX), spec.get("sha256"))
    with np.load(head_path) as data:
        weights = np.asarray(data["weights"], np.float64)
    if list(weights.shape) != spec.get("shape") or weights.shape != (finder.features_width + 1,):
        raise ModelError(
            f"{head_path}: weights {weights.shape} do not fit {finder.features_width} "
            "features ('head.shape')"
        )
    return SavedFinderHead(FinderHead(weights), verdict, photo_ids)
