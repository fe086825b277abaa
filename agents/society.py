"""Putting generative agents into an episode: the API scenarios (and the STSS task runner) use.

    from agents import build_society
    society = build_society(world_state, personas, architecture="ga",
                            architectures={"Isabella Rodriguez": "ga_tdp"})
    society.agent("Isabella Rodriguez").give_task("Hold a party at ... at 17:00 ...")
    society.start(engine)          # places everyone at home, logs agent_joined, starts processes
    society.whisper(engine, "Isabella Rodriguez", "Klaus might like the party", at=3600.0)
    engine.run(until=...)

A different architecture per agent is just a different entry in `architectures`. Each agent knows
the places of its spatial memory as written, or else every place but other residents' homes,
never a place no walk from its home reaches (`known_places`); its planner can only choose among
those. A resident with a spatial memory learns the places it passes as it walks (GenerativeAgent,
`places_learned`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import simpy

from sandbox.checkpoint import NotResumable
from sandbox.engine import Engine
from sandbox.events import AgentJoined
from sandbox.events.agent import ArchitectureChanged, Whispered
from worlds import Address, World, WorldState

from .agent import GenerativeAgent, Talk
from .architecture import Architecture, load_architecture
from .persona import Persona


def arena_of(world: World, place: str) -> str:
    address = world.resolve(place)
    return str(address.up_to("arena")) if address.level == "object" else str(address)


class Homes:
    """The living areas private to their residents, indexed once for a whole town (a town of
    4,000 spent 130 s building its residents' known places when each resident went through
    everyone's home): the sectors homes are in, the home arenas, each arena's sector."""

    def __init__(self, world: World, homes: Iterable[str]):
        self.arenas = {world.resolve(h).up_to("arena") for h in homes}
        self.sectors = {a.up_to("sector") for a in self.arenas}
        self.sector_of = {a: a.up_to("sector") for a in world.arenas()}

    def private(self, arena: Address, home: Address) -> bool:
        """Whether `arena` is private to residents other than the one living in `home`: every
        room of another sector with a home in it; in the home's own sector, the others' own
        rooms."""
        sector = self.sector_of[arena]
        if sector != home.up_to("sector"):
            return sector in self.sectors
        return arena in self.arenas and arena != home


def known_places(world: World, persona: Persona, homes: Iterable[str] | Homes = ()) -> list[str]:
    """Arena addresses the agent knows, in map order, never a place no walk from its home
    reaches, always its own home. With a spatial memory (the reference town's personas): the
    arenas it names, as written -- housemates' rooms and other homes included, as the
    reference's agents know them -- and the pieces an arena is drawn in. Without one: every
    arena but other residents' homes (every room of their home's sector; in a sector several
    people share, the others' own rooms). `homes`: every resident's living area, or their
    `Homes` built once for a whole town."""
    home = world.resolve(persona.living_area).up_to("arena")
    if persona.spatial_memory:
        named = {str(world.resolve(p).up_to("arena")) for p in persona.spatial_memory}
        return [str(a) for a in world.arenas()
                if a == home or (world.reachable(a, home) and (
                    str(a) in named or re.sub(r" \(\d+\)$", "", str(a)) in named))]
    index = homes if isinstance(homes, Homes) else Homes(world, homes)
    return [str(a) for a in world.arenas()
            if a == home or (not index.private(a, home) and world.reachable(a, home))]


# A whisper is meant to matter to the agent: as important as a memorable thought (the scale is
# the memory module's 1-10 of poignancy), fixed so that planting one costs no model call.
WHISPER_IMPORTANCE = 8


@dataclass(eq=False)  # each is its own: two alike are two whispers
class _Whisper:
    agent: str
    text: str
    at: float
    waiting: simpy.Event | None = None  # the timeout its planting waits on


class Society:
    """The generative agents of one episode, in one live world."""

    def __init__(self, town: WorldState, agents: list[GenerativeAgent]):
        self.town = town
        self.agents: dict[str, GenerativeAgent] = {a.name: a for a in agents}
        # conversations each resident started: ids per initiator, so that two residents
        # running ahead of each other (sandbox/README.md) number theirs the same in any order
        self._conversations: dict[str, int] = {}
        self._number = {name: i + 1 for i, name in enumerate(self.agents)}
        self._whispers: list[_Whisper] = []  # not yet planted

    def agent(self, name: str) -> GenerativeAgent:
        if name not in self.agents:
            raise KeyError(f"no agent {name!r}; agents are {', '.join(self.agents)}")
        return self.agents[name]

    def next_conversation_id(self, initiator: str) -> str:
        """`cI.N`: the Nth conversation the Ith resident (from 1, in the society's order)
        started."""
        n = self._conversations[initiator] = self._conversations.get(initiator, 0) + 1
        return f"c{self._number[initiator]}.{n}"

    def start(self, engine: Engine) -> None:
        """Place every agent at home (unless already placed) and start its process, each a
        resident of the engine's own (its clock, its stream)."""
        engine.register(list(self.agents))
        for agent in self.agents.values():
            if self.town.arena_of(agent.name) is None:
                self.town.place(agent.name, agent.persona.living_area)
            agent.location = str(self.town.arena_of(agent.name))
            engine.emit(AgentJoined(t=engine.now, agent=agent.name, location=agent.location,
                                    persona=f"{agent.persona.age}, {agent.persona.occupation}"
                                    .strip(", "), architecture=agent.architecture.name))
        for agent in self.agents.values():
            with engine.resident(agent.name):
                agent.process = engine.process(agent.live(engine, self))

    def architectures(self) -> dict[str, str]:
        return {name: a.architecture.name for name, a in self.agents.items()}

    def whisper(self, engine: Engine, name: str, text: str, at: float) -> None:
        """Plant `text` in `name`'s memory at simulated second `at` (now or later) as a thought
        it believes it had, of importance WHISPER_IMPORTANCE: logs `whispered`, then the
        memory's `memory_added`; it ranks in the agent's retrievals from then on. Call it after
        `start` (the agent logs its memories once its process runs)."""
        self._plant(engine, _Whisper(name, text, at))

    def _plant(self, engine: Engine, whisper: _Whisper) -> None:
        name, text = whisper.agent, whisper.text
        agent = self.agent(name)
        self._whispers.append(whisper)

        def plant():
            if whisper.waiting is None and whisper.at > engine.now:
                whisper.waiting = engine.timeout(whisper.at - engine.now)
            if whisper.waiting is not None:  # (restored: scheduled again at its exact time)
                yield whisper.waiting
            self._whispers.remove(whisper)
            engine.emit(Whispered(t=engine.now, agent=name, text=text,
                                  memory=len(agent.memory), importance=WHISPER_IMPORTANCE))
            agent.memory.add("thought", text, engine.now, importance=WHISPER_IMPORTANCE,
                             subject=name)

        engine.process(plant())

    # -- checkpoint -----------------------------------------------------------------------------
    def checkpoint(self) -> tuple[dict, dict[str, simpy.Event]]:
        """The society's state as JSON data (every agent's, the town's, the whispers to come)
        and the timeouts its processes wait on, by owner ("agent:NAME", "whisper:N");
        NotResumable when a process is somewhere a checkpoint cannot resume it from."""
        agents, waits = {}, {}
        for name, agent in self.agents.items():
            agents[name], waiting = agent.checkpoint(self.town)
            if waiting is not None:
                waits[f"agent:{name}"] = waiting
        for i, whisper in enumerate(self._whispers):
            if whisper.waiting is None:
                raise NotResumable("a whisper is about to be planted")
            waits[f"whisper:{i}"] = whisper.waiting
        # by initiator: the order they first talked in follows the schedule
        return {"town": self.town.get_state(),
                "conversations": dict(sorted(self._conversations.items())), "agents": agents,
                "whispers": [[w.agent, w.text, w.at] for w in self._whispers]}, waits

    def restore(self, engine: Engine, state: dict, waits: dict[str, simpy.Event],
                architecture: Callable[[str], Architecture]) -> None:
        """Make this new society (built as its episode's setup builds it, nothing started)
        the one `checkpoint` saw, and start its processes where they waited. `architecture`
        loads an agent's architecture by its source (one a fork swapped in); NotResumable
        when the checkpoint does not fit (other agents, an architecture that changed)."""
        if list(state["agents"]) != list(self.agents):
            raise NotResumable(f"the checkpoint's agents ({', '.join(state['agents'])}) are not "
                               f"this episode's ({', '.join(self.agents)})")
        engine.register(list(self.agents))
        self.town.set_state(state["town"])
        self._conversations = dict(state["conversations"])
        resume = {}
        for name, saved in state["agents"].items():
            agent = self.agents[name]
            if not _same_architecture(saved["architecture"], agent.architecture.describe()):
                try:  # a fork swapped it in: from where it was read then
                    agent.change_architecture(architecture(saved["architecture"]["source"]))
                except (OSError, ValueError, KeyError) as exc:
                    raise NotResumable(f"{name}'s architecture "
                                       f"{saved['architecture']['name']} does not load "
                                       f"({exc})") from exc
                if not _same_architecture(saved["architecture"],
                                          agent.architecture.describe()):
                    raise NotResumable(f"{name}'s architecture "
                                       f"{saved['architecture']['name']} changed since")
            resume[name] = agent.restore(saved, waits.get(f"agent:{name}"))
        for name, agent in self.agents.items():  # conversations join their two sides
            if resume[name].kind == "talk":  # its end is an event of the partner's
                talk_id = state["agents"][name]["at"]["talk"]
                agent._talk = Talk(id=talk_id, initiator=agent,
                                   done=engine.event_for(resume[name].partner, by=name))
        for name, agent in self.agents.items():
            talking = state["agents"][name]["talking"]
            if talking is not None:
                talk_id, initiator = talking
                talk = self.agents[initiator]._talk
                if talk is None or talk.id != talk_id:
                    raise NotResumable(f"{name} listens to {initiator}, who is not talking")
                agent.talking = talk
        for name, agent in self.agents.items():
            with engine.resident(name):
                agent.process = engine.process(agent.live(engine, self, resume=resume[name]))
        for i, (name, text, at) in enumerate(state["whispers"]):
            self._plant(engine, _Whisper(name, text, at, waits[f"whisper:{i}"]))

    def change_architecture(self, engine: Engine, name: str,
                            architecture: Architecture) -> dict[str, str]:
        """Swap `name`'s modules for `architecture`'s (GenerativeAgent.change_architecture)
        and log `architecture_changed`; returns {slot: "" (carried) or why it starts fresh}."""
        agent = self.agent(name)
        previous = agent.architecture.name
        outcome = agent.change_architecture(architecture)
        engine.emit(ArchitectureChanged(
            t=engine.now, agent=name, previous=previous, architecture=architecture.name,
            carried=[slot for slot, why in outcome.items() if not why],
            fresh={slot: why for slot, why in outcome.items() if why}))
        return outcome


def _same_architecture(a: dict, b: dict) -> bool:
    """The same modules with the same parameters, wherever the file was read from."""
    return {**a, "source": ""} == {**b, "source": ""}


def build_society(town: WorldState, personas: Iterable[Persona | object], *,
                  architecture: str | Architecture = "ga",
                  architectures: Mapping[str, str | Architecture] | None = None,
                  attention: int = 3, homes: Iterable[str] | None = None) -> Society:
    """Agents for `personas` (Persona or worlds.Resident) in the live world `town`.

    `architecture` is everyone's default (a built-in name, a YAML path or a loaded
    Architecture); `architectures` overrides it per agent name. `homes`: the living areas
    that are private to their residents [default: those of `personas`; a town passes all its
    residents', so the homes of people not in this episode stay private too].
    """
    people = [p if isinstance(p, Persona) else Persona.from_resident(p) for p in personas]
    people = [p.model_copy(update={
        "living_area": arena_of(town.world, p.living_area),
        "workplace": arena_of(town.world, p.workplace) if p.workplace else None})
        for p in people]
    overrides = dict(architectures or {})
    unknown = sorted(set(overrides) - {p.name for p in people})
    if unknown:
        raise KeyError(f"architecture given for unknown agent(s): {', '.join(unknown)}")
    loaded: dict[str, Architecture] = {}

    def resolve(choice: str | Architecture) -> Architecture:
        if isinstance(choice, Architecture):
            return choice
        if choice not in loaded:
            loaded[choice] = load_architecture(choice)
        return loaded[choice]

    homes = Homes(town.world, [p.living_area for p in people] if homes is None else homes)
    lists: dict[tuple, list[str]] = {}

    def places(p: Persona) -> list[str]:
        # What known_places reads of a persona; housemates share theirs (computed once).
        key = (p.living_area, tuple(p.spatial_memory or ()))
        if key not in lists:
            lists[key] = known_places(town.world, p, homes)
        return list(lists[key])

    agents = [GenerativeAgent(p, resolve(overrides.get(p.name, architecture)),
                              places=places(p), attention=attention)
              for p in people]
    return Society(town, agents)


__all__ = ["WHISPER_IMPORTANCE", "Address", "Homes", "Society", "build_society", "known_places"]
