"""A scripted day of the 25 residents: the log alone rebuilds every position the engine had."""

from __future__ import annotations

from datetime import datetime

from sandbox.engine import Engine
from sandbox.events import Moved
from sandbox.llm import LLMSettings, make_llm
from sandbox.log import EpisodeLog, RunHeader, load_run
from worlds import Trajectories, WorldState, load_world, world_residents
from worlds.day import scripted_day

START = datetime(2024, 3, 4, 0, 0)
SAMPLE_EVERY = 97.5  # seconds; off the whole seconds that routines start on


def test_positions_rebuilt_from_the_log_match_the_engine(tmp_path):
    world = load_world("town")
    residents = world_residents(world)
    log = EpisodeLog(tmp_path / "run", RunHeader(scenario="scripted_day", seed=0,
                                                 start_time=START, models={}, world="town"))
    engine = Engine(llm=make_llm(LLMSettings(model="scripted/default", cache_mode="off")),
                    seed=0, start_time=START, log=log)
    town = WorldState(engine, world)
    scripted_day(town, residents)
    seen: list[tuple[float, dict, dict]] = []

    def sample():
        while engine.now < 24 * 3600:
            yield engine.timeout(SAMPLE_EVERY)
            seen.append((engine.now, {p.name: town.tile_of(p.name) for p in residents},
                         {p.name: str(town.arena_of(p.name)) for p in residents}))

    engine.process(sample())
    engine.run(until=24 * 3600)
    log.close()

    run = load_run(tmp_path / "run")
    assert run.problems == []
    moves = run.of_kind("move")
    assert len(moves) > 150 and {m.agent for m in moves} == {p.name for p in residents}
    track = Trajectories.from_events(run.events)
    walking_samples = 0
    for t, tiles, arenas in seen:
        assert track.positions(t) == tiles, t
        assert {p.name: track.arena(p.name, t) for p in residents} == arenas, t
        walking_samples += sum(isinstance(m, Moved) and m.t < t < m.arrival for m in moves)
    assert walking_samples > 100  # the comparison covered agents mid-walk, not only at rest


def test_routines_bring_people_together():
    world = load_world("town")
    residents = world_residents(world)
    engine = Engine(llm=make_llm(LLMSettings(model="scripted/default", cache_mode="off")),
                    seed=0, start_time=START)
    events = []
    engine.subscribe(events.append)
    scripted_day(WorldState(engine, world), residents)
    engine.run(until=24 * 3600)
    track = Trajectories.from_events(events)
    lunch = 12 * 3600 + 45 * 60
    assert "Maya Lindqvist" in track.occupants("town:Copper Kettle Cafe", lunch)
    assert len(track.occupants("town:Copper Kettle Cafe", lunch)) >= 3
    assert track.arena("Priya Raman", 3 * 3600) == "town:Birchwood Dormitory:room 1"
