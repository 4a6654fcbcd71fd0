"""Every start option of every game has words a player understands: a label that is not the
field's name, a one-line help, and an input kind derived from its type."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict

import pytest

from companion.rules.registry import GAME_NAMES, find_game
from companion.web.views import option_fields

# the raw names the start page used to show (issue 17): each now reads as words
RAW = {"deal seed", "layouts", "purses", "rollers", "starter factor", "target", "colours"}
KINDS = {"bool", "int", "str", "seat", "ints", "strs", "optional_int", "records", "json"}


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_every_option_has_a_label_and_a_help_line(game_name: str) -> None:
    game = find_game(game_name)
    fields = [asdict(f) for f in option_fields(game.name, game.options_type)]
    names = [f.name for f in dataclasses.fields(game.options_type) if f.name != "players"]
    assert [f["name"] for f in fields] == names  # every option, in the dataclass order
    for field in fields:
        assert field["label"][:1].isupper() and "_" not in field["label"], field
        assert field["label"].lower() not in RAW, field
        assert field["help"] and len(field["help"]) <= 100 and "\n" not in field["help"], field
        assert field["kind"] in KINDS


def test_kinds_follow_the_option_types() -> None:
    sixes_game = find_game("sixes")
    kinds = {f.name: f.kind for f in option_fields("sixes", sixes_game.options_type)}
    assert kinds == {
        "multiplier": "int",
        "starter_factor": "int",
        "purses": "ints",
        "rollers": "optional_int",
        "dice": "strs",
        "first_player": "seat",
    }
    sixto_game = find_game("sixto")
    sixto = {f.name: f.kind for f in option_fields("sixto", sixto_game.options_type)}
    assert sixto == {
        "first_player": "seat",
        "colours": "strs",
        "sheets": "records",
        "custom_sheets_may_repeat": "bool",
    }
