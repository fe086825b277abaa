"""The STSS language level's board: the paper's Table 3 (LLM x agent rows; conversation and
summary; SR and GCSR; micro and macro), n per cell, 95% bootstrap intervals, and, where the
scenarios came from scored action-level runs, the section 5.3 side-by-side: the action-level
score and the language-level GCSR per task type.

Reads benchmark directories (their manifest, run headers and judgments); calls no model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from statistics import mean
from typing import Any

from evaluation.kit import (
    MIN_UNITS_WHY,
    BenchDir,
    Column,
    Ledger,
    Plot,
    PlotPoint,
    RowDirs,
    accounting_markdown,
    check_dirs,
    check_judges,
    markdown_table,
    pool_rows,
    pooling_notes,
    read_bench_dir,
)
from tasks.stss.schema import TaskType

from .aggregate import METRICS, Cell, Judged, by_scenario, cell, combine, groups
from .judge import JUDGES, LEVELS

MANIFEST = "stss_lang.json"


def read_judged(bench: BenchDir, judges: Sequence[str] | None = None,
                ledger: Ledger | None = None) -> tuple[list[Judged], int]:
    """The directory's finished conversations with their scores per level, and how many
    judgments fell back; every scenario the manifest selected is in `ledger`'s counts."""
    ledger = ledger or Ledger(bench.label)
    found = []
    for run in ledger.read_runs(bench, "stss_lang", only=judges):
        config = run.dialogue.config
        try:
            task = config["task"]
            task_id, task_type = task["id"], task["type"]
            kept = ledger.judgments_of(run, JUDGES, bench.judges, judges)
        except (KeyError, TypeError) as exc:
            ledger.refuse(run, f"not an STSS language-level scenario: its header has no {exc}")
            continue
        scores = {level: combine([j.scores for j in judged if j.usable])
                  for level, judged in kept.items()}
        source = config.get("source", {})
        found.append(Judged(item=run.item, task=task_id, task_type=task_type, scores=scores,
                            action_score=source.get("action_score"),
                            source_run=source.get("run", ""),
                            source_arch=source.get("architecture", "")))
    return found, ledger.judgments["fallback"]


def row_of(bench: BenchDir | RowDirs, conversations: list[Judged], seed: int,
           resamples: int) -> dict[str, Any]:
    """A row of Table 3: one directory, or a row of several run the same way (kit.rows; a
    sweep's seeds), whose label and what sets it apart are shown beside its agent."""
    row_dirs = bench if isinstance(bench, RowDirs) else RowDirs(bench.label, [bench])
    manifest = row_dirs.benches[0].manifest
    arch = manifest.get("options", {}).get("arch", "ga")
    seeds = sorted({b.manifest.get("seed", 0) for b in row_dirs.benches})
    agent = arch + (f" ({row_dirs.differs})" if row_dirs.differs else "")
    row: dict[str, Any] = {"label": row_dirs.label, "llm": manifest.get("roles", {}).get(
        "performer", "?"), "agent": agent, "arch": arch,
        "dir": ", ".join(str(b.path) for b in row_dirs.benches),
        "dirs": [str(b.path) for b in row_dirs.benches], "seeds": seeds}
    for level in LEVELS:
        for metric in METRICS:
            c: Cell = cell(groups(conversations, level, metric), seed=seed, resamples=resamples,
                           scenarios=by_scenario(conversations, level, metric))
            row[f"{level}_{metric}"] = asdict(c)
            row[f"{level}_{metric}_micro"] = c.micro
            row[f"{level}_{metric}_macro"] = c.macro
            row[f"{level}_n"] = f"{c.conversations} ({c.tasks})"
    return row


def _interval(ci) -> str:
    return "-" if ci is None else f"{ci[0]:.2f}-{ci[1]:.2f}"


def by_type(conversations: list[Judged], arch: str = "") -> dict[str, dict[str, Any]]:
    """Per task type: the action-level score of the harvested runs (each run once; those whose
    performer ran `arch` when there are any) and the language-level GCSR (micro) of the
    conversation and the summary."""
    out: dict[str, dict[str, Any]] = {}
    for kind in TaskType:
        mine = [c for c in conversations if c.task_type == kind.value]
        if not mine:
            continue
        scored = [c for c in mine if c.action_score is not None]
        scored = [c for c in scored if c.source_arch == arch] or scored
        runs = {c.source_run: c.action_score for c in scored}
        entry = {"action": mean(runs.values()) if runs else None, "action_runs": len(runs)}
        for level in LEVELS:
            values = [c.scores[level]["gcsr"] for c in mine if c.scores.get(level)]
            entry[f"{level}_gcsr"] = mean(values) if values else None
            entry[f"{level}_n"] = len(values)
        out[kind.value] = entry
    return out


