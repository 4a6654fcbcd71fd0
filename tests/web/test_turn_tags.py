"""The sheet header's tags and the winners of a game the host ended, without a server."""

from __future__ import annotations

from dataclasses import replace

from companion.rules.qwixx import Cross
from companion.rules.sixto import GAME as SIXTO
from companion.rules.sixto import Sheet
from companion.table.access import Viewer
from companion.table.records import history_summary
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
    assert outcome["tie_break"] is None  # ahead on points: no tie to break
    assert sheet_context(ended, 1, WATCHER)["is_winner"]
    tied = replace(snapshot_of("qwixx", ["Ann", "Bob"], [ROLL_7]), ended_by_host=True)
    assert live_context(tied, WATCHER, "table")["outcome"]["winners"] == "Ann and Bob"


def crossed(sheet: Sheet, cells: list[tuple[int, int]]) -> Sheet:
    """`sheet` with the boxes at (row, box) crossed."""
    marks = [list(row) for row in sheet.marks]
    for row, box in cells:
        marks[row][box] = "x"
    return replace(sheet, marks=tuple("".join(row) for row in marks))


def test_a_sixto_game_the_host_ended_breaks_a_tie_on_most_crosses() -> None:
    """Sixto's rulebook: "In the event of a tie, the player who has crossed off the most
    boxes overall wins". Eve and Gus both on -20 when the host ends it; Gus has 9 crosses,
    Eve 8: Gus wins on the card, on his sheet and in the history (it said "Eve and Gus")."""
    playing = snapshot_of("sixto", ["Eve", "Finn", "Gus"], [])
    state = playing.state
    eve = crossed(state.sheets[0], [(0, 1), (0, 6), (1, 5), (1, 8), (2, 2), (4, 1), (5, 1), (5, 6)])
    gus = crossed(
        state.sheets[2], [(0, 1), (0, 6), (1, 4), (2, 6), (3, 1), (3, 3), (3, 4), (4, 5), (5, 3)]
    )
    finn = crossed(state.sheets[1], [(0, 0), (1, 1), (2, 2)])
    state = replace(state, sheets=(eve, finn, gus))
    scores = SIXTO.scores(state)
    assert scores[0].total == scores[2].total == -20 > scores[1].total  # the tie ahead
    ended = replace(playing, state=state, scores=scores, ended_by_host=True)
    assert winners_of(ended) == (2,)
    outcome = live_context(ended, WATCHER, "table")["outcome"]
    assert outcome["winners"] == "Gus"
    # level on points with Eve: the card says why Gus won (it said only "ahead")
    assert outcome["tie_break"] == "on most crosses (9)"
    assert [row["name"] for row in outcome["ranking"]][:2] == ["Gus", "Eve"]
    assert sheet_context(ended, 2, WATCHER)["is_winner"]
    assert not sheet_context(ended, 0, WATCHER)["is_winner"]
    summary = history_summary(SIXTO, ended.players, state, 0, by_host=True)
    assert summary["winners"] == [2]
