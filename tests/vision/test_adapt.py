"""The setup's heads (companion.vision.adapt) on small literal embeddings: the blend keeps
what the setup has not seen, moves with how many examples a face has, the held-back check
finds a wrong tap, the prior is chosen on the examples, and colours move to the setup's."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.adapt import (
    PRIOR_CHOICES,
    Example,
    adapt,
    adapted_dice_set,
    blend,
    choose_prior,
    fit_value_head,
    held_back,
    leave_one_out_own,
    name_with,
    own_prototypes,
)
from companion.vision.colour import DiceSet, SetDie, name_colour

DIM = 12


def face_vector(value: int, rng: np.random.Generator, noise: float = 0.15) -> np.ndarray:
    """An embedding near the axis of its face (faces are orthogonal directions)."""
    vector = np.zeros(DIM, np.float32)
    vector[value - 1] = 1.0
    return (vector + noise * np.abs(rng.standard_normal(DIM))).astype(np.float32)


def shipped(value: int, sure: float = 0.8) -> np.ndarray:
    """A shipped head's 7 probabilities that read `value` with `sure`."""
    probabilities = np.full(7, (1 - sure) / 6, np.float32)
    probabilities[value - 1] = sure
    return probabilities


def examples_of(
    values: list[int], seed: int = 0, read_as: dict[int, int] | None = None
) -> list[Example]:
    """Examples of the given values; `read_as` maps a value to what the shipped head read."""
    rng = np.random.default_rng(seed)
    read_as = read_as or {}
    return [
        Example(v, face_vector(v, rng), shipped(read_as.get(v, v)))
        for v in values
    ]  # fmt: skip


def test_a_head_without_examples_changes_nothing() -> None:
    head = fit_value_head(np.zeros((0, DIM), np.float32), np.zeros(0, np.int64))
    probabilities = np.stack([shipped(3), shipped(5)])
    embeddings = np.stack([face_vector(3, np.random.default_rng(1))] * 2)
    assert np.array_equal(head.adjust(probabilities, embeddings), probabilities)
    assert np.array_equal(head.adjust(probabilities, None), probabilities)


def test_the_setup_corrects_a_face_the_shipped_head_misreads() -> None:
    """The shipped head reads this setup's 1s as 2s; ten confirmed 1s teach it."""
    taught = examples_of([1] * 10 + [2] * 10, read_as={1: 2})
    adaptation = adapt(taught)
    rng = np.random.default_rng(7)
    new_one = face_vector(1, rng)[None]
    cold = shipped(2)[None]  # the shipped head misreads it again
    assert cold.argmax() == 1
    adjusted = adaptation.head.adjust(cold, new_one)
    assert adjusted.argmax() == 0  # read as 1
    assert np.isclose(adjusted.sum(), 1.0)


def test_faces_the_setup_has_not_seen_keep_the_shipped_probability() -> None:
    taught = examples_of([1] * 6 + [2] * 6)
    head = adapt(taught).head
    probabilities = np.array([[0.05, 0.05, 0.1, 0.6, 0.1, 0.05, 0.05]], np.float32)
    adjusted = head.adjust(probabilities, face_vector(1, np.random.default_rng(3))[None])
    assert np.allclose(adjusted[0, 2:], probabilities[0, 2:])  # 3..6 and unreadable kept
    assert np.isclose(adjusted[0, :2].sum(), probabilities[0, :2].sum())  # shared out only
    assert adjusted[0, 0] > probabilities[0, 0]


def test_the_blend_counts_each_face_by_its_examples() -> None:
    own = np.array([[1.0, 0, 0, 0, 0, 0]])
    cold = np.array([[0.1, 0.8, 0.02, 0.02, 0.02, 0.02, 0.02]])
    few = blend(cold, own, np.array([1 / (1 + 4), 1 / (1 + 4), 0, 0, 0, 0]))
    many = blend(cold, own, np.array([50 / 54, 50 / 54, 0, 0, 0, 0]))
    assert few[0, 0] < many[0, 0]
    assert few.argmax() == 1 and many.argmax() == 0


