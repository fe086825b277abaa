"""One PingPong conversation as a dialogue episode: a player and an interrogator alone in one
room (the kit's DialogueScenario).

The interrogator speaks first; they alternate until the player has spoken the situation's
number of turns. The run header holds the character card and the situation, which is all a
judge needs besides the utterances.
"""

from __future__ import annotations

from typing import Any

from agents.chat import converse
from agents.roleplay import InterrogatorAgent, PlayerAgent
from sandbox.engine import Engine, Process
from tasks.kit import CONVERSATION, Cast, DialogueScenario

from .models import INTERROGATOR_SAMPLING, PLAYER_SAMPLING, SCENARIO, Character, Situation


class PingPongScenario(DialogueScenario):
    """The dialogue of one character x situation pair."""

    benchmark = SCENARIO
    name = SCENARIO

    def __init__(self, character: Character, situation: Situation, cast: Cast | None = None,
                 *, language: str = "en"):
        super().__init__(cast or Cast(models={"player": "", "interrogator": ""},
                                      sampling={"player": PLAYER_SAMPLING,
                                                "interrogator": INTERROGATOR_SAMPLING}))
        self.character = character
        self.situation = situation
        self.language = language
        self.interrogator_name = "User" if character.char_name == "Interrogator" \
            else "Interrogator"

    def item_config(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "character": self.character.model_dump(mode="json"),
            "situation": self.situation.model_dump(mode="json"),
            "player_agent": self.character.char_name,
            "interrogator_agent": self.interrogator_name,
            "conversation": CONVERSATION,
        }

    def speakers(self) -> list:
        """The player, then the interrogator (the order they join the room)."""
        sampling = self.cast.sampling
        player = PlayerAgent(self.character, llm=self.cast.llm("player"),
                             **sampling["player"].model_dump())
        interrogator = InterrogatorAgent(character_summary=self.character.public_summary,
                                         situation=self.situation.text,
                                         name=self.interrogator_name,
                                         llm=self.cast.llm("interrogator"),
                                         **sampling["interrogator"].model_dump())
        return [player, interrogator]

    def joined(self, speaker) -> dict[str, str]:
        persona = self.character.public_summary if isinstance(speaker, PlayerAgent) \
            else "a simulated user"
        return {"persona": persona, "architecture": "roleplay"}

    def dialogue(self, engine: Engine, speakers: list) -> Process:
        player, interrogator = speakers
        # The situation is not handed to `converse`: only the interrogator may know it.
        return converse(engine, [interrogator, player], conversation=CONVERSATION,
                        place="the room", max_turns=2 * self.situation.num_turns)
