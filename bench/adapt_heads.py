"""How the setup's value head was chosen: the heads on the labelled dice of the parts one
may choose on, after K confirmed photos.

    .venv/bin/python bench/adapt_heads.py [--parts calibration] [--variant shipped]
    .venv/bin/python bench/adapt_heads.py --variant no-views
    .venv/bin/python bench/adapt_heads.py --variant no-check
    .venv/bin/python bench/adapt_heads.py --poison 0.2 --seeds 3
    .venv/bin/python bench/adapt_heads.py --parts validation

--parts calibration (the default): the calibration parts of the four training folders
(companion/vision/datasets.py: held back from training for choosing such things) and, while
the shipped classifier has not trained on them (its manifest's ``trained_on`` does not name
the folder), tomitomi-dish-crops' training blocks as six setups of 300 crops each in the
order taken, the folder's only photos of a table the classifier never saw that are not
measure-only. --parts validation: the validation parts (reported). The measure-only
folders are never read here: bench/adapt.py reports them.

Each labelled die is read once, with its seven other symmetric views, by the shipped
classifier (the boxes as labelled, no finder: the value head is what is compared). A scene
folder's photos are taken in sorted order; crops are shuffled (seeded) into rolls of two,
as a table throws them. For each K: the dice of the first K photos are the setup's
confirmed examples (--poison SHARE: that share of them with a wrong value, seeded, --seeds
runs), adapted on (companion.vision.adapt), and the rest read as AdaptedClassifier reads
them (`read_cached`). Printed per part and K: dice taught, held back (of them wrong), the
check's figures (left-out dice read right by the shipped head / the setup's head / dice
judged) and whether the setup's head reads, misread dice cold and adapted, and rolls
applied without a tap (the shipped confidence map and auto-apply threshold) and of those
wrong, cold and adapted; then the totals per K.

--variant shipped: `adapt` as shipped. no-views: each die teaches with its reading alone
(no symmetric views). no-check: the setup's head always reads (no check on left-out
photos).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from companion.vision.adapt import Example, ValueHead, adapt, fit_value_head, held_back
from companion.vision.classifier import PipClassifier, symmetric_views
from companion.vision.datasets import TOMITOMI, LabelledImage, load_split
from companion.vision.types import DieBox

TOMITOMI_SETUP_CROPS = 300  # crops per tomitomi training setup
TOMITOMI_SETUPS = 6
CROPS_PER_ROLL = 2
SHUFFLE_SEED = 15


@dataclass(frozen=True)
class Part:
    """Every labelled die of one part: N x 8 x D view embeddings, N x 8 x 7 view
    probabilities (the first view the crop as cut), N values 1-6, N photo ranks."""

    name: str
    views: np.ndarray
    view_probabilities: np.ndarray
    values: np.ndarray
    photos: np.ndarray


def read_part(
    classifier: PipClassifier, name: str, images: Sequence[LabelledImage], crops: bool
) -> Part:
    """The part's dice through the classifier, photos ranked as the module docstring says."""
    views, shipped, values, photos = [], [], [], []
    for rank, image in enumerate(images if crops else sorted(images, key=lambda i: i.path.name)):
        boxes = [DieBox(d.cx, d.cy, d.side, d.side) for d in image.dice]
        if not boxes:
            continue
        cut = classifier.crops(image.load(), boxes)
        outputs = classifier.model.run(
            classifier.model.normalise(np.concatenate([cut, symmetric_views(cut)]))
        )
        count = len(boxes)
        index = classifier.embedding_index
        assert index is not None, "the classifier has no embedding output"
        views.append(outputs[index].reshape(8, count, -1).transpose(1, 0, 2))
        shipped.append(
            outputs[classifier.probabilities_index].reshape(8, count, -1).transpose(1, 0, 2)
        )
        values += [d.value for d in image.dice]
        photos += [rank] * count
    part = Part(
        name, np.concatenate(views), np.concatenate(shipped), np.array(values), np.array(photos)
    )
    if crops:  # shuffled into rolls of two
        order = np.random.default_rng(SHUFFLE_SEED).permutation(len(part.values))
        part = replace(
            part,
            views=part.views[order],
            view_probabilities=part.view_probabilities[order],
            values=part.values[order],
            photos=np.arange(len(order)) // CROPS_PER_ROLL,
        )
    return part


