"""The Sixmix page (companion/web/views/sixmix.py, web/templates/games/sixmix.html): every
legal placement is one (die, space) tap, nothing the engine does not list is highlighted,
used spaces and viewers who may not act send nothing; the board, chips and round result as
the paper board shows them; and the same through the API (create_app + TestClient)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from companion.rules.base import Die, Move
from companion.rules.sixmix import GAME, Options, Place
from companion.simulate import random_action
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot
from companion.web.app import create_app
from companion.web.settings import Settings
from companion.web.views import live_context, move_attr, sheet_context
from tests.web.helpers import act, create_table, roll, roll_json, seat_player, snapshot_of

THREE = ["Kari", "Ola", "Mia"]  # green, blue, red
FIRST_ROLL = roll(*[("green", v) for v in (5, 2, 5, 1, 6, 3)])


def offered(context: dict[str, Any]) -> list[tuple[str, bool]]:
    """Every (move JSON, legal) a sheet offers: the spaces of every die's board copy and
    the buttons. A move offered twice appears twice."""
    found = [
        (cell["move"], cell["legal"])
        for pick in context["picks"]
        for row in pick["cells"]
        for cell in row
        if cell["move"]
    ]
    return found + [(b["move"], b["legal"]) for b in context["buttons"] if b["move"]]


def engine_moves(snapshot: Snapshot, seat: int) -> list[str]:
    return sorted(move_attr(GAME, m) for m in GAME.legal_moves(snapshot.state, seat))


def random_positions(players: int, seed: int, count: int, every: int) -> Iterator[Snapshot]:
    """Snapshots along one random game whose moves come from the engine's legal_moves."""
    rng = random.Random(seed)
    state = GAME.setup(GAME.options_for(players))
    moves: list[Move] = []
    for _ in range(count):
        if GAME.outcome(state) is not None:
            break
        move = random_action(GAME, state, rng)
        moves.append(move)
        state = GAME.play(state, move)
    names = [f"P{i}" for i in range(players)]
    for n in range(0, len(moves) + 1, every):
        yield snapshot_of("sixmix", names, moves[:n])


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (3, 5), (5, 8)])
def test_every_legal_placement_is_offered_once_and_nothing_else_is_legal(
    players: int, seed: int
) -> None:
    checked = 0
    for snapshot in random_positions(players, seed, count=140, every=3):
        state = snapshot.state
        free = sum(cell == "" for row in state.board for cell in row)
        for seat in range(players):
            context = sheet_context(snapshot, seat, Viewer(seat=seat, host=False))
            moves = offered(context)
            legal = sorted(m for m, is_legal in moves if is_legal)
            assert legal == engine_moves(snapshot, seat), (snapshot.state_id, seat)
            assert len({m for m, _ in moves}) == len(moves)  # no move twice
            if context["placing"]:
                checked += 1
                # every distinct die with every free space: the engine's moves and the
                # illegal ones whose reason the player should read
                assert len(moves) == len(set(state.roll)) * free
                assert {json.loads(m)["player"] for m, _ in moves} == {seat}
            else:
                assert moves == []
    assert checked > 10  # the random games did reach placements


def test_used_spaces_send_nothing_and_viewers_who_may_not_act_get_no_moves() -> None:
    placing = 0
    for snapshot in random_positions(3, seed=11, count=40, every=1):
        active = snapshot.state.active
        own = sheet_context(snapshot, active, Viewer(seat=active, host=False))
        placing += bool(own["picks"])
        for pick in own["picks"]:
            for row, cells in zip(own["board"], pick["cells"], strict=True):
                for space, cell in zip(row["spaces"], cells, strict=True):
                    assert (cell["move"] is None) == (space["die"] is not None)
        for seat in range(3):
            for viewer in (
                Viewer(seat=(seat + 1) % 3, host=False),  # another player's device
                Viewer(seat=None, host=False),  # a watching screen
            ):
                context = sheet_context(snapshot, seat, viewer)
                assert offered(context) == [] and context["picks"] == []
            if seat != active:  # her own device, but not her turn
                assert offered(sheet_context(snapshot, seat, Viewer(seat, False))) == []
        # the host's table view may place for the active player
        host = sheet_context(snapshot, active, Viewer(seat=None, host=True))
        assert sorted(m for m, ok in offered(host) if ok) == engine_moves(snapshot, active)
    assert placing > 10  # positions where the active player places were checked


