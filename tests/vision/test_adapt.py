"""The setup's heads (companion.vision.adapt) on small literal embeddings: the anchored
regression keeps what the setup has not seen and corrects what the shipped head misreads,
the check on left-out photos keeps the shipped head where the setup's has nothing to add,
the held-back check finds a wrong tap, and colours move to the setup's."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.adapt import (
    MAX_ROWS,
    VIEWS,
    Example,
    adapt,
    adapted_dice_set,
    check_folds,
    example_rows,
    fit_value_head,
    held_back,
    leave_one_out_own,
    own_colours,
)
from companion.vision.adapt_fit import Rows, fit
from companion.vision.colour import DiceSet, SetDie, name_colour

DIM = 12
BELOW = 0.7  # a classifier manifest's second_look_below (these dice have no classifier)


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
    head = fit_value_head([])
    probabilities = np.stack([shipped(3), shipped(5)])
    embeddings = np.stack([face_vector(3, np.random.default_rng(1))] * 2)
    assert not head.active
    assert np.array_equal(head.adjust(probabilities, embeddings), probabilities)
    assert np.array_equal(head.adjust(probabilities, None), probabilities)


def test_the_setup_corrects_a_face_the_shipped_head_misreads() -> None:
    """The shipped head reads this setup's 1s as 2s; ten confirmed 1s teach it."""
    taught = examples_of([1] * 10 + [2] * 10, read_as={1: 2})
    adaptation = adapt(taught, second_look_below=BELOW)
    assert adaptation.head.active  # fewer errors on left-out photos, by the sign test
    gate = adaptation.head.gate
    assert gate.adopted and gate.reason == "adopted"
    assert gate.dice == 20 and gate.folds == 20 and gate.shipped_errors == 10
    assert gate.adapted_errors < 10 and gate.wins >= 5 and gate.p_value <= gate.alpha
    rng = np.random.default_rng(7)
    new_one = face_vector(1, rng)[None]
    cold = shipped(2)[None]  # the shipped head misreads it again
    assert cold.argmax() == 1
    adjusted = adaptation.head.adjust(cold, new_one)
    assert adjusted.argmax() == 0  # read as 1
    assert np.isclose(adjusted.sum(), 1.0)
    # and a 2 stays a 2
    assert adaptation.head.adjust(shipped(2)[None], face_vector(2, rng)[None]).argmax() == 1


def test_faces_the_setup_has_not_seen_keep_the_shipped_probability() -> None:
    taught = examples_of([1] * 6 + [2] * 6, read_as={1: 2})
    head = adapt(taught, second_look_below=BELOW).head
    assert head.active
    probabilities = np.array([[0.05, 0.05, 0.1, 0.6, 0.1, 0.05, 0.05]], np.float32)
    adjusted = head.adjust(probabilities, face_vector(1, np.random.default_rng(3))[None])
    assert np.allclose(adjusted[0, 2:], probabilities[0, 2:])  # 3..6 and unreadable kept
    assert np.isclose(adjusted[0, :2].sum(), probabilities[0, :2].sum())  # shared out only
    assert adjusted[0, 0] > probabilities[0, 0]


def test_a_die_of_faces_barely_taught_is_no_surer_than_the_shipped_head() -> None:
    """The head reads a die as 1 surely; with only two 1s taught it may not be believed
    beyond what the shipped head gave the 1, with ten it is."""
    rng = np.random.default_rng(11)
    probe_shipped = np.array([[0.3, 0.6, 0.02, 0.02, 0.02, 0.02, 0.02]])
    probe = face_vector(1, rng)[None]
    for ones, capped in ((2, True), (10, False)):
        taught = examples_of([1] * ones + [2] * 10, read_as={1: 2})
        head = fit_value_head(taught)  # no check: the head reads
        adjusted = head.adjust(probe_shipped, probe)
        assert adjusted.argmax() == 0 and adjusted.max() > 0.5
        confidence = head.confidence(adjusted, probe_shipped)
        if capped:
            assert np.isclose(confidence[0], 0.3)  # what the shipped head gave the 1
        else:
            assert np.isclose(confidence[0], adjusted.max())
    # a head that does not read: the top probability, whatever the counts
    assert np.isclose(fit_value_head([]).confidence(probe_shipped, probe_shipped)[0], 0.6)


