"""The start page's games in progress, through the real app: a device on another machine
sees only the tables it holds a device cookie for, and never a join code; the server's
own screen (loopback) sees every running table with its code, START_PAGE_GAMES at a time
(newest first), and a client address asks for it at the long pages' rate."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules import registry
from companion.rules.registry import GameRegistrationError
from companion.table.access import hash_token
from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app
from companion.web.deps import cookie_name
from companion.web.routes.api import games_catalogue
from companion.web.routes.pages import START_PAGE_GAMES
from companion.web.settings import Settings
from tests.tiny_game import tiny_game_registered
from tests.web.helpers import (
    QWIXX_ROLL_7,
    create_table,
    every_page_of,
    refuse_reading_every_table,
    seat_player,
    stored_tables,
)


def test_other_devices_see_only_their_own_games_in_progress(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:  # TestClient's address is not loopback: another device
        ours = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        other = create_table(TestClient(app), "sixto", ["Cid", "Dee"], {"players": 2})
        page = host.get("/").text
        assert f'href="/t/{ours["table_id"]}"' in page and "Qwixx: Ann, Bob" in page
        assert other["table_id"] not in page and "Cid, Dee" not in page
        assert ours["code"] not in page  # a remote device is not shown join codes

        ann = TestClient(app)
        seat_player(ann, other["code"], other["table_id"], 0)
        assert "Sixto: Cid, Dee" in ann.get("/").text
        stranger = TestClient(app).get("/").text
        assert "in-progress" not in stranger  # a stranger sees none
        assert "Cid" not in stranger and "calibrate-link" not in stranger


def test_the_servers_own_screen_lists_every_table_with_its_code(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        table = create_table(TestClient(app), "qwixx", ["Ann", "Bob"], {"players": 2})
        page = local.get("/").text
        assert "Qwixx: Ann, Bob" in page and table["code"] in page
        assert 'href="/calibrate" id="calibrate-link"' in page  # its calibration page
        assert local.post(f"/api/tables/{table['table_id']}/end").status_code == 401


def _listed(page: str) -> list[str]:
    """The ids of the games in progress a start page lists."""
    return re.findall(r'class="playing-game" data-table-id="([^"]+)"', page)


def test_the_start_page_lists_the_newest_games_and_pages_on_to_older_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start page read every running table's row and drew them all on each request
    (0.77 s a request at 3,000 running tables; two clients looping on it slowed another
    table's pushes to a p95 of 90 ms): it lists START_PAGE_GAMES newest first, says how many
    there are, and links to the older ones, reading only the rows it shows."""
    newest_first = stored_tables(tmp_path, 2 * START_PAGE_GAMES + 5, finished=False)
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        refuse_reading_every_table(app, monkeypatch)
        pages = every_page_of(local, "/")
        assert all(f"of {len(newest_first)}, newest first" in page for page in pages)
        listed = [_listed(page) for page in pages]
        assert [len(p) for p in listed] == [START_PAGE_GAMES, START_PAGE_GAMES, 5]
        assert [t for p in listed for t in p] == newest_first  # never the finished one
        assert 'href="/?older=30" id="newer-games"' in pages[-1]
        beyond = local.get("/", params={"older": 1000}).text
        assert _listed(beyond) == [] and "No more games" in beyond


