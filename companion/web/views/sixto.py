"""The Sixto score sheet (rulebook shared/rules/sixto.txt, NOTES.md): six coloured rows of
twelve numbered boxes, boxes 10-12 being the target area, with the points of every row at
the right and of every main column (1-9) below. Presentation only: every open box carries
the Cross it would send; which one is legal comes from the engine's `legal_moves`."""

from __future__ import annotations

from typing import Any

from companion.rules.base import Move
from companion.rules.sixto import (
    BOXES,
    CROSSED,
    MAIN_BOXES,
    POINTS,
    TARGET_FIRST,
    Cross,
    Done,
    EndReason,
    Keep,
    Reroll,
    State,
    Step,
    certain_turn_end,
    crossed_columns,
)
from companion.web.views import OptionText, SheetInput, colour_class

TEMPLATE = "games/sixto.html"

PATTERNS = ("stripes", "dots", "grid", "waves", "checks", "zigzag")


def sheet(inp: SheetInput) -> dict[str, Any]:
    state: State = inp.state
    own = state.sheets[inp.seat]
    points = dict(inp.score.breakdown)
    used = set(state.used[inp.seat]) if inp.seat < len(state.used) else set()
    drawn: list[str] = []
    rows = []
    for index, colour in enumerate(state.colours):
        rows.append(
            {
                "colour": colour,
                "css": colour_class(colour),
                "label": colour.capitalize(),
                "pattern": PATTERNS[index % len(PATTERNS)],
                "boxes": _boxes(inp, state, index, drawn),
                "crosses": len(crossed_columns(own.marks[index])),
                "points": points.get(f"{colour} row", 0),
                "closed": colour in state.closed,
                "closing": colour in state.closing,
                "die_used": colour in used,
            }
        )
    columns = [
        {
            "column": column,
            "crosses": sum(1 for marks in own.marks if marks[column - 1] == CROSSED),
            "points": points.get(f"column {column}", 0),
        }
        for column in range(1, MAIN_BOXES + 1)
    ]
    return {
        "sheet_name": own.name,
        "rows": rows,
        "columns": columns,
        "row_total": sum(r["points"] for r in rows),
        "column_total": sum(c["points"] for c in columns),
        "target_first": TARGET_FIRST,
        "points_table": [{"crosses": n, "points": p} for n, p in enumerate(POINTS) if n],
        "buttons": _done_button(inp),
        "drawn_moves": drawn,
    }


def _done_button(inp: SheetInput) -> list[dict[str, str | bool]]:
    """The "Done crossing" button; where this Done ends the game (the last of a turn after
    which three dice are out or a player can cross no more: rulebook), saying so and asking
    once, as Qwixx's game-ending pass does."""
    done = Done(player=inp.seat)
    attr = inp.move_attr(done)
    if attr is None or not inp.is_legal(done):
        return []
    button: dict[str, str | bool] = {"label": describe(done), "move": attr, "legal": True}
    if inp.ends_game(done):
        button["label"] = "Done crossing, ends the game"
        button["confirm"] = "Tap again to be done crossing: the game ends"
        button["danger"] = True
    return [button]


def _boxes(inp: SheetInput, state: State, index: int, drawn: list[str]) -> list[dict[str, object]]:
    """The twelve boxes of row `index` on this seat's sheet, each open one with its move."""
    own = state.sheets[inp.seat]
    colour = state.colours[index]
    numbers, marks = own.numbers[index], own.marks[index]
    crossed = crossed_columns(marks)
    last = crossed[-1] if crossed else 0
    boxes = []
    for column in range(1, BOXES + 1):
        is_crossed = marks[column - 1] == CROSSED
        move = Cross(player=inp.seat, colour=colour, column=column)
        legal = inp.is_legal(move)
        attr = None if is_crossed else inp.move_attr(move)
        if legal and attr:
            drawn.append(attr)
        boxes.append(
            {
                "column": column,
                "number": numbers[column - 1],
                "crossed": is_crossed,
                "lost": not is_crossed and (column < last or colour in state.closed),
                "legal": legal,
                "move": attr,
                "target": column >= TARGET_FIRST,
            }
        )
    return boxes


def describe(move: Move) -> str:
    if isinstance(move, Keep):
        return "Keep this roll"
    if isinstance(move, Reroll):
        return "Re-roll all dice"
    if isinstance(move, Done):
        return "Done crossing"
    if isinstance(move, Cross):
        return f"Cross {move.colour} box {move.column}"
    return ""


# what the players waited for in a step are to do (waiting_text)
WAITED_FOR: dict[str, str] = {
    Step.REROLL: "keep this roll or re-roll all the dice",
    Step.CROSS: "cross with these dice, then tap Done crossing",
}


def waiting_text(step: str, names: str, own: bool = False) -> str | None:
    """The banner's sentence while `names` are to act in `step` (views.waiting_words):
    "Your turn: ..." on the device of the one player waited for (`own`; `names` is then
    words.YOU, but a player may be named "you" too)."""
    deed = WAITED_FOR.get(step)
    if deed is None:
        return None
    return f"Your turn: {deed}" if own else f"Waiting for {names} to {deed}"


def last_turn_words(who: str | None, count: int, *, state: State, host_aside: bool = True) -> str:
    """While the end of this turn ends the game (Turn.ends_by_hand: a third die leaves, a
    player can cross no more, solo: two dice unused): to those still crossing (`who` None)
    that it is the last turn; to the others why no roll is offered, naming the `count`
    players crossing, and, with `host_aside`, that the host's device may tap Done crossing
    for them (not where the host's device acts as a player only: views._host_may_act).
    Solo, every turn begins with six dice unused: the solo player reads nothing while they
    can still cross with enough of them (their Done button says when it ends the game),
    and that two dice fit no box once that is so (`certain_turn_end` of `state`)."""
    end = certain_turn_end(state)
    if end is None:
        return ""
    if who is None and end is EndReason.SOLO_UNUSED_DICE:
        return "Last turn: two dice fit no box, so the game ends once you are done crossing"
    if who is None:
        return "Last turn: the game ends once everyone is done crossing"
    verb = "is" if count == 1 else "are"
    aside = " (the host's device may tap Done crossing for them)" if host_aside else ""
    return f"No roll yet: the game ends after this turn, once {who} {verb} done crossing{aside}"


# the start page's words for the options
OPTIONS = {
    "first_player": OptionText(
        "Who rolls first", "The player who starts; the others follow clockwise in seat order."
    ),
    "colours": OptionText(
        "Dice colours, top row first",
        "Your six dice's colours in the order of the sheet's rows; change them only if your "
        "set differs.",
        more=True,
    ),
    "sheets": OptionText(
        "Score sheet per player",
        "A letter A-L picks one of the built-in sheets; every player needs a different one.",
        more=True,
        per_seat=True,
        # a custom sheet's name goes with its rows, which a game record carries (not typed here)
        keys=(("letter", "Sheet letter"),),
    ),
    "custom_sheets_may_repeat": OptionText(
        "Custom sheets may repeat another player's",
        "Off: everyone needs a different sheet (the rulebook); on: two may share a transcribed "
        "one.",
        more=True,
    ),
}
