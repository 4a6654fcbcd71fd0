"""The Sixis table (rulebook shared/rules/sixis.txt; house decisions and the card list in
companion/rules/sixis.py): the goal cards laid out around the Sixis card as on the table
(2 players: a line of four above and below it; 3 players: three arms; 4 players: an X), each
card with its face-up side in words (name, points, "blue - easy" / "red - hard") besides its
colour and pattern; the seats between the arms with their dice colour, saved dice and the
cards they took this round; the active player's dice, their choices and the dice to save;
points per round and totals (team totals with team play).

Presentation only. In the card step (the engine offers this seat a take, a flip or
"take no card") every card on the table carries the move a tap sends (take; a blue card
also a flip control), whether or not it is legal, so an illegal tap is answered with the
engine's reason ("Full House needs three of one value and two of another"). In the other
steps (keep or roll, save, hand on the opening) the cards carry none: a dashed "flip" on
every card that only ever answers "not now" says nothing the player can use. `legal`
comes only from the engine's `legal_moves`.

Saving dice is one move with a list of values. Rather than a button per subset (up to 64),
the six dice are toggles (`data-toggle-value`) and one Save button (`data-move-collect=
"values"`) sends `SaveDice` with the values of the pressed toggles (a generic table.js hook,
docs/web-views.md section 3); every legal save is one choice of toggles away.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from companion.rules.base import Die, Move
from companion.rules.sixis import (
    CARDS,
    DICE_PER_PLAYER,
    NOT_TAKEN,
    SIXIS,
    SIXIS_SIDE,
    TABLE_LAYOUTS,
    CardSide,
    Decline,
    EndRound,
    FlipCard,
    KeepSaved,
    RollAll,
    RoundResult,
    SaveDice,
    Starter,
    State,
    Step,
    TakeCard,
    round_points,
    seat_colours,
    side_of,
    teams,
)
from companion.web.views import OptionText, SheetInput, colour_class

TEMPLATE = "games/sixis.html"

# Bearings (degrees clockwise from the top of the table, TABLE_LAYOUTS) to the eight cells
# around the Sixis card in the page's 3 x 3 grid.
COMPASS = ("n", "ne", "e", "se", "s", "sw", "w", "nw")
# A pattern per side so that colour-blind players tell them apart besides the tag's words.
SIDE_PATTERN = {False: "waves", True: "stripes"}
SIDE_TAG = {False: "blue · easy", True: "red · hard"}
# Why a round ended (RoundResult.ending), in words; {name}: the seat whose turn ended it.
ROUND_ENDINGS = {
    "cards_gone": "no card left in {name}'s reach",
    "sixis_taken": "{name} took the Sixis card",
    "ended_by_player": "{name} ended the round",
}
# ... where the engine did not say whose turn it was (a state stored before it did), or
# with two players, who both reach every card (a two-player round ends with no card left
# only in a game played before that end became the player's choice, `EndRound`)
ROUND_ENDINGS_UNNAMED = {
    "cards_gone": "no card left",
    "sixis_taken": "the Sixis card was taken",
    "ended_by_player": "a player ended the round",
}


def sheet(inp: SheetInput) -> dict[str, Any]:
    """The table seen from `inp.seat`: the layout with the cards this seat reaches marked,
    and, while this seat may act on a device that may mark it, every card's move, the
    turn's choices and the dice to save."""
    state: State = inp.state
    names = inp.seat_names(inp.state.options.players)
    over = state.step is Step.OVER
    acting = inp.markable and inp.may_act and not over
    on_cards = acting and any(isinstance(m, TakeCard | FlipCard | Decline) for m in inp.legal)
    layout = TABLE_LAYOUTS[state.options.players]
    reach = set(layout.reachable_slots(inp.seat))
    drawn: list[str] = []

    arms = []
    for arm, slots in enumerate(layout.arms):
        cards = [
            _card(inp, state, slot, step, slot in reach, on_cards, names, drawn)
            for step, slot in enumerate(slots)
        ]
        arms.append({"arm": arm, "area": _area(layout.arm_bearings[arm]), "cards": cards})
    sixis = _sixis_card(inp, on_cards, drawn, _sixis_taker(state, names))

    actions, ending = _turn_buttons(inp, state, drawn) if acting else ([], [])
    save = None
    if acting and state.step in (Step.SAVE, Step.START_SAVE):
        save = _save_panel(inp, state, drawn)

    return {
        "shape": layout.shape,
        "players": state.options.players,
        "step": state.step.value,
        "over": over,
        "acting": acting,
        "round": state.round,
        "round_text": _round_text(state),
        "arms": arms,
        "far_cards": not over and _open_card_out_of_reach(state, reach),
        "sixis": sixis,
        "seats": _seats(state, names, inp.seat, layout.seat_bearings),
        "dice": _dice(state),
        "note": _note(
            state,
            names,
            acting,
            bool(ending) or _others_see_end_choice(inp),
            own_roll=inp.markable and inp.seat == state.active,
        ),
        "actions": actions,
        "ending": ending,
        "save": save,
        "scores": _scores(state, names),
        "buttons": [],
        "drawn_moves": drawn,
    }


