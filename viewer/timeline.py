"""The run as the viewer needs it: events indexed by time, by agent and by conversation.

Built incrementally (`add`) so a live run only costs the new events. Every query takes a
simulated time `t` (seconds since the episode's start) and answers with bisection, so drawing
a frame stays cheap however long the log is.

Events are read by kind and field name, not by class: the viewer shows kinds it has never seen
(an `UnknownEvent` from a newer log keeps its fields) and needs no agent or world code.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from sandbox.events import Event


def fields(event: Event) -> dict[str, Any]:
    """An event's payload (everything but kind, t and agent), typed or unknown."""
    data = dict(event.__dict__)
    data.update(event.__pydantic_extra__ or {})
    for key in ("kind", "t", "agent"):
        data.pop(key, None)
    return data


def get(event: Event, name: str, default: Any = None) -> Any:
    """One payload field of any event, typed or unknown."""
    value = getattr(event, name, None)
    if value is None and event.__pydantic_extra__:
        value = event.__pydantic_extra__.get(name)
    return default if value is None else value


@dataclass
class AgentInfo:
    name: str
    joined: float
    location: str = ""  # the address it joined at
    persona: str = ""
    architecture: str = ""
    index: int = 0  # join order: picks a stable colour

    @property
    def initials(self) -> str:
        parts = [p for p in self.name.replace("_", " ").split() if p]
        if len(parts) >= 2:
            return (parts[0][0] + parts[-1][0]).upper()
        return self.name[:2].upper() if self.name else "?"


@dataclass
class Conversation:
    id: str
    started: float
    participants: list[str]
    location: str = ""
    utterances: list[Event] = field(default_factory=list)
    ended: float | None = None
    end_reason: str = ""

    def active(self, t: float) -> bool:
        return self.started <= t and (self.ended is None or t <= self.ended)

    def said_by(self, t: float) -> list[Event]:
        """The utterances said at or before `t`."""
        times = [u.t for u in self.utterances]
        return self.utterances[:bisect_right(times, t)]


class TimedList:
    """Events of one stream kept sorted by time; `at(t)` is the latest at or before `t`."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.items: list[Event] = []

    def add(self, event: Event) -> None:
        if not self.times or event.t >= self.times[-1]:
            self.times.append(event.t)
            self.items.append(event)
        else:  # a late-logged event: keep order, equal times stay in file order
            i = bisect_right(self.times, event.t)
            self.times.insert(i, event.t)
            self.items.insert(i, event)

    def at(self, t: float) -> Event | None:
        i = bisect_right(self.times, t)
        return self.items[i - 1] if i else None

    def upto(self, t: float) -> list[Event]:
        return self.items[:bisect_right(self.times, t)]

    def __len__(self) -> int:
        return len(self.items)


class Timeline:
    """All events of a run, indexed for the questions a frame asks."""

    def __init__(self) -> None:
        self.events = TimedList()
        self.agents: dict[str, AgentInfo] = {}
        self.conversations: dict[str, Conversation] = {}
        self.by_agent: dict[str, TimedList] = {}
        self.by_kind: dict[str, TimedList] = {}
        self.by_agent_kind: dict[tuple[str, str], TimedList] = {}
        self.event_times: list[float] = []  # distinct times, for stepping
        self.end: float = 0.0
        self._handlers = {"agent_joined": self._on_agent_joined,
                          "conversation_started": self._on_conversation_started,
                          "utterance": self._on_utterance,
                          "conversation_ended": self._on_conversation_ended}

    # -- building -----------------------------------------------------------------------------
    def add(self, events: list[Event]) -> None:
        for event in events:
            self._add(event)

    def _add(self, event: Event) -> None:
        self.events.add(event)
        # A walk logged at its start lasts until its arrival: the run's end includes it.
        self.end = max(self.end, event.t, float(get(event, "arrival", 0.0) or 0.0)
                       if event.kind == "move" else 0.0)
        times = self.event_times
        if not times or event.t > times[-1]:
            times.append(event.t)
        elif event.t != times[-1]:
            i = bisect_left(times, event.t)
            if times[i] != event.t:
                times.insert(i, event.t)
        self.by_kind.setdefault(event.kind, TimedList()).add(event)
        if event.agent:
            self.by_agent.setdefault(event.agent, TimedList()).add(event)
            self.by_agent_kind.setdefault((event.agent, event.kind), TimedList()).add(event)
            if event.agent not in self.agents:
                self.agents[event.agent] = AgentInfo(event.agent, event.t,
                                                     index=len(self.agents))
        handler = self._handlers.get(event.kind)
        if handler is not None:
            handler(event)

    def _on_agent_joined(self, event: Event) -> None:
        info = self.agents[event.agent]
        info.joined = min(info.joined, event.t)
        info.location = get(event, "location", "")
        info.persona = get(event, "persona", "")
        info.architecture = get(event, "architecture", "")

    def _conversation(self, event: Event) -> Conversation:
        cid = str(get(event, "conversation", "?"))
        if cid not in self.conversations:
            self.conversations[cid] = Conversation(cid, event.t, [])
        return self.conversations[cid]

    def _on_conversation_started(self, event: Event) -> None:
        conv = self._conversation(event)
        conv.started = min(conv.started, event.t)
        conv.participants = list(get(event, "participants", []))
        conv.location = get(event, "location", "")

    def _on_utterance(self, event: Event) -> None:
        conv = self._conversation(event)
        conv.utterances.append(event)
        conv.utterances.sort(key=lambda u: u.t)  # stable: same-time turns keep file order
        for name in [event.agent, *get(event, "to", [])]:
            if name and name not in conv.participants:
                conv.participants.append(name)

    def _on_conversation_ended(self, event: Event) -> None:
        conv = self._conversation(event)
        conv.ended = event.t
        conv.end_reason = get(event, "reason", "")

    # -- questions a frame asks ---------------------------------------------------------------
    def next_event_time(self, t: float, agent: str | None = None) -> float | None:
        times = self.by_agent[agent].times if agent in self.by_agent else self.event_times
        i = bisect_right(times, t)
        return times[i] if i < len(times) else None

    def previous_event_time(self, t: float, agent: str | None = None) -> float | None:
        times = self.by_agent[agent].times if agent in self.by_agent else self.event_times
        i = bisect_left(times, t)
        return times[i - 1] if i else None

    def active_conversations(self, t: float) -> list[Conversation]:
        return [c for c in self.conversations.values() if c.active(t)]

    def conversation_of(self, agent: str, t: float) -> Conversation | None:
        """The conversation `agent` is in at `t`, else the last one it had."""
        last = None
        for conv in self.conversations.values():
            if agent in conv.participants and conv.started <= t:
                if conv.active(t):
                    return conv
                if last is None or conv.started > last.started:
                    last = conv
        return last

    def latest(self, kind: str, t: float, agent: str | None = None) -> Event | None:
        """The latest event of `kind` at or before `t` (of `agent`, when given)."""
        stream = self.by_kind.get(kind) if agent is None else self.by_agent_kind.get((agent, kind))
        return stream.at(t) if stream else None
