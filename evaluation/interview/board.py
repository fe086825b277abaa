"""The interview board: mean rating (1-5) per architecture x question category, with a seeded
95% bootstrap interval over answers and n, from an interview set's saved files only (its
manifest, answers and judgments; no run is read, no model called).

    report = interview_board(["runs/interviews"])        # a kit BoardReport
    report.markdown, report.data, report.plot

An answer's score is the mean of its usable ratings (one per judge model; `judges` keeps some);
a judge's fallback is counted and named, never averaged. Each architecture's accounting is the
kit's `Ledger` over the answers the manifest selected: answered or missing (not asked yet); an
answer the agent's model never gave (status fallback) is counted under "no usable answer" and
left out; judgments usable, fallback, unavailable, stale, unreadable or unjudged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from evaluation.kit import (
    MIN_UNITS,
    MIN_UNITS_WHY,
    BoardError,
    BoardReport,
    Column,
    FinishedRun,
    Ledger,
    Plot,
    PlotPoint,
    accounting_markdown,
    cluster_interval,
    manifest_data,
    markdown_table,
    test_doubles,
)
from sandbox.files import FileFormatError
from sandbox.interviews import ANSWERS, load_answer

from .judge import INTERVIEW_JUDGE, Answered

MANIFEST = "interview-set.json"
FORMAT = "interview-set"
ALL = "all"


class AnswerLedger(Ledger):
    """The kit's ledger, saying "answered" where a run ledger says "finished"."""

    def summary(self) -> str:
        head, sep, tail = super().summary().partition(" selected: ")
        return head + sep + tail.replace(" finished", " answered", 1)


