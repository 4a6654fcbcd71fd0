"""What a player with low vision or a screen reader still met after tests/web/test_a11y_browser.py,
in Debian's Chromium: a phone zoomed to 200 % (195 CSS px wide) keeps each game's actions
and cards on the screen, and the turn coming to a player is read out. One server for the
module: every test makes its own table on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import ServerProcess, free_port
from tests.web.devices import TABLET, seated_page
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

# a 390 px phone zoomed to 200 %: the page lays out in half the CSS pixels
PHONE_AT_200 = {"viewport": {"width": 195, "height": 422}, "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data: Path = tmp_path_factory.mktemp("accessibility") / "data"
    process = ServerProcess(data, free_port())
    process.start()
    try:
        yield process
    finally:
        process.stop()


def new_table(server: ServerProcess, browser: Any, game: str, players: int = 3) -> dict[str, Any]:
    host = browser.new_context(**TABLET)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={
            "game": game,
            "options": {"players": players},
            "players": ["Ann", "Bob", "Cy"][:players],
        },
    )
    assert created.status == 201, created.text()
    return dict(created.json())


# what of `selector` is drawn past the screen's right or left edge: [its words, its left,
# its right] (the sheet scrolls sideways inside its box, so nothing makes the page wider)
OFF_SCREEN = """(selector) => Array.from(document.querySelectorAll(selector))
  .filter((el) => el.getClientRects().length)
  .map((el) => [el.innerText.trim().replace(/\\s+/g, " ").slice(0, 40), el.getBoundingClientRect()])
  .filter(([, box]) => box.left < 0 || box.right > document.documentElement.clientWidth + 0.5)
  .map(([words, box]) => [words, Math.round(box.left), Math.round(box.right)])"""


def test_pound_and_the_purses_stay_on_a_phone_screen_at_200_percent(
    browser: Any, server: ServerProcess
) -> None:
    """Sixes on a phone zoomed to 200 %: the POUND button ran 55 px past the screen's
    right edge ("POUN", its hint "First pound after"), and so did the purses table's
    "Won/lost" column and the "Roller" box: the sheet's one column grew to the table's
    widest line."""
    table = new_table(server, browser, "sixes")
    cy = seated_page(browser, server, table, 2, PHONE_AT_200)
    cy.get_by_role("button", name="Pound the table").wait_for()
    assert (
        cy.evaluate(OFF_SCREEN, "#live button, .sixes-stat, .sixes-purses th, .sixes-purses td")
        == []
    )


def test_the_sixis_cards_keep_their_words_at_200_percent(
    browser: Any, server: ServerProcess
) -> None:
    """Sixis on a phone zoomed to 200 %: the arms of cards beside the Sixis card shrank to
    slivers some 40 px wide ("Cy (you)" one letter a line, a card's name unreadable); the
    board is one column there now, each card as wide as the sheet."""
    table = new_table(server, browser, "sixis")
    cy = seated_page(browser, server, table, 2, PHONE_AT_200)
    cards = cy.locator(".sxi-card")
    assert cards.count() >= 10
    sheet_width = cy.locator(".sxi-board").evaluate("(el) => el.clientWidth")
    narrow = [
        (card.inner_text().split("\n")[:2], round(box["width"]))
        for card in cards.all()
        if (box := card.bounding_box())
        and card.get_attribute("data-card") != "sixis"
        and box["width"] < sheet_width - 2
    ]
    assert narrow == []
    assert cy.evaluate(OFF_SCREEN, ".sxi-card, .sxi-seat") == []


def post_move(
    page: Any, server: ServerProcess, table: dict[str, Any], name: str, move: Any
) -> None:
    """`move` sent as the device of `page` sends it (its seat's token)."""
    api = f"{server.base_url}/api/tables/{table['table_id']}/actions"
    answer = page.request.post(api, data={"action_id": name, "move": move})
    assert answer.ok, answer.text()


def test_a_player_hears_when_the_turn_comes_to_them(browser: Any, server: ServerProcess) -> None:
    """Qwixx, Ann and Bob. Only a new roll was read out: Ann heard nothing when the white
    sum was done and her colour step began, nor Bob when the next roll became his."""
    table = new_table(server, browser, "qwixx", players=2)
    ann = seated_page(browser, server, table, 0, TABLET)
    bob = seated_page(browser, server, table, 1, TABLET)
    post_move(ann, server, table, "roll-0001", QWIXX_ROLL_7)
    for page in (ann, bob):
        page.wait_for_selector(".live[data-state-id='1']")
    announced = bob.locator("#announce")
    assert announced.inner_text().startswith("Roll: white 3, white 4")
    post_move(ann, server, table, "ann-white-pass", {"kind": "pass", "player": 0})
    post_move(bob, server, table, "bob-white-pass", {"kind": "pass", "player": 1})
    ann.wait_for_selector(".live[data-state-id='3']")
    turn = ann.inner_text(".turn-text")
    assert "your turn" in turn.lower()
    ann.locator("#announce", has_text=turn).wait_for(state="attached")
    post_move(ann, server, table, "ann-colour-pass", {"kind": "pass", "player": 0})
    bob.wait_for_selector(".live[data-state-id='4']")
    assert bob.inner_text(".turn-text").startswith("You roll")
    bob.locator("#announce", has_text="You roll").wait_for(state="attached")


def test_the_roll_entrys_faces_stay_on_a_phone_screen_at_200_percent(
    browser: Any, server: ServerProcess
) -> None:
    """Sixto, Ann to roll, her phone zoomed to 200 %: the roll entry kept six faces a line,
    each at least a finger wide, so faces 4 to 6 ran off the screen's right edge and the
    whole page scrolled sideways. Three faces a line there now."""
    table = new_table(server, browser, "sixto", players=2)
    ann = seated_page(browser, server, table, 0, PHONE_AT_200)
    faces = ann.locator(".die-picker .face")
    assert faces.count() == 6 * ann.locator(".die-picker").count() > 0
    assert ann.evaluate(OFF_SCREEN, ".die-picker .face, .roll-actions button") == []
    assert min(box["width"] for face in faces.all() if (box := face.bounding_box())) >= 44
    widths = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    scrolled, shown = ann.evaluate(widths)
    assert scrolled == shown


# how often the words of #conn (a live region: role status) are written from now on
COUNT_CONN_WRITES = """() => {
  window.connWrites = 0;
  new MutationObserver(() => { window.connWrites += 1; }).observe(
    document.getElementById("conn"), {childList: true, characterData: true, subtree: true});
}"""


def test_the_connection_line_is_not_read_out_at_every_move(
    browser: Any, server: ServerProcess
) -> None:
    """The connection line ("live") is a live region in the banner; each redraw wrote its
    words again, unchanged, and a screen reader reads a live region at every write: Bob
    heard "live" after every move at the table."""
    table = new_table(server, browser, "qwixx", players=2)
    ann = seated_page(browser, server, table, 0, TABLET)
    bob = seated_page(browser, server, table, 1, TABLET)
    bob.evaluate(COUNT_CONN_WRITES)
    post_move(ann, server, table, "roll-0001", QWIXX_ROLL_7)
    bob.wait_for_selector(".live[data-state-id='1']")
    post_move(ann, server, table, "ann-white-pass", {"kind": "pass", "player": 0})
    bob.wait_for_selector(".live[data-state-id='2']")
    assert bob.inner_text("#conn") == "live"
    assert bob.evaluate("window.connWrites") == 0


def test_the_start_page_fits_a_phone_screen_at_200_percent(
    browser: Any, server: ServerProcess
) -> None:
    """The start page on a phone zoomed to 200 %: the players' names and the options ran
    past the screen's right edge (a fieldset is as wide as its widest field, each name's
    field some 200 px), so the page scrolled sideways and the names were cut."""
    page = browser.new_context(**PHONE_AT_200).new_page()
    page.goto(server.base_url + "/")
    page.locator("#names input").first.wait_for()
    assert page.evaluate(OFF_SCREEN, "fieldset, input, select, button") == []
    widths = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    scrolled, shown = page.evaluate(widths)
    assert scrolled == shown
