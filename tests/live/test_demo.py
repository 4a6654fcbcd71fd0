"""The demo camera (companion.live.demo.DemoThrows, issue 17 item 4): it throws only the
dice the server says the attached game expects, once per roll, rendered on the fly; the
shipped ONNX models read what it throws as that game's roll."""

from __future__ import annotations

import itertools
from typing import Any

import cv2
import pytest

from companion.live.demo import (
    DEMO_FPS,
    DemoDirector,
    DemoThrow,
    DemoThrows,
    camera_is_available,
    can_draw,
    plan_source,
    render_throws,
)
from companion.live.match import match_roll
from companion.live.settle import RollEvent, SettleConfig
from companion.live.worker import CameraWorker
from companion.rules.base import DiceSpec, Die, Roll
from tests.live.test_worker import wait_for

SIXTO = ("red", "orange", "yellow", "green", "blue", "purple")


def test_the_director_hands_out_each_throw_once_and_again_after_a_while() -> None:
    director = DemoDirector(again_s=10.0)
    assert director.take(now=0.0) is None  # nothing expected yet
    assert "waits" in director.line()
    throw = DemoThrow("t1:4", SIXTO)
    director.expect(throw)
    assert "throwing 6 dice" in director.line()
    assert director.take(now=1.0) == throw
    assert director.take(now=2.0) is None  # thrown: not again for the same state
    assert director.take(now=12.0) == throw  # no change for a while: throw again
    director.expect(DemoThrow("t1:5", SIXTO))
    assert director.take(now=12.5) is not None  # a new state: a new throw at once
    director.expect(None, "waiting until the game asks for dice")
    assert director.take(now=30.0) is None
    assert director.line() == "demo camera: waiting until the game asks for dice"


def test_a_throw_that_closes_a_race_waits_the_time_a_table_takes() -> None:
    """Issue 26 item 2: the roll that closes a race (Sixes' pound) is thrown `wait_s`
    after the race opened, not at once, and the line says how long the players have."""
    director = DemoDirector()
    throw = DemoThrow("t1:7:0", ("white", "white"), wait_s=8.0, wait_why="time for the race")
    director.expect(throw, now=100.0)
    assert director.take(now=101.0) is None
    assert "in 5 s: time for the race" in director.line(now=103.0)
    director.expect(throw, now=104.0)  # the server says it again: the clock keeps running
    assert director.take(now=107.9) is None
    assert director.take(now=108.0) == throw
    assert "time for the race" not in director.line(now=108.5)


def test_the_renderer_draws_every_colour_the_games_know() -> None:
    from companion.colours import DIE_COLOURS

    assert can_draw(DIE_COLOURS) and not can_draw(("white", "chartreuse"))


def test_kept_dice_lie_still_beside_the_thrown_ones() -> None:
    frames = list(render_throws(seed=7, throws=1, colours=("red",) * 4))
    assert all(len(f.dice) <= 4 for f in frames)
    from companion.live import demo

    rng = demo.np.random.default_rng(3)
    table = demo._demo_table(rng, 3, 640, 480, 44.0, "cardboard", 1.5)
    thrown = list(demo._one_throw(rng, table, ("red",) * 4, 0, (("red", 5), ("red", 5))))
    rest = next(f for f in thrown if f.phase == "rest")
    assert len(rest.dice) == 6
    assert [(d.colour, d.value) for d in rest.dice[4:]] == [("red", 5), ("red", 5)]
    tumbling = next(f for f in thrown if f.phase == "tumble")
    assert [(d.colour, d.value) for d in tumbling.dice[:2]] == [("red", 5), ("red", 5)]


def test_the_demo_camera_shows_an_empty_table_until_a_throw_is_expected() -> None:
    director = DemoDirector()
    frames = iter(DemoThrows(director))
    first = [next(frames) for _ in range(5)]
    assert all(f.image.shape == (480, 640, 3) for f in first)
    assert [f.index for f in first] == [0, 1, 2, 3, 4]
    plan = plan_source(director=director)
    # no webcam here: the demo camera, a replay (its rolls apply at once)
    assert plan.name == "demo camera" and not plan.live and plan.pace_fps == DEMO_FPS


