"""Small worlds and scripted engines for the generative-agent tests (imported by them)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agents.architecture import Architecture, load_architecture
from agents.persona import Persona
from agents.scripted import RESPONDERS
from agents.society import build_society
from sandbox.engine import Engine
from sandbox.llm import LLMSettings, ScriptedBackend, make_llm
from worlds import World, WorldState

MINI_TOWN = Path(__file__).with_name("data") / "mini_town.yaml"

ISABELLA = Persona(name="Isabella Rodriguez", age=34, occupation="cafe owner",
                   innate="friendly, outgoing", living_area="mini:Rose Cottage:bedroom")
KLAUS = Persona(name="Klaus Mueller", age=20, occupation="student",
                innate="curious, kind", living_area="mini:Elm House:bedroom")
MARIA = Persona(name="Maria Lopez", age=21, occupation="student",
                innate="energetic, funny", living_area="mini:Oak Flat:bedroom")
PARTY = "Isabella wants to hold a party at Hobbs Cafe at 17:00 today and invite people."


class Recorder:
    """Wraps responders: keeps every request (agent, tag, prompt) the model was asked."""

    def __init__(self, responders=None):
        self.requests = []
        self.responders = dict(RESPONDERS if responders is None else responders)

    def backend(self) -> ScriptedBackend:
        backend = ScriptedBackend(model_id="scripted/test")
        original = backend.answer

        def answer(request):
            self.requests.append(request)
            if request.tag in self.responders:
                return self.responders[request.tag](request)
            return original(request)

        backend.answer = answer
        return backend

    def prompts(self, agent: str | None = None, tag: str | None = None) -> list[str]:
        return ["\n".join(m.content for m in r.messages) for r in self.requests
                if (agent is None or r.agent == agent) and (tag is None or r.tag == tag)]


def architecture(name: str):
    """A built-in architecture with the fast hashing embedder (no model load in tests)."""
    return load_architecture(name).with_params("memory", embedder="hashing")


def make_engine(recorder: Recorder, start=datetime(2024, 2, 14, 6, 0), seed=0) -> Engine:
    llm = make_llm(LLMSettings(model="scripted/test"), backend=recorder.backend())
    engine = Engine(llm=llm, seed=seed, start_time=start)
    engine.events = []
    engine.subscribe(engine.events.append)
    return engine


def town_day(recorder: Recorder, *, performer_arch="ga_tdp", others_arch="ga", until_hour=19.0,
             people=(ISABELLA, KLAUS, MARIA), task=PARTY):
    """A day in the mini town from 06:00; an architecture is a built-in name or loaded."""
    def arch(choice):
        return choice if isinstance(choice, Architecture) else architecture(choice)

    engine = make_engine(recorder)
    town = WorldState(engine, World.load(MINI_TOWN))
    society = build_society(town, people, architecture=arch(others_arch),
                            architectures={ISABELLA.name: arch(performer_arch)})
    if task:
        society.agent(ISABELLA.name).give_task(task)
    society.start(engine)
    engine.run(until=(until_hour - 6) * 3600)
    return engine, society
