"""What each agent did, read from the log: actions merged into activities, and conversations.

An agent's `action_started` events give what it did (a short description) and where (an arena
address); an action lasts until its `until` or the agent's next action, whichever is first.
Consecutive actions with the same description at the same place merge into one activity (the
STSS rule), which keeps the log index of its first event as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.events import ConversationStarted, EpisodeEnded, Event
from sandbox.events.agent import ActionStarted


@dataclass(frozen=True)
class Activity:
    agent: str
    description: str
    location: str
    start: float  # sim seconds
    end: float
    event: int  # index of the first merged action_started in the run's events
    conversation: bool = False  # "talking with ..." (never counts as the task's action)

    def at(self, t: float) -> bool:
        """Whether the activity is going on at `t` (an instantaneous one: exactly then)."""
        return self.start <= t < self.end or t == self.start


def episode_end(events: list[Event], fallback: float | None = None) -> float:
    """When the episode stopped: its `episode_ended` event, else `fallback`, else the last t."""
    for event in reversed(events):
        if isinstance(event, EpisodeEnded):
            return event.t
    if fallback is not None:
        return fallback
    return max((e.t for e in events), default=0.0)


def activities(events: list[Event], end: float) -> dict[str, list[Activity]]:
    """Every agent's activities in time order (agents that never acted are absent)."""
    raw: dict[str, list[tuple[int, ActionStarted]]] = {}
    for i, event in enumerate(events):
        if isinstance(event, ActionStarted) and event.agent:
            raw.setdefault(event.agent, []).append((i, event))
    out: dict[str, list[Activity]] = {}
    for agent, actions in raw.items():
        merged: list[Activity] = []
        for k, (i, a) in enumerate(actions):
            nxt = actions[k + 1][1].t if k + 1 < len(actions) else end
            stop = max(a.t, min(nxt, a.until if a.until > a.t else nxt, end))
            talk = a.activity == "conversation"
            last = merged[-1] if merged else None
            if last and not talk and not last.conversation and \
                    last.description == a.description and last.location == a.location:
                merged[-1] = Activity(agent, last.description, last.location, last.start,
                                      max(last.end, stop), last.event)
                continue
            merged.append(Activity(agent, a.description, a.location, a.t, stop, i, talk))
        out[agent] = merged
    return out


def conversation_partners(events: list[Event], agent: str, before: float | None = None
                          ) -> list[tuple[str, float, int]]:
    """(partner, t, event index) of the first conversation `agent` had with each partner,
    counting conversations that started before `before` (None: all)."""
    seen: dict[str, tuple[str, float, int]] = {}
    for i, event in enumerate(events):
        if not isinstance(event, ConversationStarted) or agent not in event.participants:
            continue
        if before is not None and event.t >= before:
            continue
        for other in event.participants:
            if other != agent and other not in seen:
                seen[other] = (other, event.t, i)
    return list(seen.values())