def test_a_space_sends_the_picked_die_and_a_foreign_first_space_reaches_the_engine() -> None:
    snapshot = snapshot_of("sixmix", THREE, [FIRST_ROLL], Options(players=3))
    context = sheet_context(snapshot, 0, Viewer(seat=0, host=False))
    # equal dice are one pick (the engine lists one move per face), high values first
    assert [(p["label"], p["count"]) for p in context["picks"]] == [
        ("green 6", 1),
        ("green 5", 2),
        ("green 3", 1),
        ("green 2", 1),
        ("green 1", 1),
    ]
    assert context["picked"] is None  # several dice: she picks one first
    five = context["picks"][1]
    rows = [r["colour"] for r in context["board"]]
    blue_first = five["cells"][rows.index("blue")][0]
    assert json.loads(blue_first["move"]) == {
        "kind": "place",
        "player": 0,
        "die": {"colour": "green", "value": 5},
        "row": "blue",
        "space": 0,
    }
    assert not blue_first["legal"]  # offered, so that Kari reads why not
    assert five["cells"][rows.index("green")][0]["legal"]
    assert [(r["label"], r["owner_name"], r["mine"]) for r in context["board"]] == [
        ("Green", "Kari", True),
        ("Blue", "Ola", False),  # every seat's name reaches each device's sheet
        ("Red", "Mia", False),
    ]
    assert len({r["pattern"] for r in context["board"]}) == 3  # not only colour tells rows apart
    assert live_context(snapshot, Viewer(0, False), "sheet")["dice"][0] == {
        "colour": "green",
        "value": 5,
        "css": "c-green",
    }


def test_the_board_shows_dice_running_totals_and_a_single_die_is_picked_at_once() -> None:
    moves: list[Move] = [
        FIRST_ROLL,
        Place(0, FIRST_ROLL.dice[0], "green", 0),  # green 5 in green's 100,000
        roll(*[("blue", v) for v in (1, 4, 4, 4, 4, 4)]),
        Place(1, Die("blue", 1), "green", 2),  # blue 1 in green 1,000
    ]
    snapshot = snapshot_of("sixmix", THREE, moves, Options(players=3))
    context = sheet_context(snapshot, 0, Viewer(seat=0, host=False))
    green = context["board"][0]
    assert [s["die"] and (s["die"]["colour"], s["die"]["value"]) for s in green["spaces"]] == [
        ("green", 5),
        None,
        ("blue", 1),
        None,
        None,
        None,
    ]
    assert (green["total"], green["total_text"], green["filled"]) == (501_000, "501,000", 2)
    assert context["board"][1]["total_text"] == "0"
    # Mia's roll of one value: one pick, already chosen
    last = snapshot_of("sixmix", THREE, [*moves, roll(*[("red", 6)] * 6)], Options(players=3))
    mia = sheet_context(last, 2, Viewer(seat=2, host=False))
    assert [p["label"] for p in mia["picks"]] == ["red 6"] and mia["picked"] == mia["picks"][0][
        "id"
    ]


def full_round() -> list[Move]:
    """Round 1 of a 3-player game where each player fills her own row left to right:
    green 654,321, blue 333,222 (two triplets), red 654,322."""
    rows = {"green": [6, 5, 4, 3, 2, 1], "blue": [3, 3, 3, 2, 2, 2], "red": [6, 5, 4, 3, 2, 2]}
    moves: list[Move] = []
    for space in range(6):
        for seat, colour in enumerate(rows):
            values = rows[colour][space:]
            moves.append(roll(*[(colour, v) for v in values]))
            moves.append(Place(seat, Die(colour, values[0]), colour, space))
    return moves


def test_the_round_end_shows_points_per_row_and_chips_per_round() -> None:
    snapshot = snapshot_of("sixmix", THREE, full_round(), Options(players=3))
    assert snapshot.state.round == 2 and snapshot.state.active == 1  # blue was lowest
    context = sheet_context(snapshot, 0, Viewer(seat=0, host=False))
    result = context["last_round"]
    assert result["number"] == 1
    assert [(r["label"], r["value"], r["why"], r["points"]) for r in result["rows"]] == [
        ("Green", "654,321", "second +1", 1),
        ("Blue", "333,222", "triplets +2", 2),
        ("Red", "654,322", "highest +2", 2),
    ]
    assert context["chips"]["rounds"] == [{"round": 1, "chips": [1, 2, 2]}]
    assert context["chips"]["totals"] == [1, 2, 2]
    assert context["own_rounds"] == [{"round": 1, "chips": 1}]
    assert all(r["total"] == 0 for r in context["board"])  # the next round's empty board


# -- the same through the API ------------------------------------------------------------


