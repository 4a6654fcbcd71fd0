"""Shipping a judged pair (models/recipe/ship.py) into a copy of models/, on the real files:
the shipped int8 finder plays the candidate, and a models folder whose finder is that
file's float source plays the shipped pair. The int8 file ships only with its float source
named; its manifest gets the next version, today's date and the whole chain of commands;
the classifier the pair shares is not touched; a float source outside the training states,
or another file, is refused; a version at or below the shipped one, an
empty history and a pair with nothing new are refused with nothing written. The next
export's version constant stays above the shipped finder's. Needs onnx (the `test`
extra)."""

from __future__ import annotations

import dataclasses
import datetime
import shutil
from pathlib import Path

import pytest

from companion.vision.classifier import CLASSIFIER_FILE, PipClassifier
from companion.vision.finder import FINDER_FILE, DiceFinder
from companion.vision.model import parse_manifest, save_manifest, sha256_of
from models.recipe.manifests import FINDER_VERSION
from models.recipe.ship import main, next_minor, version_key
from tests.training.test_quantise import FLOAT

MODELS = Path(__file__).resolve().parents[2] / "models"
STAGE22 = MODELS / "training" / "stage22-lite-finder" / "finder" / "candidate"


@pytest.fixture()
def older_models(tmp_path: Path) -> Path:
    """models/ as it would be if the float source had shipped, as version 1.7.0."""
    folder = tmp_path / "models"
    folder.mkdir()
    for name in (CLASSIFIER_FILE, "pip_classifier.json"):
        shutil.copyfile(MODELS / name, folder / name)
    shutil.copyfile(FLOAT / FINDER_FILE, folder / FINDER_FILE)
    source = parse_manifest(FLOAT / "dice_finder.json")
    older = dataclasses.replace(source.with_fields(training_command="stages 1-26"), version="1.7.0")
    save_manifest(older, folder / FINDER_FILE)
    # the training states, where the float source of an int8 file is committed
    shutil.copytree(FLOAT, folder / "training" / "average")
    shutil.copytree(STAGE22, folder / "training" / "stage22")
    return folder


def test_a_pair_ships_its_new_finder_with_a_finished_manifest(older_models: Path) -> None:
    classifier_before = sha256_of(older_models / CLASSIFIER_FILE)
    arguments = ["--pair", str(MODELS), "--models", str(older_models), "--history", "stage 28"]
    with pytest.raises(SystemExit, match="--float"):
        main(arguments)
    with pytest.raises(SystemExit, match="not under"):  # not kept with the training states
        main([*arguments, "--float", str(FLOAT)])
    with pytest.raises(SystemExit, match="quantised from"):
        main([*arguments, "--float", str(older_models / "training" / "stage22")])
    with pytest.raises(SystemExit, match="holds no"):
        main([*arguments, "--float", str(older_models / "training")])
    assert sha256_of(older_models / FINDER_FILE) == sha256_of(FLOAT / FINDER_FILE)

    assert main([*arguments, "--float", str(older_models / "training" / "average")]) == 0
    shipped = parse_manifest(older_models / "dice_finder.json")
    assert shipped.sha256 == sha256_of(older_models / FINDER_FILE)
    assert shipped.sha256 == sha256_of(MODELS / FINDER_FILE)
    assert shipped.version == "1.8.0"
    assert shipped.raw["created"] == datetime.date.today().isoformat()
    assert shipped.raw["training_command"] == "stages 1-26; stage 28"
    # the pair's peak rule and figures travel with the file
    pair = parse_manifest(MODELS / "dice_finder.json")
    assert shipped.raw["options"] == pair.raw["options"]
    assert shipped.raw["validation"] == pair.raw["validation"]
    assert sha256_of(older_models / CLASSIFIER_FILE) == classifier_before
    DiceFinder.load(older_models)

    assert not list(older_models.glob(".*shipping*"))  # nothing staged is left behind
    # nothing new in the pair any more
    with pytest.raises(SystemExit, match="nothing that differs"):
        main(arguments)


