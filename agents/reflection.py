"""Reflection: when enough has happened, step back and store insights as thoughts.

Triggered when the summed importance of memories scored since the last reflection reaches
`threshold` (150, as in the reference; 250 in its 25-agent town). The model is asked for
`questions` focal questions about the agent's recent memories; for each, the memories retrieved
for it are numbered and the model writes up to `insights` insights, each with the numbers of the
statements it rests on. Insights are stored as thoughts whose evidence is those memories' ids.
One call for the questions and one per question: 4 calls per reflection by default.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from sandbox.engine import Engine, Process
from sandbox.events.agent import Insight, Reflected
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

from .schema import Score, text


class ReflectionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(default=150, gt=0)
    questions: int = Field(default=3, ge=1, le=5)
    insights: int = Field(default=5, ge=1, le=8)
    recent: int = Field(default=100, ge=5)  # memories the questions are drawn from
    retrieve_k: int = Field(default=15, ge=1)  # statements per question
    temperature: float = Field(default=0.5, ge=0, le=2)


class InsightItem(BaseModel):
    insight: text(200, min_length=15)
    evidence: list[Annotated[int, Field(ge=1, le=99)]] = Field(max_length=15)
    importance: Score


def _questions_schema(n: int) -> type[BaseModel]:
    return create_model(f"Questions{n}", questions=(
        list[text(150, min_length=12)],
        Field(min_length=1, max_length=n)))


def _insights_schema(n: int) -> type[BaseModel]:
    return create_model(f"Insights{n}", insights=(
        list[InsightItem], Field(max_length=n)))


class GAReflector:
    """Module `ga`."""

    Params = ReflectionParams

    def __init__(self, params: ReflectionParams | None = None):
        self.params = params or ReflectionParams()
        self.reflections = 0
        self._questions = _questions_schema(self.params.questions)
        self._insights = _insights_schema(self.params.insights)

    def maybe_reflect(self, agent, engine: Engine) -> Process:
        memory = agent.memory
        if memory.importance_since_reflection < self.params.threshold:
            return
        trigger = memory.importance_since_reflection
        p = self.params
        recent = [m.description for m in memory.latest(n=p.recent)
                  if not m.description.endswith(" is idle")]
        prompt = render("agents", "reflect_questions.j2", persona=agent.persona,
                        memories=recent, count=p.questions)
        fallback = self._questions(questions=[f"What matters most to "
                                              f"{agent.persona.first_name} lately?"])
        completion = yield engine.ask(LLMRequest(
            messages=[Message(role="user", content=prompt)], tag="reflect.questions",
            agent=agent.name, schema=self._questions, fallback=fallback,
            temperature=p.temperature, max_tokens=60 * p.questions))
        questions = [q.strip() for q in completion.parsed.questions if q.strip()]
        insights: list[Insight] = []
        for question in questions:
            statements = yield from agent.retriever.retrieve(
                agent, engine, question, purpose="reflect.insights", k=p.retrieve_k)
            if not statements:
                continue
            prompt = render("agents", "reflect_insights.j2", persona=agent.persona,
                            question=question, memories=[m.description for m in statements],
                            count=p.insights)
            completion = yield engine.ask(LLMRequest(
                messages=[Message(role="user", content=prompt)], tag="reflect.insights",
                agent=agent.name, schema=self._insights,
                fallback=self._insights(insights=[]),
                temperature=p.temperature, max_tokens=80 * p.insights))
            for item in completion.parsed.insights:
                evidence = sorted({statements[i - 1].id for i in item.evidence
                                   if 1 <= i <= len(statements)})
                node = memory.add("thought", item.insight.strip(), engine.now,
                                  importance=item.importance, evidence=evidence,
                                  subject=agent.name)
                insights.append(Insight(memory=node.id, text=node.description,
                                        evidence=evidence))
        self.reflections += 1
        # As in the reference, the insights themselves do not count toward the next trigger.
        memory.importance_since_reflection = 0.0
        engine.emit(Reflected(t=engine.now, agent=agent.name, trigger=trigger,
                              questions=questions, insights=insights))

    def get_state(self) -> dict[str, Any]:
        return {"reflections": self.reflections}

    def set_state(self, state: dict[str, Any]) -> None:
        self.reflections = int(state["reflections"])


class NoReflectionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoReflection:
    """Module `none`: never reflects (an ablation)."""

    Params = NoReflectionParams

    def __init__(self, params: NoReflectionParams | None = None):
        self.params = params or NoReflectionParams()

    def maybe_reflect(self, agent, engine: Engine) -> Process:
        return
        yield

    def get_state(self) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass
