"""Playing a finished game again (api.py play_again, next_seat; Tables.play_again): a new
table of the same game, options and names in the same seats; every device of the finished
game (and only those) takes its place there in one tap; the link survives a restart."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules.sixis import deal_layout
from companion.table.access import hash_token
from companion.web.app import create_app
from companion.web.deps import cookie_name
from companion.web.settings import Settings
from tests.waiting import wait_until
from tests.web.helpers import act, create_table, roll_json, seat_player


@pytest.fixture
def ended(app: Any, host: TestClient) -> dict[str, Any]:
    """A 3-player Qwixx table the host ended: Ann at seat 0, Bob at seat 1 (Cat never sat
    down), and a TV that joined without a seat."""
    table = create_table(host, "qwixx", ["Ann", "Bob", "Cat"], {"players": 3})
    ann, bob, tv = TestClient(app), TestClient(app), TestClient(app)
    seat_player(ann, table["code"], table["table_id"], 0)
    seat_player(bob, table["code"], table["table_id"], 1)
    assert tv.post("/api/join", json={"code": table["code"]}).status_code == 200
    assert host.post(f"/api/tables/{table['table_id']}/end").status_code == 200
    return {**table, "ann": ann, "bob": bob, "tv": tv, "host": host}


def state(client: TestClient, table_id: str) -> dict[str, Any]:
    response = client.get(f"/api/tables/{table_id}/state")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_host_plays_a_finished_game_again_with_the_same_players(
    ended: dict[str, Any],
) -> None:
    old, host = ended["table_id"], ended["host"]
    response = host.post(f"/api/tables/{old}/play_again")
    assert response.status_code == 201, response.text
    new = response.json()
    assert new["table_id"] != old and new["code"] != ended["code"]
    assert new["url"] == f"/t/{new['table_id']}" and new["host"] is True
    after = state(host, new["table_id"])  # the host's device is the new table's host
    assert after["viewer"] == {"seat": None, "host": True}
    assert after["game"] == "qwixx" and after["players"] == ["Ann", "Bob", "Cat"]
    assert not after["finished"] and after["state_id"] == 0
    assert state(host, old)["next_table"] == new["table_id"]
    # a second tap (or another host screen) gets the same next game, not a third table
    again = host.post(f"/api/tables/{old}/play_again")
    assert again.status_code == 200 and again.json()["table_id"] == new["table_id"]


def test_only_the_host_plays_again_and_only_a_game_that_is_over(app: Any, host: TestClient) -> None:
    table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
    tid = table["table_id"]
    ann = TestClient(app)
    seat_player(ann, table["code"], tid, 0)
    running = host.post(f"/api/tables/{tid}/play_again")
    assert running.status_code == 403 and running.json()["rule"] == "game_not_over"
    assert host.post(f"/api/tables/{tid}/end").status_code == 200
    by_player = ann.post(f"/api/tables/{tid}/play_again")
    assert by_player.status_code == 403 and by_player.json()["rule"] == "host_only"


def test_each_device_takes_its_same_place_in_the_next_game_in_one_request(
    ended: dict[str, Any],
) -> None:
    old, ann, bob, tv = ended["table_id"], ended["ann"], ended["bob"], ended["tv"]
    before = ann.post(f"/api/tables/{old}/next_seat")
    assert before.status_code == 404 and before.json()["rule"] == "no_next_game"
    new = ended["host"].post(f"/api/tables/{old}/play_again").json()["table_id"]
    taken = ann.post(f"/api/tables/{old}/next_seat")
    assert taken.status_code == 200, taken.text
    assert taken.json() | {"code": None} == {
        "table_id": new,
        "code": None,
        "seat": 0,
        "host": False,
        "url": f"/t/{new}/sheet",
    }
    assert state(ann, new)["viewer"] == {"seat": 0, "host": False}
    assert bob.post(f"/api/tables/{old}/next_seat").json()["seat"] == 1
    assert state(bob, new)["viewer"] == {"seat": 1, "host": False}
    # the TV watched: it watches the next game, from its scoreboard
    watching = tv.post(f"/api/tables/{old}/next_seat").json()
    assert watching["seat"] is None and watching["url"] == f"/t/{new}/board"
    assert state(tv, new)["viewer"] == {"seat": None, "host": False}
    # a second tap finds the device in its seat already: nothing new
    assert ann.post(f"/api/tables/{old}/next_seat").json()["seat"] == 0


def test_a_device_without_the_finished_games_token_takes_no_seat(
    app: Any, ended: dict[str, Any]
) -> None:
    old = ended["table_id"]
    new = ended["host"].post(f"/api/tables/{old}/play_again").json()["table_id"]
    stranger = TestClient(app)  # on the same network, never at the table
    refused = stranger.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403 and refused.json()["rule"] == "not_at_this_table"
    forged = TestClient(app, cookies={f"tc_{old}": "not-a-token"})
    assert forged.post(f"/api/tables/{old}/next_seat").json()["rule"] == "not_at_this_table"
    assert stranger.get(f"/api/tables/{new}/state").status_code == 401
    # nor does a device of another table, whatever its cookie holds
    other = create_table(stranger, "qwixx", ["Xi", "Yu"], {"players": 2})
    stranger.cookies.set(f"tc_{old}", stranger.cookies[f"tc_{other['table_id']}"])
    assert stranger.post(f"/api/tables/{old}/next_seat").status_code == 403
    # Ann's seat stays hers to take
    assert ended["ann"].post(f"/api/tables/{old}/next_seat").json()["seat"] == 0


def test_a_seat_taken_in_the_next_game_is_refused_by_name(ended: dict[str, Any]) -> None:
    old, host, ann = ended["table_id"], ended["host"], ended["ann"]
    new = host.post(f"/api/tables/{old}/play_again").json()
    # someone sat at Ann's seat with the new code first
    other = TestClient(host.app)
    seat_player(other, new["code"], new["table_id"], 0)
    refused = ann.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403 and refused.json()["rule"] == "seat_taken"
    assert "Ann's seat" in refused.json()["message"]


def without_cookie_of(client: TestClient, table_id: str) -> TestClient:
    """`client`'s device of the finished game, having lost its cookie of the next game (a
    second tap sent before the first's answer set it, or a browser that dropped it)."""
    client.cookies.delete(f"tc_{table_id}")
    return client


