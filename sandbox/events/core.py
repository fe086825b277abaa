"""Events every scenario uses: agents joining, conversations and their turns, the episode end."""

from __future__ import annotations

from typing import Literal

from .base import Event


class AgentJoined(Event):
    kind: Literal["agent_joined"] = "agent_joined"
    location: str  # an address, world:sector:arena[:object]
    persona: str = ""  # one line for viewers
    architecture: str = ""


class ConversationStarted(Event):
    kind: Literal["conversation_started"] = "conversation_started"
    conversation: str
    participants: list[str]
    location: str = ""


class Utterance(Event):
    kind: Literal["utterance"] = "utterance"
    conversation: str
    turn: int
    to: list[str]
    text: str
    ends: bool = False  # the speaker said the conversation is over


class ConversationEnded(Event):
    kind: Literal["conversation_ended"] = "conversation_ended"
    conversation: str
    turns: int
    reason: Literal["ended_by_agent", "max_turns", "interrupted"]


class EpisodeEnded(Event):
    kind: Literal["episode_ended"] = "episode_ended"
    reason: str = "completed"
