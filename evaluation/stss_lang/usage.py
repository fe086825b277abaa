"""The Table 3 board with what it cost: Table 3 over the benchmark directories (one per
architecture), then the calls and tokens of the performer, the partner and the judges per
scenario, from the runs' calls.jsonl. Reads run directories only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evaluation.kit import BoardReport, RoleUsage, pool_rows, read_bench_dir, uncounted_note
from sandbox.log import RunFormatError, read_calls, read_header

from .board import MANIFEST, table3

ROLES = ("performer", "partner", "judge")


def table3_report(dirs: Sequence[Path | str], *, judges=None, seed: int = 0,
                  resamples: int = 1000, **_) -> BoardReport:
    """Table 3 alone, as a board report."""
    markdown, data, plot = table3(dirs, judges=judges, seed=seed, resamples=resamples)
    return BoardReport(markdown=markdown, data=data, plot=plot)


def usage_by_role(run_dirs: Sequence[Path], uncounted: list[str] | None = None
                  ) -> dict[str, dict[str, int]]:
    """Calls and tokens of the performer, the partner and the judges, from calls.jsonl (a call
    names its agent; the judges' calls are `judge:<model>`). What could not be read is added to
    `uncounted` (evaluation.kit.role_usage)."""
    usage = {role: RoleUsage() for role in ROLES}
    for run_dir in run_dirs:
        records, problems = read_calls(run_dir)
        if uncounted is not None:
            uncounted += problems
        try:
            config = read_header(run_dir).config
        except RunFormatError:
            config = {}  # a damaged header (the board names it): its calls go by agent name
        roles = {config.get("performer_agent"): "performer", config.get("partner_agent"):
                 "partner"}
        for record in records:
            role = "judge" if (record.agent or "").startswith("judge:") else \
                roles.get(record.agent, record.agent or record.tag)
            usage.setdefault(role, RoleUsage()).add(record)
    return {role: use.model_dump() for role, use in usage.items()}


def bench_dirs(paths: Sequence[Path | str]) -> list[Path]:
    """Benchmark directories: each path itself, or the architecture folders inside it."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / MANIFEST).is_file() or not path.is_dir():
            found.append(path)
            continue
        inside = sorted(p.parent for p in path.glob(f"*/{MANIFEST}"))
        found += inside or [path]
    return found


def table3_board(paths: Sequence[Path | str], **kwargs) -> BoardReport:
    """Table 3 over the directories, then calls and tokens per role and per scenario."""
    dirs = bench_dirs(paths)
    report = table3_report(dirs, **kwargs)
    lines = ["", "Calls and tokens per role (per scenario):", "",
             "| Configuration | Role | Calls | Tokens in | Tokens out |", "|---|---|--:|--:|--:|"]
    usage, uncounted = {}, []
    benches = [read_bench_dir(path, MANIFEST, "sandbox stss-lang", "STSS language-level")
               for path in dirs]
    for row in pool_rows(benches, judges=kwargs.get("judges")):  # as Table 3's rows
        runs = [r for bench in row.benches for r in bench.runs]
        n = max(len(runs), 1)
        usage[row.label] = usage_by_role(runs, uncounted)
        for role, use in usage[row.label].items():
            lines.append(f"| {row.label} | {role} | {use['calls'] / n:.1f} | "
                         f"{use['prompt_tokens'] / n:.0f} | {use['completion_tokens'] / n:.0f} |")
    lines += uncounted_note(uncounted)
    return BoardReport(markdown=report.markdown + "\n".join(lines) + "\n",
                       data={**report.data, "usage": usage, "usage_uncounted": uncounted},
                       plot=report.plot)
