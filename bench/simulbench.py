"""Benchmark of SimulBench on one model (the embedded one by default) in every role: a quick
collection (--collect-every K of our 120 task dialogues), extraction, answering and the 1-10
judge over the extracted scripts, and a pairwise comparison against the scripted weak double
(its answers cost no model time). Printed per stage: wall time, LLM calls, tokens in and out,
seconds per call; then the projected cost of the full published set (500 scripts) on this model
run as the kit runs it, and on an endpoint at 0.5 s per call with 64 connections.

    .venv/bin/python bench/simulbench.py                      # local/smollm2-135m, minutes
    .venv/bin/python bench/simulbench.py --judge-format text  # the paper's [[rating]] judges
    .venv/bin/python bench/simulbench.py --model scripted/simulbench --collect-every 1

A 135M model's ratings are noise: this measures the pipeline's cost, not the model.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.simulbench import extract_dir  # noqa: E402
from evaluation.simulbench.pairwise import pairwise_markdown, run_pairwise  # noqa: E402
from sandbox.app.suites.benchmark import (  # noqa: E402
    Configuration,
    ModelPool,
    board_report,
    run_benchmark,
)
from sandbox.llm import LLMSettings  # noqa: E402
from tasks.kit import Sampling  # noqa: E402
from tasks.simulbench import collection_items, load_scripts, load_tasks, script_items  # noqa: E402
from tasks.simulbench.plugin import COLLECT, SIMULBENCH  # noqa: E402

PUBLISHED_SCRIPTS = 500
ENDPOINT_S, CONNECTIONS = 0.5, 64


def usage(paths) -> dict[str, dict[str, float]]:
    """Calls, tokens and LLM seconds per call tag over calls.jsonl files."""
    out: dict[str, dict[str, float]] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            tag = out.setdefault(record["tag"], {"calls": 0, "in": 0, "out": 0, "llm_s": 0.0})
            tag["calls"] += 1
            tag["in"] += record["prompt_tokens"]
            tag["out"] += record["completion_tokens"]
            tag["llm_s"] += record["latency_s"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local/smollm2-135m")
    parser.add_argument("--collect-every", type=int, default=40,
                        help="keep one of K task dialogues (120 in all) [default: %(default)s]")
    parser.add_argument("--script-every", type=int, default=1,
                        help="answer, judge and compare one of K extracted scripts "
                             "[default: %(default)s]")
    parser.add_argument("--user-tokens", type=int, default=60)
    parser.add_argument("--simulator-tokens", type=int, default=80)
    parser.add_argument("--judge-tokens", type=int, default=120)
    parser.add_argument("--judge-format", choices=("text", "json"), default="json",
                        help="how every judge answers: json (schema-bound; the embedded model "
                             "never writes the text format's [[rating]]) or text (the paper's) "
                             "[default: %(default)s]")
    parser.add_argument("--keep", type=Path,
                        help="keep the directories here; a second run resumes them (wall times "
                             "then cover only what was left, LLM seconds cover every call)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-simulbench-"))
    model = args.model
    pool = ModelPool(LLMSettings())
    user = Sampling(temperature=1.2, top_p=1.0, max_tokens=args.user_tokens)
    sim = Sampling(temperature=0.0, top_p=1.0, max_tokens=args.simulator_tokens)
    judge = Sampling(temperature=0.0, top_p=1.0, max_tokens=args.judge_tokens)
    stages: dict[str, tuple[float, dict]] = {}
    judged = {"judge_format": args.judge_format}

    started = time.perf_counter()
    collect = run_benchmark(COLLECT, root / "collect", collection_items(load_tasks()), pool,
                            Configuration(
                                models={"user": model, "simulator": model},
                                sampling={"user": user, "simulator": sim}, judges=[model],
                                judge_sampling=judge.model_copy(
                                    update={"max_tokens": min(200, 2 * 60)}),
                                every=args.collect_every, judge_options=judged))
    stages["collect + challenge judge"] = (
        time.perf_counter() - started, usage((root / "collect" / "runs").glob("*/calls.jsonl")))

    started = time.perf_counter()
    scripts, _ = extract_dir(root / "collect", root / "scripts.jsonl")
    stages["extract"] = (time.perf_counter() - started, {})

    started = time.perf_counter()
    items = script_items(load_scripts(root / "scripts.jsonl"), str(root / "scripts.jsonl"))
    report = run_benchmark(SIMULBENCH, root / "answers", items, pool, Configuration(
        models={"simulator": model}, sampling={"simulator": sim}, judges=[model],
        judge_sampling=judge, every=args.script_every, judge_options=judged))
    stages["answer + 1-10 judge"] = (
        time.perf_counter() - started, usage((root / "answers" / "runs").glob("*/calls.jsonl")))
    run_benchmark(SIMULBENCH, root / "weak", items, pool, Configuration(
        models={"simulator": "scripted/simulbench-weak"}, sampling={"simulator": sim},
        judges=["scripted/simulbench"], every=args.script_every, judge_options=judged))

    started = time.perf_counter()
    pairs = run_pairwise([(root / "answers", root / "weak")], root / "pairwise", model,
                         pool.llm, judge, args.judge_format)
    stages["pairwise (2 orders)"] = (time.perf_counter() - started,
                                     usage([root / "pairwise" / "calls.jsonl"]))

    print(f"SimulBench on {model}, {args.judge_format} judge format: {collect.items} dialogues "
          f"({collect.judged.fallbacks} challenge-judge fallbacks), {len(scripts)} scripts "
          f"({report.judged.fallbacks} rating fallbacks); dirs in {root}")
    for stage, failed in (("collect", collect.failures), ("answer", report.failures)):
        for item, error in failed:
            print(f"FAILED in {stage}: {item}: {error}")
    print()
    print("| stage | wall s (this run) | calls | LLM s | tokens in | tokens out | s per call |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    per_call: dict[str, float] = {}
    for name, (wall, tags) in stages.items():
        calls = sum(t["calls"] for t in tags.values())
        llm_s = sum(t["llm_s"] for t in tags.values())
        print(f"| {name} | {wall:.1f} | {calls} | {llm_s:.0f} | "
              f"{sum(t['in'] for t in tags.values())} | "
              f"{sum(t['out'] for t in tags.values())} | "
              f"{llm_s / calls if calls else 0:.2f} |")
        for tag, t in tags.items():
            per_call[tag] = t["llm_s"] / t["calls"]
    answer_s = per_call.get("simulbench.simulator", 0.0)
    judge_s = per_call.get("simulbench.judge", 0.0)
    pair_s = per_call.get("simulbench.pairwise", 0.0)
    n = PUBLISHED_SCRIPTS
    local = n * (answer_s + judge_s)
    collect_calls = sum(t["calls"] for t in stages["collect + challenge judge"][1].values())
    collect_s = sum(t["llm_s"] for t in stages["collect + challenge judge"][1].values())
    dialogues = max(collect.items, 1)
    full = 109 * 3
    print(f"\nProjected collection of the published 109 tasks x 3 dialogues ({full}): "
          f"{full * collect_calls / dialogues:.0f} calls, "
          f"{full * collect_s / dialogues / 3600:.1f} h "
          f"on this model; {full * collect_calls / dialogues * ENDPOINT_S / 3600:.2f} h at "
          f"{ENDPOINT_S} s per call one dialogue at a time")
    print(f"Projected, the published {n} scripts (answer + 1-10 judge = {2 * n} calls; "
          f"pairwise = {2 * n} more):")
    print(f"- this model, one call at a time: {local / 3600:.1f} h, "
          f"pairwise {n * 2 * pair_s / 3600:.1f} h more")
    sequential = 2 * n * ENDPOINT_S
    concurrent = math.ceil(n / CONNECTIONS) * 2 * ENDPOINT_S
    print(f"- an endpoint at {ENDPOINT_S} s per call: {sequential:.0f} s one script at a time "
          f"(--jobs 1); {concurrent:.0f} s with --jobs {CONNECTIONS} over {CONNECTIONS} "
          f"connections (each script's answer, then its judgment; not measured here)")
    print()
    print(pairwise_markdown(pairs, args.judge_format))
    print(board_report(SIMULBENCH, [root / "answers", root / "weak"]).markdown
          .split("\n\n")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
