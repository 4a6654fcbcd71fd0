"""The looks only where they can change a decision (companion.vision.pipeline.take_looks):
a die that cannot reach the auto-apply threshold is read without its eight views and wide
crop, and every decision (apply or ask, which dice are asked about) stays what it was."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.synth import DieSpec, render_scene
from companion.vision.classifier import PipClassifier
from companion.vision.confidence import ConfidenceMap, LookModel, decide_roll
from companion.vision.pipeline import DiceReader, calibrate, read_dice
from companion.vision.types import DieReading, FrameReading

THRESHOLDS = (0.3, 0.6, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995)


class BatchSizes:
    """Wraps a classifier's model.run and keeps the batch size of every call."""

    def __init__(self, classifier: PipClassifier) -> None:
        self.sizes: list[int] = []
        run = classifier.model.run

        def counted(batch: np.ndarray) -> list[np.ndarray]:
            self.sizes.append(len(batch))
            return run(batch)

        classifier.model.run = counted  # type: ignore[method-assign]


def _reader(threshold: float | None = None) -> DiceReader:
    reader = DiceReader.load()
    confidence_map = reader.classifier.confidence_map
    assert confidence_map is not None and confidence_map.looks is not None
    assert confidence_map.without_looks is not None  # the shipped manifest carries it
    reader.classifier.confidence_map = dataclasses.replace(confidence_map, threshold=threshold)
    return reader


def _scene(seed: int, values: tuple[int, ...] = (2, 6, 3, 5)) -> np.ndarray:
    image, _ = render_scene(
        np.random.default_rng(seed), 640, 480, dice=[DieSpec(v, "white", "black") for v in values]
    )
    return image


def _ceilings(reader: DiceReader, dice: tuple[DieReading, ...]) -> np.ndarray:
    confidence_map = reader.classifier.confidence_map
    assert confidence_map is not None and confidence_map.looks is not None
    return confidence_map.looks.ceiling(
        np.array([d.confidence for d in dice]),
        np.array([d.value for d in dice]),
        np.array([d.where.score for d in dice]),
        np.array([max(d.where.w, d.where.h) for d in dice]),
        np.stack([np.asarray(d.embedding) for d in dice]),
        confidence_map,
    )


def test_a_frame_that_cannot_be_sure_is_read_without_the_looks() -> None:
    reader = _reader(None)  # no threshold, as shipped: no roll is ever applied
    counted = BatchSizes(reader.classifier)
    image = _scene(8)
    dice = reader.read(image).dice
    assert len(dice) >= 3
    assert reader.looks_taken == 0 and all(d.views is None for d in dice)
    # one batch of the boxes (and a second look, 7 views, for the unsure), never 9 crops a die
    boxes = counted.sizes[0]
    assert boxes >= len(dice) and len(counted.sizes) <= 2
    assert all(size % 7 == 0 and size <= 7 * boxes for size in counted.sizes[1:])
    # each die's confidence: the raw map's, never above what its looks could have given
    raw = read_dice(image, reader.finder, reader.classifier)
    confidence_map = reader.classifier.confidence_map
    assert confidence_map is not None and confidence_map.without_looks is not None
    for die, first in zip(dice, raw, strict=True):
        assert die.confidence <= confidence_map.without_looks(first.confidence) + 1e-9
    assert np.all(np.array([d.confidence for d in dice]) <= _ceilings(reader, raw) + 1e-9)


def _half_unfamiliar(reader: DiceReader, dice: tuple[DieReading, ...], threshold: float) -> None:
    """The reader's map with its OOD threshold at the median of these dice's scores and the
    unfamiliar cap under ``threshold``: the dice beyond it cannot be sure, the rest can."""
    confidence_map = reader.classifier.confidence_map
    assert confidence_map is not None and confidence_map.looks is not None
    looks = confidence_map.looks
    assert looks.ood is not None
    scores = looks.ood.score(
        np.stack([np.asarray(d.embedding) for d in dice]), np.array([d.value for d in dice])
    )
    ood = dataclasses.replace(
        looks.ood, threshold=float(np.median(scores)), unfamiliar_confidence=threshold / 2
    )
    reader.classifier.confidence_map = dataclasses.replace(
        confidence_map, threshold=threshold, looks=dataclasses.replace(looks, ood=ood)
    )


