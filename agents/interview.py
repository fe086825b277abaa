"""Interviewing an agent of a finished run (the Generative Agents paper's evaluation, section 6.1):
the agent answers a question in its own voice from its memory as of a moment of the run.

    from agents.frozen import frozen_agent
    from agents.interview import Question, answer, load_questions
    who = frozen_agent(load_run("runs/day"), "Agnes Whitfield", at=7200)
    reply = answer(who, Question(text="What are you going to do next?"), llm, run_id="day")
    reply.memories, reply.answer        # what it recalled (with times), what it said

The agent is rebuilt from the log (agents/frozen.py) with the architecture it ran, so the
question goes through its own retriever (the query: the question; `k` memories, by default as
many as its conversation module retrieves for a line, else 15); then one call
(`interview.answer`, agents/prompts/interview_answer.j2: persona, instructions, then the
moment, where it was and what it was doing, the memories with their times; the question is the
user's turn) gives a free-text answer of at most three sentences. An `Interviewer` rebuilds
the agent once, when its first question needs a retrieval (rebuilding embeds every memory:
with MiniLM, loading the model is most of an interview), and puts its memory back as rebuilt
before each question: one question's retrieval (which refreshes what it returns) never shapes
the next. The seed is fixed by the agent and the question, so with a cache the same question
asked of the same state gets the same answer. Nothing is written into the run.

A follow-up sees the conversation so far: `history`, the earlier questions and answers of its
thread, goes before the question as user and assistant turns (and into its state); questions
of one `thread` in a file, or `sandbox interview --chat`, are asked that way.

Question files (`load_questions`; the built-in one is agents/interview_questions.yaml):

    format: interview-questions
    version: 1
    questions:
      - {id: next, category: plans, text: "What are you going to do next?"}
      - {id: know-other, category: memory, text: "What do you know about {other}?"}

with the placeholders {name}, {first_name} and {other} (another agent of the run).
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sandbox.engine import Engine
from sandbox.events.agent import MemoryRetrieved
from sandbox.files import FileFormatError, load_model
from sandbox.hashing import stable_seed
from sandbox.interviews import InterviewAnswer, RecalledMemory, digest
from sandbox.llm import CallLog, LLMRequest, Message
from sandbox.prompts import render

from .frozen import FrozenAgent

TAG = "interview.answer"
BUILTIN_QUESTIONS = Path(__file__).with_name("interview_questions.yaml")
CATEGORIES = ("self-knowledge", "memory", "plans", "reactions", "reflections")
PLACEHOLDERS = ("name", "first_name", "other")
DEFAULT_K = 15
MAX_SENTENCES = 3


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="", pattern=r"^[A-Za-z0-9._-]*$")  # "": made from the text
    category: str = ""
    text: str = Field(min_length=1)
    # Questions of one thread are one conversation, in file order: each sees the earlier ones
    # and their answers. "": a question of its own.
    thread: str = Field(default="", pattern=r"^[A-Za-z0-9._-]*$")

    @field_validator("text")
    @classmethod
    def _known_placeholders(cls, text: str) -> str:
        try:
            named = [field for _, field, _, _ in string.Formatter().parse(text)
                     if field is not None]
        except ValueError as exc:  # a lone brace
            raise ValueError(f"{exc} (write {{{{ and }}}} for a brace)") from None
        unknown = [f for f in named if f not in PLACEHOLDERS]
        if unknown:
            raise ValueError(f"unknown placeholder {{{unknown[0]}}}; placeholders are "
                             + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS))
        return text

    @property
    def key(self) -> str:
        """The question's id, or one made from its text."""
        return self.id or f"q-{digest(self.text)[:10]}"

    def filled(self, who: FrozenAgent, others: list[str]) -> Question:
        """The question as asked of `who`: placeholders replaced ({other}: the first of
        `others`, the run's other agents in the order to ask about them)."""
        text = self.text.format(name=who.persona.name, first_name=who.persona.first_name,
                                other=others[0] if others else "your nearest neighbour")
        return self.model_copy(update={"text": text, "id": self.key})


class QuestionSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["interview-questions"] = "interview-questions"
    version: Literal[1] = 1
    # The categories the board groups answers by: CATEGORIES, or a file's own list. A
    # question's category must be one of them, so that a misspelt one is not a category of
    # its own on the board.
    categories: list[str] = Field(default_factory=lambda: list(CATEGORIES), min_length=1)
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="after")
    def _known_categories(self) -> QuestionSet:
        for i, question in enumerate(self.questions):
            if question.category and question.category not in self.categories:
                near = difflib.get_close_matches(question.category, self.categories, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                raise ValueError(f"questions.{i}: unknown category {question.category!r}; "
                                 f"{hint}the categories are {', '.join(self.categories)} "
                                 "(a file may list its own under `categories`)")
        return self


def load_questions(path: Path | str | None = None) -> list[Question]:
    """The questions of a file (the built-in set without one); FileFormatError naming the file
    and the field when it is not a question file, or two questions share an id."""
    path = Path(path) if path is not None else BUILTIN_QUESTIONS
    questions = load_model(path, QuestionSet).questions
    seen: dict[str, int] = {}
    for i, question in enumerate(questions):
        if question.key in seen:
            raise FileFormatError(path, f"id {question.key!r} is also question "
                                        f"{seen[question.key]}'s", f"questions.{i}.id")
        seen[question.key] = i
    return questions


def others_of(name: str, agents: list[str]) -> list[str]:
    """The run's other agents, starting with the one who joined after `name` (wrapping)."""
    if name not in agents:
        return [a for a in agents if a != name]
    i = agents.index(name)
    return agents[i + 1:] + agents[:i]


def k_for(who: FrozenAgent, k: int | None) -> int:
    """`k`, or as many memories as the agent's conversation module retrieves for a line."""
    if k is not None:
        return k
    params = who.architecture.params.get("conversation")
    return int(getattr(params, "retrieve_k", DEFAULT_K))


Turn = tuple[str, str]  # an earlier question of the thread, and its answer


def state_of(who: FrozenAgent, question: Question, model: str, k: int | None = None,
             history: Sequence[Turn] = ()) -> str:
    """A digest of everything an answer is made from (sandbox/interviews.py `state`)."""
    return digest({"persona": who.persona.model_dump(mode="json"),
                   "architecture": {s: {"module": m["module"], "params": m["params"]}
                                    for s, m in who.architecture.describe()["modules"].items()},
                   "memories": [m.model_dump(mode="json") for m in who.memories],
                   "at": who.at, "location": who.location, "doing": who.doing,
                   "question": question.text, "model": model, "k": k_for(who, k),
                   "tag": TAG, **({"history": [list(t) for t in history]} if history else {})})


class Interviewer:
    """One agent asked several questions: rebuilt once, on the first `agent()` (not before:
    an answer found saved needs no rebuilding, and so no embedder), its memory put back as
    rebuilt before each question."""

    def __init__(self, who: FrozenAgent):
        self.who = who
        self._agent = None
        self._memory: dict | None = None

    def agent(self):
        if self._agent is None:
            self._agent = self.who.rebuild()
            self._memory = self._agent.memory.get_state()
        else:  # what the last question's retrieval refreshed, undone
            self._agent.memory.set_state(self._memory)
        return self._agent


def answer(who: FrozenAgent, question: Question, llm, *, run_id: str, run: str = "",
           k: int | None = None, calls: CallLog | None = None,
           interviewer: Interviewer | None = None,
           history: Sequence[Turn] = ()) -> InterviewAnswer:
    """`who`'s answer to `question` (already filled), asked of `llm` after the earlier turns
    `history` of its thread; its call is recorded in `calls` when given. `interviewer`: the
    agent rebuilt once for several questions [default: rebuilt for this one]. Never raises on
    a bad answer: one the model never gave is saved with status "fallback" (or "unavailable":
    its call reached no model)."""
    agent = (interviewer or Interviewer(who)).agent()
    engine = Engine(llm=llm, seed=0, start_time=who.clock, calls=calls)
    rankings: list[MemoryRetrieved] = []
    engine.subscribe(lambda e: rankings.append(e) if isinstance(e, MemoryRetrieved) else None)
    count = k_for(who, k)
    box: dict = {}

    def ask():
        found = yield from agent.retriever.retrieve(agent, engine, question.text, purpose=TAG,
                                                    k=count)
        box["found"] = found
        box["completion"] = yield engine.ask(LLMRequest(
            messages=messages(who, question, [_line(who, m.created, m.description)
                                              for m in found], history),
            tag=TAG, agent=who.name, temperature=0.7, top_p=1.0, max_tokens=120,
            max_sentences=MAX_SENTENCES, seed=stable_seed(TAG, who.name, question.text)))

    engine.process(ask())
    engine.run()
    found, completion = box["found"], box["completion"]
    scores = dict(zip(rankings[-1].ids, rankings[-1].scores, strict=False)) if rankings else {}
    status = "unavailable" if "unavailable" in completion.faults else \
        "fallback" if "fallback" in completion.faults else "ok"
    return InterviewAnswer(
        run=run, run_id=run_id, agent=who.name, architecture=who.architecture_name,
        persona=who.persona.identity(), at=who.at, clock=who.clock, model=llm.model_id,
        question_id=question.key, category=question.category, question=question.text,
        answer=completion.text.strip(),
        memories=[RecalledMemory(kind=m.kind, description=m.description,
                                 importance=m.importance or 0, created=who.at + m.created,
                                 clock=who.clock + timedelta(seconds=m.created),
                                 score=scores.get(m.id)) for m in found],
        status=status, faults=list(completion.faults), cached=completion.cached,
        prompt_tokens=completion.usage.prompt_tokens,
        completion_tokens=completion.usage.completion_tokens,
        latency_s=round(completion.latency_s, 3),
        state=state_of(who, question, llm.model_id, k, history))


def _line(who: FrozenAgent, created: float, description: str) -> str:
    return f"({(who.clock + timedelta(seconds=created)):%a %H:%M}) {description}"


def messages(who: FrozenAgent, question: Question, memories: list[str],
             history: Sequence[Turn] = ()) -> list[Message]:
    """The interview as a chat: who the agent is and what it remembers, the thread's earlier
    questions and answers, then the question."""
    system = render("agents", "interview_answer.j2", persona=who.persona,
                    now=f"{who.clock:%A %B %d, %H:%M}", here=who.location,
                    doing=who.doing, memories=memories)
    earlier = [Message(role=role, content=text) for asked, said in history
               for role, text in (("user", asked), ("assistant", said or "(no answer)"))]
    return [Message(role="system", content=system), *earlier,
            Message(role="user", content=question.text)]
