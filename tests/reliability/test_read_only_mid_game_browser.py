"""A data folder whose disk goes read-only in the middle of a game, in Debian's Chromium:
a café owner's trial (only a store read-only at start was tried). The player's tap after
it is not taken: the box stays open and the player reads "Not saved: Red 7. The game store
... cannot be written or read ..." (it read the store's words alone, not which tap they
were about). The disk is a real ext4 file system the kernel turns read-only
(test_storage.FailingDisk). Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.reliability.test_storage import failing_disk, new_server
from tests.web.conftest import shot
from tests.web.devices import PHONE
from tests.web.helpers import QWIXX_ROLL_7

pytestmark = pytest.mark.browser


def test_a_cross_after_the_disk_went_read_only_is_not_taken_and_says_so(
    browser: Any, tmp_path: Path
) -> None:
    with failing_disk(tmp_path) as disk:
        server = new_server(disk.path / "data", tmp_path)
        server.start()
        try:
            ann = browser.new_context(**PHONE).new_page()  # the host's device, seated as Ann
            created = ann.request.post(
                server.base_url + "/api/tables",
                data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
            )
            table = created.json()
            api = f"{server.base_url}/api/tables/{table['table_id']}"
            assert ann.request.post(f"{api}/seat", data={"seat": 0}).ok
            ann.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
            ann.wait_for_selector("#conn[data-conn=live]")
            rolled = ann.request.post(
                f"{api}/actions", data={"action_id": "roll-0001", "move": QWIXX_ROLL_7}
            )
            assert rolled.ok, rolled.text()
            ann.wait_for_selector(".live[data-state-id='1']")

            disk.go_read_only()
            red_7 = ann.locator(".qx-row[data-row=red] .box[data-number='7']")
            red_7.click()  # Ann crosses her white sum: the store cannot keep it
            toast = ann.locator("#toast:not(:empty)")
            expect(toast).to_contain_text("Not saved: Red 7. The game store", timeout=20000)
            expect(toast).to_contain_text("new actions are refused", timeout=20000)
            expect(red_7).not_to_have_class("pending", timeout=20000)
            shot(ann, "read-only-mid-game-refused")
            assert "crossed" not in (red_7.get_attribute("class") or "").split()
            state = ann.request.get(f"{api}/state").json()
            assert state["state_id"] == 1 and state["scores"][0]["total"] == 0
            ann.context.close()
        finally:
            server.stop()
