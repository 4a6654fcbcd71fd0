"""A new table's player names show as typed (the security trial: names with a NUL, a
right-to-left override or a zero-width space were accepted, and could pass for another
player's); a stored table opens with the names it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from companion.web.app import create_app
from companion.web.settings import Settings


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["Ann\u0000", "Bob"], "U+0000"),
        (["\u202eAnn", "Bob"], "U+202E"),
        (["Ann", "Ann\u200b"], "U+200B"),
        (["Ann", " ann "], "Two players are called ann"),
        (["Ａｎｎ", "Ann"], "Two players are called Ann"),  # full-width letters
        (["   ", "Bob"], "shows no letter or digit"),
        # the re-probe's: a combining grapheme joiner, variation selectors, fillers, a
        # paragraph separator, private use, a non-character, a name of marks alone
        (["Ann", "Ann\u034f"], "U+034F"),
        (["Ann", "Ann\ufe0f"], "U+FE0F"),
        (["Ann", "Ann\U000e0100"], "U+E0100"),
        (["\u3164", "Bob"], "U+3164"),
        (["\u2800", "Bob"], "U+2800"),
        (["A\u2029nn", "Bob"], "U+2029"),
        (["\ue000", "Bob"], "U+E000"),
        (["Ann\uffff", "Bob"], "U+FFFF"),
        (["\u0301\u0302", "Bob"], "shows no letter or digit"),
        (["Ann", "An\u0301n"], "Two players are called"),
        # the third probe's: letters of another script that look Latin (Cyrillic А, В, о;
        # Greek Α, Ν; a Cyrillic і and Greek Ι in a capital's place)
        (["Ann", "\u0410nn"], "Two players are called \u0410nn"),
        (["Bob", "\u0412\u043e\u0432"], "Two players are called"),
        (["\u0391\u039d\u039d", "Ann"], "Two players are called Ann"),
        (["Ivo", "\u0456vo"], "Two players are called"),
        (["\u0399vo", "ivo"], "Two players are called"),
    ],
)
def test_a_name_that_hides_or_copies_another_is_refused(
    tmp_path: Path, names: list[str], words: str
) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        answer = host.post(
            "/api/tables", json={"game": "qwixx", "players": names, "options": {"players": 2}}
        )
        assert answer.status_code == 422, answer.text
        refusal = answer.json()
        assert refusal["rule"] in ("player_name", "duplicate_names")
        assert words in refusal["message"]
        made = host.post(
            "/api/tables",
            json={"game": "qwixx", "players": ["Ann", "Ann-Marie"], "options": {"players": 2}},
        )
        assert made.status_code == 201, made.text  # like, but not the same: fine


def test_an_imported_record_with_two_players_of_one_name_is_refused(tmp_path: Path) -> None:
    """The re-probe: /api/import took a record of players ["Ann", "ANN"]."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        made = host.post(
            "/api/tables",
            json={"game": "qwixx", "players": ["Ann", "Bob"], "options": {"players": 2}},
        ).json()
        record = host.get(f"/api/tables/{made['table_id']}/record").json()
        record["players"] = ["Ann", "ANN"]
        answer = host.post("/api/import", json=record)
        assert answer.status_code in (409, 422), answer.text
        assert "Two players are called ANN" in answer.text
        record["players"] = ["Ann", "Bea"]
        assert host.post("/api/import", json=record).status_code == 201


def test_names_written_in_another_script_still_sit_beside_latin_ones(tmp_path: Path) -> None:
    """Only look-alikes are one name: "Анна" (Cyrillic) reads "Anna" but does not look it."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as host:
        made = host.post(
            "/api/tables",
            json={
                "game": "qwixx",
                "players": [
                    "Ann",
                    "\u0410\u043d\u043d\u0430",
                    "\u0394\u03ae\u03bc\u03b7\u03c4\u03c1\u03b1",
                ],
                "options": {"players": 3},
            },
        )
        assert made.status_code == 201, made.text
