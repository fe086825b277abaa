"""An STSS episode: an instantiated task put into a town of generative agents.

The performer gets the chosen architecture (`ga` or `ga_tdp`) and the task in its `currently`
(and task planner); the background residents are plain `ga`. By default the episode runs from
06:00 the day before the event until the end of its time window (tasks without a fixed time:
until 21:00 on the event day). `EpisodeWindow` shortens it: start on the event day, later, or
stop earlier.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from sandbox.engine import Engine
from sandbox.simtime import check_sim_time
from tasks.town import TownConfig, TownScenario, Whisper, whisper_time

from .events import TaskAssigned
from .instantiate import STSSTask
from .schema import clock

DAY_END = "21:00"  # when an episode of a task without a fixed time stops


class EpisodeWindow(BaseModel):
    """When the episode runs, relative to the event day."""

    model_config = ConfigDict(extra="forbid")

    same_day: bool = False  # start on the event day instead of the day before
    start: str = "06:00"  # the clock time the episode starts
    until: str | None = None  # the clock time on the event day it stops [default: see above]

    @field_validator("start", "until", mode="before")
    @classmethod
    def _clock(cls, value):
        return None if value is None else clock(value)

    def times(self, task: STSSTask) -> tuple[datetime, datetime]:
        """The episode's first and last simulated moment; ValueError when they do not fit."""
        day = task.date - timedelta(days=0 if self.same_day else 1)
        start = datetime.combine(day, time.fromisoformat(self.start))
        if self.until is not None:
            end = datetime.combine(task.date, time.fromisoformat(self.until))
        else:
            end = task.end or datetime.combine(task.date, time.fromisoformat(DAY_END))
        if end <= start:
            raise ValueError(f"the episode would end ({end:%Y-%m-%d %H:%M}) before it starts "
                             f"({start:%Y-%m-%d %H:%M})")
        if task.start is not None and start > task.start:
            raise ValueError(f"the episode would start ({start:%H:%M}) after the activity "
                             f"({task.start:%Y-%m-%d %H:%M})")
        if task.start is not None and end <= task.start:  # nothing could ever be scored
            raise ValueError(f"the episode would end ({end:%Y-%m-%d %H:%M}) before the "
                             f"activity's time window opens ({task.start:%Y-%m-%d %H:%M}), so "
                             "nothing could count: give a later --until")
        check_sim_time((end - start).total_seconds(),
                       f"the episode window ({start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}; "
                       "--same-day, --start, --until shorten it)")
        return start, end

    def cut_short(self, task: STSSTask) -> str | None:
        """A warning when the episode stops inside the activity's time window (who comes later
        is not seen), else None."""
        _, end = self.times(task)
        if task.end is None or end >= task.end:
            return None
        return (f"the episode ends at {end:%H:%M}, before the activity's time window closes "
                f"({task.start:%H:%M}-{task.end:%H:%M}): whoever comes later is not seen")


class STSSEpisode:
    """Implements sandbox.runner.Scenario for one instantiated task."""

    name = "stss"
    expected_events = TownScenario.expected_events

    def __init__(self, task: STSSTask, architecture: str = "ga", *,
                 window: EpisodeWindow | None = None, embedder: str | None = None,
                 whispers: list[Whisper] | None = None):
        """`whispers` (`sandbox run TEMPLATE --whisper`) are checked here: a ValueError names
        the first whose resident is not in the episode or whose time is outside it."""
        self.task = task
        self.architecture = architecture
        self.window = window or EpisodeWindow()
        self.start_time, end = self.window.times(task)
        self.until = (end - self.start_time).total_seconds()
        self.world = task.world
        self.town = TownScenario(TownConfig(
            world=task.world, residents=[task.performer, *task.background],
            architecture="ga", architectures={task.performer: architecture},
            tasks={task.performer: task.currently}, start_time=self.start_time,
            hours=self.until / 3600, embedder=embedder, whispers=list(whispers or [])))
        for whisper in self.town.cfg.whispers:
            try:
                whisper_time(whisper, self.town.resident_names(), self.start_time, self.until)
            except ValueError as exc:
                raise ValueError(f"--whisper {str(whisper)!r}: {exc}") from None

    def config(self) -> dict[str, Any]:
        return {"stss_task": self.task.model_dump(mode="json"),
                "performer_architecture": self.architecture,
                "window": self.window.model_dump(mode="json"), "town": self.town.config()}

    def models(self, default_model: str) -> dict[str, str]:
        return self.town.models(default_model)

    def setup(self, engine: Engine) -> None:
        engine.emit(TaskAssigned(t=engine.now, agent=self.task.performer,
                                 template=self.task.template, task_type=self.task.type.value,
                                 goal=self.task.goal, criteria=self.task.criteria,
                                 architecture=self.architecture))
        self.town.setup(engine)

    def checkpoint(self, engine: Engine) -> tuple[dict, dict]:
        return self.town.checkpoint(engine)

    def restore(self, engine: Engine, state: dict, waits: dict) -> None:
        self.town.restore(engine, state, waits)
