"""Deleting a test game from the history on the server's own screen, in Debian's
Chromium: a café owner's trial. A test game stayed in the history for ever. Now the
server's own history page has "Delete this game" on each finished game; the first tap asks
"Tap again to delete Qwixx: Ann, Bob from the history for good" (tap_again.js) and deletes
nothing, the second deletes it (gone from the store and the page). A tablet on the network
sees no such button. Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from companion.table.camera_settings import CameraSettings
from companion.web.settings import Settings
from tests.live.replay import SEEN_FROM, LiveServer
from tests.web.conftest import ServerProcess, free_port, shot
from tests.web.devices import PHONE, TABLET, seated_page

pytestmark = pytest.mark.browser

A_TABLET = {SEEN_FROM: "192.168.1.23"}
QUESTION = "Tap again to delete Qwixx: Ann, Bob from the history for good"


def delete_while_offline(
    screen: Any, owner: Any, server: ServerProcess, table: dict[str, Any]
) -> Any:
    """The owner deletes `table` while `screen` (live on it first) is offline; the screen
    back online. Its connection line."""
    banner = screen.locator("#conn")
    expect(banner).to_have_attribute("data-conn", "live", timeout=20000)
    screen.context.set_offline(True)
    expect(banner).to_have_attribute("data-conn", "offline", timeout=20000)
    deleted = owner.request.post(
        f"{server.base_url}/t/{table['table_id']}/delete", headers={"origin": server.base_url}
    )
    assert deleted.ok, deleted.text()
    screen.context.set_offline(False)
    return banner


def test_the_owner_deletes_a_test_game_from_the_history_after_tapping_again(
    browser: Any, tmp_path: Path
) -> None:
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(disabled=True)
    )
    with LiveServer(settings, None) as server:
        hosts_phone = browser.new_context()  # both tables' host, on the network
        owner = browser.new_context(viewport={"width": 1280, "height": 900})
        made = []
        for game, players in (("qwixx", ["Ann", "Bob"]), ("sixto", ["Cid", "Dee"])):
            answer = hosts_phone.request.post(
                f"{server.base_url}/api/tables",
                data={"game": game, "players": players, "options": {"players": 2}},
                headers=A_TABLET,
            )
            assert answer.status == 201, answer.text()
            made.append(answer.json()["table_id"])
            ended = owner.request.post(
                f"{server.base_url}/t/{made[-1]}/end", headers={"origin": server.base_url}
            )
            assert ended.ok, ended.text()
        test_game, kept = made
        store = server.app.state.tables.store

        page = owner.new_page()
        page.goto(f"{server.base_url}/history")
        delete = page.locator(f'form[action="/t/{test_game}/delete"] button')
        expect(delete).to_have_text("Delete this game", timeout=20000)
        delete.click()
        expect(delete).to_have_text(QUESTION, timeout=20000)  # asked, nothing deleted
        assert store.table(test_game) is not None
        shot(page, "history-delete-asks")
        delete.click()
        expect(page.locator(f'form[action="/t/{test_game}/delete"]')).to_have_count(
            0, timeout=20000
        )
        expect(page.locator("li.history-game")).to_have_count(1, timeout=20000)
        assert "Ann" not in page.inner_text("ul.history")
        assert "Cid" in page.inner_text("ul.history")
        assert store.table(test_game) is None and store.table(kept) is not None
        shot(page, "history-delete-done")

        tablet = hosts_phone.new_page()
        tablet.set_extra_http_headers(A_TABLET)
        tablet.goto(f"{server.base_url}/history")
        expect(tablet.locator("li.history-game")).to_have_count(1, timeout=20000)
        assert tablet.locator("form.delete-game").count() == 0


def test_players_who_had_not_followed_reach_the_next_game_after_the_delete(
    browser: Any, server: ServerProcess
) -> None:
    """The host played a game again and the owner deleted it before Ann and Bob followed:
    Ann's sheet, left open, loses the deleted game but its "Next game ready" button still
    takes her to her seat; Bob, who reloads, reads that the game was deleted and that his
    place is kept, and one tap seats him. Neither page shows the next game's code."""
    host = browser.new_context(**TABLET)
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    table, gone = created.json(), created.json()["table_id"]
    ann, bob = (seated_page(browser, server, table, seat, PHONE) for seat in (0, 1))
    api = f"{server.base_url}/api/tables/{gone}"
    assert host.request.post(f"{api}/end").ok
    again = host.request.post(f"{api}/play_again")
    assert again.status == 201, again.text()
    next_id, next_code = again.json()["table_id"], again.json()["code"]
    expect(ann.locator("[data-next-seat]")).to_be_visible(timeout=20000)

    owner = browser.new_context()  # the server's own screen (every test browser is local)
    deleted = owner.request.post(
        f"{server.base_url}/t/{gone}/delete", headers={"origin": server.base_url}
    )
    assert deleted.ok, deleted.text()
    expect(ann.locator("#conn")).to_have_attribute("data-conn", "refused", timeout=20000)
    assert "join code" not in ann.locator("#conn").inner_text()
    ann.click("[data-next-seat]")
    ann.wait_for_url(f"**/t/{next_id}/sheet", timeout=20000)
    expect(ann.locator(".sheet[data-seat='0'].markable")).to_have_count(1, timeout=20000)

    bob.reload()
    expect(bob.locator("main")).to_contain_text("your place there is kept", timeout=20000)
    assert next_code not in bob.content()
    shot(bob, "deleted-game-place-kept")
    bob.click("text=Take your seat in the next game")
    bob.wait_for_url(f"**/t/{next_id}/sheet", timeout=20000)
    expect(bob.locator(".sheet[data-seat='1'].markable")).to_have_count(1, timeout=20000)


