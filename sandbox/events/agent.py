"""Events of generative agents: plans, actions, memories, retrievals, reflections, reactions.

Scorers read `action_started` (a short description they match keywords against, and the place
address); viewers read the rest to show why an agent did what it did.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from .base import Event


class PlanMade(Event):
    """A plan for the day, an hourly schedule, a revision, or the steps of one activity."""

    kind: Literal["plan_made"] = "plan_made"
    level: Literal["daily", "hourly", "revised", "steps"]
    items: list[str]  # readable lines, e.g. "07:00-08:00 have breakfast"
    wake_up: str | None = None  # "HH:MM", daily plans only
    reason: str = ""  # why a revision happened (a conversation summary, a task)


class ActionStarted(Event):
    """An agent begins an action: what it does, where, and until when (sim seconds). An `until`
    at or before `t` means open-ended: the action lasts until the agent's next one (a
    conversation, whose length is not known when it starts)."""

    kind: Literal["action_started"] = "action_started"
    description: str
    location: str  # address world:sector:arena[:object]
    until: float
    activity: str = ""  # the schedule block this step belongs to


class MemoryAdded(Event):
    """A memory entering an agent's stream, logged at once: it ranks in the agent's retrievals
    from this moment. Its importance when it was known then; None while it waits to be scored
    in a batch (its `memory_scored` follows when it is)."""

    kind: Literal["memory_added"] = "memory_added"
    memory: int  # the id inside the agent's memory stream
    memory_kind: Literal["event", "chat", "thought"]
    description: str
    importance: int | None
    created: float  # sim seconds (logs written before memory_scored existed: t may be later)
    evidence: list[int] = Field(default_factory=list)


class MemoryScored(Event):
    """A memory's importance, scored after it entered the stream (a batch of them at once)."""

    kind: Literal["memory_scored"] = "memory_scored"
    memory: int
    importance: int


class MemoryRetrieved(Event):
    """One retrieval that fed a prompt: the query, the chosen memories and why."""

    kind: Literal["memory_retrieved"] = "memory_retrieved"
    purpose: str  # the tag of the prompt it fed, e.g. "converse.turn"
    query: str
    ids: list[int]
    scores: list[float]  # the weighted total, same order as ids
    recency: list[float] = Field(default_factory=list)  # normalised components
    relevance: list[float] = Field(default_factory=list)
    importance: list[float] = Field(default_factory=list)


class Insight(BaseModel):
    memory: int
    text: str
    evidence: list[int] = Field(default_factory=list)


class Reflected(Event):
    kind: Literal["reflected"] = "reflected"
    trigger: float  # the summed importance that passed the threshold
    questions: list[str]
    insights: list[Insight]


class ReactionDecided(Event):
    """On noticing another agent: talk to them, or wait and carry on."""

    kind: Literal["reaction_decided"] = "reaction_decided"
    target: str
    decision: Literal["talk", "wait"]
    reason: str = ""


class TaskPlanned(Event):
    """Target-driven planning output for the performer (agents/tdp.py; the TDP paper, section 4)."""

    kind: Literal["task_planned"] = "task_planned"
    task: str
    general_plan: list[str] = Field(default_factory=list)
    plan_reminder: str = ""
    conversation_reminder: list[str] = Field(default_factory=list)
    day: str = ""  # the date a plan reminder was made for


class Whispered(Event):
    """A memory planted in an agent from outside the simulation (`--whisper`, a scenario's
    `whispers:`): stored at `t` as a thought the agent believes it had, with a fixed importance
    (its `memory_added` follows at once)."""

    kind: Literal["whispered"] = "whispered"
    text: str
    memory: int  # the id inside the agent's memory stream
    importance: int


class ArchitectureChanged(Event):
    """An agent's modules swapped mid-episode (`sandbox fork --agent-arch`): each slot's state
    carried over when the new module is the old one's kind and takes its state, else fresh."""

    kind: Literal["architecture_changed"] = "architecture_changed"
    previous: str  # architecture names
    architecture: str
    carried: list[str]  # slots
    fresh: dict[str, str] = Field(default_factory=dict)  # slot -> why it starts fresh
