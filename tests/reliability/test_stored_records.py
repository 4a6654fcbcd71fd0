"""An imported game record is checked exactly as a new table is (one name per seat, each
1-40 characters, options in range and small, the record's schema, who made each action),
and nothing a store holds makes a page answer 500: rows an older server stored (a record
with 1 name for 3 seats was accepted, and /history and the table's pages answered 500 for
good) are shown as a clear error or left out of the history with a note.

Against the real `companion serve` process and its SQLite file."""

from __future__ import annotations

import html
import re
import sqlite3
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from companion.table.access import hash_token
from companion.table.store import LogEntry, Store
from tests.web.conftest import ServerProcess
from tests.web.helpers import QWIXX_ROLL_7

THREE = {"players": 3}
NAMES = ["Ann", "Ben", "Cat"]

# (what is wrong, options, players): each refused at creation and at import alike
BAD_TABLES: list[tuple[str, dict[str, Any], list[Any]]] = [
    ("1 name for 3 seats", THREE, ["Ann"]),
    ("100 names for 3 seats", THREE, [f"P{i}" for i in range(100)]),
    ("a 100,000-character name", THREE, ["A" * 100_000, "Ben", "Cat"]),
    ("an empty name", THREE, ["", "Ben", "Cat"]),
    ("a name that is a number", THREE, [7, "Ben", "Cat"]),
    ("99 players", {"players": 99}, []),
    ("an unknown option", {"players": 3, "speed": "fast"}, NAMES),
    ("options of 6 KB", {"players": 3, "note": "x" * 6000}, NAMES),
]


def record(options: dict[str, Any], players: list[Any], actions: list[Any]) -> dict[str, Any]:
    return {
        "schema": 1,
        "game": "qwixx",
        "options": options,
        "players": players,
        "actions": actions,
    }


@pytest.mark.parametrize(
    ("problem", "options", "players"), BAD_TABLES, ids=[c[0] for c in BAD_TABLES]
)
def test_an_import_is_refused_where_the_table_would_be(
    server: ServerProcess, problem: str, options: dict[str, Any], players: list[Any]
) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=10)
    created = client.post(
        "/api/tables", json={"game": "qwixx", "options": options, "players": players}
    )
    imported = client.post("/api/import", json=record(options, players, []))
    assert created.status_code == 422, (problem, created.text[:200])
    assert imported.status_code == 422, (problem, imported.text[:200])
    assert imported.json()["message"], problem
    history = client.get("/history")
    assert history.status_code == 200 and "Ben" not in history.text


def test_an_import_names_who_made_each_action(server: ServerProcess) -> None:
    client = httpx.Client(base_url=server.base_url, timeout=10)
    cases = [
        ("7", "no seat '7'"),  # a seat the table does not have
        (["host"], '"by" is "host", "camera" or a seat number'),
        ("h" * 200, '"by" is "host", "camera" or a seat number'),
    ]
    for by, words in cases:
        answer = client.post(
            "/api/import", json=record(THREE, NAMES, [{"by": by, "move": QWIXX_ROLL_7}])
        )
        assert answer.status_code == 422 and words in answer.json()["message"], answer.text
        assert answer.json()["index"] == 0
    good = client.post(
        "/api/import", json=record(THREE, NAMES, [{"by": "camera", "move": QWIXX_ROLL_7}])
    )
    assert good.status_code == 201, good.text
    table_id = good.json()["table_id"]
    assert client.get(f"/t/{table_id}", headers={"accept": "text/html"}).status_code == 200
    assert client.get(f"/api/tables/{table_id}/state").json()["players"] == NAMES


