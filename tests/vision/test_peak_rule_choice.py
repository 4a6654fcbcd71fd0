"""The ways bench/peak_rule_choice.py chooses a peak rule from per-photo errors, and its
leave-one-source-out count: on error tables whose answer is known by construction."""

from __future__ import annotations

import numpy as np

from bench.peak_rule_choice import fewest, left_out, simplest_near_fewest


def test_fewest_takes_the_first_rule_with_the_fewest_errors() -> None:
    errors = np.array([[2, 1, 1], [2, 1, 1]])
    assert fewest(errors) == 1


def test_an_earlier_rule_within_the_noise_of_the_fewest_is_taken() -> None:
    rng = np.random.default_rng(1)
    best = rng.integers(0, 3, 40)
    # rule 0 is one error worse on one photo of 40 and one better on another: noise
    near = best.copy()
    near[0] += 2
    near[1] = max(0, near[1] - 1)
    errors = np.stack([near, best], axis=1)
    assert fewest(errors) == 1
    assert simplest_near_fewest(errors) == 0


def test_an_earlier_rule_clearly_worse_is_not_taken() -> None:
    best = np.ones(40, np.int64)
    worse = best + 1  # one more error on every photo: far beyond one standard error
    errors = np.stack([worse, best], axis=1)
    assert simplest_near_fewest(errors) == 1


def test_each_source_is_scored_by_the_rule_the_others_chose() -> None:
    # source a prefers rule 0, source b rule 1; each left out gets the other's choice
    errors = np.array([[0, 3], [0, 3], [4, 0], [4, 0]])
    sources = np.array(["a", "a", "b", "b"])
    chosen = left_out(errors, sources, fewest)
    assert chosen == {"a": (1, 6), "b": (0, 8)}