def taken(image: LabelledImage) -> tuple[int, str]:
    """A tomitomi crop's place in the order taken: its file number, then its name."""
    return int(image.path.stem.split("_")[1]), image.path.name


def trained_on(classifier: PipClassifier, folder: str) -> bool:
    return folder in json.dumps(classifier.model.manifest.raw.get("trained_on", {}))


def parts_to_read(
    classifier: PipClassifier, which: str
) -> list[tuple[str, list[LabelledImage], bool]]:
    split = load_split()
    chosen = split.calibration if which == "calibration" else split.validation
    out = [
        (name, sorted(images, key=taken) if name == TOMITOMI else list(images), name == TOMITOMI)
        for name, images in chosen.items()
    ]
    if which == "calibration" and not trained_on(classifier, TOMITOMI):
        taught = sorted((im for im in split.train_crops if TOMITOMI in str(im.path)), key=taken)
        for k in range(TOMITOMI_SETUPS):
            chunk = taught[k * TOMITOMI_SETUP_CROPS : (k + 1) * TOMITOMI_SETUP_CROPS]
            if chunk:
                out.append((f"{TOMITOMI} training blocks, setup {k + 1}", chunk, True))
    return out


def read_cached(
    head: ValueHead | None,
    views: np.ndarray,
    view_probabilities: np.ndarray,
    second_look_below: float,
    looks: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """N x 7 probabilities and N raw confidences as AdaptedClassifier.classify (or,
    without a head, the shipped PipClassifier.classify) makes them from the dice's cached
    views (and their crops' looks, N x LOOK_WIDTH, for a head that reads by look): the
    head on the crop as cut; a die under ``second_look_below`` read as the mean over its
    eight views; the confidence the head's (`ValueHead.confidence`)."""

    def adjusted(view: int, rows: np.ndarray) -> np.ndarray:
        shipped = view_probabilities[rows, view].astype(np.float64)
        if head is None:
            return shipped
        return head.adjust(shipped, views[rows, view], None if looks is None else looks[rows])

    everything = np.arange(len(views))
    out = adjusted(0, everything)
    unsure = np.flatnonzero(out.max(axis=1) < second_look_below)
    if len(unsure):
        out[unsure] = sum(adjusted(v, unsure) for v in range(views.shape[1])) / views.shape[1]
    if head is None:
        return out, out.max(axis=1)
    return out, head.confidence(out, view_probabilities[:, 0].astype(np.float64))


def rolls_applied(
    classifier: PipClassifier,
    read: tuple[np.ndarray, np.ndarray],
    values: np.ndarray,
    photos: np.ndarray,
) -> tuple[int, int]:
    """Rolls that go in without a tap, and of those wrong (module docstring); ``read``:
    the dice's probabilities and raw confidences (`read_cached`). A map over the looks
    (issue 23) scores more than the raw confidence cached here: bench/auto_apply.py
    measures it, this returns (0, 0) for it."""
    shipped = classifier.confidence_map
    if shipped is None or shipped.threshold is None or shipped.needs_looks:
        return 0, 0
    probabilities, raw = read
    read_as = probabilities.argmax(axis=1)
    confidence = np.where(read_as == 6, 0.0, shipped.apply(raw))
    applied = wrong = 0
    for photo in np.unique(photos):
        mine = photos == photo
        if float(np.prod(confidence[mine])) >= shipped.threshold:
            applied += 1
            wrong += int((read_as[mine] + 1 != values[mine]).any())
    return applied, wrong


def head_of(
    examples: list[Example], variant: str, second_look_below: float
) -> tuple[ValueHead, list[int]]:
    if variant == "no-check":
        held = held_back(examples)
        skip = set(held)
        return fit_value_head([e for k, e in enumerate(examples) if k not in skip]), held
    adaptation = adapt(examples, second_look_below=second_look_below)
    return adaptation.head, list(adaptation.held)


def bench_part(
    classifier: PipClassifier, part: Part, args: argparse.Namespace, totals: dict[int, list[int]]
) -> None:
    below = classifier.second_look_below
    cold, cold_sure = read_cached(None, part.views, part.view_probabilities, below)
    for k in args.shots:
        taught, rest = np.flatnonzero(part.photos < k), np.flatnonzero(part.photos >= k)
        if not len(rest):
            continue
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            examples = []
            for j in taught:
                value = int(part.values[j])
                if args.poison and rng.random() < args.poison:
                    value = (value - 1 + int(rng.integers(1, 6))) % 6 + 1
                no_views = args.variant == "no-views"
                examples.append(
                    Example(
                        value,
                        part.views[j, 0],
                        cold[j].astype(np.float32),
                        photo=str(part.photos[j]),
                        views=None if no_views else part.views[j],
                        view_probabilities=None if no_views else part.view_probabilities[j],
                    )
                )
            head, held = head_of(examples, args.variant, below)
            wrong_taught = [n for n, j in enumerate(taught) if examples[n].value != part.values[j]]
            adapted, sure = read_cached(
                head, part.views[rest], part.view_probabilities[rest], below
            )
            truth, photos = part.values[rest], part.photos[rest]
            misread_cold = int((cold[rest].argmax(axis=1) + 1 != truth).sum())
            misread = int((adapted.argmax(axis=1) + 1 != truth).sum())
            applied_cold = rolls_applied(classifier, (cold[rest], cold_sure[rest]), truth, photos)
            applied = rolls_applied(classifier, (adapted, sure), truth, photos)
            gate = head.gate
            print(
                f"{part.name}, K={k}{f', seed {seed}' if args.poison else ''}: "
                f"{len(taught)} taught ({len(held)} held back, {len(set(held) & set(wrong_taught))} "
                f"of the {len(wrong_taught)} wrong); check {gate.shipped_errors}/"
                f"{gate.adapted_errors}/{gate.dice} errors, p {gate.p_value:.3f}, {'setup head reads' if head.active else 'shipped head'}; "
                f"{len(rest)} read: misread cold {misread_cold}, adapted {misread}; rolls applied "
                f"(wrong) cold {applied_cold[0]} ({applied_cold[1]}), adapted {applied[0]} ({applied[1]}) "
                f"of {len(np.unique(photos))}",
                flush=True,
            )
            row = totals.setdefault(k, [0] * 8)
            for n, figure in enumerate((len(rest), misread_cold, misread, *applied_cold, *applied)):
                row[n] += figure
            row[7] += len(np.unique(photos))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--parts", choices=("calibration", "validation"), default="calibration")
    parser.add_argument("--variant", choices=("shipped", "no-views", "no-check"), default="shipped")
    parser.add_argument(
        "--shots", type=lambda t: [int(k) for k in t.split(",")], default=[5, 10, 25, 50]
    )
    parser.add_argument("--poison", type=float, default=0.0)
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args(argv)
    classifier = PipClassifier.load()
    print(
        f"parts: {args.parts}; variant: {args.variant}; poisoned share: {args.poison}", flush=True
    )
    totals: dict[int, list[int]] = {}
    for name, images, crops in parts_to_read(classifier, args.parts):
        bench_part(classifier, read_part(classifier, name, images, crops), args, totals)
    print(
        "| K | dice read | misread cold | misread adapted | rolls applied cold (wrong) | adapted (wrong) |"
    )
    print("|---|---|---|---|---|---|")
    for k, (dice, cold, adapted, a_cold, w_cold, a_adapted, w_adapted, _) in sorted(totals.items()):
        print(
            f"| {k} | {dice} | {cold} | {adapted} | {a_cold} ({w_cold}) | {a_adapted} ({w_adapted}) |"
        )
    for k, row in sorted(totals.items()):
        print(f"misread_cold_k{k}: {row[1]}")
        print(f"misread_adapted_k{k}: {row[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
