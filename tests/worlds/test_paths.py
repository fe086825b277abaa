"""Paths keep to walkable tiles, go through doors, and are as short as any walk can be."""

from __future__ import annotations

import networkx as nx
import pytest

from worlds import AddressError, load_world


def assert_walk(world, path):
    for tile in path:
        assert world.walkable(tile), f"{tile} is blocked"
    for a, b in zip(path, path[1:], strict=False):
        assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1, f"{a} -> {b} is not one step"


def test_path_goes_around_walls_through_the_door(tiny):
    path = tiny.path((1, 1), "tiny:house:bedroom")
    assert_walk(tiny, path)
    assert (4, 3) in path  # the only gap in the wall between the rooms
    assert tiny.arena_at(path[-1]).arena == "bedroom"
    assert all(tiny.arena_at(t).arena == "kitchen" for t in path[:-1])


def test_path_reaches_the_nearest_tile_of_an_object(tiny):
    path = tiny.path((7, 3), "tiny:house:bedroom:bed")
    assert path[-1] == (8, 1) and len(path) == 4


def test_path_length_is_the_shortest_possible(tiny):
    for target in ("tiny:outside:garden", "tiny:house:bedroom:bed", "tiny:house:kitchen:table"):
        best = min(nx.shortest_path_length(tiny.tile_graph, (7, 2), t) for t in tiny.tiles(target))
        assert len(tiny.path((7, 2), target)) - 1 == best


def test_already_there_is_a_one_tile_path(tiny):
    assert tiny.path((2, 2), "tiny:house:kitchen:table") == [(2, 2)]


def test_unknown_place_and_blocked_start_are_errors(tiny):
    with pytest.raises(AddressError, match="did you mean"):
        tiny.path((1, 1), "tiny:house:bedrooom")
    with pytest.raises(AddressError, match="not a walkable tile"):
        tiny.path((0, 0), "tiny:house:bedroom")


def test_addresses_resolve_without_case_or_world(tiny):
    assert str(tiny.resolve("HOUSE:Bedroom:bed")) == "tiny:house:bedroom:bed"
    assert str(tiny.resolve(" tiny : house ")) == "tiny:house"


def test_town_paths_are_shortest_and_repeatable():
    town = load_world("town")
    start = town.tile_for("town:Birchwood Dormitory:room 1:bed")
    target = "town:Larkhaven Market:pharmacy:counter"
    cold = town.path(start, target)
    assert town.path(start, target) == cold  # from the cache
    assert_walk(town, cold)
    best = min(nx.shortest_path_length(town.tile_graph, start, t) for t in town.tiles(target))
    assert len(cold) - 1 == best
    assert town.arena_at(cold[-1]) == town.resolve("town:Larkhaven Market:pharmacy")


def test_travel_time_follows_walking_speed(tiny):
    path = tiny.path((1, 1), "tiny:outside:garden")
    assert tiny.travel_time(path, speed=1.4) == pytest.approx((len(path) - 1) * 1.0)


@pytest.mark.parametrize("town", ["town", "generated"])
def test_a_walk_inside_a_place_is_the_one_a_search_kept_to_the_place_finds(town, tmp_path):
    """path_inside searches a graph of the place's own, kept; its paths are the very ones a
    search of the town's graph kept to the place finds (the same steps, the same ties), so no
    log changes: every arena and sector, up to 40 pairs of tiles each."""
    import random

    from worlds.generate import generate_town

    world = load_world(generate_town(60, seed=2).write(tmp_path) if town == "generated"
                       else "town")
    draw = random.Random(7)
    places = [*world.arenas(), *world.sectors()]
    compared = 0
    for place in places:
        tiles = [t for t in world._tiles[place] if world.walkable(t)]
        view = world.tile_graph.subgraph(tiles)
        for _ in range(min(40, len(tiles))):
            start, goal = draw.choice(tiles), draw.choice(tiles)
            try:
                expected = nx.shortest_path(view, start, goal)
            except nx.NetworkXNoPath:
                expected = [start]
            assert world.path_inside(start, goal, place) == expected, (place, start, goal)
            compared += 1
    assert compared > 500
