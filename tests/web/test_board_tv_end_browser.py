"""The end of every game on a café's TV scoreboard, watched live as the last action comes
in: Qwixx, Sixto, Sixis, Sixmix and Sixes, each with its fewest and most players (long
names), on a 1280x720 and a 1920x1080 screen.

- The end screen fits the screen: no scrollbar, every player's final score on it.
- Every word on it is on the screen, at least 12 px: no table whose columns scroll out
  of sight in its box (Sixto's 17), no Sixis round accounts running past the bottom.
- The final scores (the winner's above all) are drawn large, not at a phone's 16 px.
- Sixto is played move by move through the API from its first roll to its end, the board
  watching throughout.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

import pytest

from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.simulate import random_action
from tests.waiting import wait_until
from tests.web.conftest import ServerProcess, shot
from tests.web.test_board_tv_browser import LONG_NAMES, SCREENS
from tests.web.test_starter_browser import imported

pytestmark = pytest.mark.browser

DEADLINE_MS = 30_000
# the final scores: read from across the room as the running totals in the banner were
# (1.9rem), the winner's larger still
MIN_SCORE_PX = 30
MIN_WINNER_SCORE_PX = 40
# the fewest and the most players of each game (Sixis: 2 to 4, Sixes: 3 to 12; five is a
# full café table)
TABLES = [
    ("qwixx", 2),
    ("qwixx", 5),
    ("sixto", 2),
    ("sixto", 5),
    ("sixis", 2),
    ("sixis", 4),
    ("sixmix", 2),
    ("sixmix", 5),
    ("sixes", 3),
    ("sixes", 5),
]
# Sixis lists its rounds on the end screen: three rounds, an evening's game
SIXIS_ROUNDS = 3
# any words on the end screen, read from across the room (as the sheets' names and tags)
MIN_TEXT_PX = 12

FITS = """() => ({
  down: document.documentElement.scrollHeight - window.innerHeight,
  sideways: document.documentElement.scrollWidth - window.innerWidth,
})"""
# the size of every piece of text shown on the end screen (zoom included)
TEXT_SIZES = """() => {
  const sizes = [];
  const walker = document.createTreeWalker(document.querySelector('.live'), NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!node.textContent.trim() || !el.getClientRects().length || el.closest('.sr-only')) continue;
    let zoom = 1;
    for (let e = el; e; e = e.parentElement) zoom *= parseFloat(getComputedStyle(e).zoom) || 1;
    sizes.push([node.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(el).fontSize) * zoom]);
  }
  return sizes;
}"""
SCORES = """() => Array.from(document.querySelectorAll('.outcome .breakdown tbody tr'))
  .map((row) => {
    const total = row.querySelector('.total');
    const box = total.getBoundingClientRect();
    return {winner: row.classList.contains('winner'), px: parseFloat(getComputedStyle(total).fontSize),
            bottom: box.bottom, right: box.right, shown: box.width > 0};
  })"""


# a table of the end card that scrolls inside its box (columns hidden under the sticky
# Total): the page does not scroll, yet the TV shows only part of it
CLIPPED_TABLES = """() => Array.from(document.querySelectorAll('.outcome .breakdown-scroll'))
  .filter((box) => box.scrollWidth > box.clientWidth + 1)
  .map((box) => [box.scrollWidth, box.clientWidth])"""


def finished_record(game_name: str, players: int) -> dict[str, Any]:
    """A whole game of `game_name` for `players` long-named players, moved at random from
    a fixed seed to the game's own end, as the table's record keeps it."""
    game = find_game(game_name)
    options = game.options_for(players)
    if game_name == "sixis":
        options = dataclasses.replace(options, rounds=SIXIS_ROUNDS)
    session = Session(game, options, LONG_NAMES[:players])
    rng = random.Random(7)
    while session.outcome() is None:
        # Sixes: its voluntary end only once nothing else is legal, a full game
        session.act(random_action(game, session.state, rng, frozenset({"end_game"})))
    return session.to_record()


def board_watching(browser: Any, server: ServerProcess, record: dict[str, Any], cut: int) -> Any:
    """The TV's scoreboard (opened by the host's device) of `record` imported without its
    last `cut` actions, which the host's device then sends one by one while the board
    watches; returned once the board shows the end screen fitted."""
    width, height = SCREENS[0]
    screen = {"viewport": {"width": width, "height": height}}
    host, table = imported(browser, server, {**record, "actions": record["actions"][:-cut]}, screen)
    board = host.new_page()
    board.goto(f"{server.base_url}/t/{table['table_id']}/board")
    board.wait_for_selector("#conn[data-conn=live]", timeout=DEADLINE_MS)
    board.wait_for_selector("body[data-board-fitted=yes] section.sheet", timeout=DEADLINE_MS)
    api = f"{server.base_url}/api/tables/{table['table_id']}/actions"
    for number, action in enumerate(record["actions"][-cut:]):
        data = {"action_id": f"tv-end-{number:05}", "move": action["move"]}
        taken = functools.partial(sent_unless_too_fast, host, api, data)
        wait_until(taken, what=f"action {number} taken")
    board.wait_for_selector(".live.finished .outcome", timeout=DEADLINE_MS)
    return board


def sent_unless_too_fast(device: Any, api: str, data: dict[str, Any]) -> bool:
    """Send one action; False when the device's rate refused it (429: nothing applied, the
    same action id is sent again), any other refusal fails the test. A whole game sent as
    fast as the test can is faster than any player's device may send."""
    sent = device.request.post(api, data=data)
    if sent.status == 429:
        return False
    assert sent.ok, (data, sent.text())
    return True