@pytest.mark.parametrize(
    ("game", "colours", "kept"),
    [
        ("sixto", SIXTO, ()),
        ("qwixx", ("white", "white", "red", "yellow", "green", "blue"), ()),
        ("sixis", ("red",) * 4, (("red", 6), ("red", 6))),  # two saved sixes on the table
    ],
)
def test_the_real_models_read_each_demo_throw_as_the_roll_the_game_expects(
    game: str, colours: tuple[str, ...], kept: tuple[tuple[str, int], ...]
) -> None:
    """The shipped ONNX models in a real CameraWorker on the demo camera: each throw the
    director asks for settles into one reading that is the expected roll (the dice the
    game uses, nothing else), and nothing is thrown while nothing is expected."""
    from companion.rules.registry import find_game
    from companion.table.camera_feed import dice_set_for
    from companion.vision.pipeline import DiceReader

    reader: Any = DiceReader.load()
    rules = find_game(game)
    reader.dice_set = dice_set_for(rules, rules.options_for(2), None)
    director = DemoDirector()
    events: list[RollEvent] = []
    worker = CameraWorker(
        lambda: DemoThrows(director), reader, events.append, settle=SettleConfig(stable_frames=3)
    )
    worker.start()
    try:
        wait_for(lambda: worker.status().frames_read >= 10, timeout=60)
        assert events == []  # an empty table: no throw
        spec = DiceSpec(colours, tuple(Die(c, v) for c, v in kept))
        for number in itertools.count():
            director.expect(DemoThrow(f"t:{number}", colours, kept))

            def thrown(n: int = number) -> bool:
                return len(events) > n

            wait_for(thrown, timeout=60)
            roll = match_roll(events[number].dice, spec)
            assert isinstance(roll, Roll), roll
            assert sorted(d.colour for d in roll.dice) == sorted(colours)
            if number == 1:
                break
        director.expect(None, "players act")
        read_before = worker.status().frames_read
        wait_for(lambda: worker.status().frames_read > read_before + 40, timeout=60)
        assert len(events) == 2  # the second throw, then nothing more
    finally:
        assert worker.stop()


def test_looking_for_a_camera_that_is_not_there_is_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    """`scripts/start` without a webcam looks for one first: OpenCV's own warnings about the
    missing device stayed on the terminal of every start; the log says what was chosen."""
    level = cv2.utils.logging.getLogLevel()
    assert camera_is_available(63) is False  # no machine here has 64 cameras
    assert "WARN" not in capfd.readouterr().err
    assert cv2.utils.logging.getLogLevel() == level  # OpenCV's level is put back


def test_the_demo_gives_a_race_and_a_choice_their_time_and_a_plain_roll_none() -> None:
    """Issue 26 items 2 and 3: before a roll that closes a race or a choice (players listed
    while the roll is due) the demo waits; a plain roll is thrown at once."""
    from types import SimpleNamespace

    from companion.rules.base import Turn
    from companion.table.camera_hub import CHOICE_PAUSE_S, RACE_PAUSE_S, demo_throw

    def thrown(turn: Turn) -> DemoThrow:
        snapshot = SimpleNamespace(finished=False, state_id=3, turn=turn)
        table = SimpleNamespace(table_id="t", snapshot=snapshot, game=None)
        throw, why = demo_throw(table)  # type: ignore[arg-type]
        assert throw is not None, why
        return throw

    dice = DiceSpec(("white", "white"))
    assert thrown(Turn("roll", 0, chance=True, dice=dice)).wait_s == 0.0
    race = thrown(Turn("pound", 0, players=(1, 2), chance=True, dice=dice, race=True))
    assert race.wait_s == RACE_PAUSE_S and "race" in race.wait_why
    choice = thrown(Turn("roll", 0, players=(0,), chance=True, dice=dice))
    assert choice.wait_s == CHOICE_PAUSE_S and "choose" in choice.wait_why
