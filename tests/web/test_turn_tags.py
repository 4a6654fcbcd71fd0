"""The sheet header's tags and the winners of a game the host ended, without a server."""

from __future__ import annotations

from dataclasses import replace

from companion.rules.qwixx import Cross
from companion.table.access import Viewer
from companion.web.views import live_context, sheet_context, winners_of
from tests.web.helpers import roll, snapshot_of

ROLL_7 = roll(("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1))
WATCHER = Viewer(seat=None, host=False)


def test_rolling_while_the_dice_are_awaited_then_turn() -> None:
    before = snapshot_of("qwixx", ["Ann", "Bob"], [])
    ann = sheet_context(before, 0, WATCHER)
    assert ann["is_rolling"] and not ann["is_turn"]
    after = snapshot_of("qwixx", ["Ann", "Bob"], [ROLL_7])
    ann = sheet_context(after, 0, WATCHER)
    assert not ann["is_rolling"] and ann["is_turn"]
    bob = sheet_context(after, 1, WATCHER)
    assert not bob["is_rolling"] and not bob["is_turn"]


def test_a_game_the_host_ended_is_won_by_who_was_ahead() -> None:
    playing = snapshot_of("qwixx", ["Ann", "Bob"], [ROLL_7, Cross(1, "red", 7)])
    assert winners_of(playing) == ()  # still going: nobody has won
    ended = replace(playing, ended_by_host=True)
    assert winners_of(ended) == (1,)
    outcome = live_context(ended, WATCHER, "table")["outcome"]
    assert outcome["winners"] == "Bob" and outcome["ahead_when_ended"]
    assert sheet_context(ended, 1, WATCHER)["is_winner"]
    tied = replace(snapshot_of("qwixx", ["Ann", "Bob"], [ROLL_7]), ended_by_host=True)
    assert live_context(tied, WATCHER, "table")["outcome"]["winners"] == "Ann and Bob"
