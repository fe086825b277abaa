"""TDP text reaches the performer's planning and conversation prompts, and nobody else's."""

from __future__ import annotations

from sandbox.events.agent import TaskPlanned
from tests.agents.ga_helpers import ISABELLA, KLAUS, MARIA, town_day

CHECKLIST = "Ask them to bring friends"  # from the scripted conversation reminder


def test_tdp_output_reaches_only_the_performers_prompts(recorder):
    engine, society = town_day(recorder, until_hour=16.5)
    planned = [e for e in engine.events if isinstance(e, TaskPlanned)]
    assert planned and all(e.agent == ISABELLA.name for e in planned)
    reminder = next(e.plan_reminder for e in planned if e.plan_reminder)
    general = next(e.general_plan for e in planned if e.general_plan)

    for tag in ("plan.daily", "plan.hourly"):
        assert all(reminder in p for p in recorder.prompts(ISABELLA.name, tag))
    turns = recorder.prompts(ISABELLA.name, "converse.turn")
    assert turns and all(CHECKLIST in p and general[0] in p for p in turns)

    for other in (KLAUS.name, MARIA.name):
        prompts = recorder.prompts(other)
        assert prompts and recorder.prompts(other, "converse.turn")
        assert not any(reminder in p or CHECKLIST in p or general[0] in p for p in prompts)
        assert not [r for r in recorder.requests if r.agent == other
                    and r.tag.startswith("tdp.")]


def test_without_tdp_the_task_reaches_the_performer_only_through_currently(recorder):
    engine, society = town_day(recorder, performer_arch="ga", until_hour=9)
    assert not [r for r in recorder.requests if r.tag.startswith("tdp.")]
    isabella = recorder.prompts(ISABELLA.name, "plan.daily")
    assert isabella and all("Currently: Isabella wants to hold a party" in p for p in isabella)
    assert not any("party" in p for p in recorder.prompts(KLAUS.name))
