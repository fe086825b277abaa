"""The rule of running ahead reads how many tiles each tile is from an arena (`_hops`): a count
too high would let a step go that someone could reach, so the counts are the shortest walks."""

from __future__ import annotations

import networkx as nx

from worlds import WorldState, load_world
from worlds import state as world_state


def shortest(world, arena) -> dict:
    return nx.multi_source_dijkstra_path_length(world.tile_graph, set(world.tiles(arena)))


def test_hops_are_the_shortest_walks_to_an_arena_and_the_area_where_none_goes(engine):
    world = load_world("town")
    town = WorldState(engine, world)
    area = world.width * world.height
    for arena in world.arenas()[::7]:
        walks = shortest(world, arena)
        grid = town._hops(arena)
        for y in range(world.height):
            for x in range(world.width):
                assert grid[y][x] == walks.get((x, y), area), (arena, x, y)


def test_a_town_larger_than_the_cap_keeps_fewer_hops_than_the_walk_never_more(engine,
                                                                             monkeypatch):
    monkeypatch.setattr(world_state, "HOPS_CAP", 40)  # town.yaml's walks run past 40 tiles
    world = load_world("town")
    town = WorldState(engine, world)
    arena = world.arenas()[0]
    walks = shortest(world, arena)
    grid = town._hops(arena)
    assert max(walks.values()) > 40
    for y in range(world.height):
        for x in range(world.width):
            walk = walks.get((x, y))
            assert grid[y][x] == (40 if walk is None else min(walk, 39)), (x, y)
    assert town.horizon() == 4 * 39 * town._spt  # the horizon never counts the unreachable
