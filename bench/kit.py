"""Benchmark of the single-room kit: the full scripted PingPong set (64 pairs, two judges) run
and judged from scratch, then the same command on the finished directory (a resume that only
checks), and the board over it. Printed side by side from one run.

    .venv/bin/python bench/kit.py                  # scripted, no model latency
    .venv/bin/python bench/kit.py --latency 0.05   # each call waits 50 ms, like a fast endpoint

The share of the run spent outside the LLM layer (engine, log, judges' bookkeeping, resume
checks, the board) is 1 - the sum of the calls' latencies / the wall time; the calls run one at
a time here, so their latencies do not overlap. With --latency 0 it is all kit overhead.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.pingpong import scripted  # noqa: E402
from sandbox.app.suites.benchmark import (  # noqa: E402
    Configuration,
    ModelPool,
    board_report,
    run_benchmark,
)
from sandbox.llm import SCRIPTS, LLMSettings  # noqa: E402
from tasks.pingpong import load_settings, pair_items  # noqa: E402
from tasks.pingpong.plugin import PINGPONG  # noqa: E402

JUDGES = ["scripted/pingpong", "scripted/pingpong-strict"]


def llm_seconds(out: Path) -> tuple[float, int]:
    """Sum of call latencies and the number of calls, over every run's calls.jsonl."""
    total, calls = 0.0, 0
    for path in (out / "runs").glob("*/calls.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            total += json.loads(line)["latency_s"]
            calls += 1
    return total, calls


def run(out: Path, every: int) -> float:
    items = pair_items(load_settings())
    started = time.perf_counter()
    run_benchmark(PINGPONG, out, items, ModelPool(LLMSettings()), Configuration(
        models={"player": "scripted/pingpong", "interrogator": "scripted/pingpong"},
        sampling={r.name: r.sampling for r in PINGPONG.roles}, judges=JUDGES, every=every))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.0,
                        help="seconds each scripted call waits [default: %(default)s]")
    parser.add_argument("--every", type=int, default=1,
                        help="keep one pair in K (1: all 64) [default: %(default)s]")
    parser.add_argument("--keep", type=Path, help="keep the benchmark directory here")
    args = parser.parse_args()

    for name, factory in (("pingpong", scripted.pingpong),
                          ("pingpong-strict", scripted.pingpong_strict)):
        def slow(factory=factory):
            backend = factory()
            backend.latency_s = args.latency
            return backend
        SCRIPTS[name] = slow

    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp) / "pp"
        fresh = run(out, args.every)
        in_llm, calls = llm_seconds(out)
        resumed = run(out, args.every)
        started = time.perf_counter()
        board_report(PINGPONG, [out])
        board_s = time.perf_counter() - started
    pairs = len(pair_items(load_settings()).select(args.every))
    outside = 1 - in_llm / fresh if fresh else 0.0
    print(f"PingPong on the kit, scripted, {pairs} pairs, 2 judges, {args.latency * 1000:.0f} "
          f"ms per call")
    print(f"  fresh run and judging: {fresh:7.2f} s wall, {calls} LLM calls, "
          f"{in_llm:.2f} s in the LLM layer, {outside:.1%} of the wall time outside it")
    print(f"  resumed finished run:  {resumed:7.2f} s wall ({fresh / resumed:.0f}x faster "
          f"than fresh)")
    print(f"  board over it:         {board_s:7.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
