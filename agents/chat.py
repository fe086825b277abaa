"""The one conversation loop and its turn model, and the chat agent of the single-room benchmarks.

`converse` runs every conversation there is, in the town and in a single room: speakers take
turns, each turn a `ChatTurn` from the speaker's `speak` step, logged as ConversationStarted,
Utterance and ConversationEnded. A speaker is anything with a `name` and that step
(`Speaker`): a `ChatAgent` (the degenerate agent the single-room benchmarks reuse: no memory
stream, no plan, just a persona, the transcript and a model), a role-play agent
(agents/roleplay.py), or a generative agent speaking through its conversation module
(agents/agent.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

import simpy
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.persona import check_person_name
from sandbox.engine import Engine, Process
from sandbox.events import ConversationEnded, ConversationStarted, Utterance
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render


class ChatPersona(BaseModel):
    """Who a chat agent is. Written in YAML by scenario authors."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)  # who they are, in a few sentences
    goal: str = ""  # what they want from this conversation, if anything

    _name = field_validator("name")(check_person_name)


class ChatTurn(BaseModel):
    """One turn of any conversation: the words, and whether the speaker ends the conversation.
    Not a schema the model fills: each speaker's parser decides what a usable line is (a chat
    line is cut at 600 characters, a role-play reply is kept whole)."""

    utterance: str
    end_conversation: bool = False


# Said, and counted as a fault, when no usable answer could be had.
SILENT_TURN = ChatTurn(utterance="(says nothing)", end_conversation=False)

# Chat turns are free text with an end marker rather than JSON: measured on the embedded 135M
# model, grammar-bound JSON turns degenerate into repeated names while free text stays fluent.
END_MARK = "[END]"
_STAGE = re.compile(r"\([^)]*\)|\*[^*]*\*")
_SENTENCE_END = re.compile(r"[.!?…\"')]")


def turn_parser(names: list[str]):
    """A parser for one chat line: drops echoed speaker names, keeps the first paragraph, cuts a
    truncated tail back to the last full sentence, reads the end marker."""
    # Full names and first names: small models echo either as a script-style prefix.
    variants = sorted({v for n in names for v in (n, n.split()[0])}, key=len, reverse=True)
    names_re = "|".join(re.escape(v) for v in variants)
    # ... sometimes with a verb before the colon ("Arthur says:", "Grace Okonkwo is :").
    prefix = re.compile(r"^\s*(?:" + names_re + r")(?:\s+(?:is|says|said|replies|asks))?\s*:\s*",
                        re.IGNORECASE) if variants else None
    # A speaker label further on means the model went on to write the next line of the script.
    next_speaker = re.compile(r"\s(?:" + names_re + r")\s*:", re.IGNORECASE) if variants else None

    def parse(text: str) -> ChatTurn:
        ends = END_MARK.lower() in text.lower()
        text = re.sub(re.escape(END_MARK), " ", text, flags=re.IGNORECASE).strip()
        text = text.split("\n\n")[0].strip()
        text = _STAGE.sub(" ", text)  # stage directions are not speech
        if prefix is not None:
            text = prefix.sub("", text)
            cut = next_speaker.search(text)
            if cut:
                text = text[: cut.start()]
        text = " ".join(text.split()).strip(' "')
        # A long answer without a closing mark was cut at max_tokens: end it at its last
        # full sentence rather than mid-word.
        if len(text) > 120 and not _SENTENCE_END.search(text[-1]):
            last = max(text.rfind(c) for c in ".!?")
            if last > 0:
                text = text[: last + 1]
        if not text:
            raise ValueError("empty chat turn")
        return ChatTurn(utterance=text[:600], end_conversation=ends)

    return parse


def with_turns(messages: list[Message], transcript: list[Utterance], me: str) -> list[Message]:
    """Append the transcript as chat turns: `me` speaks as the assistant, the partner as the
    user; consecutive lines of one side are joined (chat templates expect alternation)."""
    for said in transcript:
        role = "assistant" if said.agent == me else "user"
        if messages[-1].role == role:
            messages[-1] = Message(role=role, content=messages[-1].content + "\n" + said.text)
        else:
            messages.append(Message(role=role, content=said.text))
    return messages


