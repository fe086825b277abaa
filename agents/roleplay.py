"""Role-play agents for the PingPong benchmark: a player that is a character, an interrogator
that plays a user following a situation.

Both are `ChatAgent`s, so `agents.chat.converse` runs their conversation and logs it in the
standard events; their turns are `ChatTurn`s that never end the conversation: a role-play lasts
the situation's number of turns. The information flow is asymmetric on purpose (PingPong,
section 3.1): the player sees only its character card and the conversation; the interrogator
sees only the character's summary, its situation and the conversation.
"""

from __future__ import annotations

import re
from typing import Protocol

from agents.chat import ChatAgent, ChatPersona, ChatTurn, with_turns
from sandbox.engine import Engine, Process
from sandbox.events import Utterance
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

PLAYER_TAG = "pingpong.player"
INTERROGATOR_TAG = "pingpong.interrogator"


class CharacterCard(Protocol):
    """What a player needs of a character card (tasks.pingpong.Character has it)."""

    char_name: str
    system_prompt: str
    example_prompt: str | None
    initial_message: str | None


# Said, and counted as a fault, when the interrogator gave no usable line.
FALLBACK_LINE = ChatTurn(utterance="Tell me more about that.")

# Labels a small model puts before its line ("User: ...") and placeholder lines ("<...>").
_LABEL = re.compile(r"^\s*(?:user|you|me|interrogator)\s*:\s*", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\s*[<{\[].*[>}\]]\s*$")
MAX_LINE_CHARS = 500


def parse_user_line(text: str) -> ChatTurn:
    """The interrogator's free-text answer as one chat line: the first paragraph, without a
    speaker label, quotes or a placeholder; cut at a sentence end when very long."""
    paragraphs = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    line = " ".join((paragraphs[0] if paragraphs else "").split())
    line = _LABEL.sub("", line).strip().strip('"').strip()
    if not line or _PLACEHOLDER.match(line):
        raise ValueError("no usable user line")
    if len(line) > MAX_LINE_CHARS:
        cut = max(line.rfind(c, 0, MAX_LINE_CHARS) for c in ".!?")
        line = line[: cut + 1] if cut > 0 else line[:MAX_LINE_CHARS]
    return ChatTurn(utterance=line)


def character_prompt(card: CharacterCard) -> str:
    """The player's system prompt: the card, and nothing about the situation."""
    return render("agents", "roleplay_player.j2", character=card)


class PlayerAgent(ChatAgent):
    """The model under test, speaking as a character. Its answers are plain text."""

    def __init__(self, card: CharacterCard, *, llm=None, temperature: float = 0.6,
                 top_p: float = 0.9, max_tokens: int = 256):
        persona = ChatPersona(name=card.char_name, description=card.system_prompt)
        super().__init__(persona, llm=llm, temperature=temperature, top_p=top_p,
                         max_tokens=max_tokens)
        self.card = card

    def player_messages(self, transcript: list[Utterance]) -> list[Message]:
        messages = [Message(role="system", content=character_prompt(self.card))]
        return with_turns(messages, transcript, self.name)

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int) -> Process:
        """Ask for the character's next reply. The situation is deliberately not used."""
        request = LLMRequest(messages=self.player_messages(transcript), tag=PLAYER_TAG,
                             agent=self.name, temperature=self.temperature, top_p=self.top_p,
                             max_tokens=self.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return ChatTurn(utterance=completion.text.strip())


class InterrogatorAgent(ChatAgent):
    """A simulated user following a situation; knows the character only by its summary."""

    def __init__(self, *, character_summary: str, situation: str, name: str = "Interrogator",
                 llm=None, temperature: float = 0.8, top_p: float = 0.95, max_tokens: int = 160):
        persona = ChatPersona(name=name, description="a user talking with a role-play character")
        super().__init__(persona, llm=llm, temperature=temperature, top_p=top_p,
                         max_tokens=max_tokens)
        self.character_summary = character_summary
        self.situation = situation

    def interrogator_messages(self, transcript: list[Utterance]) -> list[Message]:
        """Roles flipped: the interrogator's own lines are the assistant's, the character's
        are the user's, so a chat model simply continues its side of the conversation."""
        system = render("agents", "roleplay_interrogator_system.j2",
                        character_summary=self.character_summary, situation=self.situation)
        messages = [Message(role="system", content=system)]
        if not transcript:
            opening = render("agents", "roleplay_interrogator_open.j2",
                             character_summary=self.character_summary)
            return messages + [Message(role="user", content=opening)]
        return with_turns(messages, transcript, self.name)

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int) -> Process:
        """Ask for the user's next line (free text, parsed; a fallback line is counted)."""
        request = LLMRequest(messages=self.interrogator_messages(transcript),
                             tag=INTERROGATOR_TAG, agent=self.name, parser=parse_user_line,
                             fallback=FALLBACK_LINE, temperature=self.temperature,
                             top_p=self.top_p, max_tokens=self.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return completion.parsed
