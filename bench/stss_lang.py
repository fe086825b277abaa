"""Benchmark of the STSS language level beside the action level: one action-level episode of a
task, its conversations harvested, and those scenarios replayed and judged (conversation and
summary) with the same model in every role (performer on ga_tdp, partner, judge).

    .venv/bin/python bench/stss_lang.py                                  # embedded model
    .venv/bin/python bench/stss_lang.py --model scripted/stss-lang       # the plumbing only
    .venv/bin/python bench/stss_lang.py --residents 5 --start 15:00      # a shorter episode

Prints scenarios per minute, calls and tokens per scenario by role, the action-level
episode's calls and tokens, and the ratio per task (the point of this level; the paper: $7.5
for 325 scenarios vs $300 for 30 tasks, i.e. about $0.25 vs $10 per task).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.stss_lang.usage import usage_by_role  # noqa: E402
from sandbox.app.suites.benchmark import Configuration, ModelPool, run_benchmark  # noqa: E402
from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from tasks.kit import ItemSet  # noqa: E402
from tasks.stss import EpisodeWindow, template_path  # noqa: E402
from tasks.stss.plugin.suite import run_task  # noqa: E402
from tasks.stss_lang import harvest  # noqa: E402
from tasks.stss_lang.plugin import STSS_LANG  # noqa: E402
from worlds import load_world  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="local/smollm2-135m")
    p.add_argument("--template", default="public_spring_tasting")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--residents", type=int, default=5, help="performer + background")
    p.add_argument("--start", default="11:00", help="on the event day")
    p.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        result, score = run_task(
            template_path(args.template), load_world("town"),
            lambda _run_dir, _performer: make_llm(LLMSettings(model=args.model, cache_mode="off")),
            architecture="ga_tdp", seed=args.seed, out=tmp / "episode",
            window=EpisodeWindow(same_day=True, start=args.start),
            background=args.residents - 1, embedder=args.embedder, overwrite=True)
        episode_wall = time.perf_counter() - t0
        episode = load_run(tmp / "episode")
        e_calls = len(episode.calls)
        e_in = sum(c.prompt_tokens for c in episode.calls)
        e_out = sum(c.completion_tokens for c in episode.calls)
        (tmp / "episode" / "score.json").write_text(score.model_dump_json())
        found = harvest([tmp / "episode"]).scenarios
        print(f"== {args.model}: {args.template} seed {args.seed}, {args.residents} residents, "
              f"from {args.start} on the event day, ga_tdp, embedder {args.embedder}")
        print(f"action level: 1 episode, {episode_wall:.1f} s, {e_calls} calls, tokens in "
              f"{e_in}, out {e_out}; score {score.score:.2f}; {len(found)} scenarios "
              "harvested")
        if not found:
            print("no conversation to replay: try more residents or an earlier --start")
            return
        items = ItemSet(items=found, ids=[s.id for s in found],
                        origins=[s.id for s in found])
        pool = ModelPool(LLMSettings(cache_mode="off"))
        models = {"performer": args.model, "partner": args.model}
        t0 = time.perf_counter()
        report = run_benchmark(STSS_LANG, tmp / "lang", items, pool, Configuration(
            models, sampling={r.name: r.sampling for r in STSS_LANG.roles},
            judges=[args.model], options={"arch": "ga_tdp"}))
        wall = time.perf_counter() - t0
        usage = usage_by_role(sorted((tmp / "lang" / "runs").iterdir()))
    n = len(found)
    print(f"language level: {n} scenarios in {wall:.1f} s = {n / wall * 60:.1f} scenarios per "
          f"minute ({report.judged.fallbacks} judge fallbacks, {len(report.failures)} failures)")
    total_calls = total_in = total_out = 0
    for role, use in usage.items():
        print(f"  {role:10s} {use['calls'] / n:6.1f} calls, {use['prompt_tokens'] / n:8.0f} "
              f"tokens in, {use['completion_tokens'] / n:6.0f} out per scenario")
        total_calls += use["calls"]
        total_in += use["prompt_tokens"]
        total_out += use["completion_tokens"]
    print(f"  all roles  {total_calls / n:6.1f} calls, {total_in / n:8.0f} tokens in, "
          f"{total_out / n:6.0f} out per scenario")
    print(f"per task (this task's {n} scenarios vs its 1 episode): calls {total_calls} vs "
          f"{e_calls} ({e_calls / max(total_calls, 1):.1f}x), tokens "
          f"{total_in + total_out} vs {e_in + e_out} "
          f"({(e_in + e_out) / max(total_in + total_out, 1):.1f}x), wall {wall:.0f} s vs "
          f"{episode_wall:.0f} s ({episode_wall / max(wall, 1e-9):.1f}x)")
    print("the paper: $7.5 for 325 scenarios vs $300 for 30 tasks = $0.25 vs $10 per task "
          "(40x)")


if __name__ == "__main__":
    main()
