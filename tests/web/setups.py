"""Shared by the setup tests: a rendered Qwixx throw at rest, and a real server whose
camera replays it, calibrated as the setup "kitchen"."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from companion.rules.registry import standard_dice_sets
from companion.table.camera_settings import CameraSettings
from companion.vision.calibration import TableCalibration, save_calibration
from companion.vision.colour import builtin_dice_set
from companion.vision.types import DieBox, DieReading
from companion.web.settings import Settings
from tests.live.replay import ClipReader, LiveServer, Throw, render_throw, wait_until, write_throw
from tests.web.conftest import free_port

QWIXX = standard_dice_sets()["qwixx"]


def rest_of(seed: int) -> tuple[np.ndarray, tuple[DieReading, ...], Throw]:
    """A rendered Qwixx throw's resting frame, its dice as the camera reads them, and the
    throw cut to that one frame (so a replay of it ends on the dice at rest)."""
    throw = render_throw(QWIXX, seed=seed)
    rest = throw.frames[throw.rest_index]
    dice = tuple(
        DieReading(DieBox(d.cx, d.cy, d.side, d.side, d.angle), d.value, 0.99, d.colour)
        for d in rest.dice
    )
    return rest.image, dice, Throw([rest], throw.rest)


@contextmanager
def calibrated_camera(
    tmp_path: Path, seed: int = 1503, whole_throw: bool = False
) -> Iterator[LiveServer]:
    """A real server calibrated as "kitchen" whose camera replays a throw: cut to its
    resting frame (the latest reading shows the dice), or whole (tumbling, rest, picked
    up: the camera reports it as a roll)."""
    folder = tmp_path / "camera"
    calibrations = tmp_path / "calibration"
    kitchen = dataclasses.replace(builtin_dice_set("qwixx"), name="kitchen")
    path = save_calibration(TableCalibration(kitchen), calibrations / "kitchen.json")
    throw = render_throw(QWIXX, seed=seed) if whole_throw else rest_of(seed)[2]
    reader = ClipReader()
    reader.throw = throw
    write_throw(folder, throw)
    camera = CameraSettings(images=folder, calibration=path, calibration_dir=calibrations)
    settings = Settings(port=free_port(), data_dir=tmp_path / "data", camera=camera)
    with LiveServer(settings, lambda: reader) as server:
        if not whole_throw:
            wait_until(lambda: _dice_in_view(server), what="the camera's reading of the throw")
        yield server


def _dice_in_view(server: LiveServer) -> bool:
    reading = server.hub.runtime.latest()[1]
    return reading is not None and bool(reading.dice)
