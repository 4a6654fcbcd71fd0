"""An ONNX model that ships with its contract: the manifest JSON beside the .onnx file names
the input (name, shape, layout, colour order, size, normalisation), the outputs, the labels,
the training data and the measured accuracy. Loading checks the manifest against the file
(sha256) and against the model's real inputs/outputs/labels, then runs one warm-up
inference, so a wrong or damaged model fails at start-up with a clear message instead of
reading dice wrongly later. (The idea follows Frigate's detector plugins; our own code.)"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

if TYPE_CHECKING:
    import onnxruntime as ort  # type: ignore[import-untyped]  # ships no type hints

from companion.assets import models_dir

logger = logging.getLogger(__name__)

# The model's own copy of its labels, written by models/train.py into the ONNX metadata.
LABELS_METADATA_KEY = "labels"
REQUIRED_KEYS = ("name", "version", "task", "input", "outputs", "labels", "sha256")
REQUIRED_INPUT_KEYS = ("name", "shape", "layout", "colour_order", "size", "scale", "mean", "std")


def default_models_dir() -> Path:
    """The shipped models: the package's model assets (the repository's ``models/`` in a
    checkout; companion.assets)."""
    return models_dir()


class ModelError(RuntimeError):
    """A model or manifest that is missing, damaged or does not match its contract."""


@dataclass(frozen=True, slots=True)
class InputSpec:
    """How to prepare pixels for the model: ``value = (pixel * scale - mean) / std`` per
    channel, in ``colour_order`` ("RGB" or "BGR"), laid out NCHW."""

    name: str
    shape: tuple[int | str, ...]
    layout: str
    colour_order: str
    size: tuple[int, int]
    scale: float
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Manifest:
    """The parsed manifest; ``raw`` keeps every field (training data, figures, options)."""

    name: str
    version: str
    task: str
    input: InputSpec
    output_names: tuple[str, ...]
    labels: tuple[str, ...]
    sha256: str
    raw: dict[str, Any]
    # declared shape per output (optional in a manifest; checked at load when given):
    # a str is a dynamic dimension, an int a fixed one
    output_shapes: dict[str, tuple[int | str, ...]] = dataclasses.field(default_factory=dict)

    def option(self, key: str, default: Any) -> Any:
        """A model-specific setting from the manifest's ``options`` (e.g. thresholds)."""
        options = self.raw.get("options", {})
        return options.get(key, default) if isinstance(options, dict) else default

    def with_fields(self, **fields: object) -> Manifest:
        """A copy with these top-level fields of the file set (e.g. ``options``,
        ``validation``, ``confidence``); the typed fields stay as they are."""
        return dataclasses.replace(self, raw={**self.raw, **fields})

    def to_json(self) -> dict[str, object]:
        """The manifest as its file holds it (`parse_manifest` reads it back): the typed
        fields, and every other field of ``raw`` as it is."""
        spec = self.input
        outputs: dict[str, object] = {
            **self.raw.get("outputs", {}),
            "names": list(self.output_names),
        }
        if self.output_shapes:
            outputs["shapes"] = {name: list(shape) for name, shape in self.output_shapes.items()}
        body = {
            **self.raw,
            "name": self.name,
            "version": self.version,
            "task": self.task,
            "input": {
                **self.raw.get("input", {}),
                "name": spec.name,
                "shape": list(spec.shape),
                "layout": spec.layout,
                "colour_order": spec.colour_order,
                "size": list(spec.size),
                "scale": spec.scale,
                "mean": list(spec.mean),
                "std": list(spec.std),
            },
            "outputs": outputs,
            "labels": list(self.labels),
            "sha256": self.sha256,
        }
        return {key: body[key] for key in _key_order(body)}


def _key_order(body: dict[str, object]) -> list[str]:
    """The contract's fields first, in the order the shipped files have them."""
    first = ["name", "version", "task", "created", "input", "crop", "resize", "outputs"]
    first += ["labels", "options"]
    last = ["sha256"]
    return (
        [k for k in first if k in body]
        + [k for k in body if k not in first and k not in last]
        + last
    )


