"""The JSON codec of the engine's frozen dataclasses: round trips and named errors."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import DiceSpec, Die, Outcome, Reason, Rejection, Roll, Score, Turn
from companion.rules.codec import MOVE_LIMITS, decode, encode
from companion.rules.registry import GAME_NAMES, find_game
from tests.rules.move_strategies import moves

dice = st.builds(Die, st.sampled_from(["white", "red", "blue"]), st.integers(1, 6))


@given(st.lists(dice, max_size=6))
def test_roll_round_trips(values: list[Die]) -> None:
    roll = Roll(dice=tuple(values))
    assert decode(Roll, encode(roll)) == roll


@pytest.mark.parametrize(
    "value",
    [
        Turn("white_sum", 1, (0, 2), False, None),
        Turn("roll", 0, (), True, DiceSpec(("white", "white", "red"), (Die("red", 3),))),
        Score(2, 70, (("red", 10), ("penalties", -10))),
        Outcome("second_lock", "two colours are locked", (0, 3)),
    ],
)
def test_engine_values_round_trip(value: object) -> None:
    assert decode(type(value), encode(value)) == value


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"colour": "red"}, "Die.value: missing"),
        ({"colour": "red", "value": "3"}, "Die.value: expected an integer"),
        ({"colour": "red", "value": True}, "Die.value: expected an integer"),
        ({"colour": 3, "value": 3}, "Die.colour: expected a string"),
        ({"colour": "red", "value": 3, "spin": 1}, "unknown field(s) spin"),
        ([1, 2], "expected an object"),
    ],
)
def test_decode_names_the_bad_field(data: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        decode(Die, data)


def test_nested_error_names_the_path() -> None:
    with pytest.raises(ValueError, match=r"Roll.dice\[1\].value"):
        decode(Roll, {"player": -1, "dice": [{"colour": "red", "value": 1}, {"colour": "red"}]})


def test_dice_spec_refuses_wrong_colours_and_values() -> None:
    spec = DiceSpec(("white", "white", "red"))
    spec.check(Roll(dice=(Die("white", 1), Die("red", 2), Die("white", 6))))
    with pytest.raises(Rejection) as missing:
        spec.check(Roll(dice=(Die("white", 1), Die("red", 2))))
    assert missing.value.reason is Reason.WRONG_DICE
    assert "3 dice (2 white, red)" in missing.value.message
    with pytest.raises(Rejection) as seven:
        spec.check(Roll(dice=(Die("white", 1), Die("red", 7), Die("white", 6))))
    assert seven.value.rule == "die_value"


@cache
def move_validators(name: str) -> tuple[st.SearchStrategy[Any], list[Any]]:
    """The game's moves strategy and one validator per move kind (built once: both cost)."""
    game = find_game(name)
    schemas = {kind: game.move_schema(kind) for kind in game.move_kinds()}
    return moves(schemas, huge=False), [jsonschema_rs.validator_for(s) for s in schemas.values()]


@pytest.mark.parametrize("name", GAME_NAMES)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_every_move_is_checked_as_its_schema_says(name: str, data: st.DataObject) -> None:
    """Game.move_schema (generated from the move dataclasses) and move_from_json agree on
    every move kind: what the schema accepts is decoded, anything else is refused with a
    MALFORMED Rejection naming the problem (never another exception: a `kind` that is a
    list gave TypeError: unhashable type)."""
    game = find_game(name)
    strategy, validators = move_validators(name)
    value = data.draw(strategy)
    accepted = any(validator.is_valid(value) for validator in validators)
    try:
        move = game.move_from_json(value)
    except Rejection as refused:
        assert refused.reason is Reason.MALFORMED and refused.message
        assert not accepted, (value, refused.message)
    else:
        assert accepted, value
        assert game.move_from_json(game.move_to_json(move)) == move


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"kind": ["pass"], "player": 0}, "move.kind is a list"),
        ({"kind": {"pass": 1}, "player": 0}, "move.kind is an object"),
        ({"kind": 3, "player": 0}, "move.kind is a number"),
        ({"player": 0}, "move.kind is missing"),
        ({"kind": "fly", "player": 0}, "unknown move kind 'fly'"),
        ({"kind": "pass", "player": 10**400}, "move.player: at most 2147483647"),
        ({"kind": "pass", "player": 1.5}, "move.player: expected an integer"),
        ({"kind": "cross", "player": 0, "colour": "r" * 65, "number": 5}, "at most 64 char"),
        ({"kind": "roll", "player": -1, "dice": [{"colour": "red", "value": 1}] * 65}, "64 items"),
        (["pass"], "a move is a JSON object"),
    ],
)
def test_a_malformed_move_is_refused_naming_the_field(value: object, words: str) -> None:
    with pytest.raises(Rejection) as refused:
        find_game("qwixx").move_from_json(value)
    assert refused.value.reason is Reason.MALFORMED and words in refused.value.message


def test_decoding_from_outside_bounds_every_scalar() -> None:
    for bad in (float("nan"), float("inf"), 10**400):
        with pytest.raises(ValueError, match="number"):
            decode(float, bad, "x", MOVE_LIMITS)
    assert decode(int, 10**400) == 10**400  # the engine's own data is not bounded
