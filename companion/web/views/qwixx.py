"""The Qwixx score sheet (rulebook shared/rules/qwixx.txt): four coloured rows of eleven
numbers (red and yellow 2..12, green and blue 12..2), each ending in a lock box, four penalty
boxes and the crosses-to-points table. Presentation only: which box is legal comes from the
engine's `legal_moves`, which rows a sheet shows closed from `rows_closed_to`; every open
box carries the Cross it would send, so an illegal tap is answered by the engine's
Rejection."""

from __future__ import annotations

from typing import Any, TypedDict

from companion.rules.base import Game, Move
from companion.rules.qwixx import (
    COLOUR_INDEX,
    LAST_NUMBER,
    MAX_PENALTIES,
    ROW_COLOURS,
    ROW_NUMBERS,
    ROW_POINTS,
    Cross,
    Options,
    Pass,
    State,
    rows_closed_to,
)
from companion.table.words import score_text
from companion.web.views import OptionText, SheetInput, move_attr

TEMPLATE = "games/qwixx.html"

# A pattern per row so colour-blind players can tell rows apart (besides the name).
ROW_PATTERN = {"red": "stripes", "yellow": "dots", "green": "grid", "blue": "waves"}


def dice_out(state: State) -> set[str]:
    """The colours whose die is out of the game although it may still lie in the current
    roll: every locked row, also one locked during this white-sum step (its die may no
    longer be used, NOTES). The roll banner dims those dice."""
    return set(state.locked) | set(state.locking)


def sheet(inp: SheetInput) -> dict[str, Any]:
    state: State = inp.state
    own = state.sheets[inp.seat]
    # a row the white sum is locking stays open on the sheet of a player who may still
    # lock it too; closed to everyone else (the rules say which)
    closed = rows_closed_to(state, inp.seat)
    points = dict(inp.score.breakdown)
    rows = []
    drawn: list[str] = []
    for index, colour in enumerate(ROW_COLOURS):
        crossed = own.rows()[index]
        last_position = ROW_NUMBERS[index].index(crossed[-1]) if crossed else -1
        boxes = []
        for position, number in enumerate(ROW_NUMBERS[index]):
            box = _box(inp, Cross(player=inp.seat, colour=colour, number=number), crossed)
            if box["legal"] and box["move"]:
                drawn.append(box["move"])
            box["lost"] = not box["crossed"] and (position < last_position or colour in closed)
            box["last"] = position == len(ROW_NUMBERS[index]) - 1
            boxes.append(box)
        last_move = Cross(player=inp.seat, colour=colour, number=ROW_NUMBERS[index][-1])
        lock = _box(inp, last_move, crossed if own.is_locked_by_me(colour) else ())
        lock["closed"] = colour in closed
        rows.append(
            {
                "colour": colour,
                "label": colour.capitalize(),
                "pattern": ROW_PATTERN[colour],
                "boxes": boxes,
                "lock": lock,
                "crosses": own.crosses(colour),
                "points": points.get(colour, 0),
                "descending": ROW_NUMBERS[index][0] > ROW_NUMBERS[index][-1],
            }
        )
    return {
        "rows": rows,
        "penalties": [i < own.penalties for i in range(MAX_PENALTIES)],
        "penalty_points": points.get("penalties", 0),
        "points_table": [
            {"crosses": n, "points": ROW_POINTS[n]} for n in range(1, len(ROW_POINTS))
        ],
        "buttons": _pass_button(inp),
        "drawn_moves": drawn,
    }


class Box(TypedDict, total=False):
    """A number box or a lock box as the template draws it."""

    number: int
    crossed: bool
    legal: bool
    move: str | None  # the Cross it sends; None: not this viewer's to mark, or crossed
    confirm: str  # its "Tap again to ..." question, where the cross ends the game
    lost: bool  # a number passed over, or its row closed to this player
    last: bool  # the row's last number
    closed: bool  # (the lock) the row is closed to this player


