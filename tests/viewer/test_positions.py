"""Where agents are drawn: on the tile the log puts them at, gliding along the logged path."""

from __future__ import annotations

import math

from sandbox.events import AgentJoined
from sandbox.events.world import MoveStopped, Placed
from tests.viewer.runs import move as move_event
from tests.viewer.runs import walk
from viewer.positions import Positions
from worlds import Trajectories

PATH = walk((0, 0), (4, 0), (4, 3))  # 8 tiles


def _positions(*events):
    positions = Positions(lambda address: (9, 9) if address == "w:s:a" else None)
    positions.add(list(events))
    return positions


def test_a_walker_stands_on_path_i_from_t0_plus_i_seconds_per_tile():
    p = _positions(Placed(t=0, agent="A", tile=(0, 0), place="w:s:a"),
                   move_event("A", 10.0, PATH, "w:s:b", seconds_per_tile=3.0))
    assert p.tile("A", 5) == (0, 0)
    for i, tile in enumerate(PATH):
        assert p.tile("A", 10 + 3 * i) == tile
        assert p.tile("A", 10 + 3 * i + 2.9) == tile
    assert p.tile("A", 1000) == PATH[-1]


def test_the_drawn_point_never_leaves_the_logged_tile():
    p = _positions(move_event("A", 0.0, PATH, "w:s:b", seconds_per_tile=2.0))
    for k in range(0, 200):
        t = k * 0.1
        x, y = p.point("A", t)
        tx, ty = p.tile("A", t)
        assert tx <= x <= tx + 1 and ty <= y <= ty + 1, (t, (x, y), (tx, ty))


def test_the_drawn_point_moves_smoothly():
    p = _positions(move_event("A", 0.0, PATH, "w:s:b", seconds_per_tile=2.0))
    points = [p.point("A", k * 0.05) for k in range(400)]
    steps = [math.dist(a, b) for a, b in zip(points, points[1:], strict=False)]
    assert max(steps) < 0.1  # no jumps: at most 2 tiles/s * 0.05 s


def test_a_stopped_walk_leaves_the_agent_where_it_stopped():
    p = _positions(move_event("A", 0.0, PATH, "w:s:b", seconds_per_tile=2.0),
                   MoveStopped(t=5.0, agent="A", tile=PATH[2], index=2))
    assert p.tile("A", 4.0) == PATH[2]
    assert p.tile("A", 60.0) == PATH[2]


def test_an_agent_known_only_by_its_address_stands_on_that_place():
    p = _positions(AgentJoined(t=0, agent="A", location="w:s:a"))
    assert p.tile("A", 3.0) == (9, 9)
    assert p.tile("B", 3.0) is None


def test_an_agent_joined_at_an_address_stands_there_until_the_log_places_it():
    p = _positions(AgentJoined(t=0, agent="A", location="w:s:a"),
                   Placed(t=10, agent="A", tile=(1, 1), place="w:s:a"))
    assert p.tile("A", 5) == (9, 9) and p.tile("A", 10) == (1, 1)


def test_the_drawn_tile_is_the_one_worlds_reads_from_the_log():
    events = [Placed(t=0, agent="A", tile=(0, 0), place="w:s:a"),
              move_event("A", 10.0, PATH, "w:s:b", seconds_per_tile=3.0),
              MoveStopped(t=20.0, agent="A", tile=PATH[3], index=3)]
    p, track = _positions(*events), Trajectories.from_events(events)
    for k in range(400):
        assert p.tile("A", k * 0.1) == track.position("A", k * 0.1)
