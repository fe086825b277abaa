"""The STSS language level on the kit: a harvested scenario set played by a performer (the
model and architecture under test) and a partner (a vanilla generative agent), judged on the
conversation and on the partner's summary. One benchmark directory per architecture:

    OUT/<arch>/stss_lang.json, OUT/<arch>/runs/<scenario id>/...

`sandbox stss-lang SET --arch ga --arch ga_tdp ...` runs each into OUT/<arch> and prints the
Table 3 board over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.kit import read_bench_dir
from evaluation.stss_lang import JUDGE_SAMPLING, JUDGES, MANIFEST, table3
from sandbox.llm import CallRecord
from sandbox.log import CALLS, RunFormatError, read_header
from tasks.stss_lang import BENCHMARK, PARTNER, PERFORMER, StssLangScenario, scenario_items

from .benchmark import Benchmark, BoardReport

ROLES = ("performer", "partner", "judge")


def _scenario(item, item_id: str, cast, options: dict[str, Any]) -> StssLangScenario:
    return StssLangScenario(item, cast, architecture=options["arch"],
                            embedder=options.get("embedder"))


def _board(dirs: Sequence[Path | str], *, judges=None, seed: int = 0, resamples: int = 1000,
           **_) -> BoardReport:
    markdown, data, plot = table3(dirs, judges=judges, seed=seed, resamples=resamples)
    return BoardReport(markdown=markdown, data=data, plot=plot)


STSS_LANG = Benchmark(
    name=BENCHMARK, title="STSS language level", roles=[PERFORMER, PARTNER],
    under_test="performer", load_items=lambda path, options: scenario_items(path),
    scenario=_scenario, judges=JUDGES, judge_sampling=JUDGE_SAMPLING, board=_board,
    item_key="item", items_option="set", items_help="a scenario set (sandbox stss-harvest)",
    options={"arch": "ga", "embedder": None},
    option_help={"arch": "the performer's architecture",
                 "embedder": "memory embedder [default: the one of the harvested run]"},
    noun="conversations", item_noun="scenarios")


def usage_by_role(run_dirs: Sequence[Path]) -> dict[str, dict[str, int]]:
    """Calls and tokens of the performer, the partner and the judges, from calls.jsonl (a call
    names its agent; the judges' calls are `judge:<model>`)."""
    usage = {role: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0} for role in ROLES}
    for run_dir in run_dirs:
        path = Path(run_dir) / CALLS
        if not path.is_file():
            continue
        try:
            config = read_header(run_dir).config
        except RunFormatError:
            config = {}  # a damaged header (the board names it): its calls go by agent name
        roles = {config.get("performer_agent"): "performer", config.get("partner_agent"):
                 "partner"}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = CallRecord.model_validate_json(line)
            except ValueError:
                continue
            role = "judge" if (record.agent or "").startswith("judge:") else \
                roles.get(record.agent, record.agent or record.tag)
            have = usage.setdefault(role, {"calls": 0, "prompt_tokens": 0,
                                           "completion_tokens": 0})
            have["calls"] += 1
            have["prompt_tokens"] += record.prompt_tokens
            have["completion_tokens"] += record.completion_tokens
    return usage


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


def board(paths: Sequence[Path | str], **kwargs) -> BoardReport:
    """Table 3 over the directories, then calls and tokens per role and per scenario."""
    dirs = bench_dirs(paths)
    report = _board(dirs, **kwargs)
    lines = ["", "Calls and tokens per role (per scenario):", "",
             "| Configuration | Role | Calls | Tokens in | Tokens out |", "|---|---|--:|--:|--:|"]
    usage = {}
    for path in dirs:
        bench = read_bench_dir(path, MANIFEST, "sandbox stss-lang", "STSS language-level")
        n = max(len(bench.runs), 1)
        usage[bench.label] = usage_by_role(bench.runs)
        for role, use in usage[bench.label].items():
            lines.append(f"| {bench.label} | {role} | {use['calls'] / n:.1f} | "
                         f"{use['prompt_tokens'] / n:.0f} | {use['completion_tokens'] / n:.0f} |")
    return BoardReport(markdown=report.markdown + "\n".join(lines) + "\n",
                       data={**report.data, "usage": usage}, plot=report.plot)
