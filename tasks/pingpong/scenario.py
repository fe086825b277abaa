"""One PingPong conversation as a scenario: a player and an interrogator alone in one room.

The interrogator speaks first; they alternate until the player has spoken the situation's
number of turns. The run directory is a standard one (`sandbox log` reads it); its header holds
the character card and the situation, which is all a judge needs besides the utterances.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from agents.chat import converse
from agents.roleplay import InterrogatorAgent, PlayerAgent
from sandbox.engine import Engine
from sandbox.events import AgentJoined

from .models import (
    INTERROGATOR_SAMPLING,
    PLAYER_SAMPLING,
    Character,
    Sampling,
    Situation,
)

SCENARIO = "pingpong"
PLACE = "single_room:house:room:table"
CONVERSATION = "c0"


def pair_id(character: Character, situation: Situation) -> str:
    """A stable directory name for a pair: the character's name and a hash of the situation.

    Keyed on content, not position, so a reordered or subsampled set still finds its runs.
    """
    name = re.sub(r"[^a-z0-9]+", "-", character.char_name.lower()).strip("-")[:40] or "character"
    digest = hashlib.sha1(situation.text.encode("utf-8")).hexdigest()[:8]
    return f"{name}__{digest}"


class PingPongScenario:
    """The `Scenario` of one character x situation conversation."""

    name = SCENARIO
    world = "single_room"
    until = None
    start_time = datetime(2024, 3, 4, 20, 0)

    def __init__(self, character: Character, situation: Situation, *, language: str = "en",
                 player_llm=None, interrogator_llm=None,
                 player_sampling: Sampling = PLAYER_SAMPLING,
                 interrogator_sampling: Sampling = INTERROGATOR_SAMPLING):
        self.character = character
        self.situation = situation
        self.language = language
        self.player_llm = player_llm  # None: the episode's model
        self.interrogator_llm = interrogator_llm
        self.player_sampling = player_sampling
        self.interrogator_sampling = interrogator_sampling
        self.interrogator_name = "User" if character.char_name == "Interrogator" \
            else "Interrogator"

    def config(self) -> dict[str, Any]:
        return {
            "benchmark": "pingpong",
            "language": self.language,
            "character": self.character.model_dump(mode="json"),
            "situation": self.situation.model_dump(mode="json"),
            "player_agent": self.character.char_name,
            "interrogator_agent": self.interrogator_name,
            "conversation": CONVERSATION,
            "sampling": {"player": self.player_sampling.model_dump(),
                         "interrogator": self.interrogator_sampling.model_dump()},
        }

    def models(self, default_model: str) -> dict[str, str]:
        def model_of(llm) -> str:
            return llm.model_id if llm is not None else default_model

        return {"player": model_of(self.player_llm),
                "interrogator": model_of(self.interrogator_llm)}

    def setup(self, engine: Engine) -> None:
        player = PlayerAgent(self.character, llm=self.player_llm,
                             **self.player_sampling.model_dump())
        interrogator = InterrogatorAgent(character_summary=self.character.public_summary,
                                         situation=self.situation.text,
                                         name=self.interrogator_name, llm=self.interrogator_llm,
                                         **self.interrogator_sampling.model_dump())
        engine.emit(AgentJoined(t=0, agent=player.name, location=PLACE,
                                persona=self.character.public_summary, architecture="roleplay"))
        engine.emit(AgentJoined(t=0, agent=interrogator.name, location=PLACE,
                                persona="a simulated user", architecture="roleplay"))
        # The situation is not handed to `converse`: only the interrogator may know it.
        engine.process(converse(engine, [interrogator, player], conversation=CONVERSATION,
                                place="the room", max_turns=2 * self.situation.num_turns))