def _open_card_out_of_reach(state: State, reach: set[int]) -> bool:
    """Whether a card not yet taken lies out of this seat's reach: the sheet then says what
    its dashed cards mean."""
    return any(
        taker == NOT_TAKEN and slot not in reach for slot, taker in enumerate(state.taken_by)
    )


def describe_in(state: State, move: Move) -> str:
    """A take named by the side the card shows on the table in `state` (the undo button,
    the news of an undo): "Take Three of a Kind", not both sides; else `describe`."""
    if isinstance(move, TakeCard) and move.card in state.cards:
        card = CARDS.get(move.card)
        if card is not None:
            return f"Take {card.side(state.red[state.cards.index(move.card)]).name}"
    return describe(move)


def describe(move: Move) -> str:
    """Button label of a Sixis move where no state is at hand (generic buttons, history)."""
    if isinstance(move, TakeCard):
        if move.card == SIXIS:
            return "Take the Sixis card"
        card = CARDS.get(move.card)
        return f"Take {card.blue.name} / {card.red.name}" if card else f"Take {move.card}"
    if isinstance(move, FlipCard):
        card = CARDS.get(move.card)
        return f"Flip {card.blue.name} to {card.red.name}" if card else f"Flip {move.card}"
    if isinstance(move, SaveDice):
        return "Save " + " ".join(map(str, move.values)) if move.values else "Save no dice"
    if isinstance(move, KeepSaved):
        return "Keep the saved dice"
    if isinstance(move, RollAll):
        return "Roll all six"
    if isinstance(move, EndRound):
        return "End the round"
    if isinstance(move, Starter):
        return f"Player {move.seat + 1} opens this round instead"
    if isinstance(move, Decline):
        return "Take no card"
    return ""


