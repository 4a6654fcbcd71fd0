"""The scoreboard on a café's TV, read from across the room for a whole evening: five
players with long names on a 1280x720 and a 1920x1080 screen.

- Whose turn it is and who is still to act (the tags by each name) stay readable from 3 m:
  never below 12 px on the screen once board.js has zoomed the sheets to fit.
- Nothing stands out sideways (no horizontal scrollbar) with five long names.
- When the Wi-Fi drops the connection line says the scores may be behind, not "your taps"
  (nobody taps the board), and the sheets still fit the screen under the taller line.
- When the host plays the game again, the TV follows to the next game's scoreboard by
  itself: nobody walks across the room to tap "Next game ready".
- At the end the final scores fit the screen without a scrollbar (their table stands for
  the sheets), the last roll's dice no longer show by them, and the board says the host
  starts the next game from their device (no "Play again" button: a TV is not tapped),
  on a TV the host did not open (it joined with the code) as on the host's own.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import hosted_table
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000
LONG_NAMES = [
    "Maximiliane Hohenzollern",
    "Bartholomew Fitzgerald",
    "Anastasia Papadopoulou",
    "Christopher Vandenberg",
    "Guadalupe Montenegro",
]
SCREENS = [(1280, 720), (1920, 1080)]
# the smallest text a player reads from across the room on a TV, as large as the names in
# the sheets (the tags' 12 px showed at 7 px on a 1280x720 screen once the five sheets were
# zoomed to fit)
MIN_TAG_PX = 12

TAG_SIZES = """() => Array.from(document.querySelectorAll('section.sheet .tag')).map((tag) => {
  const zoom = parseFloat(getComputedStyle(tag.closest('.sheets')).zoom) || 1;
  return parseFloat(getComputedStyle(tag).fontSize) * zoom;
})"""
SCROLLS = """() => {
  const page = document.scrollingElement;
  return {sideways: page.scrollWidth - page.clientWidth, down: page.scrollHeight - page.clientHeight};
}"""


def five_player_board(browser: Any, server: ServerProcess, width: int, height: int) -> Any:
    """The host's TV showing the scoreboard of a five-player Qwixx table after a roll (Ann
    rolling, every player to act on the white sum)."""
    host, table = hosted_table(
        browser,
        server,
        {"game": "qwixx", "options": {"players": 5}, "players": LONG_NAMES},
        {"viewport": {"width": width, "height": height}},
    )
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    rolled = host.request.post(
        f"{api}/actions", data={"action_id": "tv-roll-0001", "move": QWIXX_ROLL_7}
    )
    assert rolled.status == 200, rolled.text()
    board = host.new_page()
    board.goto(f"{server.base_url}/t/{table['table_id']}/board")
    board.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)
    board.wait_for_selector("body[data-board-fitted=yes] section.sheet .tag.act")
    return board


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_the_turn_tags_read_from_across_the_room(
    browser: Any, server: ServerProcess, width: int, height: int
) -> None:
    board = five_player_board(browser, server, width, height)
    sizes = board.evaluate(TAG_SIZES)
    assert len(sizes) >= 5  # Ann's "turn" and the five "to act"
    assert min(sizes) >= MIN_TAG_PX, sizes
    assert board.evaluate(SCROLLS)["sideways"] <= 0
    shot(board, f"board-tv-five-long-names-{width}x{height}")


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_the_board_offline_says_the_scores_may_be_behind(
    browser: Any, server: ServerProcess, width: int, height: int
) -> None:
    board = five_player_board(browser, server, width, height)
    board.context.set_offline(True)
    board.wait_for_selector("#conn[data-conn=offline]", timeout=DEADLINE_MS)
    said = board.inner_text("#conn")
    assert "tap" not in said and said.startswith("Offline"), said
    # the taller line pushed the sheets down: they are fitted again, no scrollbar
    board.wait_for_function(
        "() => document.scrollingElement.scrollHeight <= document.scrollingElement.clientHeight",
        timeout=DEADLINE_MS,
    )
    assert board.evaluate(SCROLLS) == {"sideways": 0, "down": 0}
    shot(board, f"board-tv-offline-{width}x{height}")
    board.context.set_offline(False)
    board.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)


def test_the_board_follows_the_next_game_by_itself(browser: Any, server: ServerProcess) -> None:
    board = five_player_board(browser, server, 1280, 720)
    finished_id = board.url.split("/t/")[1].split("/")[0]
    api = f"{server.base_url}/api/tables/{finished_id}"
    host = board.context
    assert host.request.post(f"{api}/end").ok
    board.wait_for_selector(".live.finished", timeout=DEADLINE_MS)
    again = host.request.post(f"{api}/play_again")
    assert again.status == 201, again.text()
    next_id = again.json()["table_id"]
    board.wait_for_url(f"**/t/{next_id}/board", timeout=DEADLINE_MS)
    board.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)
    assert board.locator(".live.finished").count() == 0
    assert board.locator("section.sheet").count() == 5
    shot(board, "board-tv-next-game")


def finished_five_player_board(browser: Any, server: ServerProcess, width: int, height: int) -> Any:
    """The host's TV once the host ended the five-player game after a roll: the end card."""
    board = five_player_board(browser, server, width, height)
    table_id = board.url.split("/t/")[1].split("/")[0]
    assert board.context.request.post(f"{server.base_url}/api/tables/{table_id}/end").ok
    board.wait_for_selector(".live.finished .outcome", timeout=DEADLINE_MS)
    return board


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_the_board_end_fits_the_screen(
    browser: Any, server: ServerProcess, width: int, height: int
) -> None:
    # the end card and its table of final scores fill the screen without a scrollbar (the
    # sheets drawn at twice their size under it scrolled the page to ~4000 px)
    board = finished_five_player_board(browser, server, width, height)
    board.wait_for_function(
        "() => document.scrollingElement.scrollHeight <= document.scrollingElement.clientHeight",
        timeout=DEADLINE_MS,
    )
    assert board.evaluate(SCROLLS) == {"sideways": 0, "down": 0}
    totals = board.locator(".outcome .breakdown td.total")
    assert totals.count() == 5
    for row in range(5):
        box = totals.nth(row).bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, (row, box)
    shot(board, f"board-tv-end-{width}x{height}")


