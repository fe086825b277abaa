"""SR and GCSR, micro and macro, on hand-built judgments (the STSS paper's equations 1 and 2),
and the goal conditions of each task type."""

from __future__ import annotations

import pytest

from evaluation.stss_lang import Judged, cell, combine, conditions, groups
from evaluation.stss_lang.judge import _verdict, answer_schema


def judged(item, task, sr, gcsr, summary=None):
    return Judged(item=item, task=task, task_type="public_activity",
                  scores={"conversation": {"sr": sr, "gcsr": gcsr}, "summary": summary})


# Task A: one conversation, all met. Task B: three, one of them all met.
CONVERSATIONS = [judged("a1", "A", 1, 1.0),
                 judged("b1", "B", 0, 1 / 3), judged("b2", "B", 0, 2 / 3),
                 judged("b3", "B", 1, 1.0, summary={"sr": 0, "gcsr": 0.5})]


def test_micro_weighs_conversations_and_macro_weighs_tasks():
    sr = cell(groups(CONVERSATIONS, "conversation", "sr"))
    assert sr.micro == pytest.approx((1 + 0 + 0 + 1) / 4)  # 0.5
    assert sr.macro == pytest.approx((1 + 1 / 3) / 2)  # 0.667
    gcsr = cell(groups(CONVERSATIONS, "conversation", "gcsr"))
    assert gcsr.micro == pytest.approx((1 + 1 / 3 + 2 / 3 + 1) / 4)  # 0.75
    assert gcsr.macro == pytest.approx((1 + (1 / 3 + 2 / 3 + 1) / 3) / 2)  # 0.833
    assert (gcsr.conversations, gcsr.tasks) == (4, 2)
    assert gcsr.micro_ci is None and gcsr.macro_ci is None  # 4 conversations, 2 tasks: too few
    wide = cell({"t": [1.0, 0.0, 1.0, 1.0, 0.0]})
    lo, hi = wide.micro_ci
    assert lo <= wide.micro <= hi and wide.macro_ci is None  # 5 conversations, 1 task


def test_unjudged_conversations_and_tasks_are_left_out():
    summary = cell(groups(CONVERSATIONS, "summary", "gcsr"))
    assert (summary.micro, summary.macro, summary.conversations, summary.tasks) == \
        (0.5, 0.5, 1, 1)


def test_several_judges_average_per_conversation():
    assert combine([{"sr": 1, "gcsr": 1.0}, {"sr": 0, "gcsr": 0.5}]) == {"sr": 0.5,
                                                                         "gcsr": 0.75}
    assert combine([]) is None


def task(kind, steps=1, start="2024-02-14T17:00:00"):
    return {"type": kind, "performer": "Maya", "target": "Julian", "start": start,
            "steps": [{"keyword": f"step {i}", "location": "town:Copper Kettle Cafe"}
                      for i in range(steps)]}


@pytest.mark.parametrize("kind, names", [
    ("public_activity", ["invited", "place", "time"]),
    ("online_activity", ["invited", "time", "platform"]),
    ("inviting_companions", ["invited", "place", "time"]),
    ("appointment", ["meeting", "time", "place"]),
])
def test_each_task_type_has_its_conditions(kind, names):
    found = conditions(task(kind))
    assert [c.name for c in found] == names
    assert [c.key for c in found] == ["c1", "c2", "c3"]


def test_asking_for_help_has_a_condition_per_step_with_its_place():
    found = conditions(task("asking_for_help", steps=2, start=None))
    assert [c.name for c in found] == ["asked", "step1", "step2"]
    assert "Copper Kettle Cafe" in found[1].question
    assert "17:00" in conditions(task("public_activity"))[2].question


def test_a_verdict_is_sr_and_gcsr_of_the_yes_answers():
    class D:
        config = {"task": task("public_activity")}

    answer = answer_schema(3).model_validate({
        "c1": {"reason": "'come'", "answer": "yes"}, "c2": {"reason": "-", "answer": "no"},
        "c3": {"reason": "'17:00'", "answer": "yes"}})
    verdict = _verdict(answer, D())
    assert verdict.flags == {"c1": True, "c2": False, "c3": True}
    assert verdict.scores == {"sr": 0.0, "gcsr": pytest.approx(2 / 3)}
    assert verdict.answer["c2"]["name"] == "place"


def test_the_action_level_side_by_side_takes_each_run_once_and_the_rows_architecture():
    from evaluation.stss_lang import by_type

    def c(run, arch, score, gcsr):
        return Judged(item=run + arch + str(gcsr), task="A", task_type="appointment",
                      scores={"conversation": {"sr": 0, "gcsr": gcsr}, "summary": None},
                      action_score=score, source_run=run, source_arch=arch)

    found = [c("r1", "ga", 0.5, 1.0), c("r1", "ga", 0.5, 0.0), c("r2", "ga_tdp", 1.0, 0.5)]
    ga = by_type(found, "ga")["appointment"]
    assert ga["action"] == 0.5 and ga["action_runs"] == 1
    assert ga["conversation_gcsr"] == pytest.approx(0.5) and ga["conversation_n"] == 3
    assert by_type(found, "ga_tdp")["appointment"]["action"] == 1.0
    assert by_type(found, "other")["appointment"]["action"] == 0.75  # none of its own: all
