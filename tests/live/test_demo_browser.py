"""The demo camera on a Sixto table (issue 17 item 4), in Debian's Chromium on a phone and
a tablet: a real server with no camera plays its demo camera through the shipped ONNX
models. It throws Sixto's six dice (no Qwixx whites), the roll is applied, and while the
player decides to keep or re-roll the demo waits (the next throw is no re-roll the player
did not choose) and says so; after Keep it still waits while the players cross."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from companion.rules.base import DiceSpec, Turn
from companion.rules.sixto import DEFAULT_COLOURS
from companion.table.camera_hub import demo_throw
from companion.table.camera_settings import CameraSettings
from companion.web.settings import Settings
from tests.live.replay import LiveServer
from tests.web.conftest import free_port, shot
from tests.web.devices import PHONE, TABLET

pytestmark = pytest.mark.browser


def test_the_demo_throws_only_a_games_own_dice_when_it_asks_for_them(
    browser: Any, tmp_path: Path
) -> None:
    settings = Settings(port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings())
    with LiveServer(settings, None) as server:  # the demo camera, the real models
        host = browser.new_context(**TABLET)
        # the shipped Sixto calibration in use: a real camera's Sixto table would teach it
        used = host.request.post(
            f"{server.base_url}/api/calibration/use", data={"name": "sixto-default"}
        )
        assert used.ok and used.json()["active"] == "sixto"
        created = host.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "sixto", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        assert created.status == 201
        table = created.json()
        tablet = host.new_page()
        tablet.goto(f"{server.base_url}/t/{table['table_id']}")
        phone_context = browser.new_context(**PHONE)
        assert phone_context.request.post(
            f"{server.base_url}/api/join", data={"code": table["code"]}
        ).ok
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        assert phone_context.request.post(f"{api}/seat", data={"seat": 0}).ok
        phone = phone_context.new_page()
        phone.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
        # Bob has no seat: the host starts the demo camera anyway (issue 26 item 2)
        assert host.request.post(f"{api}/camera/start").ok

        for page in (tablet, phone):
            page.wait_for_selector(".live[data-state-id='1']", timeout=90000)
            colours = [
                el.get_attribute("data-colour") for el in page.locator(".banner > .dice .die").all()
            ]
            assert sorted(colours) == sorted(DEFAULT_COLOURS)  # Sixto's dice, nothing else
        # Ann decides: the demo waits (a throw now would be a re-roll she did not choose)
        tablet.wait_for_function(
            "() => document.getElementById('camera-status').textContent"
            ".includes('waiting until the game asks for dice')",
            timeout=20000,
        )
        state = host.request.get(f"{api}/state").json()
        assert (state["state_id"], state["turn"]["step"]) == (1, "reroll")
        log = server.app.state.tables.store.log(table["table_id"])
        assert [(e.by, e.move["kind"]) for e in log] == [("camera", "roll")]
        # drawn dice teach no setup: the applied roll stored nothing, and the line says why
        tablet.wait_for_selector("#camera-learning[data-teaches='false']", timeout=20000)
        assert tablet.inner_text("#camera-learning").startswith(
            "The camera is not learning: the demo camera's dice are drawn"
        )
        assert server.app.state.learning.store.examples("sixto") == []
        # nor does the teaching round on the server machine: a snapshot of them is refused
        refused = host.request.post(f"{server.base_url}/api/setups/sixto/teach/snapshot")
        assert refused.status == 403 and refused.json()["rule"] == "demo_camera"
        assert "drawn dice teach nothing" in refused.json()["message"]
        # and the table's setup says so (it said "no calibration ... calibrate first")
        setup = host.request.get(f"{api}/setup")
        assert setup.status == 404 and setup.json()["rule"] == "demo_camera"
        shot(tablet, "demo-sixto-waits-tablet")
        shot(phone, "demo-sixto-roll-phone")

        phone.click(".sheet-buttons button[data-move*='keep']")
        phone.wait_for_selector(".live[data-state-id='2']")
        tablet.wait_for_selector(".live[data-state-id='2']")
        assert "waiting until the game asks for dice" in tablet.inner_text("#camera-status")
        assert host.request.get(f"{api}/state").json()["turn"]["step"] == "cross"
        host.close()
        phone_context.close()


def test_the_demo_says_when_it_has_no_dice_for_a_game() -> None:
    """Dice of a colour the renderer cannot draw: nothing is thrown, and it says why."""
    snapshot = SimpleNamespace(
        finished=False, state_id=3, turn=Turn("roll", 0, chance=True, dice=DiceSpec(("gold",)))
    )
    table = SimpleNamespace(table_id="t", snapshot=snapshot, game=SimpleNamespace(title="Gold"))
    throw, why = demo_throw(table)  # type: ignore[arg-type]
    assert throw is None and why == "it has no dice for Gold's colours"
    crossing = SimpleNamespace(table_id="t", snapshot=SimpleNamespace(
        finished=False, state_id=4, turn=Turn("cross", 0, players=(0, 1))
    ), game=table.game)  # fmt: skip
    assert demo_throw(crossing) == (None, "waiting until the game asks for dice")  # type: ignore[arg-type]


def test_the_roll_to_confirm_lists_the_dice_in_the_games_order(
    browser: Any, tmp_path: Path
) -> None:
    """A Qwixx table in "confirm" mode: the question in the banner lists the dice read as
    the banner shows every roll (white, white, red, yellow, green, blue), not in the order
    the finder met them on the photo (it read "red, yellow, blue, white, green, white")."""
    settings = Settings(port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings())
    with LiveServer(settings, None) as server:  # the demo camera, the real models
        host = browser.new_context(**PHONE)
        created = host.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        assert created.status == 201
        table = created.json()
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        page = host.new_page()
        page.goto(f"{server.base_url}/t/{table['table_id']}")
        assert host.request.post(f"{api}/camera/start").ok  # no seats taken: start anyway
        page.wait_for_selector(".live[data-state-id='1']", timeout=90000)  # applied at once
        assert host.request.post(f"{api}/camera/mode", data={"mode": "confirm"}).ok
        # the turn ends (both pass the white sum, Ann the colour step): the demo throws again
        for number, seat in enumerate((0, 1, 0)):
            move = {"kind": "pass", "player": seat}
            answer = host.request.post(
                f"{api}/actions", data={"action_id": f"end-turn-pass-{number}", "move": move}
            )
            assert answer.ok, answer.text()
        page.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=90000)
        colours = [el.inner_text() for el in page.locator("#camera-ask .ask-die .die i").all()]
        # the two white dice told apart in words (the first one further left on the photo)
        assert colours == ["white (1st)", "white (2nd)", "red", "yellow", "green", "blue"]
        shot(page, "demo-qwixx-confirm-phone")
        host.close()