def test_a_device_of_the_finished_game_makes_one_device_in_the_next_however_often_it_asks(
    app: Any, ended: dict[str, Any]
) -> None:
    """Before: each request without the next game's cookie made one more device there, so
    Ann's second tap was refused `seat_taken` (her own seat), and the TV's or the host's
    old token minted devices without end (150 requests: 81 viewers pushing out the next
    game's screens, 84 host devices that are never pushed out)."""
    old, host = ended["table_id"], ended["host"]
    new = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    devices = app.state.tables.store.devices
    for name in ("ann", "tv", "host"):
        first = ended[name].post(f"/api/tables/{old}/next_seat")
        assert first.status_code == 200, first.text
        token = ended[name].cookies[f"tc_{new}"]
        for _ in range(3):
            again = without_cookie_of(ended[name], new).post(f"/api/tables/{old}/next_seat")
            assert again.status_code == 200, again.text
            assert again.json() == first.json()
            assert ended[name].cookies[f"tc_{new}"] == token
    assert len(devices(new)) == 3  # the host's, Ann's and the TV's


def test_a_seat_the_host_frees_in_the_next_game_is_not_taken_back_through_the_finished_one(
    ended: dict[str, Any],
) -> None:
    """Freeing a seat takes its device off the table: it joins again with the code. Before:
    Ann's device of the finished game took the freed seat back at once (200), no code."""
    old, host, ann = ended["table_id"], ended["host"], ended["ann"]
    new = host.post(f"/api/tables/{old}/play_again").json()
    assert ann.post(f"/api/tables/{old}/next_seat").json()["seat"] == 0
    assert host.post(f"/api/tables/{new['table_id']}/seats/0/free").status_code == 200
    refused = without_cookie_of(ann, new["table_id"]).post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403 and refused.json()["rule"] == "carried_once"
    assert "join code" in refused.json()["message"]
    assert ann.get(f"/api/tables/{new['table_id']}/state").status_code == 401
    seat_player(ann, new["code"], new["table_id"], 0)  # the code still lets her in


