"""The pairwise judge: two models' answers to one script, asked in both orders.

Order "12" shows the first model's answer as candidate A and the second's as B; order "21"
swaps them. `swap_rule` combines the two: a model wins only when both orders pick it; every
other combination (a tie in either order, or the same position twice: A/A, B/B) is a tie, and
A/A or B/B is also counted as order-inconsistent. A verdict with no [[A]], [[B]] or [[C]]
after the re-asks falls back and the script counts as unjudged (in no rate). In the json judge
format the verdict is a schema-bound {"explanation", "verdict": "A"|"B"|"C"} instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.kit import Column, markdown_table
from sandbox.llm import LLMRequest, Message, timed_complete
from sandbox.prompts import render
from tasks.kit import Sampling

from .aggregate import PairTally
from .judges import (
    PAIRWISE_TAG,
    PairAnswer,
    PairVerdict,
    judge_dialogue_json,
    parse_pairwise,
    swap_rule,
    winner_of,
)

SYSTEM_TEMPLATE = "simulbench_judge_system.j2"
USER_TEMPLATE = "simulbench_pairwise_user.j2"


@dataclass
class PairResult:
    """Both orders' verdicts on one script and what they add up to."""

    item: str
    judge: str
    # A, B, C, "fallback" (no usable answer), or "unavailable" (the call never reached a model:
    # no verdict at all; the next run asks again)
    order12: str
    order21: str
    winner: str  # "first", "second", "tie", or "unjudged"
    inconsistent: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def unavailable(self) -> bool:
        return "unavailable" in (self.order12, self.order21)

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2)


def pairwise_messages(act: str, history: list[dict], response_a: str, response_b: str,
                      judge_format: str = "text") -> list[Message]:
    context = {"simulation": act, "dialogue": judge_dialogue_json(history),
               "response_a": json.dumps({"AI": response_a}, indent=2),
               "response_b": json.dumps({"AI": response_b}, indent=2),
               "answer_format": judge_format}
    return [Message(role="system", content=render("evaluation", SYSTEM_TEMPLATE, **context)),
            Message(role="user", content=render("evaluation", USER_TEMPLATE, **context))]


def _seed(item: str, model: str, order: str) -> int:
    return int(hashlib.sha256(f"{item}|{model}|{order}".encode()).hexdigest()[:8], 16) \
        % (2**31 - 1)


def judge_pair(llm, item: str, act: str, history: list[dict], first: str, second: str,
               sampling: Sampling, judge_format: str = "text") -> PairResult:
    """Ask `llm` in both orders. Never raises on a bad answer."""
    said, tokens = {}, [0, 0]
    json_format = judge_format == "json"
    for order, (a, b) in (("12", (first, second)), ("21", (second, first))):
        request = LLMRequest(
            messages=pairwise_messages(act, history, a, b, judge_format), tag=PAIRWISE_TAG,
            agent=f"judge:{llm.model_id}", schema=PairAnswer if json_format else None,
            parser=None if json_format else parse_pairwise,
            fallback=PairVerdict(winner="C"), temperature=sampling.temperature,
            top_p=sampling.top_p, max_tokens=sampling.max_tokens,
            seed=_seed(item, llm.model_id, order))
        completion = timed_complete(llm, request)
        said[order] = "unavailable" if "unavailable" in completion.faults \
            else "fallback" if "fallback" in completion.faults else winner_of(completion.parsed)
        tokens[0] += completion.usage.prompt_tokens
        tokens[1] += completion.usage.completion_tokens
    if {"fallback", "unavailable"} & set(said.values()):
        winner = "unjudged"
    else:
        winner = {"A": "first", "B": "second", "tie": "tie"}[swap_rule(said["12"], said["21"])]
    inconsistent = said["12"] == said["21"] and said["12"] in ("A", "B")
    return PairResult(item=item, judge=llm.model_id, order12=said["12"], order21=said["21"],
                      winner=winner, inconsistent=inconsistent, prompt_tokens=tokens[0],
                      completion_tokens=tokens[1])


PAIR_SUBSETS = ("all", "hard", "lastonly", "firstchan", "subseqchan")


@dataclass
class PairwiseReport:
    """One pair of answer directories compared: the first model's tallies per subset."""

    first: str  # labels
    second: str
    judge: str
    tallies: dict[str, PairTally] = field(
        default_factory=lambda: {k: PairTally() for k in PAIR_SUBSETS})
    made: int = 0
    skipped: int = 0
    missing: int = 0  # scripts answered in only one of the two directories
    unavailable: int = 0  # verdicts whose judge call never reached a model (asked again)
    key: str = ""  # the pair's folder under OUT/pairwise/

    def add(self, result: PairResult, *, hard: bool, category: str) -> None:
        """Count one script's verdict in every subset it belongs to."""
        for subset, tally in self.tallies.items():
            if subset == "all" or (subset == "hard" and hard) or subset == category:
                _count(tally, result)


def _count(tally: PairTally, result: PairResult) -> None:
    if result.winner == "unjudged":
        tally.unjudged += 1
        return
    tally.win += result.winner == "first"
    tally.lose += result.winner == "second"
    tally.tie += result.winner == "tie"
    tally.inconsistent += result.inconsistent


def pairwise_markdown(reports: Sequence[PairwiseReport], judge_format: str = "text") -> str:
    """The paper's Table 1 shape: one row per pair and subset (All and Hard always, a script
    category when it has scripts), rates in % of the first model."""
    rows = []
    for report in reports:
        for subset, t in report.tallies.items():
            if subset in ("all", "hard") or t.total or t.unjudged:
                rows.append({"first": report.first, "second": report.second, "subset": subset,
                             "n": t.total, "unjudged": t.unjudged, **t.rates()})
    columns = [Column("first", "First", None, "---"), Column("second", "Second", None, "---"),
               Column("subset", "Subset", None, "---"), Column("win", "Win %"),
               Column("tie", "Tie %"), Column("lose", "Lose %"), Column("delta", "Δ"),
               Column("inconsistent", "A/A or B/B %"), Column("n", "Scripts", None),
               Column("unjudged", "Unjudged", None)]
    judges = ", ".join(dict.fromkeys(r.judge for r in reports))
    head = (f"Pairwise (judge {judges}, {judge_format} format): win, tie and lose in % of the "
            "first model; a win needs both orders to agree, Δ = win - lose\n\n")
    return head + "\n".join(markdown_table(columns, rows)) + "\n"


def pairwise_data(reports: Sequence[PairwiseReport], judge_format: str = "text"
                  ) -> dict[str, Any]:
    return {"judge_format": judge_format, "pairs": [
        {"first": r.first, "second": r.second, "judge": r.judge, "key": r.key,
         "made": r.made, "kept": r.skipped, "missing": r.missing, "unavailable": r.unavailable,
         "subsets": {k: {**t.__dict__, "rates": t.rates()} for k, t in r.tallies.items()}}
        for r in reports]}
