"""A pending choice where the chooser looks (issue 26 item 3), in Debian's Chromium on a
phone and a tablet: a Sixmix start tied for the lowest row and a later Sixis round's
opener are offered in the sticky banner at the top of the screen, and the roll that would
close the choice for good says so on the first tap (the second enters it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import DEVICES, PHONE, seated_page
from tests.web.test_starter_browser import (
    THREE,
    hand_the_choice_on_and_back,
    imported,
    sixis_first_round_ended,
    sixmix_round_all_ones,
)

pytestmark = pytest.mark.browser


def choice_in_view(page: Any) -> None:
    """The banner's choice lies inside the first screen, however long the sheet below."""
    top = page.evaluate("document.querySelector('.banner-choice').getBoundingClientRect().bottom")
    assert 0 < top <= page.viewport_size["height"]


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_tied_sixmix_start_is_chosen_in_the_banner(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host, table = imported(browser, server, sixmix_round_all_ones())
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    starter = host.request.get(f"{api}/state").json()["turn"]["active"]
    page = seated_page(browser, server, table, starter, device)
    others = [n for seat, n in enumerate(THREE) if seat != starter]
    choice = page.locator(".banner .banner-choice")
    assert "Your choice before the roll" in choice.inner_text()
    assert sorted(choice.locator("button").all_inner_texts()) == sorted(
        f"{n} starts instead (tied for the lowest row)" for n in others
    )
    choice_in_view(page)
    shot(page, f"choice-banner-sixmix-{name}")
    # another player sees the choice in words, without buttons
    watcher = seated_page(browser, server, table, (starter + 1) % 3, device)
    assert f"Before the roll, {THREE[starter]} may choose" in watcher.inner_text(".banner-choice")
    assert watcher.locator(".banner-choice button").count() == 0

    # the roll would close the choice: the first tap on "Enter roll" says so, nothing sent
    for picker in page.locator(".roll-entry .die-picker").all():
        picker.locator(".face[data-face='1']").click()
    submit = page.locator("[data-roll-submit]")
    submit.click()
    assert "The roll closes your choice" in submit.inner_text()
    state_id = page.get_attribute(".live", "data-state-id")
    assert host.request.get(f"{api}/state").json()["state_id"] == int(state_id or 0)

    youngest = others[-1]
    choice.locator(f"button:has-text('{youngest} starts instead')").click()
    page.wait_for_function(
        f"() => document.querySelector('.turn-text').textContent === '{youngest} rolls the dice'"
    )
    # the choice passed on: it is the youngest's now (who may hand it on again)
    assert "Your choice" not in page.inner_text(".banner")
    host.close()
    page.context.close()
    watcher.context.close()


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_sixis_round_opener_is_chosen_in_the_banner(
    browser: Any, server: ServerProcess, device: dict[str, Any], name: str
) -> None:
    host, table = imported(browser, server, sixis_first_round_ended(), device)
    page = host.new_page()
    page.goto(f"{server.base_url}/t/{table['table_id']}")
    page.wait_for_selector("#conn[data-conn=live]")
    choice = page.locator(".banner .banner-choice")
    assert "Before the roll, Ola may choose" in choice.inner_text()
    button = choice.locator("button:has-text('Mia opens this round instead')")
    assert button.count() == 1
    choice_in_view(page)
    shot(page, f"choice-banner-sixis-{name}")
    # the roll asks first here too, then enters it on the second tap
    for picker in page.locator(".roll-entry .die-picker").all():
        picker.locator(".face[data-face='2']").click()
    submit = page.locator("[data-roll-submit]")
    submit.click()
    assert "The roll closes Ola's choice" in submit.inner_text()
    submit.click()
    page.wait_for_function("() => document.querySelectorAll('.banner-choice').length === 0")
    assert "Ola" in page.inner_text(".turn-text")  # Ola opened the round: the choice closed
    host.close()


@contextmanager
def camera_asks_while_a_choice_is_open(
    browser: Any, tmp_path: Path, device: dict[str, Any], clock: bool = False
) -> Iterator[tuple[Any, Any, str]]:
    """A Sixmix start tied for the lowest row (a choice the roll closes) on a table whose
    camera asks to confirm each roll, and a throw it has read: (the host's context, the
    starter's page on `device` showing "Use this roll" at the top, with Playwright's clock
    installed first when `clock`, the table's API address)."""
    from companion.table.camera_settings import CameraSettings
    from companion.web.settings import Settings
    from tests.live.replay import ClipReader, LiveServer, render_throw, seat_everyone, write_throw
    from tests.web.conftest import free_port

    folder = tmp_path / "camera"
    folder.mkdir()
    reader = ClipReader()
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(images=folder)
    )
    with LiveServer(settings, lambda: reader) as server:
        host, table = imported(browser, server, sixmix_round_all_ones())  # type: ignore[arg-type]
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        assert host.request.post(f"{api}/camera/mode", data={"mode": "confirm"}).ok
        starter = host.request.get(f"{api}/state").json()["turn"]["active"]
        page = seated_page(browser, server, table, starter, device, clock)  # type: ignore[arg-type]
        # the others at their seats too: a replayed camera takes no throw while one is free
        others = [seat for seat in range(3) if seat != starter]
        seat_everyone(server.base_url, table["code"], table["table_id"], others)
        expects = host.request.get(f"{api}/camera").json()["expects"]
        throw = render_throw(expects, seed=4401)
        reader.throw = throw
        write_throw(folder, throw)
        assert host.request.post(f"{api}/camera/restart").ok
        page.locator("#camera-ask [data-camera-confirm]").wait_for(timeout=30000)
        yield host, page, api
        host.close()
        page.context.close()


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_cameras_use_this_roll_says_first_that_it_closes_the_choice(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    """The issue's case: "Use this roll" at the top closed the tied start for good. With a
    choice open, its first tap says so; the second applies the roll."""
    with camera_asks_while_a_choice_is_open(browser, tmp_path, device) as (host, page, api):
        use = page.locator("#camera-ask [data-camera-confirm]")
        use.click()
        assert use.inner_text() == "The roll closes your choice: tap again"
        state_id = host.request.get(f"{api}/state").json()["state_id"]
        assert page.get_attribute(".live", "data-state-id") == str(state_id)  # not applied
        shot(page, f"choice-camera-asks-first-{name}")
        use.click()
        page.wait_for_selector(f".live[data-state-id='{state_id + 1}']", timeout=20000)


def test_a_fingers_double_tap_on_use_this_roll_does_not_use_it(
    browser: Any, tmp_path: Path
) -> None:
    """A finger's double tap on "Use this roll" while a choice is open asked and applied the
    roll at once, closing the choice unread: the second tap, within half a second of the
    first, is dropped (tap_again.js). The question stays on the button the banner's question
    draws anew (a die picked to change), and a tap once it can have been read applies the
    roll. The page's clock is paused for the double tap, so "within half a second" holds on
    a busy machine, and moved past the half second without waiting."""
    with camera_asks_while_a_choice_is_open(browser, tmp_path, PHONE, clock=True) as (
        host,
        page,
        api,
    ):
        confirms: list[str] = []
        page.on("request", lambda r: confirms.append(r.url) if "/confirm" in r.url else None)
        state_id = host.request.get(f"{api}/state").json()["state_id"]
        use = page.locator("#camera-ask [data-camera-confirm]")
        page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)  # seconds

        use.tap()
        use.tap()  # the same instant on the page's clock: a double tap
        assert use.get_attribute("data-armed") == "asking"
        assert use.inner_text() == "The roll closes your choice: tap again"
        die = page.locator("#camera-ask [data-ask-pick]").first
        die.tap()  # the banner's question is drawn anew, its values offered
        assert page.locator("#camera-ask .ask-die.picking").count() == 1
        assert use.inner_text() == "The roll closes your choice: tap again"
        die.tap()  # and folded again
        assert page.get_attribute(".live", "data-state-id") == str(state_id)  # not applied
        assert confirms == []

        page.clock.run_for(600)  # the question can have been read: a tap does it
        page.wait_for_selector("#camera-ask [data-camera-confirm][data-armed=ready]")
        use.tap()
        page.wait_for_selector(f".live[data-state-id='{state_id + 1}']", timeout=20000)
        assert len(confirms) == 1


