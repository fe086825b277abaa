"""The SimulBench board: one row per configuration (model under test) with its mean 1-10 score
on All and Hard (with bootstrap 95% intervals), LastOnly, FirstChan, SubseqChan, Stateless and
Stateful over FirstChan (the paper's Table 5 columns), then the means by type over all scripts,
by turn (Table 4), by request type and by task (Table 2). Read from saved judgments only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evaluation.kit import (
    MIN_UNITS_WHY,
    BenchDir,
    BoardReport,
    Column,
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
from sandbox.judgments import Judgment
from tasks.simulbench import load_tasks

from .aggregate import ScriptScore, SubsetMean, grouped_means, subset_means
from .judges import SCORE, SCORE_JUDGE

MANIFEST = "simulbench.json"
BENCHMARK = "simulbench"
UNKNOWN_TYPE = "?"


def _out_of_range(judgment: Judgment) -> tuple[str, str] | None:
    """A rating the judge said outside 1..10 is counted and left out (the original keeps it)."""
    if judgment.flags.get("out_of_range"):
        said = (judgment.answer or {}).get("score") if isinstance(judgment.answer, dict) \
            else None
        return "out of range", f"rated {said if said is not None else '?'}, outside 1-10"
    rating = judgment.scores.get(SCORE)
    if rating is not None and not 1 <= rating <= 10:
        return "out of range", f"rated {rating:g}, outside 1-10"
    return None


def read_scores(bench: BenchDir, ledger: Ledger, judges: Sequence[str] | None = None,
                request_types: dict[str, str] | None = None) -> list[ScriptScore]:
    """Every answered script's score (None when no judge rated it usably); every script the
    manifest selected and every judgment it was owed is in `ledger`'s counts."""
    scores: list[ScriptScore] = []
    for run in ledger.read_runs(bench, BENCHMARK, only=judges):
        config = run.dialogue.config
        try:
            script = config["script"]
            source, kind, turn, act = (script["source_id"], script["type"],
                                       script["turn_num"], script["act"])
        except (KeyError, TypeError) as exc:
            ledger.refuse(run, f"not a SimulBench answer: its header has no script {exc}")
            continue
        found = ledger.judgments_of(run, [SCORE_JUDGE], bench.judges, judges,
                                    leave_out=_out_of_range)[SCORE]
        ratings = [j.scores[SCORE] for j in found if j.usable]
        scores.append(ScriptScore(
            item=run.item, category=config.get("category") or "lastonly", type=kind,
            turn_num=turn, act=act, request_type=(request_types or {}).get(source, UNKNOWN_TYPE),
            score=sum(ratings) / len(ratings) if ratings else None))
    return scores


MAIN = ["all", "hard", "lastonly", "firstchan", "subseqchan", "stateless_firstchan",
        "stateful_firstchan"]
HEADERS = {"all": "All", "hard": "Hard", "lastonly": "LastOnly", "firstchan": "FirstChan",
           "subseqchan": "SubseqChan", "stateless_firstchan": "Stateless*",
           "stateful_firstchan": "Stateful*", "stateless": "Stateless (all)",
           "stateful": "Stateful (all)"}


def _ci(m: SubsetMean) -> str | None:
    return None if m.ci is None else f"[{m.ci[0]:.2f}, {m.ci[1]:.2f}]"