def _box(inp: SheetInput, move: Cross, crossed: tuple[int, ...]) -> Box:
    """A box (a number, or the row's lock when `crossed` holds its last number): the Cross
    it sends and, where the engine says that cross ends the game (the colour step's lock of
    a second row, any cross of the last to act on a white sum that locks a second row),
    the question it asks first: the box keeps its number or padlock, and table.js shows
    the question beside it (tap_again.js, data-ask-beside)."""
    is_crossed = move.number in crossed
    legal = inp.is_legal(move)
    box: Box = {
        "number": move.number,
        "crossed": is_crossed,
        "legal": legal,
        "move": inp.move_attr(move) if not is_crossed else None,
    }
    if legal and box["move"] and inp.ends_game(move):
        said = describe(move)
        box["confirm"] = f"Tap again to {said[:1].lower()}{said[1:]}: the game ends"
    return box


def _pass_button(inp: SheetInput) -> list[dict[str, str | bool]]:
    """The pass, labelled with what it costs (the active player's pass after crossing
    nothing marks a penalty, as the engine says: `Game.penalty`) and, when it costs, asking
    once."""
    if not (inp.markable and inp.may_act):
        return []
    pass_move = Pass(player=inp.seat)
    legal = inp.is_legal(pass_move)
    change = inp.penalty(pass_move) if legal else 0
    button: dict[str, str | bool] = {
        "label": "Pass (no cross)",
        "move": move_attr(inp.game, pass_move),
        "legal": legal,
    }
    ends = legal and inp.ends_game(pass_move)
    if change < 0:
        cost = score_text(change)  # as the sheet writes it: "Penalties −5"
        button["label"] = f"Pass: {cost} penalty"
        button["confirm"] = f"Tap again to pass and take {cost}"
        button["danger"] = True
        if ends:
            # the fourth penalty ends the game at once for everyone (rulebook)
            button["label"] = f"Pass: {cost} penalty, ends the game"
            button["confirm"] = "Tap again to take your fourth penalty: the game ends"
    elif ends:
        # the last to act on a white sum that locks a second row: the game ends when
        # everyone has acted (rulebook: "Either way the game is over"), at this pass
        button["label"] = "Pass (no cross), ends the game"
        button["confirm"] = "Tap again to pass: the game ends"
        button["danger"] = True
    return [button]


def ending_note(game: Game[Options, State], state: State, seat: int) -> str:
    """Which of `seat`'s crosses now end the game while others do not (the colour step's
    lock of a second row, NOTES: "the game ends at once on ... a 2nd locked colour"), in
    the words of the box's question: "Crossing yellow 12 and locking the row ends the
    game". The last to act on a white sum that locks a second row, whose every move ends
    it, is told so on their roll line (views.LAST_TO_ACT); "" when no cross ends it."""
    moves = tuple(game.legal_moves(state, seat))
    ending = [m for m in moves if game.outcome(game.play(state, m)) is not None]
    if not ending or len(ending) == len(moves):
        return ""
    crosses = dict.fromkeys(f"{m.colour} {m.number}" for m in ending if isinstance(m, Cross))
    boxes = " or ".join(crosses)
    if not boxes:
        return ""
    return f"Crossing {boxes} and locking the row ends the game"


def describe(move: Move) -> str:
    if isinstance(move, Cross):
        # the row's last number can only be crossed as its lock (the engine refuses it
        # before five crosses), so the log and the camera line call it what it is
        index = COLOUR_INDEX.get(move.colour)
        if index is not None and move.number == LAST_NUMBER[index]:
            return f"Cross {move.colour} {move.number} and lock the row"
        return f"Cross {move.colour} {move.number}"
    if isinstance(move, Pass):
        return "Pass (no cross)"
    return ""


# the start page's words for the options (rulebook: whoever rolls the first 6 starts)
OPTIONS = {
    "first_player": OptionText(
        "Who rolls first",
        "At a paper table: whoever rolls the first 6. The others follow clockwise.",
    ),
}
