"""Golden STSS logs built by hand: a run directory with a task in its header and the events we
say happened (imported by the STSS scoring tests)."""

from __future__ import annotations

from datetime import date, datetime

from sandbox.events import AgentJoined, ConversationEnded, ConversationStarted, EpisodeEnded
from sandbox.events.agent import ActionStarted, MemoryAdded
from sandbox.events.world import Moved
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
         performer: str = "Perry", target_num: int | None = None) -> STSSTask:
    start = end = None
    if window:
        start, end = (datetime.combine(DAY, datetime.strptime(w, "%H:%M").time())
                      for w in window)
    return STSSTask(template="golden", title="golden", type=kind, world="town", seed=0,
                    performer=performer, background=background, target=target, goal="g",
                    criteria="c", steps=steps, date=DAY, start=start, end=end,
                    expected=expected, target_num=target_num)


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

    def walk(self, who: str, start: str, arrive: str, to: str, then: str,
             until: str) -> Log:
        """Set out at `start` for `to`, arrive at `arrive` and do `then` there until `until`."""
        seconds = at(arrive) - at(start)
        self.rows.append(Moved(t=at(start), agent=who, destination=to, path=[(0, 0), (0, 1)],
                               seconds_per_tile=seconds, arrival=at(arrive), enters=[]))
        return self.act(who, arrive, until, then, to)

    def chat(self, a: str, b: str, start: str, end: str | None,
             about: str | dict[str, str]) -> Log:
        """A whole conversation, in the order the engine writes one: both sides' "talking
        with" actions, then its start, at `start`; at `end` its end, then each side's memory
        of it, `about` (one text for both, or one per name). `end` None: a conversation the
        log never saw end (a run cut short), with no memory of it."""
        name = f"{a}-{b}-{start}"
        for who, other in ((a, b), (b, a)):
            self.rows.append(ActionStarted(t=at(start), agent=who,
                                           description=f"talking with {other}",
                                           location="town:Town Square:plaza", until=at(start),
                                           activity="conversation"))
        self.rows.append(ConversationStarted(t=at(start), conversation=name,
                                             participants=[a, b], location="town:Town Square"))
        if end is None:
            return self
        self.rows.append(ConversationEnded(t=at(end), conversation=name, turns=4,
                                           reason="ended_by_agent"))
        for who in (a, b):
            said = about if isinstance(about, str) else about[who]
            self.rows.append(MemoryAdded(t=at(end), agent=who, memory=0, memory_kind="chat",
                                         description=said, importance=4, created=at(end)))
        return self

    def close(self, end: str = "21:00", status: str = "completed"):
        for event in sorted(self.rows, key=lambda e: e.t):  # a log is in time order
            self.log.emit(event)
        self.log.emit(EpisodeEnded(t=at(end)))
        self.log.finish(RunResult(status=status, wall_time_s=0.0, sim_time_s=at(end),
                                  events=self.log.count, llm_calls=0))
        return self.path