def test_a_die_that_can_be_sure_gets_its_looks_and_the_others_do_not() -> None:
    image = _scene(8, (1, 4, 4, 6, 2))
    reader = _reader(None)
    first = read_dice(image, reader.finder, reader.classifier)
    threshold = 0.9
    _half_unfamiliar(reader, first, threshold)
    can = _ceilings(reader, first) >= threshold
    assert 0 < can.sum() < len(first)
    counted = BatchSizes(reader.classifier)
    dice = reader.read(image).dice
    assert [d.views is not None for d in dice] == list(can)
    assert reader.looks_taken == int(can.sum())
    assert 9 * int(can.sum()) in counted.sizes  # the looks: 9 crops a die, one batch
    # a die with its looks reads as the reader that took every die's looks reads it
    everything = calibrate(
        read_dice(image, reader.finder, reader.classifier, looks=True),
        reader.classifier.confidence_map,
    )
    for die, seen in zip(dice, everything, strict=True):
        assert die.value == seen.value
        if die.views is not None:
            assert die.confidence == pytest.approx(seen.confidence, abs=1e-5)
        else:  # neither can be sure; the one without looks is capped as unfamiliar too
            assert die.confidence < threshold and seen.confidence < threshold
            assert "unfamiliar" in die.flags and "unfamiliar" in seen.flags


@pytest.mark.parametrize(("seed", "unfamiliar"), [(8, False), (11, False), (23, True)])
def test_the_decisions_are_the_ones_every_look_gives(seed: int, unfamiliar: bool) -> None:
    """Apply or ask, and which dice are asked about, at any threshold: as when every die's
    looks are taken (the map as fitted: a manifest without the raw map)."""
    image = _scene(seed, (1, 4, 4, 6, 2))
    for threshold in THRESHOLDS:
        reader = _reader(threshold)
        if unfamiliar:  # half the dice cannot be sure: read without their looks
            _half_unfamiliar(reader, read_dice(image, reader.finder, reader.classifier), threshold)
        skipped = reader.read(image)
        confidence_map = reader.classifier.confidence_map
        assert confidence_map is not None
        reader.classifier.confidence_map = dataclasses.replace(confidence_map, without_looks=None)
        every = reader.read(image)
        assert [d.value for d in skipped.dice] == [d.value for d in every.dice]
        assert all(d.views is not None for d in every.dice if d.value is not None)
        for expected in (len(every.dice), len(every.dice) + 1):
            ours = decide_roll(skipped.dice, expected, threshold)
            theirs = decide_roll(every.dice, expected, threshold)
            assert ours.apply == theirs.apply
            assert {u.index for u in ours.unsure} == {u.index for u in theirs.unsure}
            assert ours.roll_confidence == pytest.approx(theirs.roll_confidence, abs=1e-5)


def test_no_look_gives_more_than_the_ceiling() -> None:
    """The ceiling bounds the look confidence whatever the eight views and the wide crop
    say (random looks, the shipped look model)."""
    confidence_map = _reader().classifier.confidence_map
    assert confidence_map is not None and confidence_map.looks is not None
    looks: LookModel = confidence_map.looks
    rng = np.random.default_rng(0)
    n = 2000
    values = rng.integers(1, 7, n)
    raw = rng.uniform(0.3, 1.0, n)
    views = rng.dirichlet(np.full(7, 0.3), (n, 8))
    wide = rng.dirichlet(np.full(7, 0.3), n)
    # some dice with every look sure of the value read: the top of the range
    views[: n // 4, :, :] = 1e-6
    views[np.arange(n // 4), :, values[: n // 4] - 1] = 1.0
    wide[: n // 4] = 1e-6
    wide[np.arange(n // 4), values[: n // 4] - 1] = 1.0
    peaks = rng.uniform(0.2, 1.0, n)
    sides = rng.uniform(15, 300, n)
    assert looks.ood is not None
    embeddings = looks.ood.means[values - 1] + rng.normal(0, 0.3, (n, looks.ood.means.shape[1]))
    features = looks.features(raw, values, views, wide, peaks, sides, embeddings)
    given = looks.confidence(features, confidence_map)
    ceiling = looks.ceiling(raw, values, peaks, sides, embeddings, confidence_map)
    assert np.all(given <= ceiling + 1e-12)
    assert np.max(ceiling - given) > 0 and np.min(ceiling[: n // 4] - given[: n // 4]) < 0.01


def test_a_map_with_looks_and_no_raw_map_reads_every_die_with_its_looks() -> None:
    reader = _reader(None)
    confidence_map = reader.classifier.confidence_map
    assert isinstance(confidence_map, ConfidenceMap)
    reader.classifier.confidence_map = dataclasses.replace(confidence_map, without_looks=None)
    reading: FrameReading = reader.read(_scene(8))
    assert reading.dice and all(d.views is not None for d in reading.dice)


def test_the_raw_map_round_trips_through_the_manifest_field() -> None:
    confidence_map = _reader().classifier.confidence_map
    assert confidence_map is not None
    again = ConfidenceMap.from_json(confidence_map.to_json())
    assert again.without_looks == confidence_map.without_looks
    assert again.looks is not None
