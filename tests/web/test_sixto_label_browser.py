"""Sixto's row labels, in Debian's Chromium: a row whose die the player has used this turn
says so under its colour ("Orange", "die used"), and the label shows all of it, neither
cut ("die usec" on an 800 px tablet) nor running into the first box (a 360 px phone)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import SIXTO_ANN_BOB, hosted_table, seated_page
from tests.web.helpers import roll_json

pytestmark = pytest.mark.browser

# every row label of the sheet whose text does not fit: cut inside its box (wider or taller
# than the box shows), its words under the outline that marks a used die (drawn inside the
# box), or the label overlapping the row's first box beside (or, turned, below) it
LABELS_THAT_DO_NOT_FIT = """() => Array.from(document.querySelectorAll('.sx-row .row-label'))
  .filter((label) => {
    const box = label.getBoundingClientRect();
    const next = label.nextElementSibling.getBoundingClientRect();
    const overlaps = box.right > next.left + 0.5 && box.bottom > next.top + 0.5
      && next.right > box.left + 0.5 && next.bottom > box.top + 0.5;
    const style = getComputedStyle(label);
    const inset = style.outlineStyle === 'none' ? 0 : parseFloat(style.outlineWidth);
    const words = document.createRange();
    words.selectNodeContents(label);
    const text = words.getBoundingClientRect();
    const cut = text.left < box.left + inset - 0.5 || text.right > box.right - inset + 0.5
      || text.top < box.top + inset - 0.5 || text.bottom > box.bottom - inset + 0.5;
    return label.scrollWidth > label.clientWidth || label.scrollHeight > label.clientHeight
      || overlaps || cut;
  })
  .map((label) => label.innerText.replace(/\\s+/g, ' '))"""


@pytest.mark.parametrize(("width", "height"), [(800, 1280), (360, 780)])
def test_a_used_dies_row_label_shows_whole_on_a_tablet_and_a_phone(
    browser: Any, server: ServerProcess, width: int, height: int
) -> None:
    host, table = hosted_table(browser, server, SIXTO_ANN_BOB)
    device = {"viewport": {"width": width, "height": height}, "has_touch": True}
    ann = seated_page(browser, server, table, 0, device)
    api = f"{server.base_url}/api/tables/{table['table_id']}/actions"
    colours = ["red", "orange", "yellow", "green", "blue", "purple"]
    for action_id, move in (
        ("roll-000001", roll_json(*((colour, 3) for colour in colours))),
        ("keep-000001", {"kind": "keep", "player": 0}),
    ):
        assert host.request.post(api, data={"action_id": action_id, "move": move}).ok
    ann.click(".sx-row[data-row=orange] .box.legal >> nth=0")  # Ann crosses with orange
    label = ann.wait_for_selector(".sx-row[data-row=orange] .row-label.used")
    assert " ".join(label.inner_text().split()) == "Orange die used"
    shot(ann, f"sixto-used-label-{width}")
    assert ann.evaluate(LABELS_THAT_DO_NOT_FIT) == []