def build_board(dirs: Sequence[Path | str], judges: Sequence[str] | None = None, seed: int = 0,
                resamples: int = 1000, request_types: dict[str, str] | None = None
                ) -> dict[str, Any]:
    rows = []
    benches = [read_bench_dir(path, MANIFEST, "sandbox simulbench") for path in dirs]
    check_dirs(benches)
    check_judges(benches, judges)
    # Rows are (label, configuration) (kit.rows): a label's directories run the same way pool,
    # a label run two ways is a row each, named by what differs.
    pooled = pool_rows(benches, judges=judges)
    for row in pooled:
        ledger = Ledger(row.label)
        scores = [s for found in row.benches
                  for s in read_scores(found, ledger, judges, request_types)]
        means = subset_means(scores, seed, resamples)
        rows.append({
            "label": row.label, "dir": ", ".join(str(b.path) for b in row.benches),
            "dirs": [str(b.path) for b in row.benches], "differs": row.differs,
            "selected": ledger.selected, "scripts": len(scores),
            "scored": sum(s.score is not None for s in scores),
            "unknown_request_types": sum(s.request_type == UNKNOWN_TYPE for s in scores),
            "accounting": ledger.data(),
            "subsets": {k: asdict(m) for k, m in means.items()},
            "by_turn": {k: asdict(m) for k, m in grouped_means(
                [s for s in scores if s.turn_num > 0], lambda s: s.turn_num).items()},
            "by_request_type": {k: asdict(m) for k, m in grouped_means(
                scores, lambda s: s.request_type).items()},
            "by_task": {k: asdict(m) for k, m in grouped_means(scores, lambda s: s.act).items()},
        })
    rows.sort(key=lambda r: -(r["subsets"]["all"]["mean"] or -1))
    return {"rows": rows, "judges": list(judges) if judges else "all", "seed": seed,
            "warnings": pooling_notes(pooled)}


def _flat(row: dict) -> dict[str, Any]:
    judged = row["accounting"]["judgments"]
    out = {"label": row["label"], "scored": f"{row['scored']}/{row['selected']}",
           "fallback": judged.get("fallback", 0), "out_of_range": judged.get("out of range", 0)}
    for key, m in row["subsets"].items():
        out[key] = m["mean"]
        out[f"{key}_ci"] = None if m["ci"] is None else \
            f"[{m['ci'][0]:.2f}, {m['ci'][1]:.2f}]"
    return out


def board_markdown(board: dict[str, Any]) -> str:
    from evaluation.kit import markdown_table

    flat = [_flat(r) for r in board["rows"]]
    columns = [Column("label", "Model", None, "---"), Column("all", "All"),
               Column("all_ci", "95% CI", None), Column("hard", "Hard"),
               Column("hard_ci", "95% CI", None)]
    columns += [Column(k, HEADERS[k]) for k in MAIN[2:]]
    columns += [Column("scored", "Scored", None), Column("fallback", "Unparsed", None),
                Column("out_of_range", "Out of range", None)]
    lines = markdown_table(columns, flat)
    lines += ["", "Mean judge rating 1-10; Hard = FirstChan + SubseqChan; * over FirstChan "
              "only (the paper's Table 5). Scored: scripts with a usable rating / scripts the "
              "manifest selected. Unparsed: judgments with no usable rating ([[n]], or the json "
              "format's object) after the re-asks; out of range: a rating outside 1-10. Both "
              "are left out of the means."]
    if any(m["ci"] is None and m["n"] for r in board["rows"] for m in r["subsets"].values()):
        lines += [f"A mean without an interval: {MIN_UNITS_WHY}."]
    lines += [""]
    by_type = [Column("label", "Model", None, "---"),
               Column("stateless", HEADERS["stateless"]), Column("stateful", HEADERS["stateful"])]
    turns = sorted({t for r in board["rows"] for t in r["by_turn"]})
    for r, f in zip(board["rows"], flat, strict=True):
        for t in turns:
            f[f"turn{t}"] = r["by_turn"].get(t, {}).get("mean")
    by_type += [Column(f"turn{t}", f"Hard turn {t}") for t in turns]
    lines += ["By type over all scripts, and Hard scripts by turn (Table 4):", ""]
    lines += markdown_table(by_type, flat)
    for title, key in (("By request type", "by_request_type"), ("By task", "by_task")):
        groups = sorted({g for r in board["rows"] for g in r[key]})
        if not groups:
            continue
        cols = [Column("group", title[3:].capitalize(), None, "---")]
        cols += [Column(f"c{i}", r["label"]) for i, r in enumerate(board["rows"])]
        table = [{"group": g, **{f"c{i}": r[key].get(g, {}).get("mean")
                                 for i, r in enumerate(board["rows"])}} for g in groups]
        lines += ["", f"{title}:", ""] + markdown_table(cols, table)
    unknown = [f"{r['label']} {r['unknown_request_types']}" for r in board["rows"]
               if r.get("unknown_request_types")]
    if unknown:
        lines += ["", f"Request type {UNKNOWN_TYPE}: scripts whose task is in no task file given "
                  f"({'; '.join(unknown)}); pass --tasks FILE (the task file they were run "
                  "with is used when its manifest names one)."]
    lines += [f"Warning: {w}" for w in board.get("warnings") or []]
    ledgers = [Ledger.from_data(r["label"], r["accounting"]) for r in board["rows"]]
    lines += ["", *accounting_markdown(ledgers)]
    return "\n".join(lines) + "\n"


