"""LLM concurrency: 12 agents that each need a call at the same simulated instants.

A scripted backend with 0.2 s injected latency per call and unlimited parallelism stands in for
a remote endpoint. The same episode runs with concurrent dispatch and with one call at a time,
measured side by side in this run. Target: concurrent at least 8x faster (the limit is 12x).

With --demo it also runs the README's demo (`make demo`: one STSS episode on the embedded model;
the command is read from the Makefile so the two cannot drift) in a child process and reports its
wall time and peak memory (RSS).

    python bench/llm_concurrency.py [--agents 12] [--rounds 5] [--latency 0.2] [--demo]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

from sandbox.engine import Engine
from sandbox.llm import LLMRequest, LLMSettings, Message, ScriptedBackend, make_llm

ROOT = Path(__file__).resolve().parent.parent


def agent(engine: Engine, name: str, rounds: int):
    for r in range(rounds):
        yield engine.ask(LLMRequest(messages=[Message(role="user", content=f"{name} round {r}")],
                                    tag="bench.decide", agent=name))
        yield engine.timeout(600)  # ten simulated minutes until the next decision


def episode_wall_time(agents: int, rounds: int, latency: float, max_concurrency: int) -> float:
    backend = ScriptedBackend(latency_s=latency, max_concurrency=1000)
    engine = Engine(llm=make_llm(LLMSettings(), backend=backend), seed=0,
                    start_time=datetime(2024, 3, 4, 8), max_concurrency=max_concurrency)
    for i in range(agents):
        engine.process(agent(engine, f"agent{i}", rounds))
    start = time.perf_counter()
    engine.run()
    elapsed = time.perf_counter() - start
    assert len(engine.calls.records) == agents * rounds
    return elapsed


def demo_command(out: str) -> list[str]:
    """The Makefile's `demo` recipe as an argv into `out` (first_minute.py reads it), quiet."""
    from first_minute import demo_command as recipe  # bench/ is this script's path

    return [*recipe(out), "--quiet"]


def demo() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = demo_command(f"{tmp}/demo")
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        wall = time.perf_counter() - start
        calls = sum(1 for _ in open(f"{tmp}/demo/calls.jsonl"))
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"demo ({' '.join(cmd[3:6])}...): wall {wall:.1f} s, {calls} LLM calls, "
          f"peak RSS {peak_mib:.0f} MiB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agents", type=int, default=12, help="agents asking at once [default: 12]")
    p.add_argument("--rounds", type=int, default=5, help="simulated instants [default: 5]")
    p.add_argument("--latency", type=float, default=0.2,
                   help="injected seconds per call [default: 0.2]")
    p.add_argument("--demo", action="store_true", help="also measure the README demo")
    args = p.parse_args()
    concurrent = episode_wall_time(args.agents, args.rounds, args.latency, args.agents)
    sequential = episode_wall_time(args.agents, args.rounds, args.latency, 1)
    print(f"{args.agents} agents x {args.rounds} rounds, {args.latency:.2f} s per call")
    print(f"  one call at a time: {sequential:6.2f} s")
    print(f"  concurrent:         {concurrent:6.2f} s")
    print(f"  speed-up: {sequential / concurrent:.1f}x (target >= 8x, limit {args.agents}x)")
    if args.demo:
        demo()


if __name__ == "__main__":
    main()
