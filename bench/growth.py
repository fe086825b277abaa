"""How the cost of a town grows with time and with its population, on the scripted model.

    days        one generated town of --residents people living --days simulated days in one
                episode: per simulated day the wall time, LLM calls, prompt tokens per call,
                the memory streams' size (memories kept, all residents), the ranking time of
                a retrieval (agents.retrieval's rank(), the part that grows with the stream)
                and the process's peak RSS; day N against day 1
    population  generated towns of each --sizes people (`sandbox world generate`), one episode
                of --hours each in a process of its own: wall time, events per second, calls
                per resident-hour, wall seconds per resident-hour, peak RSS per resident; each
                size against the first

Run: .venv/bin/python bench/growth.py days --days 7
     .venv/bin/python bench/growth.py population --sizes 25,100,400 --hours 24
The episodes run in this process (bench/ may drive the engine, never a command module).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from sandbox.runner import run_episode  # noqa: E402
from sandbox.simtime import MAX_SIM_HOURS_ENV  # noqa: E402
from tasks.scenarios import SCENARIOS  # noqa: E402
from tasks.scenarios.town_day import TownChanges  # noqa: E402
from worlds.generate import generate_town  # noqa: E402

DAY = 86_400.0


def episode(residents: int, hours: float, out: Path, on_event=None):
    """A generated town of `residents` living `hours`, scripted: the run directory's result."""
    world = generate_town(residents).write(out / "town")
    scenario = SCENARIOS["town_day"](None, changes=TownChanges(
        world=str(world), first=residents, hours=hours, embedder="hashing"))
    llm = make_llm(LLMSettings(model="scripted/town", cache_mode="off"))
    return run_episode(scenario, llm, seed=0, out_dir=out / "run", on_event=on_event)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def days(args) -> int:
    from agents import retrieval

    ranked: dict[int, list[float]] = defaultdict(list)
    clock = {"day": 0}
    rank = retrieval.WeightedRetriever.rank

    def timed_rank(self, *a, **kw):  # the ranking over the stream, timed per simulated day
        started = time.perf_counter()
        try:
            return rank(self, *a, **kw)
        finally:
            ranked[clock["day"]].append(time.perf_counter() - started)

    retrieval.WeightedRetriever.rank = timed_rank
    walls: dict[int, float] = {}
    rss: dict[int, float] = {}
    started = time.perf_counter()

    def on_event(event) -> None:
        day = int(event.t // DAY)
        while day > clock["day"]:  # a day ended: its wall time and the peak so far
            walls[clock["day"]] = time.perf_counter() - started - sum(walls.values())
            rss[clock["day"]] = peak_rss_mb()
            clock["day"] += 1

    with tempfile.TemporaryDirectory() as tmp:
        result = episode(args.residents, args.days * 24, Path(tmp), on_event)
        walls[clock["day"]] = time.perf_counter() - started - sum(walls.values())
        rss[clock["day"]] = peak_rss_mb()
        run = load_run(Path(tmp) / "run")
        calls = [json.loads(line) for line in (Path(tmp) / "run" / "calls.jsonl")
                 .read_text().splitlines()]
    per_day = defaultdict(lambda: {"calls": 0, "prompt": 0})
    for call in calls:
        d = per_day[int(call["t"] // DAY)]
        d["calls"] += 1
        d["prompt"] += call["prompt_tokens"]
    memories = defaultdict(int)
    for event in run.events:
        if event.kind == "memory_added":
            memories[int(event.t // DAY)] += 1
    print(f"{args.residents} residents, {args.days} simulated days, scripted/town, hashing "
          f"embedder: {result.status}, {result.wall_time_s:.1f} s wall, {len(calls)} calls")
    print("| day | wall s | calls | prompt tokens/call | memories (all, end of day) | "
          "rank ms/retrieval | peak RSS MB |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    kept, rows = 0, []
    for day in range(args.days):
        d = per_day[day]
        kept += memories[day]
        ms = 1000 * sum(ranked[day]) / max(len(ranked[day]), 1)
        per_call = d["prompt"] / max(d["calls"], 1)
        rows.append((walls.get(day, 0.0), per_call, ms))
        print(f"| {day + 1} | {walls.get(day, 0.0):.1f} | {d['calls']} | {per_call:.0f} | {kept} "
              f"| {ms:.2f} | {rss.get(day, 0.0):.0f} |")
    if len(rows) > 1 and rows[0][0] and rows[0][1]:
        last = rows[-1]
        print(f"day {len(rows)} / day 1: wall {last[0] / rows[0][0]:.2f}x, prompt tokens per "
              f"call {last[1] / rows[0][1]:.2f}x, ranking {last[2] / max(rows[0][2], 1e-9):.2f}x "
              "(target: wall and prompt tokens per call at most 1.2x)")
    return 0


def one(args) -> int:
    """One population size, in this process: JSON on stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = episode(args.one, args.hours, Path(tmp))
        wall = time.perf_counter() - started
    print(json.dumps({"residents": args.one, "wall_s": wall, "events": result.events,
                      "calls": result.llm_calls, "status": result.status,
                      "peak_rss_mb": peak_rss_mb()}))
    return 0


def population(args) -> int:
    sizes = [int(s) for s in args.sizes.split(",")]
    env = {**os.environ, MAX_SIM_HOURS_ENV: str(max(72.0, args.hours))}
    rows = []
    for n in sizes:
        done = subprocess.run([sys.executable, __file__, "one", "--one", str(n), "--hours",
                               str(args.hours)], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(f"{n} residents: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"generated towns, {args.hours:g} simulated hours each, scripted/town, hashing embedder")
    print("| residents | status | wall s | events/s | calls per resident-hour | wall ms per "
          "resident-hour | peak RSS MB | RSS MB per resident |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        rh = r["residents"] * args.hours
        print(f"| {r['residents']} | {r['status']} | {r['wall_s']:.1f} | "
              f"{r['events'] / r['wall_s']:.0f} | {r['calls'] / rh:.2f} | "
              f"{1000 * r['wall_s'] / rh:.1f} | {r['peak_rss_mb']:.0f} | "
              f"{r['peak_rss_mb'] / r['residents']:.2f} |")
    if len(rows) > 1:
        base = rows[0]["wall_s"] / (rows[0]["residents"] * args.hours)
        for r in rows[1:]:
            cost = r["wall_s"] / (r["residents"] * args.hours)
            print(f"{r['residents']} against {rows[0]['residents']}: wall per resident-hour "
                  f"{cost / base:.2f}x (target at 1,000: at most 1.5x of 25)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["days", "population", "one"])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--residents", type=int, default=25, help="the town of `days`")
    parser.add_argument("--sizes", default="25,100,400,1000")
    parser.add_argument("--hours", type=float, default=24.0, help="each population's episode")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.what == "days":
        os.environ[MAX_SIM_HOURS_ENV] = str(max(72.0, args.days * 24.0))
    return {"days": days, "population": population, "one": one}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
