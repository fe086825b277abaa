"""A scripted day with no model: residents walk their written routines.

Used by the tests (positions rebuilt from the log must match the engine's) and by
bench/world.py (simulated hours per wall second). Each resident starts at the place of the first
step of their routine; at each step's time they walk to its place, arriving late if the walk
takes longer than the gap (the next step then starts on arrival).
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime, time, timedelta

import simpy

from .residents import Resident
from .state import WALKING_SPEED, WorldState


def step_seconds(start: datetime, clock: str) -> float:
    """Simulated seconds from `start` to the next occurrence of HH:MM (today or tomorrow)."""
    hours, minutes = (int(p) for p in clock.split(":"))
    when = datetime.combine(start.date(), time(hours, minutes), tzinfo=start.tzinfo)
    if when < start:
        when += timedelta(days=1)
    return (when - start).total_seconds()


def walk_routine(town: WorldState, resident: Resident, *,
                 speed: float = WALKING_SPEED) -> Generator[simpy.Event, object, None]:
    """A SimPy process: `resident` follows their routine once, starting at the engine's now."""
    engine = town.engine
    start = engine.now_datetime
    due = sorted(((step_seconds(start, s.at) + engine.now, s) for s in resident.routine),
                 key=lambda item: item[0])
    for at, step in due:
        if at > engine.now:
            yield engine.timeout(at - engine.now)
        yield from town.walk(resident.name, step.place, speed=speed)


def scripted_day(town: WorldState, residents: list[Resident], *,
                 speed: float = WALKING_SPEED) -> list[simpy.Process]:
    """Place every resident where their routine begins and start their routine processes."""
    processes = []
    for resident in residents:
        first = resident.routine[0].place if resident.routine else resident.living_area
        town.place(resident.name, first)
        processes.append(town.engine.process(walk_routine(town, resident, speed=speed)))
    return processes
