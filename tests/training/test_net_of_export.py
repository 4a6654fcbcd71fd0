"""train.py's nets default to the net of the file continued: the shipped models are a lite0
finder and a wide classifier, so the documented "continue from the shipped models" commands
work without naming the nets (a maintainer's trial: they stopped with a shape error after
minutes of loading). Needs torch."""

from __future__ import annotations

from pathlib import Path

from models.train import net_of_export, parse_args

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_the_shipped_files_name_their_nets() -> None:
    args = parse_args(
        [
            "--finder-from", str(MODELS / "dice_finder.onnx"),
            "--classifier-from", str(MODELS / "pip_classifier.onnx"),
        ]
    )  # fmt: skip
    assert (args.finder_net, args.classifier_net) == ("lite0", "wide")


def test_a_net_named_wins_and_none_given_is_the_small_one(tmp_path: Path) -> None:
    named = parse_args(["--classifier-from", str(MODELS / "pip_classifier.onnx"),
                        "--classifier-net", "small"])  # fmt: skip
    assert named.classifier_net == "small"
    assert (parse_args([]).finder_net, parse_args([]).classifier_net) == ("small", "small")
    assert net_of_export(tmp_path / "no-manifest.onnx", "finder_net") == "small"
    assert parse_args(["--classifier-from", "scratch"]).classifier_net == "small"
