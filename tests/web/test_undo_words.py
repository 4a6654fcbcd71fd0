"""The undo's words on each device, from the session's rule (companion.web.views): why a
device may not undo now (its undo button went away) in the refusal's words with the
players' names, and what an undo took back, for every device but its maker's."""

from __future__ import annotations

from dataclasses import replace

from companion.rules.qwixx import GAME as QWIXX
from companion.rules.qwixx import Cross, Options, Pass
from companion.rules.session import HOST, Session
from companion.table.access import Viewer
from companion.table.snapshot import Snapshot, snapshot_of
from companion.web.views import live_context
from tests.web.helpers import roll

ROLL_7 = roll(("white", 3), ("white", 4), ("red", 2), ("yellow", 5), ("green", 6), ("blue", 1))


def snapshot_from(session: Session) -> Snapshot:
    """The Snapshot a table publishes of `session` (Table._take_snapshot)."""
    return snapshot_of(session)


def seat(number: int) -> Viewer:
    return Viewer(seat=number, host=False)


def ann_bob_after_the_white_sum() -> Session:
    """Qwixx, Ann (active) and Bob: Bob passes the white sum, Ann crosses yellow 7 (the
    white sum) and red 5 (white 3 + red 2), which needs Bob's pass: it ended that step."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    session.act(ROLL_7)
    session.act(Pass(1))
    session.act(Cross(0, "yellow", 7))
    session.act(Cross(0, "red", 5))
    return session


def test_a_device_that_may_not_undo_reads_why_in_the_sessions_words() -> None:
    session = ann_bob_after_the_white_sum()
    bob = live_context(snapshot_from(session), seat(1), "sheet")
    assert bob["undo"] is None
    assert bob["undo_why"] == (
        "Ann's move since needs your last action: once Ann undoes that move, you can undo "
        "yours; the host can undo back to it"
    )
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] == "Undo cross red 5" and ann["undo_why"] is None
    session.act(ROLL_7)  # Bob rolls next: Ann's turn ended with her colour cross
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] is None
    assert ann["undo_why"].startswith("The dice have been rolled since your last action")


def test_the_host_who_plays_reads_how_to_undo_as_the_host() -> None:
    """Bob hosts from his own phone and plays: his refusal read "... Ann undoes first, or
    the host undoes back to it", pointing at himself, while seated his device undoes as
    Bob only (Viewer.by); as the host he undoes back to it from the table view."""
    session = ann_bob_after_the_white_sum()
    host_bob = live_context(snapshot_from(session), Viewer(seat=1, host=True), "sheet")
    assert host_bob["undo"] is None
    assert host_bob["undo_why"] == (
        "Ann's move since needs your last action: once Ann undoes that move, you can undo "
        "yours; as the host, you can undo back to it from the table view (Seat, then Just "
        "watch)"
    )
    session.act(ROLL_7)  # Bob rolls next: his pass lies before a roll now
    host_bob = live_context(snapshot_from(session), Viewer(seat=1, host=True), "sheet")
    assert host_bob["undo_why"] == (
        "The dice have been rolled since your last action, so it can no longer be undone on "
        "its own; as the host, you can undo back to it from the table view (Seat, then Just "
        "watch)"
    )


def test_while_the_host_plays_the_others_are_not_pointed_at_the_hosts_device() -> None:
    """The host plays Ann on their own phone: Bob's refusal read "... the host can undo back
    to it", but seated, the host's device undoes as Ann only; as a roll's refusal leaves
    out "or the host enters the roll" then, the undo's leaves out the host."""
    session = ann_bob_after_the_white_sum()
    seated = replace(snapshot_from(session), host_seated=True)
    bob = live_context(seated, seat(1), "sheet")
    assert bob["undo_why"] == (
        "Ann's move since needs your last action: once Ann undoes that move, you can undo yours"
    )
    session.act(ROLL_7)  # Bob rolls next: his pass lies before a roll now
    bob = live_context(replace(snapshot_from(session), host_seated=True), seat(1), "sheet")
    assert bob["undo_why"] == (
        "The dice have been rolled since your last action, so it can no longer be undone on its own"
    )