def test_a_die_unlike_the_setups_keeps_the_shipped_reading() -> None:
    """The setup's 1s, which the shipped head reads as 2, are taught; a die of another kind
    (its embedding away from every taught die, as another table's dice are) that the
    shipped head reads as 2 keeps exactly that reading, while a new die like the taught
    ones is read as 1."""
    taught = examples_of([1] * 10 + [2] * 10, read_as={1: 2})
    head = adapt(taught, second_look_below=BELOW).head
    assert head.active and head.delta is not None and head.delta.like is not None
    rng = np.random.default_rng(5)
    stranger = np.zeros((1, DIM), np.float32)
    stranger[0, 1], stranger[0, 8] = 0.6, 0.8  # part 2-like, mostly what no taught die shows
    assert not head.delta.like.mask(stranger)[0]
    cold = shipped(2, sure=0.5)[None]
    assert np.array_equal(head.adjust(cold, stranger), cold)
    like_taught = face_vector(1, rng)[None]
    assert head.delta.like.mask(like_taught)[0]
    assert head.adjust(cold, like_taught).argmax() == 0
    # the floor: the least typical taught die is like its nearest die of another photo
    assert head.delta.like.mask(np.stack([e.embedding for e in taught])).all()


def test_the_fit_is_the_shipped_head_plus_a_pull_towards_the_examples() -> None:
    """With a huge penalty nothing moves; with a small one the examples win; the rows of
    faces not seen are never touched."""
    rng = np.random.default_rng(4)
    features = np.stack([face_vector(v, rng) for v in [1, 2] * 10])
    labels = np.array([0, 1] * 10)
    wrong = np.stack([shipped(2)] * 20)  # the shipped head reads everything as 2
    stiff, loose = fit(Rows(features, wrong, labels), 1e6), fit(Rows(features, wrong, labels), 0.1)
    assert stiff.seen == loose.seen == (0, 1)
    assert np.abs(stiff.weights).max() < 1e-3
    assert np.array_equal(stiff.apply(wrong, features).argmax(axis=1), np.ones(20))
    assert np.array_equal(loose.apply(wrong, features).argmax(axis=1), labels)


def test_each_view_of_a_die_is_a_row_until_the_rows_run_out() -> None:
    rng = np.random.default_rng(6)
    views = np.stack([face_vector(3, rng) for _ in range(VIEWS)])
    view_probabilities = np.stack([shipped(3)] * VIEWS)
    one = Example(3, views[0], shipped(3), views=views, view_probabilities=view_probabilities)
    rows = example_rows([one, one])
    assert rows.features.shape == (2 * VIEWS, len(views[0])) and set(rows.labels) == {2}
    many = example_rows([one] * (MAX_ROWS // 2))
    assert len(many.labels) == MAX_ROWS  # two views each
    # a die kept without views teaches with its reading; one with neither, not at all
    bare = Example(3, views[0], shipped(3))
    assert len(example_rows([bare]).labels) == 1
    assert len(example_rows([Example(3, views[0])]).labels) == 0


def test_the_shipped_head_keeps_reading_where_the_setup_head_has_nothing_to_add() -> None:
    # the shipped head reads this setup right: the setup's head cannot read more right
    check = check_folds(examples_of([1] * 10 + [2] * 10), second_look_below=BELOW)
    assert not check.verdict.adopted and check.verdict.shipped_errors == 0
    assert (
        check.verdict.reason == "no_gain"
        and "it came with: they already read all 20 of this camera setup's dice right"
        in check.verdict.words()
    )
    assert not adapt(examples_of([1] * 10 + [2] * 10), second_look_below=BELOW).head.active
    assert np.allclose(check.sureness, 0.8)  # the shipped head's own probability of each value
    # too few photos to judge by: the sign test could not pass on four folds
    few = examples_of([1, 2, 1, 2], read_as={1: 2})
    assert (
        check_folds(few, second_look_below=BELOW).verdict.reason == "too_few"
        and not adapt(few, second_look_below=BELOW).head.active
    )


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
    own = own_colours([Example(1, np.ones(DIM, np.float32), lab=lab, colour="teal")] * 3)
    assert own.name(lab) == "teal"
    assert own.name((60.0, 2.0, 70.0)) == name_colour((60.0, 2.0, 70.0)).name


def test_each_confirmed_die_is_a_colour_prototype_of_its_own() -> None:
    """Two blues that look nothing alike (a mixed bag of dice): each is named by the
    confirmed die it resembles, where one median blue would name neither."""
    dark, light = (14.0, 4.0, -1.0), (45.0, -5.0, -30.0)
    assert name_colour(dark).name == "black"
    own = own_colours(
        [Example(1, np.ones(DIM, np.float32), lab=lab, colour="blue") for lab in (dark, light)]
    )
    assert own.name((15.0, 4.5, -1.5)) == "blue"
    assert own.name((44.0, -4.0, -31.0)) == "blue"
    assert own.name((50.0, 45.0, 30.0)) == name_colour((50.0, 45.0, 30.0)).name


@pytest.mark.parametrize("count", [0, 1, 5])
def test_adapt_takes_any_number_of_examples(count: int) -> None:
    adaptation = adapt(examples_of([3] * count), second_look_below=BELOW)
    assert adaptation.used == count
    assert len(adaptation.sureness) == count and not adaptation.head.active
