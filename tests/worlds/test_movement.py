"""Walking in the engine: one move event per walk, occupancy changes on time, interruptions."""

from __future__ import annotations

import pytest
import simpy

from sandbox.events import Moved, MoveStopped
from worlds import Trajectories, WorldState


@pytest.fixture
def town(engine, tiny):
    events = []
    engine.subscribe(events.append)
    state = WorldState(engine, tiny)
    state.events = events
    return state


def test_a_walk_logs_its_path_and_arrives_on_time(engine, town):
    town.place("Ann", "tiny:house:kitchen:table")
    arrived = []

    def ann():
        tile = yield from town.walk("Ann", "tiny:house:bedroom:bed")
        arrived.append((tile, engine.now))

    engine.process(ann())
    engine.run()
    move = next(e for e in town.events if isinstance(e, Moved))
    assert move.path[0] == (2, 2) and move.path[-1] == (8, 1)
    assert move.seconds_per_tile == pytest.approx(1.0)  # 1.4 m tiles at 1.4 m/s
    assert arrived == [((8, 1), pytest.approx(move.arrival))]
    assert move.arrival == pytest.approx(len(move.path) - 1)
    assert [e.arena for e in move.enters] == ["tiny:house:kitchen", "tiny:house:bedroom"]
    assert town.arena_of("Ann").arena == "bedroom"


def test_who_shares_an_arena_changes_when_the_walker_crosses(engine, town):
    town.place("Ann", "tiny:house:kitchen:table")
    town.place("Bo", "tiny:house:bedroom:bed")
    seen = []
    town.on_enter(lambda who, left, entered, t: seen.append((who, entered.arena, t)))

    def ann():
        yield from town.walk("Ann", "tiny:house:bedroom:bed")

    def look():
        yield engine.timeout(1.5)
        seen.append(("look", town.sharing_arena("Bo"), engine.now))
        yield engine.timeout(3.0)
        seen.append(("look", town.sharing_arena("Bo"), engine.now))

    engine.process(ann())
    engine.process(look())
    engine.run()
    crossing = next(e for e in town.events if isinstance(e, Moved)).enters[1]
    assert ("look", [], 1.5) in seen
    assert ("Ann", "bedroom", pytest.approx(crossing.t)) in seen
    assert ("look", ["Ann"], 4.5) in seen
    assert town.agents_in("tiny:house") == ["Ann", "Bo"]


def test_an_interrupted_walk_stops_on_the_current_tile(engine, town):
    town.place("Ann", (1, 5))
    outcome = []

    def ann():
        try:
            yield from town.walk("Ann", "tiny:house:bedroom:bed")
        except simpy.Interrupt as stop:
            outcome.append(stop.cause)

    walker = engine.process(ann())

    def stop_her():
        yield engine.timeout(3.5)
        walker.interrupt("Bo says hello")

    engine.process(stop_her())
    engine.run()
    stopped = next(e for e in town.events if isinstance(e, MoveStopped))
    move = next(e for e in town.events if isinstance(e, Moved))
    assert outcome == ["Bo says hello"]
    assert stopped.index == 3 and stopped.tile == move.path[3] == town.tile_of("Ann")
    track = Trajectories.from_events(town.events)
    assert track.position("Ann", 100.0) == stopped.tile
    assert track.arena("Ann", 100.0) == str(town.arena_of("Ann"))


def test_object_states_default_and_change(engine, town):
    assert town.object_state("tiny:house:bedroom:bed") == "idle"
    town.set_object_state("tiny:house:bedroom:bed", "unmade", agent="Ann")
    assert town.object_state("tiny:house:bedroom:bed") == "unmade"
    assert town.events[-1].kind == "object_state"
