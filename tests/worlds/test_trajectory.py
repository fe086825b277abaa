"""Who was where, when: answered from events alone."""

from __future__ import annotations

import pytest

from sandbox.events import AgentJoined, ArenaEntry, Moved, MoveStopped, Placed
from worlds import Trajectories, Visit

CAFE = "town:Cafe:dining room"
STREET = "town:streets:Main Street"
PARK = "town:Park:lawn"


def log():
    return [
        Placed(t=0, agent="Ann", tile=(0, 0), place=CAFE + ":counter"),
        Placed(t=0, agent="Bo", tile=(5, 0), place=PARK),
        Moved(t=10, agent="Ann", destination=PARK, path=[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],
              seconds_per_tile=2.0, arrival=18.0,
              enters=[ArenaEntry(index=0, t=10, arena=CAFE),
                      ArenaEntry(index=2, t=14, arena=STREET),
                      ArenaEntry(index=4, t=18, arena=PARK)]),
        Moved(t=30, agent="Bo", destination=CAFE, path=[(5, 0), (4, 0), (3, 0), (2, 0)],
              seconds_per_tile=2.0, arrival=36.0,
              enters=[ArenaEntry(index=0, t=30, arena=PARK),
                      ArenaEntry(index=2, t=34, arena=STREET),
                      ArenaEntry(index=3, t=36, arena=CAFE)]),
        MoveStopped(t=33, agent="Bo", tile=(4, 0), index=1),
        AgentJoined(t=0, agent="Cy", location="town:Cafe:dining room:table"),
    ]


def test_positions_follow_the_path_tile_by_tile():
    track = Trajectories.from_events(log())
    assert track.position("Ann", 5) == (0, 0)
    assert track.position("Ann", 11.9) == (0, 0)
    assert track.position("Ann", 12) == (1, 0)
    assert track.position("Ann", 17) == (3, 0)
    assert track.position("Ann", 100) == (4, 0)
    assert track.position("Nobody", 1) is None
    assert track.positions(13) == {"Ann": (1, 0), "Bo": (5, 0)}


def test_an_interrupted_walk_ends_where_it_stopped():
    track = Trajectories.from_events(log())
    assert track.position("Bo", 32.5) == (4, 0)
    assert track.position("Bo", 50) == (4, 0)
    assert track.arena("Bo", 50) == PARK  # never reached the street


def test_who_was_in_an_arena_at_a_time():
    track = Trajectories.from_events(log())
    assert track.occupants(CAFE, 12) == ["Ann", "Cy"]
    assert track.occupants(STREET, 15) == ["Ann"]
    assert track.occupants("town:Cafe", 20) == ["Cy"]  # a sector counts its arenas
    assert track.occupants(PARK, 20) == ["Ann", "Bo"]


def test_visits_and_presence_over_an_interval():
    track = Trajectories.from_events(log())
    assert track.visits("Ann") == [Visit("Ann", CAFE, 0, 14), Visit("Ann", STREET, 14, 18),
                                   Visit("Ann", PARK, 18, None)]
    assert track.present(STREET, 0, 13.9) == []
    assert track.present(STREET, 0, 14) == ["Ann"]
    assert track.present(CAFE, 20, 30) == ["Cy"]


def test_the_leg_in_force_says_where_a_walk_goes_and_how_far_it_got():
    track = Trajectories.from_events(log())
    standing = track.leg("Ann", 5)
    assert standing.path is None and standing.tile == (0, 0) and not standing.walking(5)
    walk = track.leg("Ann", 13)
    assert walk.destination == PARK and walk.last_index == 4
    assert (walk.index_at(13), walk.steps(13)) == (1, pytest.approx(1.5))
    assert walk.walking(13) and not walk.walking(18)
    assert walk.steps(25) > walk.last_index  # past the end: a drawing finishes its motion
    assert track.leg("Bo", 31).last_index == 1  # cut at index 1
    assert track.leg("Nobody", 1) is None and track.leg("Ann", -1) is None
