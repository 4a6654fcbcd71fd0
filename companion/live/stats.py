"""Dice statistics: how often each face came up on each die, and whether a die looks fair.

Dice are counted by colour. The camera cannot tell two dice of one colour apart (Qwixx's two
white dice; a Sixis player's six dice), so they are counted together as one "white" entry:
each of them is a fair die or not, and pooling their throws keeps the test valid for a set of
fair dice (a single biased die among alike ones is diluted; that is the price of not knowing
which is which).

Fairness is Pearson's chi-square goodness-of-fit test against a fair die: statistic
sum((observed - expected)^2 / expected) over the six faces, expected = n/6, 5 degrees of
freedom; the p-value is the upper regularised incomplete gamma function Q(5/2, x/2),
computed here with math.lgamma, a power series below a+1 and a continued fraction above
(the standard split; Numerical Recipes ch. 6.2 describes both). The usual rule that every
expected count be at least 5 sets the minimum: 30 throws of a colour.

Pure functions: no I/O, no clock."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from companion.rules.base import Roll

FACES = 6
DEGREES_OF_FREEDOM = FACES - 1
MIN_EXPECTED_PER_FACE = 5
MIN_ROLLS = MIN_EXPECTED_PER_FACE * FACES
UNFAIR_BELOW = 0.01  # one die in a hundred fair ones would be called unfair by chance


@dataclass(frozen=True, slots=True)
class Fairness:
    """The verdict on one die (or one colour): throws counted, chi-square statistic and its
    p-value (None below MIN_ROLLS), and a sentence for the page."""

    colour: str
    counts: tuple[int, int, int, int, int, int]
    rolls: int
    statistic: float | None
    p_value: float | None
    verdict: str

    @property
    def fair(self) -> bool | None:
        """True/False once there are enough throws, None before."""
        return None if self.p_value is None else self.p_value >= UNFAIR_BELOW

    def to_json(self) -> dict[str, object]:
        return {
            "colour": self.colour,
            "counts": list(self.counts),
            "rolls": self.rolls,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "fair": self.fair,
            "verdict": self.verdict,
        }


def count_faces(rolls: Iterable[Roll]) -> dict[str, tuple[int, int, int, int, int, int]]:
    """Per colour, how many times each face 1..6 came up (index 0 is face 1). Raises
    ValueError for a value outside 1-6 (a Roll the rules accepted never has one)."""
    counts: dict[str, list[int]] = {}
    for roll in rolls:
        for die in roll.dice:
            if not 1 <= die.value <= FACES:
                raise ValueError(f"a die shows 1 to 6, not {die.value!r} ({die!r})")
            counts.setdefault(die.colour, [0] * FACES)[die.value - 1] += 1
    return {colour: _six(c) for colour, c in counts.items()}


def _six(values: Iterable[int]) -> tuple[int, int, int, int, int, int]:
    a, b, c, d, e, f = values
    return (a, b, c, d, e, f)


def chi_square(counts: Iterable[int]) -> float:
    """Pearson's statistic of `counts` against equal expected counts."""
    observed = list(counts)
    total = sum(observed)
    if total <= 0:
        raise ValueError("chi-square needs at least one throw")
    expected = total / len(observed)
    return sum((o - expected) ** 2 / expected for o in observed)


def regularised_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a), the upper regularised incomplete gamma function."""
    if a <= 0:
        raise ValueError(f"a must be positive, not {a}")
    if x < 0:
        raise ValueError(f"x must not be negative, not {x}")
    if x == 0:
        return 1.0
    if x < a + 1:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return _gamma_q_continued_fraction(a, x)


def _gamma_p_series(a: float, x: float) -> float:
    """P(a, x) = x^a e^-x / Γ(a+1) * sum_n x^n / ((a+1)...(a+n)); converges fast for x < a+1."""
    term = 1.0 / a
    total = term
    n = 0
    while abs(term) > abs(total) * 1e-15 and n < 1000:
        n += 1
        term *= x / (a + n)
        total += term
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_continued_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz), for x >= a+1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_p_value(statistic: float, degrees_of_freedom: int = DEGREES_OF_FREEDOM) -> float:
    """P(X >= statistic) for X chi-square distributed with the given degrees of freedom."""
    if degrees_of_freedom < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {degrees_of_freedom}")
    return regularised_gamma_q(degrees_of_freedom / 2.0, max(statistic, 0.0) / 2.0)


def format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def fairness(colour: str, counts: Iterable[int]) -> Fairness:
    """The verdict on one colour's face counts (six numbers, face 1 first)."""
    six = _six(counts)
    if any(c < 0 for c in six):
        raise ValueError(f"face counts cannot be negative: {six}")
    rolls = sum(six)
    if rolls < MIN_ROLLS:
        return Fairness(
            colour,
            six,
            rolls,
            None,
            None,
            f"not enough rolls yet (need at least {MIN_ROLLS}, have {rolls})",
        )
    statistic = chi_square(six)
    p = chi_square_p_value(statistic)
    verdict = f"looks unfair ({format_p(p)})" if p < UNFAIR_BELOW else f"looks fair ({format_p(p)})"
    return Fairness(colour, six, rolls, statistic, p, verdict)


def dice_report(rolls: Iterable[Roll]) -> list[Fairness]:
    """Counts and verdict for every colour seen in `rolls`, colours in name order."""
    return report_from_counts(count_faces(rolls))


def report_from_counts(counts: Mapping[str, Iterable[int]]) -> list[Fairness]:
    return [fairness(colour, counts[colour]) for colour in sorted(counts)]