def test_another_device_lists_only_the_tables_its_cookies_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device elsewhere sees its own games among many without the server reading every
    stored table (a lookup per cookie)."""
    stored_tables(tmp_path, 50, finished=False)
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host:
        ours = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        host.cookies.set(cookie_name("t00007"), "not-a-device-token")
        refuse_reading_every_table(app, monkeypatch)
        page = host.get("/").text
        assert _listed(page) == [ours["table_id"]]
        assert "playing-more" not in page  # all of them are shown


def _camera_line(page: str) -> str:
    found = re.search(r'id="camera-line" role="status">([^<]*)</p>', page)
    assert found is not None, "the start page has no camera line"
    return found.group(1)


def test_the_camera_line_names_its_table_beyond_the_games_listed(tmp_path: Path) -> None:
    """The camera serves a game older than the START_PAGE_GAMES the start page lists: the
    page names it to a browser that may see it (looked up by its id; it said "a game in
    progress"), and to a device that has not joined it only as a game in progress."""
    newest_first = stored_tables(tmp_path, START_PAGE_GAMES + 5, finished=False)
    oldest = newest_first[-1]  # Ann1 and Bob's
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=False)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        tokens = {table_id: f"token-{table_id}" for table_id in newest_first}
        for table_id, token in tokens.items():  # a host device at each table
            app.state.tables.store.add_device(hash_token(token), table_id, True, None)
        local.cookies.set(cookie_name(oldest), tokens[oldest])
        assert local.post(f"/api/tables/{oldest}/camera/attach").status_code == 200
        page = local.get("/").text
        assert oldest not in _listed(page)
        assert "The camera stays with Qwixx: Ann1, Bob:" in _camera_line(page)

        device = TestClient(app, cookies={cookie_name(t): token for t, token in tokens.items()})
        page = device.get("/").text
        assert oldest not in _listed(page) and len(_listed(page)) == START_PAGE_GAMES
        assert "The camera stays with Qwixx: Ann1, Bob:" in _camera_line(page)
        stranger = TestClient(app).get("/").text
        assert "The camera stays with a game in progress:" in _camera_line(stranger)
        assert "Ann1" not in stranger


def test_the_camera_line_does_not_credit_a_host_with_the_owners_choice(tmp_path: Path) -> None:
    """A café owner's trial: after "Use the camera here" on the server's own start page the
    camera line read "The camera stays with Qwixx: Ann, Bob: its host attached it there",
    though no host had done anything. Now it says the camera was chosen for that game,
    whoever chose it; a table's host is told the same when taking it back is refused."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=False)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        hosts_phone = TestClient(app)  # both tables' host, another device
        chosen = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        other = create_table(hosts_phone, "sixto", ["Cid", "Dee"], {"players": 2})
        assert local.post(f"/t/{chosen['table_id']}/camera").status_code == 200
        line = _camera_line(local.get("/").text)
        assert "host" not in line, line
        assert line.startswith("The camera stays with Qwixx: Ann, Bob: it was chosen for "), line
        taken = hosts_phone.post(f"/api/tables/{other['table_id']}/camera/attach")
        assert taken.status_code == 403 and taken.json()["rule"] == "camera_held"
        assert "(it was chosen for that game)" in taken.json()["message"]


def test_the_start_page_is_rate_limited_per_address(tmp_path: Path) -> None:
    """A client looping on the start page gets the long pages' 429 (read_rate) past its
    burst; another address still gets the page."""
    settings = Settings(data_dir=tmp_path, read_burst=3, read_rate_per_s=0.01)
    app = create_app(settings)
    with TestClient(app, client=("127.0.0.1", 50000)) as looping:
        assert [looping.get("/").status_code for _ in range(3)] == [200, 200, 200]
        refused = looping.get("/", headers={"accept": "application/json"})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert refused.json()["rule"] == "read_rate", refused.text
        # the start page is not one of the long pages (history, log) it shares the rate with
        assert "long" not in refused.json()["message"], refused.text
        assert TestClient(app, client=("10.0.0.9", 50000)).get("/").status_code == 200


def ended_here_and_by_the_host(
    local: TestClient, gone_home: TestClient
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two games the host's device started: a Qwixx game ended on the server's own start
    page (`local`) and a Sixto game its host ended (`gone_home`)."""
    left = create_table(gone_home, "qwixx", ["Ann", "Bob"], {"players": 2})
    by_host = create_table(gone_home, "sixto", ["Cid", "Dee"], {"players": 2})
    assert local.post(f"/t/{left['table_id']}/end").status_code == 200
    assert gone_home.post(f"/api/tables/{by_host['table_id']}/end").status_code == 200
    return left, by_host


