"""Long pages (a game's log, its exported record, the history) are built off the event loop
and kept per state, and each client address may ask for them at a bounded rate, like table
creations (issue 25, item 5). How much they hold up other tables is measured by
`bench/abuse.py --only log record history` (docs/RELIABILITY.md), not timed here; here:
the limit answers 429 naming its rule, and a kept page follows the game."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.reliability.conftest import ThreadServer, thread_settings
from tests.web.helpers import QWIXX_ROLL_7

HTML = {"accept": "text/html"}


def test_long_pages_are_limited_per_client_like_creations(tmp_path: Path) -> None:
    settings = thread_settings(tmp_path, read_burst=3, read_rate_per_s=0.01)
    with ThreadServer(settings) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        table_id = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()[
            "table_id"
        ]
        pages = [f"/t/{table_id}/log", f"/api/tables/{table_id}/record", "/history"]
        assert [host.get(path, headers=HTML).status_code for path in pages] == [200, 200, 200]
        for path in pages:  # the burst is spent: each refused, with when to come back
            refused = host.get(path, headers=HTML)
            assert refused.status_code == 429, (path, refused.status_code)
            assert int(refused.headers["retry-after"]) >= 1
            # a page, or JSON naming read_rate
            assert "too many pages asked for" in refused.text.lower()
        # everything else still answers
        assert host.get(f"/api/tables/{table_id}/state").status_code == 200
        assert host.get(f"/t/{table_id}", headers=HTML).status_code == 200


def test_a_kept_log_page_and_record_follow_the_game(tmp_path: Path) -> None:
    with ThreadServer(thread_settings(tmp_path)) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        created = host.post("/api/tables", json={"game": "qwixx", "options": {}}).json()
        table_id = created["table_id"]
        log, record = f"/t/{table_id}/log", f"/api/tables/{table_id}/record"
        first = host.get(log, headers=HTML).text
        assert first == host.get(log, headers=HTML).text  # kept: the same page
        assert host.get(record).json()["actions"] == []
        rolled = host.post(
            f"/api/tables/{table_id}/actions",
            json={"action_id": "roll-00001", "move": QWIXX_ROLL_7},
        )
        assert rolled.status_code == 200, rolled.text
        second = host.get(log, headers=HTML).text
        assert second != first and "dice" in second
        assert [a["by"] for a in host.get(record).json()["actions"]] == ["host"]
