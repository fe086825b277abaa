"""Every bad world file fails with the file, the place in it and the reason; nothing loads."""

from __future__ import annotations

import pytest

from sandbox.files import FileFormatError
from worlds import World, load_resident, load_residents

from .conftest import TWO_ROOMS, write_world


def load_error(tmp_path, text: str) -> FileFormatError:
    path = write_world(tmp_path, text)
    with pytest.raises(FileFormatError) as caught:
        World.load(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_a_good_world_loads_with_its_places(tiny):
    assert [str(s) for s in tiny.sectors()] == ["tiny:house", "tiny:outside"]
    assert [a.arena for a in tiny.arenas("tiny:house")] == ["kitchen", "bedroom"]
    assert [str(o) for o in tiny.objects()] == ["tiny:house:bedroom:bed",
                                                "tiny:house:kitchen:table"]
    assert tiny.doors("tiny:house:kitchen") == [tiny.resolve("tiny:house:bedroom"),
                                                tiny.resolve("tiny:outside:garden")]


def test_ragged_rows_name_the_row(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#ata#bbbb#", "#ata#bbbbb#"))
    assert "grid row 3" in error.where and "ragged" in error.reason


def test_unknown_symbol_names_row_and_column(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#ata#", "#atX#"))
    assert error.where.startswith("grid row 3, column 4")
    assert "'X'" in error.reason and "legend" in error.reason


def test_row_and_column_point_at_the_file_line(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#ata#", "#atX#"))
    line = TWO_ROOMS.splitlines().index("  #ata#bbbb#") + 1
    assert f"file line {line}" in error.where


def test_arena_split_in_two_pieces(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#aaaabbbb#", "#aaaabbab#"))
    assert "kitchen" in error.reason and "2 unconnected pieces" in error.reason
    assert error.where.startswith("grid row 4, column 8")


def test_arena_no_walk_reaches(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#aaaabbbb#", "#aaa#bbbb#"))
    assert "bedroom" in error.reason and "cannot be reached" in error.reason


def test_unreachable_places_are_listed_when_asked(tmp_path):
    path = write_world(tmp_path, TWO_ROOMS.replace("#aaaabbbb#", "#aaa#bbbb#"))
    world = World.load(path, check_reachable=False)
    assert [str(a) for a in world.unreachable] == ["tiny:house:bedroom"]


def test_legend_place_never_drawn(tmp_path):
    text = TWO_ROOMS.replace('  "=": {object: bed}',
                             '  "=": {object: bed}\n  "c": {sector: house, arena: cellar}')
    error = load_error(tmp_path, text)
    assert error.where == "legend.c" and "never drawn" in error.reason


def test_the_same_place_under_two_symbols(tmp_path):
    text = TWO_ROOMS.replace('  "g": {sector: outside, arena: garden}',
                             '  "g": {sector: outside, arena: garden}\n'
                             '  "h": {sector: outside, arena: garden}').replace("#gggggggg#",
                                                                                "#gggghhhh#")
    error = load_error(tmp_path, text)
    assert error.where == "legend.h" and "duplicate place" in error.reason


def test_a_legend_key_given_twice(tmp_path):
    text = TWO_ROOMS.replace('  "t": {object: table}',
                             '  "t": {object: table}\n  "t": {object: chair}')
    error = load_error(tmp_path, text)
    assert "duplicate key 't'" in error.reason and "line" in error.where


def test_object_between_two_arenas(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("#aaaabbbb#", "#aaatbbbb#"))
    assert "touches 2 arenas" in error.reason and error.where.startswith("grid row 4, column 5")


def test_colon_in_a_name(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS.replace("arena: garden", "arena: 'garden: east'"))
    assert error.where.startswith("legend.g")


def test_spawn_at_a_place_that_does_not_exist(tmp_path):
    error = load_error(tmp_path, TWO_ROOMS + "spawns:\n  Ann: tiny:house:attic\n")
    assert error.where == "spawns.Ann" and "no place 'tiny:house:attic'" in error.reason


RESIDENT = """\
name: {name}
age: 30
occupation: baker
innate: calm
learned: bakes bread
currently: baking
lifestyle: up early
wakes_at: "05:00"
sleeps_at: "21:00"
living_area: {home}
knows: {knows}
routine:
  - {{at: "05:00", place: "tiny:house:bedroom:bed", doing: waking up}}
  - {{at: 06:30, place: "tiny:house:kitchen:table", doing: baking}}
"""


def test_residents_load_and_unquoted_times_are_read_as_written(tmp_path, tiny):
    people = tmp_path / "people"
    people.mkdir()
    (people / "ann.yaml").write_text(RESIDENT.format(name="Ann", home="tiny:house:bedroom",
                                                     knows="{Bo: a friend}"))
    (people / "bo.yaml").write_text(RESIDENT.format(name="Bo", home="tiny:house:kitchen",
                                                    knows="{}"))
    ann, bo = load_residents(people, tiny)
    assert (ann.name, bo.name) == ("Ann", "Bo")
    assert ann.routine[1].at == "06:30"


def test_resident_living_in_a_place_that_does_not_exist(tmp_path, tiny):
    path = tmp_path / "ann.yaml"
    path.write_text(RESIDENT.format(name="Ann", home="tiny:house:attic", knows="{}"))
    with pytest.raises(FileFormatError) as caught:
        load_resident(path, tiny)
    assert caught.value.where == "living_area" and "attic" in caught.value.reason
    assert str(path) in str(caught.value)


def test_duplicate_resident_names(tmp_path, tiny):
    people = tmp_path / "people"
    people.mkdir()
    for file in ("ann.yaml", "ann2.yaml"):
        (people / file).write_text(RESIDENT.format(name="Ann", home="tiny:house:bedroom",
                                                   knows="{}"))
    with pytest.raises(FileFormatError) as caught:
        load_residents(people, tiny)
    assert "duplicate resident name 'Ann'" in caught.value.reason
    assert caught.value.where == "name"


def test_knowing_someone_who_is_not_a_resident(tmp_path, tiny):
    people = tmp_path / "people"
    people.mkdir()
    (people / "ann.yaml").write_text(RESIDENT.format(name="Ann", home="tiny:house:bedroom",
                                                     knows="{Zed: a ghost}"))
    with pytest.raises(FileFormatError) as caught:
        load_residents(people, tiny)
    assert caught.value.where == "knows.Zed"


def test_the_legend_colours_of_arenas_and_terrain(tmp_path):
    world = World.load(write_world(tmp_path, TWO_ROOMS.replace(
        '{blocked: wall}', '{blocked: wall, color: "#102030"}').replace(
        '{sector: house, arena: kitchen}', '{sector: house, arena: kitchen, color: "#ff8000"}')))
    assert world.arena_colours() == {world.resolve("tiny:house:kitchen"): (255, 128, 0)}
    assert world.terrain_colours() == {"wall": (16, 32, 48)}


def test_a_sector_is_reachable_when_any_of_its_arenas_is(tmp_path):
    """Judged by its first tile, the house (whose kitchen, first in map order, is walled off)
    was unreachable from the garden though its bedroom opens onto it; the reference town has
    14 of 20 sectors like that."""
    text = TWO_ROOMS.replace("#aaaabbbb#", "#aaa#bbbb#").replace("#a########", "#######b##")
    world = World.load(write_world(tmp_path, text), check_reachable=False)
    assert [str(a) for a in world.unreachable] == ["tiny:house:kitchen"]
    assert world.reachable("tiny:house", "tiny:outside:garden")
    assert world.area_of("tiny:house") == world.area_of("tiny:outside:garden") == world.town_area
    assert world.areas_of("tiny:house") == {0, world.town_area}
    assert not world.reachable("tiny:house:kitchen", "tiny:outside:garden")


def test_spawning_spots_given_as_tiles_stay_apart(tmp_path):
    text = TWO_ROOMS + "spawns:\n  sp-A: [5, 1]\n  sp-B: [6, 2]\n  sp-C: tiny:house:kitchen\n"
    world = World.load(write_world(tmp_path, text))
    assert world.spawn_tiles == {"sp-A": (5, 1), "sp-B": (6, 2), "sp-C": (3, 2)}  # its middle
    assert {str(p) for p in world.spawns.values()} == {"tiny:house:bedroom", "tiny:house:kitchen"}
    error = load_error(tmp_path, TWO_ROOMS + "spawns:\n  sp-A: [4, 1]\n")
    assert error.where == "spawns.sp-A" and "not a walkable tile" in error.reason


def test_a_wall_seen_as_part_of_a_room_is_blocked_and_seen_from_the_corridor(tmp_path):
    # The bedroom's top wall belongs to the bedroom: nobody walks it, and it is in sight.
    text = TWO_ROOMS.replace('  "t": {object: table}',
                             '  "t": {object: table}\n'
                             '  "|": {blocked: wall, sector: house, arena: bedroom}')
    world = World.load(write_world(tmp_path, text.replace("  ##########\n  #aaa#",
                                                          "  #####||||#\n  #aaa#", 1)))
    assert world.blocked[(5, 0)] == "wall" and not world.walkable((5, 0))
    assert [str(a) for a in world.arenas()] == ["tiny:house:kitchen", "tiny:house:bedroom",
                                                "tiny:outside:garden"]
    assert "tiny:house:bedroom" in map(str, world.arenas_near([(5, 0)], 0))


@pytest.mark.parametrize("entry, reason", [
    ("{blocked: wall, sector: house, arena: cellar}", "which has no floor on the grid"),
    ("{blocked: wall, sector: house}", "gives both sector and arena"),
    ("{blocked: wall, object: bed}", "a blocked symbol has no object")])
def test_a_labelled_wall_names_a_room_drawn_on_the_grid(tmp_path, entry, reason):
    text = TWO_ROOMS.replace('  "t": {object: table}', f'  "t": {{object: table}}\n  "|": {entry}')
    error = load_error(tmp_path, text.replace("  ##########\n  #aaa#", "  #####||||#\n  #aaa#", 1))
    assert reason in error.reason