def read_manifest(path: Path | str) -> dict[str, Any]:
    """An interview set's manifest; BoardError when `path` holds none."""
    path = Path(path)
    file = path / MANIFEST
    if not file.is_file():
        raise BoardError(f"{path} is not an interview set (no {MANIFEST}; write one with "
                         "`sandbox interview-set RUN... --out DIR`)")
    try:
        manifest = manifest_data(file)
    except (ValueError, FileFormatError) as exc:
        raise BoardError(f"{file}: not JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BoardError(f"{file}: not an interview set's manifest (format {FORMAT!r})")
    return manifest


def read_rated(out: Path, manifest: dict[str, Any], ledgers: dict[str, Ledger],
               judges: Sequence[str] | None) -> list[tuple[str, str, float, str, str]]:
    """(architecture, category, score, agent, question) of every selected answer with a usable
    rating (the agent: the run's agent that answered, the unit an interval resamples); every
    selected answer and judgment counted in its architecture's ledger."""
    owed = list(manifest.get("judges") or [])
    only = list(judges) if judges else owed
    rated = []
    for entry in manifest.get("selected", []):
        arch, item = entry["architecture"], entry["item"]
        ledger = ledgers.setdefault(arch, AnswerLedger(arch))
        ledger.selected += 1
        folder = out / ANSWERS / item
        answer = load_answer(folder)
        if answer is None:
            ledger.count("runs", "missing", item, "not answered yet (or its answer.json does "
                                                  "not read)")
            continue
        ledger.runs["finished"] += 1
        if answer.status != "ok":
            ledger.count("items", "no usable answer", item,
                         f"the agent's model gave none ({answer.status})")
            continue
        answered = Answered(folder, answer)
        kept = ledger.judgments_of(FinishedRun(item, folder, answered), [INTERVIEW_JUDGE],
                                   owed, only=only)
        ratings = [j.scores["rating"] for j in kept.get(INTERVIEW_JUDGE.name, [])
                   if j.usable and "rating" in j.scores]
        if ratings:
            rated.append((arch, answer.category or entry.get("category", ""), mean(ratings),
                          answer.agent, answer.question_id))
    return rated


def interview_board(dirs: Sequence[Path | str], *, judges: Sequence[str] | None = None,
                    seed: int = 0, resamples: int = 1000) -> BoardReport:
    """The board of one or more interview sets (their answers pooled by architecture)."""
    ledgers: dict[str, Ledger] = {}
    rated: list[tuple[str, str, float, str, str]] = []
    categories: list[str] = []
    heard: list[str] = []
    models: list[str] = []  # the answering agents' models, as each set's config records
    for path in map(Path, dirs):
        manifest = read_manifest(path)
        categories += manifest.get("categories", [])
        heard += manifest.get("judges", [])
        models.append(str((manifest.get("config") or {}).get("model")))
        rated += read_rated(path, manifest, ledgers, judges)
    if judges:
        unknown = [j for j in judges if j not in heard]
        if unknown:
            raise BoardError(f"no judge {', '.join(unknown)} in these interview sets; judges "
                             f"present: {', '.join(dict.fromkeys(heard)) or 'none'}")
    order = list(dict.fromkeys([*categories, *(r[1] for r in rated)]))
    rows = []
    for arch in ledgers:
        for category in [*order, ALL]:
            by_agent: dict[str, list[float]] = {}
            for a, c, s, agent, _ in rated:
                if a == arch and (category == ALL or c == category):
                    by_agent.setdefault(agent, []).append(s)
            values = [s for found in by_agent.values() for s in found]
            # The agents were sampled, then the questions put to each: resample both.
            ci = cluster_interval(list(by_agent.values()), seed=seed, resamples=resamples)
            rows.append({"architecture": arch, "category": category,
                         "rating": mean(values) if values else None,
                         "ci": list(ci) if ci else None,
                         "interval": f"{ci[0]:.2f}-{ci[1]:.2f}" if ci else None,
                         "n": len(values), "agents": len(by_agent)})
    used = list(dict.fromkeys(judges or heard))
    columns = [Column("architecture", "Architecture", None, "---"),
               Column("category", "Category", None, "---"), Column("rating", "Rating (1-5)"),
               Column("interval", "95% CI", None), Column("n", "n", None),
               Column("agents", "agents", None)]
    fallbacks = sum(ledger.judgments["fallback"] for ledger in ledgers.values())
    lines = [f"Interview ratings by architecture and category (1-5; judges: "
             f"{', '.join(used) or 'none'}; n = answers rated)", "", *markdown_table(columns, rows),
             "", f"95% bootstrap intervals ({resamples} resamples, seed {seed}): agents "
             "resampled, then the answers of each drawn agent (an agent's answers share its "
             f"memories, so they are not independent); {MIN_UNITS_WHY} (here: fewer than "
             f"{MIN_UNITS} agents gives '-'). An answer's rating is the mean of its judges' "
             "usable ratings."]
    if fallbacks:
        lines.append(f"{fallbacks} judgment(s) fell back (no usable answer from the judge): "
                     "counted below, left out of every mean.")
    lines += ["", *accounting_markdown(list(ledgers.values()))]
    data = {"format": "interview-board", "judges": used, "categories": order,
            "rows": [{k: v for k, v in r.items() if k != "interval"} for r in rows],
            "fallbacks": fallbacks, "seed": seed, "resamples": resamples,
            "accounting": {label: ledger.data() for label, ledger in ledgers.items()}}
    doubles = test_doubles([*models, *heard])
    notes = [f"{fallbacks} judgment(s) fell back, left out of every mean"] if fallbacks else []
    data["notes"], data["test_double"] = notes, doubles
    plot = Plot(title="Interview ratings by architecture and category",
                axis="mean rating (1-5)",
                points=[PlotPoint(f"{r['architecture']} / {r['category']}", r["rating"],
                                  tuple(r["ci"]) if r["ci"] else None, n=r["n"]) for r in rows],
                scale=(1, 5),
                interval=f"bars: 95% bootstrap interval, agents then answers resampled (seed "
                         f"{seed}, {resamples} resamples; none below {MIN_UNITS} agents)",
                notes=notes, test_double=doubles)
    return BoardReport(markdown="\n".join(lines) + "\n", data=data, plot=plot)
