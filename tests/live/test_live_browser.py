"""The live table in Debian's Chromium: a throw replayed as the camera lights up the legal
boxes of the Qwixx sheets, and the camera panel shows the picture, its status and a held
mismatch with the problem marked. Screenshots go to test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion.rules.registry import standard_dice_sets
from companion.table.camera_settings import CameraSettings
from companion.vision.calibration import load_calibration
from companion.web.settings import Settings
from tests.live.replay import (
    ClipReader,
    LiveServer,
    Throw,
    render_throw,
    seat_everyone,
    write_throw,
)
from tests.web.conftest import free_port, shot

pytestmark = pytest.mark.browser

QWIXX = standard_dice_sets()["qwixx"]
LAPTOP = {"viewport": {"width": 1280, "height": 900}}
TABLET = {"viewport": {"width": 600, "height": 960}}  # a 7-inch tablet, upright


@contextmanager
def qwixx_camera_table(
    browser: Any, tmp_path: Path, reader: ClipReader, device: dict[str, Any]
) -> Iterator[tuple[LiveServer, Any, str, Path]]:
    """A real server whose camera replays the folder it yields, a two-player Qwixx table on
    it and a page of that table open on ``device``: (server, page, table id, folder)."""
    folder = tmp_path / "camera"
    folder.mkdir()
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(images=folder)
    )
    with LiveServer(settings, lambda: reader) as server:
        context = browser.new_context(**device)
        page = context.new_page()
        created = context.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        assert created.status == 201
        table_id = created.json()["table_id"]
        # Ann and Bob at their seats: a replayed camera takes no throw while one is free
        seat_everyone(server.base_url, created.json()["code"], table_id, [0, 1])
        page.goto(f"{server.base_url}/t/{table_id}")
        page.wait_for_selector(".live[data-state-id='0']")
        try:
            yield server, page, table_id, folder
        finally:
            context.close()


def throw_without_blue(page: Any, reader: ClipReader, folder: Path, seed: int) -> Throw:
    """A Qwixx throw the reader (hiding blue) reads with the blue die missing, played from
    the restarted camera and held as a mismatch on the host's page; the throw."""
    throw = render_throw(QWIXX, seed=seed)
    reader.throw = throw
    write_throw(folder, throw)
    page.click("details.camera-tools summary")
    page.click("[data-camera-restart]")
    see_held_mismatch(page, "blue die is missing", dice=5)
    return throw


def see_held_mismatch(page: Any, problem: str, dice: int) -> None:
    """The camera panel shows a held reading naming ``problem``, its picture and ``dice``
    dice to tap."""
    page.wait_for_selector("#camera-held:not([hidden])", timeout=20000)
    assert problem in page.inner_text("#held-message")
    page.wait_for_function(
        "() => document.getElementById('held-picture').naturalWidth > 0", timeout=5000
    )
    assert page.locator(".held-die").count() == dice


def test_a_recording_waits_for_the_seats_and_the_host_page_says_so(
    browser: Any, tmp_path: Path
) -> None:
    """A folder of photos (`--images DIR --hold 2`) plays at its own pace: at a table whose
    seats are free its throw is not taken (each photo was a roll, with penalties, at an
    empty table), the host's camera panel says for whom it waits, and the host's Start
    plays the recording again from its start: its throw is the first roll."""
    folder = tmp_path / "camera"
    throw = render_throw(QWIXX, seed=1211)
    write_throw(folder, throw)
    reader = ClipReader()
    reader.throw = throw
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(images=folder)
    )
    with LiveServer(settings, lambda: reader) as server:
        context = browser.new_context(**LAPTOP)
        created = context.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        table_id = created.json()["table_id"]
        page = context.new_page()
        page.goto(f"{server.base_url}/t/{table_id}")
        page.click("details.camera-tools summary")
        page.click("[data-camera-restart]")  # the recording plays with both seats free
        page.wait_for_function(
            "() => document.getElementById('camera-note').textContent.startsWith('throw not taken')",
            timeout=20000,
        )
        assert page.inner_text("#camera-note") == (
            "throw not taken: waiting for Ann and Bob to take a seat (or the host's Start)"
        )
        assert page.inner_text("#camera-seat-wait-words") == (
            "The camera's recording plays once everyone has a seat: waiting for Ann and Bob."
        )
        assert page.get_attribute(".live", "data-state-id") == "0"
        shot(page, "camera-recording-waits-for-seats-laptop")
        page.click("[data-camera-start-now]")
        page.wait_for_selector(".live[data-state-id='1']", timeout=30000)
        log = server.app.state.tables.store.log(table_id)
        assert sorted((d["colour"], d["value"]) for d in log[0].move["dice"]) == sorted(throw.rest)
        page.wait_for_selector("#camera-seat-wait", state="hidden")
        context.close()


