"""View models: turn a table's snapshot into the context a template draws. Presentation only:
what is legal comes from the engine's `legal_moves`, never from here (STYLE.md principle 11).

Each game has a module `companion/web/views/<game>.py` exposing

- ``TEMPLATE``: the template that defines the Jinja macro ``sheet(s)`` drawing one sheet,
  e.g. ``"games/qwixx.html"``;
- ``sheet(inp: SheetInput) -> dict``: the context of one player's sheet. Every box a player
  could tap carries ``move`` (the move JSON it sends, from `move_attr`) when the viewer may
  mark this sheet, and ``legal`` when that move is in `inp.legal`;
- optionally ``current_dice(state) -> tuple[Die, ...]`` (default: ``state.dice``),
  ``describe(move) -> str`` for button labels, ``dice_out(state) -> set[str]``: the
  colours whose die left the game (Qwixx's locked rows), dimmed in the roll banner, and
  ``final_rounds(state, players) -> list[dict]``: the end card's account round by round
  in place of its column per breakdown entry (Sixis: why each round ended, each player's
  cards and points), and ``SIGNED_ENTRIES``: the breakdown labels that are amounts won
  or lost, written "+470" / "−150" on the end card as on the sheet (Sixes' "won/lost").

A game without a module falls back to `generic` (its legal moves as buttons). The recipe
for adding a game page is docs/web-views.md.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

from companion.rules.base import COLOURS, Die, Game, Move, Outcome, Rejection, Roll, Score, Turn
from companion.rules.session import HOST_ENTERS_THE_ROLL, HOST_UNDOES_BACK, HOST_UNDOES_OTHERS
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.table.words import (
    HOST_ENDED,
    SERVER_ENDED,
    YOU,
    for_display,
    names_of,
    score_text,
    with_names,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SheetInput:
    """What a game's `sheet()` gets for one seat.

    `legal`: that seat's legal moves now, empty unless the viewer may mark the sheet;
    `markable`: the viewer may tap this sheet (own seat, or the host's table view)."""

    game: Game[Any, Any]
    state: Any
    seat: int
    name: str
    turn: Turn
    score: Score
    legal: tuple[Move, ...]
    markable: bool
    outcome: Outcome | None
    players: tuple[str, ...] = ()  # every seat's name, for sheets that show the others
    legal_set: frozenset[Move] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # membership tests per box: a set, built once per sheet
        object.__setattr__(self, "legal_set", frozenset(self.legal))

    def move_attr(self, move: Move) -> str | None:
        """The JSON a box sends for `move`, or None when the viewer may not mark it."""
        return move_attr(self.game, move) if self.markable else None

    def is_legal(self, move: Move) -> bool:
        return move in self.legal_set

    def seat_names(self, count: int) -> list[str]:
        """A name per seat of the `count` at this table: `players` where the web layer gave
        them (it always does; tests may not), this sheet's own `name`, and "Player 2" (the
        engine's wording) for any other."""
        names = [f"Player {seat + 1}" for seat in range(count)]
        names[: len(self.players)] = [str(name) for name in self.players[:count]]
        if 0 <= self.seat < count:
            names[self.seat] = self.name
        return names

    def penalty(self, move: Move) -> int:
        """The penalty `move` would mark this seat now, as the engine says it (Qwixx's pass
        after crossing nothing: -5), 0 when it marks none or the engine refuses the move.
        The view labels a costly button with it; the rules stay in the engine."""
        if self.refusal(move) is not None:
            return 0
        return int(self.game.penalty(self.state, move))

    def refusal(self, move: Move) -> Rejection | None:
        """The engine's refusal of `move` now, or None when it would accept it: a view shows
        why a greyed button would be refused before anyone taps it, in the rules' words."""
        try:
            self.game.check(self.state, move)
        except Rejection as rejection:
            return rejection
        return None

    def ends_game(self, move: Move) -> bool:
        """Whether `move` would end the whole game, as the engine judges the state after it
        (Sixis' last "End the round"): the view makes such a button ask once."""
        try:
            after = self.game.play(self.state, move)
        except Rejection:
            return False
        return self.game.outcome(after) is not None

    @property
    def may_act(self) -> bool:
        """This seat is among those who may act now."""
        return self.seat in self.turn.players


@dataclass(frozen=True, slots=True)
class OptionText:
    """How the start page presents one of a game's options (a view module's `OPTIONS`):
    a label a player understands, a one-line help, whether it waits under "more options"
    (most tables never change it), and what leaving it empty means."""

    label: str
    help: str
    more: bool = False
    empty: str = ""
    # a list with one value per seat, in seat order (a refusal names the player)
    per_seat: bool = False
    # a list of records: the keys the start page offers, each with its label (empty: all)
    keys: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class OptionField:
    """One option as the start page draws it (see option_fields)."""

    name: str
    label: str
    help: str
    more: bool
    empty: str
    kind: str
    keys: tuple[tuple[str, str], ...] = ()


def option_fields(game_name: str, options_type: type) -> list[OptionField]:
    """The options of game `game_name` (its `Options` dataclass `options_type`) in their
    dataclass order, but `players`, which the start page asks for itself: each with its
    text from the game view's `OPTIONS` and the kind of input its type needs: bool, int,
    str, seat, ints, strs, optional_int, records or json."""
    texts: dict[str, OptionText] = getattr(view_for(game_name), "OPTIONS", {})
    hints = typing.get_type_hints(options_type)
    fields = []
    for option in dataclasses.fields(options_type):
        if option.name == "players":
            continue
        text = texts.get(option.name) or OptionText(option.name.replace("_", " "), "")
        kind = "seat" if option.name == "first_player" else _kind(hints[option.name])
        fields.append(
            OptionField(option.name, text.label, text.help, text.more, text.empty, kind, text.keys)
        )
    return fields


def _kind(hint: object) -> str:
    """The input an option's type needs (see option_fields)."""
    if hint in (bool, int, str):
        return str(getattr(hint, "__name__", hint))
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and args and all(a in (int, str, Ellipsis) for a in args):
        return "ints" if args[0] is int else "strs"
    if typing.get_origin(hint) is tuple and args and dataclasses.is_dataclass(args[0]):
        return "records"
    if set(args) == {int, type(None)}:
        return "optional_int"
    return "json"


def move_attr(game: Game[Any, Any], move: Move) -> str:
    """A move as compact JSON for a ``data-move`` attribute (Jinja escapes it)."""
    return _move_attr(game.name, move)


@lru_cache(maxsize=1 << 16)
def _move_attr(game_name: str, move: Move) -> str:
    # moves are frozen (hashable) values and a sheet draws the same ones after every
    # change, so each is encoded once
    from companion.rules.registry import find_game

    return json.dumps(find_game(game_name).move_to_json(move), separators=(",", ":"))


@cache
def view_for(game_name: str) -> ModuleType:
    """The view module of a game, or the generic fallback."""
    try:
        return importlib.import_module(f"companion.web.views.{game_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"companion.web.views.{game_name}":
            raise
        return importlib.import_module("companion.web.views.generic")


def describe_move(game: Game[Any, Any], move: Move, state: object = None) -> str:
    """A button label: the view's `describe_in` given the state the move meets (e.g. the
    side of a Sixis card), else its `describe`, else the move's kind and fields."""
    view = view_for(game.name)
    describe_in = getattr(view, "describe_in", None)
    if state is not None and describe_in is not None:
        text = describe_in(state, move)
        if text:
            return str(text)
    describe = getattr(view, "describe", None)
    if describe is not None:
        text = describe(move)
        if text:
            return str(text)
    fields = {k: v for k, v in game.move_to_json(move).items() if k not in ("kind", "player")}
    details = ", ".join(f"{k.replace('_', ' ')} {_plain(v)}" for k, v in fields.items())
    return f"{move.kind.replace('_', ' ')}{': ' + details if details else ''}"


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_plain(v) for v in value)
    if isinstance(value, dict):
        return " ".join(_plain(v) for v in value.values())
    return str(value)


def current_dice(game: Game[Any, Any], state: Any) -> tuple[Die, ...]:
    view = view_for(game.name)
    reader = getattr(view, "current_dice", None)
    if reader is not None:
        return tuple(reader(state))
    dice = getattr(state, "dice", ())
    return tuple(d for d in dice if isinstance(d, Die)) if isinstance(dice, tuple) else ()


def dice_out(game: Game[Any, Any], state: Any) -> set[str]:
    """Colours whose die is out of the game (the view's `dice_out`; none by default)."""
    reader = getattr(view_for(game.name), "dice_out", None)
    return set(reader(state)) if reader is not None else set()


def colour_class(colour: str) -> str:
    """CSS class of a die or row colour (unknown names get a neutral look)."""
    return f"c-{colour}" if colour in COLOURS else "c-other"


def spoken_to(text: str, players: Sequence[str], mover: int | None, reader: int | None) -> str:
    """An engine refusal as the device that made the move reads it. The engine speaks to
    the mover as "you" and names the others "player N": their names go in (`with_names`),
    and a device that acted for another seat (the host's table view, `reader` not
    `mover`) reads whose move it was first: "Cid: you have already crossed ..."."""
    named = with_names(text, players)
    if mover is not None and mover != reader and 0 <= mover < len(players):
        return f"{players[mover]}: {named}"
    return named


def breakdown_table(scores: Sequence[Score], players: Sequence[str]) -> dict[str, Any]:
    """The final breakdown as a table: one column per label any player has, in first-seen
    order (players' breakdowns differ, e.g. Sixis lists the cards each one took), and per
    player a cell for every column (None where that player has no such entry)."""
    columns: list[str] = []
    for score in scores:
        for label, _ in score.breakdown:
            if label not in columns:
                columns.append(label)
    rows = []
    for score in scores:
        points: dict[str, int] = {}
        for label, value in score.breakdown:
            points[label] = points.get(label, 0) + value
        rows.append([points.get(label) for label in columns])
    return {"columns": [with_names(c, players) for c in columns], "cells": rows}


def winners_of(snapshot: Snapshot) -> tuple[int, ...]:
    """The seats that won: the engine's outcome, or for a game the host ended before its
    end, who was ahead then by the game's own ranking and tie-breaks (`Game.winners`);
    none while the game goes on."""
    return snapshot.game.winners(snapshot.state, snapshot.ended_by_host)


def early_end_words(snapshot: Snapshot) -> str:
    """Who ended a game before its rules did: the host, or the server's own machine."""
    return SERVER_ENDED if snapshot.ended_on_server else HOST_ENDED


def turn_context(snapshot: Snapshot, me: int | None = None) -> dict[str, Any]:
    """Whose turn it is, in words, for the banner every screen shows; `me`: the seat of
    the player whose own device shows it, named "you" (words.names_of)."""
    turn = snapshot.turn
    players = snapshot.players
    step = turn.step.replace("_", " ")
    active = players[turn.active] if turn.active is not None else None
    own_roll = me is not None and me == turn.active
    roller = YOU if own_roll else active
    if snapshot.outcome is not None:
        text = "Final scores"  # the end card below says "Game over" (once is enough)
    elif snapshot.ended_by_host:
        text = early_end_words(snapshot)
    elif turn.chance and (not turn.players or (active and turn.players == (turn.active,))):
        # (a roller who may also hand the roll on, e.g. a tied Sixmix start, still rolls)
        said = f"{rolls(roller, own_roll)} the dice" if roller else "Roll the dice"
        text = said[:1].upper() + said[1:]  # "You roll ...", a name as it is written
    elif turn.players and turn.chance and roller and set(turn.players) != {turn.active}:
        # e.g. Sixes' pound: the others may act before the dice fall; the roller is not
        # "waited for" (their roll closes the step), so name them as the one who rolls
        others = names_of(players, tuple(s for s in turn.players if s != turn.active), me)
        text = f"{step.capitalize()}: waiting for {others}, or {rolls(roller, own_roll)}"
    elif turn.players:
        names = names_of(players, turn.players, me)
        own = me is not None and tuple(turn.players) == (me,)  # never by the words: a
        text = waiting_words(snapshot.game.name, turn.step, names, own)  # player may be "you"
        if turn.chance:
            text += " (or roll)"
    else:
        text = step.capitalize()
    return {
        "step": turn.step,
        "step_label": step,
        "active": turn.active,
        "active_name": active,
        "waiting": list(turn.players),
        "chance": turn.chance,
        "yours": snapshot.outcome is None and is_own_turn(turn, me),
        "text": text + _ending_note(snapshot, me),
    }


def is_own_turn(turn: Turn, me: int | None) -> bool:
    """Whether the seat `me` is to act now: one of the players waited for, or the one who
    rolls (the page reads the turn out when it comes to this player, table.js)."""
    return me is not None and (me in turn.players or (turn.chance and turn.active == me))


def _ending_note(snapshot: Snapshot, me: int | None) -> str:
    """On the device of a player to act, the game view's note of the moves that would end
    the game (Qwixx: the colour step's lock of a second row), said up front rather than
    only when the box is tapped: ". Crossing ... ends the game"; "" elsewhere."""
    note = getattr(view_for(snapshot.game.name), "ending_note", None)
    if note is None or me is None or me not in snapshot.turn.players or snapshot.finished:
        return ""
    said = str(note(snapshot.game, snapshot.state, me))
    return f". {said}" if said else ""


def rolls(roller: str, own: bool = False) -> str:
    """ "Ann rolls", or "you roll" on the roller's own device (`own`: `roller` is words.YOU)."""
    return f"{roller} {'roll' if own else 'rolls'}"


def waiting_words(game_name: str, step: str, names: str, own: bool = False) -> str:
    """The banner's words while `names` are to act in `step`: the game view's sentence
    (`waiting_text`, e.g. Sixto's "Waiting for Eve to keep this roll or re-roll all the
    dice"), else the step's name and who is waited for ("White sum: waiting for Ann");
    on the device of the one player waited for (`own`: `names` is words.YOU), "White sum:
    your turn"."""
    words = getattr(view_for(game_name), "waiting_text", None)
    said = words(step, names, own) if words is not None else None
    if said:
        return str(said)
    step_words = step.replace("_", " ").capitalize()
    return f"{step_words}: your turn" if own else f"{step_words}: waiting for {names}"


def sheet_context(snapshot: Snapshot, seat: int, viewer: Viewer) -> dict[str, Any]:
    """One seat's sheet: the game view's context plus the generic parts (name, score,
    buttons for legal moves the view does not draw as boxes)."""
    game = snapshot.game
    view = view_for(game.name)
    markable = viewer.may_mark(seat) and not snapshot.finished
    legal = tuple(game.legal_moves(snapshot.state, seat)) if markable else ()
    inp = SheetInput(
        game=game,
        state=snapshot.state,
        seat=seat,
        name=snapshot.players[seat],
        turn=snapshot.turn,
        score=snapshot.scores[seat],
        legal=legal,
        markable=markable,
        outcome=snapshot.outcome,
        players=tuple(snapshot.players),
    )
    context: dict[str, Any] = dict(view.sheet(inp))
    drawn = set(context.pop("drawn_moves", ()))
    buttons = context.setdefault("buttons", [])
    for move in legal:
        attr = move_attr(game, move)
        if attr not in drawn and not any(b.get("move") == attr for b in buttons):
            label = with_names(describe_move(game, move), snapshot.players)
            buttons.append({"label": label, "move": attr, "legal": True})
    score = snapshot.scores[seat]
    is_current = snapshot.turn.active == seat and not snapshot.finished
    context.update(
        seat=seat,
        name=snapshot.players[seat],
        total=score.total,
        breakdown=[{"label": label, "points": points} for label, points in score.breakdown],
        is_active=snapshot.turn.active == seat,
        # the tag says "rolling" only while the dice are awaited from this player, else "turn"
        is_rolling=is_current and snapshot.turn.chance,
        is_turn=is_current and not snapshot.turn.chance,
        may_act=seat in snapshot.turn.players and not snapshot.finished,
        markable=markable,
        is_winner=seat in winners_of(snapshot),
        is_mine=viewer.seat == seat,
    )
    return context


def live_context(snapshot: Snapshot, viewer: Viewer, mode: str) -> dict[str, Any]:
    """Everything the live part of a page shows: banner, dice, roll entry, sheets, undo,
    the end. `mode` is "table" (every sheet) or "sheet" (the viewer's own sheet)."""
    game = snapshot.game
    view = view_for(game.name)
    turn = snapshot.turn
    if mode == "sheet" and viewer.seat is not None:
        seats = [viewer.seat]
    else:
        seats = list(range(len(snapshot.players)))
    out = dice_out(game, snapshot.state)
    penalised = next_roll_penalised(snapshot)
    return {
        "mode": mode,
        "state_id": snapshot.state_id,
        "game": {"name": game.name, "title": game.title},
        "template": getattr(view, "TEMPLATE", "games/generic.html"),
        "players": list(snapshot.players),
        # the banner names this device's own player "you" on their sheet page only (the
        # table view is a screen for everyone, even on a host who plays)
        "turn": turn_context(snapshot, viewer.seat if mode == "sheet" else None),
        "dice": [
            {"colour": d.colour, "value": d.value, "css": colour_class(d.colour)}
            # "out": the die's colour left the game (marked only then)
            | ({"out": True} if d.colour in out else {})
            for d in current_dice(game, snapshot.state)
        ],
        "roll_entry": _roll_entry(
            snapshot, viewer, penalised, viewer.seat if mode == "sheet" else None
        ),
        "roll_waits": _roll_waits(snapshot, viewer, penalised),
        "choice": open_choice(snapshot, viewer),
        # a player's sheet page whose device has no seat any more: the host freed it (a
        # device without a seat is sent to the seat page when it opens the sheet page)
        "freed": mode == "sheet" and viewer.seat is None,
        "sheets": [sheet_context(snapshot, seat, viewer) for seat in seats],
        "scores": [
            {
                "name": snapshot.players[s.player],
                "total": s.total,
                "seat": s.player,
                "active": turn.active == s.player,
            }
            for s in snapshot.scores
        ],
        "undo": undo_label(snapshot, viewer),
        "undo_confirm": undo_confirm(snapshot, viewer),
        "undo_why": undo_why(snapshot, viewer),
        "undo_news": undo_news(snapshot, viewer),
        "rolled": snapshot.rolled,
        # the dice an undo brings back were rolled before: no news of a roll (table.js)
        "undone": snapshot.latest_undo is not None,
        "outcome": _outcome(snapshot) if snapshot.finished else None,
        "next_game": next_game(snapshot, viewer, mode),
        "viewer": {"seat": viewer.seat, "host": viewer.host, "by": viewer.by},
    }


def undo_label(snapshot: Snapshot, viewer: Viewer) -> str | None:
    """The undo button's words for this device, None when it may not undo now (the
    session's rule, `Snapshot.undo_offer`): the host's table view takes back the last
    action; a player their own latest, even when others have acted since, and the button
    names it ("Undo cross purple box 5")."""
    action = snapshot.undo_offer(viewer.by)
    if action is None:
        return None
    if viewer.seat is None:
        label = "Undo last action"
    elif isinstance(action.move, Roll):
        label = "Undo my roll"
    else:
        met = snapshot.undo_state_met(viewer.by)  # None: not offered (not reached here)
        words = taken_back_words(snapshot.game, action.move, met, snapshot.undo_penalty(viewer.by))
        label = f"Undo {words[:1].lower()}{words[1:]}"
    # an undo after the rules ended the game takes its ending back too (the session's
    # rule, deliberate: a mistaken last tap must not end a game for good), so it says so
    return f"{label}: {REOPENS}" if snapshot.outcome is not None else label


def taken_back_words(game: Game[object, object], move: Move, met: object, penalty: int) -> str:
    """What an undo of `move` takes back, in words: a move that cost its player a penalty
    (the session's `penalty_of`) names it, "Pass (−5 penalty)", as its button said "Pass:
    −5 penalty"; any other move its words in the state it met (`met`; None: unknown),
    "Cross red 5"."""
    if penalty:
        return f"{move.kind.replace('_', ' ').capitalize()} ({score_text(penalty)} penalty)"
    return describe_move(game, move, met)


REOPENS = "reopens the game"
UNDO_REOPENS_ASKS = "Tap again to undo: the game reopens"


def undo_confirm(snapshot: Snapshot, viewer: Viewer) -> str | None:
    """The undo's "tap again" question where it reopens a game the rules ended (a drastic
    action asks once, as ending a game does); None where the undo is sent at once."""
    if snapshot.outcome is None or snapshot.undo_offer(viewer.by) is None:
        return None
    return UNDO_REOPENS_ASKS


def undo_why(snapshot: Snapshot, viewer: Viewer) -> str | None:
    """Why this device may not undo now, in the words of the session's refusal with the
    players' names ("The dice have been rolled since your last action, ..."): a screen
    whose undo button went away shows it (table.js). None when it may undo, and when the
    change was an undo of its own or of its own action (nothing to explain: it asked, or
    the news of the undo says it)."""
    refusal = snapshot.undo_refusal(viewer.by)
    if refusal is None:
        return None
    if snapshot.latest_undo is not None:
        maker, action = snapshot.latest_undo
        if viewer.by in (maker, str(action.move.player)):
            return None
    return for_display(undo_refusal_for(snapshot, viewer, refusal.message), snapshot.players)


# where a seated host's device undoes as the host: it undoes as its player while seated
# (Viewer.by), and its sheet's Seat page stands it up to the host's table view
AS_THE_HOST = "as the host, you {deed} from the table view (Seat, then Just watch)"
HOST_CLAUSES_SEATED = {
    HOST_UNDOES_BACK: AS_THE_HOST.format(deed="can undo back to it"),
    HOST_UNDOES_OTHERS: AS_THE_HOST.format(deed="may undo another player's"),
}


def undo_refusal_for(snapshot: Snapshot, viewer: Viewer, message: str) -> str:
    """A player's undo refusal (the session's words) as `viewer` reads it: on the host's
    device at a seat, the pointer to the host points at itself, so it says how this device
    undoes as the host instead ("... the host can undo back to it" -> "... as the host, you
    can undo back to it from the table view ..."); on the others while the host's device
    holds a seat the pointer is left out (seated, it undoes as its player only: Viewer.by),
    as `roll_refusal_for` leaves out its "or the host enters the roll"."""
    if viewer.host and viewer.seat is not None:
        for clause, seated in HOST_CLAUSES_SEATED.items():
            message = message.replace(clause, seated)
    elif snapshot.host_seated:
        for clause in HOST_CLAUSES_SEATED:
            message = message.replace(f"; {clause}", "")
    return message


def roll_refusal_for(snapshot: Snapshot, viewer: Viewer, message: str) -> str:
    """A player's refused roll (the session's words, `penalty_for_other`) as `viewer`
    reads it: its pointer to the host's table view, "or the host enters the roll", says on
    the host's own seated device how it enters the roll as the host, and is left out on
    the others while the host's device holds a seat (it acts as its player only:
    `_host_may_act`)."""
    if viewer.host and viewer.seat is not None:
        seated = AS_THE_HOST.format(deed="can enter it")
        return message.replace(HOST_ENTERS_THE_ROLL, f"or, {seated}")
    if snapshot.host_seated:
        return message.replace(f", {HOST_ENTERS_THE_ROLL}", "")
    return message


def undo_news(snapshot: Snapshot, viewer: Viewer) -> str | None:
    """What the undo this state came from took back, for every device but its maker's
    (table.js shows it as the undo happens): "Ann took back: Cross red 5", "The host took
    back Bob's move: Pass (−5 penalty)" ("your move" on Bob's device), "The host took back
    the roll: white 3, ...". None when the latest change was no undo, or this device's."""
    if snapshot.latest_undo is None:
        return None
    maker, action = snapshot.latest_undo
    if maker == viewer.by:
        return None
    players = snapshot.players
    who = players[int(maker)] if maker.isdigit() and int(maker) < len(players) else "The host"
    move = action.move
    if isinstance(move, Roll):
        dice = ", ".join(f"{d.colour} {d.value}" for d in move.dice)
        return f"{who} took back the roll: {dice}"
    # what it took back as the undo button said it: "Pass (−5 penalty)"
    taken = taken_back_words(snapshot.game, move, snapshot.state, snapshot.latest_undo_penalty)
    what = with_names(taken, players)
    if str(move.player) == maker or not 0 <= move.player < len(players):
        return f"{who} took back: {what}"
    whose = "your" if viewer.seat == move.player else f"{players[move.player]}'s"
    return f"{who} took back {whose} move: {what}"


def open_choice(snapshot: Snapshot, viewer: Viewer) -> dict[str, object] | None:
    """A choice players may make before the roll, which the roll closes for good (the
    engine's Turn: a roll is due while players are listed, and they do not race: Sixmix's
    tied starter, Sixis' round opener). The banner shows it where the chooser looks, with
    the viewer's moves as buttons; `closes` is what a roll says before it is entered."""
    turn = snapshot.turn
    if snapshot.finished or not (turn.chance and turn.players) or turn.race:
        return None
    game, players = snapshot.game, snapshot.players
    moves = [
        {
            "label": with_names(describe_move(game, move), players),
            # a button for whoever may make it, the words for everyone else
            "move": move_attr(game, move) if viewer.may_mark(seat) else None,
        }
        for seat in turn.players
        for move in game.legal_moves(snapshot.state, seat)
    ]
    if not moves:
        return None
    who = names_of(players, turn.players)
    mine = viewer.seat is not None and viewer.seat in turn.players
    return {
        "text": "Your choice before the roll:" if mine else f"Before the roll, {who} may choose:",
        "moves": moves,
        "closes": f"The roll closes {'your' if mine else who + chr(39) + 's'} choice: tap again",
    }


def next_roll_penalised(snapshot: Snapshot) -> list[int]:
    """The players whom the next roll, entered now, would pass with a penalty (a player's
    device may not enter it for another: Session.propose_throw); worked out once per
    screen drawn."""
    throw = snapshot.throw
    if throw is None or snapshot.turn.chance or not throw.closes:
        return []
    return list(dict.fromkeys(snapshot.game.penalised_by(snapshot.state, list(throw.closes))))


def _passes_for(
    snapshot: Snapshot, passing: list[int], penalised: list[int], me: int | None
) -> str:
    """What the next roll does to those still crossing, in a player's words (the engine's
    automatic passes: `Throw.closes`), with those it costs a penalty; seat `me` (the
    device's own player, as its banner says) is "you"."""
    if me not in passing:
        they = "they"
    else:
        they = "you" if len(passing) == 1 else "you both" if len(passing) == 2 else "you all"
    words = (
        f"it ends this crossing for {names_of(snapshot.players, passing, me)}: "
        f"{they} cross nothing more this turn"
    )
    if penalised:
        verb = "takes" if len(penalised) == 1 and me not in penalised else "take"
        words += f", and {names_of(snapshot.players, penalised, me)} {verb} a penalty"
    return words


def _roll_waits(snapshot: Snapshot, viewer: Viewer, penalised: list[int]) -> str:
    """While the next roll would cost a player a penalty: on the next roller's device why
    no roll is offered yet, on that player's device that the roller waits ("" otherwise)."""
    turn, throw = snapshot.turn, snapshot.throw
    if turn.ends_by_hand and not snapshot.finished:
        # without automatic passes no roll comes before everyone has acted anyway: that a
        # pass could end the game (Qwixx) is no news to those who have acted, and only
        # those acting hear it; a turn that ends the game (Sixto) is news to everyone
        if snapshot.auto_pass or _last_turn_words(snapshot) is not None:
            return _ends_by_hand_waits(snapshot, viewer)
        return _ending_turn_words(snapshot, viewer)
    if throw is None or turn.chance or not throw.closes or viewer.seat is None:
        return ""
    roller = throw.roller
    if roller is not None and roller != viewer.seat:
        if viewer.seat in penalised:
            return (
                # true in both of the turn's steps: a pass of the white sum alone costs
                # nothing, a turn without a cross does
                f"{snapshot.players[roller]} waits to roll until you cross or pass "
                "(a turn without a cross costs you a penalty)"
            )
        return ""
    if not viewer.may_roll(turn, throw):
        return ""
    others = [p for p in penalised if p != viewer.seat]
    if not others:
        return ""
    who = names_of(snapshot.players, others)
    return (
        f"Your next roll waits for {who}: rolled now, it would pass for {who} with a "
        f"penalty{_host_aside(snapshot, viewer, 'may enter it')}"
    )


def _host_aside(snapshot: Snapshot, viewer: Viewer, deed: str) -> str:
    """ " (the host's device may ...)" where the way on is the host's device (`_host_may_act`),
    "" elsewhere."""
    return f" (the host's device {deed})" if _host_may_act(snapshot, viewer) else ""


def _host_may_act(snapshot: Snapshot, viewer: Viewer) -> bool:
    """Whether a screen may point its player at the host's device to act for another: not
    on the host's own device (the pointer would point at itself), and on no device while
    the host's device holds a seat (`Snapshot.host_seated`): seated, it acts as its player
    only (it enters no roll that costs another a penalty: penalty_for_other, and marks no
    other sheet: Viewer.may_mark). The players then act each for themselves."""
    return not (viewer.host or snapshot.host_seated)


def _ends_by_hand_waits(snapshot: Snapshot, viewer: Viewer) -> str:
    """Why no device offers the next roll when this turn's passes could end the game
    (`Turn.ends_by_hand`): on the devices of those not acting; "" on the actors' own."""
    acting = snapshot.turn.players
    if viewer.seat is None or not acting:
        return ""
    if viewer.seat in acting:
        return _ending_turn_words(snapshot, viewer)
    last_turn = _last_turn_words(snapshot)
    who = names_of(snapshot.players, acting)
    if last_turn is not None:
        host_aside = _host_may_act(snapshot, viewer)
        return str(last_turn(who, len(acting), host_aside=host_aside, state=snapshot.state))
    return (
        f"No roll yet: {who} must cross or pass first, since a pass now could end the "
        f"game{_host_aside(snapshot, viewer, 'may pass for them')}"
    )


def _ending_turn_words(snapshot: Snapshot, viewer: Viewer) -> str:
    """On the device of a player still to act while this turn's passes could end the game
    (`Turn.ends_by_hand`), whatever the table's automatic passes: that their turn is the
    last (Sixto), or that their cross or pass ends the game (Qwixx); "" elsewhere."""
    acting = snapshot.turn.players
    if viewer.seat is None or viewer.seat not in acting:
        return ""
    last_turn = _last_turn_words(snapshot)
    if last_turn is not None:
        return str(last_turn(None, len(acting), state=snapshot.state))
    # the last to act on a white sum that locks a second row (Qwixx): whatever they do
    # ends the game, as their boxes and pass say; the engine judges each move
    return LAST_TO_ACT if _every_move_ends(snapshot, viewer.seat) else ""


def _last_turn_words(snapshot: Snapshot) -> Callable[..., object] | None:
    """The view's `last_turn_words` where the game's turn's end is what ends the game
    (Sixto), which says so in its own words; None elsewhere (Qwixx: a pass ends it)."""
    return getattr(view_for(snapshot.game.name), "last_turn_words", None)


# said as Sixto's "Last turn: ..." and the buttons' "..., ends the game"
LAST_TO_ACT = "Last to act: your cross or pass now ends the game"


def _every_move_ends(snapshot: Snapshot, seat: int) -> bool:
    """Whether each move `seat` may make now ends the game, as the engine plays it."""
    game, state = snapshot.game, snapshot.state
    moves = tuple(game.legal_moves(state, seat))
    return bool(moves) and all(game.outcome(game.play(state, move)) is not None for move in moves)


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")  # Sixis: six of one


def die_names(colours: Sequence[str]) -> list[str]:
    """Each die's name for a screen reader: "red die", or where dice share a colour
    (Qwixx' two whites, Sixis' six of one colour) "first white die", "second white die"."""
    names = []
    for index, colour in enumerate(colours):
        nth = colours[:index].count(colour)
        if colours.count(colour) == 1:
            names.append(f"{colour} die")
        elif nth < len(ORDINALS):
            names.append(f"{ORDINALS[nth]} {colour} die")
        else:
            names.append(f"{colour} die {nth + 1}")
    return names


def _roll_entry(
    snapshot: Snapshot, viewer: Viewer, penalised: list[int], me: int | None
) -> dict[str, object] | None:
    """The dice to tap in when the game expects a roll and this device enters rolls; also,
    folded, the next roll while a step is open that it closes (the table's automatic
    passes: `Throw.closes`), on the next roller's device and the host's; seat `me` (the
    device's own player on their sheet page) is "you" there."""
    turn, throw = snapshot.turn, snapshot.throw
    if throw is None or not (turn.chance or throw.closes):
        return None
    if not viewer.may_roll(turn, throw):
        return None
    if viewer.seat is not None and any(p != viewer.seat for p in penalised):
        return None  # the session refuses it (penalty_for_other): wait for that player
    passing = list(dict.fromkeys(move.player for move in throw.closes))  # in their order
    return {
        "dice": [
            {"colour": c, "css": colour_class(c), "name": name}
            for c, name in zip(throw.dice.colours, die_names(throw.dice.colours), strict=True)
        ],
        "kept": [
            {"colour": d.colour, "value": d.value, "css": colour_class(d.colour)}
            for d in throw.dice.kept
        ],
        # picks made are kept while the key stays: the state for a roll that is due, the
        # step and its dice for the next roll of an open step (others act meanwhile)
        "key": f"{snapshot.state_id}"
        if turn.chance
        else f"next-{snapshot.step_id}-{'-'.join(throw.dice.colours)}",
        # the next roll, entered before everyone has acted: who it passes for, and who pays
        # a penalty for it (the host's device may enter such a roll: it says so first)
        "closes": _passes_for(snapshot, passing, penalised, me) if not turn.chance else "",
        # "Enter Bob's next roll", "Enter your next roll" on Bob's own sheet
        "whose": _whose(snapshot, throw.roller, me),
    }


def _whose(snapshot: Snapshot, roller: int | None, me: int | None) -> str:
    """The roller as owner of the next roll: "your" for seat `me`, else "Bob's"."""
    if roller is None:
        return "the"
    return "your" if roller == me else f"{snapshot.players[roller]}'s"


CONTINUES_ELSEWHERE = "This game continues at a new table: ask the host for its join code."
# the host's own screens: the host is the one the others ask, and has the new table open
CONTINUES_FOR_HOST = "This game continues at the new table you imported it to."
# a device that joined the finished game after Play again: the next game does not carry it
# (Table.carry_over refuses it), so it is offered no tap there
JOINED_AFTER_NEXT_GAME = "The host started a next game: ask the host for its join code."
# a device that took its place at the next game once and lost it there (the host freed it):
# carried again it is refused (`carried_once`), so the way back is the code, as on the page
# of a deleted game whose place was freed
NEXT_PLACE_FREED = (
    "This device's place at the next game was given up: ask the host for the next game's "
    "join code to join again."
)


# a TV's board, the host's or another device's, before the host plays again: nobody taps a
# TV, and the board follows to the next game by itself (board.js)
HOST_STARTS_NEXT_GAME = (
    "To play again, the host starts the next game from their own device: this screen then "
    "follows by itself."
)


def next_game(snapshot: Snapshot, viewer: Viewer, mode: str) -> dict[str, object] | None:
    """On a finished game's screen, the way to the game played again: before the host
    started it, the host's "Play again" (its table view, and its sheet when the host
    plays: a host who plays spends the game there), and on any device's board words that
    the host starts it (`waiting`: the board's alone, nothing to tap); after, each device's one
    tap to its place there (its seat, or the board of a screen that watched), and to a
    device that joined only after it was started, or whose place there the host freed
    after it took it (Viewer.next_place_freed), to ask the host for its code; a game its
    host moved to another table (export, end, import: Snapshot.continued), where it goes
    on, in words alone. None while the game runs, and on a sheet whose seat was freed (its
    device left the table)."""
    if not snapshot.finished or (mode == "sheet" and viewer.seat is None):
        return None
    if snapshot.next_table is None and snapshot.continued:  # no code: the host gives it
        text = CONTINUES_FOR_HOST if viewer.host else CONTINUES_ELSEWHERE
        return {"ready": False, "pointer": True, "text": text}
    if snapshot.next_table is None:
        if viewer.host:
            text = "Play again with the same players"
            return {"ready": False, "text": text, "board_text": HOST_STARTS_NEXT_GAME}
        if mode == "table":  # shown on a board only (companion.css): a board follows
            return {"ready": False, "waiting": True, "board_text": HOST_STARTS_NEXT_GAME}
        return None
    if viewer.joined_after_next_game:
        return {"ready": False, "pointer": True, "text": JOINED_AFTER_NEXT_GAME}
    if viewer.next_place_freed:
        return {"ready": False, "pointer": True, "text": NEXT_PLACE_FREED}
    if viewer.seat is not None:
        text = "Next game ready: tap to take your seat"
    elif viewer.host:
        text = "Next game ready: tap to open its table"
    else:
        text = "Next game ready: tap to open its scoreboard"
    return {"ready": True, "text": text, "table_id": snapshot.next_table}


def _outcome(snapshot: Snapshot) -> dict[str, object]:
    """The end card: the ending in words, the winners, and the ranking with its breakdown."""
    outcome = snapshot.outcome
    winners = winners_of(snapshot)
    # a tie the game breaks (Sixto: most crosses) shows its winner first
    ranking = sorted(snapshot.scores, key=lambda s: (-s.total, s.player not in winners))
    table = breakdown_table(ranking, snapshot.players)
    view = view_for(snapshot.game.name)
    final_rounds = getattr(view, "final_rounds", None)
    signed_entries: frozenset[str] = getattr(view, "SIGNED_ENTRIES", frozenset())
    return {
        "message": for_display(outcome.message, snapshot.players)
        if outcome
        else early_end_words(snapshot),
        "columns": table["columns"],
        "signed": [column in signed_entries for column in table["columns"]],
        "rounds": final_rounds(snapshot.state, snapshot.players) if final_rounds else None,
        # the game's own end names its winners in its message ("Mia wins with 144"): a
        # "Winner" line too said it twice. A game the host ended: its winner is who was
        # ahead, named in that line, with the tie-break that put them there (the totals
        # show a tie)
        "winners": names_of(snapshot.players, winners) if outcome is None else "",
        "ahead_when_ended": outcome is None,
        "ended_how": "the game was ended on the server's machine"
        if snapshot.ended_on_server
        else "the host ended the game",
        "tie_break": snapshot.game.tie_break_words(snapshot.state) if outcome is None else None,
        "ranking": [
            {
                "seat": s.player,
                "name": snapshot.players[s.player],
                "total": s.total,
                "breakdown": [{"label": label, "points": p} for label, p in s.breakdown],
                "cells": cells,
                "winner": s.player in winners,
            }
            for s, cells in zip(ranking, table["cells"], strict=True)
        ],
    }