@pytest.fixture
def table(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A 3-player Sixmix table: the host's client and Kari's (seat 0) and Ola's devices."""
    app = create_app(Settings(data_dir=tmp_path))
    with TestClient(app) as host, TestClient(app) as kari, TestClient(app) as ola:
        created = create_table(host, "sixmix", THREE, {"players": 3})
        seat_player(kari, created["code"], created["table_id"], 0)
        seat_player(ola, created["code"], created["table_id"], 1)
        yield {**created, "host": host, "kari": kari, "ola": ola}


def data_moves(html: str) -> list[dict[str, Any]]:
    return [json.loads(m.replace("&#34;", '"')) for m in re.findall(r'data-move="([^"]+)"', html)]


def test_a_roll_a_placement_and_a_refusal_through_the_api(table: dict[str, Any]) -> None:
    tid, kari, ola = table["table_id"], table["kari"], table["ola"]
    green = roll_json(*[("green", v) for v in (5, 2, 5, 1, 6, 3)])
    assert act(kari, tid, green, "kari-roll-1", expected_state_id=0).status_code == 200
    page = kari.get(f"/t/{tid}/live?view=sheet").text
    moves = data_moves(page)
    place = {
        "kind": "place",
        "player": 0,
        "die": {"colour": "green", "value": 6},
        "row": "green",
        "space": 0,
    }
    assert place in moves and len(moves) == 5 * 18  # five distinct dice, 18 free spaces
    assert data_moves(ola.get(f"/t/{tid}/live?view=sheet").text) == []  # not her turn

    # the move a box carries is accepted
    assert act(kari, tid, place, "kari-place-1", expected_state_id=1).json() == {
        "state_id": 2,
        "duplicate": False,
    }
    seen = ola.get(f"/t/{tid}/live?view=sheet").text
    assert 'aria-label="Green 100,000: green 6"' in seen
    assert ">600,000<" in seen

    # Ola rolls and taps red's 100,000 space: refused with the engine's rule, nothing applied
    blue = roll_json(*[("blue", v) for v in (4, 4, 2, 6, 1, 3)])
    assert act(ola, tid, blue, "ola-roll-01").status_code == 200
    foreign = {**place, "player": 1, "die": {"colour": "blue", "value": 6}, "row": "red"}
    assert foreign in data_moves(ola.get(f"/t/{tid}/live?view=sheet").text)
    refused = act(ola, tid, foreign, "ola-place-1", expected_state_id=3)
    assert refused.status_code == 409
    assert refused.json() == {
        "reason": "illegal_move",
        "rule": "owner_fills_first_space",
        "message": "only Mia may fill red's 100,000 space",
    }
    # Kari may not place for Ola: her device is bound to her seat
    other = act(kari, tid, {**foreign, "row": "blue"}, "kari-place-2")
    assert other.status_code == 403 and other.json()["reason"] == "not_allowed"
    state = table["host"].get(f"/api/tables/{tid}/state").json()
    assert state["state_id"] == 3 and state["state"]["state"]["board"][2] == [""] * 6


def test_a_finished_game_keeps_its_final_board_with_the_last_round(
    table: dict[str, Any],
) -> None:
    """docs/records/sixmix.json (six rounds, Kari wins the tie on her final row) imported
    through the API: the final board stays, the points of round 6 and the chips show."""
    host = table["host"]
    record = json.loads((Path(__file__).parents[2] / "docs/records/sixmix.json").read_text())
    imported = host.post("/api/import", json=record)
    assert imported.status_code == 201, imported.text
    tid = imported.json()["table_id"]
    state = host.get(f"/api/tables/{tid}/state").json()["state"]["state"]
    html = host.get(f"/t/{tid}/live?view=table").text
    assert "Round 6: points per row" in html
    assert data_moves(html) == []  # nothing to place after the end
    for row, colour in zip(state["board"], state["colours"], strict=True):
        for space, cell in zip(("100,000", "10,000", "1,000", "100", "10", "1"), row, strict=True):
            assert f'aria-label="{colour.capitalize()} {space}: {cell}"' in html
    totals = re.findall(r'class="smx-total"[^>]*>([\d,]+)<', html)
    assert totals[: len(state["colours"])] == [f"{v:,}" for v in state["last_values"]]


def test_a_later_rounds_starter_is_told_why_they_roll_first() -> None:
    """Round 2 of a 3-player game: Ola's blue row had the lowest total of round 1, so she
    starts. Everyone read "Round 2: Ola rolls." and wondered why her (round 1 ended with
    Kari's turn); the hint says the rulebook's reason, until the round's first die is
    placed."""
    moves = full_round()
    snapshot = snapshot_of("sixmix", THREE, moves, Options(players=3))
    kari = sheet_context(snapshot, 0, Viewer(seat=0, host=False))
    assert kari["hint"] == (
        "Round 2: Ola rolls. Ola's blue row had the lowest total of round 1, so Ola starts."
    )
    ola = sheet_context(snapshot, 1, Viewer(seat=1, host=False))
    assert ola["hint"] == (
        "Round 2: roll your dice. Your blue row had the lowest total of round 1, so you start."
    )
    placed = [*moves, roll(*[("blue", 4)] * 6), Place(1, Die("blue", 4), "blue", 0)]
    later = snapshot_of("sixmix", THREE, placed, Options(players=3))
    assert sheet_context(later, 0, Viewer(seat=0, host=False))["hint"] == "Round 2: Mia rolls."
