"""The slots of a generative agent: small typed protocols a module must satisfy.

An agent (`agents.agent.GenerativeAgent`) hosts one module per slot and hands itself to them; a
module reads what it needs from the host (persona, memory, retriever, world view) and asks the
model through `engine.ask`. Methods that may call the model are SimPy process generators (use
them with `yield from`). Every module returns its state as JSON (`get_state`/`set_state`) so an
episode can checkpoint.

Tags of the calls a module makes start with its accounting name, e.g. `plan.daily`,
`memory.importance`, `react.talk`, `converse.turn`, `reflect.insights`, `tdp.general_plan`:
`sandbox log` groups calls by that first part.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sandbox.engine import Engine, Process

from .memory import MemoryKind, MemoryNode

SLOTS = ("memory", "retriever", "planner", "reflector", "conversation", "task_planner")


@runtime_checkable
class Stateful(Protocol):
    def get_state(self) -> dict[str, Any]: ...

    def set_state(self, state: dict[str, Any]) -> None: ...


@runtime_checkable
class Memory(Stateful, Protocol):
    """What the agent has seen, said and thought, searchable by meaning."""

    nodes: list[MemoryNode]
    importance_since_reflection: float

    def add(self, kind: MemoryKind, description: str, t: float, *,
            importance: int | None = None, evidence: Iterable[int] = (),
            subject: str = "") -> MemoryNode: ...

    def settle(self, agent, engine: Engine, force: bool = False) -> Process:
        """Score memories whose importance is still unknown (batched)."""

    def embed(self, text: str) -> np.ndarray: ...

    def latest(self, kind: MemoryKind | None = None, n: int = 10) -> list[MemoryNode]: ...

    def __len__(self) -> int: ...


@runtime_checkable
class Retriever(Stateful, Protocol):
    def retrieve(self, agent, engine: Engine, query: str, purpose: str,
                 k: int | None = None) -> Process:
        """Returns the memories for a prompt, best first, and logs the retrieval."""


@runtime_checkable
class Planner(Stateful, Protocol):
    def plan_day(self, agent, engine: Engine) -> Process:
        """Wake-up time, broad plan and schedule for the current day."""

    def next_action(self, agent, engine: Engine) -> Process:
        """The `Action` to do now (decomposing the current activity when needed)."""

    def revise(self, agent, engine: Engine, reason: str) -> Process:
        """Rewrite the rest of today's schedule after something happened (a conversation)."""


@runtime_checkable
class Reflector(Stateful, Protocol):
    def maybe_reflect(self, agent, engine: Engine) -> Process:
        """Reflect if the agent's new memories are important enough; store insights."""


@runtime_checkable
class Conversation(Stateful, Protocol):
    def decide(self, agent, other, engine: Engine) -> Process:
        """On noticing `other`: returns True to start a conversation, False to carry on."""

    def utterance(self, agent, partner, transcript: list, engine: Engine) -> Process:
        """Returns (text, ends) for the agent's next turn."""

    def remember(self, agent, partner, transcript: list, engine: Engine) -> Process:
        """Store a summary of a finished conversation; returns the summary."""

    max_turns: int


@runtime_checkable
class TaskPlanner(Stateful, Protocol):
    """Target-driven planning (STSS section 4): only a performer with a task has a real one."""

    def assign(self, agent, engine: Engine, task: str) -> Process:
        """Take a social task: make the general plan and the conversation reminder."""

    def plan_context(self, agent, engine: Engine) -> Process:
        """Text for the day's planning prompts (the plan reminder), or ''."""

    def conversation_context(self, agent) -> str:
        """Text for every conversation prompt (task, general plan, checklist), or ''."""