def test_the_rolls_question_stays_until_the_player_taps_elsewhere(
    browser: Any, server: ServerProcess
) -> None:
    """While a choice is open, "Enter roll" asked "The roll closes your choice: tap again"
    and went back to "Enter roll" after 5 s: a player who looked away saw nothing happen.
    The question stays (ten seconds pass on the page's clock) until a tap elsewhere."""
    host, table = imported(browser, server, sixmix_round_all_ones())
    api = f"{server.base_url}/api/tables/{table['table_id']}"
    starter = host.request.get(f"{api}/state").json()["turn"]["active"]
    page = seated_page(browser, server, table, starter, PHONE, clock=True)
    faces = [p.locator(".face[data-face='1']") for p in page.locator(".die-picker").all()]
    for face in faces:
        face.click()
    submit = page.locator("[data-roll-submit]")
    submit.click()
    assert submit.inner_text() == "The roll closes your choice: tap again"
    page.clock.run_for(10_000)  # the player looked away
    assert submit.inner_text() == "The roll closes your choice: tap again"
    assert submit.get_attribute("data-armed") == "ready"
    faces[0].click()  # a tap elsewhere ends the question
    page.wait_for_function(
        "() => document.querySelector('[data-roll-submit]').textContent === 'Enter roll'"
    )
    submit.click()  # asks again: nothing was sent
    assert submit.inner_text() == "The roll closes your choice: tap again"
    # the state moves on (the host hands the choice on and back): the question asked in
    # the state before ends with it, though the same words come back
    handed_back = hand_the_choice_on_and_back(host, api, page, starter)
    assert submit.inner_text() == "Enter roll"
    for face in faces:  # a new state: its roll picked anew
        face.click()
    submit.click()
    assert submit.inner_text() == "The roll closes your choice: tap again"
    submit.click()
    page.wait_for_selector(f".live[data-state-id='{handed_back + 1}']")
    host.close()
    page.context.close()
