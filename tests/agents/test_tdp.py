"""TDP text reaches the performer's planning and conversation prompts, and nobody else's."""

from __future__ import annotations

import json

import pytest

from sandbox.events.agent import TaskPlanned
from sandbox.llm import LLMSettings, make_llm
from sandbox.log import load_run
from tasks.stss import TEMPLATES_DIR, EpisodeWindow
from tasks.stss.plugin.suite import run_task
from tests.agents.ga_helpers import ISABELLA, KLAUS, MARIA, PARTY, Recorder, town_day
from worlds import load_world

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


def reminders(engine) -> list[str]:
    return [e.plan_reminder for e in engine.events
            if isinstance(e, TaskPlanned) and e.plan_reminder]


def test_the_plan_reminder_reaches_the_performers_revisions(recorder):
    # Revisions after the lunch conversations: the reminder must shape them as it shapes the
    # day's first plan, or an agreed change can push the task out of the afternoon.
    engine, _ = town_day(recorder, until_hour=16.5)
    reminder = reminders(engine)[0]
    revisions = recorder.prompts(ISABELLA.name, "plan.revise")
    assert revisions and all(reminder in p for p in revisions)
    assert not any(reminder in p for p in recorder.prompts(KLAUS.name, "plan.revise"))


def test_a_task_given_during_the_day_revises_the_plan_with_the_reminder(recorder):
    engine, society = town_day(recorder, task=None, until_hour=9)
    society.agent(ISABELLA.name).give_task(PARTY)
    engine.run(until=(10 - 6) * 3600)
    reminder = reminders(engine)[0]
    new_goal = [p for p in recorder.prompts(ISABELLA.name, "plan.revise") if "new goal:" in p]
    assert new_goal and all(reminder in p for p in new_goal)


@pytest.mark.parametrize("template", ["public_spring_tasting", "help_posters"])
def test_a_scripted_stss_episode_with_tdp_has_no_fallback(tmp_path, template):
    """STSS tasks run to 300+ characters: the scripted answers must still fit the TDP schemas
    (a fallback here would make every scripted ga_tdp episode test the fallback plan)."""
    result, _ = run_task(TEMPLATES_DIR / f"{template}.yaml", load_world("town"),
                         lambda _run_dir, _performer: make_llm(LLMSettings(model="scripted/town",
                                                        cache_mode="off")),
                         architecture="ga_tdp", seed=1, out=tmp_path / "run", background=2,
                         embedder="hashing", window=EpisodeWindow(same_day=True, start="15:00"))
    assert result.status == "completed"
    run = load_run(tmp_path / "run")
    assert len(run.header.config["stss_task"]["goal"]) > 150
    tdp = [c for c in run.calls if c.tag.startswith("tdp.")]
    assert {c.tag for c in tdp} == {"tdp.general_plan", "tdp.conversation_reminder",
                                    "tdp.plan_reminder"}
    assert not [(c.tag, c.faults) for c in run.calls if c.faults]


def test_without_an_answer_the_general_plan_is_distinct_sub_goals():
    long_task = PARTY[:-1] + (", with a tasting of the new spring menu, music by the window and "
                              "a table of cakes; she wants as many neighbours as she can to come "
                              "and to bring their friends along.")
    assert len(long_task) > 150
    recorder = Recorder()
    recorder.responders["tdp.general_plan"] = lambda request: json.dumps({"items": ["x" * 400]})
    engine, _ = town_day(recorder, task=long_task, until_hour=6.1)
    plan = next(e.general_plan for e in engine.events
                if isinstance(e, TaskPlanned) and e.general_plan)
    assert len(plan) == 3 and len(set(plan)) == 3
    assert all(len(item) <= 150 for item in plan)
    assert plan[0].startswith("Work out what is needed: Isabella wants to hold a party")
    assert plan[0].endswith("...")  # cut at a word, not in one