def test_a_camera_roll_lights_up_the_legal_boxes(browser: Any, tmp_path: Path) -> None:
    reader = ClipReader()
    with qwixx_camera_table(browser, tmp_path, reader, LAPTOP) as (server, page, table_id, folder):
        page.wait_for_selector("#conn[data-conn=live]")
        assert page.locator(".box.legal").count() == 0  # nothing to cross before a roll

        throw = render_throw(QWIXX, seed=1201)
        reader.throw = throw
        write_throw(folder, throw)
        page.click("details.camera-tools summary")
        page.click("[data-camera-restart]")
        page.wait_for_selector(".live[data-state-id='1']", timeout=20000)
        assert page.locator(".box.legal").count() > 0
        shown = {
            (el.get_attribute("data-colour"), int(el.get_attribute("data-value") or 0))
            for el in page.locator(".banner .die").all()
        }
        assert shown == set(throw.rest)
        page.wait_for_function(
            "() => document.getElementById('camera-picture').naturalWidth > 0", timeout=5000
        )
        page.wait_for_function(
            "() => document.getElementById('camera-note').textContent === 'roll applied'",
            timeout=5000,
        )
        assert "camera" in page.inner_text("#camera-status")
        shot(page, "live-camera-roll-laptop")

        # a throw with a die missing: held, the picture with the problem, nothing applied
        for step in range(6):  # every player passes until the next roll is due
            snapshot = server.table(table_id).snapshot
            if snapshot.turn.chance:
                break
            who = snapshot.turn.players[0]
            move = next(
                m for m in snapshot.game.legal_moves(snapshot.state, who) if m.kind == "pass"
            )
            answer = page.context.request.post(
                f"{server.base_url}/api/tables/{table_id}/actions",
                data={
                    "action_id": f"pass-step-{step:04d}",
                    "move": snapshot.game.move_to_json(move),
                },
            )
            assert answer.status == 200, answer.text()
        missing = render_throw(QWIXX[:-1], seed=1202)
        reader.throw = missing
        write_throw(folder, missing)
        page.click("[data-camera-restart]")
        see_held_mismatch(page, "blue die is missing", dice=5)
        shot(page, "live-camera-mismatch-laptop")


def test_host_adds_a_missed_die_on_the_held_picture(browser: Any, tmp_path: Path) -> None:
    """The finder missed the blue die: the host taps its place on the held picture, picks
    its value (its colour, the missing one, is chosen already) and adds it; the roll is
    applied and lights up the legal boxes."""
    reader = ClipReader()
    reader.hide = {"blue"}
    with qwixx_camera_table(browser, tmp_path, reader, TABLET) as (server, page, table_id, folder):
        throw = throw_without_blue(page, reader, folder, seed=1221)

        blue = next(d for d in throw.frames[throw.rest_index].dice if d.colour == "blue")
        page.locator("#held-view").scroll_into_view_if_needed()
        shown = page.locator("#held-picture").bounding_box()
        assert shown is not None and shown["width"] < 600  # scaled: the tap is converted
        page.mouse.click(
            shown["x"] + blue.cx * shown["width"] / 640,
            shown["y"] + blue.cy * shown["height"] / 480,
        )
        page.wait_for_selector("#held-fix[data-fix-mode=add]:not([hidden])")
        offered = page.locator("#fix-colours [data-fix-colour]").all_inner_texts()
        assert sorted(offered) == sorted(set(QWIXX))  # the colours this roll has
        assert page.get_attribute("[data-fix-colour=blue]", "aria-pressed") == "true"
        assert page.locator("[data-fix-add]").is_disabled()  # no value yet
        # named for what it does: the value the missed die gets
        page.get_by_role("button", name=f"The missed die shows {blue.value}", exact=True).click()
        assert page.get_by_role("button", name="The missed die is blue").count() == 1
        shot(page, "live-camera-add-die-tablet")
        with page.expect_request(lambda r: r.url.endswith("/camera/fix")) as sent:
            page.click("[data-fix-add]")
        add = sent.value.post_data_json["add"]
        assert (add["value"], add["colour"]) == (blue.value, "blue")
        assert abs(add["x"] - blue.cx) < 3 and abs(add["y"] - blue.cy) < 3  # frame pixels

        page.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        assert page.locator(".box.legal").count() > 0
        rolled = {
            (el.get_attribute("data-colour"), int(el.get_attribute("data-value") or 0))
            for el in page.locator(".banner .die").all()
        }
        assert rolled == set(throw.rest)
        page.wait_for_selector("#camera-held", state="hidden", timeout=5000)
        log = server.app.state.tables.store.log(table_id)
        assert [(e.by, e.move["kind"]) for e in log] == [("host", "roll")]


