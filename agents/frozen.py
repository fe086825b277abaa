"""An agent as it was at a moment of a run, rebuilt from the run's log alone.

    from agents.frozen import frozen_agent, rebuild
    run = load_run("runs/day")
    who = frozen_agent(run, "Agnes Whitfield", at=3 * 3600)   # 3 simulated hours in
    agent = rebuild(who.persona, who.memories, who.architecture, location=who.location)

The memory stream as of `at` (`memories_at`): every `memory_added` of the agent created by
then, with its importance (its `memory_added`'s, or the `memory_scored` that followed), its
evidence, and the last time a `memory_retrieved` before `at` returned it as its last access. A
memory created by `at` whose importance was scored later is in (the agent held it then; only
its score came later), with that score; one never scored (the run ended first) is in without
one, and waits to be scored as the live agent's did; nothing created after `at` is.
Times are seconds relative to `at` (all <= 0): a rebuilt agent's clock starts at the moment,
and every memory is exactly as old as it was.

The rest comes from the header and the world the run names: the architecture the agent ran
(its modules and parameters as the run recorded them, `architecture_modules`, else the
built-in of that name), its persona (the world's resident file, with the task the run gave it
as its `currently`), and where it was and what it was doing at `at` (its last
`action_started`). Light to import: the modules that build agents are loaded by `rebuild`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.errors import one_line
from sandbox.events import AgentJoined
from sandbox.events.agent import ActionStarted, MemoryAdded, MemoryRetrieved, MemoryScored

if TYPE_CHECKING:
    from sandbox.log import Run

    from .agent import GenerativeAgent
    from .architecture import Architecture
    from .persona import Persona


class FrozenMemory(BaseModel):
    """One node of a memory stream as it was at a moment."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["event", "chat", "thought"]
    description: str
    importance: int | None = Field(ge=1, le=10)  # None: never scored (it waits, as it did)
    t: float = Field(le=0)  # created, seconds before the moment
    last_accessed: float = Field(le=0)
    subject: str = ""
    evidence: list[int] = Field(default_factory=list)  # indexes into the same list


def memories_at(events: Iterable, agent: str, at: float) -> list[FrozenMemory]:
    """The agent's memory stream at sim time `at`, from `events`: every memory created by
    then (in the order the agent made them), with the last time it was retrieved before."""
    nodes: dict[int, MemoryAdded] = {}
    scored: dict[int, int] = {}
    accessed: dict[int, float] = {}
    for e in events:
        if e.agent != agent:
            continue
        if isinstance(e, MemoryAdded) and e.created <= at:
            nodes[e.memory] = e
        elif isinstance(e, MemoryScored):
            scored[e.memory] = e.importance
        elif isinstance(e, MemoryRetrieved) and e.t < at:
            for i in e.ids:
                accessed[i] = e.t
    order = sorted(nodes)
    position = {memory: i for i, memory in enumerate(order)}
    return [FrozenMemory(
        kind=nodes[m].memory_kind, description=nodes[m].description,
        importance=_importance(nodes[m].importance, scored.get(m)), t=nodes[m].created - at,
        last_accessed=max(nodes[m].created, accessed.get(m, nodes[m].created)) - at,
        evidence=[position[i] for i in nodes[m].evidence if i in position]) for m in order]


def _importance(added: int | None, scored: int | None) -> int | None:
    value = added if added is not None else scored
    return None if value is None else min(10, max(1, value))


def rebuild(persona: Persona, memories: Sequence[FrozenMemory],
            architecture: str | Architecture, *, embedder: str | None = None,
            location: str | None = None) -> GenerativeAgent:
    """A generative agent with `persona` and the frozen memory stream (same times relative to
    its clock's start, same importance, same last access), running `architecture` (a name, a
    file, or an Architecture); `embedder` overrides its memory's; at `location` if given."""
    from .agent import GenerativeAgent
    from .architecture import load_architecture

    arch = load_architecture(architecture) if isinstance(architecture, str) else architecture
    if embedder:
        arch = arch.with_params("memory", embedder=embedder)
    agent = GenerativeAgent(persona, arch, places=[location] if location else None)
    if location:
        agent.location = location
    for memory in memories:
        node = agent.memory.add(memory.kind, memory.description, memory.t,
                                importance=memory.importance, evidence=memory.evidence,
                                subject=memory.subject)
        touch = getattr(agent.memory, "touch", None)  # optional: the reference stream has it
        if touch is not None and node is not None:
            touch([node.id], memory.last_accessed)
    return agent


