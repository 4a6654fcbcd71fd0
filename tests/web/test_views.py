"""The view models hold no rules: every legal move of a seat appears exactly once as a
legal box or button, nothing else is marked legal, used boxes send nothing, and a device
that may not mark a sheet gets no moves at all."""

from __future__ import annotations

import ast
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.rules.base import Move
from companion.rules.qwixx import ROW_COLOURS, Cross, Pass
from companion.rules.registry import find_game
from companion.rules.sixto import Cross as SixtoCross
from companion.rules.sixto import Done, Keep
from companion.simulate import random_action
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.table.words import score_text
from companion.web.views import describe_move, live_context, move_attr, sheet_context
from tests.web.helpers import roll, snapshot_of

QWIXX_TURN: list[Move] = [
    roll(("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1))
]


def legal_attrs(context: dict[str, Any]) -> list[str]:
    """Every move the sheet offers as legal (boxes, lock boxes and buttons)."""
    found = []
    for row in context.get("rows", []):
        found += [b["move"] for b in row["boxes"] if b["legal"]]
        lock = row.get("lock")
        if lock and lock["legal"]:
            found.append(lock["move"])
    found += [b["move"] for b in context["buttons"] if b["legal"]]
    return found


def offered_moves(context: dict[str, Any]) -> set[str]:
    moves = {b["move"] for row in context.get("rows", []) for b in row["boxes"] if b["move"]}
    return moves | {b["move"] for b in context["buttons"] if b["move"]}


def positions(game_name: str, players: int, seed: int, count: int) -> list[Any]:
    """Snapshots along one random game (moves from the engine's legal_moves)."""
    game = find_game(game_name)
    rng = random.Random(seed)
    moves = []
    state = game.setup(game.options_for(players))
    for _ in range(count):
        if game.outcome(state) is not None:
            break
        move = random_action(game, state, rng)
        moves.append(move)
        state = game.play(state, move)
    names = [f"P{i}" for i in range(players)]
    return [snapshot_of(game_name, names, moves[:n]) for n in range(0, len(moves), 7)]


@pytest.mark.parametrize("game_name", ["qwixx", "sixto"])
def test_every_legal_move_is_offered_once_and_nothing_else_is_legal(game_name: str) -> None:
    for snapshot in positions(game_name, 3, seed=5, count=120):
        for seat in range(3):
            context = sheet_context(snapshot, seat, Viewer(seat=seat, host=False))
            engine = sorted(
                move_attr(snapshot.game, m) for m in snapshot.game.legal_moves(snapshot.state, seat)
            )
            offered = legal_attrs(context)
            # the lock box repeats the last number's move; count each move once
            assert sorted(set(offered)) == engine, (game_name, snapshot.state_id, seat)


@pytest.mark.parametrize("game_name", ["qwixx", "sixto"])
def test_used_boxes_send_nothing_and_other_sheets_are_read_only(game_name: str) -> None:
    for snapshot in positions(game_name, 2, seed=9, count=80):
        own = sheet_context(snapshot, 0, Viewer(seat=0, host=False))
        for row in own["rows"]:
            for box in row["boxes"]:
                assert (box["move"] is None) == box["crossed"]
        other = sheet_context(snapshot, 1, Viewer(seat=0, host=False))
        assert offered_moves(other) == set() and not other["markable"]
        watcher = sheet_context(snapshot, 1, Viewer(seat=None, host=False))
        assert offered_moves(watcher) == set()


def test_a_qwixx_box_carries_the_cross_it_would_send() -> None:
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], QWIXX_TURN)
    context = sheet_context(snapshot, 1, Viewer(seat=1, host=False))
    red = context["rows"][0]
    box_for_9 = next(b for b in red["boxes"] if b["number"] == 9)
    assert json.loads(box_for_9["move"]) == {
        "kind": "cross",
        "player": 1,
        "colour": "red",
        "number": 9,
    }
    assert not box_for_9["legal"]  # offered (to hear the engine's reason) but not legal
    assert next(b for b in red["boxes"] if b["number"] == 7)["legal"]
    assert [r["label"] for r in context["rows"]] == ["Red", "Yellow", "Green", "Blue"]
    assert len({r["pattern"] for r in context["rows"]}) == 4  # not only colour tells rows apart


