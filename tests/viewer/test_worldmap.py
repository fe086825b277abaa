"""The viewer's own map reader agrees with worlds/ on every tile of every built-in map.

The viewer never imports worlds/ (it only reads the files); this test does, so a change of the
map format shows up here rather than as a wrong picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.viewer.runs import MINI_TOWN
from viewer.worldmap import find_world_file, load_world_map
from worlds import World, builtin_worlds


@pytest.mark.parametrize("path", [*(find_world_file(n, Path(".")) for n in builtin_worlds()),
                                  MINI_TOWN], ids=lambda p: Path(p).stem)
def test_every_tile_reads_the_same_as_in_worlds(path):
    ours, theirs = load_world_map(path), World.load(path)
    assert (ours.width, ours.height) == (theirs.width, theirs.height)
    for y in range(theirs.height):
        for x in range(theirs.width):
            tile = (x, y)
            assert ours.arena_of.get(tile) == (str(a) if (a := theirs.arena_at(tile)) else None)
            assert (ours.object_of.get(tile) or ours.arena_of.get(tile)) == \
                (str(p) if (p := theirs.place_at(tile)) else None)
            assert (tile in ours.blocked) == (tile in theirs.blocked)
    assert sorted(ours.arenas) == sorted(str(a) for a in theirs.arenas())


def test_a_world_name_finds_the_built_in_map():
    assert find_world_file("town", Path(".")).name == "town.yaml"
    assert find_world_file("no such world", Path(".")) is None
    assert find_world_file(None, Path(".")) is None


def test_a_map_with_a_key_given_twice_is_refused_naming_it(tmp_path):
    from viewer.source import ReplayError

    path = tmp_path / "twice.yaml"
    path.write_text("name: twice\nlegend:\n  '.': floor\nlegend:\n  '#': wall\ngrid: |\n  ..\n")
    with pytest.raises(ReplayError, match="twice.yaml.*duplicate key 'legend'"):
        load_world_map(path)