def test_the_board_end_hides_the_last_roll(browser: Any, server: ServerProcess) -> None:
    # the game is over: the last roll's dice no longer show by the final scores
    board = finished_five_player_board(browser, server, 1920, 1080)
    assert board.locator(".live .dice").count() == 1  # still in the page, for the phones
    assert not board.locator(".live .dice").is_visible()


def test_the_board_end_says_the_host_starts_the_next_game(
    browser: Any, server: ServerProcess
) -> None:
    # a TV is not tapped: no "Play again" button on it, words pointing to the host's device
    board = finished_five_player_board(browser, server, 1280, 720)
    assert board.locator("[data-play-again]:visible").count() == 0
    said = board.inner_text(".next-game")
    assert "host" in said and "tap" not in said.lower(), said


def test_a_board_the_host_did_not_open_says_the_host_starts_the_next_game(
    browser: Any, server: ServerProcess
) -> None:
    # a café's TV joined with the table's code: at the end it said nothing of a next game
    # until the host played again (only the host's own board had these words)
    host, table = hosted_table(
        browser, server, {"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]}
    )
    tv = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    assert tv.request.post(server.base_url + "/api/join", data={"code": table["code"]}).ok
    tv.goto(f"{server.base_url}/t/{table['table_id']}/board")
    tv.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)
    assert host.request.post(f"{server.base_url}/api/tables/{table['table_id']}/end").ok
    tv.wait_for_selector(".live.finished .outcome", timeout=DEADLINE_MS)
    words = tv.locator(".next-game-on-board")
    expect(words).to_be_visible(timeout=DEADLINE_MS)
    said = words.inner_text()
    assert "host starts the next game" in said and "follows by itself" in said, said
    assert tv.locator(".next-game button:visible").count() == 0
    assert tv.evaluate(SCROLLS) == {"sideways": 0, "down": 0}
    shot(tv, "board-tv-end-not-the-hosts")
    # the same device's table view does not follow by itself: it is not told it does
    tv.goto(f"{server.base_url}/t/{table['table_id']}")
    tv.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)
    assert tv.locator(".next-game-on-board:visible").count() == 0