def test_the_live_context_offers_roll_entry_to_the_active_device_and_the_host() -> None:
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], [])
    for viewer, expected in [
        (Viewer(seat=0, host=False), True),  # Ann rolls first
        (Viewer(seat=1, host=False), False),
        (Viewer(seat=None, host=True), True),
        (Viewer(seat=None, host=False), False),
    ]:
        entry = live_context(snapshot, viewer, "sheet")["roll_entry"]
        assert (entry is not None) == expected, viewer
    entry = live_context(snapshot, Viewer(seat=0, host=False), "sheet")["roll_entry"]
    assert [d["colour"] for d in entry["dice"]] == [
        "white",
        "white",
        "red",
        "yellow",
        "green",
        "blue",
    ]


def test_the_next_roller_is_told_why_the_roll_waits_for_the_active_player() -> None:
    """Ann rolled and has crossed nothing: Bob's roll would pass for her with -5, which his
    device may not do (penalty_for_other), so it offers no roll and says why; the host's
    device still offers it. Once Ann has crossed, Bob's device offers it again."""
    qwixx_roll = roll(
        ("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)
    )
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], [qwixx_roll])
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_entry"] is None
    assert bob["roll_waits"].startswith("Your next roll waits for Ann")
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["roll_waits"] == (
        "Bob waits to roll until you cross or pass (a turn without a cross costs you a penalty)"
    )
    # once Ann has passed the white sum (no penalty for that alone) it still holds: her
    # turn is not over, and ending it without a cross is what costs -5
    passed = snapshot_of("qwixx", ["Ann", "Bob"], [qwixx_roll, Pass(1), Pass(0)])
    ann_passed = live_context(passed, Viewer(seat=0, host=False), "sheet")
    assert ann_passed["roll_waits"] == ann["roll_waits"]
    assert passed.scores[0].total == 0
    host = live_context(snapshot, Viewer(seat=None, host=True), "sheet")
    assert host["roll_entry"] is not None and host["roll_waits"] == ""
    # the host's entry says who pays for it before it is entered
    assert host["roll_entry"]["closes"] == (
        "it ends this crossing for Ann and Bob: they cross nothing more this turn, and Ann "
        "takes a penalty"
    )
    crossed = snapshot_of("qwixx", ["Ann", "Bob"], [qwixx_roll, Cross(0, "red", 7)])
    bob = live_context(crossed, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_entry"] is not None and bob["roll_waits"] == ""
    assert live_context(crossed, Viewer(seat=0, host=False), "sheet")["roll_waits"] == ""


def test_when_a_pass_could_end_the_game_the_others_are_told_why_no_roll_is_offered() -> None:
    """Ann and Bob have three penalties each and Ann rolled: Bob's next roll would pass
    for Ann with her fourth penalty and end the game, so no device offers it (no throw);
    once Bob has passed the white sum his device says what the table waits for; the
    devices of those still to act say nothing new."""
    qwixx_roll = roll(
        ("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)
    )
    moves: list[Any] = []
    for active in [0, 1] * 3:  # each turn: both pass the white sum, the roller the colours
        moves += [qwixx_roll, Pass((active + 1) % 2), Pass(active), Pass(active)]
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], [*moves, qwixx_roll])
    assert snapshot.turn.ends_by_hand and snapshot.throw is None
    assert live_context(snapshot, Viewer(seat=1, host=False), "sheet")["roll_waits"] == ""
    passed = snapshot_of("qwixx", ["Ann", "Bob"], [*moves, qwixx_roll, Pass(1)])
    bob = live_context(passed, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_entry"] is None
    assert bob["roll_waits"] == (
        "No roll yet: Ann must cross or pass first, since a pass now could end the game "
        "(the host's device may pass for them)"
    )
    assert live_context(passed, Viewer(seat=0, host=False), "sheet")["roll_waits"] == ""
    assert live_context(passed, Viewer(seat=None, host=True), "sheet")["roll_waits"] == ""
    # with three penalties but a cross made, Ann's pass costs nothing: the roll closes it
    crossed = snapshot_of("qwixx", ["Ann", "Bob"], [*moves, qwixx_roll, Cross(0, "red", 7)])
    assert not crossed.turn.ends_by_hand
    assert live_context(crossed, Viewer(seat=1, host=False), "sheet")["roll_waits"] == ""


def sixto_last_turn() -> Any:
    """Ann crossed box 9 in every row and is done: she can cross nothing more, so the game
    ends with this turn, Bob still crossing."""
    six = [("red", 1), ("orange", 2), ("yellow", 3), ("green", 4), ("blue", 5), ("purple", 6)]
    start = snapshot_of("sixto", ["Ann", "Bob"], [])
    numbers = start.state.sheets[0].numbers  # Ann's sheet: box 9's digit in each row
    dice = roll(*((colour, int(row[8])) for (colour, _), row in zip(six, numbers, strict=True)))
    moves: list[Any] = [dice, Keep(0)]
    moves += [SixtoCross(0, colour, 9) for colour, _ in six]
    moves.append(Done(0))
    return snapshot_of("sixto", ["Ann", "Bob"], moves)


def test_sixto_last_turn_is_told_in_sixto_words() -> None:
    """Sixto's last turn (Ann crossed box 9 in every row: she can cross nothing more, so
    the game ends with this turn): Ann's device read "No roll yet: Bob must cross or pass
    first, since a pass now could end the game", Qwixx' words (Sixto has no pass), and
    Bob, still crossing, was not told it was the last turn."""
    snapshot = sixto_last_turn()
    assert snapshot.turn.ends_by_hand and snapshot.turn.players == (1,)
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["roll_waits"] == (
        "No roll yet: the game ends after this turn, once Bob is done crossing "
        "(the host's device may tap Done crossing for them)"
    )
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_waits"] == "Last turn: the game ends once everyone is done crossing"


def test_sixto_last_turn_is_told_without_automatic_passes_too() -> None:
    """At a table without automatic passes Bob, still crossing in the last turn, read
    nothing: the "Last turn" line came only with automatic passes, though the turn ends
    the game either way."""
    snapshot = replace(sixto_last_turn(), auto_pass=False)
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_waits"] == "Last turn: the game ends once everyone is done crossing"


def test_sixto_last_turn_is_told_to_those_done_without_automatic_passes_too() -> None:
    """At a table without automatic passes Ann, done crossing in the last turn, read
    nothing, though the game ends once Bob is done (with automatic passes she read it, and
    Bob, still crossing, reads "Last turn" either way)."""
    snapshot = replace(sixto_last_turn(), auto_pass=False)
    ann = live_context(snapshot, Viewer(seat=0, host=False), "sheet")
    assert ann["roll_waits"] == (
        "No roll yet: the game ends after this turn, once Bob is done crossing "
        "(the host's device may tap Done crossing for them)"
    )


def test_solo_sixto_says_last_turn_only_once_two_dice_fit_no_box() -> None:
    """Solo, two dice left unused end the game (rulebook), so every turn began with six
    unused dice and Ann read "Last turn: the game ends once everyone is done crossing"
    until she had crossed with five. True of tapping Done then, which her Done button
    says; the line now comes only once two dice fit no box, and says that."""
    six = [("red", 1), ("orange", 2), ("yellow", 3), ("green", 4), ("blue", 5), ("purple", 6)]
    start = snapshot_of("sixto", ["Ann"], [])
    numbers = start.state.sheets[0].numbers  # box 9's digit in each row
    nines = roll(*((colour, int(row[8])) for (colour, _), row in zip(six, numbers, strict=True)))
    first_turn: list[Any] = [nines, Keep(0)]
    ann = Viewer(seat=0, host=False)
    assert live_context(snapshot_of("sixto", ["Ann"], first_turn), ann, "sheet")["roll_waits"] == ""
    # box 9 in five rows: those rows can take no more crosses, so their dice fit no box
    first_turn += [SixtoCross(0, colour, 9) for colour, _ in six[:5]]
    second_turn = [*first_turn, Done(0), nines, Keep(0)]
    snapshot = snapshot_of("sixto", ["Ann"], second_turn)
    assert snapshot.turn.ends_by_hand
    assert live_context(snapshot, ann, "sheet")["roll_waits"] == (
        "Last turn: two dice fit no box, so the game ends once you are done crossing"
    )


def test_sixto_buttons_for_keep_reroll_and_done() -> None:
    six = [("red", 1), ("orange", 2), ("yellow", 3), ("green", 4), ("blue", 5), ("purple", 6)]
    snapshot = snapshot_of("sixto", ["Ann", "Bob"], [roll(*six)])
    labels = [b["label"] for b in sheet_context(snapshot, 0, Viewer(0, False))["buttons"]]
    assert labels == ["Keep this roll", "Re-roll all dice"]
    assert sheet_context(snapshot, 1, Viewer(1, False))["buttons"] == []


def test_a_qwixx_lock_is_described_as_a_lock() -> None:
    """The log and the camera line name a cross of a row's last number as the lock it is
    (red and yellow end at 12, green and blue at 2); other crosses stay plain."""
    game = find_game("qwixx")
    assert describe_move(game, Cross(player=0, colour="red", number=12)).endswith("lock the row")
    assert describe_move(game, Cross(player=1, colour="blue", number=2)).endswith("lock the row")
    assert describe_move(game, Cross(player=0, colour="red", number=2)) == "Cross red 2"
    assert describe_move(game, Cross(player=0, colour="green", number=12)) == "Cross green 12"


def white_roll(white1: int, white2: int) -> Any:
    """A Qwixx roll of two white dice, every coloured die showing 1."""
    return roll(("white", white1), ("white", white2), *[(c, 1) for c in ROW_COLOURS])


def red_row(snapshot: Any, seat: int, viewer: Viewer) -> dict[str, Any]:
    row: dict[str, Any] = sheet_context(snapshot, seat, viewer)["rows"][0]
    assert row["colour"] == "red"
    return row


def test_a_row_locking_on_the_white_sum_stays_open_to_whoever_may_lock_it_too() -> None:
    """Ann locks red on the white sum 12; Bob, with five red crosses, is still to act and
    may lock red too (rulebook: "several players can lock the same colour at once"). His
    sheet shows red open, its lock box legal and no box struck through, on his device and
    on the scoreboard alike; Ann (done) and Cid (no red cross: no lock) see it closed.
    Once Bob has acted he sees it closed too, and it stays so after the step."""
    names = ["Ann", "Bob", "Cid"]
    moves: list[Any] = []
    for turn, (w1, w2) in enumerate([(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)]):
        moves += [white_roll(w1, w2), Cross(0, "red", w1 + w2), Cross(1, "red", w1 + w2), Pass(2)]
        moves.append(Pass(turn % 3))  # the colour step
    sixes = white_roll(6, 6)
    locking = snapshot_of("qwixx", names, [*moves, sixes, Cross(0, "red", 12)])
    bob = red_row(locking, 1, Viewer(seat=1, host=False))
    assert not bob["lock"]["closed"] and bob["lock"]["legal"]
    assert json.loads(bob["lock"]["move"])["number"] == 12
    assert [b["number"] for b in bob["boxes"] if b["lost"]] == []
    assert [b["number"] for b in bob["boxes"] if b["legal"]] == [12]
    scoreboard = red_row(locking, 1, Viewer(seat=None, host=False))
    assert not scoreboard["lock"]["closed"] and not any(b["lost"] for b in scoreboard["boxes"])
    for seat in (0, 2):  # Ann locked it; Cid cannot lock it
        row = red_row(locking, seat, Viewer(seat=seat, host=False))
        assert row["lock"]["closed"], seat
        assert all(b["lost"] or b["crossed"] for b in row["boxes"]), seat
    bob_passed = snapshot_of("qwixx", names, [*moves, sixes, Cross(0, "red", 12), Pass(1)])
    assert red_row(bob_passed, 1, Viewer(seat=1, host=False))["lock"]["closed"]
    for bob_acts in (Pass(1), Cross(1, "red", 12)):
        ended = snapshot_of("qwixx", names, [*moves, sixes, Cross(0, "red", 12), bob_acts, Pass(2)])
        assert ended.turn.step == "colour"
        for seat in range(3):
            row = red_row(ended, seat, Viewer(seat=seat, host=False))
            assert row["lock"]["closed"] and not row["lock"]["legal"], (bob_acts, seat)
            assert all(b["lost"] or b["crossed"] for b in row["boxes"]), (bob_acts, seat)


def test_sixto_says_in_sentences_whom_it_waits_for_and_what_the_next_roll_ends() -> None:
    """Sixto's banner said "Reroll: waiting for Eve", and the next roll's fold "(it passes
    for Eve, Finn and Gus)": words of the engine, not of the players."""
    first = roll(
        *((colour, 3) for colour in ("red", "orange", "yellow", "green", "blue", "purple"))
    )
    players = ["Eve", "Finn", "Gus"]
    rolled = snapshot_of("sixto", players, [first])
    finn = Viewer(seat=1, host=False)
    assert live_context(rolled, finn, "sheet")["turn"]["text"] == (
        "Waiting for Eve to keep this roll or re-roll all the dice"
    )
    crossing = live_context(snapshot_of("sixto", players, [first, Keep(0)]), finn, "sheet")
    assert crossing["turn"]["text"] == (
        "Waiting for you, Eve and Gus to cross with these dice, then tap Done crossing"
    )
    # Finn rolls next: his own device says "you", as its banner does
    assert crossing["roll_entry"]["whose"] == "your"
    assert crossing["roll_entry"]["closes"] == (
        "it ends this crossing for you, Eve and Gus: you all cross nothing more this turn"
    )
    board = live_context(
        snapshot_of("sixto", players, [first, Keep(0)]), Viewer(seat=None, host=True), "table"
    )
    assert board["roll_entry"]["whose"] == "Finn's"
    assert board["roll_entry"]["closes"] == (
        "it ends this crossing for Eve, Finn and Gus: they cross nothing more this turn"
    )


def test_the_next_roll_fold_names_its_own_player_you() -> None:
    """Bob's own phone read "Enter Bob's next roll (it ends this crossing for Bob and Ann:
    they cross nothing more this turn)" under a banner that calls him "you"; the host who
    plays Ann read "... for Ann and Bob: they cross nothing more this turn, and Ann takes
    a penalty" about herself."""
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], QWIXX_TURN)
    bob = live_context(snapshot, Viewer(seat=1, host=False), "sheet")
    assert bob["roll_entry"] is None  # rolled now, it would cost Ann a penalty
    crossed = snapshot_of("qwixx", ["Ann", "Bob"], [*QWIXX_TURN, Cross(0, "red", 7)])
    bob = live_context(crossed, Viewer(seat=1, host=False), "sheet")
    assert (bob["roll_entry"]["whose"], bob["roll_entry"]["closes"]) == (
        "your",
        "it ends this crossing for you and Ann: you both cross nothing more this turn",
    )
    ann_hosting = live_context(snapshot, Viewer(seat=0, host=True), "sheet")
    assert ann_hosting["roll_entry"]["closes"] == (
        "it ends this crossing for you and Bob: you both cross nothing more this turn, "
        "and you take a penalty"
    )
    passed = snapshot_of("qwixx", ["Ann", "Bob"], [*QWIXX_TURN, Pass(1), Cross(0, "red", 7)])
    ann = live_context(passed, Viewer(seat=0, host=True), "sheet")
    assert (ann["roll_entry"]["whose"], ann["roll_entry"]["closes"]) == (
        "Bob's",
        "it ends this crossing for you: you cross nothing more this turn",
    )