def test_the_servers_own_screen_ends_a_game_its_host_left(tmp_path: Path) -> None:
    """A café owner's trial: a table whose host went home with the host's phone stayed in
    "Games in progress" for ever (and a new game's camera line named it); only the host's
    device could end it, and the server's own screen listed it, code and all, with no way to
    close it. Now the server's own screen ends it (to the history); nobody else does."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        gone_home = TestClient(app)  # the host's phone, another device
        left = create_table(gone_home, "qwixx", ["Ann", "Bob"], {"players": 2})
        kept = create_table(gone_home, "sixto", ["Cid", "Dee"], {"players": 2})
        end_form = f'action="/t/{left["table_id"]}/end"'
        assert end_form in local.get("/").text
        assert end_form not in gone_home.get("/").text  # the host has Host tools

        assert TestClient(app).post(f"/t/{left['table_id']}/end").status_code == 403
        assert gone_home.post(f"/t/{left['table_id']}/end").status_code == 403
        ended = local.post(f"/t/{left['table_id']}/end", follow_redirects=False)
        assert ended.status_code == 303 and ended.headers["location"] == "/"

        page = local.get("/").text
        assert "Qwixx: Ann, Bob" not in page and "Sixto: Cid, Dee" in page
        assert gone_home.get(f"/api/tables/{left['table_id']}/state").json()["finished"]
        assert not gone_home.get(f"/api/tables/{kept['table_id']}/state").json()["finished"]
        assert "Ann" in local.get("/history").text
        assert local.post("/t/nosuchtable1/end").status_code == 404


A_BROWSER = {"accept": "text/html,application/xhtml+xml"}  # a form's post, as browsers send it


@pytest.mark.parametrize("button", ["end", "camera"])
def test_a_button_on_a_game_that_no_longer_opens_says_why_not_no_such_table(
    button: str, tmp_path: Path
) -> None:
    """The server's own start page lists a game in progress from its stored header, so a
    game whose stored options no longer open (an older server's, a damaged file) is listed
    with "End this game" and "Use the camera here". Before, their tap answered 404 "no such
    table" (as JSON), as if the game were not there; now they say, as the game's own pages
    do, that the stored game is damaged and why (409 stored_table), on an error page to a
    browser, and the start page then offers to remove it."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        table_id = create_table(TestClient(app), "qwixx", ["Ann", "Bob"], {"players": 2})[
            "table_id"
        ]
        tables = app.state.tables
        assert table_id in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
        with sqlite3.connect(tables.store.path) as db:
            damaged = json.dumps({"players": 2, "no_such_option": 1})
            db.execute("UPDATE tables SET options_json = ? WHERE table_id = ?", (damaged, table_id))
        assert f'action="/t/{table_id}/end"' in local.get("/").text  # listed as running

        refused = local.post(f"/t/{table_id}/{button}", follow_redirects=False)
        assert refused.status_code == 409, refused.text
        assert refused.json()["rule"] == "stored_table"
        assert f"the stored table {table_id} is damaged: bad options" in refused.json()["message"]
        page = local.post(f"/t/{table_id}/{button}", headers=A_BROWSER, follow_redirects=False)
        assert page.status_code == 409 and page.headers["content-type"].startswith("text/html")
        assert f"The stored table {table_id} is damaged: bad options" in page.text
        assert "typed wrong" not in page.text
        listing = local.get("/").text
        assert f'action="/t/{table_id}/remove"' in listing
        assert "data-damaged-log" not in listing  # its header is damaged: no log to read
        assert not tables.store.table(table_id).finished_at  # nothing was ended


