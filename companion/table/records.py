"""An imported game record, checked exactly as a new table is checked (one name per seat
of 1-40 characters, options small and in range) and then replayed, with the bounds every
record meets (its length, who made each action). The checks of a table's header are the
same functions for a new table, an import and a stored table being opened (tables.py).

`plan_import` does all of an import's work that needs no store (parse, check, replay,
encode the log to store) and returns only what is stored: the server runs it in a
separate process (Tables), so a long or hostile record never holds the event loop's
interpreter. This module imports only the rules, the store's value types and the dice
counts."""

from __future__ import annotations

import json
import secrets
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from companion.rules.base import Game, OptionsT, Reason, Rejection, StateT
from companion.rules.codec import encode
from companion.rules.session import AUTO, CAMERA, HOST, RecordError, Session, replay_record
from companion.table.dice import DiceTally, Tally
from companion.table.store import EncodedEntry, LogEntry, encoded
from companion.table.text import check_text, is_valid_text

# what a table's header may hold, the same at creation, import and load (api.py's request
# models use the same bounds, so the API's schema says them)
PLAYER_NAME_MAX = 40
PLAYERS_MAX = 64
OPTIONS_JSON_MAX = 4096
ACTOR_MAX = 16  # "host", "camera" or a seat number
# the longest random games of bench/rules.py have under 1,600 actions (Sixis, 4 players)
MAX_RECORD_ACTIONS = 10_000
FROM_TABLE = "from_table"  # an exported record's table (Table.record_builder)
# an exported record of a game ended on the server's own machine (Table.record_builder)
ENDED_ON_SERVER = "ended_on_server"
TABLE_ID_MAX = 64  # a table id's length at most (the routes' limit)


def check_players(names: Sequence[object], seats: int) -> None:
    """The names of a table's seats: one per seat, each 1-40 characters. Raises
    Rejection(BAD_OPTIONS) naming the problem. The one check for a table made here, an
    imported record and a stored table being opened."""
    if len(names) != seats:
        raise Rejection(
            Reason.BAD_OPTIONS,
            "player_names",
            f"{len(names)} player names for {seats} seats: give one name per seat",
        )
    for seat, name in enumerate(names):
        if not isinstance(name, str) or not 1 <= len(name) <= PLAYER_NAME_MAX:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_name",
                f"the name of seat {seat + 1} must be text of 1 to {PLAYER_NAME_MAX} characters",
            )
        if not is_valid_text(name):  # e.g. a table an older server stored
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_name",
                f"the name of seat {seat + 1} is not valid Unicode (it holds a lone surrogate)",
            )


# characters that show nothing or change nothing that shows: controls, formatting (bidi
# overrides, zero-width), private use, unassigned, line and paragraph separators
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
# Unicode's default-ignorable code points outside those categories (fillers, the combining
# grapheme joiner, variation selectors) and the blank braille pattern
HIDDEN_RANGES = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)  # fmt: skip
SHOWN_CATEGORIES = ("L", "N", "P", "S")  # a name shows at least one such character


def is_hidden(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) in HIDDEN_CATEGORIES or any(
        low <= code <= high for low, high in HIDDEN_RANGES
    )


# Cyrillic and Greek letters that look like a Latin one, as `name_key` sees them (case
# folded, marks stripped), each mapped to that Latin letter: the probe seated "Аnn" (a
# Cyrillic А) beside "Ann", two names no player could tell apart. The key is caseless, so
# a letter is here when either of its cases looks Latin (Cyrillic в for В, Greek ν for Ν):
# a few names that merely resemble each other in lower case are refused too, which an
# initial mends (the palochka Ӏ reads as a capital I). Not Unicode's whole confusables
# list: the letters of the two scripts a café's players type beside Latin.
LOOK_ALIKE_LETTERS = str.maketrans(
    "авекмнорстухіјѕԁһӏԛԝ" + "αβεζηικμνορτυχ",  # Cyrillic, then Greek
    "abekmhopctyxijsdhiqw" + "abezhikmnoptyx",
)


