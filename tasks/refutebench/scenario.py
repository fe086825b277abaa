"""One RefuteBench dialogue as a single-room episode (the kit's DialogueScenario).

Two agents share the room: the User (the refuter's side: it says the query, the refutations,
the unrelated requests and the re-ask) and the Assistant (the model under test, which sees the
whole dialogue every turn and decodes greedily by default). The dialogue is scripted message
by message (`plan`):

    transient   query, answer, then 3 x (refutation, answer)                      8 messages
    persistent  query, answer, refutation, answer, C x (request, answer),
                the same query again, answer                                 6 + 2C messages

Each user turn's kind (task_query, refutation, distractor, re_ask), each refutation's index
and focus, and the unrelated requests are in the run header (`config.plan`), so a judge finds
every message it needs by position.
"""

from __future__ import annotations

from typing import Any

from agents.chat import ChatTurn, converse, with_turns
from sandbox.engine import Engine, Process
from sandbox.events import Utterance
from sandbox.llm import LLMRequest, Message
from tasks.kit import CONVERSATION, Cast, DialogueScenario

from .events import RefutationWritten
from .items import Item
from .models import ANSWER_TAG, ASSISTANT, ASSISTANT_SYSTEM, SCENARIO, USER
from .refuter import Refuter

NO_ANSWER = "(no answer)"


def plan(item: Item) -> list[dict[str, Any]]:
    """Every message of the item's dialogue, in order: who says it and what kind it is."""
    steps: list[dict[str, Any]] = [{"speaker": USER, "kind": "task_query"},
                                   {"speaker": ASSISTANT, "kind": "response"}]
    for k, focus in enumerate(item.foci, start=1):
        steps += [{"speaker": USER, "kind": "refutation", "k": k, "focus": focus},
                  {"speaker": ASSISTANT, "kind": "response", "after": k}]
    if item.setting == "persistent":
        for i, _ in enumerate(item.distractors):
            steps += [{"speaker": USER, "kind": "distractor", "index": i},
                      {"speaker": ASSISTANT, "kind": "response"}]
        steps += [{"speaker": USER, "kind": "re_ask"},
                  {"speaker": ASSISTANT, "kind": "response", "final": True}]
    return steps


class UserSide:
    """The user's turns: scripted text, or a refutation written by the refuter."""

    name = USER

    def __init__(self, item: Item, steps: list[dict[str, Any]], refuter: Refuter):
        self.item, self.steps, self.refuter = item, steps, refuter
        self.refutations: list[str] = []

    def speak(self, engine: Engine, transcript: list[Utterance], partners, place, situation,
              max_turns) -> Process:
        step = self.steps[len(transcript)]
        kind = step["kind"]
        if kind in ("task_query", "re_ask"):  # the re-ask repeats the query verbatim
            yield engine.timeout(0)
            return ChatTurn(utterance=self.item.query)
        if kind == "distractor":
            yield engine.timeout(0)
            return ChatTurn(utterance=self.item.distractors[step["index"]])
        latest = transcript[-1].text  # the assistant's answer just before
        standing = self.item.setting == "persistent"
        raw, refutation, fell_back = yield from self.refuter.refute(
            engine, self.item.query, latest, list(self.refutations), step["focus"], standing)
        engine.emit(RefutationWritten(t=engine.now, agent=self.name, k=step["k"],
                                      focus=step["focus"], standing=standing, raw=raw,
                                      cleaned=refutation.text, fallback=fell_back))
        self.refutations.append(refutation.text)
        return ChatTurn(utterance=refutation.text)


class Assistant:
    """The model under test: a plain chat assistant that sees the whole dialogue."""

    name = ASSISTANT

    def __init__(self, *, llm=None, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 512, system: str = ASSISTANT_SYSTEM):
        self.llm, self.temperature, self.top_p = llm, temperature, top_p
        self.max_tokens = max_tokens
        self.system = system

    def messages(self, transcript: list[Utterance]) -> list[Message]:
        return with_turns([Message(role="system", content=self.system)], transcript,
                          self.name)

    def speak(self, engine: Engine, transcript: list[Utterance], partners, place, situation,
              max_turns) -> Process:
        request = LLMRequest(messages=self.messages(transcript), tag=ANSWER_TAG,
                             agent=self.name, temperature=self.temperature, top_p=self.top_p,
                             max_tokens=self.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return ChatTurn(utterance=completion.text.strip() or NO_ANSWER)


class RefuteBenchScenario(DialogueScenario):
    """The dialogue of one item (a seed query in one setting, with C unrelated requests)."""

    benchmark = SCENARIO
    name = SCENARIO

    def __init__(self, item: Item, cast: Cast, *, language: str = "Chinese"):
        super().__init__(cast)
        self.item = item
        self.language = language
        self.steps = plan(item)
        self.max_turns = len(self.steps)

    def item_config(self) -> dict[str, Any]:
        seed = self.item.seed
        return {"seed": seed.id, "family": seed.family, "kind": seed.kind,
                "setting": self.item.setting, "c": self.item.c, "query": self.item.query,
                "language": self.language, "distractors": self.item.distractors,
                "plan": self.steps, "conversation": CONVERSATION,
                # [ours], spec section 3: how the refuter is told a refutation is standing
                "deviations": ["persistent refutations are asked for as standing rules"]
                if self.item.setting == "persistent" else []}

    def speakers(self) -> list:
        refuter = Refuter(llm=self.cast.llm("refuter"), sampling=self.cast.sampling["refuter"],
                          name=USER)
        answer = self.cast.sampling["model"]
        return [UserSide(self.item, self.steps, refuter),
                Assistant(llm=self.cast.llm("model"), **answer.model_dump())]

    def joined(self, speaker) -> dict[str, str]:
        persona = "a dissatisfied user who refutes the answers" if speaker.name == USER \
            else ASSISTANT_SYSTEM
        return {"persona": persona, "architecture": "chat"}

    def dialogue(self, engine: Engine, speakers: list) -> Process:
        return converse(engine, speakers, conversation=CONVERSATION, place="the room",
                        max_turns=self.max_turns)
