"""The shared vocabulary of every game: dice, turns, rejections, scores, outcomes, and the
`Game` interface each game module implements.

Principles (see ../shared/STYLE.md): a game is data plus pure functions; the camera is the
chance player (a roll is a move, `Roll`, that the state asks for through `Turn.chance` and
`Turn.dice`); turn structure is declared (`Turn`); every refusal is a `Rejection` with a
reason from one vocabulary plus a rule name and a sentence a player understands.

Nothing in this package does I/O, reads a clock or draws a random number.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from companion.colours import DIE_COLOURS

SCHEMA_VERSION = 1

COLOURS = DIE_COLOURS  # the vocabulary shared with the camera (companion/colours.py)


class Reason(StrEnum):
    """Why an action was refused. The web layer maps these to HTTP codes and error frames."""

    ILLEGAL_MOVE = "illegal_move"  # the move breaks a rule of the game
    NOT_YOUR_TURN = "not_your_turn"  # this player may not act in this step
    GAME_OVER = "game_over"  # the game has ended
    WRONG_DICE = "wrong_dice"  # a roll that is not the roll the state expects
    STALE_STATE = "stale_state"  # the action was made on an old view
    BAD_OPTIONS = "bad_options"  # setup options out of range
    MALFORMED = "malformed"  # JSON that does not describe a move/state/record
    NOTHING_TO_UNDO = "nothing_to_undo"
    NOT_ALLOWED = "not_allowed"  # e.g. undo of another player's action without host rights


class Rejection(Exception):
    """A refused action: `reason` (vocabulary above), `rule` (a short stable name of the rule
    that was broken, e.g. ``"left_to_right"``) and `message` (a sentence for the player)."""

    def __init__(self, reason: Reason, rule: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.rule = rule
        self.message = message

    def to_json(self) -> dict[str, str]:
        return {"reason": str(self.reason), "rule": self.rule, "message": self.message}

    def __repr__(self) -> str:
        return f"Rejection({self.reason.value!r}, {self.rule!r}, {self.message!r})"


def illegal(rule: str, message: str) -> Rejection:
    return Rejection(Reason.ILLEGAL_MOVE, rule, message)


@dataclass(frozen=True, slots=True)
class Die:
    """One die of a roll: its colour name and the value on top (1-6)."""

    colour: str
    value: int

    def __repr__(self) -> str:
        return f"Die({self.colour!r}, {self.value})"


@dataclass(frozen=True, slots=True)
class Move:
    """Base of every move. `player` is the seat (0-based); the chance player's roll uses -1."""

    kind: ClassVar[str] = "move"
    player: int


CHANCE = -1


@dataclass(frozen=True, slots=True)
class Roll(Move):
    """The chance player's move: the dice as they lie on the table (the camera or a tap)."""

    kind: ClassVar[str] = "roll"
    player: int = CHANCE
    dice: tuple[Die, ...] = ()


@dataclass(frozen=True, slots=True)
class DiceSpec:
    """Which dice the next roll must contain: one colour name per die to be rolled (repeats
    allowed, e.g. two whites). `kept` are dice that stay on the table with a known value and
    are not part of the roll (Sixis saved dice); a camera sees them too."""

    colours: tuple[str, ...]
    kept: tuple[Die, ...] = ()

    def check(self, roll: Roll) -> None:
        """Raise `Rejection(WRONG_DICE)` unless `roll` matches this spec exactly."""
        got = sorted(d.colour for d in roll.dice)
        want = sorted(self.colours)
        if got != want:
            raise Rejection(
                Reason.WRONG_DICE,
                "dice_expected",
                f"this roll needs {describe_colours(self.colours)}, got {describe_colours(tuple(got))}",
            )
        for d in roll.dice:
            if not (isinstance(d.value, int) and 1 <= d.value <= 6):
                raise Rejection(
                    Reason.WRONG_DICE, "die_value", f"a die shows 1 to 6, not {d.value!r}"
                )


