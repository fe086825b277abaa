"""Benchmark of the generative agents: LLM calls per agent per game hour and day, by module;
retrieval latency over 100k memories; embedding throughput with the cache cold and warm.

    .venv/bin/python bench/agents.py                      # everything (loads MiniLM once)
    .venv/bin/python bench/agents.py --skip-embedding --embedder hashing   # fast

The call count runs every resident of the town with `ga.yaml` on the scripted backend
(`scripted/town`: deterministic answers, so conversations, revisions and reflections happen as
they would with a model) and compares with the reference implementation of Generative Agents:
13,705 requests for 25 agents over about 10 game hours, about 55 per agent-hour. The target is
at most a fifth of that with the same modules enabled.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.embedding import CachedEmbedder, minilm_embedder  # noqa: E402
from agents.memory import MemoryParams, MemoryStream  # noqa: E402
from agents.retrieval import WeightedRetriever  # noqa: E402
from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from sandbox.runner import run_episode  # noqa: E402
from tasks.town import TownConfig, TownScenario  # noqa: E402

REFERENCE_PER_AGENT_HOUR = 13_705 / 25 / 10


def bench_calls(hours: float, embedder: str, architecture: str) -> None:
    start = datetime(2024, 2, 13, 7, 0)
    cfg = TownConfig(world="town", architecture=architecture, start_time=start, hours=hours,
                     embedder=embedder)
    llm = make_llm(LLMSettings(model="scripted/town", cache_mode="off"))
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        result = run_episode(TownScenario(cfg), llm, seed=0, out_dir=out)
        wall = time.perf_counter() - t0
        run = load_run(out)
    agents = sorted({c.agent for c in run.calls if c.agent})
    by_module: Counter = Counter(c.tag.split(".")[0] for c in run.calls)
    per_agent: dict[str, int] = defaultdict(int)
    for c in run.calls:
        per_agent[c.agent] += 1
    total = len(run.calls)
    rate = total / len(agents) / hours
    print(f"\n== LLM calls: {len(agents)} agents, {architecture}.yaml, scripted/town, "
          f"{hours:g} game hours from {start:%H:%M} (wall {wall:.1f} s, {result.events} events)")
    print(f"{'module':<10}{'calls':>8}{'per agent-hour':>16}{'per agent-day*':>16}")
    for module, n in sorted(by_module.items()):
        print(f"{module:<10}{n:>8}{n / len(agents) / hours:>16.2f}"
              f"{n / len(agents) / hours * 16:>16.1f}")
    print(f"{'all':<10}{total:>8}{rate:>16.2f}{rate * 16:>16.1f}")
    print("* a 16-hour waking day at the same rate")
    print(f"per agent: min {min(per_agent.values())}, max {max(per_agent.values())} calls")
    print(f"reference (Park et al. code): {REFERENCE_PER_AGENT_HOUR:.1f} calls per agent-hour; "
          f"target <= {REFERENCE_PER_AGENT_HOUR / 5:.1f}; measured {rate:.2f} = "
          f"1/{REFERENCE_PER_AGENT_HOUR / rate:.1f} of the reference")
    tokens = sum(c.prompt_tokens + c.completion_tokens for c in run.calls)
    print(f"tokens (scripted backend counts words): {tokens / len(agents) / hours:.0f} per "
          f"agent-hour")


def bench_retrieval(n: int, queries: int) -> None:
    dim = 384
    rng = np.random.default_rng(0)
    # Clustered vectors, like sentences about a few hundred topics (random points are the
    # worst case for any index and unlike real memories).
    centres = rng.standard_normal((500, dim)).astype(np.float32)
    labels = rng.integers(0, 500, n + queries)
    vectors = centres[labels] + 0.7 * rng.standard_normal((n + queries, dim)).astype(np.float32)
    table = {f"m{i}": vectors[i] for i in range(n + queries)}
    embedder = CachedEmbedder(lambda texts: np.stack([table[t] for t in texts]), dim, "bench")
    memory = MemoryStream(MemoryParams(embedder="hashing"), embedder=embedder)
    t0 = time.perf_counter()
    for i in range(n):
        memory.add("event", f"m{i}", float(i), importance=int(1 + i % 10))
    memory.search(embedder(f"m{n}"), 1)  # embeds and indexes everything
    build = time.perf_counter() - t0
    retriever = WeightedRetriever()
    exact = WeightedRetriever(retriever.params.model_copy(update={"pool": n}))
    qs = [embedder(f"m{n + i}") for i in range(queries)]
    t0 = time.perf_counter()
    rankings = [retriever.rank(memory, q, now=float(n)) for q in qs]
    per_query = (time.perf_counter() - t0) / queries * 1000
    t0 = time.perf_counter()
    exact_rankings = [exact.rank(memory, q, now=float(n)) for q in qs[:10]]
    exact_ms = (time.perf_counter() - t0) / 10 * 1000
    overlap = np.mean([len(set(a.ids) & set(b.ids)) / len(b.ids)
                       for a, b in zip(rankings, exact_rankings, strict=False)])
    print(f"\n== retrieval over {n:,} memories (dim {dim}, top 30, index "
          f"{type(memory._index.index).__name__})")
    print(f"build (add + index): {build:.1f} s")
    print(f"per query: {per_query:.2f} ms (target < 5 ms); scoring every memory: "
          f"{exact_ms:.1f} ms; top-30 agreement with it: {overlap:.0%}")


def bench_embedding(count: int) -> None:
    t0 = time.perf_counter()
    embedder = minilm_embedder()
    load = time.perf_counter() - t0
    texts = [f"Resident {i % 25} is {verb} at place {i % 62} ({i})"
             for i, verb in zip(range(count), ["reading", "cooking", "talking", "walking"] * count,
                                strict=False)]
    t0 = time.perf_counter()
    embedder.many(texts)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    for text in texts:
        embedder(text)
    warm = time.perf_counter() - t0
    print(f"\n== embedding (all-MiniLM-L6-v2, offline): load {load:.1f} s")
    print(f"cold, batched: {count / cold:.0f} texts/s; warm (cached, one by one): "
          f"{count / warm:,.0f} texts/s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hours", type=float, default=10,
                   help="game hours of the town day [default: 10]")
    p.add_argument("--architecture", default="ga", help="everyone's architecture [default: ga]")
    p.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"],
                   help="memory embedder for the town day [default: minilm]")
    p.add_argument("--memories", type=int, default=100_000,
                   help="memories in the retrieval benchmark [default: 100000]")
    p.add_argument("--queries", type=int, default=200, help="retrieval queries [default: 200]")
    p.add_argument("--skip-embedding", action="store_true",
                   help="skip the embedding throughput part (it loads MiniLM)")
    args = p.parse_args()
    bench_calls(args.hours, args.embedder, args.architecture)
    bench_retrieval(args.memories, args.queries)
    if not args.skip_embedding:
        bench_embedding(1000)


if __name__ == "__main__":
    main()
