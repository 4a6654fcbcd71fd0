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
        (["   ", "Bob"], "only spaces"),
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