def test_a_players_own_device_says_you_where_the_banner_names_them() -> None:
    """Eve's own sheet said "Waiting for Eve to keep this roll ...": on her device she is
    "you" ("Your turn: ..."); the shared table screen keeps every name."""
    first = roll(
        *((colour, 3) for colour in ("red", "orange", "yellow", "green", "blue", "purple"))
    )
    players = ["Eve", "Finn", "Gus"]
    eve, finn = Viewer(seat=0, host=False), Viewer(seat=1, host=False)
    rolled = snapshot_of("sixto", players, [first])
    assert live_context(rolled, eve, "sheet")["turn"]["text"] == (
        "Your turn: keep this roll or re-roll all the dice"
    )
    host_playing_eve = Viewer(seat=0, host=True)
    assert live_context(rolled, host_playing_eve, "table")["turn"]["text"] == (
        "Waiting for Eve to keep this roll or re-roll all the dice"
    )
    crossing = snapshot_of("sixto", players, [first, Keep(0)])
    assert live_context(crossing, finn, "sheet")["turn"]["text"] == (
        "Waiting for you, Eve and Gus to cross with these dice, then tap Done crossing"
    )
    # a game without sentences of its own (Qwixx: "White sum: waiting for ...")
    qwixx = snapshot_of("qwixx", ["Ann", "Bob"], [*QWIXX_TURN, Pass(player=1)])
    ann, bob = Viewer(seat=0, host=False), Viewer(seat=1, host=False)
    assert live_context(qwixx, ann, "sheet")["turn"]["text"] == "White sum: your turn"
    assert live_context(qwixx, bob, "sheet")["turn"]["text"] == "White sum: waiting for Ann"
    # the roller and Sixes' pound
    new = snapshot_of("qwixx", ["Ann", "Bob"], [])
    assert live_context(new, ann, "sheet")["turn"]["text"] == "You roll the dice"
    assert live_context(new, bob, "sheet")["turn"]["text"] == "Ann rolls the dice"
    pound = snapshot_of("sixes", ["Ann", "Bob", "Cid"], [])
    assert live_context(pound, Viewer(seat=0, host=False), "sheet")["turn"]["text"] == (
        "Pound: waiting for Bob and Cid, or you roll"
    )
    assert live_context(pound, Viewer(seat=2, host=False), "sheet")["turn"]["text"] == (
        "Pound: waiting for you and Bob, or Ann rolls"
    )