PLOTTED = ["all", "hard", "lastonly", "firstchan", "subseqchan"]  # the README's subsets


def board_plot(board: dict[str, Any]) -> Plot:
    """Every configuration's mean on All, Hard and each category, with its interval and n
    (a subset a configuration has no script of is left out)."""
    points = []
    for r in board["rows"]:
        for key in PLOTTED:
            m = r["subsets"].get(key)
            if m is None or (m["mean"] is None and key != "all"):
                continue
            points.append(PlotPoint(f"{r['label']}: {HEADERS[key]}", m["mean"],
                                    tuple(m["ci"]) if m["ci"] else None, n=m["n"]))
    return Plot("SimulBench: mean judge rating by subset", "rating 1-10", points,
                scale=(1, 10), interval=f"bars: 95% bootstrap interval over scripts (seed "
                                        f"{board.get('seed', 0)})")


def request_types(*tasks_files: str | None) -> dict[str, str]:
    """source_id -> request_type, from our built-in tasks and the task files given."""
    found = {t.id: t.request_type for t in load_tasks(None)}
    for tasks_file in tasks_files:
        if tasks_file:
            found.update({t.id: t.request_type for t in load_tasks(tasks_file)})
    return found


def run_task_files(dirs: Sequence[Path | str]) -> list[str]:
    """The task files the answer directories were run with (`--tasks`, in their manifests),
    those still where they were."""
    files = []
    for path in dirs:
        found = read_bench_dir(path, MANIFEST, "sandbox simulbench")
        options = found.manifest.get("options") or {}
        if options.get("tasks") and Path(options["tasks"]).is_file():
            files.append(options["tasks"])
    return list(dict.fromkeys(files))


def answers_report(dirs: Sequence[Path | str], judges: Sequence[str] | None = None,
                   seed: int = 0, resamples: int = 1000, tasks: str | None = None
                   ) -> BoardReport:
    """The board (`sandbox simulbench-board`) as a report: its Markdown, data and plot. The
    request types come from `tasks`, else from each directory's own task file, and our
    tasks."""
    files = [tasks] if tasks else run_task_files(dirs)
    board = build_board(dirs, judges=judges, seed=seed, resamples=resamples,
                        request_types=request_types(*files))
    return BoardReport(markdown=board_markdown(board), data=board, plot=board_plot(board))


def collection_board(rows: list[dict[str, Any]], ledgers: Sequence[Ledger]
                     ) -> tuple[str, Plot]:
    """The collection board (`simulbench-collect-board`): per simulator its dialogues, how many
    were challenged, the scripts they give by category, judge fallbacks and the user agent's
    strategies; then the accounting; and the plot of the share challenged."""
    columns = [Column("label", "Simulator", None, "---"), Column("dialogues", "Dialogues", None),
               Column("challenged", "Challenged", None), Column("scripts", "Scripts", None),
               Column("lastonly", "LastOnly", None), Column("firstchan", "FirstChan", None),
               Column("subseqchan", "SubseqChan", None),
               Column("fallbacks", "Judge fallbacks", None),
               Column("unjudged", "Unjudged", None),
               Column("strategies", "User strategies", None)]
    markdown = "\n".join(markdown_table(columns, rows)) + \
        "\n\nNext: sandbox simulbench-extract DIR --out scripts.jsonl\n\n" + \
        "\n".join(accounting_markdown(ledgers)) + "\n"
    share = [PlotPoint(r["label"], r["challenged"] / r["dialogues"] if r["dialogues"] else None)
             for r in rows]
    return markdown, Plot("SimulBench collection", "share of challenged dialogues", share,
                          scale=(0, 1))
