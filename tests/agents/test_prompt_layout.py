"""Every prompt of a town agent puts what stays the same from call to call first (the persona, the
task, the instructions and the answer format) and what changes last (time, observations, retrieved
memories, the conversation): calls of one agent then share a long prefix, which the embedded
model restores instead of evaluating again (sandbox/llm/local.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.persona import Persona
from sandbox.prompts import render

PROMPTS = Path(__file__).resolve().parents[2] / "agents" / "prompts"
ADA = Persona(name="Ada Lovelace", age=36, occupation="mathematician", innate="curious",
              currently="Ada wants to hold a tea party at Hobbs Cafe at 17:00 today.",
              living_area="mini:Rose Cottage:bedroom", daily_requirements=["write letters"])
TASK = ("Ada's goal: a tea party.\nPlan: (1) invite people\n"
        "In this conversation, remember to:\n- say when")
ANSWER = "Answer as JSON:"

# template -> (variables that stay the same for an agent, two sets of variables that change from
# call to call, the text that ends the stable part)
CASES = {
    "memory_importance.j2": ({}, {"memories": ["Bob is reading"]},
                             {"memories": ["Cleo is painting", "Dan is cooking"]}, ANSWER),
    "plan_daily.j2": ({}, {"date": "Tuesday", "yesterday": "", "reminder": "", "memories": []},
                      {"date": "Wednesday", "yesterday": "worked", "reminder": "the party",
                       "memories": ["Bob invited Ada"]}, ANSWER),
    "plan_hourly.j2": ({}, {"date": "Tuesday", "wake_up": "07:00", "plan": ["work"],
                            "reminder": ""},
                       {"date": "Wednesday", "wake_up": "08:00", "plan": ["read"],
                        "reminder": "the party"}, ANSWER),
    "plan_revise.j2": ({}, {"date": "Tuesday", "now": "10:00", "hour": 10,
                            "schedule": ["10:00-12:00 work"], "reason": "a talk", "reminder": ""},
                       {"date": "Wednesday", "now": "15:10", "hour": 15,
                        "schedule": ["15:00-18:00 read"], "reason": "an invitation",
                        "reminder": "the party"}, ANSWER),
    "plan_steps.j2": ({}, {"date": "Tuesday", "schedule": ["08:00-12:00 work"],
                           "activity": "work", "start": "08:00", "end": "09:00",
                           "here": "mini:Rose Cottage:bedroom", "places": ["mini:A:b"]},
                      {"date": "Wednesday", "schedule": ["13:00-14:00 lunch"],
                       "activity": "lunch", "start": "13:00", "end": "14:00",
                       "here": "mini:Hobbs Cafe:cafe", "places": ["mini:C:d", "mini:E:f"]},
                      ANSWER),
    "react_talk.j2": ({"task": TASK},
                      {"now": "10:00", "doing": "reading", "here": "mini:A:b", "other": "Bob",
                       "other_doing": "writing", "last_chat": None, "memories": []},
                      {"now": "15:00", "doing": "cooking", "here": "mini:C:d", "other": "Cleo",
                       "other_doing": "eating", "last_chat": "at 09:00",
                       "memories": ["Cleo is kind"]}, ANSWER),
    "converse_turn.j2": ({"task": TASK, "end_mark": "[END]"},
                         {"now": "10:00", "here": "mini:A:b", "partner": "Bob", "memories": []},
                         {"now": "15:00", "here": "mini:C:d", "partner": "Cleo",
                          "memories": ["Cleo is kind"]}, "write [END] after it."),
    "converse_summary.j2": ({}, {"partner": "Bob", "here": "mini:A:b", "now": "10:00",
                                 "transcript": ["Bob: hi"]},
                            {"partner": "Cleo", "here": "mini:C:d", "now": "15:00",
                             "transcript": ["Ada: hello", "Cleo: bye"]}, ANSWER),
    "reflect_questions.j2": ({"count": 3}, {"memories": ["Bob is reading"]},
                             {"memories": ["Cleo is painting"]}, ANSWER),
    "reflect_insights.j2": ({"count": 5}, {"question": "What does Ada like?",
                                           "memories": ["Ada reads"]},
                            {"question": "Who are Ada's friends?", "memories": ["Bob"]}, ANSWER),
    "tdp_plan_reminder.j2": ({"task": "a tea party", "general_plan": ["invite people"]},
                             {"date": "2024-02-13"}, {"date": "2024-02-14"}, ANSWER),
    "interview_answer.j2": ({}, {"now": "Tuesday 10:00", "here": "mini:A:b", "doing": "reading",
                                 "memories": []},
                            {"now": "Tuesday 15:00", "here": "mini:C:d", "doing": "",
                             "memories": ["(Tue 09:00) Cleo is kind"]}, "something up."),
}
# Whole prompts that do not change within a call sequence (asked once per task) or are not a
# town agent's: single-room chat (its system message is fixed for the dialogue, the turns are
# the chat) and PingPong's role-play (kept byte-identical for its golden test).
NOT_LAID_OUT = {"_task.j2", "tdp_general_plan.j2", "tdp_conversation_reminder.j2",
                "chat_system.j2", "chat_turn.j2", "converse_cue.j2", "roleplay_player.j2",
                "roleplay_interrogator_system.j2", "roleplay_interrogator_open.j2"}


def test_every_template_is_checked_or_named_as_not_laid_out():
    assert {p.name for p in PROMPTS.glob("*.j2")} == set(CASES) | NOT_LAID_OUT


@pytest.mark.parametrize("template", sorted(CASES))
def test_the_stable_part_comes_before_the_changing_part(template):
    stable, first, second, ends_stable = CASES[template]
    a = render("agents", template, persona=ADA, **stable, **first)
    b = render("agents", template, persona=ADA, **stable, **second)
    shared = len(os.path.commonprefix([a, b]))
    assert a.index(ends_stable) + len(ends_stable) <= shared, (
        f"{template}: the changing part starts before the stable part ends:\n"
        f"{a[:shared]}<<< HERE")
    # The agent's own description leads (and the task, where the prompt has one).
    assert ADA.identity() in a[:shared]
    if "task" in stable and template != "tdp_plan_reminder.j2":
        assert stable["task"] in a[:shared]


def test_two_windows_of_one_activity_share_the_places_and_the_schedule():
    """Of a decomposition's changing part, the window and where the agent stands change from
    call to call; the places offered and the day's schedule seldom do: they come first."""
    day = {"date": "Wednesday", "schedule": ["08:00-12:00 work", "12:00-13:00 lunch"],
           "activity": "work", "places": ["mini:A:b", "mini:C:d"]}
    a = render("agents", "plan_steps.j2", persona=ADA, **day, start="08:00", end="09:00",
               here="mini:A:b")
    b = render("agents", "plan_steps.j2", persona=ADA, **day, start="09:00", end="10:00",
               here="mini:C:d")
    shared = a[:len(os.path.commonprefix([a, b]))]
    assert "- mini:C:d" in shared and "12:00-13:00 lunch" in shared