def test_a_player_named_you_is_named_on_every_other_screen() -> None:
    """ "You" on a device is its own player's seat, never a name that reads so: a player
    named "you" made the table view and the others' sheets say "Your turn ..." and
    "you roll the dice" (the words were compared, not the seats)."""
    players = ["you", "Bob"]
    host, bob = Viewer(seat=None, host=True), Viewer(seat=1, host=False)
    new = snapshot_of("qwixx", players, [])
    assert live_context(new, host, "table")["turn"]["text"] == "You rolls the dice"
    assert live_context(new, bob, "sheet")["turn"]["text"] == "You rolls the dice"
    qwixx = snapshot_of("qwixx", players, [*QWIXX_TURN, Pass(player=1)])
    assert live_context(qwixx, host, "table")["turn"]["text"] == "White sum: waiting for you"
    assert live_context(qwixx, bob, "sheet")["turn"]["text"] == "White sum: waiting for you"
    first = roll(
        *((colour, 3) for colour in ("red", "orange", "yellow", "green", "blue", "purple"))
    )
    sixto = snapshot_of("sixto", players, [first])
    assert live_context(sixto, bob, "sheet")["turn"]["text"] == (
        "Waiting for you to keep this roll or re-roll all the dice"
    )


def test_a_qwixx_pass_writes_its_cost_with_the_shared_minus_sign() -> None:
    """The pass button's cost is the sheet's own "Penalties −5" (`score_text`, the templates'
    `score` filter), not a sign the view writes itself."""
    colour_step = [*QWIXX_TURN, Pass(player=0), Pass(player=1)]
    snapshot = snapshot_of("qwixx", ["Ann", "Bob"], colour_step)
    buttons = sheet_context(snapshot, 0, Viewer(seat=0, host=False))["buttons"]
    (button,) = [b for b in buttons if '"pass"' in b["move"]]
    assert button["label"] == f"Pass: {score_text(-5)} penalty"