def ended_with_anns_screen_open(
    browser: Any, server: ServerProcess, host: Any, again: bool
) -> tuple[dict[str, Any], Any]:
    """A Qwixx table for Ann and Bob that `host` made and ended, with Ann's phone's sheet
    open on it; played again when `again`, once Ann's screen offers the next game."""
    created = host.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201
    table: dict[str, Any] = created.json()
    screen = seated_page(browser, server, table, 0, PHONE)
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    assert host.request.post(f"{api}/end").ok
    if again:
        assert host.request.post(f"{api}/play_again").status == 201
        expect(screen.locator("[data-next-seat]")).to_be_visible(timeout=20000)
    return table, screen


def test_a_screen_left_open_on_a_deleted_game_says_it_was_deleted(
    browser: Any, server: ServerProcess
) -> None:
    """A screen left open on a finished game the owner then deleted read "Not connected:
    enter the join code again", even where its "Next game ready" button worked (its place
    at the game played again was kept). Now its banner says what happened, and where the
    next game keeps its place it points at the button, not at a join code; a game nobody
    played again reads only that it was deleted."""
    host = browser.new_context(**TABLET)
    owner = browser.new_context()  # the server's own screen (every test browser is local)
    screens = []
    for again in (True, False):
        table, screen = ended_with_anns_screen_open(browser, server, host, again)
        deleted = owner.request.post(
            f"{server.base_url}/t/{table['table_id']}/delete", headers={"origin": server.base_url}
        )
        assert deleted.ok, deleted.text()
        screens.append(screen)
    kept, alone = screens
    for screen in screens:
        banner = screen.locator("#conn")
        expect(banner).to_contain_text("This game was deleted from the history", timeout=20000)
    expect(kept.locator("#conn")).to_contain_text("Next game ready", timeout=20000)
    shot(kept, "deleted-game-banner-next-game")
    assert "join code" not in kept.locator("#conn").inner_text()
    assert "Next game" not in alone.locator("#conn").inner_text()


def test_a_screen_offline_at_the_delete_reads_that_the_game_was_deleted(
    browser: Any, server: ServerProcess
) -> None:
    """A screen whose network had dropped before the owner deleted its finished game found
    out on reconnecting through a plain 404 and read "Not connected: enter the join code
    again". The state API now answers the devices that held the game 410 `game_deleted`,
    and the banner says so (pointing at "Next game ready" where its place was kept)."""
    host = browser.new_context(**TABLET)
    owner = browser.new_context()  # the server's own screen (every test browser is local)
    for again in (True, False):
        table, screen = ended_with_anns_screen_open(browser, server, host, again)
        banner = delete_while_offline(screen, owner, server, table)
        expect(banner).to_contain_text("This game was deleted from the history", timeout=20000)
        assert "join code" not in banner.inner_text() or not again
        if again:
            expect(banner).to_contain_text("Next game ready", timeout=20000)
            shot(screen, "deleted-while-offline-next-game")


