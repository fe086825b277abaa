"""Viewer benchmark: load time of a full-day, 25-agent town log, and frames per second while
playing it at 1x and 64x (and faster) with all agents on screen.

    .venv/bin/python bench/viewer.py [--agents 25] [--frames 600] [--keep DIR]

The log is written first with the real engine, world and log writer (no LLM): 25 agents walk
the town (worlds/maps/town.yaml) between places all day with `WorldState.walk`, and the agent
events a generative agent logs are written at a realistic rate -- a daily and hourly plans,
an action per activity, a memory every two minutes awake, a 30-memory retrieval per decision,
reflections, and conversations of up to 8 turns when two agents meet. Frames are drawn
off-screen (SDL_VIDEODRIVER=dummy) at 1280x800; the figures exclude the display flip.
Targets (issue 6): load under 2 s, 60 frames per second or more.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
# This file is bench/viewer.py: run as a script, its folder comes first on sys.path and the
# name `viewer` would mean this file instead of the package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import numpy as np  # noqa: E402

from sandbox.engine import Engine  # noqa: E402
from sandbox.events import (  # noqa: E402
    AgentJoined,
    ConversationEnded,
    ConversationStarted,
    EpisodeEnded,
    Utterance,
)
from sandbox.events.agent import (  # noqa: E402
    ActionStarted,
    Insight,
    MemoryAdded,
    MemoryRetrieved,
    PlanMade,
    Reflected,
)
from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import EpisodeLog, RunHeader, RunResult, load_run  # noqa: E402

DAY = 24 * 3600
FIRST = ["Ada", "Ben", "Cora", "Dev", "Elif", "Finn", "Gita", "Hugo", "Iris", "Jon", "Kira",
         "Luca", "Mina", "Noor", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tess", "Uma", "Vik",
         "Wren", "Xavi", "Yara", "Zane", "Abel", "Bea", "Cal", "Dina"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Zhao", "Brandt", "Mensah", "Solberg", "Voss", "Byrne",
        "Hartley", "Ibarra", "Kowalski", "Nakamura", "Petrov", "Quist"]
DOINGS = ["having coffee", "reading", "working on a project", "chatting with friends",
          "buying groceries", "studying", "painting", "taking a walk", "having lunch",
          "attending a lecture", "shopping for supplies", "meeting a neighbour"]


def write_day_log(run_dir: Path, agents: int = 25, seed: int = 0,
                  memory_every: float = 120.0) -> Path:
    """Write a full simulated day of `agents` walking agents into `run_dir` (a memory every
    `memory_every` simulated seconds while an agent is busy somewhere)."""
    from worlds import WorldState, load_world

    world = load_world("town")
    rng = np.random.default_rng(seed)
    start = datetime(2024, 2, 13, 0, 0)
    names = [f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}" for i in range(agents)]
    header = RunHeader(scenario="bench_town_day", seed=seed, start_time=start,
                       models={n: "scripted/default" for n in names}, world="town",
                       config={"task": {"goal": "host a Valentine's party at the cafe",
                                        "performer": names[0], "keyword": "party",
                                        "location": "town:Copper Kettle Cafe:dining room"}})
    log = EpisodeLog(run_dir, header, overwrite=True)
    engine = Engine(llm=make_llm(LLMSettings(model="scripted/default", cache_mode="off")),
                    seed=seed, start_time=start, log=log)
    town = WorldState(engine, world)
    homes = [a for a in world.arenas() if "bedroom" in str(a) or "apartment" in str(a)
             or "room " in str(a)]
    public = [a for a in world.arenas() if a not in homes]
    conversations = [0]

    def life(name: str, home, index: int):
        memory = 0
        wake = 6 * 3600 + int(rng.integers(0, 7200))
        sleep = 22 * 3600 + int(rng.integers(0, 5400))
        yield engine.timeout(wake)
        engine.emit(PlanMade(t=engine.now, agent=name, level="daily", wake_up="07:00",
                             items=[f"{h:02d}:00 {DOINGS[(h + index) % len(DOINGS)]}"
                                    for h in range(7, 22, 2)]))
        while engine.now < sleep:
            place = public[int(rng.integers(len(public)))]
            doing = DOINGS[int(rng.integers(len(DOINGS)))]
            ids = list(range(max(0, memory - 30), memory))
            scores = sorted(rng.random(len(ids)) * 5.5, reverse=True)
            engine.emit(MemoryRetrieved(t=engine.now, agent=name, purpose="plan.steps",
                                        query=f"what should {name} do next", ids=ids,
                                        scores=[float(s) for s in scores]))
            yield from town.walk(name, place)
            stay = 1200 + int(rng.integers(0, 3600))
            engine.emit(ActionStarted(t=engine.now, agent=name, description=doing,
                                      location=str(place), until=engine.now + stay))
            others = [o for o in town.sharing_arena(name) if o != name]
            if others and rng.random() < 0.5:
                engine.process(talk(name, others[0], str(place)))
            end = engine.now + stay
            while engine.now < end:
                engine.emit(MemoryAdded(t=engine.now, agent=name, memory=memory,
                                        memory_kind="event",
                                        description=f"{name} is {doing} at {place.arena}",
                                        importance=int(rng.integers(1, 9)), created=engine.now))
                memory += 1
                yield engine.timeout(memory_every)
            if rng.random() < 0.15:
                engine.emit(Reflected(t=engine.now, agent=name, trigger=150.0,
                                      questions=["What matters most today?"],
                                      insights=[Insight(memory=memory, text="I enjoy the cafe",
                                                        evidence=ids[:3])]))
        yield from town.walk(name, home)
        engine.emit(ActionStarted(t=engine.now, agent=name, description="sleeping",
                                  location=str(home), until=DAY))

    def talk(a: str, b: str, place: str):
        conversations[0] += 1
        cid = f"c{conversations[0]}"
        engine.emit(ConversationStarted(t=engine.now, conversation=cid, participants=[a, b],
                                        location=place))
        turns = int(rng.integers(2, 9))
        for turn in range(turns):
            speaker, other = (a, b) if turn % 2 == 0 else (b, a)
            engine.emit(Utterance(t=engine.now, agent=speaker, conversation=cid, turn=turn,
                                  to=[other], text=f"turn {turn}: {DOINGS[turn]} later?",
                                  ends=turn == turns - 1))
            yield engine.timeout(20)
        engine.emit(ConversationEnded(t=engine.now, conversation=cid, turns=turns,
                                      reason="ended_by_agent"))

    for i, name in enumerate(names):
        home = homes[i % len(homes)]
        engine.emit(AgentJoined(t=0, agent=name, location=str(home), persona=f"resident {i}",
                                architecture="ga"))
        town.place(name, home)
        engine.process(life(name, home, i))
    engine.run(until=DAY)
    engine.emit(EpisodeEnded(t=DAY))
    log.finish(RunResult(status="completed", wall_time_s=0, sim_time_s=DAY, events=log.count,
                         llm_calls=0))
    return run_dir


def frames_per_second(renderer, playback, surface, speed: float, frames: int,
                      start: float) -> float:
    playback.seek(start)
    playback.speed, playback.playing = speed, True
    began = time.perf_counter()
    for _ in range(frames):
        playback.tick(1 / 60)  # the simulated time a 60 FPS window advances per frame
        renderer.draw(surface, playback)
    return frames / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=25, help="agents in the log [default: 25]")
    parser.add_argument("--frames", type=int, default=600,
                        help="frames drawn per speed [default: 600]")
    parser.add_argument("--keep", type=Path, help="write the log here and keep it")
    parser.add_argument("--memory-every", type=float, default=120.0,
                        help="simulated seconds between memories (smaller: a bigger log)")
    parser.add_argument("--log", type=Path, help="measure this run directory instead of "
                                                 "writing one (e.g. a real town_day run)")
    args = parser.parse_args()

    import pygame

    from viewer import Replay
    from viewer.frame import Renderer

    if args.log:
        run_dir = args.log
    else:
        run_dir = args.keep or Path(tempfile.mkdtemp(prefix="bench_viewer_")) / "day"
        began = time.perf_counter()
        write_day_log(run_dir, agents=args.agents, memory_every=args.memory_every)
        print(f"wrote the day log in {time.perf_counter() - began:.1f} s: {run_dir}")
    size_mb = (run_dir / "events.jsonl").stat().st_size / 1e6

    began = time.perf_counter()
    run = load_run(run_dir)
    kernel_load = time.perf_counter() - began
    began = time.perf_counter()
    replay = Replay(run_dir)
    load = time.perf_counter() - began
    kinds = len(replay.timeline.by_kind)
    print(f"log: {len(run.events)} events of {kinds} kinds, {size_mb:.1f} MB, "
          f"{len(replay.timeline.agents)} agents, "
          f"{len(replay.timeline.conversations)} conversations")
    print(f"load: viewer Replay {load:.2f} s (sandbox.log.load_run alone {kernel_load:.2f} s);"
          f" target < 2 s")

    pygame.font.init()
    size = (1280, 800)
    surface = pygame.Surface(size)
    renderer = Renderer(replay, size)
    from viewer import Playback

    playback = Playback(start=replay.start, end=replay.end)
    noon = min(12 * 3600.0, replay.end / 2)
    renderer.draw(surface, playback)  # warm the map image and text caches
    on_screen = len(renderer.view.screen_points(noon))
    print(f"agents on screen at {replay.clock(noon):%H:%M}: {on_screen} of "
          f"{len(replay.timeline.agents)} (whole map at {renderer.view.camera.scale} px per tile)")
    for speed in (1, 64, 1024):
        fps = frames_per_second(renderer, playback, surface, speed, args.frames, noon)
        print(f"playing at {speed:>4}x: {fps:6.0f} frames/s over {args.frames} frames "
              f"(target >= 60)")
    renderer.view.select(next(iter(replay.timeline.agents)))
    fps = frames_per_second(renderer, playback, surface, 64, args.frames, noon)
    print(f"playing at   64x with the inspection panel open: {fps:6.0f} frames/s")
    renderer.view.follow(next(iter(replay.timeline.agents)))
    renderer.view.camera.zoom(4)
    fps = frames_per_second(renderer, playback, surface, 64, args.frames, noon)
    print(f"playing at   64x following an agent at {renderer.view.camera.scale} px/tile: "
          f"{fps:6.0f} frames/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
