"""Replaying a harvested scenario as a single-room dialogue episode (the kit's DialogueScenario).

Two generative agents are rebuilt from the frozen scenario: their personas, their memory
streams as they were when the conversation began (same times relative to its start, same
importance, same last access), at the conversation's place and clock time. No town is needed.
The performer runs the architecture under test and is given the task as in the episode (into
`currently`; with TDP its task planner is asked for its plans first, and only its conversation
context is used, as in the paper); the partner is a vanilla generative agent (`ga`). They talk
through the town's conversation module and prompts (at most 8 utterances, the initiator of the
original conversation first); then the partner stores its own summary, as it would in the town,
and the log gets it as `summary_written`. Both restored memory streams open the log as
`memory_added` events (created at their own times, before the conversation), so each id a
`memory_retrieved` names is one the log wrote, as in the town.

Each agent's calls go to its role's model, under the modules' own purpose tags; calls.jsonl
names the agent of every call, which is how calls and tokens are counted by role.
"""

from __future__ import annotations

from typing import Any

from agents import frozen
from agents.agent import GenerativeAgent, ModuleSpeaker
from agents.chat import converse
from agents.persona import Persona
from sandbox.engine import Engine, Process
from tasks.kit import CONVERSATION, Cast, DialogueScenario, Role, Sampling
from tasks.stss.events import SummaryWritten

from .schema import Character, Scenario

BENCHMARK = "stss_lang"
PARTNER_ARCH = "ga"
# Sampling is the conversation module's own (temperature 0.7, 80 tokens a line); these are
# what the kit records per role.
PERFORMER = Role("performer", Sampling(temperature=0.7, top_p=1.0, max_tokens=80),
                 tag="stss_lang.performer", help="the model under test (the performer)")
PARTNER = Role("partner", Sampling(temperature=0.7, top_p=1.0, max_tokens=80),
               tag="stss_lang.partner", help="the model of the partner (a vanilla GA)")


class _RoleEngine:
    """The engine as one agent sees it: its calls go to its role's model. Everything else is
    the episode's engine."""

    def __init__(self, engine: Engine, llm):
        self._engine, self._llm = engine, llm

    def __getattr__(self, name: str):
        return getattr(self._engine, name)

    def ask(self, request, llm=None):
        return self._engine.ask(request, llm=llm or self._llm)


class _Speaker:
    """A ModuleSpeaker whose calls go through its role's engine."""

    def __init__(self, inner: ModuleSpeaker, engine: _RoleEngine):
        self.inner, self.engine, self.name = inner, engine, inner.name

    def speak(self, engine: Engine, transcript, partners, place, situation, max_turns) -> Process:
        return (yield from self.inner.speak(self.engine, transcript, partners, place, situation,
                                            max_turns))


def rebuild(character: Character, architecture: str, *, embedder: str | None,
            location: str) -> GenerativeAgent:
    """A generative agent with the character's persona and frozen memory stream."""
    return frozen.rebuild(Persona(**character.persona), character.memories, architecture,
                          embedder=embedder, location=location)


class StssLangScenario(DialogueScenario):
    """One harvested conversation, regenerated."""

    benchmark = BENCHMARK
    name = BENCHMARK

    def __init__(self, scenario: Scenario, cast: Cast, *, architecture: str = "ga",
                 embedder: str | None = None):
        super().__init__(cast)
        self.scenario = scenario
        self.architecture = architecture
        self.embedder = embedder if embedder is not None else scenario.source.embedder
        self.start_time = scenario.at.replace(microsecond=0)

    def item_config(self) -> dict[str, Any]:
        s = self.scenario
        return {"task": s.task.model_dump(mode="json"), "performer_agent": s.performer.name,
                "partner_agent": s.partner.name, "architecture": self.architecture,
                "partner_architecture": PARTNER_ARCH, "embedder": self.embedder,
                "location": s.location, "conversation": CONVERSATION,
                "source": {"run": s.source.run, "conversation": s.source.conversation,
                           "action_score": s.source.action_score,
                           "architecture": s.performer.architecture}}

    def speakers(self) -> list:
        s = self.scenario
        performer = rebuild(s.performer, self.architecture, embedder=self.embedder,
                            location=s.location)
        performer.give_task(s.task.text)  # into `currently`, as the episode did
        partner = rebuild(s.partner, PARTNER_ARCH, embedder=self.embedder, location=s.location)
        return [performer, partner]

    def joined(self, speaker) -> dict[str, str]:
        return {"persona": speaker.persona.currently or speaker.persona.occupation,
                "architecture": self.architecture if speaker.name == self.scenario.performer.name
                else PARTNER_ARCH}

    def dialogue(self, engine: Engine, speakers: list) -> Process:
        performer, partner = speakers
        # Their restored streams, logged before anything retrieves from them (and the memories
        # they make as they talk, the partner's summary among them).
        performer.log_memory_to(engine)
        partner.log_memory_to(engine)
        as_performer = _RoleEngine(engine, self.cast.llm("performer"))
        as_partner = _RoleEngine(engine, self.cast.llm("partner"))
        # TDP makes its plans from the task (GA's planner is a no-op): only the conversation
        # context is used here, as in the paper's language level.
        yield from performer.task_planner.assign(performer, as_performer, performer.task)
        order = [_Speaker(ModuleSpeaker(performer, partner), as_performer),
                 _Speaker(ModuleSpeaker(partner, performer), as_partner)]
        if self.scenario.initiator == partner.name:
            order.reverse()
        turns = min(performer.conversation.max_turns, partner.conversation.max_turns, 8)
        transcript = yield from converse(engine, order, conversation=CONVERSATION,
                                         place=self.scenario.location, max_turns=turns)
        summary = yield from partner.conversation.remember(partner, performer, transcript,
                                                           as_partner)
        engine.emit(SummaryWritten(t=engine.now, agent=partner.name, conversation=CONVERSATION,
                                   text=summary))
