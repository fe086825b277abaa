"""bench/world.py draws its routes between the places residents use, inside the town, even on a
map whose bare ground outside the town's boundary is larger than the town (as on the reference
map); and it runs a path finder loaded from a checkout on that checkout's collision maze."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.scripts import load_script
from worlds import World
from worlds.ville import import_ville

from .ville_fixture import CAFE, DORM, HOME, PARK, walled_town, write_checkout


def load_bench():
    return load_script("bench/world.py")


@pytest.fixture
def checkout(tmp_path) -> Path:
    return write_checkout(tmp_path / "ga", art=walled_town())


@pytest.fixture
def walled(checkout, tmp_path) -> World:
    import_ville(checkout, tmp_path / "out")
    return World.load(tmp_path / "out" / "ville.yaml")


def test_routes_start_and_end_in_the_town_not_on_the_larger_ground_outside(walled):
    bench = load_bench()
    town = set(walled.areas[walled.town_area])
    assert max(len(a) for a in walled.areas) > 4 * len(town)  # the largest area is not the town

    starts, targets = bench.sample_routes(walled, 500, seed=3)

    assert all(start in town for start in starts)
    assert all(walled.area_of(target) == walled.town_area for target in targets)
    assert "ville:outdoors:outdoors (2)" not in {str(t) for t in targets}  # the ground outside


def test_destinations_are_homes_arenas_with_objects_and_public_places(walled):
    kinds = {kind: [str(p) for p in places]
             for kind, places in load_bench().destinations(walled).items()}
    assert kinds["homes"] == [f"ville:{HOME}:main room", f"ville:{DORM}:Klaus Mueller's room"]
    assert f"ville:{CAFE}:cafe" in kinds["arenas with objects"]
    assert f"ville:{PARK}:park" in kinds["public places"]
    assert not any(HOME in p or DORM in p for p in kinds["public places"])


# Not the reference's code: a breadth-first search of our own with its interface ((x, y) tiles,
# maze[row][col] of strings, blocked where equal to the collision id) and its failure mode (a
# route longer than its step limit comes back as the one end tile).
STUB_FINDER = '''
from collections import deque

def path_finder(maze, start, end, collision_block_char, verbose=False):
    parent = {tuple(start): None}
    queue = deque([tuple(start)])
    while queue:
        x, y = queue.popleft()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if (0 <= n[1] < len(maze) and 0 <= n[0] < len(maze[0]) and n not in parent
                    and maze[n[1]][n[0]] != collision_block_char):
                parent[n] = (x, y)
                queue.append(n)
    path, tile = [], tuple(end)
    while tile is not None:
        path.append(tile)
        tile = parent.get(tile)
    return path[::-1] if len(path) - 1 <= 8 else [tuple(end)]
'''


def test_the_reference_finder_is_timed_on_the_checkouts_maze_and_its_wrong_paths_counted(
        checkout, walled, capsys):
    folder = checkout / "reverie" / "backend_server"
    folder.mkdir(parents=True)
    (folder / "path_finder.py").write_text(textwrap.dedent(STUB_FINDER))
    bench = load_bench()

    bench.path_queries(walled, 40, seed=1, reference=checkout)

    out = capsys.readouterr().out
    assert "its maze and the world disagree on 0 of 680 tiles" in out
    starts, targets = bench.sample_routes(walled, 40, seed=1)
    over = sum(len(walled.path(s, t)) - 1 > 8 for s, t in zip(starts, targets, strict=True))
    assert 0 < over < 40
    found = re.search(r"same length as ours (\d+)/40; wrong (\d+): a one-tile path (\d+)", out)
    assert found and [int(g) for g in found.groups()] == [40 - over, over, over]
    assert "40/40 right" in out