def test_only_the_shared_helper_writes_a_minus_sign() -> None:
    """Every negative number a screen shows goes through companion.table.words.score_text
    (one character everywhere): no other code of companion/ writes U+2212 (docstrings may
    name it)."""
    package = Path(__file__).resolve().parents[2] / "companion"
    writers = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "\N{MINUS SIGN}" in node.value
                and id(node) not in docstrings
            ):
                writers.append(f"{path.relative_to(package)}:{node.lineno}")
    assert [w.split(":")[0] for w in writers] == ["table/words.py"], writers


def test_sixto_done_that_ends_the_game_says_so_and_asks_once() -> None:
    """Sixto's last turn (Ann can cross nothing more): Bob's "Done crossing" ends the game
    for the table, and read like any other Done, sent at the first tap. It says so and
    asks once, as Qwixx's game-ending pass does; Ann's earlier Done ended nothing."""
    six = [("red", 1), ("orange", 2), ("yellow", 3), ("green", 4), ("blue", 5), ("purple", 6)]
    start = snapshot_of("sixto", ["Ann", "Bob"], [])
    numbers = start.state.sheets[0].numbers  # Ann's sheet: box 9's digit in each row
    dice = roll(*((colour, int(row[8])) for (colour, _), row in zip(six, numbers, strict=True)))
    moves: list[Any] = [dice, Keep(0), *(SixtoCross(0, colour, 9) for colour, _ in six)]

    def done_button(snapshot: Any, seat: int) -> dict[str, Any]:
        buttons = sheet_context(snapshot, seat, Viewer(seat, False))["buttons"]
        (button,) = [b for b in buttons if '"done"' in b["move"]]
        return dict(button)

    ann = done_button(snapshot_of("sixto", ["Ann", "Bob"], moves), 0)
    assert ann["label"] == "Done crossing" and "confirm" not in ann
    bob = done_button(snapshot_of("sixto", ["Ann", "Bob"], [*moves, Done(0)]), 1)
    assert bob["label"] == "Done crossing, ends the game"
    assert bob["confirm"] == "Tap again to be done crossing: the game ends"


