"""The dialogue episode: one item of a single-room benchmark as a scenario on the engine.

A benchmark subclasses `DialogueScenario` with its dialogue policy: which speakers take part
(`speakers`), what the header records of the item (`item_config`), and, when plain turn-taking
is not enough, the whole dialogue (`dialogue`). The run directory is a standard one: header,
events (AgentJoined, ConversationStarted, Utterance, ConversationEnded, EpisodeEnded), calls,
cache, result, so `sandbox log` and `sandbox replay` read it unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agents.chat import converse
from sandbox.engine import Engine, Process
from sandbox.events import AgentJoined

from .roles import Cast

PLACE = "single_room:house:room:table"
CONVERSATION = "c0"


class DialogueScenario:
    """A single-room dialogue between the roles of a benchmark about one item."""

    benchmark = "dialogue"  # the benchmark's name, written in the header
    name = "dialogue"  # the scenario name in the header
    world = "single_room"
    until = None
    start_time = datetime(2024, 3, 4, 20, 0)
    max_turns = 8  # utterances, for the default turn-taking dialogue
    first = 0  # who speaks first among `speakers()`

    def __init__(self, cast: Cast):
        self.cast = cast

    # -- what a benchmark writes -------------------------------------------------------------
    def item_config(self) -> dict[str, Any]:
        """What a judge needs of the item besides the utterances (goes in the header)."""
        return {}

    def speakers(self) -> list:
        """The chat agents of the dialogue (each with `name` and a `speak` step)."""
        raise NotImplementedError

    def joined(self, speaker) -> dict[str, str]:
        """How a speaker appears in the log (AgentJoined persona)."""
        return {"persona": getattr(getattr(speaker, "persona", None), "description", ""),
                "architecture": "chat"}

    def dialogue(self, engine: Engine, speakers: list) -> Process:
        """Turn-taking until `max_turns` utterances or a speaker ends it."""
        return converse(engine, speakers, conversation=CONVERSATION, place="the room",
                        max_turns=self.max_turns, first=self.first)

    # -- the runner's Scenario protocol ------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, **self.item_config(),
                "sampling": {role: s.model_dump() for role, s in self.cast.sampling.items()}}

    def models(self, default_model: str) -> dict[str, str]:
        llms = self.cast.llms or {}
        return {role: getattr(llms.get(role), "model_id", None) or model
                for role, model in self.cast.models.items()}

    def setup(self, engine: Engine) -> None:
        speakers = self.speakers()
        for speaker in speakers:
            engine.emit(AgentJoined(t=0, agent=speaker.name, location=PLACE,
                                    **self.joined(speaker)))
        engine.process(self.dialogue(engine, [EndsWhenUnanswered(s) for s in speakers]))


class EndsWhenUnanswered:
    """A speaker whose turn never reached its model ends the dialogue there: its line is a
    canned one, and every answer its partner (a paid model, maybe) gave to more of them would
    be thrown away, since the run is unavailable and is run again. Anything else is the
    speaker's own (attribute access passes through)."""

    def __init__(self, speaker):
        self.speaker = speaker
        self.name = speaker.name

    def __getattr__(self, name: str):
        return getattr(self.speaker, name)

    def speak(self, engine: Engine, *args, **kwargs) -> Process:
        seen, _ = engine.answers()
        said = yield from self.speaker.speak(engine, *args, **kwargs)
        lost = any("unavailable" in completion.faults
                   for request, completion in engine.answers(seen)[1]
                   if request.agent == self.name)
        return said.model_copy(update={"end_conversation": True}) if lost else said
