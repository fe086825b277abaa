"""The reference town as the reference runs it: a map whose bare ground outside the town's
boundary is larger than the town (as in the real matrix), the residents' spatial memories and
start tiles, other people's homes private, and a walk that cannot happen logged."""

from __future__ import annotations

import pytest

from agents.persona import Persona
from agents.society import known_places
from sandbox.app.cli import main
from worlds import AddressError, World, WorldState, world_residents
from worlds.ville import import_ville

from .conftest import TWO_ROOMS, write_world
from .ville_fixture import CAFE, DORM, HOME, PARK, walled_town, write_checkout

MARGIN = 12  # columns of bare ground left and right of the town's boundary wall
ROWS_ABOVE = 3


def town_tile(x: int, y: int) -> tuple[int, int]:
    """A tile of the town art (ville_fixture.ART) on the walled map."""
    return x + MARGIN, y + ROWS_ABOVE


SPATIAL = {  # Klaus knows his dorm room, the cafe, the park and a room the map never drew
    "Klaus Mueller": {"the Ville": {
        DORM: {"Klaus Mueller's room": ["bed"], "common room": ["sofa"]},
        CAFE: {"cafe": ["behind the cafe counter"]},
        PARK: {"park": ["park garden"]}}},
}


@pytest.fixture
def walled(tmp_path) -> World:
    checkout = write_checkout(tmp_path / "ga", art=walled_town(MARGIN), spatial=SPATIAL,
                              starts={"Isabella Rodriguez": town_tile(2, 2),
                                      "Klaus Mueller": town_tile(8, 0)})  # a wall tile
    done = import_ville(checkout, tmp_path / "out")
    assert done.world.name == "ville"
    return World.load(tmp_path / "out" / "ville.yaml")


def test_the_outer_ground_is_larger_than_the_town(walled):
    outer = walled.areas[0]  # the ground's first tile is the map's top-left corner
    town = walled.areas[walled.town_area]
    assert len(outer) > 4 * len(town)


def test_the_town_is_where_residents_live_and_spawn_not_the_largest_ground(walled):
    assert walled.town_rule == "where the residents live and spawn"
    assert walled.areas[walled.town_area][0] == town_tile(1, 1)
    # Only the ground outside the boundary is unreachable; every arena of the town is not. The
    # plain name is the town's streets (before: the ground outside, the streets 'outdoors (2)').
    assert [str(a) for a in walled.unreachable] == ["ville:outdoors:outdoors (2)"]
    for arena in (f"ville:{CAFE}:cafe", f"ville:{HOME}:bathroom", f"ville:{PARK}:park",
                  f"ville:{DORM}:Klaus Mueller's room", "ville:outdoors:outdoors"):
        assert walled.area_of(arena) == walled.town_area
    assert walled.path(town_tile(2, 2), f"{PARK}:park:park garden")[-1] == town_tile(6, 7)


def test_sandbox_world_names_the_town_area_and_what_is_unreachable(walled, capsys):
    assert main(["world", str(walled.source)]) == 1  # the outer ground is unreachable
    out = capsys.readouterr().out
    assert "the town is area 2 (where the residents live and spawn:" in out
    assert "2 homes, 1 spawning spots" in out
    assert "unreachable places (1): ville:outdoors:outdoors (2)\n" in out
    assert "residents whose home" not in out


