"""One row per LLM call (`sandbox export --calls`; columns: `columns.CALL_COLUMNS`), from the
calls.jsonl of every unit an export holds (an interview set: its own calls.jsonl, the judges'
and the answers', under no item)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.log import CALLS, read_calls

from .prices import price_of
from .units import Export, role_of


def call_rows(export: Export) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows, what could not be read: a calls.jsonl missing from a run that ran, a cut line).
    Money: each run's calls priced as the export's units are (`export.prices`: the models
    file the run was made with, else the one given to `read_units`)."""
    prices = export.prices
    rows: list[dict[str, Any]] = []
    uncounted: list[str] = []
    sources: list[tuple[dict[str, Any], Path]] = []
    for benchmark, path in export.run_sets:
        if benchmark == "interview":
            sources.append(({"benchmark": benchmark, "run_set": path.name,
                             "run_set_dir": str(path), "item": None}, path))
    for unit in export.rows:
        if unit["benchmark"] != "interview" and unit.get("run_dir"):
            sources.append((unit, Path(unit["run_dir"])))
    for unit, run_dir in sources:
        if not (run_dir / CALLS).is_file():
            if run_dir.is_dir() and unit.get("calls") is not None:
                uncounted.append(f"{run_dir}/{CALLS}: missing")
            continue
        records, problems = read_calls(run_dir)
        uncounted += [f"{run_dir}: {p}" for p in problems]
        price_list = prices.of_run(run_dir)
        default = "town" if unit["benchmark"] == "stss" and not unit.get(
            "background_model") else ""
        for r in records:
            rows.append({
                "benchmark": unit["benchmark"], "run_set": unit["run_set"],
                "run_set_dir": unit["run_set_dir"], "item": unit.get("item"),
                "run_dir": str(run_dir), "seq": r.seq, "t": r.t,
                "role": role_of(r, default), "model": r.model, "endpoint": r.endpoint,
                "purpose": r.tag, "agent": r.agent, "tokens_in": r.prompt_tokens,
                "tokens_out": r.completion_tokens, "latency_s": r.latency_s,
                "cached": r.cached, "attempts": r.attempts, "retries": r.retries,
                "faults": list(r.faults), "money": price_of(r, price_list)})
    return rows, uncounted
