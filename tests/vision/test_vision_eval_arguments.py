"""bench/vision_eval.py reads one labelled folder or the whole suite: a command with neither
or both says which is missing, before the models load."""

from __future__ import annotations

import pytest

from bench import vision_eval


@pytest.mark.parametrize(
    ("argv", "said", "not_said"),
    [
        (
            [],
            "give a labelled folder (e.g. ../shared/data/matteop65-d6/valid) or --suite",
            "not both",
        ),
        (["--limit", "3"], "give a labelled folder", "not both"),
        (["--suite", "some/folder"], "give a folder or --suite, not both", "labelled folder"),
    ],
)
def test_a_command_without_one_source_says_what_to_give(
    argv: list[str], said: str, not_said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        vision_eval.main(argv)
    assert done.value.code == 2
    error = capsys.readouterr().err
    assert said in error
    assert not_said not in error