def test_a_version_not_above_the_shipped_one_or_an_empty_history_is_refused(
    older_models: Path,
) -> None:
    before = (older_models / "dice_finder.json").read_bytes()
    float_dir = older_models / "training" / "average"
    base = ["--pair", str(MODELS), "--models", str(older_models), "--float", str(float_dir)]
    with pytest.raises(SystemExit, match="not above"):
        main([*base, "--history", "stage 28", "--version", "1.7.0"])
    with pytest.raises(SystemExit, match="history"):
        main([*base, "--history", "  "])
    with pytest.raises(SystemExit, match="numbers"):
        main([*base, "--history", "stage 28", "--version", "two"])
    assert (older_models / "dice_finder.json").read_bytes() == before
    assert sha256_of(older_models / FINDER_FILE) == sha256_of(FLOAT / FINDER_FILE)


def test_the_next_export_is_numbered_above_the_shipped_finder() -> None:
    shipped = parse_manifest(MODELS / "dice_finder.json").version
    assert version_key(FINDER_VERSION) > version_key(shipped)
    assert next_minor("1.7.3") == "1.8.0"
    with pytest.raises(ValueError, match="minor"):
        next_minor("1")


def test_a_pair_sharing_the_finder_ships_the_peak_rule_chosen_for_it(tmp_path: Path) -> None:
    # classifier 1.5.0 shipped beside an unchanged finder whose manifest kept the rule
    # chosen for the classifier before it: the rule and figures belong to the pair
    models, pair = tmp_path / "models", tmp_path / "pair"
    for folder in (models, pair):
        folder.mkdir()
        for name in (FINDER_FILE, "dice_finder.json", CLASSIFIER_FILE, "pip_classifier.json"):
            shutil.copyfile(MODELS / name, folder / name)
    shipped = parse_manifest(models / "dice_finder.json")
    options = {**shipped.raw["options"], "min_confidence": 0.25}
    validation = {**shipped.raw["validation"], "note": "judged with the pair's classifier"}
    save_manifest(shipped.with_fields(options=options, validation=validation), pair / FINDER_FILE)
    finder_before = sha256_of(models / FINDER_FILE)

    assert main(["--pair", str(pair), "--models", str(models), "--history", "rule only"]) == 0
    after = parse_manifest(models / "dice_finder.json")
    assert after.raw["options"] == options and after.raw["validation"] == validation
    major, minor, patch = version_key(shipped.version)
    assert after.version == f"{major}.{minor}.{patch + 1}"  # a new rule: a patch version
    assert after.raw["training_command"] == shipped.raw["training_command"]  # same weights
    assert sha256_of(models / FINDER_FILE) == finder_before == after.sha256
    assert DiceFinder.load(models).peak_rule.min_confidence == 0.25

    # figures alone change no version; the same pair again has nothing new
    figures = {**validation, "note": "measured again"}
    save_manifest(
        parse_manifest(pair / "dice_finder.json").with_fields(validation=figures),
        pair / FINDER_FILE,
    )
    assert main(["--pair", str(pair), "--models", str(models), "--history", "figures"]) == 0
    again = parse_manifest(models / "dice_finder.json")
    assert again.version == after.version and again.raw["validation"] == figures
    with pytest.raises(SystemExit, match="nothing that differs"):
        main(["--pair", str(pair), "--models", str(models), "--history", "nothing"])


def test_a_file_of_a_new_line_carries_its_own_recipe_only(older_models: Path) -> None:
    arguments = [
        "--pair", str(MODELS), "--models", str(older_models), "--history", "stages 38-41",
        "--float", str(older_models / "training" / "average"), "--new-line",
    ]  # fmt: skip
    assert main(arguments) == 0
    shipped = parse_manifest(older_models / "dice_finder.json")
    assert shipped.raw["training_command"] == "stages 38-41"  # not "stages 1-26; ..."
    assert shipped.version == "1.8.0"


def classifier_float_source() -> Path:
    """The committed float file the shipped int8 classifier was quantised from."""
    wanted = parse_manifest(MODELS / "pip_classifier.json").raw["quantised"]["from_sha256"]
    for path in sorted((MODELS / "training").glob(f"**/{CLASSIFIER_FILE}")):
        if sha256_of(path) == wanted:
            return path.parent
    raise AssertionError(f"no float classifier under models/training has sha256 {wanted}")