def test_a_game_whose_log_no_longer_replays_links_to_its_log_read_only(tmp_path: Path) -> None:
    """A game in progress whose stored log holds a move that no longer decodes: once an
    open found it, the start page lists it as a game that cannot be opened, with why and
    a link to its log, which opens read-only (the start page offered only "Remove it", and
    the log was found only through the table's 409 page)."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        host = TestClient(app)
        table_id = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        tables = app.state.tables
        rolled = host.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": "roll-00001", "move": QWIXX_ROLL_7},
        )
        assert rolled.status_code == 200, rolled.text
        assert table_id in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
        with sqlite3.connect(tables.store.path) as db:
            db.execute("UPDATE actions SET move_json = '[7]' WHERE table_id = ?", (table_id,))
        assert "data-damaged-log" not in local.get("/").text  # not known before an open
        assert local.get(f"/t/{table_id}", headers=A_BROWSER).status_code == 409

        listing = local.get("/").text
        entry = re.search(
            rf'<li class="playing-game broken" data-table-id="{table_id}">.*?</li>', listing, re.S
        )
        assert entry is not None, listing
        words = " ".join(re.sub(r"<[^>]+>", " ", entry.group(0)).split())
        assert "log entry 1 no longer replays" in words, words
        assert (
            "It cannot be opened to play on, as entry 1 of its log no longer replays; its "
            "log can still be read, as stored. Read its log (read-only)"
        ) in words
        assert f'href="/t/{table_id}/log" data-damaged-log' in entry.group(0)
        log = local.get(f"/t/{table_id}/log", headers=A_BROWSER)
        assert log.status_code == 200 and "its log is shown as stored, read-only" in log.text


def test_a_game_ended_on_the_servers_machine_says_so_not_that_the_host_ended_it(
    tmp_path: Path,
) -> None:
    """A café owner's trial: "End this game" on the server's own start page went to the
    history as "ended by the host", whose device had long gone home. Now the history, the
    table's screens, its log page and the record of who ended it say the server's machine
    (by its owner), after a restart too; a host's end, and an entry an older server stored,
    still read "ended by the host"."""
    settings = Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True))
    app = create_app(settings)
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        gone_home = TestClient(app)  # the host's phone, another device
        left, by_host = ended_here_and_by_the_host(local, gone_home)
        store = app.state.tables.store
        assert store.table(left["table_id"]).summary["ended_on_server"] is True
        assert "ended_on_server" not in store.table(by_host["table_id"]).summary
        # an older server's entry of a host's end: no "ended_on_server" key
        store.create_table("old01", "OLD001", "qwixx", {"players": 2}, ["Eve", "Fay"])
        older = {"game": "qwixx", "title": "Qwixx", "players": ["Eve", "Fay"], "scores": []}
        store.set_finished("old01", older | {"end_message": "ended by the host"})
        history = local.get("/history").text
        assert history.count("Ended on the server&#39;s machine, by its owner") == 1
        assert history.count("Ended by the host") == 2  # the host's end, the older entry
        cookies = dict(gone_home.cookies)
    with TestClient(create_app(settings), cookies=cookies) as host_after_restart:
        page = host_after_restart.get(f"/t/{left['table_id']}").text
        assert "Ended on the server&#39;s machine, by its owner" in page
        assert "host ended" not in page
        assert "ahead when the game was ended on the server&#39;s machine" in page
        log = host_after_restart.get(f"/t/{left['table_id']}/log").text
        assert "<td>the server's machine</td><td>ended the game here</td>" in log
        hosts = host_after_restart.get(f"/t/{by_host['table_id']}").text
        assert "The host ended this game" in hosts and "server&#39;s machine" not in hosts


def test_a_game_ended_on_the_servers_machine_keeps_saying_so_after_export_and_import(
    tmp_path: Path,
) -> None:
    """A café owner's trial: a game ended on the server's own start page read "Ended on the
    server's machine, by its owner", but its exported record only said `ended_by_host`, so
    imported again it read "ended by the host". Now the record says `ended_on_server` and
    the imported game reads as the original did; a host's end and an older record (without
    the field) still read "ended by the host", and a field that is not true or false is
    refused with its rule."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        gone_home = TestClient(app)  # the host's phone, another device
        left, by_host = ended_here_and_by_the_host(local, gone_home)
        record = gone_home.get(f"/api/tables/{left['table_id']}/record").json()
        assert record["ended_by_host"] is True and record["ended_on_server"] is True
        hosts_record = gone_home.get(f"/api/tables/{by_host['table_id']}/record").json()
        assert "ended_on_server" not in hosts_record

        store = app.state.tables.store
        moved = local.post("/api/import", json=record).json()["table_id"]
        assert store.table(moved).summary["ended_on_server"] is True
        page = local.get(f"/t/{moved}").text
        assert "Ended on the server&#39;s machine, by its owner" in page
        assert "host ended" not in page
        again = local.get(f"/api/tables/{moved}/record").json()
        assert again["ended_on_server"] is True  # and exported once more, it still says so

        older = record.copy()
        del older["ended_on_server"]
        for kept_as_host in (older, hosts_record):
            table_id = local.post("/api/import", json=kept_as_host).json()["table_id"]
            assert "ended_on_server" not in store.table(table_id).summary
            assert "The host ended this game" in local.get(f"/t/{table_id}").text
        bad = local.post("/api/import", json=record | {"ended_on_server": "yes"})
        assert bad.status_code == 422 and bad.json()["rule"] == "ended_on_server"