def qwixx_next_roll_costs_bob_a_penalty() -> Snapshot:
    """Ann and Bob's Qwixx in Ann's second turn, Bob not yet acted: the next roll, entered
    now, would pass for Bob with a penalty."""
    first_turn = [*QWIXX_TURN, Pass(1), Pass(0), Pass(0)]
    return snapshot_of("qwixx", ["Ann", "Bob"], [*first_turn, *QWIXX_TURN])


def qwixx_last_pass_to_come(passed: int) -> Snapshot:
    """Three penalties each, a white sum, and seat `passed` has passed: the other's pass
    now could end the game (a fourth penalty)."""
    moves: list[Any] = []
    for active in [0, 1] * 3:  # three penalties each
        moves += [*QWIXX_TURN, Pass((active + 1) % 2), Pass(active), Pass(active)]
    return snapshot_of("qwixx", ["Ann", "Bob"], [*moves, *QWIXX_TURN, Pass(passed)])


def test_the_host_who_plays_is_not_pointed_to_the_hosts_device() -> None:
    """Ann hosts from her own phone and plays: her sheet read "Your next roll waits for
    Bob: ... (the host's device may enter it)", "No roll yet: ... (the host's device may
    pass for them)" and Sixto's "(the host's device may tap Done crossing for them)",
    though hers is the host's device and, seated, enters no roll that costs Bob a penalty
    (penalty_for_other) nor marks his sheet. A device that is not the host's keeps the
    pointer."""
    host_ann, ann = Viewer(seat=0, host=True), Viewer(seat=0, host=False)
    rolled = qwixx_next_roll_costs_bob_a_penalty()
    assert live_context(rolled, host_ann, "sheet")["roll_waits"] == (
        "Your next roll waits for Bob: rolled now, it would pass for Bob with a penalty"
    )
    assert live_context(rolled, ann, "sheet")["roll_waits"].endswith(
        "(the host's device may enter it)"
    )
    bob_passed = qwixx_last_pass_to_come(passed=0)
    assert bob_passed.turn.ends_by_hand and bob_passed.turn.players == (1,)
    assert live_context(bob_passed, host_ann, "sheet")["roll_waits"] == (
        "No roll yet: Bob must cross or pass first, since a pass now could end the game"
    )
    assert live_context(bob_passed, ann, "sheet")["roll_waits"].endswith(
        "(the host's device may pass for them)"
    )
    sixto = sixto_last_turn()
    assert live_context(sixto, host_ann, "sheet")["roll_waits"] == (
        "No roll yet: the game ends after this turn, once Bob is done crossing"
    )
    assert live_context(sixto, ann, "sheet")["roll_waits"].endswith(
        "(the host's device may tap Done crossing for them)"
    )