def save_manifest(manifest: Manifest, onnx_path: Path) -> Manifest:
    """Write ``manifest`` beside ``onnx_path`` (same name, ``.json``) with the file's
    sha256, and return it as written."""
    written = dataclasses.replace(manifest, sha256=sha256_of(onnx_path))
    onnx_path.with_suffix(".json").write_text(
        json.dumps(written.to_json(), indent=2) + "\n", encoding="utf-8"
    )
    return written


def parse_manifest(path: Path) -> Manifest:
    """Read and validate a manifest JSON; raises ModelError naming the file and the field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: model manifest not found") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: model manifest is not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: model manifest must be a JSON object")
    missing = [key for key in REQUIRED_KEYS if key not in raw]
    if missing:
        raise ModelError(f"{path}: model manifest lacks {', '.join(missing)}")
    spec = raw["input"]
    if not isinstance(spec, dict) or any(key not in spec for key in REQUIRED_INPUT_KEYS):
        raise ModelError(f"{path}: manifest 'input' needs {', '.join(REQUIRED_INPUT_KEYS)}")
    outputs = raw["outputs"]
    try:
        input_spec = InputSpec(
            name=str(spec["name"]),
            shape=tuple(d if isinstance(d, str) else int(d) for d in spec["shape"]),
            layout=str(spec["layout"]),
            colour_order=str(spec["colour_order"]).upper(),
            size=(int(spec["size"][0]), int(spec["size"][1])),
            scale=float(spec["scale"]),
            mean=tuple(float(v) for v in spec["mean"]),  # type: ignore[arg-type]
            std=tuple(float(v) for v in spec["std"]),  # type: ignore[arg-type]
        )
        output_names = tuple(str(n) for n in outputs["names"])
        output_shapes = {
            str(name): tuple(d if isinstance(d, str) else int(d) for d in shape)
            for name, shape in dict(outputs.get("shapes", {})).items()
        }
        labels = tuple(str(label) for label in raw["labels"])
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise ModelError(f"{path}: malformed manifest field ({exc!r})") from exc
    if input_spec.layout != "NCHW" or input_spec.colour_order not in ("RGB", "BGR"):
        raise ModelError(f"{path}: input must be NCHW with colour order RGB or BGR")
    if len(input_spec.mean) != 3 or len(input_spec.std) != 3 or 0.0 in input_spec.std:
        raise ModelError(f"{path}: input mean/std need three values, std non-zero")
    unknown = [name for name in output_shapes if name not in output_names]
    if unknown:
        raise ModelError(f"{path}: manifest 'outputs.shapes' names unknown outputs {unknown}")
    return Manifest(
        name=str(raw["name"]),
        version=str(raw["version"]),
        task=str(raw["task"]),
        input=input_spec,
        output_names=output_names,
        labels=labels,
        sha256=str(raw["sha256"]).lower(),
        raw=raw,
        output_shapes=output_shapes,
    )


def _same_shape(actual: tuple[object, ...], declared: tuple[int | str, ...]) -> bool:
    """Fixed dims must agree; a dim the manifest calls dynamic (a name) must be dynamic."""
    if len(actual) != len(declared):
        return False
    return all(
        isinstance(want, int) == isinstance(got, int) and (not isinstance(want, int) or want == got)
        for got, want in zip(actual, declared, strict=True)
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxModel:
    """An onnxruntime CPU session plus its checked manifest."""

    def __init__(self, session: ort.InferenceSession, manifest: Manifest, path: Path) -> None:
        self.session = session
        self.manifest = manifest
        self.path = path

    @classmethod
    def load(
        cls,
        onnx_path: Path,
        *,
        intra_op_num_threads: int = 1,
        warmup_hw: tuple[int, int] | None = None,
    ) -> OnnxModel:
        """Load ``onnx_path`` and the manifest beside it (same name, ``.json``), check one
        against the other, and run one warm-up inference on an input of ``warmup_hw``
        (default: the manifest's size)."""
        manifest_path = onnx_path.with_suffix(".json")
        manifest = parse_manifest(manifest_path)
        if not onnx_path.is_file():
            raise ModelError(f"{onnx_path}: model file not found")
        actual = sha256_of(onnx_path)
        if actual != manifest.sha256:
            raise ModelError(
                f"{onnx_path}: sha256 {actual} does not match the manifest's {manifest.sha256} "
                "(model or manifest changed; retrain with models/train.py)"
            )
        if intra_op_num_threads < 1:
            raise ModelError(f"intra_op_num_threads must be >= 1, got {intra_op_num_threads}")
        # imported only when a model is loaded: onnxruntime writes a file of its own under
        # ~/.cache on import, which a server without a camera must not do
        import onnxruntime as ort  # noqa: PLC0415

        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_num_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(
                str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors for bad files
            raise ModelError(f"{onnx_path}: not a loadable ONNX model ({exc})") from exc
        model = cls(session, manifest, onnx_path)
        model._check_contract()
        model._warm_up(warmup_hw or manifest.input.size)
        logger.info("loaded %s %s from %s", manifest.name, manifest.version, onnx_path)
        return model

    def _check_contract(self) -> None:
        where, spec = self.path, self.manifest.input
        inputs = self.session.get_inputs()
        if len(inputs) != 1 or inputs[0].name != spec.name:
            names = [i.name for i in inputs]
            raise ModelError(f"{where}: model inputs {names} != manifest input {spec.name!r}")
        actual_shape = tuple(inputs[0].shape)
        if len(actual_shape) != len(spec.shape):
            raise ModelError(f"{where}: input rank {actual_shape} != manifest {spec.shape}")
        if not _same_shape(actual_shape, spec.shape):
            raise ModelError(f"{where}: input shape {actual_shape} != manifest shape {spec.shape}")
        outputs = self.session.get_outputs()
        output_names = tuple(o.name for o in outputs)
        if output_names != self.manifest.output_names:
            raise ModelError(
                f"{where}: model outputs {output_names} != manifest {self.manifest.output_names}"
            )
        for output in outputs:
            declared_shape = self.manifest.output_shapes.get(output.name)
            if declared_shape is not None and not _same_shape(tuple(output.shape), declared_shape):
                raise ModelError(
                    f"{where}: output {output.name!r} shape {tuple(output.shape)} != "
                    f"manifest shape {declared_shape}"
                )
        metadata = self.session.get_modelmeta().custom_metadata_map
        try:
            model_labels = tuple(json.loads(metadata.get(LABELS_METADATA_KEY, "null")) or ())
        except json.JSONDecodeError:
            model_labels = ()
        if model_labels != self.manifest.labels:
            raise ModelError(
                f"{where}: model labels {model_labels} != manifest labels {self.manifest.labels}"
            )

    def _warm_up(self, hw: tuple[int, int]) -> None:
        dims = [1 if isinstance(d, str) else d for d in self.manifest.input.shape]
        dims[-2], dims[-1] = hw
        try:
            self.run(np.zeros(dims, dtype=np.float32))
        except Exception as exc:  # any failure here means the model cannot serve
            raise ModelError(f"{self.path}: warm-up inference failed ({exc})") from exc

    def run(self, batch: np.ndarray) -> list[np.ndarray]:
        """All outputs, in manifest order, for one NCHW float32 batch."""
        return list(self.session.run(None, {self.manifest.input.name: batch}))

    def normalise(self, images: np.ndarray) -> np.ndarray:
        """N x H x W x 3 uint8 images already in the manifest's colour order -> the NCHW
        float32 input: (pixel * scale - mean) / std per channel."""
        spec = self.manifest.input
        if len(set(spec.std)) == 1:
            # one fused OpenCV pass: (pixel - mean / scale) * (scale / std)
            return cv2.dnn.blobFromImages(
                list(images),
                scalefactor=spec.scale / spec.std[0],
                size=(0, 0),
                mean=tuple(m / spec.scale for m in spec.mean),
                swapRB=False,
                crop=False,
            )
        batch = images.astype(np.float32) * spec.scale
        batch -= np.asarray(spec.mean, dtype=np.float32)
        batch /= np.asarray(spec.std, dtype=np.float32)
        return np.ascontiguousarray(batch.transpose(0, 3, 1, 2))
