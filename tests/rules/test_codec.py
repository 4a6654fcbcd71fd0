"""The JSON codec of the engine's frozen dataclasses: round trips and named errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.rules.base import DiceSpec, Die, Outcome, Reason, Rejection, Roll, Score, Turn
from companion.rules.codec import decode, encode

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
