"""The judge loop: every judge of a benchmark asked, of every judge model not yet heard, about one
finished run; each judgment saved beside the run (sandbox.judgments) as soon as it is made.

A saved judgment is kept only while it fits the dialogue beside it: a stale one (the events
changed, or it judges other turns), one with a score off its judge's scale (edited, or not a
number), an unreadable file, or one whose call never reached a model (status unavailable: no
verdict at all) is asked again, and the new judgment takes its file.
Each call goes to the run's calls.jsonl like the dialogue's own, and counts against the budgets
given (BudgetExhausted before a call past one).

The loop itself, one verdict at a time, is `judge_asks`: an `Ask` says how its verdict is read
back (kept while saved and usable), asked and saved; a benchmark whose verdicts are not
judgments of one run (SimulBench's pairwise comparison of two directories) asks through it too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sandbox.budget import Budget
from sandbox.judgments import load_judgments, save_judgment, settle_status
from sandbox.llm import AccountingLLM, CallLog
from sandbox.log import CALLS
from tasks.kit import Sampling

from .dialogue import Dialogue
from .judges import JudgeSpec, judge_dialogue, judge_name, judgment_problem, off_scale


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
    calls: int = 0  # calls recorded in the calls.jsonl the loop wrote to


class Judged(Protocol):
    """What the loop reads of a verdict it made: its status ("ok", "fallback" or
    "unavailable") and the tokens it cost."""

    status: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Ask:
    """One verdict a judge loop is to have: kept while saved and usable, else asked and saved.

    llm       the judge's LLM stack; the loop wraps it to account each call in calls.jsonl
    kept      () -> the saved verdict while it is usable, or None (missing, stale, unreadable,
              or unavailable: asked again)
    ask       (llm) -> the verdict (a `Judged`); never raises on a bad answer
    save      (verdict) -> None: written atomically, as soon as it is made
    note      what the loop's `note` hears before the call
    recorded  the (tag, agent) its one call is recorded under: a call recorded and never saved
              (a kill between the two) stands for this one, asked again from the cache
    """

    llm: Any
    kept: Callable[[], Any]
    ask: Callable[[Any], Judged]
    save: Callable[[Any], None]
    note: str = ""
    recorded: tuple[str, str] | None = None


def judge_asks(asks: Iterable[Ask], calls: CallLog | Path, *, rejudge: bool = False,
               budgets: Sequence[Budget] = (),
               note: Callable[[str], None] = lambda what: None,
               tally: JudgeTally | None = None, unsaved: Counter | None = None) -> list:
    """Each ask's verdict, in order: the saved one while usable (skipped; with `rejudge`, never),
    else asked (each budget reserves a call first, and spends its tokens after), saved, and
    counted made, fallback or unavailable in `tally`, which counts as it goes (a budget's stop,
    BudgetExhausted, raised, leaves it true).

    `calls` is the CallLog each call is accounted in, or the path of a calls.jsonl opened at
    the first call and closed at the end; `tally.calls` counts the records the loop added.
    `unsaved` ((tag, agent) -> calls recorded with no saved verdict) is used up as they are
    asked again."""
    tally = tally if tally is not None else JudgeTally()
    unsaved = unsaved if unsaved is not None else Counter()
    log = calls if isinstance(calls, CallLog) else None
    before = len(log.records) if log is not None else 0
    verdicts = []
    try:
        for ask in asks:
            saved = None if rejudge else ask.kept()
            if saved is not None:
                tally.skipped += 1
                verdicts.append(saved)
                continue
            for budget in budgets:  # in order, before the call: a capped run is repeatable
                budget.reserve(1)
            note(ask.note)
            if log is None:
                log = CallLog(calls)
            if ask.recorded is not None and unsaved[ask.recorded]:
                # A kill came after this call was recorded and before its verdict was saved:
                # that record stands for the call asked again now (from the cache), so it is
                # not recorded twice.
                unsaved[ask.recorded] -= 1
                verdict = ask.ask(ask.llm)
            else:
                verdict = ask.ask(AccountingLLM(ask.llm, log))
            for budget in budgets:
                budget.spend_tokens(verdict.prompt_tokens + verdict.completion_tokens)
            ask.save(verdict)
            tally.made += 1
            tally.fallbacks += verdict.status == "fallback"
            tally.unavailable += verdict.status == "unavailable"
            verdicts.append(verdict)
    finally:
        if log is not None:
            tally.calls += len(log.records) - before
            if log is not calls:  # opened here
                log.close()
    return verdicts


def judge_run(run_dir: Path, dialogue: Dialogue, specs: Sequence[JudgeSpec], panel: Panel, *,
              rejudge: bool = False, budgets: Sequence[Budget] = (),
              note: Callable[[str], None] = lambda what: None,
              tally: JudgeTally | None = None) -> JudgeTally:
    """Ask every judge in `specs` that applies to `dialogue`, of every model of `panel` whose
    judgment is not saved (or with `rejudge`, of every one); `tally` counts as it goes, so a
    budget's stop (BudgetExhausted, raised) leaves it true."""
    tally = tally if tally is not None else JudgeTally()
    unsaved = Counter() if rejudge else unsaved_judge_calls(run_dir, specs)
    judge_asks(_run_asks(run_dir, dialogue, specs, panel), run_dir / CALLS, rejudge=rejudge,
               budgets=budgets, note=note, tally=tally, unsaved=unsaved)
    return tally


def _run_asks(run_dir: Path, dialogue: Dialogue, specs: Sequence[JudgeSpec], panel: Panel
              ) -> Iterator[Ask]:
    """One ask per judge that applies and judge model, judge by judge (each judge's saved
    judgments read when its turn comes)."""
    for spec in specs:
        if spec.applies is not None and not spec.applies(dialogue):
            continue  # nothing of this judge's kind in this dialogue
        have = {j.model: j for j in load_judgments(run_dir, spec.name)
                if j.status != "unavailable" and judgment_problem(spec, j, dialogue) is None
                and off_scale(spec, j) is None}
        for model in panel.models:
            llm = panel.llm(model)
            name = judge_name(llm)
            yield Ask(
                llm=llm, kept=lambda have=have, name=name: have.get(name),
                ask=lambda asked, spec=spec: settle_status(
                    judge_dialogue(spec, dialogue, asked, panel.sampling)),
                save=lambda judgment: save_judgment(run_dir, judgment),
                note=f"judge {model}" if len(specs) == 1 else f"{spec.name} {model}",
                recorded=(spec.tag, f"judge:{name}"))


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