def board_at_screen(board: Any, width: int, height: int) -> None:
    board.set_viewport_size({"width": width, "height": height})
    board.wait_for_function(
        "([w, h]) => window.innerWidth === w && window.innerHeight === h",
        arg=[width, height],
        timeout=DEADLINE_MS,
    )


def assert_the_end_fits_and_reads(board: Any, players: int, name: str) -> None:
    """At each TV size: no scrollbar (nor a table scrolling in its box), every final score
    on the screen, every word at least MIN_TEXT_PX."""
    for width, height in SCREENS:
        board_at_screen(board, width, height)
        shot(board, f"{name}-{width}x{height}")
        assert board.evaluate(FITS) == {"down": 0, "sideways": 0}, (width, height)
        clipped = board.evaluate(CLIPPED_TABLES)
        assert clipped == [], (width, clipped)
        scores = board.evaluate(SCORES)
        assert len(scores) == players and all(s["shown"] for s in scores), scores
        assert all(s["bottom"] <= height and s["right"] <= width for s in scores), scores
        small = [(text, px) for text, px in board.evaluate(TEXT_SIZES) if px < MIN_TEXT_PX]
        assert small == [], (width, small)


@pytest.mark.parametrize(("game_name", "players"), TABLES)
def test_every_games_end_fits_the_tv(
    browser: Any, server: ServerProcess, game_name: str, players: int
) -> None:
    record = finished_record(game_name, players)
    board = board_watching(browser, server, record, cut=1)
    words = board.inner_text(".outcome")
    for player in record["players"]:
        assert player in words
    assert_the_end_fits_and_reads(board, players, f"board-tv-end-{game_name}-{players}")


def test_a_sixto_game_played_to_its_end_on_the_board(browser: Any, server: ServerProcess) -> None:
    # every move from the first roll on, through the API, the board watching each one
    record = finished_record("sixto", 2)
    board = board_watching(browser, server, record, cut=len(record["actions"]))
    assert board.locator(".live.finished section.sheet:visible").count() == 0
    assert_the_end_fits_and_reads(board, 2, "board-tv-sixto-played-to-its-end")


@pytest.mark.parametrize(("game_name", "players"), [("qwixx", 5), ("sixto", 5), ("sixis", 4)])
def test_the_final_scores_read_from_across_the_room(
    browser: Any, server: ServerProcess, game_name: str, players: int
) -> None:
    # they were 16-17 px, a phone's size, on a 1280x720 TV: now as large as the running
    # totals were, the winner's larger still, and the end still fits the screen
    board = board_watching(browser, server, finished_record(game_name, players), cut=1)
    for width, height in SCREENS:
        board_at_screen(board, width, height)
        scores = board.evaluate(SCORES)
        assert min(s["px"] for s in scores) >= MIN_SCORE_PX, (width, scores)
        assert min(s["px"] for s in scores if s["winner"]) >= MIN_WINNER_SCORE_PX, scores
        assert all(s["bottom"] <= height for s in scores), scores
        assert board.evaluate(FITS) == {"down": 0, "sideways": 0}, (width, height)
    shot(board, f"board-tv-final-scores-{game_name}-{players}")


def test_the_final_scores_grow_with_a_larger_tv(browser: Any, server: ServerProcess) -> None:
    # sized for 1280x720, the end screen drew the same 32 px totals on a 1920x1080 TV, small
    # in the middle of empty space: its text grows with the screen, and still fits both
    board = board_watching(browser, server, finished_record("qwixx", 2), cut=1)
    totals = {}
    for width, height in SCREENS:
        board_at_screen(board, width, height)
        totals[width] = [s["px"] for s in board.evaluate(SCORES)]
        assert board.evaluate(FITS) == {"down": 0, "sideways": 0}, (width, height)
    small, large = totals[SCREENS[0][0]], totals[SCREENS[-1][0]]
    # each player's total, the winner's too, at least a quarter larger on the larger TV
    assert all(big >= 1.25 * px for px, big in zip(small, large, strict=True)), totals
    shot(board, "board-tv-final-scores-1920x1080")
