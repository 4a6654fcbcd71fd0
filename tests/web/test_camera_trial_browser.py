"""The camera panel's small things from the newcomer's trial, in Debian's Chromium: the
picture stays while the camera restarts (its frame answers 404 until the first new one),
the links under the panel never leave a "·" at a line's end on a phone, and a finished
game's camera line says once that the camera reads no more rolls for it. The camera's
state is the server's answer with the fields a camera would give put over it (a real
server with no camera; web/static/js/camera.js draws what it is handed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import ServerProcess, shot
from tests.web.devices import PHONE

pytestmark = pytest.mark.browser

LIVE = {"connected": True, "ended": False, "last_error": None}
PICTURE = Path(__file__).resolve().parents[2] / "web" / "static" / "icon-192.png"


def camera_says(context: Any, fields: dict[str, Any]) -> None:
    """Every camera status the pages of `context` read: the server's, `fields` over it."""

    def route(route: Any) -> None:
        response = route.fetch()
        body = {**response.json(), "enabled": True, "status": LIVE, "line": "camera 0 · 10 fps"}
        route.fulfill(response=response, json={**body, **fields})

    context.route(re.compile(r".*/api/tables/[^/]+/camera$"), route)


def host_table(context: Any, server: ServerProcess) -> Any:
    """A two-player Qwixx table's page on the host's device (`context`), socket live."""
    created = context.request.post(
        server.base_url + "/api/tables",
        data={"game": "qwixx", "options": {"players": 2}, "players": ["Ann", "Bob"]},
    )
    assert created.status == 201, created.text()
    page = context.new_page()
    page.goto(server.base_url + created.json()["url"])
    page.wait_for_selector("#conn[data-conn=live]")
    return page


def test_the_picture_stays_while_the_camera_restarts(browser: Any, server: ServerProcess) -> None:
    context = browser.new_context(**PHONE)
    camera_says(context, {"attached": True})
    frames = {"served": 0}

    def frame(route: Any) -> None:
        # one picture, then none: the camera restarted and has no new frame yet
        frames["served"] += 1
        if frames["served"] == 1:
            route.fulfill(path=str(PICTURE), content_type="image/png")
        else:
            route.fulfill(status=404, json={"detail": "no camera picture yet"})

    context.route(re.compile(r".*/camera\.jpg\?.*"), frame)
    page = host_table(context, server)
    page.wait_for_function(
        "() => document.getElementById('camera-picture').naturalWidth > 0", timeout=10000
    )
    for _ in range(2):  # the page took in a missing frame and asked again
        page.wait_for_event(
            "response", lambda r: "camera.jpg" in r.url and r.status == 404, timeout=10000
        )
    assert page.evaluate(
        "() => { const p = document.getElementById('camera-picture');"
        " return p.complete && p.naturalWidth > 0; }"
    ), "the picture went broken while the camera had no frame"
    context.unroute_all(behavior="ignoreErrors")  # a poll in flight as the context closes
    context.close()


# each "·" between the camera links that is on screen, with whether a link stands on its
# line both before and after it (a "·" clipped off the panel's left edge is not on screen)
SEPARATORS = """() => {
  const box = document.querySelector('.camera-links');
  const clip = box.getBoundingClientRect();
  const links = Array.from(box.querySelectorAll('a')).filter((a) => a.checkVisibility())
    .map((a) => a.getBoundingClientRect());
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let at = node.textContent.indexOf('·'); at >= 0; at = node.textContent.indexOf('·', at + 1)) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + 1);
      const dot = range.getBoundingClientRect();
      if (!dot.width || dot.right <= clip.left || dot.left >= clip.right) continue;
      const middle = (dot.top + dot.bottom) / 2;
      const onLine = links.filter((r) => r.top <= middle && middle <= r.bottom);
      found.push({before: onLine.some((r) => r.right <= dot.left),
                  after: onLine.some((r) => r.left >= dot.right)});
    }
  }
  const tops = new Set(links.map((r) => Math.round(r.top)));
  return {separators: found, lines: tops.size};
}"""


def test_no_camera_link_line_ends_in_a_separator_on_a_phone(
    browser: Any, server: ServerProcess
) -> None:
    """On a phone the links read "Game log and roll photos ·" over "Dice statistics"."""
    context = browser.new_context(**PHONE)
    page = host_table(context, server)
    page.wait_for_selector("#camera-status[data-camera-state=off]", timeout=10000)
    wrapped = False
    for width in (320, 360, 390, 414, 600):
        page.set_viewport_size({"width": width, "height": 844})
        seen = page.evaluate(SEPARATORS)
        wrapped = wrapped or seen["lines"] > 1
        for separator in seen["separators"]:
            assert separator == {"before": True, "after": True}, f"at {width} px: {seen}"
        if width == 390:
            page.locator(".camera-links").scroll_into_view_if_needed()
            shot(page, "camera-links-phone")
    assert wrapped, "the links never wrapped: the phone widths tested nothing"
    context.close()


def test_a_finished_games_camera_line_says_once_that_the_camera_reads_no_more(
    browser: Any, server: ServerProcess
) -> None:
    """The camera moved on from a finished game: its host's line said "the game is over:
    the camera reads no more rolls for this table · this table does not get camera rolls"."""
    over = "the game is over: the camera reads no more rolls for this table"
    context = browser.new_context(**PHONE)
    camera_says(context, {"attached": False, "finished": True, "line": over})
    page = host_table(context, server)
    page.wait_for_function(
        "(words) => document.getElementById('camera-status').textContent === words",
        arg=over,
        timeout=10000,
    )
    context.unroute_all(behavior="ignoreErrors")  # a poll in flight as the context closes
    context.close()
