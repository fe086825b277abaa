"""The kit's judge loop one verdict at a time (`judge_asks`), as both the dialogue judges and
SimulBench's pairwise comparison use it: a saved usable verdict is kept, anything else is asked,
saved and counted; each call is accounted in calls.jsonl; budgets are reserved first."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluation.kit import Ask, JudgeTally, judge_asks
from sandbox.budget import Budget, BudgetExhausted
from sandbox.llm import CallLog, LLMRequest, Message, ScriptedBackend, timed_complete

TAG = "toy.judge"


@dataclass
class Said:
    status: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _ask(tmp_path: Path, name: str, llm, says: str = "ok") -> Ask:
    path = tmp_path / f"{name}.json"

    def ask(asked) -> Said:
        completion = timed_complete(asked, LLMRequest(
            messages=[Message(role="user", content=name)], tag=TAG,
            agent=f"judge:{asked.model_id}"))
        return Said(says, completion.usage.prompt_tokens, completion.usage.completion_tokens)

    def kept() -> Said | None:
        if not path.is_file():
            return None
        said = Said(**json.loads(path.read_text()))
        return None if said.status == "unavailable" else said

    return Ask(llm=llm, kept=kept, ask=ask, save=lambda said: path.write_text(
        json.dumps(said.__dict__)), note=name, recorded=(TAG, f"judge:{llm.model_id}"))


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_saved_verdicts_are_kept_and_the_rest_asked_saved_and_accounted(tmp_path):
    llm = ScriptedBackend(model_id="scripted/toy")
    (tmp_path / "a.json").write_text(json.dumps({"status": "ok"}))
    (tmp_path / "b.json").write_text(json.dumps({"status": "unavailable"}))  # asked again
    heard, tally = [], JudgeTally()
    asks = [_ask(tmp_path, "a", llm), _ask(tmp_path, "b", llm),
            _ask(tmp_path, "c", llm, says="fallback")]
    verdicts = judge_asks(asks, tmp_path / "calls.jsonl", note=heard.append, tally=tally)
    assert [v.status for v in verdicts] == ["ok", "ok", "fallback"]
    assert (tally.made, tally.skipped, tally.fallbacks, tally.unavailable, tally.calls) == \
        (2, 1, 1, 0, 2)
    assert heard == ["b", "c"]  # only what is asked
    assert [r["seq"] for r in _records(tmp_path / "calls.jsonl")] == [0, 1]
    assert json.loads((tmp_path / "c.json").read_text())["status"] == "fallback"
    # again: everything is kept, nothing is asked or recorded
    tally = JudgeTally()
    judge_asks(asks, tmp_path / "calls.jsonl", tally=tally)
    assert (tally.made, tally.skipped, tally.calls) == (0, 3, 0)
    assert len(_records(tmp_path / "calls.jsonl")) == 2
    # with rejudge, everything is asked again
    tally = JudgeTally()
    judge_asks(asks, tmp_path / "calls.jsonl", rejudge=True, tally=tally)
    assert (tally.made, tally.skipped, tally.calls) == (3, 0, 3)


def test_a_call_log_given_is_written_to_and_left_open(tmp_path):
    llm = ScriptedBackend(model_id="scripted/toy")
    calls = CallLog(tmp_path / "calls.jsonl")
    try:
        first, second = JudgeTally(), JudgeTally()
        judge_asks([_ask(tmp_path, "a", llm)], calls, tally=first)
        judge_asks([_ask(tmp_path, "b", llm)], calls, tally=second)
        assert (first.calls, second.calls) == (1, 1)  # each loop counts its own records
    finally:
        calls.close()
    assert [r["seq"] for r in _records(tmp_path / "calls.jsonl")] == [0, 1]


def test_a_call_recorded_and_never_saved_is_not_recorded_twice(tmp_path):
    llm = ScriptedBackend(model_id="scripted/toy")
    unsaved = Counter({(TAG, "judge:scripted/toy"): 1})
    tally = JudgeTally()
    judge_asks([_ask(tmp_path, "a", llm), _ask(tmp_path, "b", llm)], tmp_path / "calls.jsonl",
               tally=tally, unsaved=unsaved)
    assert tally.made == 2 and tally.calls == 1 and unsaved[(TAG, "judge:scripted/toy")] == 0


def test_a_budget_is_reserved_before_each_call_and_the_tally_stays_true(tmp_path):
    llm = ScriptedBackend(model_id="scripted/toy")
    budget, tally = Budget(max_calls=1), JudgeTally()
    with pytest.raises(BudgetExhausted):
        judge_asks([_ask(tmp_path, "a", llm), _ask(tmp_path, "b", llm)],
                   tmp_path / "calls.jsonl", budgets=[budget], tally=tally)
    assert (tally.made, tally.calls) == (1, 1)
    assert (tmp_path / "a.json").is_file() and not (tmp_path / "b.json").exists()