def test_a_player_who_had_followed_reloads_the_deleted_game_and_goes_back_to_their_seat(
    browser: Any, server: ServerProcess
) -> None:
    """Ann followed the next game, then the owner deleted the finished one: opening the
    deleted game's page again (its tab, history, a bookmark) gave her a bare "Something
    went wrong" page. It now reads that the game was deleted from the history and takes
    her back to her seat in the next game in one tap."""
    host = browser.new_context(**TABLET)
    table, ann = ended_with_anns_screen_open(browser, server, host, again=True)
    gone = table["table_id"]
    ann.click("[data-next-seat]")
    ann.wait_for_url(lambda url: gone not in url and url.endswith("/sheet"), timeout=20000)
    next_url = ann.url
    owner = browser.new_context()  # the server's own screen (every test browser is local)
    deleted = owner.request.post(
        f"{server.base_url}/t/{gone}/delete", headers={"origin": server.base_url}
    )
    assert deleted.ok, deleted.text()

    ann.goto(f"{server.base_url}/t/{gone}/sheet")
    expect(ann.locator("h1")).to_have_text("This game was deleted from the history", timeout=20000)
    expect(ann.locator("main")).to_contain_text("you are in it already", timeout=20000)
    shot(ann, "deleted-game-followed-before")
    ann.click("text=Take your seat in the next game")
    ann.wait_for_url(next_url, timeout=20000)
    expect(ann.locator(".sheet[data-seat='0'].markable")).to_have_count(1, timeout=20000)


def test_a_screen_reconnecting_to_a_deleted_game_hears_it_from_its_socket(
    browser: Any, server: ServerProcess
) -> None:
    """A screen offline at the delete reconnected to a socket refused at its handshake,
    which carries no reason: the page took it for a lost network and learnt the truth only
    from the state API, retrying for ever where that request failed (a flaky network).
    The socket now closes saying `game_deleted`: the banner reads so from the socket alone
    (the state API is out of its reach here), pointing at "Next game ready"."""
    host = browser.new_context(**TABLET)
    owner = browser.new_context()  # the server's own screen (every test browser is local)
    table, screen = ended_with_anns_screen_open(browser, server, host, again=True)
    screen.route("**/api/tables/*/state", lambda route: route.abort())
    banner = delete_while_offline(screen, owner, server, table)
    expect(banner).to_contain_text("This game was deleted from the history", timeout=20000)
    expect(banner).to_contain_text("Next game ready", timeout=20000)


def test_a_screen_whose_place_was_freed_at_the_next_game_is_not_told_it_is_kept(
    browser: Any, server: ServerProcess
) -> None:
    """Ann took her seat in the next game once and the host freed it there; her finished
    game's screen was still open when the owner deleted that game. Its banner read "your
    place in the next game is kept, tap Next game ready", a tap refused (`carried_once`).
    It now asks for the next game's join code, and the button is gone."""
    host = browser.new_context(**TABLET)
    owner = browser.new_context()  # the server's own screen (every test browser is local)
    table, screen = ended_with_anns_screen_open(browser, server, host, again=True)
    gone = table["table_id"]
    carried = screen.context.request.post(f"{server.base_url}/api/tables/{gone}/next_seat")
    assert carried.ok, carried.text()
    next_id = carried.json()["table_id"]
    freed = host.request.post(f"{server.base_url}/api/tables/{next_id}/seats/0/free")
    assert freed.ok, freed.text()
    deleted = owner.request.post(
        f"{server.base_url}/t/{gone}/delete", headers={"origin": server.base_url}
    )
    assert deleted.ok, deleted.text()

    banner = screen.locator("#conn")
    expect(banner).to_contain_text("This game was deleted from the history", timeout=20000)
    expect(banner).to_contain_text("join code", timeout=20000)
    assert "kept" not in banner.inner_text()
    expect(screen.locator("[data-next-seat]")).to_be_hidden(timeout=20000)
