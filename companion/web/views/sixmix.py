"""The Sixmix board (rulebook shared/rules/sixmix.txt; house decisions in
companion/rules/sixmix.py): one row per colour in play, six spaces worth 100,000 ... 1 times
the die in them, each row's running total and owner, the chips won per round, and the
points per row of the last scored round (highest, second, triplets).

The board is shared, so every seat's sheet carries all of it (a player's device shows only
her own sheet); the table view's CSS shows it once, in the active seat's sheet.

Placing is two taps: the active player picks one of her rolled dice, then taps a free
space. For every distinct rolled die the sheet draws a copy of the board whose free spaces
carry `Place(die, row, space)`; the die picks are radio buttons and CSS shows the copy of
the picked die, so no per-game script is needed and every (die, space) pair the engine could
list is one tap away. Presentation only: a space is highlighted only when the engine's
`legal_moves` lists its move, and every free space (a foreign 100,000 space too) sends its
move, so an illegal tap is answered with the engine's reason.
"""

from __future__ import annotations

from typing import Any

from companion.rules.base import Die, Move
from companion.rules.sixmix import (
    FIRST_SPACE,
    HIGHEST_POINTS,
    SECOND_POINTS,
    SPACE_NAMES,
    SPACE_VALUES,
    Place,
    Starter,
    State,
    die_at,
    last_round,
    row_owner,
    seat_rows,
)
from companion.table.words import names_of
from companion.web.views import OptionText, SheetInput, colour_class

TEMPLATE = "games/sixmix.html"

# A pattern per row (in board order) so that rows differ by more than their colour.
PATTERNS = ("stripes", "dots", "grid", "waves", "checks", "zigzag")


def sheet(inp: SheetInput) -> dict[str, Any]:
    """The board seen from `inp.seat`: the plain board, and when this seat places now on a
    device that may mark it, one tappable copy of the board per distinct rolled die."""
    state: State = inp.state
    names = inp.seat_names(inp.state.players)
    board = [_row(state, r, names, inp.seat) for r in range(len(state.colours))]
    placing = inp.markable and inp.may_act and bool(state.roll) and not state.over
    picks: list[dict[str, Any]] = []
    drawn: list[str] = []
    if placing:
        for die, count in _distinct_dice(state.roll):
            cells, legal = _cells_for(inp, state, die)
            drawn += legal
            picks.append(
                {
                    "id": f"smx-{inp.seat}-{die.colour}-{die.value}",
                    "colour": die.colour,
                    "value": die.value,
                    "css": colour_class(die.colour),
                    "count": count,
                    "label": f"{die.colour} {die.value}",
                    "cells": cells,
                    "legal": len(legal),
                }
            )
    return {
        "round": state.round,
        "over": state.over,
        "space_names": list(SPACE_NAMES),
        "board": board,
        "placing": placing,
        "picks": picks,
        # With one distinct die there is nothing to choose: its board shows at once.
        "picked": picks[0]["id"] if len(picks) == 1 else None,
        "group": f"smx-die-{inp.seat}",
        "hint": _hint(inp, state, names, placing),
        "own_rows": [row for row in board if row["mine"]],
        "own_rounds": [
            {"round": number, "chips": won[inp.seat]}
            for number, won in enumerate(state.round_points, start=1)
        ],
        "chips": _chips(state, names),
        "last_round": _last_round(state, names),
        "buttons": [],
        "drawn_moves": drawn,
    }


def describe(move: Move) -> str:
    """Button label (history, generic buttons): "Place green 5 in red's 10,000 space";
    "Player 3 starts instead" (a tie for the lowest row: the web puts in the name)."""
    if isinstance(move, Place):
        where = SPACE_NAMES[move.space] if 0 <= move.space < len(SPACE_NAMES) else move.space
        return f"Place {move.die.colour} {move.die.value} in {move.row}'s {where} space"
    if isinstance(move, Starter):
        return f"Player {move.seat + 1} starts instead (tied for the lowest row)"
    return ""


def current_dice(state: State) -> tuple[Die, ...]:
    """The banner shows the active player's roll while she places."""
    return state.roll


# -- pieces of the board -----------------------------------------------------------------


def format_points(value: int) -> str:
    """A row value as printed on the board: 651,344."""
    return f"{value:,}"


def _row(state: State, row: int, names: list[str], seat: int) -> dict[str, Any]:
    colour = state.colours[row]
    owner = row_owner(state.players, row)
    spaces = []
    running = 0
    for space, name in enumerate(SPACE_NAMES):
        die = die_at(state, row, space)
        if die is not None:
            running += die.value * SPACE_VALUES[space]
        css = "box smx-space" + (" first" if space == FIRST_SPACE else "")
        spaces.append(
            {
                "space": space,
                "name": name,
                "first": space == FIRST_SPACE,
                "die": None
                if die is None
                else {"colour": die.colour, "value": die.value, "css": colour_class(die.colour)},
                # ready-made class and label: the template draws each space up to 13 times
                "css": css if die is None else f"{css} filled",
                "aria": f"{colour.capitalize()} {name}"
                + ("" if die is None else f": {die.colour} {die.value}"),
            }
        )
    return {
        "index": row,
        "colour": colour,
        "label": colour.capitalize(),
        "css": colour_class(colour),
        "style": f"--row: var(--{colour}, #777); --row-bg: var(--{colour}-bg, #eee)",
        "pattern": PATTERNS[row % len(PATTERNS)],
        "owner": owner,
        "owner_name": names[owner],
        "mine": owner == seat,
        "chips": state.points[owner],
        "spaces": spaces,
        "filled": sum(1 for s in spaces if s["die"] is not None),
        "total": running,
        "total_text": format_points(running),
    }


