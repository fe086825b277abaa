"""Benchmark of RefuteBench on one model in all three roles (model under test, refuter, judge):
a quick transient run and a quick persistent run (--every K keeps one seed in K of each task
family), then per dialogue the calls and tokens of each role, beside the paper's Table 2 token
statistics. Printed from one run.

    .venv/bin/python bench/refutebench.py                       # embedded model, --every 27
    .venv/bin/python bench/refutebench.py --tasks mt            # MT only: 1 + 2 dialogues
    .venv/bin/python bench/refutebench.py --model scripted/refutebench --every 1
    .venv/bin/python bench/refutebench.py --tasks mt --judge-format json   # schema-bound judge

A 135M model's ratings mean nothing about RefuteBench: this measures what a run costs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.app.suites.benchmark import (  # noqa: E402
    Configuration,
    ModelPool,
    board_report,
    run_benchmark,
)
from sandbox.llm import LLMSettings  # noqa: E402
from tasks.refutebench import load_items  # noqa: E402
from tasks.refutebench.plugin import REFUTEBENCH  # noqa: E402

# The paper's Table 2: #Turns (messages), #Avg Turn Token, #Avg Eval. Token (per dialogue).
PAPER = {("transient", "mt"): (8, 178.1, 98.6e3), ("transient", "summ"): (8, 235.1, 137.9e3),
         ("transient", "writing"): (8, 336.5, 75.8e3),
         ("persistent", "mt"): (12, 152.6, 26.1e3), ("persistent", "summ"): (12, 228.7, 41.5e3),
         ("persistent", "writing"): (12, 249.5, 45.0e3)}


def per_dialogue(out: Path) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(setting, family) -> measure -> values, one per dialogue."""
    roles = REFUTEBENCH.roles_by_tag()
    found: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run_dir in sorted((out / "runs").iterdir()):
        config = json.loads((run_dir / "header.json").read_text())["config"]
        key = (config["setting"], config["family"])
        calls: dict[str, int] = defaultdict(int)
        tokens: dict[str, int] = defaultdict(int)
        said = 0
        latency = 0.0
        for line in (run_dir / "calls.jsonl").read_text().splitlines():
            call = json.loads(line)
            role = roles.get(call["tag"], call["tag"])
            calls[role] += 1
            tokens[role] += call["prompt_tokens"] + call["completion_tokens"]
            latency += call["latency_s"]
            if role in ("model", "refuter"):
                said += call["completion_tokens"]
        messages = len(config["plan"])
        row = found[key]
        row["messages"].append(messages)
        # user turns of the query, requests and re-ask are not generated: a message's tokens
        # here are the generated ones over the generated messages
        row["generated tokens per message"].append(
            said / max(1, calls["model"] + calls["refuter"]))
        for role in ("model", "refuter", "judge"):
            row[f"{role} calls"].append(calls[role])
            row[f"{role} tokens"].append(tokens[role])
        row["LLM seconds"].append(latency)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local/smollm2-135m",
                        help="the model of every role [default: %(default)s]")
    parser.add_argument("--every", type=int, default=27,
                        help="keep one seed in K per family [default: %(default)s]")
    parser.add_argument("--max-tokens", type=int, default=256,
                        help="answer budget of the model under test [default: %(default)s]")
    parser.add_argument("--judge-max-tokens", type=int, default=128,
                        help="answer budget of each judgment [default: %(default)s]")
    parser.add_argument("--judge-format", choices=("text", "json"), default="text",
                        help="how the evaluator answers: [[n]] (the paper's) or a schema-bound "
                             "JSON object [default: %(default)s]")
    parser.add_argument("--tasks", default="mt,summ,writing",
                        help="task families, comma-separated [default: %(default)s]")
    parser.add_argument("--keep", type=Path, help="keep the benchmark directories here")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="refutebench-bench-"))
    pool = ModelPool(LLMSettings())
    sampling = {r.name: r.sampling for r in REFUTEBENCH.roles}
    sampling["model"] = sampling["model"].model_copy(update={"max_tokens": args.max_tokens})
    judge_sampling = REFUTEBENCH.judging.sampling.model_copy(
        update={"max_tokens": args.judge_max_tokens})
    walls = {}
    for setting in ("transient", "persistent"):
        options = {**REFUTEBENCH.defaults(), "setting": setting, "tasks": args.tasks}
        items = load_items(None, options)
        started = time.perf_counter()
        report = run_benchmark(REFUTEBENCH, root / setting, items, pool, Configuration(
            models={"model": args.model, "refuter": args.model}, sampling=sampling,
            judges=[args.model], judge_sampling=judge_sampling, every=args.every,
            options=options, judge_options={"judge_format": args.judge_format}))
        walls[setting] = (time.perf_counter() - started, report)
    print(f"model {args.model} in every role; tasks {args.tasks}; --every {args.every}; "
          f"judge format {args.judge_format}, max tokens {args.judge_max_tokens}; model max tokens "
          f"{args.max_tokens}; directories in {root}\n")
    for setting, (wall, report) in walls.items():
        print(f"{setting}: {report.runs_made} dialogues, {report.judged.made} judgments "
              f"({report.judged.fallbacks} without a rating), wall {wall:.1f} s "
              f"({wall / max(1, report.runs_made):.1f} s per dialogue), "
              f"{len(report.failures)} failed")
    print("\nper dialogue (mean), beside the paper's Table 2:\n")
    print("| setting | task | n | messages (paper) | gen. tokens / message (paper turn tokens) "
          "| model calls / tokens | refuter calls / tokens | judge calls / tokens (paper eval "
          "tokens) | LLM s |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for setting in ("transient", "persistent"):
        found = per_dialogue(root / setting)
        for (s, family), row in sorted(found.items()):
            turns, turn_tokens, eval_tokens = PAPER[(s, family)]
            m = {k: mean(v) for k, v in row.items()}
            print(f"| {s} | {family} | {len(row['messages'])} | {m['messages']:.0f} ({turns}) "
                  f"| {m['generated tokens per message']:.0f} ({turn_tokens}) "
                  f"| {m['model calls']:.0f} / {m['model tokens']:.0f} "
                  f"| {m['refuter calls']:.0f} / {m['refuter tokens']:.0f} "
                  f"| {m['judge calls']:.1f} / {m['judge tokens']:.0f} ({eval_tokens:.0f}) "
                  f"| {m['LLM seconds']:.0f} |")
    print()
    print(board_report(REFUTEBENCH, [root / "transient", root / "persistent"]).markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