def test_a_home_cut_off_from_the_town_is_reported(tmp_path, capsys):
    walled_dorm = walled_town(MARGIN).replace("##cx###m######k#", "##cx###m########")
    write_checkout(tmp_path / "ga", art=walled_dorm)
    assert main(["import-ville", str(tmp_path / "ga"), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert main(["world", str(tmp_path / "out" / "ville.yaml")]) == 1
    out = capsys.readouterr().out
    assert f"ville:{DORM}:Klaus Mueller's room" in out.split("unreachable places")[1]
    assert "residents whose home no walk from the town reaches (1): Klaus Mueller" in out


def test_without_homes_or_spawns_the_town_is_the_area_with_most_places(tmp_path):
    # Wall the garden off and make it larger than the house: the kitchen and bedroom (2
    # arenas, 23 tiles) make the town, not the garden (1 arena, 24 tiles).
    text = TWO_ROOMS.replace("#a########", "##########").replace(
        "#gggggggg#", "#gggggggg#\n  #gggggggg#\n  #gggggggg#")
    world = World.load(write_world(tmp_path, text), check_reachable=False)
    assert world.town_rule == "the area holding most places"
    assert [str(a) for a in world.unreachable] == ["tiny:outside:garden"]


def test_spatial_memory_and_start_tiles_come_from_the_storage_base(tmp_path, capsys):
    checkout = write_checkout(tmp_path / "ga", art=walled_town(MARGIN), spatial=SPATIAL,
                              starts={"Isabella Rodriguez": town_tile(2, 2),
                                      "Klaus Mueller": town_tile(8, 0)})
    assert main(["import-ville", str(checkout), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "1 with a spatial memory, 1 with a start tile" in out
    assert "left out of the personas (2)" in out
    assert f"Klaus Mueller: 1 place(s) of the spatial memory not on the map, left out: " \
           f"{DORM}:common room" in out
    assert f"Klaus Mueller: start tile {town_tile(8, 0)}" in out
    isabella, klaus = world_residents(World.load(tmp_path / "out" / "ville.yaml"))
    assert isabella.start_tile == town_tile(2, 2) and isabella.spatial_memory == []
    assert klaus.start_tile is None
    assert klaus.spatial_memory == [f"ville:{CAFE}:cafe", f"ville:{DORM}:Klaus Mueller's room",
                                    f"ville:{PARK}:park"]


def _persona(world: World, name: str) -> Persona:
    return Persona.from_resident(next(r for r in world_residents(world) if r.name == name))


def test_an_agent_knows_its_spatial_memory_its_home_and_without_one_no_one_elses(walled):
    homes = [str(h) for h in walled.homes]
    klaus = known_places(walled, _persona(walled, "Klaus Mueller"), homes)
    # The park's other piece is part of the park he knows; Isabella's rooms are not his.
    assert klaus == [f"ville:{CAFE}:cafe", f"ville:{DORM}:Klaus Mueller's room",
                     f"ville:{PARK}:park (2)", f"ville:{PARK}:park"]
    isabella = known_places(walled, _persona(walled, "Isabella Rodriguez"), homes)
    assert f"ville:{HOME}:bathroom" in isabella and f"ville:{HOME}:main room" in isabella
    assert f"ville:{DORM}:Klaus Mueller's room" not in isabella  # his home is private
    assert "ville:outdoors:outdoors (2)" not in isabella  # no walk reaches it
    assert f"ville:{CAFE}:cafe" in isabella and "ville:outdoors:outdoors" in isabella


def test_an_imported_spatial_memory_is_kept_as_the_reference_wrote_it(walled):
    """The rule that hides other residents' homes no longer cuts an imported memory: before,
    a room of Isabella's apartment that Klaus's memory names (as the reference's memories
    name housemates' rooms and a dorm's common room) was taken out of what he knows."""
    homes = [str(h) for h in walled.homes]
    klaus = _persona(walled, "Klaus Mueller")
    klaus = klaus.model_copy(update={"spatial_memory": [
        *klaus.spatial_memory, f"ville:{HOME}:main room", "ville:outdoors:outdoors (2)"]})
    known = known_places(walled, klaus, homes)
    assert f"ville:{HOME}:main room" in known  # another's home, as his memory has it
    assert f"ville:{HOME}:bathroom" not in known  # not in it: not known
    assert "ville:outdoors:outdoors (2)" not in known  # named, but no walk reaches it


def test_a_walk_that_cannot_happen_is_logged_and_the_walker_stays(walled, engine):
    events = []
    engine.subscribe(events.append)
    town = WorldState(engine, walled)
    town.place("Isabella Rodriguez", town_tile(2, 2))

    def walk(engine):
        yield from town.walk("Isabella Rodriguez", "ville:outdoors:outdoors (2)")

    engine.process(walk(engine))
    with pytest.raises(AddressError):
        engine.run(until=60)
    failed = [e for e in events if e.kind == "walk_failed"]
    assert len(failed) == 1 and failed[0].agent == "Isabella Rodriguez"
    assert failed[0].tile == town_tile(2, 2)
    assert failed[0].origin == f"ville:{CAFE}:cafe:cafe customer seating"
    assert failed[0].destination == "ville:outdoors:outdoors (2)"
    assert "cannot be reached" in failed[0].reason
    assert town.tile_of("Isabella Rodriguez") == town_tile(2, 2)
    assert not [e for e in events if e.kind == "move"]


# The street along the top, the bathroom behind its wall (which the reference's arena maze
# labels as the bathroom's, as the real town's room walls are), its door at the bottom, and a
# park drawn only in the map's last column.
WALLED_ROOM = """\
..............p
..............p
wwwwww........p
wbbbbw........p
wwbwww........p
..............p"""


def test_a_room_is_seen_through_its_labelled_wall_at_the_vision_radius(tmp_path):
    """The reference's perception (maze.get_nearby_tiles) learns the arena of every tile in its
    square, walls included: from the street, the bathroom's wall 2 rows down is seen at vision
    radius 2 though its floor is 3 rows down. Before, only floor tiles were looked at and the
    room was missed (7 places, 3 residents in a day of the reference town)."""
    done = import_ville(write_checkout(tmp_path / "ga", art=WALLED_ROOM, personas={}),
                        tmp_path / "out")
    world = World.load(done.world_file)
    bathroom = f"ville:{HOME}:bathroom"
    assert world.blocked[(0, 2)] == "wall" and bathroom in map(str, world.arenas())
    assert bathroom in map(str, world.arenas_near([(3, 0)], 2))
    assert bathroom not in map(str, world.arenas_near([(3, 0)], 1))
    # The reference's square stops one short of the map's last column and row.
    assert f"ville:{PARK}:park" in map(str, world.arenas())
    assert f"ville:{PARK}:park" not in map(str, world.arenas_near([(12, 0), (13, 3)], 2))


def test_a_labelled_wall_is_seen_as_the_piece_of_its_arena_it_touches(tmp_path):
    """An arena drawn in two pieces ('park', 'park (2)'): its fence beside the smaller piece
    shows that piece; one touching no piece shows the arena's own name."""
    art = "ppp.y.yqq\n........."
    done = import_ville(write_checkout(tmp_path / "ga", art=art, personas={}),
                        tmp_path / "out")
    world = World.load(done.world_file)
    assert [str(a) for a in world.arenas_near([(6, 0)], 0)] == [f"ville:{PARK}:park (2)"]
    assert [str(a) for a in world.arenas_near([(4, 0)], 0)] == [f"ville:{PARK}:park"]
