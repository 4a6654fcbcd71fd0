"""The words of an error page fit its error: only a table id no table has may be typed
wrong or another server's; and a tablet host's Camera settings offers no calibration link
it would be refused (calibration is the server machine's)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from markupsafe import escape

from companion.table.camera_hub import DEMO_TEACHES_NOTHING
from companion.table.camera_settings import CameraSettings
from companion.web.app import create_app, sentence
from companion.web.settings import Settings

LAN_TABLET = ("192.168.1.20", 50000)
THE_SERVER_ITSELF = ("127.0.0.1", 50000)
A_BROWSER = {"accept": "text/html,application/xhtml+xml"}
TYPED_WRONG = "The table may have been typed wrong, or this link is from another server."


def settings_for(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", camera=CameraSettings(disabled=True))


def hosted_table(client: TestClient) -> str:
    made = client.post(
        "/api/tables", json={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}}
    )
    assert made.status_code == 201, made.text
    table_id: str = made.json()["table_id"]
    return table_id


def test_only_an_unknown_table_may_be_typed_wrong(tmp_path: Path) -> None:
    with TestClient(create_app(settings_for(tmp_path)), client=LAN_TABLET) as tablet:
        unknown = tablet.get("/t/nosuchtable1/sheet", headers=A_BROWSER)
        assert unknown.status_code == 404 and "No such table." in unknown.text
        assert TYPED_WRONG in unknown.text

        not_here = tablet.get("/calibrate", headers=A_BROWSER)
        assert not_here.status_code == 403
        assert "Calibrate on the machine the camera is connected to." in not_here.text
        assert TYPED_WRONG not in not_here.text

        table_id = hosted_table(tablet)
        assert tablet.post(f"/api/tables/{table_id}/camera/attach").status_code == 200
        uncalibrated = tablet.get(f"/t/{table_id}/setup", headers=A_BROWSER)
        assert uncalibrated.status_code == 404
        assert "The camera has no calibration" in uncalibrated.text
        assert TYPED_WRONG not in uncalibrated.text


def test_only_the_server_machine_is_offered_the_calibration_link(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with TestClient(create_app(settings), client=LAN_TABLET) as tablet:
        page = tablet.get(f"/t/{hosted_table(tablet)}", headers=A_BROWSER).text
    assert "Camera settings" in page and 'href="/calibrate"' not in page
    assert "Calibrate the camera on the computer running the companion" in page
    with TestClient(create_app(settings), client=THE_SERVER_ITSELF) as local:
        page = local.get(f"/t/{hosted_table(local)}", headers=A_BROWSER).text
    assert '<a class="button" href="/calibrate" id="camera-calibrate">' in page


def test_an_error_page_says_its_message_as_written_with_one_full_stop(tmp_path: Path) -> None:
    """A café owner's trial: the demo camera's setup page ended its sentence "...about a
    real table.." (the page added a full stop to a message that had one), and the page's
    `capitalize` lowered every other capital of a message (a player's name, a button's)."""
    from tests.web.test_calibration_restart import demo_playing, demo_server

    settings = Settings(data_dir=tmp_path / "data", camera=CameraSettings())
    with demo_server(settings) as local:
        demo_playing(local)
        page = local.get(f"/t/{hosted_table(local)}/setup", headers=A_BROWSER)
    assert page.status_code == 404
    assert f"{escape(DEMO_TEACHES_NOTHING)}<" in page.text
    assert ".." not in page.text
    assert sentence("press Use the camera at this table") == ("Press Use the camera at this table.")
    assert sentence("Ann wins!") == "Ann wins!"


def test_a_refused_button_of_the_servers_own_screen_reads_as_a_page(tmp_path: Path) -> None:
    """The history's "Delete this game" tapped on a game a host's undo had reopened (or
    any of the start page's buttons from another device) answered the browser with raw
    JSON (`{"reason":"not_allowed","rule":"game_in_progress",...}`): a refusal the rules
    name was never drawn as a page. Now it reads as the other refusals do, in words; a
    script still gets the JSON."""
    with TestClient(create_app(settings_for(tmp_path)), client=THE_SERVER_ITSELF) as local:
        table_id = hosted_table(local)  # a game in progress
        refused = local.post(f"/t/{table_id}/delete", headers=A_BROWSER)
        assert refused.status_code == 403
        assert refused.headers["content-type"].startswith("text/html")
        assert "This game is still being played: end it first, then delete it." in refused.text
        assert local.post(f"/t/{table_id}/delete").json()["rule"] == "game_in_progress"
        tablet = TestClient(local.app, client=LAN_TABLET)
        for button in ("delete", "end", "camera"):
            page = tablet.post(f"/t/{table_id}/{button}", headers=A_BROWSER)
            assert page.status_code == 403 and "<!doctype html>" in page.text.lower(), button
            assert "Only the server&#39;s own screen" in page.text, button
            assert "content-security-policy" in page.headers