def test_a_finished_screen_whose_next_place_was_freed_offers_no_button_but_the_code(
    ended: dict[str, Any],
) -> None:
    """Ann took her seat in the next game and the host freed it there: her finished game's
    sheet still showed "Next game ready", a tap refused `carried_once`. It says her place
    there was given up and to ask the host for the join code; Bob, who has not followed,
    keeps his button."""
    old, host, ann, bob = ended["table_id"], ended["host"], ended["ann"], ended["bob"]
    new = host.post(f"/api/tables/{old}/play_again").json()
    assert ann.post(f"/api/tables/{old}/next_seat").json()["seat"] == 0
    assert "data-next-seat" in ann.get(f"/t/{old}/sheet").text  # hers until freed
    assert host.post(f"/api/tables/{new['table_id']}/seats/0/free").status_code == 200
    page = ann.get(f"/t/{old}/sheet").text
    assert "data-next-seat" not in page
    assert "place at the next game was given up" in page
    assert "ask the host for the next game&#39;s join code" in page
    assert "data-next-seat" in bob.get(f"/t/{old}/sheet").text


def test_the_link_to_the_next_game_survives_a_restart(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        old = table["table_id"]
        ann = TestClient(host.app)
        seat_player(ann, table["code"], old, 0)
        assert host.post(f"/api/tables/{old}/end").status_code == 200
        new = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
        cookies = dict(ann.cookies)
    with TestClient(create_app(Settings(data_dir=tmp_path)), cookies=cookies) as ann:
        assert state(ann, old)["next_table"] == new
        page = ann.get(f"/t/{old}/sheet")
        assert "Next game ready: tap to take your seat" in page.text
        assert "data-next-seat" in page.text
        taken = ann.post(f"/api/tables/{old}/next_seat")
        assert taken.status_code == 200 and taken.json()["table_id"] == new
        assert state(ann, new)["viewer"]["seat"] == 0


def test_a_sixis_game_played_again_keeps_its_options_with_a_fresh_deal(
    host: TestClient,
) -> None:
    options = {"players": 2, "rounds": 2, "deal_seed": 7, "advanced_start": True}
    table = create_table(host, "sixis", ["Ann", "Bob"], options)
    old = table["table_id"]
    assert host.post(f"/api/tables/{old}/end").status_code == 200
    new = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    records = [host.get(f"/api/tables/{tid}/record").json() for tid in (old, new)]
    first, second = (record["options"] for record in records)
    assert first["deal_seed"] == 7 and second["deal_seed"] != 7
    assert {k: v for k, v in second.items() if k != "deal_seed"} == {
        k: v for k, v in first.items() if k != "deal_seed"
    }
    assert records[1]["players"] == ["Ann", "Bob"]


def test_a_copied_real_deal_is_not_dealt_again_in_the_next_game(host: TestClient) -> None:
    """The cards a real deal dealt (Sixis' `layouts`) describe that game alone: played
    again, the next game deals from its own fresh seed."""
    dealt = [list(deal_layout(5, 1, 8))]
    options = {"players": 2, "rounds": 1, "deal_seed": 7, "layouts": dealt}
    table = create_table(host, "sixis", ["Ann", "Bob"], options)
    old = table["table_id"]
    assert host.post(f"/api/tables/{old}/end").status_code == 200
    new = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    first, second = (host.get(f"/api/tables/{t}/record").json()["options"] for t in (old, new))
    assert first["layouts"] == dealt and second["layouts"] == []
    assert second["rounds"] == 1


def test_the_finished_screens_show_the_way_to_the_next_game(ended: dict[str, Any]) -> None:
    old, host, ann, tv = ended["table_id"], ended["host"], ended["ann"], ended["tv"]
    assert "Play again with the same players" in host.get(f"/t/{old}").text
    assert "data-next-seat" not in ann.get(f"/t/{old}/sheet").text
    host.post(f"/api/tables/{old}/play_again")
    assert "Next game ready: tap to take your seat" in ann.get(f"/t/{old}/sheet").text
    assert "Next game ready: tap to open its scoreboard" in tv.get(f"/t/{old}/live").text


def test_a_game_played_again_is_not_reopened_by_an_undo(app: Any, host: TestClient) -> None:
    """The café's trial: a finished game keeps its players' undo of their own last actions
    (a tap too early that ended it), but once the host started the next game, Finn's
    finished sheet showed "Undo done crossing" beside "Next game ready": his tap reopened
    the finished game and the way to the next one went away. Played again, it stays as it
    ended: no device offers an undo, and one sent anyway is refused by name."""
    table = create_table(host, "sixto", ["Finn"], {"players": 1})
    tid, finn = table["table_id"], TestClient(app)
    seat_player(finn, table["code"], tid, 0)
    dice = [("red", 1), ("orange", 1), ("yellow", 1), ("green", 1), ("blue", 1), ("purple", 1)]
    assert act(host, tid, roll_json(*dice), "roll-0001").status_code == 200
    assert act(finn, tid, {"kind": "keep", "player": 0}, "finn-keep").status_code == 200
    assert act(finn, tid, {"kind": "done", "player": 0}, "finn-done").status_code == 200
    assert state(host, tid)["finished"]  # solo: two dice or more unused end it
    assert ">Undo done crossing: reopens the game</button>" in finn.get(f"/t/{tid}/sheet").text
    assert host.post(f"/api/tables/{tid}/play_again").status_code == 201
    sheet = finn.get(f"/t/{tid}/sheet").text
    assert "data-undo" not in sheet and "data-next-seat" in sheet
    assert "data-undo" not in host.get(f"/t/{tid}").text
    for client, action_id in ((finn, "finn-undo-1"), (host, "host-undo-1")):
        refused = client.post(f"/api/tables/{tid}/undo", json={"action_id": action_id})
        assert refused.status_code == 409, refused.text
        assert refused.json()["rule"] == "played_again"
    assert state(host, tid)["finished"]


def test_a_host_who_plays_is_offered_play_again_on_their_own_sheet(
    app: Any, host: TestClient
) -> None:
    """The café's trial: Eve hosts from the tablet she plays on, seated as Eve, and spends
    the game on her sheet. At the end her sheet offered no way to play again (only the
    table view did, a tap on "Table" away, and nothing said so); now her finished sheet
    has the button, and after it the way to her seat."""
    table = create_table(host, "sixto", ["Eve", "Finn"], {"players": 2})
    tid = table["table_id"]
    assert host.post(f"/api/tables/{tid}/seat", json={"seat": 0}).status_code == 200
    assert host.post(f"/api/tables/{tid}/end").status_code == 200
    assert "data-play-again>Play again with the same players" in host.get(f"/t/{tid}/sheet").text
    assert host.post(f"/api/tables/{tid}/play_again").status_code == 201
    assert "Next game ready: tap to take your seat" in host.get(f"/t/{tid}/sheet").text


def test_the_seat_page_of_a_finished_game_says_it_is_over(ended: dict[str, Any]) -> None:
    """The café's trial: a phone that joined with the finished game's code (Dee's, after
    the host played it again) read "Your name says taken? ... ask the host to free it (Host
    tools, Free a seat)", a tool a finished game's host no longer has. The page says the
    game is over, and once it was played again, that the next game has its own code."""
    old, host = ended["table_id"], ended["host"]
    late = TestClient(ended["host"].app)
    assert late.post("/api/join", json={"code": ended["code"]}).status_code == 200
    page = late.get(f"/t/{old}/seat").text
    assert "This game is over." in page and "Free a seat" not in page
    host.post(f"/api/tables/{old}/play_again")
    page = late.get(f"/t/{old}/seat").text
    assert "This game is over: the host started the next game; ask for its join code." in page


def test_only_a_device_at_the_finished_game_before_it_was_played_again_is_carried(
    app: Any, ended: dict[str, Any]
) -> None:
    """The finished game's code still joins it (to see how it ended), but a device that
    joined after the host started the next game was never at the game played again: it is
    not carried there (before: a stranger on the network joined with the old code as a
    watcher, took a place in the next game and read its join code from the answer). A
    device that joined before, after the end included, is carried as it was."""
    old, host = ended["table_id"], ended["host"]
    before = TestClient(app)  # joined after the end, before the next game was started
    assert before.post("/api/join", json={"code": ended["code"]}).status_code == 200
    new = host.post(f"/api/tables/{old}/play_again").json()
    late = TestClient(app)
    assert late.post("/api/join", json={"code": ended["code"]}).status_code == 200
    refused = late.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "joined_after_next_game"
    assert "ask the host for the next game's join code" in refused.json()["message"]
    assert new["code"] not in refused.text
    assert late.get(f"/api/tables/{new['table_id']}/state").status_code == 401
    carried = before.post(f"/api/tables/{old}/next_seat")
    assert carried.status_code == 200, carried.text
    assert state(before, new["table_id"])["viewer"] == {"seat": None, "host": False}
    assert ended["tv"].post(f"/api/tables/{old}/next_seat").status_code == 200


def carried_markers(app: Any, table_id: str) -> int:
    """How many devices of a finished game the next game `table_id` remembers it carried
    (its table_settings "carried <token hash>")."""
    with sqlite3.connect(app.state.tables.store.path) as db:
        row = db.execute(
            "SELECT COUNT(*) FROM table_settings WHERE table_id = ? AND key LIKE 'carried %'",
            (table_id,),
        ).fetchone()
    return int(row[0])


def test_the_next_game_remembers_at_most_the_devices_the_finished_game_held(
    tmp_path: Path,
) -> None:
    """A next game remembers each device of the finished game it carried (so a freed one
    is not carried twice): at most the devices that held a token at the finished game when
    the next one was made. Before: every device that joined the finished game with its code
    was carried, and a join past max_table_devices pushed out an older watcher to make
    room, so a loop of join + next_seat grew the markers without end (20 strangers: 20)."""
    app = create_app(Settings(data_dir=tmp_path, max_table_devices=4))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        old = table["table_id"]
        ann, tv = TestClient(app), TestClient(app)
        seat_player(ann, table["code"], old, 0)
        assert tv.post("/api/join", json={"code": table["code"]}).status_code == 200
        assert host.post(f"/api/tables/{old}/end").status_code == 200
        held = len(app.state.tables.store.devices(old))  # the host's, Ann's, the TV's
        new = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
        for client in (ann, tv):
            assert client.post(f"/api/tables/{old}/next_seat").status_code == 200
        for _ in range(20):  # strangers with the old code, each one a new device
            stranger = TestClient(app)
            assert stranger.post("/api/join", json={"code": table["code"]}).status_code == 200
            stranger.post(f"/api/tables/{old}/next_seat")
        assert carried_markers(app, new) <= held
        assert len(app.state.tables.store.devices(new)) <= held


def test_play_again_over_the_new_tables_limit_says_why_and_works_once_there_is_room(
    tmp_path: Path,
) -> None:
    """The host's device has started as many new tables as it may for now (Settings
    table_rate_per_s, table_burst): Play again says the next game was not started and why,
    and a tap once there is room makes it. A tap that finds the next game made spends
    nothing of that limit: before, every tap spent one, so a second host screen's tap (or
    the same button again) was refused `table_rate` though nothing was to be made."""
    app = create_app(Settings(data_dir=tmp_path, table_burst=2, table_rate_per_s=0.25))
    with TestClient(app) as host:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        create_table(host, "qwixx", ["Cy", "Di"], {"players": 2})  # the limit is spent
        old = table["table_id"]
        assert host.post(f"/api/tables/{old}/end").status_code == 200
        refused = host.post(f"/api/tables/{old}/play_again")
        assert refused.status_code == 429 and refused.json()["rule"] == "table_rate"
        assert refused.json()["message"].startswith("the next game was not started: too many")
        made = wait_until(
            lambda: (r := host.post(f"/api/tables/{old}/play_again")).status_code == 201 and r,
            what="room for the next game",
        )
        for _ in range(3):  # each finds the next game made: never over the limit
            again = host.post(f"/api/tables/{old}/play_again")
            assert again.status_code == 200, again.text
            assert again.json()["table_id"] == made.json()["table_id"]


def test_a_next_game_that_cannot_be_opened_is_started_again_by_the_hosts_tap(
    app: Any, ended: dict[str, Any]
) -> None:
    """The next game was stored, left memory and can no longer be opened (here: its stored
    game is one this server does not know). Before: every finished screen's button, the
    host's too, answered 409 `stored_table` ("the stored table ... is damaged") at every
    tap, and nothing led on. Now a player's tap says the next game cannot be opened and to
    ask the host, and the host's tap on the same button starts another next game, which
    the player's next tap reaches."""
    old, host, ann = ended["table_id"], ended["host"], ended["ann"]
    broken = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    tables = app.state.tables
    assert broken in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
    with sqlite3.connect(tables.store.path) as db:
        db.execute("UPDATE tables SET game = 'no-such-game' WHERE table_id = ?", (broken,))
    refused = ann.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 409, refused.text
    assert refused.json()["rule"] == "next_game_unopenable"
    assert "the next game cannot be opened" in refused.json()["message"]
    assert "ask the host" in refused.json()["message"]
    again = host.post(f"/api/tables/{old}/next_seat")
    assert again.status_code == 201, again.text
    replacement = again.json()["table_id"]
    assert replacement != broken and again.json()["host"] is True
    assert state(host, old)["next_table"] == replacement
    taken = ann.post(f"/api/tables/{old}/next_seat")
    assert taken.status_code == 200 and taken.json()["table_id"] == replacement
    assert taken.json()["seat"] == 0


CONTINUES = "This game continues at a new table: ask the host for its join code."
CONTINUES_FOR_HOST = "This game continues at the new table you imported it to."


def test_a_game_moved_by_export_and_import_points_its_old_screens_to_the_new_table(
    app: Any, host: TestClient
) -> None:
    """A full table moves to a new one by export, end and import (table_full's advice).
    Before, the old table's screens only said the game was over. Now, when the host's
    device imports the record it exported, the old screens say the game continues at a
    new table and to ask the host for its code: a pointer, no access (no code, no way in,
    nothing carried); a record that names the table, imported by anyone else, points
    nothing."""
    table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
    old = table["table_id"]
    ann = TestClient(app)
    seat_player(ann, table["code"], old, 0)
    record = host.get(f"/api/tables/{old}/record").json()
    assert host.post(f"/api/tables/{old}/end").status_code == 200
    stranger = TestClient(app)  # the record names the table: no pointer from its import
    assert stranger.post("/api/import", json=record).status_code == 201
    assert "continues at a new table" not in ann.get(f"/t/{old}/sheet").text
    imported = host.post("/api/import", json=record)
    assert imported.status_code == 201, imported.text
    new = imported.json()
    sheet = ann.get(f"/t/{old}/sheet").text
    assert CONTINUES in sheet and new["code"] not in sheet and new["table_id"] not in sheet
    # the host is the one asked for the code: their own screen says where the game went
    hosts = host.get(f"/t/{old}").text
    assert CONTINUES_FOR_HOST in hosts and "ask the host" not in hosts
    assert "data-next-seat" not in sheet
    assert ann.post(f"/api/tables/{old}/next_seat").status_code == 404
    assert ann.get(f"/api/tables/{new['table_id']}/state").status_code == 401
    assert state(host, new["table_id"])["state_id"] == 0  # the game goes on there


def test_a_next_game_removed_as_damaged_is_started_again_by_the_hosts_tap(
    app: Any, ended: dict[str, Any]
) -> None:
    """The next game was removed from the store (as damaged). Before: a player's tap said
    "the host has not started a next game" (404 `no_next_game`), and so did the host's
    own, under the "Next game ready" it still showed."""
    old, host, bob = ended["table_id"], ended["host"], ended["bob"]
    gone = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    tables = app.state.tables
    assert gone in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
    tables.store.remove_table(gone)
    refused = bob.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 409 and refused.json()["rule"] == "next_game_unopenable"
    assert "no longer stored" in refused.json()["message"]
    again = host.post(f"/api/tables/{old}/next_seat")
    assert again.status_code == 201 and again.json()["table_id"] != gone
    assert bob.post(f"/api/tables/{old}/next_seat").json()["seat"] == 1


def test_a_finished_games_record_imported_by_its_host_points_nowhere(
    app: Any, host: TestClient
) -> None:
    """The host exports a game after its end and imports the record (it goes to the
    history: nothing goes on). Before: the old screens said "This game continues at a new
    table", and the host's "Play again" was gone from them."""
    table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
    old = table["table_id"]
    ann = TestClient(app)
    seat_player(ann, table["code"], old, 0)
    assert host.post(f"/api/tables/{old}/end").status_code == 200
    record = host.get(f"/api/tables/{old}/record").json()
    assert record["ended_by_host"] is True
    assert host.post("/api/import", json=record).status_code == 201
    assert CONTINUES not in ann.get(f"/t/{old}/sheet").text
    page = host.get(f"/t/{old}").text
    assert CONTINUES not in page and "data-play-again" in page


def test_a_device_that_joined_before_the_hosts_replacement_next_game_is_not_carried(
    app: Any, ended: dict[str, Any]
) -> None:
    """The first next game can no longer be opened, and the host's tap starts another in
    its place. A device that joined the finished game between the first Play again and
    that tap was not at the game played again. Before: the cutoff was the replacement's
    creation, so that device was carried into the replacement; the cutoff is now the first
    Play again's, stored with the link."""
    old, host = ended["table_id"], ended["host"]
    broken = host.post(f"/api/tables/{old}/play_again").json()["table_id"]
    late = TestClient(app)
    assert late.post("/api/join", json={"code": ended["code"]}).status_code == 200
    tables = app.state.tables
    assert broken in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
    tables.store.remove_table(broken)
    again = host.post(f"/api/tables/{old}/next_seat")
    assert again.status_code == 201 and again.json()["table_id"] != broken
    refused = late.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "joined_after_next_game"
    assert ended["tv"].post(f"/api/tables/{old}/next_seat").status_code == 200


def test_a_clock_stepped_back_does_not_carry_a_device_that_joined_after_play_again(
    app: Any, ended: dict[str, Any]
) -> None:
    """A Pi without a clock of its own steps its time when it finds the network: a device
    that joined after Play again may carry an earlier time than the next game's creation.
    Before: such a device (here, its join stored an hour back) was carried; the order of
    joins is now the store's own count of devices, which no clock moves."""
    old, host = ended["table_id"], ended["host"]
    host.post(f"/api/tables/{old}/play_again")
    late = TestClient(app)
    assert late.post("/api/join", json={"code": ended["code"]}).status_code == 200
    with sqlite3.connect(app.state.tables.store.path) as db:
        db.execute(
            "UPDATE devices SET created_at = created_at - 3600 WHERE token_hash = ?",
            (hash_token(late.cookies[cookie_name(old)]),),
        )
    refused = late.post(f"/api/tables/{old}/next_seat")
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "joined_after_next_game"


LATE_WORDS = "The host started a next game: ask the host for its join code."


def test_a_device_that_joined_after_play_again_is_offered_no_tap_to_the_next_game(
    app: Any, ended: dict[str, Any]
) -> None:
    """Before: a device that joined the finished game after Play again saw "Next game
    ready: tap to open its scoreboard", and its tap was refused (403). Its finished screen
    now says to ask the host for the next game's code; a device that was there (drawn
    first, so the late one is not handed its drawing) still has its button."""
    old, host = ended["table_id"], ended["host"]
    host.post(f"/api/tables/{old}/play_again")
    tv_page = ended["tv"].get(f"/t/{old}").text
    assert "data-next-seat" in tv_page and LATE_WORDS not in tv_page
    late = TestClient(app)
    assert late.post("/api/join", json={"code": ended["code"]}).status_code == 200
    page = late.get(f"/t/{old}").text
    assert LATE_WORDS in page and "data-next-seat" not in page
