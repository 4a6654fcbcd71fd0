"""Qwixx boxes whose cross ends the game ask once, as the game-ending pass does: the
server marks them with their question (the engine judges which cross ends the game), and
the last to act on a white sum that locks a second row is told that a cross or pass now
ends the game."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from companion.rules.qwixx import Cross, Pass
from companion.table.access import Viewer
from companion.web.views import live_context, sheet_context
from tests.web.helpers import roll, snapshot_of

WHITE_12_YELLOW_6 = roll(
    ("white", 6), ("white", 6), ("red", 1), ("yellow", 6), ("green", 1), ("blue", 1)
)
"""White sum 12; white 6 + yellow 6 is yellow 12 (its lock), green and blue give 7."""


def white(first: int, second: int, locked: tuple[str, ...] = ()) -> Any:
    """A roll of two white dice and every coloured die still in the game showing 1."""
    colours = [c for c in ("red", "yellow", "green", "blue") if c not in locked]
    return roll(("white", first), ("white", second), *[(c, 1) for c in colours])


def five_turns() -> list[Any]:
    """Ann crosses red 2..6, Bob yellow 2..6, each on the white sum of five turns."""
    moves: list[Any] = []
    for turn, (first, second) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)]):
        moves += [white(first, second), Cross(0, "red", first + second)]
        moves += [Cross(1, "yellow", first + second), Pass(player=turn % 2)]
    return moves


def asking_boxes(moves: list[Any], seat: int) -> dict[str, str]:
    """The boxes of `seat`'s sheet that ask first: "red 12" or "red lock" -> question."""
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], moves)
    sheet = sheet_context(snapshot, seat, Viewer(seat=seat, host=False))
    asking = {}
    for row in sheet["rows"]:
        for box in row["boxes"]:
            if "confirm" in box:
                asking[f"{row['colour']} {box['number']}"] = box["confirm"]
        if "confirm" in row["lock"]:
            asking[f"{row['colour']} lock"] = row["lock"]["confirm"]
    return asking


def legal_boxes(moves: list[Any], seat: int) -> set[str]:
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], moves)
    sheet = sheet_context(snapshot, seat, Viewer(seat=seat, host=False))
    return {
        f"{row['colour']} {box['number']}"
        for row in sheet["rows"]
        for box in row["boxes"]
        if box["legal"]
    }


def test_the_colour_step_lock_of_a_second_row_asks_once() -> None:
    """Ann locked red on the white sum; Bob, the roller, passed it, and his yellow 12 (white
    6 + yellow 6) locks a second row in the colour step: the game ends at that tap, which
    went through at once. The yellow 12 and its lock (the same cross) ask; Bob's other
    legal boxes (green 7, blue 7) do not."""
    moves = [*five_turns(), WHITE_12_YELLOW_6, Cross(0, "red", 12), Pass(player=1)]
    question = "Tap again to cross yellow 12 and lock the row: the game ends"
    assert asking_boxes(moves, 1) == {"yellow 12": question, "yellow lock": question}
    assert {"green 7", "blue 7"} <= legal_boxes(moves, 1)
    # on the white sum before it, Bob's yellow 12 locked the first row: nothing asked
    assert asking_boxes(moves[:-2], 1) == {}
    assert "yellow 12" in legal_boxes(moves[:-2], 1)


def second_lock_on_the_white_sum() -> list[Any]:
    """Red is locked (Ann's); Bob locks yellow on Ann's white sum 12: Ann acts last."""
    moves = five_turns()
    moves += [white(6, 6), Cross(0, "red", 12), Pass(player=1), Pass(player=1)]  # Bob's turn
    return [*moves, white(6, 6, ("red",)), Cross(1, "yellow", 12)]


def test_every_cross_of_the_last_to_act_on_a_second_lock_asks_once() -> None:
    """Ann is the last to act on a white sum that locks a second row: any cross of hers
    ends the game (her pass already asked). Every legal box asks; before Bob's lock none
    of hers did."""
    moves = second_lock_on_the_white_sum()
    asking = asking_boxes(moves, 0)
    assert set(asking) == legal_boxes(moves, 0) == {"green 12", "blue 12"}
    assert asking["green 12"] == "Tap again to cross green 12: the game ends"
    assert asking_boxes(moves[:-1], 0) == {}


def test_the_last_to_act_on_a_second_lock_is_told_the_game_ends() -> None:
    """Bob's device said "No roll yet: Ann must cross or pass first, since a pass now
    could end the game"; Ann's said nothing, though her cross or pass ends it."""
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], second_lock_on_the_white_sum())
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["roll_waits"] == "Last to act: your cross or pass now ends the game"
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_waits"].startswith("No roll yet: Ann must cross or pass first")


@pytest.mark.parametrize("auto_pass", [True, False])
def test_the_last_to_act_is_told_whatever_the_automatic_passes(auto_pass: bool) -> None:
    """Ann's "Last to act" line showed only at a table with automatic passes; without
    them her cross or pass ends the game all the same (her buttons warned, her line was
    empty). Bob's "No roll yet" explains a roll held back from automatic passes: without
    them no roll comes before everyone has acted anyway, and he is told nothing new."""
    on_table = snapshot_of("qwixx", ["Ann", "Bob"], second_lock_on_the_white_sum())
    snapshot = replace(on_table, auto_pass=auto_pass)
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["roll_waits"] == "Last to act: your cross or pass now ends the game"
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bool(bob["roll_waits"]) == auto_pass


def test_the_roller_is_told_up_front_which_lock_ends_the_game() -> None:
    """In Bob's colour step his yellow 12 locks a second row: his banner read only
    "Colour: your turn", the ending told only at the first tap on the box. Ann's banner
    and Bob's before the white sum locked red (his yellow 12 locking the first row) say
    nothing of an ending."""
    moves = [*five_turns(), WHITE_12_YELLOW_6, Cross(0, "red", 12), Pass(player=1)]
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], moves)
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["turn"]["text"] == (
        "Colour: your turn. Crossing yellow 12 and locking the row ends the game"
    )
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["turn"]["text"] == "Colour: waiting for Bob"
    white_sum = snapshot_of("qwixx", ["Ann", "Bob"], moves[:-2])
    assert live_context(white_sum, Viewer(seat=1, host=False), "sheet")["turn"]["text"] == (
        "White sum: waiting for you and Ann"
    )