def describe_colours(colours: Sequence[str]) -> str:
    if not colours:
        return "no dice"
    counts: dict[str, int] = {}
    for c in colours:
        counts[c] = counts.get(c, 0) + 1
    parts = [f"{n} {c}" if n > 1 else c for c, n in counts.items()]
    noun = "die" if len(colours) == 1 else "dice"
    return f"{len(colours)} {noun} ({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class Throw:
    """What a new throw of the dice means now: the moves it implies, made first and in
    order, then a roll that must match `dice`, thrown by seat `roller`.

    - `closes`: the moves of those who have not acted in a step the throw closes, as a
      paper table reads it: whoever has not crossed when the next roll comes has passed
      (Qwixx's white sum and colour step, Sixto's crossing). Made only where the table
      plays with automatic passes (`Turn.on_throw`).
    - `moves`: what the throw itself is (Sixto's keep/re-roll step: the re-roll)."""

    dice: DiceSpec
    moves: tuple[Move, ...] = ()
    closes: tuple[Move, ...] = ()
    roller: int | None = None

    @property
    def implied(self) -> tuple[Move, ...]:
        """Every move the throw implies, in the order they are made: `closes`, `moves`."""
        return (*self.closes, *self.moves)


@dataclass(frozen=True, slots=True)
class Turn:
    """Who may act now. `step` names the game's turn step ("white_sum", "roll", ...).
    `chance`: the next action may be a roll matching `dice`. `players`: the seats that may
    act now; in a step where several players act each once, it lists those still to act.
    `active` is the seat whose turn it is (the roller/active player), or None.

    What the layers above would otherwise guess:

    - `moves_in_step`: how many of the moves that led here belong to this step (0: the
      step began with the last change). A screen drawn anywhere in the step still means
      what it meant, so a tap from it is judged by the rules, not refused as a stale view
      (`Session.step_id`, `Session.is_current`): Qwixx's white sum counts the players who
      have acted, Sixes' call counts the pound that won it.
    - `race`: the listed players race for one move; the first accepted one wins, and the
      others hear the rule that stops them (the step goes on: `moves_in_step`). A screen
      may say so; nothing is resent after a lost connection.
    - `throw`: what a throw of the dice means when the state expects no roll yet, e.g.
      Sixto's keep/re-roll step, where a new throw is the active player re-rolling, or a
      step the next roll closes for those who have not acted (`Throw.closes`). Ask
      `on_throw()`, which also covers the plain roll.
    - `ends_by_hand`: a step the next roll would close, were its passes not able to end
      the game (Qwixx's fourth penalty or second lock, Sixto's last die out): no `throw`,
      so no roll is offered until those listed have acted by hand, and a screen says why."""

    step: str
    active: int | None
    players: tuple[int, ...] = ()
    chance: bool = False
    dice: DiceSpec | None = None
    moves_in_step: int = 0
    race: bool = False
    throw: Throw | None = None
    ends_by_hand: bool = False

    def on_throw(self, close_step: bool = True) -> Throw | None:
        """What a new throw of the dice means now: the game's declared `throw`, else a roll
        of `dice` when one is expected, else None (the game expects no dice now). Without
        `close_step` (a table that does not play automatic passes) a throw that would close
        a step for those who have not acted means nothing: they pass by hand first."""
        if self.throw is not None and (close_step or not self.throw.closes):
            return self.throw
        if self.chance and self.dice is not None:
            return Throw(self.dice, roller=self.active)
        return None