def table3(dirs: Sequence[Path | str], *, judges: Sequence[str] | None = None, seed: int = 0,
           resamples: int = 1000) -> tuple[str, dict[str, Any], Plot]:
    """(Markdown, data, plot) of the language level over benchmark directories."""
    benches = [read_bench_dir(p, MANIFEST, "sandbox stss-lang", "STSS language-level")
               for p in dirs]
    check_dirs(benches)
    check_judges(benches, judges)
    rows, types, fallbacks, ledgers = [], {}, 0, []
    # Rows are (label, configuration) (kit.rows): a sweep's cells of one model, architecture
    # and set under several seeds are one row, each seed's conversation of a scenario a unit.
    pooled = pool_rows(benches, judges=judges)
    for found in pooled:
        ledger = Ledger(found.label)
        conversations = [c for bench in found.benches
                         for c in read_judged(bench, judges, ledger)[0]]
        fallbacks += ledger.judgments["fallback"]
        row = row_of(found, conversations, seed, resamples)
        row["selected"] = ledger.selected
        row["accounting"] = ledger.data()
        rows.append(row)
        ledgers.append(ledger)
        types[row["label"]] = by_type(conversations, row["arch"])
    short = {"conversation": "Conv.", "summary": "Summ."}
    value_cols = [Column(f"{level}_{metric}_{avg}", f"{short[level]} {metric.upper()} {avg}")
                  for level in LEVELS for metric in METRICS for avg in ("micro", "macro")]
    columns = [Column("llm", "LLM", None, "---"), Column("agent", "Agent", None, "---"),
               *value_cols, Column("conversation_n", "n conv. (tasks)", None),
               Column("summary_n", "n summ. (tasks)", None)]
    lines = ["STSS language level (the paper's Table 3 layout; n = conversations (tasks))", ""]
    table = markdown_table(columns, rows)
    lines += table
    ci_rows = [{"llm": r["llm"], "agent": r["agent"],
                **{f"{lv}_{m}_{a}": _interval(r[f"{lv}_{m}"][f"{a}_ci"])
                   for lv in LEVELS for m in METRICS for a in ("micro", "macro")}}
               for r in rows]
    ci_cols = [Column(c.key, c.header, None, c.align) for c in columns[:-2]]
    lines += ["", f"95% bootstrap intervals ({resamples} resamples, seed {seed}; micro over "
              f"conversations, macro over task means; {MIN_UNITS_WHY}: '-'):", "",
              *markdown_table(ci_cols, ci_rows)]
    type_cols = [Column("label", "Configuration", None, "---"), Column("type", "Task type", None,
                                                                        "---"),
                 Column("action", "Action score"), Column("action_runs", "runs", None),
                 Column("conversation_gcsr", "Conv. GCSR"), Column("conversation_n", "n", None),
                 Column("summary_gcsr", "Summ. GCSR"), Column("summary_n", "n", None)]
    type_rows = [{"label": label, "type": TaskType(kind).label, **entry}
                 for label, kinds in types.items() for kind, entry in kinds.items()]
    if type_rows:
        lines += ["", "Action level (score of the harvested runs) beside language level "
                  "(GCSR micro) per task type (the paper's section 5.3):", "",
                  *markdown_table(type_cols, type_rows)]
    if fallbacks:
        lines += ["", f"{fallbacks} judgment(s) fell back (no usable answer) and are left out."]
    pooled_seeds = [f"{r['llm']} {r['agent']}: seeds {', '.join(map(str, r['seeds']))} pooled "
                    "(n counts each seed's conversation of a scenario; the micro interval "
                    "draws a scenario with all its seeds)"
                    for r in rows if len(r["seeds"]) > 1]
    said = [*pooling_notes(pooled), *pooled_seeds]
    if said:
        lines += ["", *(f"- {line}" for line in said)]
    lines += ["", *accounting_markdown(ledgers)]
    data = {"rows": rows, "by_type": types, "fallbacks": fallbacks, "seed": seed,
            "resamples": resamples, "notes": said}
    plot = Plot(title="STSS language level: conversation GCSR (micro)", axis="GCSR",
                points=[PlotPoint(f"{r['llm']} {r['agent']}", r["conversation_gcsr_micro"],
                                  tuple(r["conversation_gcsr"]["micro_ci"])
                                  if r["conversation_gcsr"]["micro_ci"] else None,
                                  n=r["conversation_gcsr"]["conversations"])
                        for r in rows], scale=(0, 1),
                interval=f"bars: 95% bootstrap interval over conversations (seed {seed}, "
                         f"{resamples} resamples)")
    return "\n".join(lines) + "\n", data, plot
