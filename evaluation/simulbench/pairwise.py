"""The pairwise comparison: two models' answers to one script, asked of a judge in both orders,
over every script two answer directories both answered (`run_pairwise`, the paper's Table 1).

Order "12" shows the first model's answer as candidate A and the second's as B; order "21"
swaps them. `swap_rule` combines the two: a model wins only when both orders pick it; every
other combination (a tie in either order, or the same position twice: A/A, B/B) is a tie, and
A/A or B/B is also counted as order-inconsistent. A verdict with no [[A]], [[B]] or [[C]]
after the re-asks falls back and the script counts as unjudged (in no rate). In the json judge
format the verdict is a schema-bound {"explanation", "verdict": "A"|"B"|"C"} instead.

`run_pairwise` asks through the kit's judge loop (evaluation.kit.judge_asks): a saved verdict is
kept unless it reached no model, each new one is saved atomically as soon as it is made, and
every call is accounted in OUT/calls.jsonl:

    OUT/pairwise.json                            the judge format and every pair compared
    OUT/pairwise/<a>__vs__<b>/<item>__<judge>.json  one verdict (both orders) per script
    OUT/calls.jsonl, OUT/cache.sqlite            the judge's calls and its answers
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from evaluation.kit import (
    Ask,
    Column,
    JudgeTally,
    judge_asks,
    markdown_table,
    read_bench_dir,
    read_dialogue,
)
from sandbox.llm import CallLog, LLMRequest, Message, timed_complete
from sandbox.log import CACHE, CALLS
from sandbox.prompts import render
from sandbox.storage import write_atomic
from tasks.kit import Sampling
from tasks.simulbench import JUDGE_SAMPLING

from .aggregate import PairTally
from .board import BENCHMARK, MANIFEST
from .judges import (
    PAIRWISE_TAG,
    PairAnswer,
    PairVerdict,
    answer_of,
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

    @property
    def status(self) -> str:
        """As the judge loop counts it: unavailable (asked again), fallback (unjudged) or ok."""
        return "unavailable" if self.unavailable else \
            "fallback" if self.winner == "unjudged" else "ok"

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


# -- the run -------------------------------------------------------------------------------------
PAIRWISE = "pairwise"  # OUT/pairwise/<pair key>/: the verdicts


class PairwiseMismatch(Exception):
    """OUT holds verdicts asked another way (another judge format): that is another --out."""


def plan_pairs(dirs: Sequence[Path], reference: Path | None = None) -> list[tuple[Path, Path]]:
    """The pairs to compare: each directory against `reference` (the directory's model first,
    so the rates are its rates over the reference), or every pair of `dirs` in the order given
    (the earlier one first), the paper's Table 1."""
    if reference is not None:
        return [(d, reference) for d in dirs]
    return list(combinations(dirs, 2))


def _answers(path: Path | str) -> tuple[str, dict[str, tuple[dict, str, str]]]:
    """label, item -> (script, category, answer) of a finished answer directory."""
    found = read_bench_dir(path, MANIFEST, "sandbox simulbench")
    out = {}
    for run_dir in found.runs:
        dialogue = read_dialogue(run_dir, BENCHMARK)
        if dialogue.finished:
            out[run_dir.name] = (dialogue.config["script"], dialogue.config.get("category"),
                                 answer_of(dialogue))
    return found.label, out


def _pair_keys(pairs: Sequence[tuple[Path, Path]]) -> dict[Path, str]:
    """A folder-safe name per directory: its own name, numbered when two share one."""
    names: dict[Path, str] = {}
    for path in dict.fromkeys(p for pair in pairs for p in pair):
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(path).resolve().name) or "dir"
        name, n = base, 1
        while name in names.values():
            n += 1
            name = f"{base}-{n}"
        names[path] = name
    return names


