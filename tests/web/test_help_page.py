"""The help page (/help): it answers without a join code or cookie, carries the headers of
every page, has a section per registered game, and the start page and a game's pages link
to it (a game's own pages to that game's section)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.rules.registry import GAME_NAMES, find_game
from companion.web.app import create_app
from companion.web.page_headers import PAGE_HEADERS
from companion.web.settings import Settings
from tests.tiny_game import tiny_game_registered
from tests.web.helpers import create_table, seat_player


def test_the_help_page_answers_without_a_cookie_with_every_pages_headers(
    tmp_path: Path,
) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as stranger:
        answer = stranger.get("/help", headers={"accept": "text/html"})
        assert answer.status_code == 200
        assert not stranger.cookies  # it hands out no device cookie either
        for name, value in PAGE_HEADERS:
            assert answer.headers[name.decode()] == value.decode()
        assert "join code" in answer.text.lower()  # how to join is explained


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_every_registered_game_has_its_own_help_section(tmp_path: Path, game_name: str) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        page = client.get("/help").text
    section = re.search(rf'<section class="card help" id="{game_name}">(.*?)</section>', page, re.S)
    assert section is not None, f"no help section for {game_name}"
    words = section.group(1)
    assert find_game(game_name).title in words
    for part in ("Aim:", "A turn:", "The companion checks:"):
        assert part in words
    assert f'href="#{game_name}"' in page  # listed at the top of the page


def test_a_registered_game_without_its_own_help_words_gets_a_section_and_breaks_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game registered without web/templates/help/<name>.html made /help fail (500,
    TemplateNotFound) for every game, not only the new one: the page lists the registry's
    games, and the new one gets a section naming it (its own words are still to be
    written: test_every_registered_game_has_its_own_help_section asks for them)."""

    with (
        tiny_game_registered(monkeypatch),
        TestClient(create_app(Settings(data_dir=tmp_path))) as client,
    ):
        answer = client.get("/help")
    assert answer.status_code == 200
    assert 'href="#tiny_trial"' in answer.text
    section = re.search(
        r'<section class="card help" id="tiny_trial">(.*?)</section>', answer.text, re.S
    )
    assert section is not None and "Tiny Trial" in section.group(1)
    for name in GAME_NAMES:  # every other game keeps its own words
        assert f'<section class="card help" id="{name}">' in answer.text


