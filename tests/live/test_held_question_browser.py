"""A held camera question holds (issue 26 item 1), in Debian's Chromium on a phone and a
tablet: a real server whose camera replays rendered throws (read from their ground truth,
so the test checks the question's life, not the models).

- The camera throws again while the question is open: the question on screen keeps its
  dice, the new throw waits, "Use this roll" applies exactly the dice shown, and the throw
  that waited is the next question.
- A confirm of dice the question no longer holds (another device fixed a die meanwhile),
  or of a question that is gone, is refused with a message and applies nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.live.replay import ClipReader, render_throw, wait_until
from tests.live.test_camera_question_browser import QWIXX, camera_table, throw_now
from tests.web.conftest import shot
from tests.web.devices import DEVICES

pytestmark = pytest.mark.browser


def asked_dice(page: Any) -> list[tuple[str, int]]:
    """The dice the question in the banner shows, as (colour, value), sorted."""
    chips = page.locator("#camera-ask .ask-die .die").all()
    return sorted(
        (c.get_attribute("data-read-colour") or "", int(c.get_attribute("data-read-value") or 0))
        for c in chips
    )


def two_different_throws() -> tuple[int, int]:
    """Two seeds whose rolls differ, so a replaced question would show."""
    first = render_throw(QWIXX, seed=4101).rest
    seed = 4102
    while sorted(render_throw(QWIXX, seed=seed).rest) == sorted(first):
        seed += 1
    return 4101, seed


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_new_throw_never_replaces_the_question_on_screen(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    reader = ClipReader()
    first_seed, second_seed = two_different_throws()
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        first = throw_now(server, host, folder, reader, seed=first_seed)
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=20000)
        assert asked_dice(ann) == sorted(first.rest)
        table_id = ann.url.split("/t/")[1].split("/")[0]
        api = f"{server.base_url}/api/tables/{table_id}"

        second = throw_now(server, host, folder, reader, seed=second_seed)
        wait_until(
            lambda: "asked next" in host.request.get(f"{api}/camera").json()["note"],
            timeout=30,
            what="the second throw to wait behind the question",
        )
        ann.wait_for_function(
            "() => document.getElementById('camera-note').textContent.includes('asked next')"
        )
        assert asked_dice(ann) == sorted(first.rest)  # the question on screen holds
        shot(ann, f"camera-question-holds-{name}")

        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        [entry] = server.app.state.tables.store.log(table_id)
        applied = sorted((d["colour"], d["value"]) for d in entry.move["dice"])
        assert applied == sorted(first.rest)  # exactly the dice Ann saw

        # the throw that waited is the next question (for whoever is active now)
        wait_until(
            lambda: asked_dice(host) == sorted(second.rest),
            timeout=30,
            what="the throw that waited to be asked",
        )
        host.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])")
        assert len(server.app.state.tables.store.log(table_id)) == 1  # asked, not applied


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_a_confirm_of_dice_no_longer_asked_is_refused_with_a_message(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    reader = ClipReader()
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        throw = throw_now(server, host, folder, reader, seed=4201)
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=20000)
        table_id = ann.url.split("/t/")[1].split("/")[0]
        api = f"{server.base_url}/api/tables/{table_id}"
        pending = host.request.get(f"{api}/camera").json()["pending"]
        # Ann's screen stops hearing about the question (a slow network), while the host
        # fixes the red die on the big picture
        frozen = json.dumps(ann.evaluate(f"fetch('{api}/camera').then((r) => r.json())"))
        ann.route(f"{api}/camera", lambda route: route.fulfill(body=frozen))
        red_index = next(d["index"] for d in pending["dice"] if d["colour"] == "red")
        red = dict(throw.rest)["red"]
        fixed = 1 if red != 1 else 2
        answer = host.request.post(
            f"{api}/camera/fix", data={"id": pending["id"], "index": red_index, "value": fixed}
        )
        assert answer.ok and answer.json()["applied"] is False  # still a question

        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector("#toast:not(:empty)")
        assert "changed since you saw them" in ann.inner_text("#toast")
        assert f"red {fixed}" in ann.inner_text("#toast")
        assert server.app.state.tables.store.log(table_id) == []  # nothing applied
        shot(ann, f"camera-question-changed-{name}")

        # a question that is gone is refused too, never applied to other dice
        gone = ann.context.request.post(f"{api}/camera/confirm", data={"id": "0123abcd"})
        assert gone.status == 409 and gone.json()["rule"] == "no_such_reading"
        assert server.app.state.tables.store.log(table_id) == []

        ann.unroute(f"{api}/camera")  # the screen hears again: it shows the fixed die
        ann.wait_for_selector(f"#camera-ask button[aria-label='change red die (reads {fixed})']")
        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        [entry] = server.app.state.tables.store.log(table_id)
        assert {"colour": "red", "value": fixed} in entry.move["dice"]


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_players_read_the_camera_in_words_and_the_end_says_so(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    """Issue 26 item 9: a player reads what the camera does in words; the host keeps the
    technical line (source, settle state, the dice expected); after the end the camera says the game is over
    (it said "no table is open"). A folder played to its end says so in words (it said
    "watching for the next roll" while reading nothing more)."""
    reader = ClipReader()
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        host.wait_for_function(
            "() => document.getElementById('camera-status').textContent.includes('expects white')"
        )
        # the empty folder was played to its end at once
        bob.wait_for_function(
            "() => document.getElementById('camera-status').textContent"
            '.startsWith("The camera\'s recording has ended: enter rolls by tapping")'
        )
        assert "expects" not in bob.inner_text("#camera-status")
        throw_now(server, host, folder, reader, seed=4301)
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=20000)
        bob.wait_for_function(
            "() => document.getElementById('camera-status').textContent"
            ".includes('The camera asks Ann or the host whether it read the roll right')"
        )
        table_id = ann.url.split("/t/")[1].split("/")[0]
        assert host.request.post(f"{server.base_url}/api/tables/{table_id}/end").ok
        bob.wait_for_function(
            "() => document.getElementById('camera-status').textContent.includes('The game is over')"
        )
        # only the end words: no note of the last thing the camera did, no mode line
        bob.wait_for_function(
            "() => document.getElementById('camera-note').textContent === '' &&"
            " document.getElementById('camera-mode-line').hidden"
        )
        host.wait_for_function(
            "() => document.getElementById('camera-status').textContent.includes('the game is over')"
        )
        assert "no table is open" not in host.inner_text("#camera-status")
        shot(bob, f"camera-in-words-{name}")


@pytest.mark.parametrize(("device", "name"), DEVICES)
def test_the_camera_button_says_whether_this_table_has_the_camera(
    browser: Any, tmp_path: Path, device: dict[str, Any], name: str
) -> None:
    """Issue 26 item 9: "Use the camera at this table" said nothing of where the camera's
    rolls go now; a newer table takes them (the newest open table gets the rolls)."""
    reader = ClipReader()
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        button = host.locator("[data-camera-attach]")
        wait_until(
            lambda: button.text_content() == "This table gets the camera's rolls",
            what="the first table to have the camera",
        )
        newer = host.context.new_page()
        created = newer.request.post(
            f"{server.base_url}/api/tables",
            data={"game": "qwixx", "players": ["Cy", "Di"], "options": {"players": 2}},
        ).json()
        newer.goto(f"{server.base_url}/t/{created['table_id']}")
        wait_until(
            lambda: "serves another table now" in (button.text_content() or ""),
            what="the older table to say the camera went to the newer one",
        )
        assert button.is_enabled()
        host.click("#camera .camera-tools > summary")
        shot(host, f"camera-button-elsewhere-{name}")
        button.click()
        wait_until(
            lambda: button.text_content() == "This table gets the camera's rolls",
            what="the camera back at this table",
        )
        assert button.is_disabled()


def test_an_undo_drops_the_question_and_the_camera_panel_says_why(
    browser: Any, tmp_path: Path
) -> None:
    """By design an undo ends the camera's open question (the game is no longer where the
    dice were judged): the question leaves the screens, the host's camera panel says the
    undo dropped it (it went with nothing said), and the next throw is asked again."""
    reader = ClipReader()
    device, name = DEVICES[0]
    with camera_table(browser, tmp_path, reader, device, "confirm") as (
        server, host, ann, bob, folder,
    ):  # fmt: skip
        throw_now(server, host, folder, reader, seed=4301)
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=20000)
        ann.click("#camera-ask [data-camera-confirm]")
        ann.wait_for_selector(".live[data-state-id='1']", timeout=10000)
        table_id = ann.url.split("/t/")[1].split("/")[0]
        api = f"{server.base_url}/api/tables/{table_id}"

        throw_now(server, host, folder, reader, seed=4302)  # a throw while Ann and Bob cross
        wait_until(
            lambda: host.request.get(f"{api}/camera").json()["pending"] is not None,
            timeout=30,
            what="the second throw asked",
        )
        undone = host.request.post(f"{api}/undo", data={"action_id": "host-undo-0001"})
        assert undone.ok, undone.text()
        host.wait_for_function(
            "() => document.getElementById('camera-note').textContent.includes("
            "'dropped because of the undo')",
            timeout=20000,
        )
        assert host.inner_text("#camera-note") == (
            "the camera's question was dropped because of the undo: throw the dice again, "
            "or enter them by tapping"
        )
        ann.wait_for_selector("#camera-ask", state="hidden", timeout=20000)
        shot(host, f"camera-question-dropped-by-undo-{name}")

        # the undo took the roll back: the dice are due again, and a throw is asked again
        again = throw_now(server, host, folder, reader, seed=4303)
        ann.wait_for_selector("#camera-ask[data-kind=confirm]:not([hidden])", timeout=20000)
        assert asked_dice(ann) == sorted(again.rest)
