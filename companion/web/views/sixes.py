"""The Sixes page (rulebook shared/rules/sixes.txt, decisions in companion/rules/sixes.py):
the pot, every purse, the number up, the roller, who is in the betting, the last roll and
how the last turn ended; a big POUND button on every other player's device while the
table-pound is open, and the roller's Pass / Go on / End game from the engine's legal
moves.

Presentation only. The engine's `legal_moves` says what is legal; the page never judges a
pound race: the button sends `Pound` and the engine accepts the first pound and refuses the
rest ("someone else pounded first ..."). The engine's Turn declares the race and that the
call goes on after the winning pound, so a tap drawn anywhere in the call is judged by the
rules rather than refused as a stale view. After the first pound the button stays until
the dice are rolled, so a late pound still reaches the engine and the player reads why it
lost. (`data-race` on the button only tells table.js not to resend a lost tap.) A greyed
button says why the engine would refuse it (a purse that cannot cover the bets to 6) in the
engine's own words (`SheetInput.refusal`), before anyone taps it.
"""

from __future__ import annotations

from typing import Any

from companion.rules.base import Die, Move, Rejection
from companion.rules.sixes import (
    LAST_NUMBER,
    EndGame,
    GoOn,
    Pass,
    Pound,
    State,
    Step,
    TurnEnd,
    TurnResult,
    bets_to_six,
)
from companion.web.views import OptionText, SheetInput, colour_class, for_display

TEMPLATE = "games/sixes.html"
# the end card writes what each player won or lost as the purses table does: "+470", "−150"
SIGNED_ENTRIES = frozenset({"won/lost"})


def sheet(inp: SheetInput) -> dict[str, Any]:
    """One seat's view of the Sixes table: its actions first (POUND, or the roller's
    buttons), then the shared table (pot, number up, purses, last roll, last turn)."""
    state: State = inp.state
    names = inp.seat_names(len(inp.state.purses))
    seat = inp.seat
    over = state.step is Step.OVER
    is_roller = not over and seat == state.roller
    drawn: list[str] = []

    pound: dict[str, Any] | None = None
    # The pound window: open in step POUND; in step ROLL it has been won, and the button
    # stays so that a late pound reaches the engine and hears why it lost.
    if not over and not is_roller and state.step in (Step.POUND, Step.ROLL):
        pound_move = Pound(player=seat)
        attr = inp.move_attr(pound_move)
        legal = inp.is_legal(pound_move)
        if legal and attr:
            drawn.append(attr)
        if attr is not None:
            pound = {
                "move": attr,
                "legal": legal,
                "open": state.step is Step.POUND,
                "hint": _pound_hint(state, seat, names, None if legal else inp.refusal(pound_move)),
            }

    # The roller's choices, straight from the engine's legal moves (state-aware labels).
    actions: list[dict[str, str]] = []
    for move in inp.legal:
        if isinstance(move, Pound):
            continue
        attr = inp.move_attr(move)
        if attr is None:
            continue
        action = {"kind": move.kind, "label": _label(move, state), "move": attr}
        if isinstance(move, EndGame):  # final for everyone: asks once, as Sixis' ending does
            action["confirm"] = "This ends the game for everyone: tap again to end it"
        actions.append(action)
        drawn.append(attr)

    return {
        "step": state.step.value,
        "is_roller": is_roller,
        "pound": pound,
        "actions": actions,
        "note": _note(state, seat, names, is_roller, inp.markable),
        "status": _status(state, seat),
        "table": _table(state, names, seat),
        "drawn_moves": drawn,
        "buttons": [],
    }


def describe(move: Move) -> str:
    """Button label of a Sixes move where no state is at hand (generic buttons, history)."""
    if isinstance(move, Pound):
        # in sentences (the log, the undo button: "Undo pound the table"), not the
        # button's shouted POUND
        return "Pound the table"
    if isinstance(move, Pass):
        return "Pass (share the pot)"
    if isinstance(move, GoOn):
        return "Go on (call the next number)"
    if isinstance(move, EndGame):
        return "End the game"
    return ""


def current_dice(state: State) -> tuple[Die, ...]:
    """The banner shows the last roll (it stays until the next roll)."""
    return state.last_roll


# -- pieces of the page ------------------------------------------------------------------


def _label(move: Move, state: State) -> str:
    if isinstance(move, GoOn):
        return f"Go on: call {state.number_up + 1}"
    if isinstance(move, Pass) and not state.betting:
        # the roller is the only sharer: the whole pot goes back to them
        return f"Pass: take the pot back ({state.pot})"
    if isinstance(move, Pass):
        return f"Pass: share the pot ({state.pot})"
    if isinstance(move, EndGame):
        return "End the game here"
    return describe(move)


def _pound_hint(state: State, seat: int, names: list[str], refusal: Rejection | None) -> str:
    if state.step is Step.ROLL and state.pounded_by is not None:
        if state.pounded_by == seat:
            return "You won this table-pound"
        return f"{names[state.pounded_by]} won this table-pound"
    if refusal is not None:
        # why this greyed button would be refused (a purse that cannot cover the bets to
        # 6), in the engine's words, before a tap: the tap still sends it
        return for_display(refusal.message, names)
    if seat in state.betting:
        return f"Pound to shut newcomers out on\u00a0{state.number_up}"
    # a no-break space keeps the number with its words on a narrow button
    return f"First pound after the call of\u00a0{state.number_up} wins"