class NoSuchAgent(KeyError):
    """The run has no agent of that name (the message names the nearest ones)."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class FrozenAgent:
    """What a run's log says of one agent at a moment: enough to rebuild it."""

    name: str
    architecture_name: str  # as the run named it (agent_joined)
    architecture: Architecture  # the modules and parameters it ran
    persona: Persona
    memories: list[FrozenMemory]
    at: float  # sim seconds since the run's start
    clock: datetime  # the simulated date and time of `at`
    location: str  # where it was at `at`
    doing: str  # what it was doing at `at` ("" before its first action)
    # Why the persona is a bare one (its name and place only), when it is: said by the
    # commands, since every answer would come from an agent who knows less about itself.
    persona_note: str = ""

    def rebuild(self) -> GenerativeAgent:
        return rebuild(self.persona, self.memories, self.architecture, location=self.location)


def run_agents(run: Run) -> dict[str, str]:
    """Every agent that joined the run -> the architecture it ran, in joining order."""
    return {e.agent: e.architecture for e in run.events
            if isinstance(e, AgentJoined) and e.agent}


def run_end(run: Run) -> float:
    """The run's last moment: its last event's time (0 for a run with no events)."""
    return max((e.t for e in run.events), default=0.0)


def town_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a run's config that describes its agents (residents, architectures, tasks,
    world): the config itself, or the first value of it that is such a part (an episode that
    wraps a town keeps the town's config under a key of its own)."""
    if "architecture" in config or "architecture_modules" in config:
        return config
    return next((v for v in config.values() if isinstance(v, dict)
                 and ("architecture" in v or "architecture_modules" in v)), {})


def run_architecture(config: dict[str, Any], name: str) -> Architecture:
    """The architecture `name` as the run ran it: its modules and parameters as recorded in
    the config (`architecture_modules`), else the built-in one with the run's embedder."""
    from .architecture import ArchitectureSpec, from_spec, load_architecture

    town = town_config(config)
    recorded = town.get("architecture_modules", {}).get(name)
    if recorded is not None:
        spec = ArchitectureSpec(name=recorded.get("name", name),
                                modules=recorded["modules"])
        return from_spec(spec, recorded.get("source", f"<{name} of the run>"))
    architecture = load_architecture(name)
    if town.get("embedder"):
        architecture = architecture.with_params("memory", embedder=town["embedder"])
    return architecture


def run_persona(run: Run, name: str, location: str = "") -> tuple[Persona, str]:
    """The agent's persona: its resident file in the run's world, with the task the run gave
    it as its `currently`; a bare persona when the world has no such resident or no longer
    loads, and then why (else "")."""
    from .persona import Persona

    town = town_config(run.header.config)
    world = town.get("world") or run.header.world or "town"
    note = ""
    try:
        resident = _residents(world).get(name)
        if resident is None:
            note = f"world '{world}' has no resident {name}"
    except Exception as exc:  # noqa: BLE001 - a world that no longer loads: the log still speaks
        resident = None
        note = f"world '{world}' does not load ({one_line(str(exc))})"
    persona = Persona.from_resident(resident) if resident is not None else \
        Persona(name=name, living_area=location)
    task = town.get("tasks", {}).get(name)
    if task:  # what `GenerativeAgent.give_task` did in the run
        persona = persona.model_copy(update={"currently": task})
    return persona, note


@cache
def _residents(world_name: str) -> dict[str, Any]:
    from worlds import load_world, world_residents

    return {r.name: r for r in world_residents(load_world(world_name))}


def frozen_agent(run: Run, name: str, at: float) -> FrozenAgent:
    """The agent `name` of `run` as of sim time `at` (NoSuchAgent when the run has none)."""
    agents = run_agents(run)
    if name not in agents:
        import difflib

        close = difflib.get_close_matches(name, list(agents), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise NoSuchAgent(f"no agent {name!r} in {run.dir}; {hint}agents: "
                          f"{', '.join(agents) or 'none'}")
    location, doing = "", ""
    for e in run.events:
        if e.agent == name and e.t <= at and isinstance(e, AgentJoined | ActionStarted):
            location = e.location
            doing = e.description if isinstance(e, ActionStarted) else ""
    persona, note = run_persona(run, name, location)
    return FrozenAgent(
        name=name, architecture_name=agents[name],
        architecture=run_architecture(run.header.config, agents[name]),
        persona=persona, memories=memories_at(run.events, name, at),
        at=at, clock=run.header.start_time + timedelta(seconds=at), location=location,
        doing=doing, persona_note=note)
