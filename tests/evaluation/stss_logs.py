"""Golden STSS logs built by hand: a run directory with a task in its header and the events we
say happened (imported by the STSS scoring tests)."""

from __future__ import annotations

from datetime import date, datetime

from sandbox.events import AgentJoined, ConversationStarted, EpisodeEnded
from sandbox.events.agent import ActionStarted
from sandbox.log import EpisodeLog, RunHeader, RunResult
from tasks.stss import STSSTask, TaskStep, TaskType

START = datetime(2024, 2, 13, 6, 0)  # t = 0: 06:00 the day before, as an episode starts
DAY = date(2024, 2, 14)


def at(clock: str) -> float:
    """Sim seconds of an HH:MM on the event day, or of a "YYYY-MM-DD HH:MM" on another."""
    if " " in clock:
        return (datetime.strptime(clock, "%Y-%m-%d %H:%M") - START).total_seconds()
    h, m = (int(p) for p in clock.split(":"))
    return (datetime(2024, 2, 14, h, m) - START).total_seconds()


def task(kind: TaskType, steps: list[TaskStep], *, background: list[str], expected: int,
         window: tuple[str, str] | None = None, target: str | None = None,
         performer: str = "Perry") -> STSSTask:
    start = end = None
    if window:
        start, end = (datetime.combine(DAY, datetime.strptime(w, "%H:%M").time())
                      for w in window)
    return STSSTask(template="golden", title="golden", type=kind, world="town", seed=0,
                    performer=performer, background=background, target=target, goal="g",
                    criteria="c", steps=steps, date=DAY, start=start, end=end,
                    expected=expected)


class Log:
    """Write a run directory event by event: `act(who, "HH:MM", "HH:MM", what, where)`."""

    def __init__(self, path, stss_task: STSSTask, architecture: str = "ga_tdp"):
        self.task = stss_task
        people = [stss_task.performer, *stss_task.background]
        header = RunHeader(scenario="stss", seed=0, start_time=START,
                           models={p: "scripted/golden" for p in people}, world="town",
                           config={"stss_task": stss_task.model_dump(mode="json"),
                                   "performer_architecture": architecture})
        self.log = EpisodeLog(path, header)
        self.path = path
        for person in people:
            self.log.emit(AgentJoined(t=0, agent=person, location="town:Town Square:plaza"))
        self.rows: list[ActionStarted] = []

    def act(self, who: str, start: str, until: str, what: str, where: str,
            activity: str = "") -> Log:
        self.rows.append(ActionStarted(t=at(start), agent=who, description=what,
                                       location=where, until=at(until), activity=activity))
        return self

    def talk(self, a: str, b: str, when: str) -> Log:
        self.rows.append(ConversationStarted(t=at(when), conversation=f"{a}-{b}-{when}",
                                             participants=[a, b], location="town:Town Square"))
        return self

    def close(self, end: str = "21:00"):
        for event in sorted(self.rows, key=lambda e: e.t):  # a log is in time order
            self.log.emit(event)
        self.log.emit(EpisodeEnded(t=at(end)))
        self.log.finish(RunResult(status="completed", wall_time_s=0.0, sim_time_s=at(end),
                                  events=self.log.count, llm_calls=0))
        return self.path