def _distinct_dice(roll: tuple[Die, ...]) -> list[tuple[Die, int]]:
    """Each distinct rolled die once with how many of it were rolled (equal dice are
    interchangeable, as in the engine's moves); her colour first, high values first."""
    counts: dict[Die, int] = {}
    for die in roll:
        counts[die] = counts.get(die, 0) + 1
    colours = list(dict.fromkeys(d.colour for d in roll))
    order = sorted(counts, key=lambda d: (colours.index(d.colour), -d.value))
    return [(die, counts[die]) for die in order]


def _cells_for(
    inp: SheetInput, state: State, die: Die
) -> tuple[list[list[dict[str, Any]]], list[str]]:
    """Per row, per space: the move a free space sends when `die` is picked (None for a
    used space) and whether the engine lists it; plus the legal moves' JSON."""
    cells: list[list[dict[str, Any]]] = []
    legal_attrs: list[str] = []
    for row, colour in enumerate(state.colours):
        row_cells: list[dict[str, Any]] = []
        for space in range(len(SPACE_NAMES)):
            if die_at(state, row, space) is not None:
                row_cells.append({"move": None, "legal": False})
                continue
            move = Place(player=inp.seat, die=die, row=colour, space=space)
            attr = inp.move_attr(move)
            legal = inp.is_legal(move)
            if legal and attr:
                legal_attrs.append(attr)
            row_cells.append({"move": attr, "legal": legal})
        cells.append(row_cells)
    return cells, legal_attrs


def _hint(inp: SheetInput, state: State, names: list[str], placing: bool) -> str:
    """One line on what happens now, in words (no rule checks)."""
    if state.over:
        return "The final board stays on the table."
    active = names[state.active]
    if placing:
        return "Pick a die, then tap a free space. Glowing spaces are allowed."
    if inp.turn.chance:
        tie = ""
        if state.tied:
            tied = names_of(tuple(names), state.tied)
            tie = f" {tied} tied for the lowest row; the youngest of them starts."
        else:
            tie = _why_starts(state, names, own=inp.seat == state.active)
        if inp.seat == state.active:
            return f"Round {state.round}: roll your dice.{tie}"
        return f"Round {state.round}: {active} rolls.{tie}"
    return f"Round {state.round}: {active} places a die."


def _why_starts(state: State, names: list[str], own: bool) -> str:
    """Why the starter of a later round rolls first, before any die of the round is placed
    (rulebook: "The following round starts with the player who got the lowest total"):
    " Tom's blue row had the lowest total of round 1, so Tom starts." ("" otherwise)."""
    result = last_round(state)
    if result is None or any(cell for row in state.board for cell in row):
        return ""
    lowest = min(result.row_values)
    colours = [
        colour
        for row, colour in enumerate(state.colours)
        if result.row_values[row] == lowest and row_owner(state.players, row) == state.active
    ]
    if not colours:
        return ""
    number = result.number
    if own:
        return f" Your {colours[0]} row had the lowest total of round {number}, so you start."
    name = names[state.active]
    return f" {name}'s {colours[0]} row had the lowest total of round {number}, so {name} starts."


def _chips(state: State, names: list[str]) -> dict[str, Any]:
    """The chips won per round and in total, a column per player."""
    owners = [
        {
            "name": names[seat],
            "colours": [state.colours[r] for r in seat_rows(state.players, seat)],
            "active": seat == state.active and not state.over,
        }
        for seat in range(state.players)
    ]
    rounds = [
        {"round": number, "chips": list(won)}
        for number, won in enumerate(state.round_points, start=1)
    ]
    return {"owners": owners, "rounds": rounds, "totals": list(state.points)}


def _last_round(state: State, names: list[str]) -> dict[str, Any] | None:
    """The points per row of the latest scored round: highest (2), second (1), both when
    rows tie for the top (3), and the triplets, each going to the row's owner."""
    result = last_round(state)
    if result is None:
        return None
    rows = []
    for row, colour in enumerate(state.colours):
        rank = result.rank_points[row]
        triplets = result.triplet_points[row]
        parts = []
        if rank == HIGHEST_POINTS + SECOND_POINTS:
            parts.append(f"tied highest +{rank}")
        elif rank == HIGHEST_POINTS:
            parts.append(f"highest +{rank}")
        elif rank == SECOND_POINTS:
            parts.append(f"second +{rank}")
        if triplets:
            parts.append(f"{'triplets' if triplets > 1 else 'triplet'} +{triplets}")
        rows.append(
            {
                "colour": colour,
                "label": colour.capitalize(),
                "css": colour_class(colour),
                "pattern": PATTERNS[row % len(PATTERNS)],
                "owner_name": names[row_owner(state.players, row)],
                "value": format_points(result.row_values[row]),
                "rank": rank,
                "triplets": triplets,
                "points": rank + triplets,
                "why": ", ".join(parts) if parts else "no points",
            }
        )
    return {"number": result.number, "rows": rows}


# the start page's words for the options
OPTIONS = {
    "colours": OptionText(
        "Board colours, first row first",
        "The colour markers on your board in board order; the first rows are in play (4 with "
        "2 players).",
        more=True,
    ),
    "first_player": OptionText(
        "Who starts", "Whoever won the start roll; the others follow clockwise."
    ),
    "target": OptionText(
        "Points to win", "The game ends when a player reaches this many points (rulebook: 10)."
    ),
}