def test_the_servers_own_screen_links_a_game_it_has_not_joined_to_its_filled_join_form(
    tmp_path: Path,
) -> None:
    """A café owner's trial: the server's own start page lists each game in progress with
    its join code, and tapping one led to an empty join form (that browser had not joined
    it). Now its link opens the join form with the code filled in; a game this browser has
    joined opens directly, and another device still sees no code (nor gets one)."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        host = TestClient(app)  # the host's phone, another device
        theirs = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        ours = create_table(local, "sixto", ["Cid", "Dee"], {"players": 2})
        local.cookies.set(cookie_name(theirs["table_id"]), "not-a-device-token")
        page = local.get("/").text
        assert f'href="/join?code={theirs["code"]}">Qwixx: Ann, Bob</a>' in page
        assert f'href="/t/{ours["table_id"]}">Sixto: Cid, Dee</a>' in page  # joined here
        form = local.get(f"/join?code={theirs['code']}").text
        assert f'value="{theirs["code"]}"' in form

        joined = local.post("/join", data={"code": theirs["code"]}, follow_redirects=False)
        assert joined.headers["location"] == f"/t/{theirs['table_id']}/seat"
        assert f'href="/t/{theirs["table_id"]}">Qwixx: Ann, Bob</a>' in local.get("/").text

        remote = host.get("/").text
        assert f'href="/t/{theirs["table_id"]}"' in remote and theirs["code"] not in remote
        stranger = TestClient(app)
        refused = stranger.get(f"/t/{theirs['table_id']}", follow_redirects=False)
        assert refused.headers["location"] == "/join?why=not_joined"  # no code for it
        assert theirs["code"] not in stranger.get("/join?why=not_joined").text


def test_use_the_camera_here_refuses_a_finished_game(tmp_path: Path) -> None:
    """A café owner's trial: the start page lists only games in progress, but its "Use the
    camera here" route took a finished game too, and the camera went to a game nobody
    plays. Now it is refused (409 game_finished) and the camera stays where it was; the
    host's own "Use the camera at this table" on a finished game is refused alike."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=False)))
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        hosts_phone = TestClient(app)  # the host's phone, another device
        over = create_table(hosts_phone, "qwixx", ["Ann", "Bob"], {"players": 2})
        playing = create_table(hosts_phone, "sixto", ["Cid", "Dee"], {"players": 2})
        assert local.post(f"/t/{over['table_id']}/end").status_code == 200
        assert local.post(f"/t/{playing['table_id']}/camera").status_code == 200
        hub = app.state.camera

        refused = local.post(f"/t/{over['table_id']}/camera")
        assert refused.status_code == 409 and refused.json()["rule"] == "game_finished"
        assert "has ended" in refused.json()["message"]
        by_host = hosts_phone.post(f"/api/tables/{over['table_id']}/camera/attach")
        assert by_host.status_code == 409 and by_host.json()["rule"] == "game_finished"
        assert hub.served_table_id == playing["table_id"]