def _open_pairwise(out: Path, judge_format: str, pairs: list[dict]) -> None:
    """OUT/pairwise.json: the judge format and every pair compared here. Verdicts of another
    judge format are not mixed in: that is another --out."""
    path = out / "pairwise.json"
    have = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    was = have.get("judge_format", "text")
    if have and was != judge_format and any((out / PAIRWISE).rglob("*.json")):
        raise PairwiseMismatch(f"{out} holds pairwise verdicts of --judge-format {was}, not "
                               f"{judge_format}; use another --out")
    known = {p["key"]: p for p in have.get("pairs", [])}
    known.update({p["key"]: p for p in pairs})
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"judge_format": judge_format,
                                   "pairs": list(known.values())}, indent=2))


def run_pairwise(pairs: Sequence[tuple[Path | str, Path | str]], out: Path | str, judge: str,
                 llm_for: Callable[[str, Path], Any], sampling: Sampling = JUDGE_SAMPLING,
                 judge_format: str = "text", on_progress: Callable[[str], None] | None = None
                 ) -> list[PairwiseReport]:
    """Judge, for each pair, every script both directories answered, in both orders; a saved
    verdict is kept. `llm_for(model, cache path)` gives the judge's LLM (the command's model
    pool). One report per pair, in order. Raises BoardError (not an answer directory) or
    PairwiseMismatch (OUT holds another judge format's verdicts) before any call."""
    out = Path(out)
    pairs = [(Path(a), Path(b)) for a, b in pairs]
    answers = {d: _answers(d) for d in dict.fromkeys(p for pair in pairs for p in pair)}
    names = _pair_keys(pairs)
    keys = [f"{names[a]}__vs__{names[b]}" for a, b in pairs]
    _open_pairwise(out, judge_format, [
        {"key": key, "first": str(a), "second": str(b), "first_label": answers[a][0],
         "second_label": answers[b][0]} for key, (a, b) in zip(keys, pairs, strict=True)])
    llm = llm_for(judge, out / CACHE)
    calls = CallLog(out / CALLS)
    reports = []
    try:
        for key, (a, b) in zip(keys, pairs, strict=True):
            reports.append(_judge_pair_dirs(answers[a], answers[b], out / PAIRWISE / key, key,
                                            judge, llm, calls, sampling, judge_format,
                                            on_progress))
    finally:
        calls.close()
    return reports


def _saved_verdict(path: Path) -> PairResult | None:
    """The verdict saved at `path` while it is usable (one that reached no model is asked
    again)."""
    if not path.is_file():
        return None
    result = PairResult(**json.loads(path.read_text(encoding="utf-8")))
    return None if result.unavailable else result


def _judge_pair_dirs(first, second, verdicts: Path, key: str, judge: str, llm, calls: CallLog,
                     sampling: Sampling, judge_format: str, on_progress) -> PairwiseReport:
    (label_a, answers_a), (label_b, answers_b) = first, second
    common = sorted(set(answers_a) & set(answers_b))
    report = PairwiseReport(label_a, label_b, judge,
                            missing=len(set(answers_a) ^ set(answers_b)), key=key)
    verdicts.mkdir(parents=True, exist_ok=True)

    def ask(item: str) -> Ask:
        script, _, answer_a = answers_a[item]
        path = verdicts / f"{item}__{judge.replace('/', '_')}.json"
        return Ask(llm=llm, kept=lambda: _saved_verdict(path),
                   ask=lambda asked: judge_pair(asked, item, script["act"],
                                                script["dialogue_history"], answer_a,
                                                answers_b[item][2], sampling, judge_format),
                   save=lambda result: write_atomic(path, result.to_json()),
                   note=f"{label_a} vs {label_b}: {item}")

    tally = JudgeTally()
    results = judge_asks((ask(item) for item in common), calls, tally=tally,
                         note=on_progress or (lambda what: None))
    report.made, report.skipped, report.unavailable = tally.made, tally.skipped, tally.unavailable
    for item, result in zip(common, results, strict=True):
        script, category, _ = answers_a[item]
        report.add(result, hard=script["turn_num"] > 0, category=category)
    return report