class ChatAgent:
    def __init__(self, persona: ChatPersona, *, llm=None, temperature: float = 0.7,
                 top_p: float = 0.95, max_tokens: int = 80):
        self.persona = persona
        self.name = persona.name
        self.llm = llm  # None: the episode's model
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens

    def messages(self, transcript: list[Utterance], partners: list[str], place: str,
                 situation: str, max_turns: int) -> list[Message]:
        system = render("agents", "chat_system.j2", persona=self.persona, partners=partners,
                        place=place, situation=situation, max_turns=max_turns,
                        end_mark=END_MARK)
        messages = [Message(role="system", content=system)]
        for said in transcript:
            mine = said.agent == self.name
            # Name the speaker only when several others talk: small models parrot the prefix.
            content = said.text if mine or len(partners) == 1 else f"{said.agent}: {said.text}"
            role = "assistant" if mine else "user"
            if messages[-1].role == role:  # several others in a row: one message
                messages[-1] = Message(role=role, content=messages[-1].content + "\n" + content)
            else:
                messages.append(Message(role=role, content=content))
        cue = render("agents", "chat_turn.j2", persona=self.persona, partners=partners,
                     first=not transcript, turns_left=max_turns - len(transcript))
        if not cue:
            return messages
        if messages[-1].role == "user":
            messages[-1] = Message(role="user", content=messages[-1].content + "\n\n" + cue)
        else:
            messages.append(Message(role="user", content=cue))
        return messages

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int) -> Process:
        """A process step: ask the model for this agent's next turn; returns a ChatTurn."""
        request = LLMRequest(
            messages=self.messages(transcript, partners, place, situation, max_turns),
            tag="chat.turn", agent=self.name, parser=turn_parser([self.name, *partners]),
            fallback=SILENT_TURN,
            temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return completion.parsed


class Speaker(Protocol):
    """What `converse` needs of a participant."""

    name: str

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int) -> Process:
        """A process step that returns the speaker's next `ChatTurn`."""


@dataclass
class Progress:
    """Where a conversation is, as data (what `converse` keeps while it runs, so a checkpoint
    can resume it with `go_on`): the lines said so far, and the timeout it waits on while the
    last line takes its time."""

    transcript: list[Utterance] = field(default_factory=list)
    waiting: simpy.Event | None = None


def converse(engine: Engine, speakers: list[Speaker], *, conversation: str, place: str,
             situation: str = "", max_turns: int = 8, seconds_per_turn: float = 20.0,
             first: int = 0, pause_after_end: bool = False,
             progress: Progress | None = None, aside: bool = False) -> Process:
    """Speakers take turns, starting with `speakers[first]`, until one ends the conversation or
    `max_turns` utterances are said; each utterance takes `seconds_per_turn` of simulated time,
    except one that ends the conversation unless `pause_after_end` (the town: the last line
    takes its time too). Returns the transcript (the Utterance events). `progress`, when
    given, is kept up to date as the conversation goes (a checkpoint reads it). `aside`: the
    lines read and change nothing of anyone else's (a town's conversation: its speakers
    unavailable, standing where they are): the engine lets the process's steps up to the
    last line's go on whoever is behind (`Engine.aside`); the steps that end it do not."""
    names = [s.name for s in speakers]
    engine.emit(ConversationStarted(t=engine.now, conversation=conversation, participants=names,
                                    location=place))
    return (yield from go_on(engine, speakers, conversation=conversation, place=place,
                             situation=situation, max_turns=max_turns,
                             seconds_per_turn=seconds_per_turn, first=first,
                             pause_after_end=pause_after_end, progress=progress or Progress(),
                             aside=aside))


def go_on(engine: Engine, speakers: list[Speaker], *, conversation: str, place: str,
          situation: str, max_turns: int, seconds_per_turn: float, first: int,
          pause_after_end: bool, progress: Progress, aside: bool = False) -> Process:
    """The rest of a conversation from `progress`: how `converse` goes on, and how a restored
    checkpoint resumes one (`progress.waiting` the timeout of the last line, scheduled again;
    whether its steps were aside, the checkpoint kept)."""
    names = [s.name for s in speakers]
    transcript = progress.transcript
    reason = "max_turns"
    while progress.waiting is not None or len(transcript) < max_turns:
        if progress.waiting is None:
            if aside:  # this line's steps keep to themselves; the next shows a line away
                engine.aside(True, quiet_for=seconds_per_turn if pause_after_end else 0.0)
            turn = len(transcript)
            speaker = speakers[(first + turn) % len(speakers)]
            partners = [n for n in names if n != speaker.name]
            said: ChatTurn = yield from speaker.speak(engine, transcript, partners, place,
                                                      situation, max_turns)
            transcript.append(engine.emit(Utterance(
                t=engine.now, agent=speaker.name, conversation=conversation, turn=turn,
                to=partners, text=said.utterance.strip(), ends=said.end_conversation)))
            if aside:  # the step after the last line ends it: everyone sees that
                engine.aside(not said.end_conversation and len(transcript) < max_turns)
            if not said.end_conversation or pause_after_end:
                progress.waiting = engine.timeout(seconds_per_turn)  # talking takes time
        if progress.waiting is not None:
            yield progress.waiting
            progress.waiting = None
        if transcript[-1].ends:
            reason = "ended_by_agent"
            break
    if aside:  # what others read of its speakers changes from here on
        engine.shows()
    engine.emit(ConversationEnded(t=engine.now, conversation=conversation,
                                  turns=len(transcript), reason=reason))
    return transcript
