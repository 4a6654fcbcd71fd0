"""The held camera reading: frozen values and the pure functions that judge a throw, fix
or add a die, match again and confirm, on literal readings (no camera, no server)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from companion.live.settle import RollEvent
from companion.rules.base import DiceSpec, Die, Reason, Rejection, Throw
from companion.rules.sixto import Reroll
from companion.table.held_reading import (
    ADDED,
    CameraRoll,
    DieChange,
    HeldKind,
    HeldReading,
    HeldReadings,
    add_die,
    added_die_side,
    answer_rights,
    confirm_refusal,
    confirmed,
    fix_die,
    fix_refusal,
    held_json,
    judge_throw,
    rematch,
)
from companion.vision.types import UNREADABLE, DieBox, DieReading

QWIXX = ("white", "white", "red", "yellow", "green", "blue")
QWIXX_THROW = Throw(DiceSpec(QWIXX))
SIXTO = ("red", "orange", "yellow", "green", "blue", "purple")
SIXTO_REROLL = Throw(DiceSpec(SIXTO), (Reroll(1),))
IMAGE = np.zeros((480, 640, 3), np.uint8)


def die(x: float, colour: str | None, value: int | None, flags: tuple[str, ...] = ()) -> DieReading:
    return DieReading(DieBox(x, 100.0, 40.0, 40.0), value, 0.9, colour, 0.9, flags)


def event(*dice: DieReading) -> RollEvent:
    return RollEvent(tuple(dice), 30, 3.0, 24, 2.4, 640, 480, IMAGE)


def qwixx_dice(values: tuple[int, ...] = (3, 4, 2, 5, 6, 1)) -> list[DieReading]:
    return [die(60.0 + 90 * i, c, v) for i, (c, v) in enumerate(zip(QWIXX, values, strict=True))]


def held_mismatch() -> HeldReading:
    """Five good Qwixx dice and an unreadable blue one."""
    dice = qwixx_dice()
    dice[5] = die(510.0, "blue", None, (UNREADABLE,))
    outcome = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "auto", "h1")
    assert isinstance(outcome, HeldReading)
    return outcome


def test_a_matching_throw_is_a_roll_to_apply_by_the_camera() -> None:
    outcome = judge_throw(event(*qwixx_dice()), QWIXX_THROW, 7, "t1", "auto", "h1")
    assert isinstance(outcome, CameraRoll)
    assert outcome.by == "camera" and outcome.state_id == 7
    assert sorted((d.colour, d.value) for d in outcome.roll.dice) == sorted(
        zip(QWIXX, (3, 4, 2, 5, 6, 1), strict=True)
    )
    assert outcome.image is IMAGE  # the photo is the event's own frame


def test_in_confirm_mode_a_matching_throw_is_held_with_its_roll() -> None:
    outcome = judge_throw(event(*qwixx_dice()), QWIXX_THROW, 7, "t1", "confirm", "h1")
    assert isinstance(outcome, HeldReading)
    assert outcome.kind == "confirm" and outcome.roll is not None and outcome.problems == ()
    roll = confirmed(outcome)
    assert roll.roll == outcome.roll and roll.by == "camera" and roll.state_id == 7


def test_a_held_throw_implying_moves_names_them() -> None:
    dice = [die(60.0 + 90 * i, c, 2) for i, c in enumerate(SIXTO)]
    outcome = judge_throw(event(*dice), SIXTO_REROLL, 3, "t1", "auto", "h1")
    assert isinstance(outcome, CameraRoll)  # the table makes the implied moves (act_throw)
    held = judge_throw(event(*dice), SIXTO_REROLL, 3, "t1", "confirm", "h1")
    assert isinstance(held, HeldReading)
    assert confirmed(held).roll == held.roll
    assert held_json(held, lambda moves: [m.kind for m in moves])["implies"] == ["reroll"]


def test_a_mismatch_is_held_naming_its_problem_dice() -> None:
    held = held_mismatch()
    assert held.kind == "mismatch" and held.roll is None and held.state_id == 7
    assert [p.kind for p in held.problems] == ["unreadable"]
    assert held.problem_boxes == [held.dice[5].where]
    with pytest.raises(Rejection) as info:
        confirmed(held)
    assert info.value.rule == "fix_first"


def test_fixing_a_die_returns_a_new_reading_that_matches_again_as_the_hosts_roll() -> None:
    held = held_mismatch()
    fixed = fix_die(held, 5, 1, None, remove=False)
    assert held.dice[5].value is None  # the held reading itself is unchanged (frozen)
    assert fixed.dice[5].value == 1 and fixed.dice[5].colour == "blue"
    assert fixed.dice[5].confidence == 1.0 and UNREADABLE not in fixed.dice[5].flags
    outcome = rematch(fixed, QWIXX_THROW)
    assert isinstance(outcome, CameraRoll) and outcome.by == "host" and outcome.state_id == 7
    assert Die("blue", 1) in outcome.roll.dice


def test_a_fix_that_still_mismatches_stays_held_with_the_remaining_problems() -> None:
    confirm = judge_throw(event(*qwixx_dice()), QWIXX_THROW, 7, "t1", "confirm", "h1")
    assert isinstance(confirm, HeldReading)
    removed = fix_die(confirm, 2, None, None, remove=True)  # "the red die is no die"
    outcome = rematch(removed, QWIXX_THROW)
    assert isinstance(outcome, HeldReading)
    # a corrected roll that no longer matches is no roll to confirm
    assert outcome.kind == "mismatch" and outcome.roll is None
    assert [p.kind for p in outcome.problems] == ["missing"] and "red" in outcome.message


def test_bad_fixes_and_additions_are_refused_with_a_named_rule() -> None:
    held = held_mismatch()
    cases: list[tuple[Any, str]] = [
        (lambda: fix_die(held, 6, 2, None, False), "no_such_die"),
        (lambda: add_die(held, 700.0, 50.0, 3, "red", 40.0), "add.x"),
        (lambda: add_die(held, 50.0, -1.0, 3, "red", 40.0), "add.y"),
        (lambda: add_die(held, 60.0, 100.0, 3, "red", 40.0), "on_a_die"),
    ]
    for change, rule in cases:
        with pytest.raises(Rejection) as info:
            change()
        assert info.value.rule == rule
    # a die is named by its index in the request, not by a count from 1 that the page no
    # longer shows ("there is no die 7" named a die nobody could see)
    with pytest.raises(Rejection, match=r"die index 6 is not on the held picture \(its 6 dice"):
        fix_die(held, 6, 2, None, False)


def test_a_missed_die_is_added_where_it_lies() -> None:
    dice = qwixx_dice()[:5]  # the finder missed the blue die
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "auto", "h1")
    assert isinstance(held, HeldReading) and [p.kind for p in held.problems] == ["missing"]
    side = added_die_side(held.dice, held.width, held.height)
    added = add_die(held, 600.0, 300.0, 4, "blue", side)
    assert added.dice[-1].flags == (ADDED,) and added.dice[-1].where.w == 40.0
    outcome = rematch(added, QWIXX_THROW)
    assert isinstance(outcome, CameraRoll) and Die("blue", 4) in outcome.roll.dice


def test_an_added_die_is_as_big_as_the_others_or_as_calibrated() -> None:
    dice = (die(10, "red", 1), DieReading(DieBox(90, 90, 50, 60), 2, 1.0, "red"))
    assert added_die_side(dice, 640, 480) == 50.0  # the median of 40 and 60
    assert added_die_side((), 1280, 720, die_side=42.0, side_frame_width=640) == 84.0
    assert added_die_side((), 640, 480, die_side=42.0) == 42.0
    assert added_die_side((), 640, 480) == pytest.approx(0.09 * 480)


def test_the_held_json_lists_every_die_by_index() -> None:
    body: dict[str, Any] = held_json(held_mismatch(), lambda moves: [m.kind for m in moves])
    assert body["id"] == "h1" and body["kind"] == "mismatch" and body["implies"] == []
    assert [d["index"] for d in body["dice"]] == list(range(6))
    assert body["dice"][5]["flags"] == [UNREADABLE]
    assert body["roll"] is None and body["problems"][0]["kind"] == "unreadable"


def test_a_held_reading_is_taken_only_at_its_state() -> None:
    holder = HeldReadings()
    held = held_mismatch()
    holder.put(held)
    table = SimpleNamespace(table_id="t1", snapshot=SimpleNamespace(state_id=7))
    assert holder.take(table, "h1") is held  # type: ignore[arg-type]
    with pytest.raises(Rejection) as gone:
        holder.take(table, "other")  # type: ignore[arg-type]
    assert gone.value.rule == "no_such_reading"
    # the game moved on in a way that ends the question (an undo since: no moves to tell);
    # players' moves of the same throw carry it: tests/table/test_camera_pass.py
    moved_on = SimpleNamespace(
        table_id="t1",
        snapshot=SimpleNamespace(state_id=8, throw=held.throw),
        session=SimpleNamespace(moves_since=lambda state_id: None),
    )
    with pytest.raises(Rejection) as stale:
        holder.take(moved_on, "h1")  # type: ignore[arg-type]
    assert stale.value.reason is Reason.STALE_STATE and holder.picture("t1") is None


def test_a_roll_event_carries_its_own_frame() -> None:
    """The settle stage puts the frame that completed the streak into the event, so the
    photo never comes from a later frame the camera read meanwhile."""
    from companion.live.settle import Settler
    from companion.vision.types import Frame, FrameReading

    settler = Settler()
    reading = FrameReading(640, 480, tuple(qwixx_dice()))
    events = []
    for index in range(12):
        image = np.full((480, 640, 3), 40, np.uint8)
        image[0, 0, 0] = index  # each frame its own picture (one pixel: no motion)
        found = settler.feed(Frame(image, index, index / 30), reading)
        if found is not None:
            events.append((found, image))
    assert len(events) == 1
    found, image = events[0]
    assert found.image is image
    assert replace(found, image=None) == found  # the picture is evidence, not identity


# -- apply sure rolls, ask only about the unsure dice (issue 14 item 4) ------------------


def sure_dice(*confidences: float) -> list[DieReading]:
    """The six Qwixx dice of `qwixx_dice`, each with its confidence."""
    return [replace(d, confidence=c) for d, c in zip(qwixx_dice(), confidences, strict=True)]


def test_a_sure_roll_is_applied_at_once_in_mode_sure() -> None:
    from companion.table.camera_decision import decider

    dice = sure_dice(0.999, 0.999, 0.999, 0.999, 0.999, 0.999)
    outcome = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "sure", "h1", decider(0.99))
    assert isinstance(outcome, CameraRoll) and outcome.by == "camera"


def test_an_unsure_roll_asks_about_the_unsure_die_only_with_its_two_likeliest_values() -> None:
    from companion.table.camera_decision import decider

    dice = sure_dice(0.999, 0.999, 0.6, 0.999, 0.999, 0.999)
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "sure", "h1", decider(0.99))
    assert isinstance(held, HeldReading) and held.kind == "unsure"
    assert [u.index for u in held.unsure] == [2]
    assert held.unsure[0].choices == (2, 5)  # the red die read 2: 2 first, then the face under
    assert held.problem_boxes == [held.dice[2].where]  # the picture marks only that die
    body = held_json(held, lambda moves: [m.kind for m in moves])
    assert body["unsure"] == [{"index": 2, "choices": [2, 5]}]
    assert body["message"] == "the camera is not sure of 1 die"
    # one tap on a value answers the die: the roll is applied as that player's
    outcome = rematch(fix_die(held, 2, 5, None, remove=False), QWIXX_THROW, by="0")
    assert isinstance(outcome, CameraRoll) and outcome.by == "0"
    assert Die("red", 5) in outcome.roll.dice


def test_two_unsure_dice_wait_for_both_answers() -> None:
    from companion.table.camera_decision import decider

    dice = sure_dice(0.5, 0.999, 0.6, 0.999, 0.999, 0.999)
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "sure", "h1", decider(0.99))
    assert isinstance(held, HeldReading) and [u.index for u in held.unsure] == [0, 2]
    first = rematch(fix_die(held, 0, 3, None, remove=False), QWIXX_THROW, by="0")
    assert isinstance(first, HeldReading) and [u.index for u in first.unsure] == [2]
    assert first.kind == "unsure" and first.message == "the camera is not sure of 1 die"
    second = rematch(fix_die(first, 2, 2, None, remove=False), QWIXX_THROW, by="0")
    assert isinstance(second, CameraRoll)


def test_without_a_shipped_threshold_no_roll_is_sure() -> None:
    """An uncalibrated classifier makes no promise: in mode "sure" every die is asked."""
    from companion.table.camera_decision import decider

    dice = sure_dice(1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "sure", "h1", decider(None))
    assert isinstance(held, HeldReading) and len(held.unsure) == 6


def test_the_table_page_says_what_the_camera_does_in_each_mode() -> None:
    from companion.table.camera_decision import mode_line
    from companion.table.camera_runtime import default_camera_mode

    assert default_camera_mode(live_camera=True) == "confirm"  # a webcam: confirm every roll
    assert "Use this roll" in mode_line("confirm", 0.99)
    assert "at once" in mode_line("auto", None)
    assert "unsure dice only" in mode_line("sure", 0.99)
    assert "sure of none" in mode_line("sure", None)


def test_confirm_mode_marks_the_unsure_dice_and_use_this_roll_accepts_them_as_read() -> None:
    from companion.table.camera_decision import decider

    dice = sure_dice(0.999, 0.999, 0.6, 0.999, 0.999, 0.999)
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "confirm", "h1", decider(0.99))
    assert isinstance(held, HeldReading) and held.kind == "confirm"
    assert [u.index for u in held.unsure] == [2]
    assert confirmed(held).roll == held.roll
    # a removed die moves the unsure dice after it up one
    removed = fix_die(held, 0, None, None, remove=True)
    assert [u.index for u in removed.unsure] == [1]


def test_a_roll_to_confirm_stays_a_question_while_each_misread_die_is_fixed() -> None:
    """Issue 26 item 4: fixing one die of a roll to confirm does not apply it, so a second
    misread die can be fixed too; "Use this roll" then applies both fixes as the fixer's."""
    held = judge_throw(event(*qwixx_dice()), QWIXX_THROW, 7, "t1", "confirm", "h1")
    assert isinstance(held, HeldReading)
    first = rematch(fix_die(held, 2, 6, None, remove=False), QWIXX_THROW, by="0")
    assert isinstance(first, HeldReading) and first.kind == "confirm"
    second = rematch(fix_die(first, 4, 1, None, remove=False), QWIXX_THROW, by="0")
    assert isinstance(second, HeldReading) and second.kind == "confirm"
    roll = confirmed(second)
    assert roll.by == "0"  # the player's own check of the camera's roll
    assert Die("red", 6) in roll.roll.dice and Die("green", 1) in roll.roll.dice


