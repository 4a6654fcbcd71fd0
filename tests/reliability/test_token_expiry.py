"""Device tokens expire with their table (issue 25, item 8): a finished game's tokens work
for `finished_token_s` after it finished (its final sheet, the host's undo of the end),
then every one of them is refused (401) and its join code answers 410, also after a
restart; a running table's tokens are not touched. Real uvicorn, real SQLite."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.reliability.conftest import ThreadServer, thread_settings
from tests.waiting import wait_until

GENEROUS_S = 30.0


def test_a_finished_tables_tokens_stop_working_after_a_while(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ThreadServer(thread_settings(data, finished_token_s=1.0)) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20)
        body = {"game": "qwixx", "options": {"players": 2}}
        ended, running = (host.post("/api/tables", json=body).json() for _ in range(2))
        player = httpx.Client(base_url=server.base_url, timeout=20)
        assert player.post("/api/join", json={"code": ended["code"]}).status_code == 200
        state = f"/api/tables/{ended['table_id']}/state"
        assert host.post(f"/api/tables/{ended['table_id']}/end").status_code == 200
        # just finished: both still see it (the result; the host may take the end back)
        assert host.get(state).status_code == 200 and player.get(state).status_code == 200
        wait_until(lambda: host.get(state).status_code == 401, GENEROUS_S, "the host's expiry")
        assert player.get(state).status_code == 401
        assert host.post(f"/api/tables/{ended['table_id']}/end").status_code == 401
        again = httpx.Client(base_url=server.base_url, timeout=20)
        joined = again.post("/api/join", json={"code": ended["code"]})
        assert joined.status_code == 410 and joined.json()["rule"] == "table_closed"
        # the running table's token is untouched
        assert host.get(f"/api/tables/{running['table_id']}/state").status_code == 200
        cookies = dict(host.cookies)
    # after a restart, the stored end still counts
    with ThreadServer(thread_settings(data, finished_token_s=1.0)) as server:
        host = httpx.Client(base_url=server.base_url, timeout=20, cookies=cookies)
        assert host.get(state).status_code == 401
        assert host.get(f"/api/tables/{running['table_id']}/state").status_code == 200


def test_a_token_works_while_its_table_runs_and_until_the_finish_is_old(tmp_path: Path) -> None:
    """By default a finished game's tokens work for 12 hours after its end."""
    with ThreadServer(thread_settings(tmp_path / "data")) as server:
        assert server.settings.finished_token_s == 12 * 3600  # type: ignore[attr-defined]
        host = httpx.Client(base_url=server.base_url, timeout=20)
        table = host.post("/api/tables", json={"game": "qwixx", "options": {"players": 2}})
        table_id = table.json()["table_id"]
        assert host.post(f"/api/tables/{table_id}/end").status_code == 200
        opened = server.app.state.tables._tables[table_id]
        assert opened.finished_at is not None and not opened.closed_to_devices()
        assert opened.closed_to_devices(opened.finished_at + 12 * 3600 + 1)
        assert host.get(f"/api/tables/{table_id}/state").status_code == 200
