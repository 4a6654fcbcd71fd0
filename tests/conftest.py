"""Fixtures for the whole suite.

`browser` lives here, once, and per test module: Playwright's sync API keeps its own event
loop running in the main thread for as long as it is open. A second instance cannot start
while one is open, and no later test could call `asyncio.run()` while a session-wide one
stayed open, so each browser module opens Chromium and closes it when it is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, ServerProcess, free_port

if TYPE_CHECKING:
    import numpy as np

    from companion.vision.types import DieBox


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A real `companion serve` process on a free loopback port with its own data folder."""
    process = ServerProcess(tmp_path / "data", free_port())
    process.start()
    try:
        yield process
    finally:
        process.stop()


ADAPT_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "adapt"
ADAPT_CELL = 48  # px of a mosaic cell (tests/fixtures/adapt/make.py)
ADAPT_COLUMNS = 16


@pytest.fixture(scope="session")
def mosaic() -> tuple[np.ndarray, list[DieBox], np.ndarray]:
    """The adaptation fixture (tests/fixtures/adapt, made by its make.py) as the adaptation
    tests read it: the mosaic image (BGR), each cell's box as the pip classifier frames a
    die (a side of CELL / its crop margin at the cell's centre), and the cells' values."""
    return read_mosaic("tomitomi_validation.png")


@pytest.fixture(scope="session")
def fine_tune_mosaic() -> tuple[np.ndarray, list[DieBox], np.ndarray]:
    """The same cells with the ring's disc a darker grey, for the setup's fine-tune (its
    reason: tests/fixtures/adapt/make.py)."""
    return read_mosaic("tomitomi_validation_ring230.png")


def read_mosaic(name: str) -> tuple[np.ndarray, list[DieBox], np.ndarray]:
    import csv

    import cv2
    import numpy as np

    from companion.vision.classifier import PipClassifier
    from companion.vision.types import DieBox

    image = cv2.imread(str(ADAPT_FIXTURE / name), cv2.IMREAD_COLOR)
    assert image is not None
    with open(ADAPT_FIXTURE / "labels.csv", newline="", encoding="utf-8") as handle:
        values = np.array([int(row["value"]) for row in csv.DictReader(handle)])
    side = ADAPT_CELL / PipClassifier.load().margin
    cell, columns = ADAPT_CELL, ADAPT_COLUMNS
    boxes = [
        DieBox((k % columns) * cell + cell / 2, (k // columns) * cell + cell / 2, side, side)
        for k in range(len(values))
    ]
    return image, boxes, values
