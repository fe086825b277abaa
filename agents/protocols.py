"""The slots of a generative agent: small typed protocols a module must satisfy.

An agent (`agents.agent.GenerativeAgent`) hosts one module per slot and hands itself to them; a
module reads what it needs from the host (persona, memory, retriever, world view) and asks the
model through `engine.ask`. Methods that may call the model are SimPy process generators (use
them with `yield from`). Every module returns its state as JSON (`get_state`/`set_state`) so an
episode can checkpoint.

Tags of the calls a module makes start with its accounting name, e.g. `plan.daily`,
`memory.importance`, `react.talk`, `converse.turn`, `reflect.insights`, `tdp.general_plan`:
`sandbox log` groups calls by that first part.

The protocols list everything the host and the built-in modules call on a slot. A few cheap
hooks are optional (named in each protocol's docstring, with what happens without them), so a
minimal module stays minimal.
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
    """What the agent has seen, said and thought, searchable by meaning.

    Memories are addressed by id = position in `nodes`; the array methods take and return
    numpy arrays of ids, which is how the built-in retrievers (agents/retrieval.py) score a
    large stream without a Python loop per memory.

    Optional hooks: `on_added: list[Callable[[MemoryNode, float], None]]`, callbacks called
    with (node, sim time) as a memory enters the stream (its importance None while it waits
    for a score), and `on_scored`, the same once a waiting memory's importance is scored. The
    host appends ones that log `memory_added` and `memory_scored`; a memory without the lists
    works, but its memories are never logged.
    """

    nodes: list[MemoryNode]
    importance_since_reflection: float  # summed importance since the last reflection

    def add(self, kind: MemoryKind, description: str, t: float, *,
            importance: int | None = None, evidence: Iterable[int] = (),
            subject: str = "") -> MemoryNode:
        """Store a memory at sim time `t`; without `importance` it is scored later (`settle`)."""

    def settle(self, agent, engine: Engine, force: bool = False) -> Process:
        """Score memories whose importance is still unknown (batched)."""

    def embed(self, text: str) -> np.ndarray:
        """A unit vector for `text`, comparable with the memories' own."""

    def latest(self, kind: MemoryKind | None = None, n: int = 10) -> list[MemoryNode]:
        """The last `n` memories (of one kind), oldest first."""

    def search(self, vector: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids and cosine similarities of the `n` memories most similar to `vector`."""

    def similarity(self, vector: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Cosine similarity of `vector` to each of the memories `ids`."""

    def most_recent(self, n: int) -> np.ndarray:
        """Ids of the `n` memories accessed last, newest first."""

    def most_important(self, n: int) -> np.ndarray:
        """Ids of the `n` most important memories, most important first."""

    def last_accessed(self, ids: np.ndarray) -> np.ndarray:
        """Sim time each of the memories `ids` was last accessed."""

    def importance(self, ids: np.ndarray) -> np.ndarray:
        """Importance (1-10; 0 while unscored) of each of the memories `ids`."""

    def touch(self, ids: Iterable[int], t: float) -> None:
        """Mark memories as accessed at sim time `t` (they were retrieved for a prompt)."""

    def __len__(self) -> int: ...


@runtime_checkable
class Retriever(Stateful, Protocol):
    def retrieve(self, agent, engine: Engine, query: str, purpose: str,
                 k: int | None = None) -> Process:
        """Returns the memories for a prompt, best first, and logs the retrieval."""


@runtime_checkable
class Planner(Stateful, Protocol):
    """The day's schedule, one action at a time.

    Optional hook: `needs_plan(engine) -> bool`, whether today's plan is still to be made. The
    host asks it when a task arrives, to revise a day already planned; without it the host
    calls `revise` anyway, so `revise` must cope with a day not planned yet (doing nothing is
    fine: the next `plan_day` sees the task through the persona's `currently`).
    """

    def plan_day(self, agent, engine: Engine) -> Process:
        """Wake-up time, broad plan and schedule for the current day."""

    def next_action(self, agent, engine: Engine) -> Process:
        """The `agents.planning.Action` to do now (planning the day or decomposing the current
        activity when needed)."""

    def revise(self, agent, engine: Engine, reason: str) -> Process:
        """Rewrite the rest of today's schedule after something happened (a conversation)."""


@runtime_checkable
class Reflector(Stateful, Protocol):
    def maybe_reflect(self, agent, engine: Engine) -> Process:
        """Reflect if the agent's new memories are important enough; store insights."""


@runtime_checkable
class Conversation(Stateful, Protocol):
    """Whether to talk, what to say, what to remember of it.

    Optional hooks: `may_consider(other_name, now) -> bool`, a cheap check (cooldowns, no model
    call) the host makes before `decide`; without it every noticed agent goes to `decide`.
    `changed_plans(partner_name) -> bool`, whether the conversation just remembered changes the
    agent's day; the host asks the planner to revise only then (without it, always).
    `params.seconds_per_turn`, when the module has it, is the sim time one utterance takes
    (otherwise 15 s).
    """

    def decide(self, agent, other, engine: Engine) -> Process:
        """On noticing `other`: returns True to start a conversation, False to carry on."""

    def utterance(self, agent, partner, transcript: list, engine: Engine) -> Process:
        """Returns the agent's next turn, an `agents.chat.ChatTurn` (the words, and whether they
        end the conversation); `agents.chat.converse` logs it."""

    def remember(self, agent, partner, transcript: list, engine: Engine) -> Process:
        """Store a summary of a finished conversation; returns the summary."""

    max_turns: int  # utterances in total (both sides), the conversation's cap


@runtime_checkable
class TaskPlanner(Stateful, Protocol):
    """Target-driven planning (STSS section 4): only a performer with a task has a real one."""

    def assign(self, agent, engine: Engine, task: str) -> Process:
        """Take a social task: make the general plan and the conversation reminder."""

    def plan_context(self, agent, engine: Engine) -> Process:
        """Text for the day's planning prompts (the plan reminder), or ''."""

    def conversation_context(self, agent) -> str:
        """Text for every conversation prompt (task, general plan, checklist), or ''."""
