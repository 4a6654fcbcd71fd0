"""bench/adapt_rule.py's check of a setup's own peak rule, on error tables whose answer is
known by construction: per-photo errors (photos x rules) as peak_rule_errors counts them."""

from __future__ import annotations

import numpy as np

from bench.adapt_rule import check_setup_rule, clearly_fewer, fewest

SHIPPED = 0


def test_a_rule_that_every_photo_of_the_table_prefers_is_adopted_and_helps_the_rest() -> None:
    # 40 photos: the shipped rule drops two dice on each, rule 1 none, rule 2 one
    errors = np.tile(np.array([2, 0, 1]), (40, 1))
    check = check_setup_rule(errors, SHIPPED, list(range(25)), fewest)
    assert check.reason == "adopted"
    assert (check.fold_adapted, check.fold_shipped, check.wins, check.losses) == (0, 50, 25, 0)
    assert (check.rest_chosen, check.rest_shipped) == (0, 30)


def test_a_rule_better_on_two_photos_only_is_not_significant() -> None:
    # the white board's case: the gain lies on two photos (heaps), the rest tie
    errors = np.zeros((40, 2), np.int64)
    errors[[3, 7], SHIPPED] = 20
    errors[[3, 7], 1] = 12
    check = check_setup_rule(errors, SHIPPED, list(range(25)), fewest)
    assert (check.wins, check.losses) == (2, 0)
    assert check.reason == "not_significant"


def test_a_rule_that_fits_the_confirmed_photos_noise_is_refused() -> None:
    rng = np.random.default_rng(5)
    errors = rng.integers(0, 3, (60, 50))  # no rule is better than another
    check = check_setup_rule(errors, SHIPPED, list(range(25)), fewest)
    assert check.reason in ("no_gain", "not_significant")


def test_clearly_fewer_keeps_the_shipped_rule_within_the_noise() -> None:
    rng = np.random.default_rng(1)
    shipped = rng.integers(1, 3, 40)
    other = shipped.copy()
    other[[0, 1]] -= 1  # one error fewer on two photos of 40, one more on a third
    other[2] += 1
    errors = np.stack([shipped, other], axis=1)
    assert fewest(errors, SHIPPED) == 1
    assert clearly_fewer(errors, SHIPPED) == SHIPPED
    errors[:, 1] = np.maximum(0, shipped - 1)  # fewer on every photo with an error
    assert clearly_fewer(errors, SHIPPED) == 1


def test_a_tie_keeps_the_shipped_rule() -> None:
    errors = np.array([[1, 0, 1], [0, 1, 0]])
    assert fewest(errors, SHIPPED) == SHIPPED
    assert fewest(errors, 1) == 1
