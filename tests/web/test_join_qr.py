"""The join QR code keeps the standard's quiet zone: four light modules round the code
(ISO/IEC 18004), so a phone finds its edge against any table or page behind it."""

from __future__ import annotations

import re

import cv2
import numpy as np

from companion.web.routes.pages import QR_QUIET_ZONE, qr_svg

JOIN_URL = "http://192.168.1.20:8000/join?code=K7QX-2M9P"


def modules_of(svg: str) -> tuple[int, np.ndarray]:
    """The code's side in modules (its viewBox) and a grid with the dark modules set,
    read from the path's unit squares ("Mx,yH..V..H..z")."""
    side = int(re.search(r'viewBox="0 0 (\d+) \1"', svg).group(1))  # type: ignore[union-attr]
    grid = np.zeros((side, side), bool)
    for x, y in re.findall(r"M(\d+),(\d+)H", svg):
        grid[int(y), int(x)] = True
    return side, grid


def test_the_join_code_has_four_light_modules_on_every_side() -> None:
    side, grid = modules_of(str(qr_svg(JOIN_URL)))
    rows = np.flatnonzero(grid.any(axis=1))
    columns = np.flatnonzero(grid.any(axis=0))
    assert QR_QUIET_ZONE == 4
    assert (rows[0], columns[0]) == (4, 4)
    assert (side - 1 - rows[-1], side - 1 - columns[-1]) == (4, 4)


def test_the_code_drawn_as_the_page_draws_it_reads_back_as_the_join_address() -> None:
    side, grid = modules_of(str(qr_svg(JOIN_URL)))
    # dark modules black on white, 5 px a module, no margin but the code's own
    picture = np.where(np.kron(grid, np.ones((5, 5), bool)), 0, 255).astype(np.uint8)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(cv2.cvtColor(picture, cv2.COLOR_GRAY2BGR))
    assert text == JOIN_URL
