"""train.py --fancy (issue 22 item 3): the share reaches the renderer, the scene cache's
name holds it (caches of different shares never mix, and without it the name is the one
from before, so a run in progress keeps its caches), and packs carry it. Needs torch."""

from __future__ import annotations

from typing import Any

import pytest

from models.recipe.pack import SyntheticRecipe
from models.train import fancy_text, parse_args, scene_cache_key


def test_the_cache_key_without_fancy_scenes_is_the_one_from_before() -> None:
    assert scene_cache_key(700, 20261202, 0.1, 0.0) == "scenes-700-20261202-0.1"


def test_the_cache_key_names_the_fancy_share() -> None:
    keys = {scene_cache_key(700, 20261202, 0.1, share) for share in (0.0, 0.3, 0.5, 1.0)}
    assert len(keys) == 4
    assert scene_cache_key(700, 20261202, 0.1, 0.3) == "scenes-700-20261202-0.1-fancy0.3"


def test_the_flag_defaults_to_no_fancy_scenes() -> None:
    assert parse_args([]).fancy == 0.0
    assert parse_args(["--fancy", "0.3"]).fancy == 0.3
    assert fancy_text(0.0) == "" and "30%" in fancy_text(0.3)


def test_a_pack_from_before_the_flag_reads_as_no_fancy_scenes() -> None:
    old: dict[str, Any] = {"count": 700, "seed": 9, "translucent": 0.1, "first_scene_sha256": "ab"}
    assert SyntheticRecipe(**old).fancy == 0.0
    assert SyntheticRecipe(**old, fancy=0.3).fancy == 0.3


def test_a_share_out_of_range_is_refused() -> None:
    from models.train import prepare

    with pytest.raises(SystemExit, match="--fancy"):
        prepare(parse_args(["--fancy", "1.5"]), "test")
