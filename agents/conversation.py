"""Reactions and conversations: the `conversation` slot.

On noticing someone in the same arena, the agent decides whether to talk or to wait and carry on
(`react.talk`, one call, never asked again about the same person within `ask_cooldown_minutes`,
nor within `talk_cooldown_minutes` after they last talked). A conversation lasts at most
`max_turns` utterances; each is generated from memories retrieved for the partner, plus the task
planner's context (TDP's checklist for the performer), as a chat in free text; an end mark says
whether it ends the conversation (`converse.turn`). The memories are retrieved once, for the
agent's first line of the conversation (for the partner and what they said so far). The
reference code retrieves for every line, but for focal points that do not change within a
conversation (the partner, what the partner is doing), so its memories change little in one.
Every later turn of the agent's then begins with the same system message and the transcript so
far, which the embedded model's prefix store holds (sandbox/llm/local.py), so only the two
newest lines are evaluated. `retrieve_every_turn: true` retrieves for each line, for the partner
and the last line, instead. Afterwards each side stores its own one-sentence summary as a chat
memory (`converse.summary`), whose answer also says whether the talk changes the rest of today;
only then does its planner revise the day (`changed_plans`, the host's optional hook;
`revise_every_talk: true` revises after every talk).

The turn-taking itself is `agents.chat.converse`, the loop every conversation uses: the host
(agents/agent.py) decides before it, speaks through `utterance` in it, remembers after it.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.engine import Engine, Process
from sandbox.events import Utterance
from sandbox.events.agent import ReactionDecided
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

from .chat import END_MARK, ChatTurn, turn_parser, with_turns
from .schema import Score, ask, text


class TalkDecision(BaseModel):
    decision: Literal["talk", "wait"]
    reason: text(120)


class ChatSummary(BaseModel):
    summary: text(300)
    importance: Score
    # Asked in the same call so that a chat that settled nothing costs no revision of the day.
    changes_today: Literal["yes", "no"]


class ConversationParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(default=8, ge=1, le=40)
    retrieve_k: int = Field(default=15, ge=1)  # memories per conversation (or utterance)
    # Retrieve for each line (the query: the partner and the last line) instead of once per
    # conversation. Measured on the embedded model (bench/stss.py): the turn's prompt is then
    # re-evaluated from the memories on, about 500 of 770 tokens a turn instead of about 100.
    retrieve_every_turn: bool = False
    react_k: int = Field(default=5, ge=0)  # memories about the other when deciding to talk
    ask_cooldown_minutes: float = Field(default=60, ge=0)
    talk_cooldown_minutes: float = Field(default=180, ge=0)
    seconds_per_turn: float = Field(default=15, gt=0)
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=80, ge=16)  # one or two sentences; a cut tail is trimmed
    # What the prompt asks for ("one or two short sentences"), held to: an utterance ends with
    # its second sentence, and the embedded model stops generating there. Measured on the
    # embedded model, a town's turns ran on to the 80-token limit in 307 of 696 turns, and 40%
    # of their tokens came after the second sentence. None: as long as the model goes on.
    max_sentences: int | None = Field(default=2, ge=1)
    # Revise the day after every conversation, not only after one whose summary says it changes
    # today's plans (bench/agents.py: 0.84 revisions per agent-hour, most of them of small talk).
    revise_every_talk: bool = False


# When no usable line could be had (counted as a fault): silence, and the talk ends.
GAVE_UP = ChatTurn(utterance="(says nothing)", end_conversation=True)


def transcript_lines(transcript: list[Utterance]) -> list[str]:
    return [f"{u.agent}: {u.text}" for u in transcript]


class GAConversation:
    """Module `ga`."""

    Params = ConversationParams

    def __init__(self, params: ConversationParams | None = None):
        self.params = params or ConversationParams()
        self.max_turns = self.params.max_turns
        self.last_asked: dict[str, float] = {}
        self.last_talk: dict[str, float] = {}
        self.changed: dict[str, bool] = {}  # partner -> the last talk changed today's plans
        # partner -> what this agent's turns in the talk going on show: the memories retrieved
        # and the time at its first line (kept the same, so every turn's prompt starts alike).
        self.talk: dict[str, dict[str, Any]] = {}

    def _ask(self, agent, engine: Engine, template: str, tag: str, schema, fallback,
             max_tokens: int, about: dict[str, str] | None = None, **variables) -> Process:
        return ask(agent, engine, template, tag=tag, schema=schema, fallback=fallback,
                   temperature=self.params.temperature, max_tokens=max_tokens, about=about,
                   **variables)

    def may_consider(self, other: str, now: float) -> bool:
        """Whether deciding about `other` now is worth a call (cooldowns)."""
        p = self.params
        asked, talked = self.last_asked.get(other), self.last_talk.get(other)
        return ((asked is None or now - asked >= p.ask_cooldown_minutes * 60)
                and (talked is None or now - talked >= p.talk_cooldown_minutes * 60))

    def decide(self, agent, other, engine: Engine) -> Process:
        now = engine.now
        if not self.may_consider(other.name, now):
            return False
        self.last_asked[other.name] = now
        memories = []
        if self.params.react_k:
            found = yield from agent.retriever.retrieve(agent, engine, other.name,
                                                        purpose="react.talk",
                                                        k=self.params.react_k)
            memories = [m.description for m in found]
        talked = self.last_talk.get(other.name)
        answer = yield from self._ask(
            agent, engine, "react_talk.j2", "react.talk", TalkDecision,
            TalkDecision(decision="wait", reason="no answer"), 60,
            about={"other": other.name, "other_doing": other.doing or ""},
            now=engine.now_datetime.strftime("%H:%M"), doing=agent.doing,
            here=agent.location, other=other.name, other_doing=other.doing,
            memories=memories, task=agent.task_planner.conversation_context(agent),
            last_chat=None if talked is None else
            f"at {engine.clock.at(talked).strftime('%H:%M')}")
        engine.emit(ReactionDecided(t=engine.now, agent=agent.name, target=other.name,
                                    decision=answer.decision, reason=answer.reason))
        return answer.decision == "talk"

    def utterance(self, agent, partner, transcript: list[Utterance], engine: Engine) -> Process:
        """The agent's next ChatTurn."""
        talk = self.talk.get(partner.name)
        if talk is None or self.params.retrieve_every_turn or \
                not any(u.agent == agent.name for u in transcript):  # its first line
            query = partner.name + (f": {transcript[-1].text}" if transcript else "")
            found = yield from agent.retriever.retrieve(agent, engine, query,
                                                        purpose="converse.turn",
                                                        k=self.params.retrieve_k)
            talk = self.talk[partner.name] = {
                "memories": [m.description for m in found],
                "now": engine.now_datetime.strftime("%H:%M")}
        completion = yield engine.ask(LLMRequest(
            messages=self.turn_messages(agent, partner, transcript, talk["now"],
                                        talk["memories"]),
            tag="converse.turn", agent=agent.name, about={"partner": partner.name},
            parser=turn_parser([agent.name, partner.name]), fallback=GAVE_UP,
            temperature=self.params.temperature, max_tokens=self.params.max_tokens,
            max_sentences=self.params.max_sentences))
        return completion.parsed

    def turn_messages(self, agent, partner, transcript: list[Utterance], now: str,
                      memories: list[str]) -> list[Message]:
        """A chat: the speaker's situation as the system message, the partner's lines as the
        user's, its own as the assistant's. Free text with an end mark, not JSON: measured on
        the embedded 135M model, JSON turns copied the instructions ("Set end") while chat
        turns stayed in character (see agents/chat.py).

        Each turn's messages begin with the speaker's previous turn's, the cue that started
        the talk included, so that the model's stored prefix covers all but the newest lines."""
        system = render("agents", "converse_turn.j2", persona=agent.persona,
                        partner=partner.name, memories=memories, here=agent.location,
                        task=agent.task_planner.conversation_context(agent),
                        now=now, end_mark=END_MARK)
        messages = [Message(role="system", content=system)]
        started = render("agents", "converse_cue.j2", partner=partner.name, first=True,
                         last=False).strip()
        if transcript and transcript[0].agent == agent.name:  # the cue its first line followed
            messages.append(Message(role="user", content=started))
        messages = with_turns(messages, transcript, agent.name)
        cue = started if not transcript else render(
            "agents", "converse_cue.j2", partner=partner.name, first=False,
            last=len(transcript) >= self.max_turns - 1).strip()
        if cue and messages[-1].role == "user":
            messages[-1] = Message(role="user", content=f"{messages[-1].content}\n\n{cue}")
        elif cue or messages[-1].role != "user":  # the model answers a user turn
            messages.append(Message(role="user", content=cue or "(Go on.)"))
        return messages

    def remember(self, agent, partner, transcript: list[Utterance], engine: Engine) -> Process:
        self.last_talk[partner.name] = engine.now
        self.talk.pop(partner.name, None)
        lines = transcript_lines(transcript)
        fallback = ChatSummary(summary=(f"talked with {partner.name}: "
                                        + " / ".join(lines))[:300], importance=4,
                               changes_today="yes")  # unknown: revise, to be safe
        answer = yield from self._ask(
            agent, engine, "converse_summary.j2", "converse.summary", ChatSummary, fallback,
            160, partner=partner.name, here=agent.location, transcript=lines,
            now=engine.now_datetime.strftime("%H:%M"))
        summary = answer.summary.strip()
        agent.memory.add("chat", summary, engine.now, importance=answer.importance,
                         subject=partner.name)
        self.changed[partner.name] = answer.changes_today == "yes"
        return summary

    def changed_plans(self, partner: str) -> bool:
        """Whether the last conversation with `partner` changes the rest of today, as its
        summary said (the host revises the day only then)."""
        return self.params.revise_every_talk or self.changed.get(partner, True)

    def get_state(self) -> dict[str, Any]:
        return {"last_asked": dict(self.last_asked), "last_talk": dict(self.last_talk),
                "changed": dict(self.changed), "talk": copy.deepcopy(self.talk)}

    def set_state(self, state: dict[str, Any]) -> None:
        self.last_asked = dict(state["last_asked"])
        self.last_talk = dict(state["last_talk"])
        self.changed = dict(state.get("changed", {}))
        self.talk = copy.deepcopy(state.get("talk", {}))

