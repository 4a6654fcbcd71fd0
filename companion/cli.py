"""The `companion` command: serve, replay, read, calibrate. Each subcommand imports its part
lazily, so `companion replay` needs neither the web stack nor the vision stack."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from companion.rules.session import Session
    from companion.vision.colour import DiceSet

WHAT_IT_DOES = (
    "Table Companion: a webcam reads the dice on the table, and tablets on the local network "
    "keep every player's score sheet."
)
# a user asks how long a command takes before running it on a busy evening; the figures
# are this project's 2-core machine (docs/BENCHMARKS.md)
HOW_LONG = """how long each takes (2-core machine, no GPU):
  serve      starts in a few seconds and runs until Ctrl+C; tablets join at the address
             it prints
  calibrate  a few seconds for its 10 frames (--frames, under a second each), then as
             long as the teaching rounds you throw (--teach)
  read       a second or two to load, then under a second an image
  replay     under a second for a whole game"""


def _cmd_replay(args: argparse.Namespace) -> int:
    from companion.rules.session import RecordError, replay_record
    from companion.table.records import host_ended, server_ended

    path = Path(args.record)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(f"companion replay: {path}: no such file", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"companion replay: {path}: not a JSON game record ({exc})", file=sys.stderr)
        return 2
    try:
        session = replay_record(record)
        ended_by_host = host_ended(record)
        on_server = server_ended(record)
    except RecordError as exc:
        print(f"companion replay: {path}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(replay_result(session, ended_by_host, on_server), indent=2))
    return 0


def replay_result(
    session: Session, ended_by_host: bool, on_server: bool = False
) -> dict[str, object]:
    """What `companion replay` prints, as the web shows the game: names where the rules
    say "player 2", and the winners of `Game.winners` (for a game the host ended, who was
    ahead by the game's own ranking, as the end card and the history say; `on_server`: that
    end was made on the server's own machine, and the end message says so)."""
    from companion.table.words import HOST_ENDED, SERVER_ENDED, for_display

    outcome = session.outcome()
    ended_by_host = ended_by_host and outcome is None  # the rules' end stands first
    if outcome is not None:
        message: str | None = for_display(outcome.message, session.players)
    else:
        message = (SERVER_ENDED if on_server else HOST_ENDED) if ended_by_host else None
    winners = session.game.winners(session.state, ended_early=ended_by_host)
    return {
        "game": session.game.name,
        "actions": len(session.actions),
        "finished": outcome is not None or ended_by_host,
        "ended_by_host": ended_by_host,
        "end_reason": outcome.reason if outcome else ("ended_by_host" if ended_by_host else None),
        "end_message": message,
        "winners": [session.players[seat] for seat in winners],
        "players": [
            {
                "seat": s.player,
                "name": session.players[s.player],
                "total": s.total,
                "breakdown": {label: points for label, points in s.breakdown},
            }
            for s in session.scores()
        ],
    }


def _cmd_read(args: argparse.Namespace) -> int:
    from companion.vision.cli import run_read

    args.dice_set = game_dice_set(args.dice_set)
    return run_read(args)


def _cmd_serve(args: argparse.Namespace) -> int:
    from companion.web.serve import run_serve

    return run_serve(args)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from companion.vision.calibrate_cli import run_calibrate

    args.dice_set = game_dice_set(args.dice_set)
    return run_calibrate(args)


def game_dice_set(spec: str | None) -> str | DiceSet | None:
    """`--dice-set` naming a registered game whose rolls throw the same dice: those dice
    (`registry.standard_dice_sets`, the sets the setup page offers), at their shipped
    calibration where there is one; anything else (a calibration file) as given. Vision
    knows no games, so the wiring hands it the set."""
    from companion.rules.registry import standard_dice_sets
    from companion.vision.colour import builtin_dice_set

    colours = standard_dice_sets().get(spec or "")
    return spec if spec is None or colours is None else builtin_dice_set(spec, colours)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description=WHAT_IT_DOES,
        epilog=HOW_LONG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    replay = sub.add_parser("replay", help="replay a game record and print the final scores")
    replay.add_argument("record", help="path of a game record (JSON)")
    replay.set_defaults(func=_cmd_replay)

    read = sub.add_parser("read", help="find and read the dice in images")
    read.add_argument("images", nargs="+", help="image files, or folders of them")
    read.add_argument("--json", action="store_true", help="one line of JSON per image")
    read.add_argument(
        "--dice-set",
        default=None,
        help="assign dice to a set: a game's name (qwixx, sixto, sixes ...) or a calibration file",
    )
    read.add_argument(
        "--dice",
        type=int,
        default=None,
        metavar="N",
        help="each image is a roll of N dice (default: the dice set's size, else as found)",
    )
    read.add_argument(
        "--annotate",
        default=None,
        metavar="DIR",
        help="write an annotated picture per image into DIR",
    )
    read.set_defaults(func=_cmd_read)

    _add_serve_parser(sub)

    from companion.vision.calibrate_cli import add_arguments

    calibrate = sub.add_parser(
        "calibrate", help="measure the dice set, play area and die size under this light"
    )
    add_arguments(calibrate)
    calibrate.set_defaults(func=_cmd_calibrate)
    return parser


def subcommand_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand (`serve`, `read`, ...) as `build_parser` made it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]  # type: ignore[no-any-return]
    raise LookupError(name)


