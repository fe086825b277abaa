"""Small runs written by hand with the real log writer, for the viewer's tests.

`mini_town.yaml` is a 30x12 world in the map format of worlds/README.md; the town tests use the
real map (worlds/maps/town.yaml) when it is there.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from sandbox.events import (  # noqa: E402
    AgentJoined,
    ConversationEnded,
    ConversationStarted,
    EpisodeEnded,
    Utterance,
)
from sandbox.events.world import ArenaEntry, Moved, Placed  # noqa: E402
from sandbox.log import EpisodeLog, RunHeader, RunResult  # noqa: E402

DATA = Path(__file__).with_name("data")
MINI_TOWN = DATA / "mini_town.yaml"
START = datetime(2024, 3, 4, 8, 0)


def walk(*waypoints: tuple[int, int]) -> list[tuple[int, int]]:
    """A 4-connected path through straight-line waypoints."""
    path = [waypoints[0]]
    for x, y in waypoints[1:]:
        while path[-1] != (x, y):
            px, py = path[-1]
            if px != x:
                px += 1 if x > px else -1
            else:
                py += 1 if y > py else -1
            path.append((px, py))
    return path


def move(agent: str, t: float, path, destination: str, seconds_per_tile: float = 2.0,
         arena: str = "") -> Moved:
    return Moved(t=t, agent=agent, destination=destination, path=path,
                 seconds_per_tile=seconds_per_tile,
                 arrival=t + (len(path) - 1) * seconds_per_tile,
                 enters=[ArenaEntry(index=0, t=t, arena=arena or destination)])


def write_run(run_dir: Path, events, *, world: str | None = str(MINI_TOWN),
              scenario: str = "test_town", finished: bool = True, config=None) -> Path:
    header = RunHeader(scenario=scenario, seed=0, start_time=START,
                       models={"default": "scripted/default"}, world=world,
                       config=config or {})
    log = EpisodeLog(run_dir, header, overwrite=True)
    for event in events:
        log.emit(event)
    if finished:
        log.finish(RunResult(status="completed", wall_time_s=0.1,
                             sim_time_s=max((e.t for e in events), default=0), events=len(events),
                             llm_calls=0))
    else:
        log.close()
    return run_dir


# Ada walks from the kitchen of Oak House down the street into the cafe (tiles every 2 s from
# t=60); Ben waits in the cafe; they talk when she arrives; Cy sits in the library all along.
ADA_PATH = walk((3, 2), (3, 5), (22, 5), (22, 2))
ADA_START = 60.0
ADA_ARRIVAL = ADA_START + (len(ADA_PATH) - 1) * 2.0


def town_events():
    return [
        AgentJoined(t=0, agent="Ada Stone", location="mini:Oak House:kitchen",
                    persona="A baker who loves early mornings", architecture="ga"),
        AgentJoined(t=0, agent="Ben Ortiz", location="mini:Corner Cafe:dining room",
                    persona="The cafe owner", architecture="ga"),
        AgentJoined(t=0, agent="Cy Park", location="mini:Library:reading room",
                    persona="A student", architecture="ga"),
        Placed(t=0, agent="Ada Stone", tile=(3, 2), place="mini:Oak House:kitchen"),
        Placed(t=0, agent="Ben Ortiz", tile=(24, 2), place="mini:Corner Cafe:dining room"),
        Placed(t=0, agent="Cy Park", tile=(5, 9), place="mini:Library:reading room"),
        move("Ada Stone", ADA_START, ADA_PATH, "mini:Corner Cafe:dining room"),
        ConversationStarted(t=ADA_ARRIVAL + 10, conversation="c1",
                            participants=["Ada Stone", "Ben Ortiz"],
                            location="mini:Corner Cafe:dining room"),
        Utterance(t=ADA_ARRIVAL + 10, agent="Ada Stone", conversation="c1", turn=0,
                  to=["Ben Ortiz"], text="Morning Ben! Are you coming to the party on Friday?"),
        Utterance(t=ADA_ARRIVAL + 40, agent="Ben Ortiz", conversation="c1", turn=1,
                  to=["Ada Stone"], text="Wouldn't miss it. I'll bring the coffee.", ends=True),
        ConversationEnded(t=ADA_ARRIVAL + 40, conversation="c1", turns=2,
                          reason="ended_by_agent"),
        EpisodeEnded(t=ADA_ARRIVAL + 600),
    ]