def test_a_stranger_asking_to_remove_a_game_opens_nothing_and_learns_nothing(
    tmp_path: Path,
) -> None:
    """`POST /t/{id}/remove` opened the stored table (replaying its whole log) before it
    asked who wanted it removed: a device with no code, knowing a table's id, made the
    server open it past its limit on opens (`open_rate`) and read "only a game that cannot
    be opened is removed", that is, the table is there and sound. Now the device is asked
    first: 403 host_only, and the table stays in the store."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app) as host:  # a device on the network, as every client below
        table_id = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})["table_id"]
        tables = app.state.tables
        assert table_id in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
        stranger = TestClient(app)
        refused = stranger.post(f"/t/{table_id}/remove", follow_redirects=False)
        assert refused.status_code == 403, refused.text
        assert refused.json()["rule"] == "host_only"
        assert not tables.is_loaded(table_id)
        kept = host.post(f"/t/{table_id}/remove", follow_redirects=False)
        assert kept.status_code == 403 and kept.json()["rule"] == "table_opens"


def test_a_game_registered_while_the_server_runs_is_offered_by_the_start_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start page's games were built once, from the names the registry held when the
    API module was imported: a game registered later in the same process was offered
    neither by the start page nor by /api/games. Both read the registry when asked."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        assert '"name": "qwixx"' in host.get("/").text  # the page built its list once
        with tiny_game_registered(monkeypatch) as tiny:
            assert f'"name": "{tiny}"' in host.get("/").text
            listed = {game["name"]: game for game in host.get("/api/games").json()}
            assert listed[tiny]["title"] == "Tiny Trial"
            assert "qwixx" in listed
            create_table(host, tiny, ["Ann", "Bob"], {"players": 2})


def test_a_registered_game_without_its_module_is_named_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name in the registry with no module behind it was left off the start page without
    a word; it is now an error naming the game and the module it looked for, raised when
    the list is built and when the server starts."""
    monkeypatch.setattr(registry, "GAME_NAMES", (*registry.GAME_NAMES, "ghost_game"))
    registry.find_game.cache_clear()
    with pytest.raises(GameRegistrationError, match=r"'ghost_game'.*companion\.rules\.ghost_game"):
        games_catalogue()
    with (
        pytest.raises(GameRegistrationError, match="ghost_game"),
        TestClient(create_app(Settings(data_dir=tmp_path))),
    ):
        pass


def _broken_entry(page: str, table_id: str) -> str:
    """The words of the start page's entry of a game that cannot be opened."""
    entry = re.search(
        rf'<li class="playing-game broken" data-table-id="{table_id}">.*?</li>', page, re.S
    )
    assert entry is not None, page
    return entry.group(0)


def test_remove_it_is_offered_only_where_the_remove_is_allowed(tmp_path: Path) -> None:
    """Every device holding a damaged game's cookie was offered "Remove it", and a player's
    tap was refused (403 host_only). Now a player's start page says who can remove it,
    and only the host's device (and the server's own screen) offers the button."""
    app = create_app(Settings(data_dir=tmp_path, camera=CameraSettings(disabled=True)))
    with TestClient(app) as host, TestClient(app, client=("127.0.0.1", 50000)) as local:
        table = create_table(host, "qwixx", ["Ann", "Bob"], {"players": 2})
        table_id = table["table_id"]
        bob = TestClient(app)
        seat_player(bob, table["code"], table_id, 1)
        tables = app.state.tables
        assert table_id in tables.evict_idle(time.monotonic() + 10 * tables.idle_s)
        with sqlite3.connect(tables.store.path) as db:
            damaged = json.dumps({"players": 2, "no_such_option": 1})
            db.execute("UPDATE tables SET options_json = ? WHERE table_id = ?", (damaged, table_id))
        assert bob.get(f"/t/{table_id}", headers=A_BROWSER).status_code == 409

        players_entry = _broken_entry(bob.get("/").text, table_id)
        assert "/remove" not in players_entry
        assert "The host's device, or the server's own screen, can remove it." in players_entry
        assert bob.post(f"/t/{table_id}/remove", follow_redirects=False).status_code == 403
        for allowed in (host, local):
            entry = _broken_entry(allowed.get("/").text, table_id)
            assert f'action="/t/{table_id}/remove"' in entry and "can remove it" not in entry
