"""`companion replay` as a user runs it: a real subprocess on real record files."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tiny_game import tiny_game_registered
from tests.web.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]


def companion(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_replay_prints_final_scores() -> None:
    done = companion("replay", "docs/records/qwixx.json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["finished"] is True and result["end_reason"]
    for player in result["players"]:
        assert player["total"] == sum(player["breakdown"].values())
    best = max(p["total"] for p in result["players"])
    assert result["winners"] == [p["name"] for p in result["players"] if p["total"] == best]


def test_replay_names_the_first_refused_action(tmp_path: Path) -> None:
    record = json.loads((ROOT / "docs/records/qwixx.json").read_text())
    # a second roll straight after the first: the engine expects crosses, not dice
    record["actions"].insert(1, record["actions"][0])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    done = companion("replay", str(bad))
    assert done.returncode == 2
    assert "action 1" in done.stderr and "no_roll_expected" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("content", ["", "{not json", "[]", '{"schema": 1, "game": "qwixx"}'])
def test_replay_of_a_broken_file_is_a_clear_error(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text(content)
    done = companion("replay", str(bad))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and str(bad) in done.stderr


def test_replay_of_a_missing_file() -> None:
    done = companion("replay", "no/such/record.json")
    assert done.returncode == 2 and "no such file" in done.stderr


def subcommand_parsers() -> dict[str, Any]:
    """`companion`'s subcommands by name (serve, read, ...), as argparse built them."""
    from companion.cli import build_parser

    return next(
        action.choices
        for action in build_parser()._actions
        if isinstance(action.choices, dict) and "serve" in action.choices
    )


def test_the_readme_names_every_option_of_serve_and_read() -> None:
    """README's "Command line" is where a new user looks: every option `companion serve`
    and `companion read` accept is in it (it lacked `--sqlite-synchronous`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    subcommands = subcommand_parsers()
    for name in ("serve", "read"):
        options = [
            option
            for action in subcommands[name]._actions
            for option in action.option_strings
            if option.startswith("--") and option != "--help"
        ]
        assert options, name
        missing = [option for option in options if option not in section]
        assert missing == [], (name, missing)


def test_every_option_of_serve_and_read_says_what_it_does() -> None:
    """`companion serve --help` is the other place a new user looks: no option without a
    line of help (`--port` had none)."""
    subcommands = subcommand_parsers()
    for name in ("serve", "read"):
        silent = [
            action.option_strings[0]
            for action in subcommands[name]._actions
            if action.option_strings and not action.help
        ]
        assert silent == [], (name, silent)


def test_output_into_a_closed_pipe_stops_quietly() -> None:
    """`companion replay FILE | head` when head has gone: no traceback (every
    subcommand, through companion.cli.main)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the first write fails with EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-m", "companion.cli", "replay", "docs/records/qwixx.json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1


def test_an_unknown_option_is_refused_with_its_subcommands_usage() -> None:
    """A maintainer's trial: `companion read --bogus x` printed `companion`'s own usage
    (replay, read, serve, calibrate), not the options `read` takes."""
    done = companion("read", "--bogus", "x")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: companion read ")
    assert "unrecognized arguments: --bogus" in done.stderr


def test_calibrate_takes_several_images_after_one_flag() -> None:
    """`--image A B` (as the docs wrote it) was refused; the repeated flag still works."""
    from companion.cli import build_parser

    parser = build_parser()
    together = parser.parse_args(["calibrate", "cafe", "--image", "a.jpg", "b.jpg"])
    repeated = parser.parse_args(["calibrate", "cafe", "--image", "a.jpg", "--image", "b.jpg"])
    assert together.image == repeated.image == ["a.jpg", "b.jpg"]
    assert together.name == "cafe"


def test_a_serve_option_without_its_partner_is_said_in_one_sentence() -> None:
    """`--hold` without `--images` printed pydantic's whole report (the input dict and a
    link for programmers) around the one sentence that helps."""
    done = companion("serve", "--local", "--hold", "2")
    assert done.returncode == 2
    assert "--hold shows each image of a folder: give --images DIR with it" in done.stderr
    assert "pydantic" not in done.stderr and "input_value" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("option", "path", "said"),
    [
        ("--video", "no-such-clip.mp4", "--video no-such-clip.mp4: no such file"),
        ("--images", "no-such-folder", "--images no-such-folder: no such folder"),
    ],
)
def test_serve_with_a_mistyped_source_path_says_so_and_stops(
    tmp_path: Path, option: str, path: str, said: str
) -> None:
    """A typo in --video or --images started the server anyway, its camera retrying the
    missing file forever ('reopening the source in 8.0 s') behind the terminal's back."""
    done = companion("serve", "--local", option, path, "--data-dir", str(tmp_path))
    assert done.returncode == 2
    assert "open http" not in done.stdout
    assert done.stderr.strip() == f"companion serve: {said}"