def test_no_why_after_a_devices_own_undo() -> None:
    """Ann takes back her only action: her button goes because she asked; nothing to say."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    session.act(ROLL_7)
    session.act(Cross(0, "red", 7))
    session.undo("0")
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] is None and ann["undo_why"] is None


def news(session: Session, viewer: Viewer) -> str | None:
    return live_context(snapshot_from(session), viewer, "sheet")["undo_news"]


HOST_VIEW = Viewer(seat=None, host=True)


def test_every_other_device_reads_what_an_undo_took_back() -> None:
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    session.act(ROLL_7)
    session.act(Cross(0, "red", 7))
    assert news(session, seat(1)) is None  # no undo yet
    session.undo("0")
    assert news(session, seat(1)) == news(session, HOST_VIEW) == "Ann took back: Cross red 7"
    assert news(session, seat(0)) is None  # Ann did it herself
    session.act(Pass(1))
    assert news(session, seat(1)) is None  # the latest change is no undo any more
    session.undo(HOST)
    assert news(session, seat(1)) == "The host took back your move: Pass (no cross)"
    assert news(session, seat(0)) == "The host took back Bob's move: Pass (no cross)"
    assert news(session, HOST_VIEW) is None
    session.undo(HOST)
    assert news(session, seat(0)) == (
        "The host took back the roll: white 3, white 4, red 2, yellow 5, green 6, blue 1"
    )


def test_a_pound_is_named_in_words_on_the_undo_button_and_to_the_others() -> None:
    """Sixes: Bob pounds the table and sees his undo. It read "Undo pOUND" (the button's
    shouted word, its first letter lowered), and the others read "Bob took back: POUND"."""
    from companion.rules.sixes import GAME as SIXES
    from companion.rules.sixes import Pound

    session = Session(SIXES, SIXES.options_for(3), ["Ann", "Bob", "Cy"])
    session.act(Pound(1))
    bob = live_context(snapshot_from(session), seat(1), "sheet")
    assert bob["undo"] == "Undo pound the table"
    session.undo("1")
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo_news"] == "Bob took back: Pound the table"


def test_a_sixis_take_is_named_by_the_side_taken() -> None:
    """Sixis: Ann takes Three of a Kind (its blue side). Her undo read "Undo take Three of
    a Kind / Full House", both sides, as if she might have taken either; it names the side
    she took, and so does the news of the undo on the other devices."""
    from companion.rules.sixis import GAME as SIXIS
    from companion.rules.sixis import Options as SixisOptions
    from companion.rules.sixis import TakeCard

    layout = ("three_kind", "pairs", "low", "high", "odd", "even", "run_low", "run_high")
    options = SixisOptions(players=2, colours=("red", "blue"), layouts=(layout,))
    session = Session(SIXIS, options, ["Ann", "Bob"])
    session.act(roll(*(("red", v) for v in (2, 2, 3, 5, 5, 5))))
    session.act(TakeCard(0, "three_kind"))
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] == "Undo take Three of a Kind"
    session.undo("0")
    bob = live_context(snapshot_from(session), seat(1), "sheet")
    assert bob["undo_news"] == "Ann took back: Take Three of a Kind"


def test_an_undo_that_reopens_an_ended_game_says_so_and_asks_once() -> None:
    """Ann's fourth penalty ended the game; her undo stayed on the end screen as "Undo pass
    (no cross)", sent at the first tap, and the game was running again. The undo of an
    engine's ending is deliberate (docs/RELIABILITY.md: "an engine ending may still be
    undone"): the button says it reopens the game and asks once, on her device and the
    host's; while the game runs the undo still goes at once."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    for active in [0, 1] * 3 + [0]:  # each turn: both pass the white sum, the roller the colours
        for move in (ROLL_7, Pass((active + 1) % 2), Pass(active), Pass(active)):
            session.act(move)
    ended = snapshot_from(session)
    assert ended.outcome is not None
    ann = live_context(ended, seat(0), "sheet")
    assert ann["undo"] == "Undo pass (\N{MINUS SIGN}5 penalty): reopens the game"
    assert ann["undo_confirm"] == "Tap again to undo: the game reopens"
    host = live_context(ended, Viewer(seat=None, host=True), "table")
    assert host["undo"] == "Undo last action: reopens the game"
    assert host["undo_confirm"] == "Tap again to undo: the game reopens"
    session.undo(HOST)
    running = live_context(snapshot_from(session), Viewer(seat=None, host=True), "table")
    assert running["undo"] == "Undo last action" and running["undo_confirm"] is None


def test_the_undo_of_a_penalty_pass_says_it_takes_the_penalty_back() -> None:
    """Ann, active, passes the white sum and then the colours, crossing nothing: her button
    read "Pass: −5 penalty", and her undo button after it "Undo pass (no cross)", the words
    of the state after the pass, which say nothing of the penalty it takes back."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    session.act(ROLL_7)
    session.act(Pass(1))
    session.act(Pass(0))
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] == "Undo pass (no cross)"  # the white sum's pass costs nothing
    session.act(Pass(0))
    ann = live_context(snapshot_from(session), seat(0), "sheet")
    assert ann["undo"] == "Undo pass (\N{MINUS SIGN}5 penalty)"
    session.undo("0")
    assert live_context(snapshot_from(session), seat(0), "sheet")["undo"] == (
        "Undo pass (no cross)"
    )


def test_the_others_read_the_penalty_an_undone_pass_took_back() -> None:
    """Ann takes back her penalty pass: her button said "Undo pass (−5 penalty)", but Bob
    and the host read "Ann took back: Pass (no cross)", without the penalty taken back.
    They read it as her button said it; so do they when the host takes it back."""
    session = Session(QWIXX, Options(players=2), ["Ann", "Bob"])
    for move in (ROLL_7, Pass(1), Pass(0), Pass(0)):
        session.act(move)
    session.undo("0")
    minus_5 = "Pass (\N{MINUS SIGN}5 penalty)"
    assert news(session, seat(1)) == news(session, HOST_VIEW) == f"Ann took back: {minus_5}"
    session.act(Pass(0))
    session.undo(HOST)
    assert news(session, seat(0)) == f"The host took back your move: {minus_5}"
    assert news(session, seat(1)) == f"The host took back Ann's move: {minus_5}"
    session.undo("0")  # her white sum's pass cost nothing
    assert news(session, seat(1)) == "Ann took back: Pass (no cross)"