def name_key(name: str) -> str:
    """What a name reads as: letter widths, case, marks, spaces and look-alike letters of
    other scripts aside ("Ａｎｎ", " ann ", "Ann" with a combining mark after it and "Аnn"
    with a Cyrillic А are one name)."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name))
    kept = "".join(ch for ch in text if unicodedata.category(ch)[0] != "M")
    return " ".join(kept.casefold().translate(LOOK_ALIKE_LETTERS).split())


def check_new_names(names: Sequence[str]) -> None:
    """The names of a new table (made or imported; a stored table opens as stored): no
    character that shows nothing (a NUL, a right-to-left override, a zero-width space, a
    filler: the probes' names passed for others, "Ann" and "Ann" with an invisible
    character after it), at least one letter, digit or sign, and no two names alike
    (`name_key`: "Аnn" with a Cyrillic А is "Ann"). Raises Rejection(BAD_OPTIONS) naming the seat."""
    seen: set[str] = set()
    for seat, name in enumerate(names):
        hidden = next((ch for ch in name if is_hidden(ch)), None)
        if hidden is not None:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_name",
                f"the name of seat {seat + 1} holds an invisible or control character "
                f"(U+{ord(hidden):04X}): type the name as it should show",
            )
        if not any(unicodedata.category(ch)[0] in SHOWN_CATEGORIES for ch in name):
            raise Rejection(
                Reason.BAD_OPTIONS,
                "player_name",
                f"the name of seat {seat + 1} shows no letter or digit",
            )
        key = name_key(name)
        if key in seen:
            raise Rejection(
                Reason.BAD_OPTIONS,
                "duplicate_names",
                f"Two players are called {name.strip()}: give each player a different name "
                "(an initial will do)",
            )
        seen.add(key)


def check_options_size(options: object) -> None:
    """Options are small: at most OPTIONS_JSON_MAX bytes of JSON."""
    if len(json.dumps(options)) > OPTIONS_JSON_MAX:
        raise Rejection(
            Reason.BAD_OPTIONS, "options", f"options larger than {OPTIONS_JSON_MAX} bytes"
        )


def new_table_options(game: Game[object, object], data: Mapping[str, object]) -> object:
    """The options of a table made here: the game's defaults for its number of players
    (`options_for`, what the start page offers) with `data` on top, so a client that leaves
    an option out gets what the start page gives (Sixis: the advanced start in the first
    round only, as the rulebook has it). `data` is checked on its own first, so a bad option
    is refused by its own name. An imported record and a stored table keep `parse_options`:
    an option they lack means what it meant when they were played (the dataclass default).
    A seed the game draws at random (`Game.seed_options`: Sixis' deal) that `data` leaves
    out is drawn here, so no two such tables deal alike; it is stored with the options."""
    players = encode(game.parse_options(data))["players"]  # every game's Options has it
    drawn = {
        name: secrets.randbelow(bound)
        for name, bound in game.seed_options.items()
        if name not in data
    }
    return game.parse_options({**encode(game.options_for(players)), **drawn, **data})


def next_game_options(game: Game[object, object], options: object) -> dict[str, object]:
    """The options of a game played again (Tables.play_again): the finished game's own,
    less the seeds the game draws at random (`Game.seed_options`: Sixis' deal), so
    `new_table_options` draws them afresh and the next game is not the same deal again,
    and less what described that game's deal alone (`Game.one_game_options`: the cards a
    real deal dealt), which the next game takes from its defaults."""
    encoded = encode(options)
    assert isinstance(encoded, dict)
    dropped = set(game.seed_options) | game.one_game_options
    return {name: value for name, value in encoded.items() if name not in dropped}


def seat_count(game: Game[object, object], options: object) -> int:
    return len(game.scores(game.setup(options)))


def history_summary(
    game: Game[OptionsT, StateT],
    players: Sequence[str],
    state: StateT,
    actions: int,
    by_host: bool = False,
    on_server: bool = False,
) -> dict[str, object]:
    """A finished game's history entry: names, scores with their breakdown, winners.
    `by_host`: ended before the rules did; `on_server`: that end was made on the server's
    own machine (its start page), not by the host's device: "ended_on_server" is stored
    only then (an entry without it, every older one, is the host's end)."""
    outcome = game.outcome(state)
    winners = game.winners(state, ended_early=by_host)
    early = "ended on the server's machine, by its owner" if on_server else "ended by the host"
    where = {ENDED_ON_SERVER: True} if by_host and on_server else {}
    return {
        "game": game.name,
        "title": game.title,
        "players": list(players),
        "scores": [
            {"seat": sc.player, "total": sc.total, "breakdown": [list(b) for b in sc.breakdown]}
            for sc in game.scores(state)
        ],
        "winners": list(winners),
        "end_message": outcome.message if outcome else early,
        "ended_by_host": by_host,
        "actions": actions,
    } | where


def summary_of(
    s: Session, ended_by_host: bool = False, on_server: bool = False
) -> dict[str, object]:
    """The history entry of a session as it is now."""
    return history_summary(s.game, s.players, s.state, len(s.actions), ended_by_host, on_server)


def checked_record(record: object, max_actions: int = MAX_RECORD_ACTIONS) -> Session:
    """Replay an imported game record (JSON text as bytes, or parsed) after checking it as
    a new table is checked (check_players, check_options_size), its length (at most
    `max_actions` actions) and its actors: each `by` is "host", "camera" or a seat of the
    table. Raises RecordError naming the problem."""
    record = parsed_record(record)
    try:  # every string and key, before anything reads them
        check_text(record, "record")
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    if isinstance(record, dict):
        _check_record_header(record, max_actions)
    session = replay_record(record)
    try:
        check_players(session.players, seat_count(session.game, session.options))
        check_new_names(session.players)
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    actors = {HOST, CAMERA, AUTO, *(str(seat) for seat in range(len(session.players)))}
    for index, action in enumerate(session.actions):
        if action.by not in actors:
            raise _refused("actor", f"no seat {action.by[:16]!r} at this table", index)
    return session


def parsed_record(record: object) -> object:
    """A record given as JSON bytes, parsed (RecordError when it is not JSON); a parsed
    one as it is."""
    if not isinstance(record, bytes):
        return record
    try:
        return json.loads(record)
    except ValueError as exc:  # also bytes that are not UTF-8
        raise _refused("record", f"a game record is JSON: {exc}") from exc
    except RecursionError as exc:  # [[[[...]]]] nested deeper than the parser goes
        raise _refused("record", "a game record is not nested that deep") from exc


def host_ended(record: object) -> bool:
    """A parsed record's `ended_by_host` (docs/game-records.md): the host ended that game
    before the rules did. RecordError when it is there and not true or false."""
    return _record_flag(record, "ended_by_host")


def server_ended(record: object) -> bool:
    """A parsed record's `ended_on_server` (docs/game-records.md): that host's end was made
    on the server's own machine (its start page), by its owner. Optional: a record without
    it (every older one) is the host's end. RecordError when it is not true or false."""
    return _record_flag(record, ENDED_ON_SERVER)


def _record_flag(record: object, name: str) -> bool:
    flag = record.get(name, False) if isinstance(record, dict) else False
    if not isinstance(flag, bool):
        raise _refused(name, f'"{name}" is true or false')
    return flag


def _refused(rule: str, message: str, index: int | None = None) -> RecordError:
    return RecordError(index, Rejection(Reason.MALFORMED, rule, message))


def _check_record_header(record: dict[str, object], max_actions: int) -> None:
    """What can be checked before the record is replayed: its length, options size,
    number of names and the type of each actor."""
    actions = record.get("actions")
    if isinstance(actions, list) and len(actions) > max_actions:
        raise _refused("too_long", f"{len(actions)} actions: a record holds at most {max_actions}")
    try:
        check_options_size(record.get("options") or {})
    except Rejection as exc:
        raise RecordError(None, exc) from exc
    players = record.get("players")
    if isinstance(players, list) and len(players) > PLAYERS_MAX:
        raise _refused("player_names", f"{len(players)} player names: at most {PLAYERS_MAX}")
    for index, item in enumerate(actions if isinstance(actions, list) else []):
        by = item.get("by") if isinstance(item, dict) else None
        if by is not None and (not isinstance(by, str) or len(by) > ACTOR_MAX):
            raise _refused("actor", '"by" is "host", "camera" or a seat number', index)


def import_ids(session: Session) -> list[tuple[int, str]]:
    """(seq, action id) of each imported action: `import-N`, and for a move a throw
    implied the id of its roll with its own seq (`import-9-7`), so the stored log keeps
    the throw together (store.implied_seqs)."""
    ids: list[tuple[int, str]] = []
    roll_seq = 0
    for index in range(len(session.actions) - 1, -1, -1):
        seq = index + 1
        if not session.actions[index].implied:
            roll_seq = seq
            ids.append((seq, f"import-{seq}"))
        else:
            ids.append((seq, f"import-{roll_seq}-{seq}"))
    return ids[::-1]


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an accepted import stores: the table's header, its log, and its history entry
    when the game has already ended."""

    game: str
    options: dict[str, object]
    players: tuple[str, ...]
    seed: tuple[EncodedEntry, ...]  # encoded here: the server only stores the rows
    summary: dict[str, object] | None
    dice: Tally  # its rolls, counted here for the dice statistics
    from_table: str | None = None  # the table the record says it was exported from


@dataclass(frozen=True, slots=True)
class ImportRefusal:
    """A refused import as it crosses from the import process (RecordError and Rejection
    do not survive pickling): `error()` is the RecordError again."""

    index: int | None
    reason: str
    rule: str
    message: str

    def error(self) -> RecordError:
        return RecordError(self.index, Rejection(Reason(self.reason), self.rule, self.message))


def plan_import(
    record: object, max_actions: int = MAX_RECORD_ACTIONS
) -> ImportPlan | ImportRefusal:
    """Check and replay an imported record (JSON bytes, or parsed; checked_record) and
    return what is to be stored, or why it is refused."""
    try:
        record = parsed_record(record)
        session = checked_record(record, max_actions)
        ended_by_host = host_ended(record)
        on_server = server_ended(record)
    except RecordError as exc:
        refused = exc.rejection
        return ImportRefusal(exc.index, refused.reason.value, refused.rule, refused.message)
    log = [
        LogEntry(seq, action_id, "move", a.by, session.game.move_to_json(a.move))
        for (seq, action_id), a in zip(import_ids(session), session.actions, strict=True)
    ]
    options = encode(session.options)
    assert isinstance(options, dict)
    summary = None
    if session.outcome() is not None or ended_by_host:  # a game over goes to the history
        early = ended_by_host and session.outcome() is None
        summary = summary_of(session, early, on_server=early and on_server)
    dice = DiceTally.from_logs({"import": log}).of("import")
    seed = tuple(encoded(entry) for entry in log)
    players = tuple(session.players)
    source = exported_from(record)
    return ImportPlan(session.game.name, options, players, seed, summary, dice, source)


def exported_from(record: object) -> str | None:
    """A parsed record's `from_table` (docs/game-records.md): the table it was exported
    from, or None (absent, or not a table id: it only ever points, so it is not refused)."""
    source = record.get(FROM_TABLE) if isinstance(record, dict) else None
    return source if isinstance(source, str) and 0 < len(source) <= TABLE_ID_MAX else None