def store_damaged_tables(server: ServerProcess) -> dict[str, str]:
    """Rows an older server let in or a damaged file holds, each with a host device whose
    token is its table id (so the test can open its pages): table id -> what is wrong."""
    store = Store.open(server.data_dir / "companion.sqlite3")
    tables = {
        "onename": "1 name for 3 seats, finished (the probe's import)",
        "hundred": "100 names for 3 seats, running",
        "longname": "a 100,000-character name",
        "badjson": "options that are not JSON",
        "noreplay": "a log entry that no longer replays",
        "badsummary": "a finished game whose summary lacks its totals",
    }
    roll = LogEntry(1, "roll-1", "move", "camera", QWIXX_ROLL_7)
    players = {"onename": ["Ann"], "hundred": [f"P{i}" for i in range(100)]}
    players["longname"] = ["L" * 100_000, "Ben", "Cat"]
    for index, table_id in enumerate(tables):
        names = players.get(table_id, NAMES)
        seed = [roll]
        if table_id == "noreplay":  # crossing 12 in red before any 2..11: not allowed
            cross = {"kind": "cross", "player": 0, "colour": "red", "number": 12}
            seed.append(LogEntry(2, "cross-1", "move", "0", cross))
        store.create_table(table_id, f"CODE{index:02d}", "qwixx", THREE, names, seed)
        store.add_device(hash_token(f"token-{table_id}"), table_id, True, None)
    summary = {
        "game": "qwixx",
        "title": "Qwixx",
        "players": ["Ann"],
        "scores": [{"seat": s, "total": 0, "breakdown": []} for s in range(3)],
        "winners": [0, 1, 2],
        "end_message": "ended by the host",
        "ended_by_host": True,
        "actions": 1,
    }
    store.set_finished("onename", summary)
    store.set_finished("badsummary", summary | {"players": NAMES, "scores": [{"seat": 0}]})
    store.close()
    db = sqlite3.connect(server.data_dir / "companion.sqlite3")
    db.execute("UPDATE tables SET options_json = '{nope' WHERE table_id = 'badjson'")
    db.commit()
    db.close()
    return tables


def test_stored_tables_that_break_the_rules_never_answer_500(server: ServerProcess) -> None:
    damaged = store_damaged_tables(server)
    good = httpx.Client(base_url=server.base_url, timeout=10)
    created = good.post("/api/tables", json={"game": "qwixx", "options": THREE, "players": NAMES})
    fine = created.json()["table_id"]
    assert good.post(f"/api/tables/{fine}/end").status_code == 200

    history = good.get("/history")
    assert history.status_code == 200
    assert f"/t/{fine}" in history.text  # the sound game is listed
    for table_id in ("onename", "badsummary"):  # finished but not showable: a note each
        assert f"(table {table_id}) cannot be shown" in history.text, table_id

    pages = ["/t/{t}", "/t/{t}/sheet", "/t/{t}/seat", "/t/{t}/log", "/t/{t}/dice", "/t/{t}/live"]
    api = ["/api/tables/{t}/state", "/api/tables/{t}/record", "/api/tables/{t}/camera"]
    for table_id, problem in damaged.items():
        if table_id == "badsummary":
            continue  # its table opens (only the stored summary is wrong)
        client = httpx.Client(
            base_url=server.base_url, timeout=10, cookies={f"tc_{table_id}": f"token-{table_id}"}
        )
        for path in pages:
            answer = client.get(path.format(t=table_id), headers={"accept": "text/html"})
            if table_id == "noreplay" and path.endswith("/log"):  # its log, as stored
                assert answer.status_code == 200 and 'id="log-damaged"' in answer.text
                continue
            assert answer.status_code == 409, (problem, path, answer.status_code)
            assert "is damaged" in answer.text, (problem, path)
        for path in api:
            answer = client.get(path.format(t=table_id))
            assert answer.status_code == 409 and answer.json()["rule"] == "stored_table", problem
        move = {"action_id": "after-damage", "move": {"kind": "pass", "player": 0}}
        assert client.post(f"/api/tables/{table_id}/actions", json=move).status_code == 409
        joined = client.post("/api/join", json={"code": f"CODE{list(damaged).index(table_id):02d}"})
        assert joined.status_code == 409, (problem, joined.text)
        url = server.base_url.replace("http", "ws", 1) + f"/t/{table_id}/ws"
        with pytest.raises(InvalidStatus):  # refused at the handshake, not a broken socket
            connect(url, additional_headers={"Cookie": f"tc_{table_id}=token-{table_id}"})
    log = server.log_path.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert good.get("/history").text.count("cannot be shown") == 2


# a move entry's stored text, as a damaged file or an older server's rules may leave it:
# (table id, seq 2's move_json, the reason the log page names)
CORRUPTED_MOVES = [
    ("badfield", '{"kind": "pass", "player": "zero"}', "move.player: expected an integer"),
    ("notjson", '{"kind": "pa', "its stored move is not JSON"),
    ("notobject", "[1, 2]", "its stored move is not a JSON object"),
    ("nolonger", '{"kind": "cross", "player": 0, "colour": "red", "number": 12}', "red 12"),
]