def test_a_pair_of_two_new_int8_files_ships_in_one_command(older_models: Path) -> None:
    # finder 1.7.3 and classifier 2.0.2 (both files quantised again) took two commands
    # when the tool took one --float and one --version
    source = classifier_float_source()
    shutil.copyfile(source / CLASSIFIER_FILE, older_models / CLASSIFIER_FILE)
    older = dataclasses.replace(
        parse_manifest(source / "pip_classifier.json").with_fields(training_command="wide"),
        version="2.0.0",
    )
    save_manifest(older, older_models / CLASSIFIER_FILE)
    shutil.copytree(source, older_models / "training" / "wide")
    finder_source = older_models / "training" / "average"
    before = {n: sha256_of(older_models / n) for n in (FINDER_FILE, CLASSIFIER_FILE)}
    base = ["--pair", str(MODELS), "--models", str(older_models), "--history", "7-bit weights"]
    both = ["--float", str(finder_source), "--float", str(older_models / "training" / "wide")]

    with pytest.raises(SystemExit, match="holds no pip_classifier"):  # one source named
        main([*base, "--float", str(finder_source)])
    with pytest.raises(SystemExit, match="changes two"):  # a bare version for two files
        main([*base, *both, "--version", "1.7.3"])
    with pytest.raises(SystemExit, match="name the file as finder or classifier"):
        main([*base, *both, "--version", "camera=1.7.3"])
    with pytest.raises(SystemExit, match="twice"):
        main([*base, *both, "--version", "finder=1.7.3", "--version", "finder=1.7.4"])
    with pytest.raises(SystemExit, match="not above"):
        main([*base, *both, "--version", "finder=1.7.3", "--version", "classifier=1.9.0"])
    assert {n: sha256_of(older_models / n) for n in before} == before  # nothing written

    versions = ["--version", "finder=1.7.3", "--version", "classifier=2.0.2"]
    assert main([*base, *both, *versions]) == 0
    finder = parse_manifest(older_models / "dice_finder.json")
    classifier = parse_manifest(older_models / "pip_classifier.json")
    assert (finder.version, classifier.version) == ("1.7.3", "2.0.2")
    assert finder.sha256 == sha256_of(MODELS / FINDER_FILE) == sha256_of(older_models / FINDER_FILE)
    assert classifier.sha256 == sha256_of(MODELS / CLASSIFIER_FILE)
    assert classifier.raw["training_command"] == "wide; 7-bit weights"
    DiceFinder.load(older_models)
    PipClassifier.load(older_models)


def test_a_version_named_for_a_file_the_pair_keeps_is_refused(older_models: Path) -> None:
    before = (older_models / "dice_finder.json").read_bytes()
    arguments = [
        "--pair", str(MODELS), "--models", str(older_models), "--history", "stage 28",
        "--float", str(older_models / "training" / "average"),
    ]  # fmt: skip
    with pytest.raises(SystemExit, match="pip_classifier.onnx, which the pair does not change"):
        main([*arguments, "--version", "classifier=2.1.0"])
    assert (older_models / "dice_finder.json").read_bytes() == before
    assert main([*arguments, "--version", "finder=1.9.0"]) == 0
    assert parse_manifest(older_models / "dice_finder.json").version == "1.9.0"


@pytest.mark.parametrize("field", ["validation", "confidence"])
def test_a_pair_not_judged_to_the_end_is_refused(
    older_models: Path, tmp_path: Path, field: str
) -> None:
    """A pair whose evaluate stage was stopped half way (no figures, no confidence map for
    its classifier: seen in a maintainer's trial) ships nothing."""
    pair = tmp_path / "pair"
    pair.mkdir()
    for name in (FINDER_FILE, "dice_finder.json", CLASSIFIER_FILE, "pip_classifier.json"):
        shutil.copyfile(MODELS / name, pair / name)
    unjudged = parse_manifest(pair / "pip_classifier.json")
    empty: dict[str, object] = {"validation": {}} if field == "validation" else {"confidence": None}
    save_manifest(unjudged.with_fields(**empty), pair / CLASSIFIER_FILE)
    before = sha256_of(older_models / FINDER_FILE)
    arguments = ["--pair", str(pair), "--models", str(older_models), "--history", "stage 28"]
    with pytest.raises(SystemExit, match="was not judged to the end"):
        main([*arguments, "--float", str(older_models / "training" / "average")])
    assert sha256_of(older_models / FINDER_FILE) == before