def _note(state: State, seat: int, names: list[str], is_roller: bool, markable: bool) -> str:
    """A line for this seat about what happens now (plain words, no rule checks)."""
    roller = names[state.roller]
    if state.step is Step.OVER:
        return ""
    if state.step is Step.POUND:
        if is_roller:
            return f"You called {state.number_up}. Roll when the table-pound is over."
        return "" if markable else f"{roller} called {state.number_up}: the table-pound is open"
    if state.step is Step.ROLL:
        return "Roll the dice." if is_roller else f"{roller} rolls the dice."
    if is_roller:
        return f"Safe roll: {state.number_up} did not show. Pass or go on?"
    return f"Safe roll: {roller} passes or goes on."


def _status(state: State, seat: int) -> list[dict[str, str]]:
    """Text tags for this seat (names, not colours alone, tell them apart)."""
    tags = []  # "rolling" is in the sheet's header already (generic)
    if seat in state.betting:
        tags.append({"kind": "betting", "text": "in the betting"})
    if state.pounded_by == seat:
        tags.append({"kind": "pounded", "text": "won the pound"})
    if seat in state.skipped:
        tags.append({"kind": "skipped", "text": "skipped (no starter pot)"})
    return tags


def _table(state: State, names: list[str], viewer_seat: int) -> dict[str, Any]:
    """The shared part: number up, pot, roller, betting, purses, last roll, last turn."""
    over = state.step is Step.OVER
    purses = []
    for seat, purse in enumerate(state.purses):
        purses.append(
            {
                "seat": seat,
                "name": names[seat],
                "purse": purse,
                "change": purse - state.start_purses[seat],
                "roller": not over and seat == state.roller,
                "betting": seat in state.betting,
                "pounded": state.pounded_by == seat,
                "skipped": seat in state.skipped,
                "me": seat == viewer_seat,
            }
        )
    return {
        "over": over,
        "number_up": state.number_up,
        "last_number": LAST_NUMBER,
        "bet": state.number_up * state.multiplier,
        "newcomer_cost": bets_to_six(state.number_up, state.multiplier),
        "pot": state.pot,
        "roller": names[state.roller],
        "betting": [names[s] for s in state.betting],
        "pounded_by": names[state.pounded_by] if state.pounded_by is not None else None,
        "multiplier": state.multiplier,
        "starter_pot": state.starter_pot,
        "turn_number": min(state.rollers_done + 1, state.rollers),
        "rollers": state.rollers,
        "purses": purses,
        "last_roll": [
            {"colour": d.colour, "value": d.value, "css": colour_class(d.colour)}
            for d in state.last_roll
        ],
        "last_roll_by": _last_roll_by(state, names),
        "last_turn": _last_turn(state.last_turn, names),
        "skipped": [names[s] for s in state.skipped],
    }


def _last_roll_by(state: State, names: list[str]) -> str:
    """Whose roll the last roll was, and for which number: drawn above the last turn's
    line, a new roller's first roll read as the roll that ended the turn before ("" for a
    state stored before the engine said whose it was)."""
    if state.last_roller is None:
        return ""
    return f"{names[state.last_roller]}'s roll on the call of {state.last_roll_number_up}"


def _last_turn(end: TurnEnd | None, names: list[str]) -> dict[str, Any] | None:
    """How the last roller's turn ended, in words, and who got what of the pot."""
    if end is None:
        return None
    roller = names[end.roller]
    shares = [{"name": names[s], "coins": c} for s, c in zip(end.sharers, end.shares, strict=True)]
    if end.result is TurnResult.WIN and end.number_up < 6:
        # before 6 only double 6s win: "won on 1" read as if a 1 had won
        text = f"{roller} rolled double 6s on {end.number_up} and took the pot of {end.pot}"
    elif end.result is TurnResult.WIN:
        text = f"{roller} won on {end.number_up} and took the pot of {end.pot}"
    elif end.result is TurnResult.LOSS:
        if tuple(end.sharers) == (end.roller,):
            text = f"{roller} lost on {end.number_up}; nobody was betting: the pot went back"
        else:
            text = f"{roller} lost on {end.number_up}; the pot of {end.pot} went to the betters"
    elif end.result is TurnResult.PASS and tuple(end.sharers) == (end.roller,):
        text = f"{roller} passed after {end.number_up}; nobody was betting: the pot went back"
    elif end.result is TurnResult.PASS:
        text = f"{roller} passed after {end.number_up}; the pot of {end.pot} was shared"
    else:
        text = f"{roller} ended the game; the starter pot went back"
    return {"result": end.result.value, "text": text, "shares": shares}


# the start page's words for the options
OPTIONS = {
    "multiplier": OptionText(
        "Coins per bet",
        "A bet on number n costs n times this; pots, purses and the starter pot scale with it.",
    ),
    "starter_factor": OptionText(
        "Starter pot, in bets",
        "Each roller opens the pot with this many times the coins per bet.",
        more=True,
    ),
    "purses": OptionText(
        "Starting coins per player",
        "Each player's purse at the start, in seat order, comma separated.",
        more=True,
        empty="50 bets' worth each",
        per_seat=True,
    ),
    "rollers": OptionText(
        "Roller turns before the end",
        "How many turns as roller the game lasts.",
        more=True,
        empty="two rounds around the table",
    ),
    "dice": OptionText("Colours of the two dice", "What the camera looks for.", more=True),
    "first_player": OptionText(
        "Who rolls first", "The first roller; then the dice move clockwise, one roller a turn."
    ),
}