def _add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser("serve", help="start the companion's web server")
    reach = serve.add_mutually_exclusive_group()
    reach.add_argument(
        "--local",
        action="store_true",
        help="listen on this machine only (127.0.0.1): no tablet can join",
    )
    reach.add_argument(
        "--host",
        default=None,
        metavar="ADDRESS",
        help="listen on this one address only (default: every interface, so tablets on the "
        "network can join; the join code protects the tables)",
    )
    reach.add_argument(
        "--lan",
        action="store_true",
        help="listen on every interface: the default now, accepted so old commands work",
    )
    serve.add_argument(
        "--port", type=int, default=8000, help="the port tablets open (default: 8000)"
    )
    serve.add_argument(
        "--host-name",
        action="append",
        default=[],
        metavar="NAME",
        help="another name tablets open the companion by (e.g. a router's DNS name); "
        "requests naming any other host are refused (DNS rebinding). Repeatable",
    )
    serve.add_argument(
        "--data-dir", default=None, help="where games are stored (default: ./companion-data)"
    )
    serve.add_argument(
        "--sqlite-synchronous",
        choices=("FULL", "NORMAL"),
        default="FULL",
        help="FULL (default): every acknowledged action is on the disk before it is "
        "acknowledged, so it survives a power cut or a failing disk; NORMAL: it survives "
        "the server being killed (SQLite WAL), a few ms faster per action",
    )
    serve.add_argument(
        "--fine-tune",
        action="store_true",
        help="fine-tune each camera setup's pip classifier on its confirmed rolls in the "
        "background, used once its own check shows it reads better (needs torch)",
    )
    _add_camera_arguments(serve)
    serve.set_defaults(func=_cmd_serve)


def _add_camera_arguments(serve: argparse.ArgumentParser) -> None:
    """`serve`'s camera: one source (none: a webcam when one answers, else the demo), how
    a folder is played, and the table calibration."""
    source = serve.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, default=None, metavar="N", help="webcam index")
    source.add_argument("--video", default=None, metavar="FILE", help="a video file")
    source.add_argument("--images", default=None, metavar="DIR", help="a folder of images")
    source.add_argument("--no-camera", action="store_true", help="manual dice entry only")
    serve.add_argument(
        "--hold",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --images: show each image this long, a still photo of one throw at rest, "
        "so a roll every SECONDS s (without it the folder is played as a clip, one image per "
        "frame at 10 fps)",
    )
    serve.add_argument(
        "--calibration",
        default=None,
        metavar="FILE",
        help="a table calibration (calibration/*.json) for the camera",
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the subcommand, with its own usage line (not `companion`'s)
        subcommand_parser(parser, args.command).error(
            f"unrecognized arguments: {' '.join(unknown)}"
        )
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader of our output went away (`companion replay ... | head`): stop quietly,
        # and keep Python's own flush at exit from failing on the closed pipe again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