def test_a_confirm_of_dice_the_question_no_longer_holds_is_refused() -> None:
    """Issue 26 item 1: the confirm names the dice the person saw; other dice are never
    applied in their place."""
    held = judge_throw(event(*qwixx_dice()), QWIXX_THROW, 7, "t1", "confirm", "h1")
    assert isinstance(held, HeldReading)
    seen = [("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1)]
    assert confirmed(held, seen).roll == held.roll
    fixed = rematch(fix_die(held, 2, 6, None, remove=False), QWIXX_THROW)
    assert isinstance(fixed, HeldReading)
    with pytest.raises(Rejection) as refused:
        confirmed(fixed, seen)
    assert refused.value.reason == Reason.STALE_STATE and refused.value.rule == "question_changed"
    assert "red 6" in refused.value.message


# the devices of a table whose seat 0 is active: (host, seat)
Device = tuple[bool, int | None]
HOST_DEVICE: Device = (True, None)
ACTIVE: Device = (False, 0)
OTHER: Device = (False, 1)


@pytest.mark.parametrize(
    ("kind", "device", "rule"),
    [
        ("confirm", HOST_DEVICE, None),
        ("confirm", ACTIVE, None),
        ("confirm", OTHER, "confirm_by_active_or_host"),
        # a mismatch is fixed first; a roll the camera is not sure of is answered die by die
        ("mismatch", HOST_DEVICE, "fix_first"),
        ("unsure", HOST_DEVICE, "answer_unsure_first"),
        ("unsure", ACTIVE, "answer_unsure_first"),
        ("unsure", OTHER, "confirm_by_active_or_host"),
    ],
)
def test_the_active_player_and_the_host_confirm_the_camera_roll(
    kind: HeldKind, device: tuple[bool, int | None], rule: str | None
) -> None:
    refusal = confirm_refusal(kind, *device, active=0)
    assert (refusal and refusal.rule) == rule


def test_a_roll_the_camera_is_not_sure_of_is_not_accepted_as_read() -> None:
    """Mode "sure" asks a person exactly the dice the camera is not sure of: "Use this
    roll" (which the page never offered there) would apply its guesses unlooked at."""
    from companion.table.camera_decision import decider

    dice = sure_dice(0.999, 0.999, 0.6, 0.999, 0.999, 0.999)
    held = judge_throw(event(*dice), QWIXX_THROW, 7, "t1", "sure", "h1", decider(0.99))
    assert isinstance(held, HeldReading) and held.kind == "unsure"
    with pytest.raises(Rejection) as refused:
        confirmed(held)
    assert refused.value.rule == "answer_unsure_first"
    assert answer_rights("unsure", *ACTIVE, 0)["may_confirm"] is False


@pytest.mark.parametrize(
    ("kind", "change", "device", "rule"),
    [
        # the host fixes any reading; a missed die is added to dice that do not match
        ("mismatch", "value", HOST_DEVICE, None),
        ("mismatch", "recolour_or_drop", HOST_DEVICE, None),
        ("mismatch", "add", HOST_DEVICE, None),
        ("confirm", "recolour_or_drop", HOST_DEVICE, None),
        ("confirm", "add", HOST_DEVICE, "add_to_mismatch"),
        ("unsure", "add", HOST_DEVICE, "add_to_mismatch"),
        # the active player sets values of a roll to confirm or answer, nothing more
        ("confirm", "value", ACTIVE, None),
        ("unsure", "value", ACTIVE, None),
        ("mismatch", "value", ACTIVE, "fix_by_host"),
        ("confirm", "recolour_or_drop", ACTIVE, "fix_by_host"),
        ("mismatch", "add", ACTIVE, "fix_by_host"),
        ("confirm", "add", ACTIVE, "fix_by_host"),
        ("confirm", "value", OTHER, "fix_by_host"),
        ("unsure", "value", OTHER, "fix_by_host"),
    ],
)
def test_who_may_change_a_held_reading_and_how(
    kind: HeldKind, change: DieChange, device: tuple[bool, int | None], rule: str | None
) -> None:
    refusal = fix_refusal(kind, change, *device, active=0)
    assert (refusal and refusal.rule) == rule


def test_each_device_is_told_what_it_may_do_about_the_held_reading() -> None:
    """The camera state's flags per device, from the refusals the routes check."""
    at_confirm = [answer_rights("confirm", *device, 0) for device in (HOST_DEVICE, ACTIVE, OTHER)]
    assert at_confirm == [
        {"may_confirm": True, "may_fix_values": True, "may_recolour_or_drop": True,
         "may_add_dice": False, "may_rethrow": True, "may_answer": True, "may_act": True},
        {"may_confirm": True, "may_fix_values": True, "may_recolour_or_drop": False,
         "may_add_dice": False, "may_rethrow": False, "may_answer": True, "may_act": True},
        {"may_confirm": False, "may_fix_values": False, "may_recolour_or_drop": False,
         "may_add_dice": False, "may_rethrow": False, "may_answer": False, "may_act": False},
    ]  # fmt: skip
    assert answer_rights("mismatch", *HOST_DEVICE, 0)["may_add_dice"] is True
    # the active player is shown a mismatch (the host fixes it) but may do nothing to it
    assert answer_rights("mismatch", *ACTIVE, 0) == {
        "may_confirm": False, "may_fix_values": False, "may_recolour_or_drop": False,
        "may_add_dice": False, "may_rethrow": False, "may_answer": False, "may_act": True,
    }  # fmt: skip
    # no reading held: nothing to do, even for the host
    assert not any(answer_rights(None, *HOST_DEVICE, 0).values())


def test_throws_made_while_a_question_is_open_wait_in_order() -> None:
    holder = HeldReadings()
    first, second = event(*qwixx_dice()), event(*qwixx_dice((1, 1, 1, 1, 1, 1)))
    assert holder.wait("t1", first) and holder.wait("t1", second)
    assert holder.waiting_count("t1") == 2
    assert holder.next_waiting("t1") is first and holder.next_waiting("t1") is second
    assert holder.next_waiting("t1") is None
    for _ in range(3):
        assert holder.wait("t2", first)
    assert not holder.wait("t2", first)  # a full queue drops the throw (and says so)
