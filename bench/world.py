"""World benchmark: path queries per second on a map (cold and cached) between the places its
residents use, every path checked against a plain networkx search; optionally the reference's
own path finder on the same routes; and a scripted game day of the town's 25 residents walking
their routines with no LLM (simulated hours per wall second).

    .venv/bin/python bench/world.py [--queries 300] [--days 1] [--world ville]
        [--reference CHECKOUT]

--world: any world by name or file, e.g. the reference town imported with `sandbox import-ville`
(its residents have no scripted routine, so the game day runs on the town only).
--reference: a checkout of the Generative Agents reference repository; its
`reverie/backend_server/path_finder.py` is loaded from there at run time (never copied here) and
timed on the same (start, destination tile) pairs, on the collision maze read from that checkout.

Routes start on a tile of the town's walkable area (`World.town_area`: where the residents live
and spawn, never the largest area: on the reference map the bare ground outside the town's
boundary is larger than the town) and end at a home, an arena with objects or a public place of
the town. Target (issue 3): a full game day for 25 residents in under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import networkx as nx
import numpy as np

from sandbox.engine import Engine
from sandbox.llm import LLMSettings, make_llm
from worlds import Address, WorldState, world_residents
from worlds.catalog import world_path
from worlds.day import scripted_day
from worlds.world import PATH_CACHE_SIZE, Tile, World

REFERENCE_FINDER = Path("reverie/backend_server/path_finder.py")
REFERENCE_MATRIX = Path("environment/frontend_server/static_dirs/assets/the_ville/matrix")
# The longest route the reference finds: its wavefront stops after 151 waves (its
# `except_handle = 150`) and a longer route comes back as the end tile alone.
REFERENCE_STEPS = 151


def destinations(world: World) -> dict[str, list[Address]]:
    """The places residents go to, each kind in map order, all in the town's walkable area:
    their homes (living areas), the arenas holding objects, and the public places (arenas in
    no sector where someone lives)."""
    town = [a for a in world.arenas() if world.area_of(a) == world.town_area]
    homes = {h.up_to("arena") for h in world.homes}
    home_sectors = {h.up_to("sector") for h in homes}
    return {"homes": [a for a in town if a in homes],
            "arenas with objects": [a for a in town if world.objects(a)],
            "public places": [a for a in town if a.up_to("sector") not in home_sectors]}


def sample_routes(world: World, n: int, seed: int = 0) -> tuple[list[Tile], list[Address]]:
    """`n` (start tile, destination) pairs: starts drawn from the tiles of the town's walkable
    area, destinations from `destinations(world)` (each place once, whatever its kinds)."""
    rng = np.random.default_rng(seed)
    tiles = world.areas[world.town_area]
    places = list(dict.fromkeys(p for kind in destinations(world).values() for p in kind))
    if not places:
        raise SystemExit(f"world '{world.name}' has no home, arena with objects or public "
                         "place in its town to walk to")
    starts = [tiles[i] for i in rng.integers(len(tiles), size=n)]
    targets = [places[i] for i in rng.integers(len(places), size=n)]
    return starts, targets


def path_queries(world: World, n: int, seed: int = 0, reference: Path | None = None) -> None:
    starts, targets = sample_routes(world, n, seed)
    finder, source = load_reference(reference, world) if reference else (None, "")

    world._trees.clear()  # cold: every query builds its destination's search tree
    began = time.perf_counter()
    paths = []
    for start, target in zip(starts, targets, strict=True):
        world._trees.clear()
        paths.append(world.path(start, target))
    cold = time.perf_counter() - began
    ends = [p[-1] for p in paths]  # the tile of the place each route reaches: the others' goal

    for target in set(targets):  # warm every destination once
        world.path(starts[0], target)
    began = time.perf_counter()
    for start, target in zip(starts, targets, strict=True):
        world.path(start, target)
    cached = time.perf_counter() - began

    # A plain networkx single-pair BFS to the same tile.
    began = time.perf_counter()
    for start, end in zip(starts, ends, strict=True):
        nx.shortest_path(world.tile_graph, start, end)
    plain = time.perf_counter() - began
    wrong = check_paths(world, starts, targets, paths)

    kinds = destinations(world)
    town = world.areas[world.town_area]
    lengths = [len(p) - 1 for p in paths]
    areas = (f"{len(world.areas)} walkable areas, the largest "
             f"{max(len(a) for a in world.areas)} tiles" if len(world.areas) > 1
             else "one walkable area")
    print(f"path queries on {world.name} ({world.width}x{world.height}, "
          f"{len(world.tile_graph)} walkable tiles, {areas})")
    why = world.town_rule if len(world.areas) > 1 else "all of the map"
    print(f"  sampled: area {world.town_area + 1}, the town ({why}), {len(town)} "
          f"tiles; destinations: {', '.join(f'{len(v)} {k}' for k, v in kinds.items())} "
          f"({len(set(targets))} distinct drawn)")
    print(f"  {n} (start, place) pairs, mean path {np.mean(lengths):.0f} steps, longest "
          f"{max(lengths)}, {sum(s > REFERENCE_STEPS for s in lengths)} over "
          f"{REFERENCE_STEPS}")
    print(f"  ours, cold (new search tree per query): {n / cold:8.0f} queries/s "
          f"({1000 * cold / n:.2f} ms each)")
    print(f"  ours, cached (tree per destination kept, {PATH_CACHE_SIZE} kept): "
          f"{n / cached:8.0f} queries/s ({1e6 * cached / n:.1f} us each)")
    print(f"  networkx nx.shortest_path to the same tile: {n / plain:8.0f} queries/s "
          f"({1000 * plain / n:.2f} ms each)")
    if finder is not None:
        print(f"  reference: {source}")
        reference_queries(world, finder, starts, ends, lengths)
    print(f"  ours checked against networkx (walkable steps, ends on the place, shortest to its "
          f"nearest tile): {n - len(wrong)}/{n} right")
    for start, target, reason in wrong[:5]:
        print(f"    wrong: {start} -> {target}: {reason}")


# -- the reference's path finder -------------------------------------------------------------------
Finder = Callable[[Tile, Tile], list]


def load_reference(checkout: Path, world: World) -> tuple[Finder, str]:
    """The reference's `path_finder`, loaded from the checkout, bound to the maze the reference
    gives it: `Maze.collision_maze`, the collision CSV's one line of stripped strings cut into
    rows of `maze_width`, and its `collision_block_id` (the one non-zero value of that CSV,
    "32125" on the Ville: the finder blocks only tiles equal to it). Also a line saying where
    it came from and whether its maze matches the world's walkable tiles."""
    source = checkout / REFERENCE_FINDER
    if not source.is_file():
        raise SystemExit(f"--reference: no {source}")
    spec = importlib.util.spec_from_file_location("reference_path_finder", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    matrix = checkout / REFERENCE_MATRIX
    width = int(json.loads((matrix / "maze_meta_info.json").read_text())["maze_width"])
    with open(matrix / "maze" / "collision_maze.csv", newline="") as f:
        raw = [value.strip() for value in next(csv.reader(f))]
    maze = [raw[i:i + width] for i in range(0, len(raw), width)]
    if (len(maze[0]), len(maze)) != (world.width, world.height):
        raise SystemExit(f"--reference: its maze is {len(maze[0])}x{len(maze)}, world "
                         f"'{world.name}' is {world.width}x{world.height}: import that "
                         "checkout with `sandbox import-ville` and pass it as --world")
    block = sorted({v for v in raw if v != "0"})
    if len(block) != 1:
        raise SystemExit(f"--reference: the collision maze has {len(block)} non-zero values "
                         f"({', '.join(block[:5])}); its path finder blocks only one")
    differ = sum((maze[y][x] != "0") == world.walkable((x, y))
                 for y in range(world.height) for x in range(world.width))
    # The reference takes and returns (x, y) tiles, as ours (its path_finder swaps to (row, col)
    # inside), so no conversion.
    return (lambda start, end: module.path_finder(maze, start, end, block[0]),
            f"{source}; its maze and the world disagree on {differ} of "
            f"{world.width * world.height} tiles (blocked or not)")


def reference_queries(world: World, finder: Finder, starts: list[Tile], ends: list[Tile],
                      lengths: list[int]) -> None:
    """Time the reference on (start, our route's last tile) and compare its paths with ours."""
    began = time.perf_counter()
    theirs = [finder(start, end) for start, end in zip(starts, ends, strict=True)]
    wall = time.perf_counter() - began
    n = len(starts)
    same = one_tile = other = 0
    for start, end, steps, path in zip(starts, ends, lengths, theirs, strict=True):
        walk = (len(path) > 0 and tuple(path[0]) == start and tuple(path[-1]) == end
                and all(world.tile_graph.has_edge(tuple(a), tuple(b))
                        for a, b in zip(path, path[1:], strict=False)))
        if walk and len(path) - 1 == steps:
            same += 1
        elif len(path) == 1 and start != end:
            one_tile += 1
        else:
            other += 1
    # One wave per step of the route, each rescanning the whole grid: the cost grows with it.
    print(f"  reference path_finder to the same tile: {n / wall:8.1f} queries/s "
          f"({1000 * wall / n:.1f} ms each, {1000 * wall / max(sum(lengths), 1):.2f} ms per "
          "step of the route)")
    print(f"    same length as ours {same}/{n}; wrong {one_tile + other}: a one-tile path "
          f"{one_tile} (ours over {REFERENCE_STEPS} steps: "
          f"{sum(s > REFERENCE_STEPS for s in lengths)}), other {other}")


def check_paths(world: World, starts, targets, paths) -> list[tuple]:
    """(start, target, reason) for each path that is not a shortest walk to the place."""
    wrong = []
    for start, target, path in zip(starts, targets, paths, strict=True):
        ends = set(world.tiles(target))
        steps = zip(path, path[1:], strict=False)
        steps_ok = all(world.tile_graph.has_edge(a, b) for a, b in steps)
        distance = nx.single_source_shortest_path_length(world.tile_graph, start)
        best = min(distance[t] for t in ends if t in distance)
        if path[0] != start or path[-1] not in ends or not steps_ok:
            wrong.append((start, target, "not a walk from the start to the place"))
        elif len(path) - 1 != best:
            wrong.append((start, target, f"{len(path) - 1} steps, shortest is {best}"))
    return wrong


def game_day(days: int) -> None:
    began = time.perf_counter()
    world = World.load(world_path("town"))  # fresh: empty path cache
    residents = world_residents(world)
    loaded = time.perf_counter() - began
    engine = Engine(llm=make_llm(LLMSettings(model="scripted/default", cache_mode="off")),
                    seed=0, start_time=datetime(2024, 3, 4, 0, 0))
    events = []
    engine.subscribe(events.append)
    town = WorldState(engine, world)
    began = time.perf_counter()
    for day in range(days):
        if day == 0:
            scripted_day(town, residents)
        else:
            from worlds.day import walk_routine
            for resident in residents:
                engine.process(walk_routine(town, resident))
        engine.run(until=(day + 1) * 86400)
    wall = time.perf_counter() - began
    moves = sum(e.kind == "move" for e in events)
    tiles = sum(len(e.path) for e in events if e.kind == "move")
    hours = engine.now / 3600
    print(f"scripted game day x{days}: {len(residents)} residents, {moves} walks, "
          f"{tiles} path tiles, {len(events)} events")
    print(f"  world + residents load: {loaded:.2f} s")
    print(f"  simulated {hours:.1f} h in {wall:.2f} s wall = {hours / wall:,.0f} simulated "
          f"hours per wall second ({wall / days:.2f} s per game day; target < 10 s)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=300,
                        help="path queries, cold then cached [default: 300]")
    parser.add_argument("--days", type=int, default=1, help="scripted game days [default: 1]")
    parser.add_argument("--world", default="town",
                        help="world name or file for the path queries [default: town]")
    parser.add_argument("--reference", type=Path, metavar="CHECKOUT",
                        help="also time the reference's path finder, loaded from this checkout "
                             "of the Generative Agents repository, on the same routes")
    args = parser.parse_args()
    path_queries(World.load(world_path(args.world)), args.queries, reference=args.reference)
    print()
    game_day(args.days)


if __name__ == "__main__":
    main()
