"""RefuteBench's board: the paper's Tables 4-7 (models as rows, task families as columns, the
difference columns), each mean with n and a 95% bootstrap interval, over one or more benchmark
directories; the Fig. 6 curves as a PNG.

Rows are (label, configuration) (evaluation/kit/rows.py): directories of one label run the
same way (models, sampling, judges, items file, language, judge format) are one row, a
transient directory filling Tables 4-6 and a persistent one Table 7 (the task families, the
setting and C choose which dialogues run, not how). An item two of a row's directories hold
for one seed is read once, from the first given, and the accounting names the other
(`duplicate`); one directory given twice is refused. A label run in two configurations (two
models, two public 1.0 files) is a row each, named by what differs, whatever the order the
directories are given in. Nothing here calls a model.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.kit import (
    MIN_UNITS_WHY,
    RESAMPLES,
    Column,
    FinishedRun,
    Ledger,
    Plot,
    PlotPoint,
    accounting_markdown,
    check_dirs,
    check_judges,
    markdown_table,
    pool_rows,
    pooling_notes,
    read_bench_dir,
)
from sandbox.storage import write_atomic
from tasks.refutebench import FAMILIES, FAMILY_NAMES

from .judge import BENCHMARK, JUDGES, RefuteDialogue, refute_dialogue
from .metrics import (
    FIDELITY_CURVE,
    KEPT_CURVE,
    OVERALL,
    Scored,
    Tables,
    cell,
    metric_cell,
    scored,
    tables,
)
from .v1 import RULE, feedback_outcomes

MANIFEST = f"{BENCHMARK}.json"
COMMAND = f"sandbox {BENCHMARK}"
CONFLICT = "conflict"  # a 1.0 feedback slot whose every sense was already met (v1.py)
# Options that choose which dialogues run, not how: a label's transient and persistent
# directories, or its MT and Writing ones, fill one row's tables (kit.rows).
POOLED = ("tasks", "setting", "distractors")


@dataclass
class Row:
    label: str
    dirs: list[str] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)
    unfinished: int = 0
    tables: Tables | None = None
    ledger: Ledger | None = None
    differs: str = ""  # what sets it apart from its label's other configurations (kit.rows)

    @property
    def on_board(self) -> int:
        """Dialogues with at least one rating (a judged pair, or a 1.0 rule check)."""
        return sum(bool(s.ratings) for s in self.scored)


@dataclass
class Board:
    rows: list[Row]
    families: list[str]
    seed: int
    resamples: int
    notes: list[str] = field(default_factory=list)  # labels run in several configurations


def v1_left_out(d: RefuteDialogue) -> tuple[str, str]:
    """Why a 1.0 dialogue has nothing to check: (count, reason), from its `rule_feedback`
    events (tasks/refutebench: how each feedback slot went)."""
    outcomes = feedback_outcomes(d)
    if outcomes[CONFLICT]:
        return CONFLICT, "every sense of the feedback word was already in the answer (1.0's " \
                         "conflict): the dialogue stopped, no feedback to check"
    if not any(step.get("kind") == "refutation" for step in d.dialogue.config.get("plan", [])):
        return "no feedback turn", "the dialogue has no feedback turn (no feedback word in its " \
                                   "queries)"
    if outcomes["undecided"]:
        return "undecided", "run before the 1.0 rules recorded their feedback (no " \
                            "rule_feedback event): run it again in a new --out"
    if outcomes["skipped"] and not outcomes["given"]:
        return "no feedback turn", "every choice was already met, so no feedback was sent (as " \
                                   "the 1.0 reference does)"
    return "nothing to check", "no later request has the feedback's word"


def _read_row(row: Row, found, judges: Sequence[str] | None) -> None:
    """Every dialogue `found`'s manifest selected, into `row` or its ledger's counts."""
    for run in row.ledger.read_runs(found, BENCHMARK, only=judges):
        try:
            d = refute_dialogue(run.dialogue)
        except (KeyError, TypeError, ValueError) as exc:
            row.ledger.refuse(run, f"not a RefuteBench dialogue: its header has no {exc}")
            continue
        if d.setting == "v1":
            row.scored.append(_v1_scored(row.ledger, run, d))
            row.scored[-1].run_seed = found.manifest.get("seed", 0)
            continue
        if not d.complete:
            row.ledger.count("items", "incomplete", run.item, "the dialogue stops before its "
                             "last judged answer")
        kept = row.ledger.judgments_of(run, JUDGES, found.judges, judges)
        row.scored.append(scored(d, [j for found_ in kept.values() for j in found_]))
        row.scored[-1].item = run.item
        row.scored[-1].run_seed = found.manifest.get("seed", 0)


def _v1_scored(ledger: Ledger, run: FinishedRun, d: RefuteDialogue) -> Scored:
    done = scored(d)
    done.item = run.item
    if not done.ratings:
        what, reason = v1_left_out(d)
        ledger.count("items", what, run.item, reason)
    return done


def build_board(dirs: Sequence[Path | str], judges: Sequence[str] | None = None,
                seed: int = 0, resamples: int = RESAMPLES) -> Board:
    benches = [read_bench_dir(path, MANIFEST, COMMAND) for path in dirs]
    check_dirs(benches)
    check_judges(benches, judges)
    rows, pooled = [], pool_rows(benches, POOLED, judges)
    for found in pooled:
        row = Row(found.label, ledger=Ledger(found.label), differs=found.differs)
        for bench in found.benches:
            row.dirs.append(str(bench.path))
            _read_row(row, bench, judges)
        row.unfinished = row.ledger.runs["unfinished"] + row.ledger.runs["failed"]
        rows.append(row)
    present = {s.family for row in rows for s in row.scored}
    families = [f for f in FAMILIES if f in present]
    for row in rows:
        row.tables = tables(row.scored, families, seed, resamples)
    return Board(rows=rows, families=families, seed=seed, resamples=resamples,
                 notes=pooling_notes(pooled))


def _table(board: Board, title: str, metrics: Sequence[tuple[str, str]]) -> list[str]:
    columns = [Column("label", "Model", None, "---")]
    for family in board.families:
        for key, header in metrics:
            name = FAMILY_NAMES[family] + (f" {header}" if header else "")
            columns.append(Column(f"{family}.{key}", name, None))
    rows = []
    for row in board.rows:
        cells = {"label": row.label}
        for family in board.families:
            for key, _ in metrics:
                have = row.tables.cells[family].get(key)
                cells[f"{family}.{key}"] = have.text() if have is not None else "-"
        rows.append(cells)
    return [f"### {title}", "", *markdown_table(columns, rows), ""]


def _counts(board: Board) -> list[int]:
    return sorted({c for row in board.rows for c in row.tables.counts})


def v1_cells(board: Board) -> list[dict]:
    """Public 1.0 files, checked by rule: per configuration and file the share of checks met by
    each kind of feedback (the required translation; an email's greetings, signature, ...)
    and, when there are several kinds, by all of them; each a mean over the file's dialogues."""
    out = []
    for row in board.rows:
        by_file: dict[str, dict[str, list[tuple[str, float]]]] = {}
        for s in row.scored:
            if s.setting != "v1":
                continue
            rates = by_file.setdefault(s.seed.rsplit(":", 1)[0], {})
            for key, value in s.ratings.items():
                rates.setdefault(key, []).append((s.item, value))
        for file, rates in sorted(by_file.items()):
            kinds = sorted(k.split(".", 1)[1] for k in rates if k.startswith(RULE + "."))
            shown = [(f"{RULE}.{k}", k) for k in kinds]
            if len(kinds) > 1:
                shown.append((RULE, "all"))
            for key, name in shown:
                out.append({"label": row.label, "file": file, "feedback": name,
                            "met": cell([v for _, v in rates[key]], board.seed,
                                        board.resamples, [i for i, _ in rates[key]])})
    return out


def _v1_table(board: Board) -> list[str]:
    rows = [{**c, "met": c["met"].text()} for c in v1_cells(board)]
    if not rows:
        return []
    columns = [Column("label", "Model", None, "---"), Column("file", "1.0 file", None, "---"),
               Column("feedback", "feedback", None, "---"),
               Column("met", "later requests that meet it (share)", None)]
    return ["### RefuteBench 1.0 files (rule-checked, no judge)", "",
            *markdown_table(columns, rows), ""]


def board_markdown(board: Board) -> str:
    v1 = _v1_table(board)
    ledgers = [row.ledger for row in board.rows if row.ledger is not None]
    if not board.rows or not (board.families or v1):
        accounted = ["", *accounting_markdown(ledgers)] if ledgers else []
        return "\n".join(["No judged RefuteBench dialogues yet.", *accounted]) + "\n"
    transient = any(s.setting == "transient" for row in board.rows for s in row.scored)
    lines = [] if not transient else [
             _table(board, "Table 4: overall transient (mean of R(a_k, r_k), k = 1..3)",
                    [(OVERALL, "")]),
             _table(board, "Table 5: first refutation at Turn1 and Turn3 (R(a_1, r_1), "
                           "R(a_3, r_1))",
                    [("revision_1", "Turn1"), ("kept_3", "Turn3"), ("turn_delta", "Δ")]),
             _table(board, "Table 6: the original task, Initial and Final (R(q, a_0), "
                           "R(q, a_3))",
                    [("fidelity_0", "Initial"), ("fidelity_3", "Final"),
                     ("task_delta", "Δ")])]
    counts = _counts(board)
    if counts:
        metrics = [(f"c{c}", f"C={c}") for c in counts]
        if len(counts) >= 2:
            metrics.append(("c_delta", "Δ"))
        lines.append(_table(board, "Table 7: persistent refutation after C unrelated requests "
                                   "(C=0: the direct answer; C>0: the re-asked query)",
                            metrics))
    if v1:
        lines.append(v1)
    out = [line for block in lines for line in block]
    for row in board.rows:
        t = row.tables
        selected = row.ledger.selected if row.ledger else len(row.scored)
        note = f"{row.label}: {row.on_board} of {selected} dialogues on the board"
        note += f", {t.missing} of {t.judged} judgments without a usable rating (left out)"
        out.append(f"- {note}")
    out += [f"- {note}" for note in board.notes]
    out.append(f"- means over dialogues with a seeded 95% bootstrap interval "
               f"(seed {board.seed}, {board.resamples} resamples); Δ = first - second mean, "
               f"its interval resamples seeds; {MIN_UNITS_WHY} (a mean with n only)")
    if ledgers:
        out += ["", *accounting_markdown(ledgers)]
    return "\n".join(out) + "\n"


def board_data(board: Board) -> dict:
    return {"families": board.families, "seed": board.seed, "resamples": board.resamples,
            "notes": board.notes,
            "rows": [{"label": row.label, "dirs": row.dirs, "differs": row.differs,
                      "dialogues": len(row.scored),
                      "on_board": row.on_board,
                      "accounting": row.ledger.data() if row.ledger else None,
                      "unfinished": row.unfinished, "missing": row.tables.missing,
                      "judged": row.tables.judged,
                      "cells": {family: {k: c.as_dict() for k, c in cells.items()}
                                for family, cells in row.tables.cells.items()}}
                     for row in board.rows],
            "v1": [{**c, "met": c["met"].as_dict()} for c in v1_cells(board)]}


def board_json(board: Board) -> str:
    return json.dumps(board_data(board), indent=2, ensure_ascii=False)


def board_plot(board: Board) -> Plot:
    """Each configuration's overall transient rating over every family (or, for a persistent
    directory alone, its C=max rating)."""
    points = []
    for row in board.rows:
        metric, axis_note = OVERALL, "overall transient"
        got = metric_cell(row.scored, metric, board.seed, board.resamples)
        if got.mean is None:
            c = max((s.c for s in row.scored), default=0)
            metric, axis_note = f"c{c}", f"persistent C={c}"
            got = metric_cell(row.scored, metric, board.seed, board.resamples)
        label = row.label if axis_note == "overall transient" else f"{row.label} ({axis_note})"
        points.append(PlotPoint(label, got.mean, (got.lo, got.hi) if got.lo is not None
                                else None, n=got.n))
    points.sort(key=lambda p: -1 if p.score is None else p.score, reverse=True)
    return Plot("RefuteBench: compliance with refutations", "mean rating (1-5)", points,
                scale=(1, 5), interval=f"bars: 95% bootstrap interval over dialogues (seed "
                                       f"{board.seed}, {board.resamples} resamples)")


MARKERS, STYLES = "osD^v", ("-", "--", ":", "-.")


@dataclass
class Series:
    """One configuration's line of a curves panel, as drawn."""

    label: str  # with n, and the line it coincides with, if any
    xs: list[float]
    means: list[float]
    bands: list[tuple[float, float, float]]  # (x, lo, hi)


def curve_series(board: Board, names, start: int, family: str) -> list[Series]:
    """Every configuration's line of one panel. Lines of equal values would hide each other:
    each is shifted a little along the turns (dodged) and a line equal to an earlier one says
    so in its label, so no series disappears under another."""
    found: list[tuple[str, list[tuple[int, Any]]]] = []
    for row in board.rows:
        rows = row.scored if family == "all" else [s for s in row.scored if s.family == family]
        cells = [metric_cell(rows, n, board.seed, board.resamples) for n in names]
        shown = [(start + i, c) for i, c in enumerate(cells) if c.mean is not None]
        if shown:
            found.append((row.label, shown))
    step = 0.08 if len(found) > 1 else 0.0
    out: list[Series] = []
    for i, (label, shown) in enumerate(found):
        dodge = (i - (len(found) - 1) / 2) * step
        means = [c.mean for _, c in shown]
        same = next((s.label.split(" (n=")[0] for s, (_, earlier) in zip(out, found, strict=False)
                     if [c.mean for _, c in earlier] == means
                     and [x for x, _ in earlier] == [x for x, _ in shown]), None)
        out.append(Series(
            f"{label} (n={max(c.n for _, c in shown)})" + (f", same as {same}" if same else ""),
            [x + dodge for x, _ in shown], means,
            [(x + dodge, c.lo, c.hi) for x, c in shown if c.lo is not None]))
    return out


def curves_png(board: Board, path: Path | str, family: str = "mt") -> Path:
    """Fig. 6: (a) R(a_k, r_1) for k = 1..3 and (b) R(q, a_k) for k = 0..3, one line per
    configuration, for one task family ('all' pools the families), each point with its 95%
    bootstrap interval as a band and the legend naming n (dialogues)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    panels = [(axes[0], KEPT_CURVE, 1, "(a) first refutation kept: R(a_k, r_1)"),
              (axes[1], FIDELITY_CURVE, 0, "(b) original task: R(q, a_k)")]
    for ax, names, start, title in panels:
        for i, series in enumerate(curve_series(board, names, start, family)):
            line, = ax.plot(series.xs, series.means, marker=MARKERS[i % len(MARKERS)],
                            linestyle=STYLES[i % len(STYLES)], label=series.label)
            if series.bands:
                ax.fill_between(*zip(*series.bands, strict=True), color=line.get_color(),
                                alpha=0.15, linewidth=0)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("turn k")
        ax.set_xticks(range(start, start + len(names)))
        ax.set_ylim(0.8, 5.2)
        ax.set_ylabel("mean rating (1-5)")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    shown = "all tasks" if family == "all" else FAMILY_NAMES.get(family, family)
    fig.suptitle(f"RefuteBench curves ({shown})", fontsize=11)
    fig.text(0.99, 0.01, f"bands: 95% bootstrap interval over dialogues (seed {board.seed}, "
             f"{board.resamples} resamples)", ha="right", va="bottom", fontsize=7, color="#555")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path = Path(path)
    image = io.BytesIO()
    fig.savefig(image, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    write_atomic(path, image.getvalue())
    return path
