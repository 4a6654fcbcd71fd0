"""A refusal of a new table in the words of the people at it (issue 26 item 7).

The engine and the codec name what is wrong in their own terms: an option's field path
("Options.purses[0]: expected an integer"), seats numbered as the record numbers them
("player 2"), sentences that start lower-case because they read well inside other text.
The start page shows them alone, to the people who just typed the names, so here they
become the option's label from the game view's `OPTIONS`, the player's name, and a
sentence. Two players of one name would make every later message ambiguous: refused."""

from __future__ import annotations

import re
from collections.abc import Sequence

from companion.rules.base import Rejection
from companion.table.words import with_names
from companion.web.views import OptionText, view_for

# "Options.purses[0]: expected an integer", "Options.sheets[1].letter: expected a string"
_FIELD_PROBLEM = re.compile(
    r"^(?:bad options: )?Options\.(?P<field>\w+)(?:\[(?P<index>\d+)\])?(?P<inner>[\w.\[\]]*): "
    r"(?P<problem>.+)$"
)
# the codec's terms, as a person says them
_PROBLEM_WORDS = (
    ("expected an integer", "must be a whole number"),
    ("expected a number", "must be a number"),
    ("expected true or false", "must be yes or no"),
    ("expected a string", "must be text"),
    ("expected a list", "must be a list, its values separated by commas"),
    ("expected an object", "is not filled in as the page shows it"),
    ("missing", "is missing"),
    ("not allowed to be null", "cannot be empty"),
)


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def start_refusal(exc: Rejection, game_name: str, players: Sequence[str]) -> Rejection:
    """`exc` (a refused new table) with the option's label for its field path, the
    players' names for their seat numbers, and a capital at the start."""
    names = list(players) or [f"Player {seat + 1}" for seat in range(64)]
    text = _option_problem(exc.message, game_name, names) or exc.message
    return Rejection(exc.reason, exc.rule, capital(with_names(text, names)))


def _option_problem(message: str, game_name: str, names: Sequence[str]) -> str | None:
    """The codec's "Options.FIELD[i]...: problem" as "LABEL: NAME's problem" (a list kept
    per seat) or "LABEL: value i problem"; None for any other message."""
    found = _FIELD_PROBLEM.match(message)
    if found is None:
        return None
    texts: dict[str, OptionText] = getattr(view_for(game_name), "OPTIONS", {})
    field = found["field"]
    text = texts.get(field)
    label = text.label if text else field.replace("_", " ").capitalize()
    problem = found["problem"]
    for term, words in _PROBLEM_WORDS:
        problem = problem.replace(term, words)
    index = found["index"]
    if index is None:
        return f"{label}: {problem}"
    at = int(index)
    if text is not None and text.per_seat and at < len(names):
        return f"{label}: {names[at]}'s {problem}"
    return f"{label}: value {at + 1} {problem}"
