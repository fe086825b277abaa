"""The judge loop: every judge of a benchmark asked, of every judge model not yet heard, about one
finished run; each judgment saved beside the run (sandbox.judgments) as soon as it is made.

A saved judgment is kept only while it fits the dialogue beside it: a stale one (the events
changed, or it judges other turns), an unreadable file, or one whose call never reached a model
(status unavailable: no verdict at all) is asked again, and the new judgment takes its file.
Each call goes to the run's calls.jsonl like the dialogue's own, and counts against the budgets
given (BudgetExhausted before a call past one).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.budget import Budget
from sandbox.judgments import load_judgments, save_judgment, settle_status
from sandbox.llm import AccountingLLM, CallLog
from sandbox.log import CALLS
from tasks.kit import Sampling

from .dialogue import Dialogue
from .judges import JudgeSpec, judge_dialogue, judgment_problem


@dataclass(frozen=True)
class Panel:
    """Who judges: the judge models (--judge), the LLM each is asked through (with the run's
    cache), and how they sample."""

    models: Sequence[str]
    llm: Callable[[str], Any]  # model -> its LLM stack
    sampling: Sampling


@dataclass
class JudgeTally:
    """What one judge loop did."""

    made: int = 0
    skipped: int = 0
    fallbacks: int = 0
    unavailable: int = 0  # judgments whose call never reached a model (asked again next time)
    calls: int = 0  # calls recorded in the run's calls.jsonl


def judge_run(run_dir: Path, dialogue: Dialogue, specs: Sequence[JudgeSpec], panel: Panel, *,
              rejudge: bool = False, budgets: Sequence[Budget] = (),
              note: Callable[[str], None] = lambda what: None,
              tally: JudgeTally | None = None) -> JudgeTally:
    """Ask every judge in `specs` that applies to `dialogue`, of every model of `panel` whose
    judgment is not saved (or with `rejudge`, of every one); `tally` counts as it goes, so a
    budget's stop (BudgetExhausted, raised) leaves it true."""
    tally = tally if tally is not None else JudgeTally()
    calls: CallLog | None = None
    unsaved = Counter() if rejudge else unsaved_judge_calls(run_dir, specs)
    try:
        for spec in specs:
            if spec.applies is not None and not spec.applies(dialogue):
                continue  # nothing of this judge's kind in this dialogue
            have = {j.model for j in load_judgments(run_dir, spec.name)
                    if j.status != "unavailable" and judgment_problem(spec, j, dialogue) is None}
            for model in panel.models:
                llm = panel.llm(model)
                if llm.model_id in have and not rejudge:
                    tally.skipped += 1
                    continue
                for budget in budgets:  # in order, before the call: a capped run is repeatable
                    budget.reserve(1)
                note(f"judge {model}" if len(specs) == 1 else f"{spec.name} {model}")
                calls = calls or CallLog(run_dir / CALLS)
                asked = (spec.tag, f"judge:{llm.model_id}")
                if unsaved[asked]:
                    # A kill came after this call was recorded and before its judgment was
                    # saved: that record stands for the call asked again now (from the
                    # cache), so it is not recorded twice.
                    unsaved[asked] -= 1
                    judgment = judge_dialogue(spec, dialogue, llm, panel.sampling)
                else:
                    judgment = judge_dialogue(spec, dialogue, AccountingLLM(llm, calls),
                                              panel.sampling)
                judgment = settle_status(judgment)
                for budget in budgets:
                    budget.spend_tokens(judgment.prompt_tokens + judgment.completion_tokens)
                save_judgment(run_dir, judgment)
                tally.made += 1
                tally.fallbacks += judgment.status == "fallback"
                tally.unavailable += judgment.status == "unavailable"
    finally:
        if calls is not None:
            tally.calls += len(calls.records)
            calls.close()
    return tally


def unsaved_judge_calls(run_dir: Path, specs: Sequence[JudgeSpec]) -> Counter:
    """(tag, judge agent) -> judge calls in the run's calls.jsonl with no saved judgment (one
    judgment is one call, tagged with its judge's tag and `judge:<model>`)."""
    tags = {spec.name: spec.tag for spec in specs}
    recorded: Counter = Counter()
    path = run_dir / CALLS
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            record = json.loads(line)
            if str(record.get("agent") or "").startswith("judge:"):
                recorded[(record["tag"], record["agent"])] += 1
        except (ValueError, KeyError, AttributeError):
            continue  # a torn or foreign line counts for nothing
    for judgment in load_judgments(run_dir):
        recorded[(tags.get(judgment.judge), f"judge:{judgment.model}")] -= 1
    return Counter({key: n for key, n in recorded.items() if n > 0})
