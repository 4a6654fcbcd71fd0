"""The start page's options in Debian's Chromium, on a phone and a tablet: every option of
every game shows a plain label and a line of help (never a field name), the rarely changed
ones wait under "More options", no field cuts its value off (Sixto's colours), and the
defaults start a table as they are."""

from __future__ import annotations

from typing import Any

import pytest

from companion.rules.registry import GAME_NAMES
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, TABLET

pytestmark = pytest.mark.browser

RAW_NAMES = {"deal seed", "layouts", "purses", "rollers", "starter factor", "target", "target 0"}

OPTIONS = """() => Array.from(document.querySelectorAll('#options .option, #options .record-list'),
  (o) => ({
    name: o.dataset.option || o.dataset.field,
    label: (o.querySelector('.option-label, .record-title') || {}).textContent,
    help: (o.querySelector('.option-help') || {}).textContent || '',
    more: Boolean(o.closest('.more-options')),
    visible: o.checkVisibility(),
  }))"""

CUT_OFF = """() => Array.from(document.querySelectorAll(
    '#options input:not([type=checkbox]), #options textarea'))
  .filter((i) => i.checkVisibility())
  .filter((i) => i.scrollWidth > i.clientWidth + 1 || i.scrollHeight > i.clientHeight + 1
    || i.getBoundingClientRect().right > document.documentElement.clientWidth)
  .map((i) => i.name || i.dataset.key)"""


# a placeholder (what an empty value means) wider than its field (issue 26 item 9: Sixes'
# "two rounds around the table" was cut off on a tablet)
PLACEHOLDER_CUT = """() => { const c = document.createElement('canvas').getContext('2d');
  return Array.from(document.querySelectorAll('#options input[placeholder]'))
    .filter((i) => i.checkVisibility()).filter((i) => {
      const st = getComputedStyle(i); c.font = st.font;
      const room = i.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
      return c.measureText(i.placeholder).width > room; }).map((i) => i.name); }"""


def choose(page: Any, game: str) -> None:
    page.check(f"input[name=game][value={game}]")
    page.wait_for_selector("#options .option, #options .record-list")


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (TABLET, "tablet")])
def test_every_option_reads_as_words_with_help_and_room(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = browser.new_context(**device).new_page()
    page.goto(server.base_url + "/")
    for game in GAME_NAMES:
        choose(page, game)
        options = page.evaluate(OPTIONS)
        assert options, game
        for option in options:
            label = option["label"].strip()
            assert label and label.lower() not in RAW_NAMES and "_" not in label, option
            assert option["help"].strip(), option
            # the everyday options show at once, the rest only under "More options"
            assert option["visible"] != option["more"], option
        if any(o["more"] for o in options):
            page.click("#options .more-options > summary")
            assert all(o["visible"] for o in page.evaluate(OPTIONS))
        assert page.evaluate(CUT_OFF) == [], game
        assert page.evaluate(PLACEHOLDER_CUT) == [], game
        assert (
            page.evaluate(
                "Array.from(document.querySelectorAll('#options *'))"
                ".filter((e) => e.getClientRects().length && e.childNodes.length"
                " && parseFloat(getComputedStyle(e).fontSize) < 12).length"
            )
            == 0
        )
        shot(page, f"start-options-{game}-{name}")


def test_sixtos_colours_are_under_more_options_and_shown_whole(
    browser: Any, server: ServerProcess
) -> None:
    page = browser.new_context(**PHONE).new_page()
    page.goto(server.base_url + "/")
    choose(page, "sixto")
    colours = page.locator("textarea[name=colours]")
    assert not colours.is_visible()
    page.click("#options .more-options > summary")
    assert colours.is_visible()
    assert colours.input_value() == "red, orange, yellow, green, blue, purple"
    assert colours.evaluate(
        "(i) => i.scrollWidth <= i.clientWidth && i.scrollHeight <= i.clientHeight"
    )


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_defaults_start_a_table(browser: Any, server: ServerProcess, game: str) -> None:
    page = browser.new_context(**TABLET).new_page()
    page.goto(server.base_url + "/")
    choose(page, game)
    page.click("button[type=submit].primary")
    page.wait_for_url("**/t/*")
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.locator("section.sheet").count() >= 1


# every option's field as shown: its name and its value (a checkbox: checked or not)
SHOWN = """() => Array.from(document.querySelectorAll('#options [name]'),
  (i) => [i.name, i.type === 'checkbox' ? String(i.checked) : i.value])"""

# each choice's options marked as its default (the `selected` attribute)
MARKED_DEFAULTS = """() => Array.from(document.querySelectorAll('#options select'),
  (s) => [s.name, Array.from(s.options).filter((o) => o.defaultSelected).map((o) => o.value)])"""


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_default_is_the_fields_own_and_outlives_a_reset(
    browser: Any, server: ServerProcess, game: str
) -> None:
    """Players' phones: Sixes' "Colours of the two dice" showed an empty box. A list's
    default was only the textarea's current value, not its own default (a checkbox's
    likewise): whatever puts a form back to its defaults (a reset; a browser restoring the
    page) emptied it while every number kept its default. Each field now holds its
    default as its own."""
    page = browser.new_context(**PHONE).new_page()
    page.goto(server.base_url + "/")
    choose(page, game)
    shown = page.evaluate(SHOWN)
    if game == "sixes":
        assert ["dice", "white, white"] in shown
    # a choice (who rolls first) marks its default option as the default (`selected`):
    # without one a reset or a restored page falls back to whichever option comes first
    marked = page.evaluate(MARKED_DEFAULTS)
    assert marked == [[name, [value]] for name, value in shown if name in dict(marked)]
    if game == "qwixx":
        assert ["first_player", ["0"]] in marked
    for name, _ in marked:  # the host's pick, then a name typed (the options drawn again)
        page.select_option(f"#options select[name={name}]", index=1)
        page.fill("#names input >> nth=0", "Ann")
        assert page.evaluate(MARKED_DEFAULTS) == marked
        assert page.locator(f"#options select[name={name}]").input_value() == "1"
        page.fill("#names input >> nth=0", "Player 1")
    page.evaluate("document.getElementById('start-form').reset()")
    assert page.evaluate(SHOWN) == shown
