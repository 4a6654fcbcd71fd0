"""Start-page refusals in people's words (issue 26 item 7), in Debian's Chromium on a phone
and a tablet: an option named by its label (never "Options.purses[0]"), players by the names
just typed (never "player 2", whom the record calls seat 1), a sentence with a capital;
two players of one name are refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES

pytestmark = pytest.mark.browser


def start_page(browser: Any, server: ServerProcess, device: dict[str, Any], game: str) -> Any:
    page = browser.new_context(**device).new_page()
    page.goto(server.base_url + "/")
    page.check(f"input[name=game][value={game}]")
    page.wait_for_selector("#options .option, #options .record-list")
    return page


def name_players(page: Any, names: list[str]) -> None:
    page.fill("#player-count", str(len(names)))
    page.dispatch_event("#player-count", "change")
    page.wait_for_function(
        f"() => document.querySelectorAll('#names input').length === {len(names)}"
    )
    for field, name in zip(page.locator("#names input").all(), names, strict=True):
        field.fill(name)


def refusal(page: Any) -> str:
    page.click("#start-form button[type=submit]")
    page.wait_for_selector("#start-error:not([hidden])")
    text = str(page.inner_text("#start-error"))
    assert text[:1].isupper(), text
    for jargon in ("Options.", "player 1", "player 2", "Player 1", "Player 2", "JSON", "seat 0"):
        assert jargon not in text, text
    return text


def sixto_sheet_letters(page: Any, letters: list[str]) -> None:
    if not page.evaluate("document.querySelector('#options .more-options').open"):
        page.click("#options .more-options > summary")
    inputs = page.locator(".record-list[data-field=sheets] input[data-key=letter]").all()
    for field, letter in zip(inputs, letters, strict=True):
        field.fill(letter)


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_start_page_refusals_name_the_players_and_the_options(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = start_page(browser, server, device, "sixes")
    name_players(page, ["Dora", "Emil", "Finn"])
    page.click("#options .more-options > summary")
    page.fill("#options [name=purses]", "lots, 50, 50")
    assert refusal(page) == "Starting coins per player: Dora's must be a whole number"
    shot(page, f"start-words-purses-{name}")

    page = start_page(browser, server, device, "sixto")
    name_players(page, ["Dora", "Emil"])
    sixto_sheet_letters(page, ["A", "A"])
    # each seat's sheet by its letter only: a custom sheet's name goes with rows the page
    # does not take (an unexplained "Name" field stood there)
    labels = page.locator(".record-list[data-field=sheets] .record label").all_inner_texts()
    assert [text.strip() for text in labels] == ["Sheet letter", "Sheet letter"]
    assert refusal(page).startswith("Dora and Emil both have sheet A")
    sixto_sheet_letters(page, ["A", "Z"])
    said = refusal(page)
    assert "Emil" in said and "no project sheet 'Z'" in said
    shot(page, f"start-words-sheets-{name}")


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_two_players_of_one_name_are_refused(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    page = start_page(browser, server, device, "qwixx")
    name_players(page, ["Dora", "Emil", "dora "])
    said = refusal(page)
    assert said.startswith("Two players are called dora") and "different name" in said
    assert page.url.rstrip("/") == server.base_url  # no table was made
    shot(page, f"start-words-same-name-{name}")
