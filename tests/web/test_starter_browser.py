"""Rules the table could not follow (issue 17), in Debian's Chromium on a phone and on a
tablet: after a Sixmix round with a tie for the lowest row the companion's starter hands
the start to the youngest of the tied players (a move the record holds); in a Sixis game
of two rounds the host lets another player open the second round."""

from __future__ import annotations

from typing import Any

import pytest

from companion.rules.base import Die, Roll
from companion.rules.registry import find_game
from companion.rules.session import Session
from companion.rules.sixis import Options as SixisOptions
from companion.rules.sixis import TakeCard
from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES, seated_page

pytestmark = pytest.mark.browser

THREE = ["Kari", "Ola", "Mia"]


def sixmix_round_all_ones() -> dict[str, Any]:
    """A Sixmix record of one round in which every die shows 1: all three rows 111,111, a
    tie for the lowest row among all three players."""
    game = find_game("sixmix")
    session = Session(game, game.options_for(3), THREE)
    while session.state.round == 1:
        turn = session.turn()
        assert turn.dice is not None
        session.act(Roll(dice=tuple(Die(c, 1) for c in turn.dice.colours)))
        session.act(session.legal_moves(session.state.active)[0])
    return session.to_record()


def sixis_first_round_ended() -> dict[str, Any]:
    """A two-round Sixis record whose first round ended with the Sixis card."""
    game = find_game("sixis")
    options = SixisOptions(players=3, rounds=2, colours=("red", "blue", "green"))
    session = Session(game, options, THREE)
    session.act(Roll(dice=tuple(Die("red", 6) for _ in range(6))))
    session.act(TakeCard(0, "sixis"))
    return session.to_record()


def imported(
    browser: Any, server: ServerProcess, record: dict[str, Any], device: Any = None
) -> tuple[Any, dict[str, Any]]:
    """The record imported as a new table; this browser context is its host."""
    host = browser.new_context(**(device or {}))
    answer = host.request.post(server.base_url + "/api/import", data=record)
    assert answer.status == 201, answer.text()
    return host, answer.json()


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_tied_sixmix_start_goes_to_the_youngest(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host, table = imported(browser, server, sixmix_round_all_ones())
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    state = host.request.get(f"{api}/state").json()
    starter = state["turn"]["active"]
    tied = state["state"]["state"]["tied"]
    assert tied[0] == starter and sorted(tied) == [0, 1, 2]  # all three rows are 111,111
    page = seated_page(browser, server, table, starter, device)
    assert "tied for the lowest row; the youngest of them starts" in page.inner_text(".live")
    others = [n for seat, n in enumerate(THREE) if seat != starter]
    buttons = page.locator(".sheet-buttons button")
    assert sorted(buttons.all_inner_texts()) == sorted(
        f"{n} starts instead (tied for the lowest row)" for n in others
    )
    shot(page, f"sixmix-tied-start-{name}")
    youngest = others[-1]
    page.click(f".sheet-buttons button:has-text('{youngest} starts instead')")
    page.wait_for_function(
        f"() => document.querySelector('.turn-text').textContent === '{youngest} rolls the dice'"
    )
    record = host.request.get(f"{api}/record").json()
    last = record["actions"][-1]
    assert last["move"] == {"kind": "starter", "player": starter, "seat": THREE.index(youngest)}
    assert last["by"] == str(starter)
    host.close()
    page.context.close()


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_host_chooses_who_opens_a_later_sixis_round(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    # the host's device (importing the record made it the host) is a phone or a tablet
    host, table = imported(browser, server, sixis_first_round_ended(), device)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    page = host.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}")
    page.wait_for_selector("#conn[data-conn=live]")
    assert page.inner_text(".turn-text") == "Ola rolls the dice"  # clockwise: round 2
    choice = page.locator(".sheet-buttons button:has-text('Mia opens this round instead')")
    assert choice.count() == 1  # on Ola's sheet: she would open round 2 (clockwise)
    shot(page, f"sixis-opener-choice-{name}")
    choice.click()
    page.wait_for_function(
        "() => document.querySelector('.turn-text').textContent === 'Mia rolls the dice'"
    )
    state = host.request.get(f"{api}/state").json()
    assert (state["turn"]["active"], state["state"]["state"]["starter"]) == (2, 2)
    record = host.request.get(f"{api}/record").json()
    assert record["actions"][-1] == {
        "by": "host",
        "move": {"kind": "starter", "player": 1, "seat": 2},
    }
    host.close()


def hand_the_choice_on_and_back(host: Any, api: str, page: Any, starter: int) -> int:
    """The host of a 3-player table hands the starting choice to the next seat and back:
    the state moves on twice and the same choice (and its words) comes back to `page`.
    Returns the state id it came back in."""
    state_id = int(page.get_attribute(".live", "data-state-id") or 0)
    other = (starter + 1) % 3
    for n, (player, seat) in enumerate([(starter, other), (other, starter)]):
        move = {"kind": "starter", "player": player, "seat": seat}
        handed = host.request.post(
            f"{api}/actions", data={"action_id": f"hand-{n:06d}", "move": move}
        )
        assert handed.ok, handed.text()
    page.wait_for_selector(f".live[data-state-id='{state_id + 2}']")
    return state_id + 2