def test_the_start_page_and_a_table_page_link_to_the_help(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        assert 'href="/help"' in host.get("/").text
        created = create_table(host, "sixto", ["Ann", "Bob"], {"players": 2})
        table_id = created["table_id"]
        assert 'href="/help#sixto"' in host.get(f"/t/{table_id}").text
        # the game's log and dice pages too (they linked to the page's top)
        for page in ("log", "dice"):
            assert 'href="/help#sixto"' in host.get(f"/t/{table_id}/{page}").text, page
        player = TestClient(host.app)
        seat_player(player, created["code"], table_id, 1)
        # the player's own sheet page points at its game's section
        assert 'href="/help#sixto"' in player.get(f"/t/{table_id}/sheet").text


def help_section(tmp_path: Path, game_name: str) -> str:
    """The words of `game_name`'s help section, its lines joined with single spaces."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        page = client.get("/help").text
    section = re.search(rf'<section class="card help" id="{game_name}">(.*?)</section>', page, re.S)
    assert section is not None, f"no help section for {game_name}"
    return " ".join(re.sub(r"<[^>]+>", "", section.group(1)).split())


def test_sixis_help_says_a_flip_needs_a_match_and_how_a_two_player_round_ends(
    tmp_path: Path,
) -> None:
    """Sixis' docstring: a player flips only a blue card their dice meet, and with two
    players the round never ends by itself (the player may end it). The help said "turn one
    easy blue card over" and that the round ends with only the Sixis card left in reach."""
    words = help_section(tmp_path, "sixis")
    assert "turn one easy blue card your dice meet over to its harder red side" in words
    assert (
        "With 2 players the round never ends by itself: at the start of your turn you may "
        "end it once every card left is red or one line of cards is gone" in words
    )


def test_sixmix_help_says_the_game_ends_after_the_round_and_most_points_win(
    tmp_path: Path,
) -> None:
    """Sixmix' docstring: the game ends at the end of a round in which a player has reached
    the target (10 unless the host set another), and the most points win. The help said
    "The first to 10 points wins": two players pass 10 in the same round's scoring."""
    words = help_section(tmp_path, "sixmix")
    assert "The first to 10 points wins" not in words
    assert (
        "The game ends after the round in which someone reaches 10 points (or the target "
        "the host set); the most points win" in words
    )


def test_sixes_help_says_when_the_dice_move_on_and_when_the_game_ends(tmp_path: Path) -> None:
    """Sixes' docstring: the dice move on after a win, a loss or a pass (not after the next
    number is called), a newcomer needs a purse for every bet up to 6, and the game ends
    after the roller turns the host set (two rounds by default) with the richest winning.
    The help's 'calls the next number. Then the dice move on.' sent the dice on too early,
    and it said nothing of the game's end."""
    words = help_section(tmp_path, "sixes")
    assert "or calls the next number. Then the dice move on" not in words
    assert (
        "or calls the next number and throws again. After a win, a loss or a pass the dice "
        "move on to the next player" in words
    )
    assert "The richest player wins" in words
    assert "two rounds around the table" in words


def test_the_camera_help_says_who_answers_each_question(tmp_path: Path) -> None:
    """held_reading.fix_refusal: only the host recolours, removes or adds a die, and only
    the host fixes dice that do not match the roll; the player the camera asks may set a
    die's value and use the roll. The help told everyone to "tap a die on its picture to
    change its value or colour or to remove it, or tap an empty spot to add a die" (a
    player's tap was refused: "only the host fixes this reading"), under a question
    ("Fix the dice") no screen asks."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        page = " ".join(re.sub(r"<[^>]+>", "", client.get("/help").text).split())
    camera = page[page.index("The camera When a roll is due") :][:1200]
    assert "Fix the dice" not in camera and "to remove it, or tap an empty spot" not in camera
    assert "is that the roll?" in camera and "Use this roll" in camera
    assert (
        "When the dice it read do not match the roll the game expects (too many, too few, "
        "a wrong colour), the host fixes them on the camera's picture" in camera
    )


def test_the_undo_help_tells_the_host_who_plays_where_the_hosts_undo_is(tmp_path: Path) -> None:
    """A host's device at a seat undoes as its player only (Viewer.by; the refusal there
    reads "as the host, you can undo back to it from the table view (Seat, then Just
    watch)"); the help said "The host's device may take back the latest action, whoever
    made it", which that device cannot while seated."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        page = " ".join(re.sub(r"<[^>]+>", "", client.get("/help").text).split())
    undo = page[page.index("Undo Tapped the wrong one?") :][:700]
    assert (
        "A host who plays on their own device undoes only their own actions there; to undo "
        "as the host, they open the table view (Seat, then Just watch)" in undo
    )
    assert "When undo is not possible, the page says why; once it is done" in undo


def general_help(tmp_path: Path) -> str:
    """The words of the help's general section (before the games), on single spaces."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        page = client.get("/help").text
    section = re.search(r'<section class="card help" id="companion">(.*?)</section>', page, re.S)
    assert section is not None
    return " ".join(re.sub(r"<[^>]+>", "", section.group(1)).split())


@pytest.mark.parametrize(
    ("game_name", "what_its_sheet_offers"),
    [
        ("qwixx", "the numbers you may cross (Qwixx, Sixto)"),
        ("sixto", "the numbers you may cross (Qwixx, Sixto)"),
        ("sixis", "the cards you may take or flip (Sixis)"),  # "Take ...", "Flip ... to ..."
        ("sixmix", "the spaces you may place a die in (Sixmix)"),  # "Place green 5 in ..."
        ("sixes", "in Sixes, Pound the table to join the betting"),
    ],
)
def test_the_general_help_says_what_each_games_sheet_offers(
    tmp_path: Path, game_name: str, what_its_sheet_offers: str
) -> None:
    """The general help said "Your sheet lights up the boxes you may cross now" and
    "Tapped the wrong box?": Sixis' sheet offers cards to take or flip, Sixmix' spaces to
    place a die in, Sixes' a table to pound; it said a player "picks a seat" where the
    seat page asks "who are you?" over the players' names. It names what each sheet shows
    now, and the buttons a player ends a step with by their words on the sheets."""
    words = general_help(tmp_path)
    assert game_name in GAME_NAMES
    assert what_its_sheet_offers in words
    assert "the boxes you may cross" not in words and "wrong box" not in words
    assert "picks a seat" not in words and "taps their own name" in words
    for button in ("Done crossing", "Pass (no cross)", "Take no card", "Use this roll"):
        assert button in words