def test_serve_on_a_taken_port_says_so_before_naming_an_address(tmp_path: Path) -> None:
    """A second `scripts/start` (the first still running in another window) printed 'open
    http://...:8000/', the address of the other server, then uvicorn's '[Errno 98] error
    while attempting to bind'."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        done = companion(
            "serve", "--local", "--port", str(port), "--no-camera", "--data-dir", str(tmp_path)
        )
    assert done.returncode == 3
    assert "open http" not in done.stdout
    assert done.stderr.strip() == (
        f"companion serve: cannot start: port {port} is taken: another program listens on it "
        f"(a companion started before?). Open http://127.0.0.1:{port}/ to see what it is, "
        f"stop it, or start on another port: --port {port + 1}"
    )


@pytest.mark.parametrize("inside_a_file", [False, True])
def test_serve_on_a_data_folder_it_cannot_write_says_so_and_stops(
    tmp_path: Path, inside_a_file: bool
) -> None:
    """A café owner's trial: --data-dir on a read-only disk (or a path that is a file)
    started with a page of traceback (sqlite3 'unable to open database file', or the learning
    store failing in the app's start-up) instead of saying which folder and what to do."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder", encoding="utf-8")
    data_dir = a_file / "data" if inside_a_file else a_file
    # a free port: the default 8000 may be taken by a companion a person runs here
    port = free_port()
    done = companion(
        "serve", "--local", "--port", str(port), "--no-camera", "--data-dir", str(data_dir)
    )
    assert done.returncode == 3
    assert "open http" not in done.stdout
    assert "Traceback" not in done.stderr
    said = done.stderr.strip()
    assert said.startswith(
        f"companion serve: cannot start: the data folder {data_dir} cannot be written ("
    ), said
    assert said.endswith(
        "): no game could be kept. Start with --data-dir FOLDER naming a folder this user "
        "may write, or make this one writable"
    ), said


def test_the_help_says_what_it_is_and_how_long_each_command_takes() -> None:
    """A maintainer's trial: `companion --help` spoke of lazy imports and said nothing of how
    long serve, calibrate, read or replay take."""
    from companion.cli import build_parser

    text = build_parser().format_help()
    assert "webcam" in text and "tablets" in text
    assert "lazily" not in text
    timings = text.split("how long each takes")[1].splitlines()
    for command in ("serve", "calibrate", "read", "replay"):
        line = next(row for row in timings if row.strip().startswith(command + " "))
        assert re.search(r"second|minute|Ctrl\+C", line), line


def test_the_package_runs_as_a_module() -> None:
    # `python -m companion serve ...` is how a checkout without the installed script starts
    done = subprocess.run(
        [sys.executable, "-m", "companion", "replay", "docs/records/qwixx.json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == companion("replay", "docs/records/qwixx.json").stdout


def test_replay_says_what_the_web_says(tmp_path: Path) -> None:
    """The end message names the players ("Mia wins", as the end card reads), and a record
    the host ended is finished, won by who was ahead: it printed "player 2 wins" and, for
    a host's end, finished false with no winners while the web showed them."""
    done = companion("replay", "docs/records/qwixx.json")
    result = json.loads(done.stdout)
    assert not re.search(r"\bplayer \d", result["end_message"], re.IGNORECASE)
    assert f"{result['winners'][0]} wins" in result["end_message"]
    record = json.loads((ROOT / "docs/records/qwixx.json").read_text())
    record["actions"] = record["actions"][:40]  # before the rules' end
    record["ended_by_host"] = True
    ended = tmp_path / "ended.json"
    ended.write_text(json.dumps(record))
    done = companion("replay", str(ended))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["finished"] is True and result["ended_by_host"] is True
    assert result["end_message"] == "The host ended this game"
    best = max(p["total"] for p in result["players"])
    assert result["winners"] == [p["name"] for p in result["players"] if p["total"] == best]
    assert result["winners"]


def test_replay_of_a_game_ended_on_the_servers_machine_says_so(tmp_path: Path) -> None:
    """A record exported from a game ended on the server's own start page says
    `ended_on_server`: the replay's end message is the web's ("Ended on the server's
    machine, by its owner"), not "The host ended this game"."""
    record = json.loads((ROOT / "docs/records/qwixx.json").read_text())
    record["actions"] = record["actions"][:40]  # before the rules' end
    record |= {"ended_by_host": True, "ended_on_server": True}
    ended = tmp_path / "ended.json"
    ended.write_text(json.dumps(record))
    done = companion("replay", str(ended))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["end_reason"] == "ended_by_host"
    assert result["end_message"] == "Ended on the server's machine, by its owner"
    ended.write_text(json.dumps(record | {"ended_on_server": 1}))
    refused = companion("replay", str(ended))
    assert refused.returncode == 2 and "ended_on_server" in refused.stderr


def test_read_and_calibrate_take_any_registered_games_dice_as_the_setup_page_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--dice-set` took only the sets shipped as calibration/<name>-default.json (qwixx,
    sixto, sixes) while the setup page offers every registered game whose rolls throw the
    same dice (registry.standard_dice_sets): a new game's dice set was "unknown" to
    `companion read` and `companion calibrate` until someone added a file for it."""
    import cv2
    import numpy as np

    from companion.cli import main
    from companion.rules.registry import standard_dice_sets
    from companion.synth import render_scene
    from companion.vision.calibration import load_calibration

    picture = tmp_path / "dice.png"
    image, _ = render_scene(
        np.random.default_rng(21), 640, 480, dice_set="qwixx", values=[3, 5, 1, 6, 2, 4],
        size=60, clutter=0.0, camera_tilt=0.0, touching=0.0,
    )  # fmt: skip
    cv2.imwrite(str(picture), image)
    with tiny_game_registered(monkeypatch) as tiny:
        assert main(["read", str(picture), "--json", "--dice-set", tiny]) == 0
        assert json.loads(capsys.readouterr().out)["dice_set"] == tiny
        out = tmp_path / "cafe.json"
        calibrate = ["calibrate", "cafe", "--dice-set", tiny, "--image", str(picture)]
        assert main([*calibrate, "--frames", "1", "--out", str(out)]) == 0
    assert "measured 1 frames of the tiny_trial set" in capsys.readouterr().out
    assert load_calibration(out).dice_set.colours == standard_dice_sets()["qwixx"]
