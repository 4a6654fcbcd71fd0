"""The end of a game, in Debian's Chromium on a phone: nothing covers the "Game over"
card (the undo's note, which the sticky banner keeps for a while, is dropped at the end),
and the undo that reopens a game its rules ended says so and asks once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE, seated_page
from tests.web.helpers import QWIXX_ROLL_7
from tests.web.test_undo_browser import qwixx_table

pytestmark = pytest.mark.browser

DEADLINE_MS = 20_000


def passes(host: Any, api: str, tag: str, *seats: int) -> None:
    """The host's device passes for `seats`, in order."""
    for number, seat in enumerate(seats):
        move = {"kind": "pass", "player": seat}
        answer = host.request.post(
            f"{api}/actions", data={"action_id": f"{tag}-pass-{number}", "move": move}
        )
        assert answer.status == 200, answer.text()


def rolls(host: Any, api: str, tag: str) -> None:
    answer = host.request.post(
        f"{api}/actions", data={"action_id": f"{tag}-roll", "move": QWIXX_ROLL_7}
    )
    assert answer.status == 200, answer.text()


def turns_without_crosses(host: Any, api: str, actives: list[int]) -> None:
    """Whole turns in which nobody crosses: each active player takes a penalty."""
    for turn, active in enumerate(actives):
        rolls(host, api, f"turn-{turn}")
        passes(host, api, f"turn-{turn}", 1 - active, active, active)


def test_the_undo_note_never_covers_the_game_over_card(browser: Any, server: ServerProcess) -> None:
    """Ann passed on her phone, Bob acted on it, a roll came and Ann's fourth penalty
    ended the game at once: the note saying why her undo went away stayed its 10 s in the
    sticky banner, over the "Game over" card. At the end it goes."""
    host, table, api = qwixx_table(browser, server)
    turns_without_crosses(host, api, [0, 1, 0, 1, 0])  # Ann 3 penalties, Bob 2
    rolls(host, api, "bobs-turn")
    ann = seated_page(browser, server, table, 0, PHONE)
    ann.locator(".sheet-buttons button[data-move*='pass']").click()  # her white sum
    ann.locator("[data-undo]").wait_for(timeout=DEADLINE_MS)
    passes(host, api, "bobs-turn", 1, 1)  # Bob's third penalty: Ann's undo goes
    note = ann.locator(".banner #undo-note")
    note.wait_for(timeout=DEADLINE_MS)
    rolls(host, api, "last-turn")
    passes(host, api, "last-turn", 1, 0, 0)  # Ann's fourth penalty ends the game
    ann.locator(".outcome").wait_for(timeout=DEADLINE_MS)
    assert note.is_hidden()
    shot(ann, "game-over-uncovered-phone")
    ann.context.close()
    host.close()


def test_the_undo_that_reopens_a_game_says_so_and_asks_once(
    browser: Any, server: ServerProcess
) -> None:
    """Ann's fourth penalty ended the game; her phone kept "Undo pass (−5 penalty)" and one
    tap had the game running again. It says it reopens the game; the first tap asks, the
    second undoes."""
    host, table, api = qwixx_table(browser, server)
    turns_without_crosses(host, api, [0, 1, 0, 1, 0, 1])  # three penalties each
    rolls(host, api, "last-turn")
    passes(host, api, "last-turn", 1, 0)
    ann = seated_page(browser, server, table, 0, PHONE)
    ann.locator(".sheet-buttons button[data-move*='pass']").click()
    ann.locator(".sheet-buttons button[data-move*='pass']").click()  # "tap again": ends it
    ann.locator(".live.finished").wait_for(timeout=DEADLINE_MS)
    undo = ann.locator("[data-undo]")
    assert undo.inner_text() == "Undo pass (\N{MINUS SIGN}5 penalty): reopens the game"
    state_id = ann.get_attribute(".live", "data-state-id")
    undo.click()
    assert undo.inner_text() == "Tap again to undo: the game reopens"
    assert ann.get_attribute(".live", "data-state-id") == state_id  # nothing sent yet
    shot(ann, "undo-reopens-asks-phone")
    undo.click()
    ann.wait_for_selector(".live:not(.finished)", timeout=DEADLINE_MS)
    assert ann.locator(".outcome").count() == 0
    ann.context.close()
    host.close()
