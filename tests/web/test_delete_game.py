"""Deleting a finished game from the history, through the real app: a café owner's trial.
A test game (or a mistaken one) stayed in the history for ever. Now the server's own
screen deletes a finished game (its row, moves, devices and photos, and so its record);
a game in progress is refused (`game_in_progress`: end it first), and no other device
deletes anything (`local_only`), not even the game's host."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from companion.table.camera_settings import CameraSettings
from companion.table.store import Store
from companion.table.tables import DELETED_KEY, DELETED_NEXT_KEY, KEPT_PLACE_KEY
from companion.web.app import create_app
from companion.web.deps import cookie_name
from companion.web.routes.pages import HISTORY_GAMES
from companion.web.settings import Settings
from tests.waiting import wait_until
from tests.web.helpers import QWIXX_ROLL_7, act, create_table, seat_player, stored_tables
from tests.web.setups import rest_of

ON_SERVER = ("127.0.0.1", 50000)


def test_the_servers_own_screen_deletes_a_finished_game_and_nothing_else(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        hosts_phone = TestClient(app)  # the host's device, on the network
        test_game = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        kept = create_table(hosts_phone, "sixto", ["Cid", "Dee"], {"players": 2})
        playing = create_table(hosts_phone, "qwixx", ["Eve", "Fay"], {"players": 2})
        gone, store = test_game["table_id"], app.state.tables.store
        assert act(hosts_phone, gone, QWIXX_ROLL_7, "roll-0001").status_code == 200
        for finished in (gone, kept["table_id"]):
            assert local.post(f"/t/{finished}/end").status_code == 200
        store.add_photo(gone, "roll-0001", b"jpeg")
        # the camera learnt from the game's confirmed roll (and from the game kept)
        image, dice, _ = rest_of(1502)
        learning = app.state.learning
        assert local.portal is not None
        for table_id in (gone, kept["table_id"]):
            taught = partial(learning.roll_applied, tapped=True, table_id=table_id)
            local.portal.call(taught, "kitchen", image, dice)
        wait_until(lambda: learning.idle("kitchen"), what="the confirmed rolls stored")
        history = local.get("/history").text
        assert f'action="/t/{gone}/delete"' in history
        assert 'data-confirm="Tap again to delete Qwixx: Ann, Bob from the history for good"' in (
            history
        )
        assert "/delete" not in hosts_phone.get("/history").text  # the host's phone: none

        for elsewhere in (hosts_phone, TestClient(app, client=("192.168.1.23", 50000))):
            refused = elsewhere.post(f"/t/{gone}/delete")
            assert refused.status_code == 403 and refused.json()["rule"] == "local_only"
        assert store.table(gone) is not None

        in_progress = local.post(f"/t/{playing['table_id']}/delete")
        assert in_progress.status_code == 403, in_progress.text
        assert in_progress.json()["rule"] == "game_in_progress"
        assert "end it first" in in_progress.json()["message"]
        assert store.table(playing["table_id"]) is not None

        with caplog.at_level(logging.INFO, logger="companion.web.routes.pages"):
            deleted = local.post(f"/t/{gone}/delete", follow_redirects=False)
        assert deleted.status_code == 303 and deleted.headers["location"] == "/history"
        said = [r.getMessage() for r in caplog.records if "deleted" in r.getMessage()]
        assert said == [
            f"finished game {gone} (qwixx: Ann, Bob) deleted on the server's machine "
            f"({len(dice)} learnt dice with it)"
        ]
        taught_by = {e.table_id for e in learning.store.examples("kitchen")}
        assert taught_by == {kept["table_id"]}  # what the deleted game taught went with it
        assert store.table(gone) is None and store.log(gone) == []
        assert store.photo(gone, "roll-0001") is None and store.devices(gone) == {}
        # the host's phone held the game: told it was deleted (it read a plain 404, as for
        # a table id no table has); a device that never held it learns nothing
        told = hosts_phone.get(f"/api/tables/{gone}/record")
        assert told.status_code == 410 and told.json()["rule"] == "game_deleted", told.text
        stranger = TestClient(app, client=("192.168.1.23", 50000))
        assert stranger.get(f"/api/tables/{gone}/state").status_code == 404
        stranger.cookies.set(cookie_name(gone), "a-token-it-guessed")
        assert stranger.get(f"/api/tables/{gone}/state").status_code == 404
        history = local.get("/history").text
        assert "Ann, Bob" not in history and "Cid" in history
        assert store.table(kept["table_id"]) is not None
        assert local.post(f"/t/{gone}/delete").status_code == 404  # once
        assert local.post("/t/nosuchtable1/delete").status_code == 404


def test_the_readme_says_a_game_in_progress_is_refused_as_the_server_refuses_it() -> None:
    """README said "a game in progress is ended first", as if Delete ended it; the server
    refuses it (`game_in_progress`: "end it first, then delete it") and ends nothing."""
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    said = readme[readme.index("**Delete this game**") :][:400]
    assert "is ended first" not in said
    assert "a game in progress is refused: end it first (Host tools, or End it now" in said


def test_the_owner_deletes_a_damaged_finished_game_its_note_names(tmp_path: Path) -> None:
    """A finished game whose stored header no longer reads is a note in the history ("A
    finished game (table ...) cannot be shown"), and had no Delete button: the owner could
    not clear it. Its note has one now, on the server's own screen only."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        damaged = create_table(local, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        assert local.post(f"/t/{damaged}/end").status_code == 200
        with sqlite3.connect(tmp_path / "companion.sqlite3") as db:
            db.execute("UPDATE tables SET options_json = '{nope' WHERE table_id = ?", (damaged,))
        history = local.get("/history").text
        assert f"(table {damaged}) cannot be shown" in history
        assert f'action="/t/{damaged}/delete"' in history
        assert f"Tap again to delete the damaged game (table {damaged})" in history
        network = TestClient(app, client=("192.168.1.23", 50000), cookies=local.cookies)
        assert "/delete" not in network.get("/history").text

        deleted = local.post(f"/t/{damaged}/delete", follow_redirects=False)
        assert deleted.status_code == 303, deleted.text
        assert app.state.tables.store.table(damaged) is None
        assert "cannot be shown" not in local.get("/history").text


def test_a_delete_keeps_the_owner_on_the_page_of_the_history_it_was_on(tmp_path: Path) -> None:
    """After a delete the history opened at its first page: an owner clearing old test
    games on the second page paged back after each one. The button sends its page
    (`older`) and the owner is sent back to it, or to the page before once it is empty."""
    finished = stored_tables(tmp_path, HISTORY_GAMES + 2, finished=True)
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        second_page = local.get(f"/history?older={HISTORY_GAMES}").text
        older_field = f'<input type="hidden" name="older" value="{HISTORY_GAMES}">'
        assert f'action="/t/{finished[-1]}/delete" class="delete-game">{older_field}' in (
            second_page
        )
        assert older_field not in local.get("/history").text  # the first page sends none
        for gone, back_to in (
            (finished[-1], f"/history?older={HISTORY_GAMES}"),
            (finished[-2], "/history"),  # the second page is empty now: the first
        ):
            form = {"older": str(HISTORY_GAMES)}
            deleted = local.post(f"/t/{gone}/delete", data=form, follow_redirects=False)
            assert deleted.status_code == 303, deleted.text
            assert deleted.headers["location"] == back_to
        assert local.post(f"/t/{finished[0]}/delete", follow_redirects=False).headers[
            "location"
        ] == ("/history")


def test_a_player_who_had_not_followed_reaches_the_next_game_after_its_delete(
    tmp_path: Path,
) -> None:
    """Deleting a finished game the host had played again took its devices' tokens with
    it: a player who had not tapped "Next game ready" yet found neither game (404) and had
    to ask for the next game's code. The delete keeps a place at the next game for each
    device the next game would have carried, and no other: its page says so and takes it
    there in one tap (as does its open screen's button); a device that joined the finished
    game after the next one was started, or a stranger, learns nothing of the next game."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        hosts_phone = TestClient(app)
        made = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        gone, code = made["table_id"], made["code"]
        phones = {
            name: TestClient(app, client=(f"192.168.1.{31 + seat}", 50000))
            for seat, name in enumerate(("Ann", "Bob", "late", "stranger"))
        }
        for seat, name in enumerate(("Ann", "Bob")):
            seat_player(phones[name], code, gone, seat)
        assert hosts_phone.post(f"/api/tables/{gone}/end").status_code == 200
        again = hosts_phone.post(f"/api/tables/{gone}/play_again")
        assert again.status_code == 201, again.text
        next_id, next_code = again.json()["table_id"], again.json()["code"]
        assert phones["Bob"].post(f"/api/tables/{gone}/next_seat").status_code == 200
        assert phones["late"].post("/api/join", json={"code": code}).status_code == 200
        assert local.post(f"/t/{gone}/delete", follow_redirects=False).status_code == 303

        page = {"accept": "text/html"}
        kept = phones["Ann"].get(f"/t/{gone}/sheet", headers=page)
        assert kept.status_code == 410, kept.text
        assert "your place there is kept" in kept.text and next_code not in kept.text
        assert f'action="/t/{gone}/next_seat"' in kept.text
        assert "Take your seat in the next game" in kept.text
        # the late device held the deleted game (it is told so, nothing of the next game);
        # the stranger never did: a table id no table has
        for nobody, status in (("late", 410), ("stranger", 404)):
            told = phones[nobody].get(f"/t/{gone}", headers=page)
            assert told.status_code == status, told.text
            assert next_code not in told.text and next_id not in told.text
            for refused in (
                phones[nobody].post(f"/api/tables/{gone}/next_seat"),
                phones[nobody].post(f"/t/{gone}/next_seat"),
            ):
                assert refused.status_code == 403, refused.text
                assert next_code not in refused.text and next_id not in refused.text

        taken = phones["Ann"].post(f"/t/{gone}/next_seat", follow_redirects=False)
        assert taken.status_code == 303, taken.text
        assert taken.headers["location"] == f"/t/{next_id}/sheet"
        assert phones["Ann"].get(f"/t/{next_id}/sheet").status_code == 200
        again_tapped = phones["Ann"].post(f"/api/tables/{gone}/next_seat")  # its open screen
        assert again_tapped.status_code == 200 and again_tapped.json()["seat"] == 0
        assert phones["Bob"].get(f"/t/{next_id}/sheet").status_code == 200  # followed before
        next_game = app.state.tables.store.devices(next_id)
        assert sorted(d.seat for d in next_game.values() if d.seat is not None) == [0, 1]


def test_a_player_who_had_followed_goes_on_to_the_next_game_from_the_deleted_ones_screen(
    tmp_path: Path,
) -> None:
    """A device that had followed the next game already kept no place (its cookie there
    opens it), yet its finished game's screen, still open when the game was deleted, says
    "tap Next game ready" (table.js): that tap was refused 403 `not_at_this_table`. It goes
    on to the next game it holds a token of, and a stranger still learns nothing."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        hosts_phone = TestClient(app)
        made = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        gone, code = made["table_id"], made["code"]
        bobs_phone = TestClient(app, client=("192.168.1.32", 50000))
        stranger = TestClient(app, client=("192.168.1.40", 50000))
        seat_player(bobs_phone, code, gone, 1)
        assert hosts_phone.post(f"/api/tables/{gone}/end").status_code == 200
        again = hosts_phone.post(f"/api/tables/{gone}/play_again")
        next_id = again.json()["table_id"]
        assert bobs_phone.post(f"/api/tables/{gone}/next_seat").status_code == 200
        assert local.post(f"/t/{gone}/delete", follow_redirects=False).status_code == 303

        tapped = bobs_phone.post(f"/api/tables/{gone}/next_seat")  # its open screen's button
        assert tapped.status_code == 200, tapped.text
        assert tapped.json()["table_id"] == next_id and tapped.json()["seat"] == 1
        refused = stranger.post(f"/api/tables/{gone}/next_seat")
        assert refused.status_code == 403 and next_id not in refused.text


def played_again_and_deleted(app: FastAPI, local: TestClient) -> PlayedAgain:
    """A Qwixx game for Ann and Bob (each on a phone of their own), ended, played again
    and deleted from the history before anyone followed: a place is kept for each."""
    hosts_phone = TestClient(app)
    made = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
    gone, code = made["table_id"], made["code"]
    phones = [TestClient(app, client=(f"192.168.1.{31 + seat}", 50000)) for seat in (0, 1)]
    for seat, phone in enumerate(phones):
        seat_player(phone, code, gone, seat)
    assert hosts_phone.post(f"/api/tables/{gone}/end").status_code == 200
    again = hosts_phone.post(f"/api/tables/{gone}/play_again")
    assert again.status_code == 201, again.text
    assert local.post(f"/t/{gone}/delete", follow_redirects=False).status_code == 303
    return PlayedAgain(gone, again.json()["table_id"], hosts_phone, phones)


@dataclass(frozen=True)
class PlayedAgain:
    gone: str  # the deleted finished game
    next_id: str  # the game that plays it again
    hosts_phone: TestClient
    phones: list[TestClient]  # Ann's (seat 0) and Bob's (seat 1)


def kept_of(store: Store, played: PlayedAgain) -> tuple[str | None, str | None, dict[str, str]]:
    """What the server keeps of the deleted game: its two server settings and the places
    kept at its next game."""
    return (
        store.server_setting(DELETED_KEY + played.gone),
        store.server_setting(DELETED_NEXT_KEY + played.gone),
        store.table_settings_starting(played.next_id, KEPT_PLACE_KEY),
    )


def as_if_its_tokens_ran_out(store: Store, gone: str) -> None:
    """The deleted game's devices' tokens ran out an hour ago (token_finished_s after it
    ended): its record says so."""
    held = json.loads(store.server_setting(DELETED_KEY + gone) or "{}")
    held["until"] = time.time() - 3600
    store.set_server_setting(DELETED_KEY + gone, json.dumps(held))


PAGE = {"accept": "text/html"}


def test_what_a_delete_keeps_goes_once_its_tokens_cannot_work_at_the_next_delete(
    tmp_path: Path,
) -> None:
    """A delete of a game played again kept two server settings (which devices held it,
    its next game) for ever, besides the places at the next game. The next delete forgets
    those of every deleted game whose tokens ran out, and only those: a place kept while
    its token works still takes its device to the next game."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        store = app.state.tables.store
        spent = played_again_and_deleted(app, local)
        in_time = played_again_and_deleted(app, local)
        assert all(kept_of(store, spent)) and all(kept_of(store, in_time))
        as_if_its_tokens_ran_out(store, spent.gone)

        cids_phone = TestClient(app)
        third = create_table(cids_phone, "qwixx", ["Cid", "Dee"], {"players": 2})["table_id"]
        assert cids_phone.post(f"/api/tables/{third}/end").status_code == 200
        assert local.post(f"/t/{third}/delete", follow_redirects=False).status_code == 303

        assert kept_of(store, spent) == (None, None, {})
        assert all(kept_of(store, in_time))
        ann = in_time.phones[0]
        assert "your place there is kept" in ann.get(f"/t/{in_time.gone}", headers=PAGE).text
        taken = ann.post(f"/t/{in_time.gone}/next_seat", follow_redirects=False)
        assert taken.headers["location"] == f"/t/{in_time.next_id}/sheet"


def test_what_a_delete_keeps_goes_at_start_up_once_its_tokens_cannot_work(
    tmp_path: Path,
) -> None:
    """A server restarted after a deleted game's tokens ran out forgets what that delete
    kept; one restarted while they still work keeps it (Bob still reaches his place)."""
    settings = Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True))
    app = create_app(settings)
    with TestClient(app, client=ON_SERVER) as local:
        spent = played_again_and_deleted(app, local)
        in_time = played_again_and_deleted(app, local)
        as_if_its_tokens_ran_out(app.state.tables.store, spent.gone)
    restarted = create_app(settings)
    with TestClient(restarted, client=ON_SERVER):
        store = restarted.state.tables.store
        assert kept_of(store, spent) == (None, None, {})
        assert all(kept_of(store, in_time))
        bobs_phone = TestClient(restarted, client=("192.168.1.32", 50000))
        bobs_phone.cookies = in_time.phones[1].cookies
        taken = bobs_phone.post(f"/t/{in_time.gone}/next_seat", follow_redirects=False)
        assert taken.headers["location"] == f"/t/{in_time.next_id}/sheet", taken.text


def test_a_place_taken_and_then_freed_at_the_next_game_is_no_longer_said_to_be_kept(
    tmp_path: Path,
) -> None:
    """Ann took the place kept for her after the delete, and the host freed her seat at
    the next game: the deleted game's page still read "your place there is kept", and its
    button was refused (`carried_once`). It now says the game was deleted, with no such
    promise or button, and asks for the next game's join code."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        played = played_again_and_deleted(app, local)
        ann = played.phones[0]
        taken = ann.post(f"/t/{played.gone}/next_seat", follow_redirects=False)
        assert taken.headers["location"] == f"/t/{played.next_id}/sheet", taken.text
        freed = played.hosts_phone.post(f"/api/tables/{played.next_id}/seats/0/free")
        assert freed.status_code == 200, freed.text

        told = ann.get(f"/t/{played.gone}/sheet", headers=PAGE)
        assert told.status_code == 410, told.text
        assert "kept" not in told.text and "next_seat" not in told.text
        assert "deleted from the history" in told.text
        tapped = ann.post(f"/api/tables/{played.gone}/next_seat")  # its open screen's button
        assert tapped.status_code == 403 and played.next_id not in tapped.text
        bob = played.phones[1]  # whose place was never taken: still kept
        assert "your place there is kept" in bob.get(f"/t/{played.gone}", headers=PAGE).text


def test_a_player_who_had_followed_reads_the_deleted_games_page_with_the_way_on(
    tmp_path: Path,
) -> None:
    """Bob had followed the next game before the owner deleted the finished one: reloading
    the deleted game's page gave him a bare error page ("Something went wrong"), where an
    open screen reads that the game was deleted and offers "Next game ready". His page now
    says the game was deleted from the history and takes him back to his seat in one tap;
    once the host freed it there, no such button is offered."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        hosts_phone = TestClient(app)
        made = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        gone, code = made["table_id"], made["code"]
        bobs_phone = TestClient(app, client=("192.168.1.32", 50000))
        seat_player(bobs_phone, code, gone, 1)
        assert hosts_phone.post(f"/api/tables/{gone}/end").status_code == 200
        next_id = hosts_phone.post(f"/api/tables/{gone}/play_again").json()["table_id"]
        assert bobs_phone.post(f"/api/tables/{gone}/next_seat").status_code == 200
        assert local.post(f"/t/{gone}/delete", follow_redirects=False).status_code == 303

        told = bobs_phone.get(f"/t/{gone}/sheet", headers=PAGE)
        assert told.status_code == 410, told.text
        assert "This game was deleted from the history" in told.text
        assert f'action="/t/{gone}/next_seat"' in told.text
        assert "Take your seat in the next game" in told.text
        taken = bobs_phone.post(f"/t/{gone}/next_seat", follow_redirects=False)
        assert taken.headers["location"] == f"/t/{next_id}/sheet", taken.text

        freed = hosts_phone.post(f"/api/tables/{next_id}/seats/1/free")
        assert freed.status_code == 200, freed.text
        told = bobs_phone.get(f"/t/{gone}/sheet", headers=PAGE)
        assert "This game was deleted from the history" in told.text
        assert "next_seat" not in told.text and "join code" in told.text


def test_a_socket_to_a_deleted_game_closes_saying_so_to_the_devices_that_held_it(
    tmp_path: Path,
) -> None:
    """A screen reconnecting to a game the history deleted was refused at the handshake,
    which carries no reason (the page read a lost network and asked the state API). The
    socket now opens and closes with 1008 `game_deleted` for a device that held the game;
    a stranger is refused as at a table id no table has."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=ON_SERVER) as local:
        played = played_again_and_deleted(app, local)
        stranger = TestClient(app, client=("192.168.1.40", 50000))
        stranger.cookies = {cookie_name(played.gone): "a guessed token"}
        socket = f"/t/{played.gone}/ws?view=sheet"
        anns_phone = played.phones[0]
        for device, why in ((anns_phone, "game_deleted"), (stranger, "join this table first")):
            with (
                pytest.raises(WebSocketDisconnect) as closed,
                device.websocket_connect(socket) as screen,
            ):
                screen.receive_text()
            assert (closed.value.code, closed.value.reason) == (1008, why)
