"""The session: the one mutable holder of a game (states, actions, undo, state id), and
game records, played through the real Qwixx engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.rules.base import Die, Reason, Rejection, Roll
from companion.rules.qwixx import GAME as QWIXX
from companion.rules.qwixx import Cross, Options, Pass
from companion.rules.registry import GAME_NAMES
from companion.rules.session import HOST, RecordError, Session, replay_record

RECORDS = Path(__file__).resolve().parents[2] / "docs" / "records"

KARI_ROLL = Roll(
    dice=(
        Die("white", 4),
        Die("white", 1),
        Die("red", 3),
        Die("yellow", 6),
        Die("green", 5),
        Die("blue", 6),
    )
)


def new_session() -> Session:
    return Session(QWIXX, Options(players=3), ["Kari", "Ola", "Mia"])


def test_state_id_counts_every_change_including_undo() -> None:
    session = new_session()
    assert session.state_id == 0
    session.act(KARI_ROLL)
    session.act(Cross(0, "yellow", 5))
    assert session.state_id == 2
    session.undo(by="0")
    assert session.state_id == 3
    assert len(session.actions) == 1
    assert session.state == session.states[-1]


def test_stale_view_is_refused_and_changes_nothing() -> None:
    session = new_session()
    session.act(KARI_ROLL, expected_state_id=0)
    with pytest.raises(Rejection) as info:
        session.act(Cross(1, "red", 5), expected_state_id=0)
    assert info.value.reason is Reason.STALE_STATE
    assert session.state_id == 1 and len(session.actions) == 1


def test_a_player_marks_only_their_own_sheet() -> None:
    session = new_session()
    session.act(KARI_ROLL)
    with pytest.raises(Rejection) as info:
        session.act(Cross(1, "red", 5), by="0")
    assert info.value.reason is Reason.NOT_ALLOWED
    session.act(Cross(1, "red", 5), by=HOST)  # the host may mark for a player
    assert session.actions[-1].by == HOST


def test_undo_only_by_its_author_or_the_host() -> None:
    session = new_session()
    with pytest.raises(Rejection) as empty:
        session.undo()
    assert empty.value.reason is Reason.NOTHING_TO_UNDO
    session.act(KARI_ROLL)
    session.act(Cross(1, "red", 5))
    with pytest.raises(Rejection) as other:
        session.undo(by="0")
    assert other.value.rule == "undo_own_only"
    assert session.undo(by="1").move == Cross(1, "red", 5)
    assert session.undo(by=HOST).move == KARI_ROLL
    assert session.state == QWIXX.setup(Options(players=3))


def test_record_round_trip_replays_to_the_same_state() -> None:
    session = new_session()
    for move in (KARI_ROLL, Cross(0, "yellow", 5), Cross(1, "red", 5), Pass(2)):
        session.act(move)
    record = json.loads(json.dumps(session.to_record()))
    again = replay_record(record)
    assert again.state == session.state
    assert again.players == ["Kari", "Ola", "Mia"]
    assert [a.by for a in again.actions] == ["camera", "0", "1", "2"]


@pytest.mark.parametrize(
    ("change", "index", "fragment"),
    [
        (lambda r: r.update(schema=99), None, "schema"),
        (lambda r: r.update(game="chess"), None, "unknown game"),
        (lambda r: r.update(actions="none"), None, "'actions' must be a list"),
        (lambda r: r.update(players=[1, 2]), None, "'players'"),
        (lambda r: r["options"].update(players=9), None, "players"),
        (lambda r: r["actions"][1]["move"].update(kind="teleport"), 1, "unknown move kind"),
        (lambda r: r["actions"][1]["move"].update(number="five"), 1, "expected an integer"),
        (lambda r: r["actions"][1]["move"].update(number=3), 1, "white"),
        (lambda r: r["actions"].insert(1, r["actions"][0]), 1, "no roll is expected"),
    ],
)
def test_broken_records_name_the_problem(change, index, fragment) -> None:  # type: ignore[no-untyped-def]
    session = new_session()
    session.act(KARI_ROLL)
    session.act(Cross(0, "yellow", 5))
    record = copy.deepcopy(session.to_record())
    change(record)
    with pytest.raises(RecordError) as info:
        replay_record(record)
    assert info.value.index == index
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_example_record_replays_to_the_end(name: str) -> None:
    record = json.loads((RECORDS / f"{name}.json").read_text())
    session = replay_record(record)
    assert session.outcome() is not None, f"docs/records/{name}.json is not a complete game"
    assert json.loads(json.dumps(session.to_record())) == record
