"""bench/vision_eval.py and bench/auto_apply.py read one labelled folder or the whole
suite: a command with neither or both says which is missing, before the models load."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bench import auto_apply, vision_eval

BENCHES = [vision_eval.main, auto_apply.main]


@pytest.mark.parametrize("bench", BENCHES)
@pytest.mark.parametrize(
    ("argv", "said", "not_said"),
    [
        (
            [],
            "give a labelled folder (e.g. ../shared/data/matteop65-d6/valid) or --suite",
            "not both",
        ),
        (["--every", "3"], "give a labelled folder", "not both"),
        (["--suite", "some/folder"], "give a folder or --suite, not both", "labelled folder"),
    ],
)
def test_a_command_without_one_source_says_what_to_give(
    bench: Callable[[list[str]], int],
    argv: list[str],
    said: str,
    not_said: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        bench(argv)
    assert done.value.code == 2
    error = capsys.readouterr().err
    assert said in error
    assert not_said not in error