def _turn_buttons(
    inp: SheetInput, state: State, drawn: list[str]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The turn's legal buttons (keep, roll all, take no card) and the end of the round."""
    actions: list[dict[str, str]] = []
    ending: list[dict[str, str]] = []
    for move in inp.legal:
        if isinstance(move, KeepSaved | RollAll | Decline | EndRound):
            attr = inp.move_attr(move)
            if attr is None:
                continue
            item = {"kind": move.kind, "label": _label(move, state), "move": attr}
            if isinstance(move, EndRound) and inp.ends_game(move):
                # a drastic action asks once, as ending a game by the host does
                item["confirm"] = "This ends the game: tap again to end it"
            (ending if isinstance(move, EndRound) else actions).append(item)
            drawn.append(attr)
    return actions, ending


def current_dice(state: State) -> tuple[Die, ...]:
    """The banner shows the active player's six dice once they are rolled."""
    return tuple(_dice_of(state))


# -- pieces of the page ------------------------------------------------------------------


def _area(bearing: int) -> str:
    """The grid cell for a bearing: the nearest of the eight compass points."""
    return COMPASS[round(bearing / 45) % 8]


def _side(side: CardSide, red: bool) -> dict[str, Any]:
    return {
        "name": side.name,
        "points": side.points,
        "needs": side.needs,
        "red": red,
        "colour": "red" if red else "blue",
        "tag": SIDE_TAG[red],
        "pattern": SIDE_PATTERN[red],
    }


def _control(inp: SheetInput, move: Move, acting: bool, drawn: list[str]) -> dict[str, Any] | None:
    """A tappable control for `move` (None when this viewer may not act now)."""
    attr = inp.move_attr(move) if acting else None
    if attr is None:
        return None
    legal = inp.is_legal(move)
    if legal:
        drawn.append(attr)
    return {"move": attr, "legal": legal}


def _card(
    inp: SheetInput,
    state: State,
    slot: int,
    step: int,
    in_reach: bool,
    acting: bool,
    names: list[str],
    drawn: list[str],
) -> dict[str, Any]:
    card_id, red, taker = state.cards[slot], state.red[slot], state.taken_by[slot]
    card = CARDS[card_id]
    face = _side(card.side(red), red)
    taken = taker != NOT_TAKEN
    take = flip = None
    if not taken:
        take = _control(inp, TakeCard(inp.seat, card_id), acting, drawn)
        if not red:
            flip = _control(inp, FlipCard(inp.seat, card_id), acting, drawn)
    reach_words = "" if in_reach else ", out of your reach"
    if taken:
        aria = f"{face['name']}, taken by {names[taker]}"
    else:
        aria = f"{face['name']}, {face['tag']}, {face['points']} points{reach_words}"
    return {
        "slot": slot,
        "step": step,
        "card": card_id,
        "face": face,
        "other": None if red else _side(card.red, True),
        "taken": taken,
        "taken_by": names[taker] if taken else None,
        "reach": in_reach,
        "take": take,
        "flip": flip,
        "aria": aria,
    }


def _sixis_taker(state: State, names: list[str]) -> str | None:
    """Who took the Sixis card, while the board shows the round it ended: only the final
    board (a round that goes on is dealt afresh, with the Sixis card back in the middle)."""
    if state.step is not Step.OVER or not state.history:
        return None
    last = state.history[-1]
    if last.ending != "sixis_taken" or last.round != state.round or last.ended_by is None:
        return None
    return names[last.ended_by]


def _sixis_card(
    inp: SheetInput, acting: bool, drawn: list[str], taken_by: str | None
) -> dict[str, Any]:
    face = _side(SIXIS_SIDE, True)
    face["tag"] = "red · Sixis"
    if taken_by is not None:
        aria = f"Sixis, taken by {taken_by}"
    else:
        aria = f"Sixis card, {SIXIS_SIDE.points} points, needs {SIXIS_SIDE.needs}"
    return {
        "card": SIXIS,
        "face": face,
        "take": None if taken_by else _control(inp, TakeCard(inp.seat, SIXIS), acting, drawn),
        "taken_by": taken_by,
        "aria": aria,
    }


def _die(colour: str, value: int) -> dict[str, Any]:
    return {"colour": colour, "value": value, "css": colour_class(colour)}


def _dice_of(state: State) -> list[Die]:
    if state.active < 0 or not state.dice:
        return []
    colour = seat_colours(state.options)[state.active]
    return [Die(colour, value) for value in state.dice]


def _dice(state: State) -> list[dict[str, Any]]:
    return [_die(d.colour, d.value) for d in _dice_of(state)]


def _seats(
    state: State, names: list[str], viewer_seat: int, bearings: tuple[int, ...]
) -> list[dict[str, Any]]:
    """Each seat at its place at the table: dice colour, saved dice, cards taken this round."""
    colours = seat_colours(state.options)
    over = state.step is Step.OVER
    seats = []
    for seat, bearing in enumerate(bearings):
        taken = [
            _side(side_of(card, red), red)
            for card, red, taker in zip(state.cards, state.red, state.taken_by, strict=True)
            if taker == seat and not over
        ]
        seats.append(
            {
                "seat": seat,
                "name": names[seat],
                "area": _area(bearing),
                "colour": colours[seat],
                "css": colour_class(colours[seat]),
                "me": seat == viewer_seat,
                "active": not over and seat == state.active,
                "saved": [_die(colours[seat], v) for v in ([] if over else state.saved[seat])],
                "taken": taken,
            }
        )
    return seats


def _label(move: Move, state: State) -> str:
    """State-aware labels of the turn's buttons."""
    saved = state.saved[state.active]
    if isinstance(move, KeepSaved):
        kept = " ".join(map(str, saved))
        left = DICE_PER_PLAYER - len(saved)
        if left == 0:
            return f"Keep all six saved dice ({kept})"
        return f"Keep {kept}, roll {left}"
    if isinstance(move, RollAll):
        return "Roll all six" if saved else "Play on: roll all six"
    if isinstance(move, Decline):
        return "Take no card"
    return describe(move)


def _save_panel(inp: SheetInput, state: State, drawn: list[str]) -> dict[str, Any] | None:
    """The die toggles and the Save button (which sends the pressed values)."""
    base = SaveDice(inp.seat, ())
    attr = inp.move_attr(base)
    if attr is None:
        return None
    saves = [m for m in inp.legal if isinstance(m, SaveDice)]
    drawn.extend(a for a in (inp.move_attr(m) for m in saves) if a)
    limit = max((len(m.values) for m in saves), default=0)
    colour = seat_colours(state.options)[state.active]
    return {
        "move": attr,
        "field": "values",
        "dice": [_die(colour, v) for v in state.dice],
        # the advanced start's limit, as the engine's own list of saves shows it
        "limit": limit if limit < len(state.dice) else None,
        "legal": bool(saves),
    }


def _round_text(state: State) -> str:
    o = state.options
    if state.step is Step.OVER:
        played = len(state.history)
        return f"{played} round{'s' if played != 1 else ''} played"
    if o.target > 0:
        return f"Round {state.round} · play to {o.target} points"
    return f"Round {state.round} of {o.rounds}"


def _card_name(state: State, card: str) -> str:
    if card == SIXIS:
        return SIXIS_SIDE.name
    slot = state.cards.index(card)
    return side_of(card, state.red[slot]).name


def _note(
    state: State, names: list[str], acting: bool, may_end: bool = False, own_roll: bool = False
) -> str:
    """A line about what happens now, for this seat (plain words, no rule checks; `may_end`:
    the engine offers this seat the end of the round; `own_roll`: this device marks the
    sheet of the player whose dice are due, and is asked in the second person, as every
    other step asks the player acting: nobody acts while dice are due, so `acting` is
    False then)."""
    step = state.step
    if step is Step.OVER:
        return "The game is over."
    name = names[state.active]
    if step is Step.START and may_end:
        return _end_choice_note(state, name if not acting else None)
    if step is Step.ROLL:
        count = DICE_PER_PLAYER - len(state.saved[state.active])
        if not own_roll:
            return f"{name}: roll {count} dice."
        if count < DICE_PER_PLAYER:
            return f"Your turn: roll the {count} dice you did not save."
        return f"Your turn: roll your {count} dice."
    if step is Step.START_ROLL and own_roll:
        return "Advanced start: roll your six dice; you may save some for your first turn."
    if step is Step.SAVE:
        did = _what_was_done(state)
        if acting:
            return f"You {did}. Tap the dice to keep for your next turn, then Save."
        return f"{name} {did}; now saving dice."
    mine, theirs = _STEP_NOTES[step]
    return mine if acting and mine else theirs.format(name=name)


def _others_see_end_choice(inp: SheetInput) -> bool:
    """Whether the engine offers the active player (not this viewer) the end of the round
    now (two players, the start of a turn): the others' note says so."""
    state: State = inp.state
    if state.step is not Step.START or inp.seat == state.active:
        return False
    return EndRound(state.active) in inp.game.legal_moves(state, state.active)


def _end_choice_note(state: State, other: str | None) -> str:
    """The two-player start of a turn where the player may end the round (rulebook: "you
    may end the round, but you do not have to"), also with no card left; `other`: the
    active player's name, for everyone else."""
    gone = all(taker != NOT_TAKEN for taker in state.taken_by)
    if other is not None:
        why = ": every card is gone but the Sixis card" if gone else ""
        return f"{other}'s turn: playing on or ending the round{why}."
    start = "keep your saved dice or roll all six" if state.saved[state.active] else "roll all six"
    if gone:
        return (
            f"Your turn: every card is gone but the Sixis card. End the round, or {start} "
            "and play on for the Sixis card: with two players you choose."
        )
    return (
        f"Your turn: {start}, or end the round: with two players you may, once every "
        "card left is red or one side of the Sixis card is empty."
    )


# What each step's note says to the player acting (None: the same as to everyone) and to
# everyone else ({name}: the active player).
_STEP_NOTES: dict[Step, tuple[str | None, str]] = {
    Step.START_ROLL: (None, "Advanced start: {name} rolls six dice."),
    Step.START_SAVE: (
        "Advanced start: tap the dice to keep for your first turn, then Save.",
        "Advanced start: {name} saves dice for the first turn.",
    ),
    Step.START: (
        "Your turn: keep your saved dice or roll all six.",
        "{name}'s turn: keeping the saved dice or rolling all six.",
    ),
    Step.ACT: (
        "Take a card your dice match, flip a blue card to red, or take no card.",
        "{name} takes a card, flips one, or takes none.",
    ),
}


def _what_was_done(state: State) -> str:
    """What the active player did with the cards this turn, in words."""
    done = state.turn_action
    if done == "took":
        return f"took {_card_name(state, state.turn_card)}"
    if done == "flipped":
        card = CARDS[state.turn_card]
        return f"flipped {card.blue.name} to {card.red.name}"
    if done == "declined":
        return "took no card"
    return "matched no card in reach"


def _scores(state: State, names: list[str]) -> dict[str, Any]:
    """Points per player per round and the totals, with team play also per team, as the
    engine counts them (`round_points`; a seat's total there is its own cards', the
    engine's `scores` count the team's for each partner)."""
    rounds = round_points(state)
    rows = [
        {
            "seat": seat,
            "name": names[seat],
            "points": [r.seats[seat] for r in rounds],
            "total": sum(r.seats[seat] for r in rounds),
        }
        for seat in range(state.options.players)
    ]
    teams_rows = [
        {
            "name": " + ".join(names[s] for s in members),
            "points": [r.teams[index] for r in rounds],
            "total": sum(r.teams[index] for r in rounds),
        }
        for index, members in enumerate(teams(state.options))
    ]
    endings = {r.round: round_ending(r, names) for r in state.history}
    return {
        "rounds": [{"round": r.round, "ending": endings.get(r.round, "playing")} for r in rounds],
        "rows": rows,
        "teams": teams_rows,
    }


def round_ending(result: RoundResult, names: Sequence[str]) -> str:
    """Why a round ended, in words ("Bob took the Sixis card")."""
    if result.ending not in ROUND_ENDINGS:
        return result.ending.replace("_", " ")
    seat = result.ended_by
    if seat is None or (result.ending == "cards_gone" and len(names) == 2):
        return ROUND_ENDINGS_UNNAMED[result.ending]  # two players both reach every card
    return ROUND_ENDINGS[result.ending].format(name=names[seat])


def final_rounds(state: State, names: Sequence[str]) -> list[dict[str, object]]:
    """The end card's account of each round, a line per player (a column per card taken
    was mostly dashes on a phone, and did not say why the round ended): why it ended, and
    each player's cards and points of it, as the engine counts them (`round_points`). A
    round the host's end cut short is there too, with the cards taken until then."""
    rounds: list[tuple[int, str, tuple[tuple[int, str, bool], ...]]] = [
        (r.round, round_ending(r, names), tuple((c.seat, c.card, c.red) for c in r.claims))
        for r in state.history
    ]
    if state.step is not Step.OVER:  # the host ended the game during this round
        taken = zip(state.taken_by, state.cards, state.red, strict=True)
        claims = tuple((seat, card, red) for seat, card, red in taken if seat != NOT_TAKEN)
        rounds.append((state.round, "not played to its end", claims))
    points = {r.round: r.seats for r in round_points(state)}
    return [
        {
            "round": round_no,
            "ending": ending,
            "players": [
                {
                    "seat": seat,
                    "name": names[seat],
                    "cards": [_side(side_of(c, red), red) for s, c, red in claims if s == seat],
                    "points": points[round_no][seat],
                }
                for seat in range(state.options.players)
            ],
        }
        for round_no, ending, claims in rounds
    ]


# the start page's words for the options
OPTIONS = {
    "colours": OptionText(
        "Dice colour per player",
        "Each player's dice colour, in seat order.",
        more=True,
        empty="red, blue, green, yellow",
        per_seat=True,
    ),
    "team_play": OptionText(
        "Play in teams (4 players)", "Seats 1 and 3 play together against seats 2 and 4."
    ),
    "advanced_start": OptionText(
        "Advanced start",
        "From the start roll the 2nd, 3rd and 4th players may save up to 2, 3 and 4 dice.",
    ),
    "rounds": OptionText("Rounds to play", "How many rounds (when no target score is set)."),
    "target": OptionText(
        "Target score",
        "Play until someone has this many points at the end of a round; 0: play the rounds.",
        more=True,
    ),
    "first_player": OptionText(
        "Who starts round 1", "Later rounds start with the next player clockwise."
    ),
    "deal_seed": OptionText(
        "Deal number",
        "Picks the cards on the table; a fresh one every game, type an old one to replay a deal.",
        more=True,
    ),
    "advanced_start_every_round": OptionText(
        "Advanced start in every round",
        "Off: only round 1 has it, as the rulebook says (after the roll for the first player).",
        more=True,
    ),
    "no_card_left_ends_round": OptionText(
        "Two players: the round ends once no card is left",
        "Off: the player may end it or play on for the Sixis card (the rulebook); on: it ends "
        "by itself.",
        more=True,
    ),
    "layouts": OptionText(
        "Cards dealt (to copy a real deal)",
        'Each round\'s cards in slot order, written like [["ones", "twos", ...], ...]; '
        "empty: dealt.",
        more=True,
        empty="dealt by the deal number",
    ),
}