def test_the_fix_dialog_names_a_die_as_the_table_sees_it(browser: Any, tmp_path: Path) -> None:
    """A die the host taps on the held picture is named by its colour (the first or second
    of the two white dice, left to right on the photo) and what the camera read on it, as
    the question in the banner names it; not by the order the finder met it ("Die 3 (red
    6)" meant nothing at the table). A value fixed renames it in the open dialog."""
    reader = ClipReader()
    reader.hide = {"blue"}  # a mismatch: the host fixes it on the picture
    with qwixx_camera_table(browser, tmp_path, reader, TABLET) as (server, page, table_id, folder):
        throw = throw_without_blue(page, reader, folder, seed=1231)
        rest = [d for d in throw.frames[throw.rest_index].dice if d.colour != "blue"]
        first, second = sorted((d for d in rest if d.colour == "white"), key=lambda d: d.cx)
        named = {  # the second white die tapped last
            **{f"{d.colour} die (reads {d.value})": d for d in rest if d.colour != "white"},
            f"the first white die (reads {first.value})": first,
            f"the second white die (reads {second.value})": second,
        }
        spots = page.locator(".held-die").evaluate_all(
            "spots => spots.map((s) => s.getAttribute('aria-label'))"
        )
        assert sorted(spots) == sorted(named)  # a screen reader names them alike
        page.locator("#held-view").scroll_into_view_if_needed()
        for words, die in named.items():
            shown = page.locator("#held-picture").bounding_box()
            assert shown is not None
            page.mouse.click(
                shown["x"] + die.cx * shown["width"] / 640,
                shown["y"] + die.cy * shown["height"] / 480,
            )
            page.wait_for_selector("#held-fix[data-fix-mode=fix]:not([hidden])")
            assert page.text_content("#fix-which") == words[0].upper() + words[1:]
        shot(page, "live-camera-fix-named-tablet")
        assert second.value is not None
        fixed = 7 - second.value  # the second white die, tapped last, read anew
        page.click(f"#held-fix [data-fix-value='{fixed}']")
        page.wait_for_function(
            "words => document.getElementById('fix-which').textContent === words",
            arg=f"The second white die (reads {fixed})",
            timeout=10000,
        )


def test_calibration_page_measures_and_saves(browser: Any, tmp_path: Path) -> None:
    """The dice lie still in view: the page shows the picture and what is read; Measure
    and save writes a valid file into the calibration folder and puts it in use."""
    folder = tmp_path / "camera"
    throw = render_throw(QWIXX, seed=1301)
    resting = Throw([throw.frames[throw.rest_index]] * 150, throw.rest)
    write_throw(folder, resting)
    reader = ClipReader()
    reader.throw = resting
    calibrations = tmp_path / "calibration"
    settings = Settings(
        port=free_port(),
        data_dir=tmp_path / "data",
        camera=CameraSettings(images=folder, calibration_dir=calibrations),
    )
    with LiveServer(settings, lambda: reader) as server:
        page = browser.new_context(**LAPTOP).new_page()
        page.goto(f"{server.base_url}/calibrate")
        page.wait_for_function(
            "() => document.getElementById('calibrate-dice').children.length === 6", timeout=15000
        )
        page.wait_for_function(
            "() => document.getElementById('calibrate-picture').naturalWidth > 0", timeout=5000
        )
        # none in use yet: the page says what the camera does without one
        assert page.text_content("#calibrate-active") == "none"
        assert "learns nothing" in (page.text_content("#calibrate-none") or "")
        page.fill("input[name=name]", "kitchen-lamp")
        page.click("button[type=submit]")
        page.wait_for_function(
            "() => document.getElementById('calibrate-result').textContent.startsWith('saved')",
            timeout=20000,
        )
        assert page.text_content("#calibrate-active") == "kitchen-lamp"
        assert not page.is_visible("#calibrate-none")
        # the new file is listed at once, with its Use button
        assert page.is_visible("li[data-file='kitchen-lamp'].in-use .in-use-mark")
        assert not page.is_visible("li[data-file='kitchen-lamp'] button[data-use]")  # in use
        shot(page, "live-calibrate-laptop")
        saved = load_calibration(calibrations / "kitchen-lamp.json")
        assert saved.dice_set.colours == QWIXX
        assert saved.die_side is not None and 38 <= saved.die_side <= 50
        assert saved.play_area == (0.0, 0.0, 1.0, 1.0)  # left empty: the whole picture
        assert server.hub.calibration == saved
        status = httpx.get(f"{server.base_url}/api/calibration").json()
        assert status["active"] == "kitchen-lamp"
        page.click("#calibrate-use-none")  # and back to none, in the server too
        page.wait_for_function(
            "() => document.getElementById('calibrate-active').textContent === 'none'",
            timeout=10000,
        )
        assert page.is_visible("#calibrate-none") and server.hub.calibration is None
        assert not page.is_visible("#calibrate-teach")  # no setup to teach now
        assert page.locator("#calibrate-files li.in-use").count() == 0
        page.click("button[data-use='kitchen-lamp']")
        page.wait_for_function(
            "() => document.getElementById('calibrate-active').textContent === 'kitchen-lamp'",
            timeout=10000,
        )
        assert server.hub.calibration == saved
        assert page.get_attribute("#calibrate-teach-link", "href") == "/setups/kitchen-lamp"
        assert page.is_visible("#calibrate-teach-link")  # a real source: the round is offered
        assert not page.is_visible("#calibrate-teach-refused")
        # a name that could leave the folder is refused with the reason
        refused = httpx.post(
            f"{server.base_url}/api/calibration",
            json={"name": "../x", "dice_set": "qwixx"},
        )
        assert refused.status_code == 422 and "letters" in refused.json()["message"]
