"""Planning: wake-up time and a broad plan for the day, an hourly schedule, and steps of 5-15
minutes for the activity at hand, each with a place the agent knows.

Calls per day: `plan.daily` (wake-up hour and broad plan), `plan.hourly` (the whole schedule in
one answer, where the reference asks hour by hour), then one `plan.steps` per waking hour at most
(the current activity is decomposed for the next `window_minutes` only when the agent gets there;
sleep is never decomposed). The answer to `plan.steps` names each step's place from an enum built
at run time from the agent's known places, so even the embedded model can only name real places,
and rates each step's importance, so the agent's own actions never need a separate importance
call. `plan.revise` rewrites the rest of the day after a conversation that changed it; when the
activity at hand stays as it was, its steps go on (`keep_steps`) instead of being asked again.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from sandbox.engine import Engine, Process
from sandbox.events.agent import PlanMade

from .schema import Hour, Minutes, Score, WakeHour, ask, text

SLEEP_WORDS = ("sleep", "go to bed", "going to bed", "bedtime")


@dataclass
class Block:
    """An activity of the schedule, in sim seconds."""

    start: float
    end: float
    activity: str
    sleeping: bool = False


@dataclass
class Action:
    """One step the agent carries out: what, where, from when until when (sim seconds)."""

    description: str
    address: str
    start: float
    end: float
    activity: str = ""
    importance: int = 2
    sleeping: bool = False


class DailyPlan(BaseModel):
    wake_up_hour: WakeHour
    plan: list[text(80)] = Field(min_length=3, max_length=8)


class ScheduleItem(BaseModel):
    hour: Hour
    activity: text(80)


class Schedule(BaseModel):
    blocks: list[ScheduleItem] = Field(min_length=1, max_length=20)


class PlannerParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    window_minutes: int = Field(default=60, ge=15, le=240)  # how far ahead steps are made
    max_steps: int = Field(default=8, ge=1, le=15)
    temperature: float = Field(default=0.7, ge=0, le=2)
    plan_memories: int = Field(default=10, ge=0)  # retrieved for the day's plan
    max_places: int = Field(default=15, ge=2)  # places offered per decomposition
    # After a revision that leaves the activity at hand as it was, carry on with its steps
    # instead of asking for them again (bench/agents.py: 185 of 406 decompositions followed
    # a revision).
    keep_steps: bool = True


_STEP_MODELS: dict[tuple[str, ...], type[BaseModel]] = {}


def steps_schema(places: tuple[str, ...], max_steps: int) -> type[BaseModel]:
    """The decomposition answer, its `place` bound to the given addresses (cached)."""
    key = (*places, f"#{max_steps}")
    if key not in _STEP_MODELS:
        step = create_model(
            "Step", __config__=ConfigDict(extra="forbid"),
            description=(text(80), ...),
            minutes=(Minutes, ...),
            place=(Literal[places], ...),
            importance=(Score, ...))
        _STEP_MODELS[key] = create_model(
            "Steps", steps=(list[step], Field(min_length=1, max_length=max_steps)))
    return _STEP_MODELS[key]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def shortlist(places: list[str], activity: str, first: list[str], limit: int) -> tuple[str, ...]:
    """The places offered for one activity: where the agent is, home and work, then the known
    places whose names share words with the activity, then the rest in map order -- at most
    `limit`, so a prompt (and the enum) stays short in a town of sixty arenas."""
    words = _words(activity)
    by_match = sorted(places, key=lambda p: -len(words & _words(p.split(":", 1)[-1])))
    chosen = [p for p in first if p] + by_match
    return tuple(dict.fromkeys(chosen))[:limit]


def is_sleep(activity: str) -> bool:
    text = activity.lower()
    return any(word in text for word in SLEEP_WORDS)


def clock(engine: Engine, t: float) -> str:
    return engine.clock.at(t).strftime("%H:%M")


class GAPlanner:
    """Module `ga` of the `planner` slot."""

    Params = PlannerParams

    def __init__(self, params: PlannerParams | None = None):
        self.params = params or PlannerParams()
        self.date = ""  # the day the schedule is for, ISO
        self.wake_up = 0.0
        self.daily_plan: list[str] = []
        self.blocks: list[Block] = []
        self.steps: list[Action] = []

    # -- helpers --------------------------------------------------------------------------------
    def _ask(self, agent, engine: Engine, template: str, tag: str, schema, fallback,
             max_tokens: int, about: dict[str, str] | None = None, **variables) -> Process:
        return ask(agent, engine, template, tag=tag, schema=schema, fallback=fallback,
                   temperature=self.params.temperature, max_tokens=max_tokens, about=about,
                   **variables)

    def schedule_lines(self, engine: Engine, since: float | None = None) -> list[str]:
        return [f"{clock(engine, b.start)}-{clock(engine, b.end)} {b.activity}"
                for b in self.blocks if since is None or b.end > since]

    def _midnight(self, engine: Engine) -> tuple[datetime, float]:
        day = engine.now_datetime.replace(hour=0, minute=0, second=0, microsecond=0)
        return day, engine.clock.seconds(day)

    def _blocks_from(self, items: list[ScheduleItem], start: float, day0: float,
                     bedtime_hour: int) -> list[Block]:
        """Schedule items -> blocks from `start` to midnight; sleep after the last activity."""
        by_hour: dict[int, str] = {}
        for item in sorted(items, key=lambda i: i.hour):
            by_hour.setdefault(item.hour, item.activity.strip())
        end_of_day = day0 + 24 * 3600
        blocks: list[Block] = []
        for hour, activity in by_hour.items():
            t = start if not blocks else max(day0 + hour * 3600, start)
            if blocks and t <= blocks[-1].start:  # hours already past collapse onto `start`
                blocks[-1] = Block(blocks[-1].start, end_of_day, activity, is_sleep(activity))
                continue
            if blocks:
                blocks[-1].end = t
            blocks.append(Block(t, end_of_day, activity, is_sleep(activity)))
        if not blocks:
            return [Block(start, end_of_day, "sleeping", True)]
        if not blocks[-1].sleeping:  # nobody plans to stay up all night
            bed = max(day0 + bedtime_hour * 3600, blocks[-1].start + 3600)
            if bed < end_of_day:
                blocks[-1].end = bed
                blocks.append(Block(bed, end_of_day, "sleeping", True))
        return blocks

    # -- the day --------------------------------------------------------------------------------
    def plan_day(self, agent, engine: Engine) -> Process:
        persona = agent.persona
        day, day0 = self._midnight(engine)
        date = day.strftime("%A %B %d, %Y")
        reminder = yield from agent.task_planner.plan_context(agent, engine)
        memories = []
        if self.params.plan_memories and len(agent.memory):
            found = yield from agent.retriever.retrieve(
                agent, engine, f"{persona.name}'s plans and commitments for {date}",
                purpose="plan.daily", k=self.params.plan_memories)
            memories = [m.description for m in found]
        wake_default = min(11, max(4, int(persona.wakes_at[:2])))
        fallback = DailyPlan(wake_up_hour=wake_default, plan=[
            "get up and get ready", f"work as {persona.occupation}"[:80] if persona.occupation
            else "go about the usual day", "have dinner", "go to bed"])
        now = {"date": date, "now": clock(engine, engine.now)}  # a person's form says when
        daily = yield from self._ask(agent, engine, "plan_daily.j2", "plan.daily", DailyPlan,
                                     fallback, 200, about=now, date=date, reminder=reminder,
                                     memories=memories, yesterday=" ".join(self.daily_plan))
        self.date = day.date().isoformat()
        self.wake_up = day0 + daily.wake_up_hour * 3600
        self.daily_plan = [s.strip() for s in daily.plan if s.strip()]
        wake_clock = f"{daily.wake_up_hour:02d}:00"
        engine.emit(PlanMade(t=engine.now, agent=agent.name, level="daily",
                             items=self.daily_plan, wake_up=wake_clock))
        bedtime = int(persona.sleeps_at[:2]) or 24
        # The default (a person's Enter, a model's fallback) is a day that can still happen:
        # its things an hour apart from the wake-up hour or the present one, whichever is
        # later, and bed at the resident's bedtime. Before, bed came three hours after waking:
        # a day begun at 15:00 had the resident in bed all afternoon, its task lost.
        first = max(daily.wake_up_hour, engine.now_datetime.hour)
        hours = [min(23, first + i) for i in range(len(self.daily_plan))]
        if len(hours) > 1 and is_sleep(self.daily_plan[-1]):
            hours[-1] = min(23, max(hours[-1], bedtime if bedtime > first else 23))
        fallback = Schedule(blocks=[ScheduleItem(hour=hour, activity=item)
                                    for hour, item in zip(hours, self.daily_plan, strict=True)])
        schedule = yield from self._ask(agent, engine, "plan_hourly.j2", "plan.hourly",
                                        Schedule, fallback, 400, about=now,
                                        date=date, wake_up=wake_clock,
                                        plan=self.daily_plan, reminder=reminder)
        items = [i for i in schedule.blocks if i.hour >= daily.wake_up_hour] or fallback.blocks
        self.blocks = [Block(day0, self.wake_up, "sleeping", True)] + self._blocks_from(
            items, self.wake_up, day0, bedtime)
        self.steps = []
        engine.emit(PlanMade(t=engine.now, agent=agent.name, level="hourly",
                             items=self.schedule_lines(engine)))
        agent.memory.add("thought", f"{persona.name}'s plan for {date}: "
                         + "; ".join(self.daily_plan), engine.now, importance=5,
                         subject=persona.name)

    def needs_plan(self, engine: Engine) -> bool:
        return self.date != engine.now_datetime.date().isoformat()

    def next_action(self, agent, engine: Engine) -> Process:
        if self.needs_plan(engine):
            yield from self.plan_day(agent, engine)
        now = engine.now
        for step in self.steps:
            if step.start <= now < step.end:
                return Action(**{**asdict(step), "start": now})
        block = next((b for b in self.blocks if b.start <= now < b.end), None)
        if block is None:  # past the last block: the day is over
            _, day0 = self._midnight(engine)
            return Action("sleeping", agent.persona.living_area, now, day0 + 24 * 3600,
                          "sleeping", 1, True)
        if block.sleeping:
            return Action("sleeping", agent.persona.living_area, now, block.end,
                          block.activity, 1, True)
        end = min(block.end, now + self.params.window_minutes * 60)
        self.steps = yield from self.decompose(agent, engine, block, now, end)
        return self.steps[0]

    def decompose(self, agent, engine: Engine, block: Block, start: float,
                  end: float) -> Process:
        """Steps filling [start, end) of `block`, each at a known place."""
        here = agent.location if agent.location in agent.places else agent.persona.living_area
        places = shortlist(agent.places, block.activity, [
            here, agent.persona.living_area, agent.persona.workplace or ""],
            self.params.max_places)
        schema = steps_schema(places, self.params.max_steps)
        fallback = schema.model_validate({"steps": [{"description": block.activity[:80],
                                                     "minutes": 60, "place": here,
                                                     "importance": 3}]})
        answer = yield from self._ask(
            agent, engine, "plan_steps.j2", "plan.steps", schema, fallback, 80 * 8,
            about={"activity": block.activity, "start": clock(engine, start),
                   "end": clock(engine, end)},
            date=engine.now_datetime.strftime("%A %B %d, %Y"),
            schedule=self.schedule_lines(engine, since=start), activity=block.activity,
            start=clock(engine, start), end=clock(engine, end), here=here, places=places)
        total = sum(s.minutes for s in answer.steps)
        scale = (end - start) / (total * 60)  # stretch or squeeze to fill the window exactly
        steps, t = [], start
        for i, s in enumerate(answer.steps):
            stop = end if i == len(answer.steps) - 1 else t + s.minutes * 60 * scale
            steps.append(Action(s.description.strip(), s.place, t, stop, block.activity,
                                s.importance))
            t = stop
        engine.emit(PlanMade(t=engine.now, agent=agent.name, level="steps", items=[
            f"{clock(engine, s.start)}-{clock(engine, s.end)} {s.description} @ {s.address}"
            for s in steps]))
        return steps

    def revise(self, agent, engine: Engine, reason: str) -> Process:
        if self.needs_plan(engine):
            return  # the next plan of the day will see the new memory anyway
        now = engine.now
        hour = engine.now_datetime.hour
        reminder = yield from agent.task_planner.plan_context(agent, engine)
        ahead = [b for b in self.blocks if b.end > now]
        fallback = Schedule(blocks=[ScheduleItem(hour=max(hour, engine.clock.at(b.start).hour),
                                                 activity=b.activity[:80]) for b in ahead][:20]
                            or [ScheduleItem(hour=hour, activity="sleeping")])
        answer = yield from self._ask(
            agent, engine, "plan_revise.j2", "plan.revise", Schedule, fallback, 400,
            about={"now": clock(engine, now), "reason": reason},
            date=engine.now_datetime.strftime("%A %B %d, %Y"), now=clock(engine, now),
            hour=hour, schedule=self.schedule_lines(engine, since=now), reason=reason,
            reminder=reminder)
        _, day0 = self._midnight(engine)
        items = [i for i in answer.blocks if i.hour >= hour] or fallback.blocks
        kept = [b for b in self.blocks if b.start < now]
        if kept:
            kept[-1].end = now
        self.blocks = kept + self._blocks_from(items, now, day0,
                                               int(agent.persona.sleeps_at[:2]) or 24)
        self.steps = self._steps_still_valid(now) if self.params.keep_steps else []
        engine.emit(PlanMade(t=now, agent=agent.name, level="revised", reason=reason,
                             items=self.schedule_lines(engine, since=now)))

    def _steps_still_valid(self, now: float) -> list[Action]:
        """The steps from `now` on that still belong to the (revised) activity at hand, cut at
        its end; none when the revision changed what the agent is doing now."""
        block = next((b for b in self.blocks if b.start <= now < b.end), None)
        if block is None or block.sleeping:
            return []
        kept = [s for s in self.steps if s.activity == block.activity and s.end > now
                and s.start < block.end]
        if not kept or not kept[0].start <= now:
            return []
        kept[-1] = Action(**{**asdict(kept[-1]), "end": min(kept[-1].end, block.end)})
        return kept

    # -- checkpoint -----------------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        return {"date": self.date, "wake_up": self.wake_up, "daily_plan": self.daily_plan,
                "blocks": [asdict(b) for b in self.blocks],
                "steps": [asdict(s) for s in self.steps]}

    def set_state(self, state: dict[str, Any]) -> None:
        self.date, self.wake_up = state["date"], float(state["wake_up"])
        self.daily_plan = list(state["daily_plan"])
        self.blocks = [Block(**b) for b in state["blocks"]]
        self.steps = [Action(**s) for s in state["steps"]]
