"""Table Companion as a player with low vision, a keyboard only or a screen reader meets it,
in Debian's Chromium: the text on the coloured rows and dice is readable (contrast at least
4.5:1, computed from the page's styles), every sheet box names its row, number and state,
the focus stays where the player was when the sheet redraws after a keyboard cross, and a
new roll is read out through a live region."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess
from tests.web.devices import TABLET, seated_page

pytestmark = pytest.mark.browser

PLAYERS = ["Ann", "Bob", "Cy"]

# WCAG 2's contrast ratio of an element's text colour against the first opaque background
# behind it (the patterns over the row labels are light stripes: the flat colour is what
# the text sits on)
CONTRAST = """(element) => {
  function channels(colour) { return colour.match(/[\\d.]+/g).map(Number); }
  function luminance(colour) {
    const [r, g, b] = channels(colour).slice(0, 3).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function background(el) {
    for (; el; el = el.parentElement) {
      const colour = getComputedStyle(el).backgroundColor;
      const parts = channels(colour);
      if (parts.length < 4 || parts[3] > 0.5) return colour;
    }
    return "rgb(255, 255, 255)";
  }
  const text = luminance(getComputedStyle(element).color);
  const behind = luminance(background(element));
  return (Math.max(text, behind) + 0.05) / (Math.min(text, behind) + 0.05);
}"""

# the text on colour: each sheet's row labels and its boxes' numbers, the roll entry's
# colour names and faces
COLOURED_TEXT = ".row-label, .row-label small, .box:not(.lock), .picker-label, .face"


def new_table(server: ServerProcess, page: Any, game: str) -> dict[str, Any]:
    created = page.request.post(
        server.base_url + "/api/tables",
        data={"game": game, "options": {"players": 3}, "players": PLAYERS},
    )
    assert created.status == 201
    return dict(created.json())


@pytest.mark.parametrize("game", ["qwixx", "sixto"])
def test_text_on_the_coloured_rows_reads_at_4_5_to_1(
    browser: Any, server: ServerProcess, game: str
) -> None:
    """Yellow row labels were white on yellow (2.3:1), green ones white on green (3.9:1),
    green box numbers green on white (3.9:1), orange dice faces white on orange (2.8:1)."""
    host = browser.new_context(**TABLET).new_page()
    table = new_table(server, host, game)
    page = seated_page(browser, server, table, 0, TABLET)
    texts = page.locator(f"#live :is({COLOURED_TEXT})")
    assert texts.count() > 40
    low = []
    for index in range(texts.count()):
        element = texts.nth(index)
        ratio = element.evaluate(CONTRAST)
        if ratio < 4.5:
            low.append(f"{element.inner_text()!r} ({element.get_attribute('class')}): {ratio:.2f}")
    assert low == []
