"""The viewer's map is the worlds package's world, indexed for drawing: the same tiles, the
same lookup by name, and the file's problems reported as the worlds package finds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.viewer.runs import MINI_TOWN
from viewer.source import ReplayError
from viewer.worldmap import find_world_file, load_world_map
from worlds import World, builtin_worlds, find_world


@pytest.mark.parametrize("path", [*(find_world(n) for n in builtin_worlds()), MINI_TOWN],
                         ids=lambda p: Path(p).stem)
def test_every_tile_reads_the_same_as_in_worlds(path):
    ours, theirs = load_world_map(path), World.load(path)
    assert (ours.width, ours.height) == (theirs.width, theirs.height)
    for y in range(theirs.height):
        for x in range(theirs.width):
            tile = (x, y)
            assert ours.arena_of.get(tile) == (str(a) if (a := theirs.arena_at(tile)) else None)
            assert (ours.object_of.get(tile) or ours.arena_of.get(tile)) == \
                (str(p) if (p := theirs.place_at(tile)) else None)
            assert ours.blocked.get(tile) == theirs.blocked.get(tile)
    assert list(ours.arenas) == [str(a) for a in theirs.arenas()]
    assert {a: len(p.tiles) for a, p in ours.objects.items()} == \
        {str(o): len(theirs.tiles(o)) for o in theirs.objects()}


def test_the_legend_colours_reach_the_map(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text(MINI_TOWN.read_text(encoding="utf-8").replace(
        '{blocked: water}', '{blocked: water, color: "#102030"}').replace(
        '{sector: Library, arena: reading room}',
        '{sector: Library, arena: reading room, color: "#ff8000"}'), encoding="utf-8")
    world = load_world_map(path)
    assert world.arena_colours == {"mini:Library:reading room": (255, 128, 0)}
    assert world.terrain_colours == {"water": (16, 32, 48)}


def test_a_world_is_found_by_name_by_path_or_beside_the_run(tmp_path):
    assert find_world_file("town", Path(".")).name == "town.yaml"
    assert find_world_file(str(MINI_TOWN), tmp_path) == MINI_TOWN
    (tmp_path / "here.yaml").write_text(MINI_TOWN.read_text(encoding="utf-8"), encoding="utf-8")
    assert find_world_file("here.yaml", tmp_path) == tmp_path / "here.yaml"
    assert find_world_file("no such world", Path(".")) is None
    assert find_world_file(None, Path(".")) is None


def test_a_map_with_a_key_given_twice_is_refused_naming_it(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("name: twice\nlegend:\n  '.': floor\nlegend:\n  '#': wall\ngrid: |\n  ..\n")
    with pytest.raises(ReplayError, match="twice.yaml.*duplicate key 'legend'"):
        load_world_map(path)


def test_a_map_the_worlds_package_refuses_is_named_with_the_row(tmp_path):
    path = tmp_path / "ragged.yaml"
    path.write_text(MINI_TOWN.read_text(encoding="utf-8").replace("#kkkkkkk#", "#kkkkkk#", 1),
                    encoding="utf-8")
    with pytest.raises(ReplayError, match=r"ragged.yaml at grid row 2.*ragged grid"):
        load_world_map(path)


def test_a_room_no_walk_reaches_is_still_drawn(tmp_path):
    path = tmp_path / "walled.yaml"  # the library's door bricked up
    path.write_text(MINI_TOWN.read_text(encoding="utf-8").replace("###r###", "#######"),
                    encoding="utf-8")
    assert "mini:Library:reading room" in load_world_map(path).arenas
