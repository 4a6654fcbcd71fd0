"""Refusals of a new table in people's words (companion.web.start_words), on literals."""

from __future__ import annotations

import pytest

from companion.rules.base import Reason, Rejection
from companion.table.records import check_new_names
from companion.web.start_words import start_refusal

NAMES = ["Dora", "Emil", "Finn"]


@pytest.mark.parametrize(
    ("game", "message", "said"),
    [
        (
            "sixes",
            "bad options: Options.purses[0]: expected an integer",
            "Starting coins per player: Dora's must be a whole number",
        ),
        (
            "sixis",
            "bad options: Options.layouts[1]: expected a list",
            "Cards dealt (to copy a real deal): value 2 must be a list, its values separated "
            "by commas",
        ),
        ("qwixx", "bad options: Options.players: expected an integer", None),
        (
            "sixto",
            "player 1 and player 2 both have sheet A; everyone needs a different sheet",
            "Dora and Emil both have sheet A; everyone needs a different sheet",
        ),
        ("sixto", "player 3: there is no project sheet 'Z'", "Finn: there is no project sheet 'Z'"),
    ],
)
def test_a_refusal_names_options_by_label_and_players_by_name(
    game: str, message: str, said: str | None
) -> None:
    refused = start_refusal(Rejection(Reason.BAD_OPTIONS, "options", message), game, NAMES)
    assert refused.reason == Reason.BAD_OPTIONS and refused.rule == "options"
    assert "Options." not in refused.message and "player " not in refused.message
    assert refused.message[:1].isupper()
    if said is not None:
        assert refused.message == said


def test_two_players_of_one_name_are_refused() -> None:
    check_new_names(["Dora", "Emil"])
    with pytest.raises(Rejection) as refused:
        check_new_names(["Dora", "Emil", " dora"])
    assert refused.value.rule == "duplicate_names" and "called dora" in refused.value.message
