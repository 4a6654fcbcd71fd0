"""match_roll: table-driven good and bad cases (Qwixx set, a Qwixx roll after a lock,
Sixis kept dice)."""

from __future__ import annotations

import pytest

from companion.live.match import Mismatch, ProblemKind, match_roll
from companion.rules.base import DiceSpec, Die, Roll
from companion.vision.types import UNREADABLE, DieBox, DieReading

QWIXX = DiceSpec(("white", "white", "red", "yellow", "green", "blue"))
QWIXX_RED_LOCKED = DiceSpec(("white", "white", "yellow", "green", "blue"))
SIXIS_TWO_KEPT = DiceSpec(("red",) * 4, kept=(Die("red", 6), Die("red", 6)))


def die(colour: str | None, value: int | None, x: float = 0.0) -> DieReading:
    flags = (UNREADABLE,) if value is None else ()
    return DieReading(DieBox(x, 50.0, 40.0, 40.0), value, 0.9, colour, 0.9, flags)


def row(*dice: tuple[str | None, int | None]) -> list[DieReading]:
    """Dice laid left to right, 60 px apart."""
    return [die(c, v, 60.0 * k) for k, (c, v) in enumerate(dice)]


QWIXX_TABLE = row(("white", 3), ("red", 5), ("white", 1), ("yellow", 2), ("green", 6), ("blue", 4))

GOOD = [
    pytest.param(
        QWIXX_TABLE,
        QWIXX,
        Roll(
            dice=(
                Die("white", 3),
                Die("white", 1),
                Die("red", 5),
                Die("yellow", 2),
                Die("green", 6),
                Die("blue", 4),
            )
        ),
        id="qwixx-whites-left-to-right",
    ),
    pytest.param(
        [d for d in QWIXX_TABLE if d.colour != "red"],
        QWIXX_RED_LOCKED,
        Roll(
            dice=(
                Die("white", 3),
                Die("white", 1),
                Die("yellow", 2),
                Die("green", 6),
                Die("blue", 4),
            )
        ),
        id="qwixx-after-red-locked",
    ),
    pytest.param(
        row(("red", 6), ("red", 2), ("red", 6), ("red", 6), ("red", 1), ("red", 3)),
        SIXIS_TWO_KEPT,
        Roll(dice=(Die("red", 2), Die("red", 6), Die("red", 1), Die("red", 3))),
        id="sixis-kept-sixes-taken-out-rolled-six-stays",
    ),
]


@pytest.mark.parametrize(("dice", "spec", "expected"), GOOD)
def test_good_rolls(dice: list[DieReading], spec: DiceSpec, expected: Roll) -> None:
    result = match_roll(dice, spec)
    assert result == expected
    assert isinstance(result, Roll)
    spec.check(result)  # the rules accept what match returns


BAD = [
    pytest.param(
        QWIXX_TABLE[:-1],
        QWIXX,
        [(ProblemKind.MISSING, "blue", 0)],
        "the blue die is missing",
        id="die-missing",
    ),
    pytest.param(
        [d for d in QWIXX_TABLE if d.colour != "white"],
        QWIXX,
        [(ProblemKind.MISSING, "white", 0)],
        "2 white dice are missing",
        id="two-whites-missing",
    ),
    pytest.param(
        [*QWIXX_TABLE, die("purple", 2, 400)],
        QWIXX,
        [(ProblemKind.EXTRA, "purple", 1)],
        "the purple die not part of this roll",
        id="extra-die",
    ),
    pytest.param(
        QWIXX_TABLE,
        QWIXX_RED_LOCKED,
        [(ProblemKind.EXTRA, "red", 1)],
        "take it off the table",
        id="locked-colour-still-on-table",
    ),
    pytest.param(
        [*QWIXX_TABLE[:5], die("green", 2, 400)],
        QWIXX,
        [(ProblemKind.COLOUR_TWICE, "green", 2), (ProblemKind.MISSING, "blue", 0)],
        "2 green dice on the table, this roll has 1",
        id="colour-twice-and-missing",
    ),
    pytest.param(
        [*QWIXX_TABLE[:5], die("blue", None, 400)],
        QWIXX,
        [(ProblemKind.UNREADABLE, "blue", 1)],
        "the blue die cannot be read",
        id="cocked-die",
    ),
    pytest.param(
        [*QWIXX_TABLE[:5], die(None, 4, 400)],
        QWIXX,
        [(ProblemKind.UNKNOWN_COLOUR, None, 1), (ProblemKind.MISSING, "blue", 0)],
        "a die of a colour that cannot be told",
        id="unknown-colour",
    ),
    pytest.param(
        [*QWIXX_TABLE[:5], die("mauve", 4, 400)],
        QWIXX,
        [(ProblemKind.UNKNOWN_COLOUR, None, 1), (ProblemKind.MISSING, "blue", 0)],
        "cannot be told",
        id="colour-outside-vocabulary",
    ),
    pytest.param(
        row(("red", 5), ("red", 2), ("red", 6), ("red", 6), ("red", 1), ("red", 3)),
        DiceSpec(("red",) * 3, kept=(Die("red", 6), Die("red", 6), Die("red", 4))),
        [(ProblemKind.KEPT_MOVED, "red", 4)],
        "the kept red 4 is not on the table",
        id="sixis-kept-die-turned",
    ),
    pytest.param(
        row(("red", 6), ("red", 2), ("red", 6), ("red", 1), ("red", 3)),
        SIXIS_TWO_KEPT,
        [(ProblemKind.MISSING, "red", 0)],
        "the red die is missing",
        id="sixis-kept-counted-as-on-table",
    ),
    pytest.param(
        [],
        QWIXX,
        [(ProblemKind.MISSING, c, 0) for c in ("white", "red", "yellow", "green", "blue")],
        "2 white dice are missing",
        id="empty-table",
    ),
]


@pytest.mark.parametrize(("dice", "spec", "problems", "says"), BAD)
def test_mismatches(
    dice: list[DieReading],
    spec: DiceSpec,
    problems: list[tuple[ProblemKind, str | None, int]],
    says: str,
) -> None:
    result = match_roll(dice, spec)
    assert isinstance(result, Mismatch)
    assert [(p.kind, p.colour, len(p.boxes)) for p in result.problems] == problems
    assert says in result.message
    assert result.to_json()["problems"]


def test_problem_boxes_point_at_the_dice_involved() -> None:
    cocked = die("yellow", None, 321.0)
    result = match_roll([*QWIXX_TABLE[:3], cocked, *QWIXX_TABLE[4:]], QWIXX)
    assert isinstance(result, Mismatch)
    [problem] = result.problems
    assert problem.boxes == (cocked.where,)
    assert problem.to_json()["boxes"] == [[301, 30, 341, 70]]