@dataclass(frozen=True, slots=True)
class Score:
    """A player's score: `total` equals the sum of the `breakdown` points."""

    player: int
    total: int
    breakdown: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: a stable `reason` name, a sentence, and the winning seats."""

    reason: str
    message: str
    winners: tuple[int, ...]


OptionsT = TypeVar("OptionsT")
StateT = TypeVar("StateT")


@dataclass(frozen=True, slots=True)
class PlayerCount:
    low: int
    high: int | None  # None: no upper bound (Sixes)


class Game(ABC, Generic[OptionsT, StateT]):
    """One game's rules. Subclasses are stateless; every method is a pure function of its
    arguments. `apply` trusts its input (call `check` first, or use `play`)."""

    name: ClassVar[str]
    title: ClassVar[str]
    players: ClassVar[PlayerCount]
    options_type: ClassVar[type]
    state_type: ClassVar[type]
    move_types: ClassVar[tuple[type[Move], ...]]
    # options a new table draws at random when its creator names none (the engine has no
    # randomness: the server draws, records.new_table_options), name -> bound: 0 <= seed <
    # bound. Stored with the table's options, so a restart or an export deals the same.
    seed_options: ClassVar[Mapping[str, int]] = {}
    # options that describe one game's deal rather than the table's way of playing (Sixis'
    # cards as a real deal dealt them): a game played again starts without them
    one_game_options: ClassVar[frozenset[str]] = frozenset()

    # -- setup -------------------------------------------------------------------------
    @abstractmethod
    def setup(self, options: OptionsT) -> StateT:
        """The state after setup. Raises Rejection(BAD_OPTIONS) for options out of range."""

    @abstractmethod
    def options_for(self, players: int) -> OptionsT:
        """Default options for `players` players (used by the start page, tests and
        benchmarks)."""

    def invariants(self, state: StateT) -> None:
        """Assert what must hold in every reachable state (e.g. Sixes: no coin is created or
        lost). Raises AssertionError; the conformance test calls it after every action."""

    def dice_colours(self, options: OptionsT) -> tuple[str, ...] | None:
        """The body colours of the dice this game throws, one name per die (repeats for
        look-alike dice, Qwixx's two whites), when every roll throws the same set; the
        camera's colour stage assigns each die it finds to one of them. None (the default):
        the dice change from roll to roll (Sixis, Sixmix) and each die's colour is named on
        its own; `Turn.dice` still says which dice each roll must show."""
        return None

    # -- whose turn ---------------------------------------------------------------------
    @abstractmethod
    def turn(self, state: StateT) -> Turn:
        """Who may act now, and which dice the next roll must contain."""

    # -- moves --------------------------------------------------------------------------
    @abstractmethod
    def legal_moves(self, state: StateT, player: int) -> list[Move]:
        """Every legal move of `player` now (a pass/decline counts as a move where the rules
        let a player decline). Empty when the player may not act. Never contains rolls."""

    @abstractmethod
    def check(self, state: StateT, move: Move) -> None:
        """Raise a Rejection naming the first broken rule, in the order: game over,
        may this player act now, is the move legal."""

    @abstractmethod
    def apply(self, state: StateT, move: Move) -> StateT:
        """The state after a move that `check` accepted."""

    def play(self, state: StateT, move: Move) -> StateT:
        self.check(state, move)
        return self.apply(state, move)

    # -- scoring and end ----------------------------------------------------------------
    @abstractmethod
    def scores(self, state: StateT) -> tuple[Score, ...]:
        """Every player's score now, with its breakdown."""

    @abstractmethod
    def outcome(self, state: StateT) -> Outcome | None:
        """None while the game goes on."""

    def leaders(self, state: StateT) -> tuple[int, ...]:
        """The seats ahead now by this game's own end-of-game ranking, its tie-breaks
        included: who would win were the game to end now (a game the host ends before its
        end is won by them, `winners`). Default: the highest total; a game whose rulebook
        breaks a tie (Sixto: most crosses) overrides it, and its `outcome` uses it."""
        scores = self.scores(state)
        best = max(score.total for score in scores)
        return tuple(score.player for score in scores if score.total == best)

    def tie_break_words(self, state: StateT) -> str | None:
        """What put `leaders` ahead of the others level with them on points, in words for
        the end of a game the host ended ("on most crosses (9)": the table sees equal
        totals); None when the points alone decide. Default: the game breaks no tie."""
        return None

    def winners(self, state: StateT, ended_early: bool = False) -> tuple[int, ...]:
        """The seats that won: the `outcome`'s, or for a game ended before its own end
        (`ended_early`: the host ended it) its `leaders` then; none while it goes on. The
        one answer every screen, the history and `companion replay` give."""
        outcome = self.outcome(state)
        if outcome is not None:
            return tuple(outcome.winners)
        return self.leaders(state) if ended_early else ()

    def penalty(self, state: StateT, move: Move) -> int:
        """The points a penalty that `move`, accepted on `state`, marks costs its player (a
        negative number: Qwixx's -5 for a turn without a cross); 0 where it marks none, as
        in every game without penalties (the default). What an undo of the move takes back."""
        return 0

    def penalised_by(self, state: StateT, moves: Sequence[Move]) -> list[int]:
        """The players whom the moves, played in order on `state`, mark a `penalty`: a
        throw's automatic pass that costs its player one (Qwixx's active player who crossed
        nothing)."""
        out = []
        for move in moves:
            after = self.play(state, move)
            if self.penalty(state, move) < 0:
                out.append(move.player)
            state = after
        return out

    # -- options ------------------------------------------------------------------------
    def parse_options(self, data: Mapping[str, Any]) -> OptionsT:
        """Options from JSON-like data; raises Rejection(BAD_OPTIONS) naming the field."""
        from companion.rules.codec import decode

        try:
            options: OptionsT = decode(self.options_type, dict(data))
        except (TypeError, ValueError, KeyError) as exc:
            raise Rejection(Reason.BAD_OPTIONS, "options", f"bad options: {exc}") from exc
        self.setup(options)  # validates ranges
        return options

    def options_schema(self) -> dict[str, Any]:
        """The options' fields and defaults, for the start page."""
        from companion.rules.codec import encode

        try:
            default = self.options_type()
        except TypeError:
            return {}
        encoded = encode(default)
        assert isinstance(encoded, dict)
        return encoded

    # -- JSON ---------------------------------------------------------------------------
    def move_to_json(self, move: Move) -> dict[str, Any]:
        from companion.rules.codec import encode

        data = encode(move)
        assert isinstance(data, dict)
        return {"kind": move.kind, **data}

    def move_kinds(self) -> dict[str, type[Move]]:
        """Every move this game accepts, by its `kind` (the chance player's roll first)."""
        move_types: tuple[type[Move], ...] = (Roll, *self.move_types)
        return {t.kind: t for t in move_types}

    def move_schema(self, kind: str) -> dict[str, object]:
        """The JSON Schema of one move kind as `move_from_json` checks it (codec.schema of
        its dataclass with the boundary's limits, plus its `kind`)."""
        from companion.rules.codec import MOVE_LIMITS, schema

        described = schema(self.move_kinds()[kind], MOVE_LIMITS)
        fields, required = described["properties"], described["required"]
        assert isinstance(fields, dict) and isinstance(required, list)
        return described | {
            "properties": {"kind": {"const": kind}, **fields},
            "required": ["kind", *required],
        }

    def move_from_json(self, data: object) -> Move:
        """Parse a move from outside (a screen, a record): every field type-checked and
        bounded (codec.MOVE_LIMITS); raises Rejection(MALFORMED) naming the field."""
        from companion.rules.codec import MOVE_LIMITS, decode

        if not isinstance(data, Mapping):
            raise Rejection(Reason.MALFORMED, "move", "a move is a JSON object with a 'kind'")
        kinds = self.move_kinds()
        kind = data.get("kind")
        if not isinstance(kind, str) or kind not in kinds:
            got = (
                f"unknown move kind {kind[:30]!r}"
                if isinstance(kind, str)
                else (
                    "move.kind is missing" if kind is None else f"move.kind is {_json_type(kind)}"
                )
            )
            raise Rejection(
                Reason.MALFORMED,
                "move_kind",
                f"{got}; a {self.name} move's kind is one of {', '.join(sorted(kinds))}",
            )
        fields = {k: v for k, v in data.items() if k != "kind"}
        try:
            move: Move = decode(kinds[kind], fields, "move", MOVE_LIMITS)
        except (TypeError, ValueError, KeyError) as exc:
            raise Rejection(Reason.MALFORMED, "move", f"bad {kind} move: {exc}") from exc
        return move

    def state_to_json(self, state: StateT) -> dict[str, Any]:
        from companion.rules.codec import encode

        data = encode(state)
        assert isinstance(data, dict)
        return {"schema": SCHEMA_VERSION, "game": self.name, "state": data}

    def state_from_json(self, data: Mapping[str, Any]) -> StateT:
        from companion.rules.codec import decode

        if data.get("schema") != SCHEMA_VERSION or data.get("game") != self.name:
            raise Rejection(
                Reason.MALFORMED,
                "schema",
                f"expected a {self.name} state of schema {SCHEMA_VERSION}",
            )
        try:
            state: StateT = decode(self.state_type, data["state"])
        except (TypeError, ValueError, KeyError) as exc:
            raise Rejection(Reason.MALFORMED, "state", f"bad {self.name} state: {exc}") from exc
        return state


def seat_name(seat: int) -> str:
    """How the rules call a seat in a sentence: 'player 3' for seat 2 (the rules know no
    names; the web layer puts the seat's name in place of 'player N'). A refusal speaks to
    the player who made the move as "you" and names only the others so."""
    return f"player {seat + 1}"


def _json_type(value: object) -> str:
    """What a JSON value is, in words: 'a list', 'an object', 'a number' ..."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else "not a string"


def describe_seats(seats: Sequence[int]) -> str:
    """'player 1', 'player 1 and player 3', 'player 1, player 2 and player 4'."""
    names = [seat_name(seat) for seat in seats]
    if not names:
        return "nobody"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def next_seat(seat: int, count: int) -> int:
    return (seat + 1) % count


ItemT = TypeVar("ItemT")


def replaced(items: tuple[ItemT, ...], index: int, item: ItemT) -> tuple[ItemT, ...]:
    """`items` with the one at `index` replaced by `item` (a seat's sheet, a card's side)."""
    return (*items[:index], item, *items[index + 1 :])


def die_value(dice: Sequence[Die], colour: str) -> int | None:
    """The value of the first die of `colour` in `dice`, or None when there is none."""
    for die in dice:
        if die.colour == colour:
            return die.value
    return None


def require(condition: bool, rule: str, message: str, reason: Reason = Reason.ILLEGAL_MOVE) -> None:
    """Raise a Rejection unless `condition` holds."""
    if not condition:
        raise Rejection(reason, rule, message)


def check_actor(game_over: bool, turn: Turn, move: Move) -> None:
    """The first checks every game makes, in boardgame.io's order: game over? may this player
    act now? For a roll: is a roll expected, and are these the expected dice?"""
    if game_over:
        raise Rejection(Reason.GAME_OVER, "game_over", "the game is over")
    if isinstance(move, Roll):
        if not turn.chance or turn.dice is None:
            raise Rejection(
                Reason.NOT_YOUR_TURN,
                "no_roll_expected",
                f"no roll is expected now; waiting for {describe_seats(turn.players)}",
            )
        turn.dice.check(move)
        return
    if move.player not in turn.players:
        if turn.chance and not turn.players:
            raise Rejection(
                Reason.NOT_YOUR_TURN, "waiting_for_roll", "the dice have to be rolled first"
            )
        waiting = describe_seats(turn.players)
        raise Rejection(
            Reason.NOT_YOUR_TURN, "not_your_turn", f"you may not act now; waiting for {waiting}"
        )