def test_a_table_whose_stored_log_holds_a_corrupted_move_shows_its_log_read_only(
    server: ServerProcess,
) -> None:
    """A move in the SQLite store that no longer decodes (a field of the wrong type, text
    that is not JSON or no JSON object) or applies (red 12 before five crosses). The table
    cannot be played on: its pages answer 409 "is damaged" (a move that was no JSON object
    or not JSON at all answered 500 on every page of the table, the store's log raising),
    but its log page opens to its devices and the server's own screen, read-only, with a
    note naming the damaged entry and why; the entries from it on read as stored (the 409
    page links to it). Another device still reads 409 (the damage, not the log)."""
    store = Store.open(server.data_dir / "companion.sqlite3")
    ann_pass = LogEntry(2, "pass-1", "move", "0", {"kind": "pass", "player": 0})
    later = LogEntry(3, "undo-1", "undo", "0", None)
    for index, (table_id, _, _) in enumerate(CORRUPTED_MOVES):
        roll = LogEntry(1, "roll-1", "move", "camera", QWIXX_ROLL_7)
        store.create_table(
            table_id, f"DMG{index:02d}", "qwixx", THREE, NAMES, [roll, ann_pass, later]
        )
        store.add_device(hash_token(f"token-{table_id}"), table_id, True, None)
    store.close()
    db = sqlite3.connect(server.data_dir / "companion.sqlite3")
    for table_id, stored, _ in CORRUPTED_MOVES:
        db.execute(
            "UPDATE actions SET move_json = ? WHERE table_id = ? AND seq = 2", (stored, table_id)
        )
    db.commit()
    db.close()

    as_page = {"accept": "text/html"}
    for table_id, _, why in CORRUPTED_MOVES:
        device = httpx.Client(
            base_url=server.base_url, timeout=10, cookies={f"tc_{table_id}": f"token-{table_id}"}
        )
        table = device.get(f"/t/{table_id}", headers=as_page)
        assert table.status_code == 409 and "is damaged" in table.text, (table_id, table.text)
        assert f'href="/t/{table_id}/log" id="damaged-log"' in table.text  # where to read it
        for _ in range(2):  # opened, then as remembered damaged
            log = device.get(f"/t/{table_id}/log", headers=as_page)
            assert log.status_code == 200, (table_id, log.status_code, log.text[:300])
            note = re.search(r'<p class="error" role="status" id="log-damaged">(.*?)</p>', log.text)
            assert note is not None, table_id
            assert html_text(note.group(1)) == (
                f"This game cannot be opened (the stored table {table_id} is damaged: log "
                f"entry 2 no longer replays: {html_text(row_damage(log.text))}); its log is "
                "shown as stored, read-only. The entries from #2 on read as stored."
            ), table_id
            damaged = re.findall(r'<tr[^>]*data-seq="(\d+)".*?</tr>', log.text, re.S)
            assert damaged == ["1", "2", "3"], table_id
            row = re.search(r'data-seq="2".*?</tr>', log.text, re.S)
            assert row is not None and "Damaged: " in row.group(0), table_id
            assert why in html_text(row.group(0)), (table_id, row.group(0))
        # the server's own screen reads it too; another device (its address behind a
        # proxy header) reads the damage
        assert httpx.get(f"{server.base_url}/t/{table_id}/log", headers=as_page).status_code == 200
        elsewhere = httpx.get(
            f"{server.base_url}/t/{table_id}/log", headers=as_page | {"x-forwarded-for": "10.0.0.9"}
        )
        assert elsewhere.status_code == 409 and "is damaged" in elsewhere.text, table_id
    log_text = server.log_path.read_text()
    assert "Traceback" not in log_text, log_text[-3000:]


def row_damage(page: str) -> str:
    """The damaged row's reason on a log page (after "Damaged: ")."""
    found = re.search(r"<strong class=\"error\" data-damaged>Damaged: (.*?)</strong>", page)
    assert found is not None, page[-2000:]
    return found.group(1)


def html_text(fragment: str) -> str:
    """A fragment of HTML as text: its tags dropped, its entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))
