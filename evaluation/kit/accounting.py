"""Accounting: what became of every item a benchmark directory's manifest selected.

A board reads a configuration through a `Ledger`: `read_runs` gives the finished runs and counts
and names every other selected item; `judgments_of` gives, per judge, the saved judgments that fit
their dialogue and counts and names the rest. Nothing selected disappears: each item and each
judgment it was owed is in exactly one count.

    runs        finished | unfinished | failed | damaged | missing   (sandbox.log.run_outcome;
                damaged: finished, but a line of its events does not read, so what a board
                would read of it is not what was run); degraded counts finished runs most of
                whose calls fell back; duplicate counts the selections of an item a row
                already read from another of its directories (read once; not in `selected`,
                which counts a row's distinct items)
    judgments   usable | fallback | unavailable | stale | unreadable | unjudged | out of
                range (a score outside its JudgeSpec's `scale`, or not a number) (+ a
                benchmark's own, such as SimulBench's "out of range", through `leave_out`)
    items       a benchmark's reasons to leave a finished, judged item out of its means (e.g.
                a RefuteBench 1.0 dialogue with nothing to check), through `count`

A judgment is stale when it no longer fits its dialogue (evaluation.kit.judges.
judgment_problem), or when it lies beside a run that is not finished; unreadable when its file
does not read as a judgment (not JSON, an unknown status). The runner asks both again.

    ledger = Ledger(bench.label)
    for run in ledger.read_runs(bench, "pingpong", "pair"):
        kept = ledger.judgments_of(run, [PINGPONG_JUDGE], bench.judges, only=judges)
    lines = ledger.markdown()      # the counts, and every item not on the board by name
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.judgments import Judgment, judgment_path, read_judgments
from sandbox.log import RunFormatError, run_outcome

from .board import RUNS, BenchDir
from .dialogue import Dialogue, NotABenchmarkRun, read_dialogue
from .judges import JudgeSpec, judgment_problem, off_scale

# degraded: finished and on the board, but most of its calls fell back (counted beside finished)
RUN_STATES = ("finished", "unfinished", "failed", "damaged", "missing")
JUDGMENT_STATES = ("usable", "fallback", "unavailable", "stale", "unreadable", "unjudged")


@dataclass
class Named:
    """One thing a board leaves out, and why: an item (a run directory's name), the file when
    it is a judgment, the count it is in."""

    section: str  # runs | judgments | items
    what: str  # the count it is in: missing, stale, ...
    item: str
    reason: str
    file: str = ""

    def shown(self) -> str:
        return f"{self.item} ({self.file})" if self.file else self.item


@dataclass
class FinishedRun:
    """A selected item whose run finished, with its dialogue."""

    item: str
    run_dir: Path
    dialogue: Dialogue


@dataclass
class Ledger:
    """The accounting of one configuration (one board row): counts per section, and every item
    left out by name."""

    label: str
    selected: int = 0
    runs: Counter = field(default_factory=Counter)
    judgments: Counter = field(default_factory=Counter)
    items: Counter = field(default_factory=Counter)
    named: list[Named] = field(default_factory=list)
    # (seed, item) -> the directory it was read from: a row pooling directories of one
    # configuration reads an item of one seed once (under another seed it is another draw)
    read_from: dict[tuple[Any, str], Path] = field(default_factory=dict, repr=False)

    def count(self, section: str, what: str, item: str = "", reason: str = "",
              file: str = "") -> None:
        """Count one thing in `section` under `what`; with a reason it is also named."""
        getattr(self, section)[what] += 1
        if reason:
            self.named.append(Named(section, what, item, reason, file))

    # -- runs --------------------------------------------------------------------------------
    def read_runs(self, bench: BenchDir, benchmark: str, item_key: str = "item",
                  only: Sequence[str] | None = None) -> list[FinishedRun]:
        """The finished runs of every item `bench`'s manifest selected; the others counted and
        named (with any judgment left beside them, which is stale)."""
        out = []
        # In name order, as the directories lie: the same items give the same order (and the
        # same seeded bootstrap) whatever order a later run selected them in.
        for item in sorted(bench.selected):
            run_dir = bench.path / RUNS / item
            unit = (bench.manifest.get("seed", 0), item)
            if unit in self.read_from:
                # Two directories of one row holding the same item (the same model run twice
                # into two directories): counted once, or n doubles and the interval narrows.
                # Not selected again: `selected` counts the row's distinct items.
                self.count("runs", "duplicate", item, f"also selected by "
                           f"{self.read_from[unit]}: counted once, from there")
                continue
            self.read_from[unit] = bench.path
            self.selected += 1
            outcome = run_outcome(run_dir)
            if outcome.finished:
                try:
                    dialogue = read_dialogue(run_dir, benchmark, item_key)
                except (NotABenchmarkRun, RunFormatError) as exc:
                    self.count("runs", "missing", item, str(exc).replace(f"{run_dir}/", ""))
                    continue
                if dialogue.damaged:
                    # A lost utterance or decision would be scored as if never said (a 1.0
                    # dialogue read as "nothing to check"); the resume still takes the run as
                    # finished, so the user is told to remove it.
                    self.count("runs", "damaged", item, "; ".join(dialogue.damaged) +
                               " (remove its run directory and run again)")
                    self._orphans(run_dir, item, only, "its run's events are damaged")
                    continue
                out.append(FinishedRun(item, run_dir, dialogue))
                self.runs["finished"] += 1
                if outcome.degraded:  # on the board, but said: its numbers are suspect
                    self.count("runs", "degraded", item, outcome.degraded)
                continue
            self.count("runs", outcome.state, item, outcome.reason)
            self._orphans(run_dir, item, only)
        return out

    def refuse(self, run: FinishedRun, reason: str) -> None:
        """A finished run the benchmark cannot read after all (its header lacks what the
        benchmark needs): counted missing instead of finished."""
        self.runs["finished"] -= 1
        self.count("runs", "missing", run.item, reason)

    def _orphans(self, run_dir: Path, item: str, only: Sequence[str] | None,
                 reason: str = "its run is not finished") -> None:
        """Judgments beside a run that did not finish (or whose events are damaged) judged a
        dialogue that is not there."""
        found, unreadable = read_judgments(run_dir)
        for judgment in found:
            if only is None or judgment.model in only:
                self.count("judgments", "stale", item, reason, _file(run_dir, judgment))
        for bad in unreadable:
            self.count("judgments", "unreadable", item, bad.reason, bad.path.name)

    # -- judgments ---------------------------------------------------------------------------
    def judgments_of(self, run: FinishedRun, specs: Sequence[JudgeSpec],
                     models: Sequence[str], only: Sequence[str] | None = None,
                     leave_out: Callable[[Judgment], tuple[str, str] | None] | None = None
                     ) -> dict[str, list[Judgment]]:
        """Per judge (spec name) that applies to the run, the saved judgments that fit their
        dialogue: usable ones and fallbacks (a board leaves fallbacks out of its means and
        shows their count). `models` are the judge models the manifest asked (each owes a
        judgment; none is `unjudged`); `only` keeps those models (--judge). `leave_out` gives
        a benchmark's own (count, reason) to leave a usable judgment out."""
        out: dict[str, list[Judgment]] = {}
        dialogue = run.dialogue
        asked = [m for m in models if only is None or m in only]
        for spec in specs:
            if spec.applies is not None and not spec.applies(dialogue):
                continue
            found, unreadable = read_judgments(run.run_dir, spec.name)
            owed = {judgment_path(run.run_dir, spec.name, m).name: m for m in asked}
            heard = set()
            for bad in unreadable:
                if only is None or bad.path.name in owed:
                    heard.add(owed.get(bad.path.name))
                    self.count("judgments", "unreadable", run.item, bad.reason, bad.path.name)
            kept = []
            for judgment in found:
                if only is not None and judgment.model not in only:
                    continue
                heard.add(judgment.model)
                problem = judgment_problem(spec, judgment, dialogue)
                if problem:
                    self.count("judgments", "stale", run.item, problem,
                               _file(run.run_dir, judgment))
                    continue
                if judgment.status == "unavailable":  # asked again by the next run
                    self.count("judgments", "unavailable", run.item, "its judge's call "
                               "reached no model", _file(run.run_dir, judgment))
                elif not judgment.usable:  # kept (counted, never averaged) and named
                    faults = f" ({', '.join(judgment.faults)})" if judgment.faults else ""
                    self.count("judgments", "fallback", run.item, "its judge's answer could "
                               f"not be used{faults}: the declared fallback, left out of the "
                               "means", _file(run.run_dir, judgment))
                elif off := off_scale(spec, judgment):
                    self.count("judgments", "out of range", run.item, off,
                               _file(run.run_dir, judgment))
                    continue
                elif leave_out is not None and (why := leave_out(judgment)):
                    self.count("judgments", why[0], run.item, why[1],
                               _file(run.run_dir, judgment))
                    continue
                else:
                    self.count("judgments", "usable")
                kept.append(judgment)
            for model in asked:
                if model not in heard:
                    self.count("judgments", "unjudged", run.item, f"no {spec.name} judgment "
                               f"by {model}")
            out[spec.name] = kept
        return out

    # -- what a board shows ------------------------------------------------------------------
    def summary(self) -> str:
        """One line: the counts, zeros left out but for finished runs and usable judgments."""
        # degraded runs are a part of the finished ones, not another state
        degraded = f" ({self.runs['degraded']} degraded)" if self.runs["degraded"] else ""
        others = Counter({k: n for k, n in self.runs.items()
                          if k not in ("finished", "degraded", "duplicate")})
        runs = ", ".join([f"{self.runs['finished']} finished{degraded}",
                          *([_counts(others, RUN_STATES)] if +others else [])])
        judged = _counts(self.judgments, JUDGMENT_STATES, always="usable")
        # duplicates are selections, not items: beside the count of distinct items
        twice = f" (and {self.runs['duplicate']} again by another directory, counted once)" \
            if self.runs["duplicate"] else ""
        line = f"{self.label}: {self.selected} selected{twice}: {runs}; judgments: {judged}"
        if self.items:
            line += "; left out: " + _counts(self.items, ())
        return line

    def markdown(self) -> list[str]:
        """The summary line, then every item left out by name, one line per count and reason."""
        lines = [f"- {self.summary()}"]
        groups: dict[tuple[str, str, str], list[str]] = {}
        for n in self.named:
            groups.setdefault((n.section, n.what, n.reason), []).append(n.shown())
        for (section, what, reason), items in groups.items():
            kind = {"runs": "", "judgments": " judgment", "items": ""}[section]
            lines.append(f"  - {what}{kind} ({reason}): {', '.join(items)}")
        return lines

    def data(self) -> dict[str, Any]:
        return {"selected": self.selected, "runs": dict(self.runs),
                "judgments": dict(self.judgments), "items": dict(self.items),
                "named": [{"section": n.section, "what": n.what, "item": n.item,
                           "reason": n.reason, "file": n.file} for n in self.named]}

    @property
    def finished(self) -> int:
        return self.runs["finished"]

    def note(self) -> str | None:
        """The summary line when not every selected item finished with usable judgments (what
        a plot or a comparison carries from the accounting), else None."""
        owed = +Counter({k: n for k, n in self.judgments.items() if k != "usable"})
        if self.finished < self.selected or owed or +self.items:
            return f"Accounting: {self.summary()}"
        return None

    @classmethod
    def from_data(cls, label: str, data: dict[str, Any]) -> Ledger:
        """A ledger back from `data()` (a board's JSON), to render it again."""
        return cls(label=label, selected=data.get("selected", 0),
                   runs=Counter(data.get("runs", {})),
                   judgments=Counter(data.get("judgments", {})),
                   items=Counter(data.get("items", {})),
                   named=[Named(**n) for n in data.get("named", [])])


def _file(run_dir: Path, judgment: Judgment) -> str:
    return judgment_path(run_dir, judgment.judge, judgment.model).name


def _counts(counter: Counter, order: Sequence[str], always: str = "") -> str:
    names = [*order, *sorted(k for k in counter if k not in order)]
    shown = [f"{counter[k]} {k}" for k in names if counter[k] or k == always]
    return ", ".join(shown) or "none"


def accounting_markdown(ledgers: Sequence[Ledger]) -> list[str]:
    """Every configuration's ledger, under one heading."""
    lines = ["Accounting (every item each manifest selected; what is not on the board, and "
             "why):", ""]
    for ledger in ledgers:
        lines += ledger.markdown()
    return lines
