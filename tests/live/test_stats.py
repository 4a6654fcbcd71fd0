"""Dice statistics against known values: chi-square table values, closed forms of the
chi-square tail, hand-computed statistics and the verdict sentences."""

from __future__ import annotations

import math

import pytest

from companion.live.stats import (
    MIN_ROLLS,
    chi_square,
    chi_square_p_value,
    count_faces,
    dice_report,
    fairness,
    regularised_gamma_q,
)
from companion.rules.base import Die, Roll


def tail_df5(x: float) -> float:
    """Closed form of the chi-square tail with 5 degrees of freedom (odd k):
    2(1 - Φ(√x)) + 2φ(√x)(√x + x^{3/2}/3)."""
    r = math.sqrt(x)
    return math.erfc(r / math.sqrt(2)) + 2 * math.exp(-x / 2) / math.sqrt(2 * math.pi) * (
        r + r**3 / 3
    )


@pytest.mark.parametrize(
    ("statistic", "p"),
    [
        (11.0705, 0.05),
        (15.0863, 0.01),
        (20.5150, 0.001),
        (9.2364, 0.10),
        (1.1455, 0.95),
        (4.3515, 0.50),
    ],
)
def test_p_value_matches_table_of_critical_values(statistic: float, p: float) -> None:
    assert chi_square_p_value(statistic, 5) == pytest.approx(p, rel=2e-4)


@pytest.mark.parametrize("x", [0.01, 0.5, 2.0, 4.0, 6.9, 7.1, 12.0, 30.0, 60.0, 120.0])
def test_p_value_matches_closed_forms(x: float) -> None:
    # both branches (series below a+1 = 3.5 for x/2, continued fraction above)
    assert chi_square_p_value(x, 5) == pytest.approx(tail_df5(x), rel=1e-9, abs=1e-300)
    assert chi_square_p_value(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9, abs=1e-300)
    assert chi_square_p_value(x, 1) == pytest.approx(
        math.erfc(math.sqrt(x / 2)), rel=1e-9, abs=1e-300
    )


def test_gamma_edges_and_bad_arguments() -> None:
    assert regularised_gamma_q(2.5, 0.0) == 1.0
    assert chi_square_p_value(0.0) == 1.0
    with pytest.raises(ValueError):
        regularised_gamma_q(0.0, 1.0)
    with pytest.raises(ValueError):
        regularised_gamma_q(1.0, -1.0)
    with pytest.raises(ValueError):
        chi_square_p_value(3.0, 0)


def test_chi_square_statistic_by_hand() -> None:
    assert chi_square([6, 6, 6, 6, 6, 6]) == 0.0
    # expected 6: (16-6)^2/6 + 5 * (4-6)^2/6 = (100 + 20) / 6 = 20
    assert chi_square([16, 4, 4, 4, 4, 4]) == pytest.approx(20.0)
    with pytest.raises(ValueError):
        chi_square([0] * 6)


def test_verdicts() -> None:
    few = fairness("red", [5, 5, 5, 5, 5, 4])
    assert few.verdict == f"not enough rolls yet (need at least {MIN_ROLLS}, have 29)"
    assert few.fair is None and few.p_value is None

    fair = fairness("red", [10, 9, 11, 10, 8, 12])
    assert fair.fair is True
    assert fair.verdict.startswith("looks fair (p = ")
    assert fair.p_value == pytest.approx(tail_df5(1.0), rel=1e-9)  # statistic 6/6 = 1

    loaded = fairness("green", [16, 4, 4, 4, 4, 4])
    assert loaded.statistic == pytest.approx(20.0)
    assert loaded.p_value == pytest.approx(tail_df5(20.0), rel=1e-9)
    assert loaded.verdict == "looks unfair (p = 0.001)"
    assert loaded.fair is False
    assert fairness("blue", [60, 0, 0, 0, 0, 0]).verdict == "looks unfair (p < 0.001)"
    with pytest.raises(ValueError):
        fairness("blue", [1, 2, 3])
    with pytest.raises(ValueError):
        fairness("blue", [40, -1, 0, 0, 0, 0])


def test_counts_by_colour_pool_alike_dice() -> None:
    rolls = [
        Roll(dice=(Die("white", 1), Die("white", 1), Die("red", 6))),
        Roll(dice=(Die("white", 2), Die("white", 6), Die("red", 6))),
    ]
    assert count_faces(rolls) == {"white": (2, 1, 0, 0, 0, 1), "red": (0, 0, 0, 0, 0, 2)}
    report = dice_report(rolls * 20)
    assert [f.colour for f in report] == ["red", "white"]
    assert report[1].rolls == 80 and report[1].fair is False  # only 1, 2 and 6 ever
    assert report[0].rolls == 40 and report[0].verdict == "looks unfair (p < 0.001)"
    with pytest.raises(ValueError):
        count_faces([Roll(dice=(Die("red", 7),))])