def test_a_wrong_tap_is_held_back_and_a_kept_one_is_not() -> None:
    taught = examples_of([4] * 8 + [5] * 8)
    rng = np.random.default_rng(11)
    wrong = Example(4, face_vector(5, rng), shipped(5))  # a 5 confirmed as 4
    examples = [*taught, wrong]
    assert held_back(examples) == [len(taught)]
    kept = Example(4, wrong.embedding, wrong.probabilities, kept_by_host=True)
    assert held_back([*taught, kept]) == []


def test_a_lone_correction_the_shipped_head_refuses_is_held_back_until_a_second_agrees() -> None:
    rng = np.random.default_rng(5)
    others = examples_of([2] * 8 + [3] * 8)
    lone = Example(6, face_vector(6, rng), shipped(2, sure=0.97))
    assert held_back([*others, lone]) == [len(others)]
    second = Example(6, face_vector(6, rng), shipped(2, sure=0.97))
    assert held_back([*others, lone, second]) == []  # each vouches for the other


def test_leave_one_out_compares_an_example_with_the_rest_of_its_face() -> None:
    rng = np.random.default_rng(2)
    embeddings = np.stack([face_vector(1, rng), face_vector(1, rng), face_vector(2, rng)])
    own = leave_one_out_own(embeddings, np.array([1, 1, 2]))
    assert own[0] > 0.9 and own[1] > 0.9
    assert np.isnan(own[2])  # its face's only example


def test_the_prior_follows_what_the_setup_head_earns() -> None:
    helpful = examples_of([1] * 10 + [2] * 10, read_as={1: 2})  # the shipped head errs
    prior = choose_prior(helpful)
    assert prior < PRIOR_CHOICES[-1]
    head = fit_value_head(
        np.stack([e.embedding for e in helpful]), np.array([e.value for e in helpful]), prior
    )
    assert (
        head.adjust(shipped(2)[None], face_vector(1, np.random.default_rng(9))[None]).argmax() == 0
    )
    # the shipped head reads this setup right: its means have nothing to add
    assert choose_prior(examples_of([1] * 10 + [2] * 10)) == PRIOR_CHOICES[-1]
    assert choose_prior(examples_of([1, 2, 3])) == PRIOR_CHOICES[-1]  # too few to judge


def test_each_set_die_moves_to_the_setup_colour() -> None:
    calibrated = DiceSet(
        "qwixx", (SetDie("red", (40.0, 50.0, 30.0)), SetDie("blue", (30.0, 0.0, -30.0)))
    )
    seen = [Example(1, np.ones(DIM, np.float32), lab=(50.0, 40.0, 20.0), set_index=0)] * 8
    adapted = adapted_dice_set(calibrated, seen)
    red, blue = adapted.dice
    assert red.colour == "red" and blue == calibrated.dice[1]
    assert np.allclose(red.lab, (48.0, 42.0, 22.0))  # 8 dice against a prior of 2


def test_the_setup_own_colours_are_named_beside_the_shipped_ones() -> None:
    # a teal die under this table's light measures where the shipped prototypes say green
    lab = (45.0, -40.0, 24.0)
    assert name_colour(lab).name == "green"
    own = own_prototypes([Example(1, np.ones(DIM, np.float32), lab=lab, colour="teal")] * 3)
    assert name_with(lab, own) == "teal"
    assert name_with((60.0, 2.0, 70.0), own) == name_colour((60.0, 2.0, 70.0)).name


@pytest.mark.parametrize("count", [0, 1, 5])
def test_adapt_takes_any_number_of_examples(count: int) -> None:
    adaptation = adapt(examples_of([3] * count))
    assert adaptation.used == count
    assert len(adaptation.face_progress()) == 6
