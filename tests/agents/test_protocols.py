"""The slot protocols (agents/protocols.py) are the whole contract between the host and its
modules: a module implementing only its protocol runs, and the built-in modules ask each other
for nothing beyond the protocols."""

from __future__ import annotations

import typing

from pydantic import BaseModel, ConfigDict

from agents.architecture import Architecture
from agents.chat import ChatTurn
from agents.planning import Action
from agents.protocols import Conversation, Memory, Planner, Reflector, Retriever, TaskPlanner
from sandbox.events import ConversationEnded, Utterance
from sandbox.events.agent import ActionStarted, MemoryRetrieved, PlanMade
from tests.agents.ga_helpers import ISABELLA, architecture, town_day

PROTOCOLS = {"memory": Memory, "retriever": Retriever, "planner": Planner,
             "reflector": Reflector, "conversation": Conversation, "task_planner": TaskPlanner}


def members(protocol: type) -> set[str]:
    found = getattr(protocol, "__protocol_attrs__", None)  # Python 3.12+
    return set(found if found is not None else typing._get_protocol_attrs(protocol))


class ProtocolOnly:
    """A module seen through its slot's protocol: reaching for anything else (an attribute the
    protocol does not name, optional hooks included) is an AttributeError."""

    def __init__(self, module, protocol: type):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_allowed", members(protocol))

    def __getattr__(self, name):
        if name not in self._allowed:
            raise AttributeError(f"{name!r} is not in the protocol")
        return getattr(self._module, name)

    def __setattr__(self, name, value):
        if name not in self._allowed:
            raise AttributeError(f"{name!r} is not in the protocol")
        setattr(self._module, name, value)

    def __len__(self):
        if "__len__" not in self._allowed:
            raise TypeError("len() is not in the protocol")
        return len(self._module)


class ProtocolOnlyArchitecture(Architecture):
    def build(self):
        return {slot: ProtocolOnly(module, PROTOCOLS[slot])
                for slot, module in super().build().items()}


def with_module(base: str, slot: str, cls: type) -> Architecture:
    arch = architecture(base)
    return Architecture(f"{base}+{cls.__name__}", arch.source, {**arch.classes, slot: cls},
                        {**arch.params, slot: cls.Params()})


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MinimalPlanner:
    """The Planner protocol and nothing else: an hour of reading at home, again and again."""

    Params = NoParams

    def __init__(self, params=None):
        self.revisions: list[str] = []

    def plan_day(self, agent, engine):
        return
        yield

    def next_action(self, agent, engine):
        yield from self.plan_day(agent, engine)
        return Action("reading at home", agent.persona.living_area, engine.now,
                      engine.now + 3600, "reading")

    def revise(self, agent, engine, reason):
        self.revisions.append(reason)
        return
        yield

    def get_state(self):
        return {"revisions": self.revisions}

    def set_state(self, state):
        self.revisions = list(state["revisions"])


class MinimalConversation:
    """The Conversation protocol and nothing else: greet each person once, two lines."""

    Params = NoParams
    max_turns = 4

    def __init__(self, params=None):
        self.greeted: set[str] = set()

    def decide(self, agent, other, engine):
        wants = other.name not in self.greeted
        self.greeted.add(other.name)
        return wants
        yield

    def utterance(self, agent, partner, transcript, engine):
        return ChatTurn(utterance=f"Hello, {partner.name}.", end_conversation=len(transcript) >= 1)
        yield

    def remember(self, agent, partner, transcript, engine):
        agent.memory.add("chat", f"greeted {partner.name}", engine.now, importance=2,
                         subject=partner.name)
        return f"greeted {partner.name}"
        yield

    def get_state(self):
        return {"greeted": sorted(self.greeted)}

    def set_state(self, state):
        self.greeted = set(state["greeted"])


def test_a_planner_with_only_the_protocol_runs_a_town_day_with_a_task(recorder):
    # The task arrives at the performer's first decision: the host asks whether the day is
    # planned (an optional hook this planner lacks) before revising it with the new goal.
    engine, society = town_day(recorder, performer_arch=with_module("ga_tdp", "planner",
                                                                     MinimalPlanner),
                               until_hour=9)
    performer = society.agent(ISABELLA.name)
    assert performer.planner.revisions[0].startswith("new goal: Isabella wants")
    actions = {e.description for e in engine.events
               if isinstance(e, ActionStarted) and e.agent == ISABELLA.name}
    assert actions == {"reading at home"}
    assert [e for e in engine.events if isinstance(e, PlanMade) and e.agent != ISABELLA.name]


def test_a_conversation_module_with_only_the_protocol_talks_in_a_town_day(recorder):
    minimal = with_module("ga", "conversation", MinimalConversation)
    engine, society = town_day(recorder, performer_arch=minimal, others_arch=minimal,
                               until_hour=13)
    ended = [e for e in engine.events if isinstance(e, ConversationEnded)]
    assert ended and all(e.turns == 2 for e in ended)
    said = [e.text for e in engine.events if isinstance(e, Utterance)]
    assert said and all(t.startswith("Hello, ") for t in said)
    assert not [r for r in recorder.requests if r.tag.startswith(("react.", "converse."))]


def test_a_town_day_runs_on_the_slot_protocols_alone(recorder):
    """Every module of every agent is reachable only through its protocol: an attribute the
    host or another module uses without the protocol naming it fails the day."""
    def protocol_only(name):
        return ProtocolOnlyArchitecture(**vars(architecture(name)))

    engine, society = town_day(recorder, performer_arch=protocol_only("ga_tdp"),
                               others_arch=protocol_only("ga"), until_hour=13)
    kinds = {type(e).__name__ for e in engine.events}
    assert {"TaskPlanned", "PlanMade", "MemoryRetrieved", "Utterance",
            "ConversationEnded"} <= kinds
    revised = [e for e in engine.events if isinstance(e, PlanMade) and e.level == "revised"]
    assert revised  # after the lunch conversations
    assert [e for e in engine.events if isinstance(e, MemoryRetrieved)
            and e.purpose == "converse.turn"]
