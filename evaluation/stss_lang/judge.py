"""The goal-condition judges: one for the conversation, one for the partner's summary of it.

Each is the kit's JudgeSpec: the judge model is shown the task's facts and the conversation (or
the summary) and answers every goal condition of the task type with a one-line reason and a
yes or a no (schema-bound: exactly the task's conditions, reason first). The judgment keeps
each condition's verdict as a flag (c1, c2, ...), and the conversation's SR (all met) and GCSR
(share met) as scores. No usable answer: the declared fallback (every condition "no") is saved
with status "fallback" and left out of every mean.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, create_model

from evaluation.kit import Dialogue, JudgeSpec, Verdict
from sandbox.log import load_run
from tasks.kit import Sampling

from .conditions import Condition, conditions, place_name

CONVERSATION, SUMMARY = "conversation", "summary"
LEVELS = (CONVERSATION, SUMMARY)
SYSTEM_TEMPLATE = "stss_lang_judge_system.j2"
USER_TEMPLATE = "stss_lang_judge_user.j2"
JUDGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=60)  # per condition
NO_SUMMARY = "(no summary was written)"


class ConditionAnswer(BaseModel):
    # No maxLength on the reason: llama.cpp grammars for bounded strings are slow to sample.
    reason: str
    answer: Literal["yes", "no"]


@cache
def answer_schema(count: int) -> type[BaseModel]:
    return create_model(f"GoalConditions{count}",
                        **{f"c{i}": (ConditionAnswer, ...) for i in range(1, count + 1)})


def task_conditions(dialogue: Dialogue) -> list[Condition]:
    return conditions(dialogue.config["task"])


def summary_of(dialogue: Dialogue) -> str:
    """The partner's summary (a `summary_written` event), read from the run's log."""
    for event in load_run(dialogue.run_dir).of_kind("summary_written"):
        return getattr(event, "text", "") or NO_SUMMARY
    return NO_SUMMARY


def _context(level: str):
    def context(dialogue: Dialogue) -> dict:
        task = dialogue.config["task"]
        steps = [{"keyword": s["keyword"], "place": place_name(s.get("location"))
                  if s.get("location") else ""} for s in task.get("steps", [])]
        return {"level": level, "task": task, "steps": steps,
                "performer": dialogue.config["performer_agent"],
                "partner": dialogue.config["partner_agent"],
                "lines": [f"{u.agent}: {u.text}" for u in dialogue.utterances],
                "summary": summary_of(dialogue) if level == SUMMARY else "",
                "conditions": task_conditions(dialogue)}
    return context


def _fallback(dialogue: Dialogue) -> BaseModel:
    count = len(task_conditions(dialogue))
    return answer_schema(count)(**{f"c{i}": ConditionAnswer(reason="no usable answer",
                                                            answer="no")
                                   for i in range(1, count + 1)})


def _verdict(answer: BaseModel, dialogue: Dialogue) -> Verdict:
    found = task_conditions(dialogue)
    flags = {c.key: getattr(answer, c.key).answer == "yes" for c in found}
    met = sum(flags.values())
    return Verdict(scores={"sr": float(met == len(found)), "gcsr": met / len(found)},
                   flags=flags,
                   answer={c.key: {"name": c.name, "question": c.question,
                                   **getattr(answer, c.key).model_dump()} for c in found})


def _fits(judgment, dialogue: Dialogue) -> str | None:
    """An ok judgment answers exactly the task's goal conditions and carries SR and GCSR."""
    if not judgment.usable:
        return None
    keys = {c.key for c in task_conditions(dialogue)}
    if set(judgment.flags) != keys:
        return f"answers {len(set(judgment.flags) & keys)} of the task's {len(keys)} goal " \
               "conditions"
    if not {"sr", "gcsr"} <= set(judgment.scores):
        return "an ok judgment without SR and GCSR"
    return None


def judge_spec(level: str) -> JudgeSpec:
    return JudgeSpec(
        name=level, tag=f"stss_lang.judge.{level}", templates=(SYSTEM_TEMPLATE, USER_TEMPLATE),
        context=_context(level), fallback=_fallback, verdict=_verdict,
        schema=lambda d: answer_schema(len(task_conditions(d))),
        max_tokens=lambda d, s: 20 + s.max_tokens * len(task_conditions(d)),
        # the summary judge reads the partner's summary, not the lines: its digest is of that
        evidence=(lambda d: [summary_of(d)]) if level == SUMMARY else None, fits=_fits)


JUDGES = [judge_spec(level) for level in LEVELS]
