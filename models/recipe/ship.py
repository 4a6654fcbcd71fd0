"""Ship a judged pair: copy its new model files into models/ with their manifests finished.

    .venv/bin/python -m models.recipe.ship --pair .cache/pairs/NAME+c14 \
        --history "stage 28: python models/train.py ...; the average: ..." \
        [--float models/training/stageNN-lite-finder/average] [--version 1.8.0] [--models models]
    .venv/bin/python -m models.recipe.ship --pair DIR --history "..." \
        --float FINDER_SOURCE --float CLASSIFIER_SOURCE \
        --version finder=1.7.3 --version classifier=2.0.2

A pair folder (`bench/model_pairs.py` writes one per candidate) holds both models as the
rule judged them: the finder with the peak rule chosen for it and its validation figures in
its manifest. Shipping was done by hand twice (finders 1.6.0 and 1.7.0) and each time the
same fields needed mending, so it is one command: for each model of the pair that differs
from the shipped one, the file is copied and its manifest gets

- the version: given, or the shipped one's next minor; never at or below the shipped one;
- ``created``: today;
- ``training_command``: the shipped model's chain of commands, then ``--history`` (how the
  new file came from it: the stages and the averaging), so the manifest tells the whole
  recipe from scratch; with ``--new-line`` (a net of another line, trained from scratch:
  the wide classifier), ``--history`` alone, which must then tell the whole recipe;

and the runtime's load checks must pass on the result. An int8 file names the float file it
was quantised from (``quantised.from_sha256``); that source must be given with ``--float``
(once per folder: a pair that brings two int8 files names both sources), be that file and
lie under models/training/ (committed with the training states, so the int8 file can be
made again). A model file the pair shares with models/ (same sha256) is
not copied, but what the judging chose for this pair goes with it: the finder's peak rule
(its ``options``, chosen on the calibration photos with the pair's classifier) and the
pair's validation figures. Classifier 1.5.0 shipped beside an unchanged finder whose
manifest kept the rule chosen for classifier 1.4.0, so the app read with a rule judged for
another pair (pooled 247 by `bench/vision_eval.py --suite` against the 241 it was shipped
on). A changed rule is a patch version of the same file (1.7.0 -> 1.7.1); figures alone
change no version. ``--version V`` names the one new file's version, so it is refused
when the pair brings two: then ``--version finder=V --version classifier=W`` names each
(finder 1.7.3 and classifier 2.0.2, the same float sources quantised again, took two
commands when the tool knew one source and one version). The new files are staged beside
the old ones and renamed over them at the end. What shipping still asks of a person (the
confidence map, the finder's features file, the figures, the docs) is printed."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import logging
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.finder import FINDER_FILE, DiceFinder
from companion.vision.model import Manifest, ModelError, parse_manifest, save_manifest, sha256_of

logger = logging.getLogger("ship")

# each file of a pair with the runtime loader whose checks it must pass
LOADERS: dict[str, Callable[[Path], object]] = {
    FINDER_FILE: DiceFinder.load,
    CLASSIFIER_FILE: PipClassifier.load,
}

AFTER_SHIPPING = """still to do, in this order:
  .venv/bin/python -m models.recipe.finder_features          (a setup's finder head)
  .venv/bin/python -m models.recipe.confidence_fit --models {models}
  .venv/bin/python -m bench.auto_apply --suite --signals      (redraws docs/benchmarks)
  .venv/bin/python -m bench.live_latency --throws 20 --reader pipeline
  FINDER_VERSION / CLASSIFIER_VERSION in models/recipe/manifests.py above the shipped ones
  figures and the stage's result in models/README.md and docs/BENCHMARKS.md"""


# the fields the judging (train.py --only evaluate) writes for a pair: the peak rule and
# the validation figures; they belong to the pair, so they ship with a file it shares
JUDGED = ("options", "validation")


class ShipRefused(ValueError):
    """The pair cannot ship as asked; the message says why."""


def version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError as error:
        raise ShipRefused(f"version {version!r} is not numbers separated by dots") from error


def next_minor(version: str) -> str:
    key = version_key(version)
    if len(key) < 2:
        raise ShipRefused(f"version {version!r} has no minor number to raise")
    return f"{key[0]}.{key[1] + 1}.0"


# what --version may name a file by
ROLES = {"finder": FINDER_FILE, "classifier": CLASSIFIER_FILE}


def check_float_source(
    manifest: Manifest, float_dirs: Sequence[Path], file_name: str, models: Path
) -> None:
    """An int8 file ships only beside the float file it was quantised from, kept under
    the training states (models/training/, committed), so it can be made again: one of
    ``float_dirs`` must hold it."""
    quantised = manifest.raw.get("quantised")
    if not isinstance(quantised, dict):
        return
    wanted = quantised.get("from_sha256")
    if not float_dirs:
        raise ShipRefused(
            f"{file_name} is int8, quantised from {wanted}: give that float file's folder "
            "with --float (it is committed beside the training state)"
        )
    states = (models / "training").resolve()
    for float_dir in float_dirs:
        if not float_dir.resolve().is_relative_to(states):
            raise ShipRefused(f"--float {float_dir} is not under {states}, where it is committed")
    holding = [d for d in float_dirs if (d / file_name).is_file()]
    if not holding:
        raise ShipRefused(f"--float {', '.join(map(str, float_dirs))} holds no {file_name}")
    found = {d: sha256_of(d / file_name) for d in holding}
    if wanted not in found.values():
        named = ", ".join(f"{d} has sha256 {sha}" for d, sha in found.items())
        raise ShipRefused(f"{file_name}: {named}, but the int8 file was quantised from {wanted}")


def parse_versions(given: Sequence[str]) -> dict[str | None, str]:
    """``--version`` values as {file name: version}; a bare version is keyed None (the one
    new file's)."""
    versions: dict[str | None, str] = {}
    for text in given:
        role, _, version = text.rpartition("=")
        if role and role not in ROLES:
            raise ShipRefused(f"--version {text}: name the file as {' or '.join(ROLES)}")
        key = ROLES[role] if role else None
        if key in versions:
            raise ShipRefused(f"--version names {role or 'the new file'} twice")
        versions[key] = version
    return versions


def next_patch(version: str) -> str:
    key = version_key(version)
    if len(key) < 3:
        raise ShipRefused(f"version {version!r} has no patch number to raise")
    return f"{key[0]}.{key[1]}.{key[2] + 1}"


def judged_fields(judged: Manifest, shipped: Manifest) -> Manifest | None:
    """For a file the pair shares with models/: the shipped manifest with the pair's peak
    rule (``options``) and figures (``validation``) as judged, the version's patch raised
    when the rule changed; None when the judging changed neither."""
    fields = {key: judged.raw[key] for key in JUDGED if key in judged.raw}
    if all(shipped.raw.get(key) == value for key, value in fields.items()):
        return None
    updated = shipped.with_fields(**fields)
    if fields.get("options", shipped.raw.get("options")) == shipped.raw.get("options"):
        return updated  # figures alone: the same reader
    today = datetime.date.today().isoformat()
    return dataclasses.replace(
        updated.with_fields(created=today), version=next_patch(shipped.version)
    )


def finished_manifest(
    candidate: Manifest,
    shipped: Manifest,
    version: str | None,
    history: str,
    new_line: bool = False,
) -> Manifest:
    """The candidate's manifest with the fields a shipped file needs; ``new_line``: the
    file does not descend from the shipped one (another net, trained from scratch), so its
    chain of commands is ``history`` alone."""
    new_version = version or next_minor(shipped.version)
    if version_key(new_version) <= version_key(shipped.version):
        raise ShipRefused(f"version {new_version} is not above the shipped {shipped.version}")
    if not history.strip():
        raise ShipRefused("--history is empty: say how the new file came from the shipped one")
    inherited = "" if new_line else shipped.raw.get("training_command", "")
    chain = f"{inherited}; {history.strip()}".lstrip("; ")
    finished = candidate.with_fields(
        created=datetime.date.today().isoformat(), training_command=chain
    )
    return dataclasses.replace(finished, version=new_version)


def differs(pair: Path, models: Path, file_name: str) -> bool:
    """Whether the pair brings a model file other than the shipped one."""
    source, shipped = pair / file_name, models / file_name
    return source.is_file() and shipped.is_file() and sha256_of(source) != sha256_of(shipped)


def check_versions(versions: dict[str | None, str], changed: list[str]) -> dict[str | None, str]:
    """The versions asked for, refused when a bare one would name two new files or a
    named one a file the pair does not change."""
    if None in versions and len(changed) > 1:
        raise ShipRefused(
            "--version names one model's version, and the pair changes two: "
            "name each (--version finder=V --version classifier=W)"
        )
    unchanged = sorted(n for n in versions if n is not None and n not in changed)
    if unchanged:
        raise ShipRefused(f"--version names {unchanged[0]}, which the pair does not change")
    return versions


def check_judged(candidate: Manifest, pair: Path, file_name: str) -> None:
    """Refuse a pair the judging did not finish (a maintainer's trial shipped one whose
    evaluate stage was stopped half way: no figures, no confidence map, and a finder rule
    chosen from part of the photos): validation figures for some folder, and for the
    classifier its confidence map."""
    figures = candidate.raw.get("validation")
    judged = isinstance(figures, dict) and any(key != "note" for key in figures)
    if file_name == CLASSIFIER_FILE and not candidate.raw.get("confidence"):
        judged = False
    if not judged:
        raise ShipRefused(
            f"{pair / file_name} was not judged to the end (no validation figures or "
            f"confidence map): judge the pair first, models/train.py --only evaluate --out {pair}"
        )


def ship_pair(
    pair: Path,
    models: Path,
    history: str,
    float_dirs: Sequence[Path] = (),
    versions: dict[str | None, str] | None = None,
    new_line: bool = False,
) -> list[Path]:
    """Ship every model of ``pair`` that differs from the one in ``models``; returns the
    files written. ``versions``: by file name, or None for the one new file's (parse_versions).
    Nothing is written unless every check passes first; the new files are staged beside the
    old and renamed over them together."""
    changed = [name for name in LOADERS if differs(pair, models, name)]
    versions = check_versions(versions or {}, changed)
    plans: list[tuple[Path, Manifest]] = []
    kept: list[tuple[Path, Manifest]] = []  # shared files with the pair's judged fields
    for file_name, load in LOADERS.items():
        source, shipped_file = pair / file_name, models / file_name
        if not shipped_file.is_file():
            raise ShipRefused(f"{models} has no {file_name} to ship in place of")
        if not source.exists():
            continue
        candidate = parse_manifest(source.with_suffix(".json"))
        check_judged(candidate, pair, file_name)
        shipped = parse_manifest(shipped_file.with_suffix(".json"))
        load(pair)  # the runtime's own checks, on the pair as judged
        if file_name not in changed:  # the same file: only what the judging chose for it
            judged = judged_fields(candidate, shipped)
            if judged is not None:
                kept.append((shipped_file, judged))
            continue
        check_float_source(candidate, float_dirs, file_name, models)
        version = versions.get(file_name, versions.get(None))
        finished = finished_manifest(candidate, shipped, version, history, new_line)
        plans.append((source, finished))
    if not plans and not kept:
        raise ShipRefused(f"{pair} holds nothing that differs from {models}")
    staged = []
    for source, manifest in [*plans, *kept]:
        stage = models / f".{source.stem}.shipping.onnx"
        shutil.copyfile(source, stage)
        save_manifest(manifest, stage)
        staged.append((stage, models / source.name))
    for stage, target in staged:
        os.replace(stage.with_suffix(".json"), target.with_suffix(".json"))
        os.replace(stage, target)
    for _, target in staged:
        LOADERS[target.name](models)
        logger.info("shipped %s", target)
    return [target for _, target in staged]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", type=Path, required=True, help="a judged pair folder")
    parser.add_argument(
        "--history",
        required=True,
        help="how the new file came from the shipped one (both files' when the pair changes two)",
    )
    parser.add_argument(
        "--float", dest="float_dirs", type=Path, action="append", default=[],
        help="the folder of an int8 file's float source (once per folder)",
    )  # fmt: skip
    parser.add_argument(
        "--version", dest="versions", action="append", default=[],
        help="V (the one new file's) or finder=V / classifier=V; default: the shipped "
        "model's next minor",
    )  # fmt: skip
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument(
        "--new-line",
        action="store_true",
        help="the new file does not descend from the shipped one (another net from scratch): "
        "its training_command is --history alone, the whole recipe",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    try:
        versions = parse_versions(args.versions)
        ship_pair(args.pair, args.models, args.history, args.float_dirs, versions, args.new_line)
    except (ShipRefused, ModelError, OSError) as error:
        raise SystemExit(f"not shipped: {error}") from error
    print(AFTER_SHIPPING.format(models=args.models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
