"""Target-Driven Planning (STSS, section 4 and appendix B): the `task_planner` slot.

Given the performer's social task, the model first writes a general plan (3-5 sub-goals), then a
conversation reminder (a checklist of at most 5 items), and, each day the performer plans, a plan
reminder for that day (1-2 sentences). The plan reminder goes into the day's planning prompts;
the task, the general plan and the checklist go into every conversation prompt of the performer.
All three are asked at temperature 0, as in the paper. Only the performer has this module
(`ga_tdp.yaml`); everyone else has `none`, whose context is empty.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sandbox.engine import Engine, Process
from sandbox.events.agent import TaskPlanned

from .schema import ask, text


class GeneralPlan(BaseModel):
    items: list[text(150)] = Field(min_length=3, max_length=5)


class PlanReminder(BaseModel):
    reminder: text(250)


class ConversationReminder(BaseModel):
    checklist: list[text(120)] = Field(min_length=1, max_length=5)


def clip(text: str, limit: int) -> str:
    """`text` cut at a word boundary to fit a schema string of `limit` characters."""
    if len(text) <= limit:
        return text
    return text[: limit - 3].rsplit(" ", 1)[0].rstrip(" ,.;:") + "..."


def fallback_plan(task: str) -> GeneralPlan:
    """The general plan when the model gave none: the three steps every social task shares
    (prepare, tell the people it needs, be there), so the performer's conversation prompts
    still get distinct sub-goals instead of the task repeated."""
    return GeneralPlan(items=[f"Work out what is needed: {clip(task, 120)}",
                              "Tell the people it concerns what, when and where",
                              "Be at the right place on time and see it through"])


class TDPParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=200, ge=32)


class TargetDrivenPlanner:
    """Module `tdp`."""

    Params = TDPParams

    def __init__(self, params: TDPParams | None = None):
        self.params = params or TDPParams()
        self.task = ""
        self.general_plan: list[str] = []
        self.checklist: list[str] = []
        self.reminders: dict[str, str] = {}  # date -> plan reminder

    def _ask(self, agent, engine: Engine, template: str, tag: str, schema, fallback,
             **extra) -> Process:
        return ask(agent, engine, template, tag=tag, schema=schema, fallback=fallback,
                   temperature=self.params.temperature, max_tokens=self.params.max_tokens,
                   task=self.task, general_plan=self.general_plan, **extra)

    def assign(self, agent, engine: Engine, task: str) -> Process:
        self.task, self.general_plan, self.checklist, self.reminders = task, [], [], {}
        plan = yield from self._ask(agent, engine, "tdp_general_plan.j2", "tdp.general_plan",
                                    GeneralPlan, fallback_plan(task))
        self.general_plan = [s.strip() for s in plan.items if s.strip()] or [task]
        checklist = yield from self._ask(
            agent, engine, "tdp_conversation_reminder.j2", "tdp.conversation_reminder",
            ConversationReminder, ConversationReminder(checklist=[clip(task, 120)]))
        self.checklist = [s.strip() for s in checklist.checklist if s.strip()]
        engine.emit(TaskPlanned(t=engine.now, agent=agent.name, task=task,
                                general_plan=self.general_plan,
                                conversation_reminder=self.checklist))

    def plan_context(self, agent, engine: Engine) -> Process:
        if not self.task:
            return ""
        date = engine.now_datetime.date().isoformat()
        if date not in self.reminders:  # once per day, not once per prompt
            answer = yield from self._ask(agent, engine, "tdp_plan_reminder.j2",
                                          "tdp.plan_reminder", PlanReminder,
                                          PlanReminder(reminder=clip(self.task, 250)), date=date)
            self.reminders[date] = answer.reminder.strip()
            engine.emit(TaskPlanned(t=engine.now, agent=agent.name, task=self.task,
                                    plan_reminder=self.reminders[date], day=date))
        return self.reminders[date]

    def conversation_context(self, agent) -> str:
        if not self.task:
            return ""
        lines = [f"{agent.persona.first_name}'s goal: {self.task}"]
        if self.general_plan:
            lines.append("Plan: " + " ".join(f"({i}) {s}" for i, s in
                                             enumerate(self.general_plan, 1)))
        if self.checklist:
            lines.append("In this conversation, remember to:")
            lines += [f"- {item}" for item in self.checklist]
        return "\n".join(lines)

    def get_state(self) -> dict[str, Any]:
        return {"task": self.task, "general_plan": self.general_plan,
                "checklist": self.checklist, "reminders": dict(self.reminders)}

    def set_state(self, state: dict[str, Any]) -> None:
        self.task = state["task"]
        self.general_plan = list(state["general_plan"])
        self.checklist = list(state["checklist"])
        self.reminders = dict(state["reminders"])


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoTaskPlanner:
    """Module `none`: plain GA. A task reaches the agent only through its persona's
    `currently`, as in the STSS baseline."""

    Params = NoParams

    def __init__(self, params: NoParams | None = None):
        self.params = params or NoParams()

    def assign(self, agent, engine: Engine, task: str) -> Process:
        return
        yield

    def plan_context(self, agent, engine: Engine) -> Process:
        return ""
        yield

    def conversation_context(self, agent) -> str:
        return ""

    def get_state(self) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass
