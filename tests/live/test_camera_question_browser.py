"""The camera's question where the player looks (issue 17 item 3, issue 14 item 4), in
Debian's Chromium on a phone and on a tablet: a real server whose camera replays rendered
throws (read from their ground truth, so the test checks the pages, not the models).

- Confirm mode: the active player's sheet shows, in the sticky banner at the top, a
  thumbnail of the photo and the dice read; one tap on "Use this roll" applies it, and a
  die is fixed there too (tap it, tap its value). The other player's sheet shows nothing
  of it.
- "Apply sure rolls": a roll the camera is not sure of is asked about in the banner with
  just the unsure die, its two likeliest values as buttons; one tap applies the roll.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion.rules.registry import standard_dice_sets
from companion.table.camera_settings import CameraSettings
from companion.web.settings import Settings
from tests.live.replay import ClipReader, LiveServer, render_throw, write_throw
from tests.web.conftest import free_port, shot
from tests.web.devices import DEVICES

pytestmark = pytest.mark.browser

QWIXX = standard_dice_sets()["qwixx"]


@contextmanager
def camera_table(
    browser: Any, tmp_path: Path, reader: ClipReader, device: dict[str, Any], mode: str
) -> Iterator[tuple[LiveServer, Any, Any, Any, Path]]:
    """A Qwixx table for Ann and Bob on a server whose camera replays a folder, in camera
    mode `mode`: (server, host page, Ann's sheet on `device`, Bob's sheet, folder)."""
    folder = tmp_path / "camera"
    folder.mkdir()
    settings = Settings(
        port=free_port(), data_dir=tmp_path / "data", camera=CameraSettings(images=folder)
    )
    with LiveServer(settings, lambda: reader) as server:
        host = browser.new_context(viewport={"width": 1280, "height": 900})
        created = host.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        )
        assert created.status == 201
        table = created.json()
        api = f"{server.base_url}/api/tables/{table['table_id']}"
        assert host.request.post(f"{api}/camera/mode", data={"mode": mode}).ok
        sheets = []
        for seat, context in enumerate((browser.new_context(**device), browser.new_context())):
            assert context.request.post(
                f"{server.base_url}/api/join", data={"code": table["code"]}
            ).ok
            assert context.request.post(f"{api}/seat", data={"seat": seat}).ok
            page = context.new_page()
            page.goto(f"{server.base_url}/t/{table['table_id']}/sheet")
            page.wait_for_selector("#conn[data-conn=live]")
            sheets.append(page)
        host_page = host.new_page()
        host_page.goto(f"{server.base_url}/t/{table['table_id']}")
        try:
            yield server, host_page, sheets[0], sheets[1], folder
        finally:
            for context in (host, sheets[0].context, sheets[1].context):
                context.close()


def throw_now(server: LiveServer, host: Any, folder: Path, reader: ClipReader, seed: int) -> Any:
    """Replay one rendered Qwixx throw as the camera; returns it."""
    throw = render_throw(QWIXX, seed=seed)
    reader.throw = throw
    write_throw(folder, throw)
    restarted = host.request.post(f"{host.url.replace('/t/', '/api/tables/')}/camera/restart")
    assert restarted.ok
    return throw


@contextmanager
def roll_to_confirm(browser: Any, tmp_path: Path, seed: int) -> Iterator[tuple[Any, Any, Any]]:
    """A table in camera mode "confirm" (Ann on a tablet) and one rendered throw replayed
    as the camera, held for confirmation: (host page, Ann's sheet, the throw)."""
    reader = ClipReader()
    with camera_table(browser, tmp_path, reader, DEVICES[1][0], "confirm") as (
        server, host, ann, _, folder,
    ):  # fmt: skip
        yield host, ann, throw_now(server, host, folder, reader, seed=seed)


def die_on_the_picture(throw: Any, colour: str) -> tuple[int, int]:
    """The index of the `colour` die in the held reading (its spot on the big picture) and
    the value it shows."""
    rest = throw.frames[throw.rest_index].dice
    index = next(i for i, d in enumerate(rest) if d.colour == colour)
    return index, rest[index].value


def banner_dice(page: Any) -> set[tuple[str | None, int]]:
    return {
        (el.get_attribute("data-colour"), int(el.get_attribute("data-value") or 0))
        for el in page.locator(".banner > .dice .die").all()
    }


def in_sticky_banner(page: Any) -> None:
    """The question sits in the banner, at the top of the screen, however far down the
    sheet the player has scrolled (to the end of the sheets: the banner sticks to the top
    of the live part)."""
    page.evaluate(
        "() => { const live = document.querySelector('.live').getBoundingClientRect();"
        " window.scrollTo(0, window.scrollY + live.bottom - window.innerHeight) }"
    )
    longer = page.evaluate("document.querySelector('.live').offsetHeight > window.innerHeight")
    assert not longer or page.evaluate("window.scrollY") > 0
    page.wait_for_function(
        "() => { const a = document.getElementById('camera-ask');"
        " const r = a.getBoundingClientRect(); return r.top >= 0 && r.top < 260 }"
    )
    assert page.locator(".banner #camera-ask").count() == 1


def the_two_white_dice_read_apart(page: Any, throw: Any) -> None:
    """Of two dice of one colour, which one: their chips say it in words, by the names a
    screen reader says ("change white 3" twice named neither), the first one further left
    on the photo; the first white die's values are offered under that name. Leaves the
    first white die picked."""
    rest = throw.frames[throw.rest_index].dice
    values = [d.value for d in sorted(rest, key=lambda d: d.cx) if d.colour == "white"]
    whites = page.locator("#camera-ask .ask-die button.die.c-white")
    assert whites.locator("i").all_inner_texts() == ["white (1st)", "white (2nd)"]
    said = [f"the first white die (reads {values[0]})", f"the second white die (reads {values[1]})"]
    assert [w.get_attribute("title") for w in whites.all()] == said
    assert [w.get_attribute("aria-label") for w in whites.all()] == [f"change {s}" for s in said]
    whites.first.click()
    first_white = page.locator("#camera-ask .ask-die.picking .ask-value").first
    assert (first_white.get_attribute("aria-label") or "").startswith(
        "the first white die: change to "
    )


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_active_player_confirms_or_fixes_the_roll_in_the_banner(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    reader = ClipReader()
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        throw = throw_now(server, host, folder, reader, seed=3101)
        ann.wait_for_selector("#camera-ask:not([hidden])", timeout=20000)
        in_sticky_banner(ann)
        ann.wait_for_function(
            "() => document.querySelector('#camera-ask .ask-thumb img').naturalWidth > 0"
        )
        assert ann.locator("#camera-ask .ask-die").count() == 6
        # the question names the dice, never a thrower: it goes to the player whose step
        # is open (Ann), who may not have thrown, and to the host, in the same words
        question = ann.inner_text("#camera-ask .ask-text")
        read = re.fullmatch(r"The camera read ([1-6](?: [1-6]){5}): is that the roll\?", question)
        assert read is not None, question
        assert sorted(read.group(1).split()) == sorted(str(v) for _, v in throw.rest)
        assert ann.locator("#camera-ask [data-camera-confirm]").is_visible()
        shot(ann, f"camera-question-banner-{name}")
        host.wait_for_selector("#camera-ask:not([hidden])")  # the host sees it too
        assert host.inner_text("#camera-ask .ask-text") == question
        # Bob cannot act on it: nothing of it on his sheet, but his line says whom the
        # camera waits for, and so does the note every screen shows
        assert bob.locator("#camera-ask").is_hidden() and bob.locator("#camera-held").is_hidden()
        bob.wait_for_function(
            "() => document.getElementById('camera-status').textContent === 'The camera asks Ann or"
            " the host whether it read the roll right, and waits for the answer.'"
        )
        assert bob.inner_text("#camera-note") == "waiting for Ann or the host to confirm the roll"
        assert ann.inner_text("#camera-status") == (
            "The camera asks you whether it read the roll right (its question is above)."
        )

        # Ann fixes two misread dice in the banner (tap a die, tap its value; the picker
        # fits the phone), then applies the roll (issue 26 item 4)
        red, green = dict(throw.rest)["red"], dict(throw.rest)["green"]
        fixed = {"red": 1 if red != 1 else 2, "green": 6 if green != 6 else 5}
        for colour, value in fixed.items():
            ann.click(f"#camera-ask .ask-die button[aria-label^='change {colour} die']")
            ann.wait_for_selector("#camera-ask .ask-die.picking")
            assert (
                ann.evaluate("document.documentElement.scrollWidth") <= ann.viewport_size["width"]
            )  # the value picker never widens the page
            shot(ann, f"camera-question-picking-{colour}-{name}")
            # a screen reader names the die and what the tap does ("red 3 shows 5" named
            # the die by where the finder met it on the photo)
            labels = ann.locator("#camera-ask .ask-die.picking .ask-value").evaluate_all(
                "buttons => buttons.map((b) => b.getAttribute('aria-label'))"
            )
            read = red if colour == "red" else green
            assert labels == [f"{colour} die: change to {v}" for v in range(1, 7) if v != read]
            ann.click(f"#camera-ask .ask-die.picking button.ask-value[data-ask-value='{value}']")
            ann.wait_for_selector(
                f"#camera-ask .ask-die button[aria-label='change {colour} die (reads {value})']"
            )
        the_two_white_dice_read_apart(ann, throw)
        ann.locator("#camera-ask .ask-die.picking button.die").click()
        ann.wait_for_selector("#camera-ask .ask-die.picking", state="detached")
        assert ann.locator(".live[data-state-id='0']").count() == 1  # nothing applied yet
        assert ann.locator("#camera-ask [data-camera-confirm]").is_visible()
        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        ann.wait_for_selector("#camera-ask", state="hidden")
        assert {("red", fixed["red"]), ("green", fixed["green"])} <= banner_dice(ann)
        table_id = ann.url.split("/t/")[1].split("/")[0]
        [entry] = server.app.state.tables.store.log(table_id)
        assert entry.by == "0"  # Ann's own check of the camera's roll


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_an_unsure_roll_asks_only_about_its_unsure_die(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    reader = ClipReader()
    reader.auto_apply_threshold = 0.9
    reader.confidence = {"yellow": 0.4}  # the camera is not sure of the yellow die
    with camera_table(browser, tmp_path, reader, device, "sure") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        throw = throw_now(server, host, folder, reader, seed=3201)
        ann.wait_for_selector("#camera-ask[data-kind=unsure]:not([hidden])", timeout=20000)
        in_sticky_banner(ann)
        assert ann.locator("#camera-ask .ask-die.unsure").count() == 1
        yellow = dict(throw.rest)["yellow"]
        choices = ann.locator("#camera-ask .ask-die.unsure .ask-value").all_inner_texts()
        assert choices == [str(yellow), str(7 - yellow)]  # its two likeliest values
        labels = ann.locator("#camera-ask .ask-die.unsure .ask-value").evaluate_all(
            "buttons => buttons.map((b) => b.getAttribute('aria-label'))"
        )
        assert labels == [f"yellow die shows {yellow}", f"yellow die shows {7 - yellow}"]
        assert "not sure of one die" in ann.inner_text("#camera-ask .ask-text")
        # answered die by die: no "Use this roll" (the server takes none as read)
        assert ann.locator("#camera-ask [data-camera-confirm]").count() == 0
        assert bob.locator("#camera-ask").is_hidden()
        shot(ann, f"camera-unsure-die-{name}")

        # one tap: the yellow die shows the other value; the roll is applied
        ann.click(f"#camera-ask .ask-value[data-ask-value='{7 - yellow}']")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        assert ("yellow", 7 - yellow) in banner_dice(ann)
        ann.wait_for_selector("#camera-ask", state="hidden")
        # a model pair with a threshold: the sure choice says nothing more (the host's page has
        # read the camera's status: the roll is on it)
        host.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        host.wait_for_function("() => document.getElementById('camera-note').textContent !== ''")
        assert host.locator("#camera-sure-none").is_hidden()


def test_a_mismatch_waits_for_the_host_and_only_the_host_may_send_it_back(
    browser: Any, tmp_path: Path
) -> None:
    """A throw whose blue die the camera missed: the players' lines and Ann's question say
    whom it waits for, as the camera state names them (the host); "Re-throw" is on the
    host's page only, and "Use this roll" on no page (dice that do not match)."""
    reader = ClipReader()
    reader.hide = {"blue"}
    with camera_table(browser, tmp_path, reader, DEVICES[1][0], "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        throw_now(server, host, folder, reader, seed=3301)
        ann.wait_for_selector("#camera-ask[data-kind=mismatch]:not([hidden])", timeout=20000)
        assert ann.inner_text("#camera-ask .ask-text").endswith("(the host fixes it)")
        assert ann.locator("#camera-ask [data-camera-confirm]").count() == 0
        waits = "The camera waits for the host to fix the dice it read."
        for page in (ann, bob):
            page.wait_for_function(
                f"() => document.getElementById('camera-status').textContent === '{waits}'"
            )
        assert ann.locator("[data-camera-rethrow]").is_hidden()
        host.wait_for_selector("#camera-held:not([hidden])", timeout=20000)
        assert host.locator("[data-camera-rethrow]").is_visible()
        assert host.locator("#camera-held [data-camera-confirm]").is_hidden()


def test_the_host_fixes_a_misread_die_on_the_big_picture_of_a_roll_to_confirm(
    browser: Any, tmp_path: Path
) -> None:
    """The host sees the camera's reading of a roll to confirm on the big picture of the
    camera panel; a misread die there is fixed where the host sees it (tap the die, tap
    its value), the message names the fixed die's new value, and "Use this roll" applies
    the corrected roll. (The die outlines on the picture were dead buttons: only the banner
    above fixed a die, and the picture said nothing of it.)"""
    with roll_to_confirm(browser, tmp_path, seed=3301) as (host, _, throw):
        host.wait_for_selector("#camera-held[data-held-kind=confirm]:not([hidden])", timeout=20000)
        assert "tap a die read wrong" in host.inner_text("#held-message")
        red_index, red = die_on_the_picture(throw, "red")
        fixed = 1 if red != 1 else 2
        host.locator("#held-view").scroll_into_view_if_needed()
        host.click(f"#held-dice [data-held-die='{red_index}']")
        # the host may re-colour it or drop it too (the camera state's may_recolour_or_drop)
        host.wait_for_selector("#held-fix[data-fix-mode=fix]:not([hidden])", timeout=5000)
        assert host.locator("#fix-colours [data-fix-colour=red]").is_visible()
        assert host.locator("[data-fix-remove]").is_visible()
        assert host.inner_text("#fix-which").startswith("Red die")
        shown = host.get_attribute("#held-picture", "src")
        host.click(f"#held-fix [data-fix-value='{fixed}']")
        host.wait_for_function(
            f"() => document.getElementById('held-message').textContent.includes('red {fixed}')",
            timeout=10000,
        )
        # the picture is drawn again with the fixed value (it kept the misread label)
        host.wait_for_function(
            "old => { const p = document.getElementById('held-picture');"
            " return p.getAttribute('src') !== old && p.complete && p.naturalWidth > 0 }",
            arg=shown,
            timeout=10000,
        )
        assert host.locator(".live[data-state-id='0']").count() == 1  # nothing applied yet
        host.click("#camera-held [data-camera-confirm]")
        host.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        assert ("red", fixed) in banner_dice(host)


def test_the_active_player_fixes_a_value_on_the_big_picture_and_nothing_more(
    browser: Any, tmp_path: Path
) -> None:
    """The active player taps a die on the big picture of a roll to confirm (the banner's
    thumbnail leads there): the dialog offers its values only, no colour and no "Not a
    die" (the server lets a player set values only), and the value set there is the one
    "Use this roll" applies."""
    with roll_to_confirm(browser, tmp_path, seed=3302) as (_, ann, throw):
        ann.wait_for_selector("#camera-held[data-held-kind=confirm]:not([hidden])", timeout=20000)
        ann.click("#camera-ask [data-ask-show]")
        green_index, green = die_on_the_picture(throw, "green")
        fixed = 6 if green != 6 else 5
        ann.click(f"#held-dice [data-held-die='{green_index}']")
        ann.wait_for_selector("#held-fix[data-fix-mode=value]:not([hidden])", timeout=5000)
        assert ann.locator("#fix-colours").is_hidden()
        assert ann.locator("[data-fix-remove]").is_hidden()
        ann.click(f"#held-fix [data-fix-value='{fixed}']")
        ann.wait_for_function(
            f"() => document.getElementById('held-message').textContent.includes('green {fixed}')",
            timeout=10000,
        )
        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        assert ("green", fixed) in banner_dice(ann)


def test_the_sure_choice_says_when_the_models_are_sure_of_no_roll(
    browser: Any, tmp_path: Path
) -> None:
    """The host choosing how camera rolls go in reads, beside "applied when the camera is
    sure of it", that these models are sure of no roll, so every die is asked: the choice
    meant for fewer taps would ask six where "confirm" asks one."""
    reader = ClipReader()  # no shipped threshold, as every model pair so far
    with camera_table(browser, tmp_path, reader, DEVICES[1][0], "auto") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        host.click("details.camera-tools summary")
        sure = host.locator("label:has(input[name=camera-mode][value=sure])")
        expect_text = "no roll is sure yet: every die is asked"
        host.wait_for_function(
            "text => document.querySelector('input[name=camera-mode][value=sure]')"
            ".closest('label').innerText.includes(text)",
            arg=expect_text,
            timeout=10000,
        )
        assert sure.is_visible()


def test_the_banner_thumbnail_is_drawn_again_after_a_die_is_fixed(
    browser: Any, tmp_path: Path
) -> None:
    """Ann fixes a die in the banner: the thumbnail beside it is fetched anew, drawn with
    the fixed value (its address stayed the same, so it could show the misread one)."""
    with roll_to_confirm(browser, tmp_path, seed=3303) as (_, ann, throw):
        ann.wait_for_selector("#camera-ask:not([hidden])", timeout=20000)
        shown = ann.get_attribute("#camera-ask .ask-thumb img", "src")
        red = dict(throw.rest)["red"]
        fixed = 1 if red != 1 else 2
        ann.click("#camera-ask .ask-die button[aria-label^='change red die']")
        ann.click(f"#camera-ask .ask-die.picking button.ask-value[data-ask-value='{fixed}']")
        ann.wait_for_selector(
            f"#camera-ask .ask-die button[aria-label='change red die (reads {fixed})']"
        )
        ann.wait_for_function(
            "old => { const i = document.querySelector('#camera-ask .ask-thumb img');"
            " return i.getAttribute('src') !== old && i.complete && i.naturalWidth > 0 }",
            arg=shown,
            timeout=10000,
        )