def test_no_device_is_pointed_to_the_host_while_the_hosts_device_is_seated() -> None:
    """Ann hosts from her phone and plays: Bob's phone read "... (the host's device may
    enter it)", "(... may pass for them)" and Sixto's "(... may tap Done crossing for
    them)", though the only host's device is Ann's sheet, which acts as Ann only (it
    enters no roll that costs Bob a penalty: penalty_for_other, nor marks his sheet:
    Viewer.may_mark). With the host's device at no seat the pointer stays."""
    ann, bob = Viewer(seat=0, host=False), Viewer(seat=1, host=False)
    rolled = qwixx_next_roll_costs_bob_a_penalty()
    seated = replace(rolled, host_seated=True)
    assert live_context(seated, ann, "sheet")["roll_waits"] == (
        "Your next roll waits for Bob: rolled now, it would pass for Bob with a penalty"
    )
    assert live_context(rolled, ann, "sheet")["roll_waits"].endswith(
        "(the host's device may enter it)"
    )
    bob_passed = qwixx_last_pass_to_come(passed=1)
    assert bob_passed.turn.ends_by_hand and bob_passed.turn.players == (0,)
    assert live_context(replace(bob_passed, host_seated=True), bob, "sheet")["roll_waits"] == (
        "No roll yet: Ann must cross or pass first, since a pass now could end the game"
    )
    assert live_context(bob_passed, bob, "sheet")["roll_waits"].endswith(
        "(the host's device may pass for them)"
    )
    sixto = sixto_last_turn()
    assert live_context(replace(sixto, host_seated=True), Viewer(0, False), "sheet")[
        "roll_waits"
    ] == ("No roll yet: the game ends after this turn, once Bob is done crossing")
