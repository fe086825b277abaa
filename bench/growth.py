"""How the cost of a town grows with time and with its population, on the scripted model in
process and through the real `openai` backend against the loopback endpoint.

    days        one generated town of --residents people living --days simulated days in one
                episode: per simulated day the wall time, CPU time, LLM calls, calls a second, the
                wall time the run loop spent waiting on calls (and in how many rounds: the
                calls asked at one simulated instant go together), prompt tokens per call,
                the memory streams' size (memories kept, all residents), the ranking time of
                a retrieval (agents.retrieval's rank(), the part that grows with the stream)
                and the process's peak RSS; day N against day 1
    population  generated towns of each --sizes people (`sandbox world generate`), one episode
                of --hours each: wall time, events per second, calls per second and per
                resident-hour, wall time waiting on calls, wall seconds per resident-hour, peak
                RSS per resident; each size against the first
    all         days, then population
    plot        only draw --png from the figures saved in --json

--endpoint scripted (default): scripted/town in the episode's process. --endpoint loopback: the
loopback endpoint (bench/loopback_endpoint.py, a process of its own) answering like
scripted/town after --latency seconds a call, reached through the real `openai` backend with
64 connections, so the calls asked at one simulated instant are in flight together (a
population size gets an endpoint of its own). --endpoint both: the two, printed side by side
with their ratios. Every episode runs in a child process of its own (its peak RSS is its own),
with the hashing embedder. --json FILE keeps the figures (merged into what FILE holds, per
command and endpoint); --png FILE draws the two curves from them (cost per simulated day
against day 1, cost per resident-hour against the smallest town) with the targets dashed.

The README's figures and bench/growth.png (the endpoint at 0.05 s a call where 0.5 s would take
an hour: its wall time is the rounds of calls times the latency):

    .venv/bin/python bench/growth.py days --days 7 --endpoint both --latency 0.05 --json F
    .venv/bin/python bench/growth.py population --endpoint both --latency 0.05 --json F
    .venv/bin/python bench/growth.py population --endpoint loopback --sizes 25,100,400 --json F
    .venv/bin/python bench/growth.py plot --json F --png bench/growth.png

The episodes drive the engine directly (bench/ may, never a command module).
"""

from __future__ import annotations

import argparse
import datetime
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

from bench.loopback_endpoint import (  # noqa: E402
    API_KEY,
    CONNECTIONS,
    endpoint_stats,
    running_endpoint,
)
from sandbox.llm import LLMSettings, make_llm  # noqa: E402
from sandbox.simtime import MAX_SIM_HOURS_ENV  # noqa: E402

DAY = 86_400.0
ENDPOINTS = ("scripted", "loopback")
DAYS_TARGET = 1.2  # day N against day 1: wall and prompt tokens per call
SIZE_TARGET = 1.5  # wall per resident-hour, the largest town against 25 residents


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_s() -> float:
    """This process's CPU time, user and system, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# -- one episode, in a child process --------------------------------------------------------------

def episode(residents: int, hours: float, out: Path, url: str | None = None, on_event=None,
            connections: int = CONNECTIONS):
    """A generated town of `residents` living `hours`: the run directory's result. `url`: the
    loopback endpoint answering for scripted/town, through the openai backend with
    `connections` open at once; else in process."""
    from sandbox.runner import run_episode
    from tasks.scenarios import SCENARIOS
    from tasks.scenarios.town_day import TownChanges
    from worlds.generate import generate_town

    world = generate_town(residents).write(out / "town")
    scenario = SCENARIOS["town_day"](None, changes=TownChanges(
        world=str(world), first=residents, hours=hours, embedder="hashing"))
    if url is None:
        settings = LLMSettings(model="scripted/town", cache_mode="off")
    else:
        settings = LLMSettings(model="openai/town", base_url=url, cache_mode="off",
                               max_concurrency=connections)
    return run_episode(scenario, make_llm(settings), seed=0, out_dir=out / "run",
                       on_event=on_event)


class Waits:
    """The run loop's wall time spent waiting on calls (Engine._await: a lockstep round, or
    until the first call in flight is back when residents run ahead), and how many times it
    waited ("rounds"), per simulated day."""

    def __init__(self):
        from sandbox.engine import Engine

        self.seconds: dict[int, float] = defaultdict(float)
        self.rounds: dict[int, int] = defaultdict(int)
        await_ = Engine._await

        def timed(engine, everyone) -> None:
            day, started = int(engine.now // DAY), time.perf_counter()
            try:
                await_(engine, everyone)
            finally:
                self.seconds[day] += time.perf_counter() - started
                self.rounds[day] += 1

        Engine._await = timed


def days_leg(args) -> dict:
    """`days` on one endpoint, in this process: the figures."""
    from agents import retrieval
    from sandbox.log import load_run

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
    waits = Waits()
    walls: dict[int, float] = {}
    rss: dict[int, float] = {}
    # Day 1 starts at the episode's first event: generating the town and setting the episode
    # up are counted apart, not in day 1.
    begun = {"leg": time.perf_counter(), "episode": 0.0, "cpu": 0.0}
    cpus: dict[int, float] = {}  # less moved by the machine's other jobs than the wall time

    def day_done() -> None:
        day = clock["day"]
        walls[day] = time.perf_counter() - begun["episode"] - sum(walls.values())
        cpus[day] = cpu_s() - begun["cpu"] - sum(cpus.values())
        rss[day] = peak_rss_mb()
        print(f"  {args.endpoint} day {day + 1}: {walls[day]:.1f} s wall, waiting on calls "
              f"{waits.seconds[day]:.1f} s in {waits.rounds[day]} rounds (load {load()})",
              file=sys.stderr, flush=True)

    def on_event(event) -> None:
        if not begun["episode"]:
            begun["episode"], begun["cpu"] = time.perf_counter(), cpu_s()
        while int(event.t // DAY) > clock["day"]:  # a day ended: its wall time, the peak so far
            day_done()
            clock["day"] += 1

    with tempfile.TemporaryDirectory() as tmp:
        result = episode(args.residents, args.days * 24, Path(tmp), args.url, on_event)
        day_done()
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
    kept, rows = 0, []
    for day in range(args.days):
        kept += memories[day]
        d = per_day[day]
        rows.append({"day": day + 1, "wall_s": walls.get(day, 0.0),
                     "cpu_s": cpus.get(day, 0.0), "calls": d["calls"],
                     "prompt_per_call": d["prompt"] / max(d["calls"], 1), "memories": kept,
                     "rank_ms": 1000 * sum(ranked[day]) / max(len(ranked[day]), 1),
                     "wait_s": waits.seconds[day], "rounds": waits.rounds[day],
                     "peak_rss_mb": rss.get(day, 0.0)})
    return {"status": result.status, "wall_s": sum(walls.values()), "calls": len(calls),
            "setup_s": begun["episode"] - begun["leg"], "cpu_s": cpu_s(), "days": rows}


def population_leg(args) -> dict:
    """One population size on one endpoint, in this process: the figures."""
    waits = Waits()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = episode(args.size, args.hours, Path(tmp), args.url,
                         connections=args.connections)
        wall = time.perf_counter() - started
        chain = critical_path(Path(tmp) / "run" / "calls.jsonl")
    return {"residents": args.size, "wall_s": wall, "events": result.events,
            "critical_path": chain["critical_path"], "call_s": chain["call_s"],
            "calls": result.llm_calls, "status": result.status, "peak_rss_mb": peak_rss_mb(),
            "cpu_s": cpu_s(),
            "wait_s": sum(waits.seconds.values()), "rounds": sum(waits.rounds.values())}


def critical_path(calls: Path) -> dict:
    """From a run's calls.jsonl: the longest chain of calls each of which waited for the one
    before (its `depth`: no schedule needs fewer rounds) and the seconds its calls took
    (over the wall time: how many were in flight on average)."""
    longest, seconds = 0, 0.0
    with calls.open() as lines:
        for line in lines:
            call = json.loads(line)
            longest = max(longest, call.get("depth") or 0)
            seconds += call.get("latency_s") or 0.0
    return {"critical_path": longest, "call_s": seconds}


def run_leg(argv: list[str], url: str | None, sim_hours: float) -> dict | None:
    """A leg in a child process (its progress on our stderr): its figures, or None if it
    failed."""
    env = {**os.environ, MAX_SIM_HOURS_ENV: str(max(72.0, sim_hours)), "OPENAI_API_KEY": API_KEY}
    done = subprocess.run([sys.executable, __file__, "leg", *argv,
                           *(["--url", url] if url else [])],
                          stdout=subprocess.PIPE, text=True, env=env)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def with_endpoint(endpoint: str, latency: float, argv: list[str], sim_hours: float):
    """The leg `argv` on `endpoint` in a child process, timed, with the endpoint's counts (one
    endpoint of its own) and the load average before and after; None if it failed."""
    before, started = load(), time.perf_counter()
    argv = [*argv, "--endpoint", endpoint]
    if endpoint == "scripted":
        figures = run_leg(argv, None, sim_hours)
        stats = None
    else:
        with running_endpoint(latency) as url:
            figures = run_leg(argv, url, sim_hours)
            stats = endpoint_stats(url)
    if figures is None:
        return None
    figures["leg_wall_s"] = time.perf_counter() - started
    figures["load"] = [before, load()]
    if stats is not None:
        figures["endpoint"] = {"requests": stats["requests"],
                               "max_in_flight": stats["max_in_flight"]}
    return figures


def leg_name(endpoint: str, latency: float) -> str:
    """How a leg is known in the tables, the JSON and the PNG: its endpoint and latency."""
    return endpoint if endpoint == "scripted" else f"{endpoint} {latency:g} s"


def label(endpoint: str, latency: float, connections: int = CONNECTIONS) -> str:
    return "scripted/town in process" if endpoint == "scripted" else \
        f"loopback endpoint, {latency:g} s a call, {connections} connections, openai backend"


# -- days ---------------------------------------------------------------------------------------

def days(args) -> dict:
    legs = {}
    for endpoint in args.endpoints:
        print(f"days: {args.residents} residents, {args.days} simulated days, "
              f"{label(endpoint, args.latency)} (load {load()})", file=sys.stderr, flush=True)
        figures = with_endpoint(endpoint, args.latency, [
            "days", "--residents", str(args.residents), "--days", str(args.days)],
            args.days * 24.0)
        if figures is None:
            print(f"days on {endpoint}: failed (its traceback is above)")
            continue
        legs[leg_name(endpoint, args.latency)] = figures
        show_days(endpoint, figures, args)
    if len(legs) > 1:
        show_days_side_by_side(legs)
    return {"residents": args.residents, "days": args.days, "legs": legs}


def days_ratio(figures: dict, key: str) -> list[float]:
    rows = figures["days"]
    return [r[key] / rows[0][key] if rows[0][key] else float("nan") for r in rows]


def show_days(endpoint: str, f: dict, args) -> None:
    print(f"\n{args.residents} residents, {args.days} simulated days, "
          f"{label(endpoint, args.latency)}, hashing embedder: {f['status']}, "
          f"{f['wall_s']:.1f} s wall (and {f['setup_s']:.1f} s generating the town and setting "
          f"up), {f['cpu_s']:.1f} s CPU, {f['calls']} calls "
          f"(load average {f['load'][0]} before, {f['load'][1]} after)")
    if "endpoint" in f:
        e = f["endpoint"]
        print(f"endpoint: {e['requests']} calls in {f['leg_wall_s']:.1f} s, "
              f"{e['requests'] / f['leg_wall_s']:.1f} calls/s, at most {e['max_in_flight']} at "
              f"once")
    print("| day | wall s | CPU s | calls | calls/s | waiting on calls s | rounds | prompt "
          "tokens/call | memories (all, end of day) | rank ms/retrieval | peak RSS MB |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in f["days"]:
        print(f"| {r['day']} | {r['wall_s']:.1f} | {r.get('cpu_s', 0.0):.1f} | {r['calls']} | "
              f"{r['calls'] / max(r['wall_s'], 1e-9):.0f} | {r['wait_s']:.1f} | {r['rounds']} | "
              f"{r['prompt_per_call']:.0f} | {r['memories']} | {r['rank_ms']:.2f} | "
              f"{r['peak_rss_mb']:.0f} |")
    if len(f["days"]) > 1:
        n = len(f["days"])
        wall, cpu, prompt, ranking = (days_ratio(f, k)[-1] for k in (
            "wall_s", "cpu_s", "prompt_per_call", "rank_ms"))
        print(f"day {n} / day 1: wall {wall:.2f}x (CPU {cpu:.2f}x), prompt tokens per call "
              f"{prompt:.2f}x, ranking {ranking:.2f}x (target: wall and prompt tokens per call "
              f"at most {DAYS_TARGET}x)")


def show_days_side_by_side(legs: dict) -> None:
    names = list(legs)
    print("\nday N / day 1, side by side:")
    print("| day | " + " | ".join(f"{n} wall s | {n} wall | {n} prompt tokens/call"
                                   for n in names) + " |")
    print("|--:|" + "--:|--:|--:|" * len(names))
    walls = {n: days_ratio(legs[n], "wall_s") for n in names}
    prompts = {n: days_ratio(legs[n], "prompt_per_call") for n in names}
    for i in range(min(len(legs[n]["days"]) for n in names)):
        print(f"| {i + 1} | " + " | ".join(
            f"{legs[n]['days'][i]['wall_s']:.1f} | {walls[n][i]:.2f}x | {prompts[n][i]:.2f}x"
            for n in names) + " |")


# -- population ---------------------------------------------------------------------------------

def population(args) -> dict:
    sizes = [int(s) for s in args.sizes.split(",")]
    legs: dict[str, list[dict]] = {}
    for endpoint in args.endpoints:
        print(f"population {args.sizes}: {args.hours:g} simulated hours each, "
              f"{label(endpoint, args.latency, args.connections)}", file=sys.stderr, flush=True)
        rows = legs[leg_name(endpoint, args.latency)] = []
        for n in sizes:
            figures = with_endpoint(endpoint, args.latency, [
                "population", "--size", str(n), "--hours", str(args.hours),
                "--connections", str(args.connections)], args.hours)
            if figures is None:
                print(f"{n} residents on {endpoint}: failed (its traceback is above)")
                continue
            rows.append(figures)
            print(f"  {endpoint} {n} residents: {figures['wall_s']:.1f} s wall, "
                  f"{figures['calls']} calls (load {figures['load'][0]} -> "
                  f"{figures['load'][1]})", file=sys.stderr, flush=True)
        show_population(endpoint, rows, args)
    if len(legs) > 1:
        show_population_side_by_side(legs, args.hours)
    return {"hours": args.hours, "legs": legs}


def per_resident_hour(rows: list[dict], hours: float) -> list[float]:
    """Wall seconds per resident-hour, each size against the first."""
    cost = [r["wall_s"] / (r["residents"] * hours) for r in rows]
    return [c / cost[0] for c in cost] if cost else []


def show_population(endpoint: str, rows: list[dict], args) -> None:
    print(f"\ngenerated towns, {args.hours:g} simulated hours each, "
          f"{label(endpoint, args.latency, args.connections)}, hashing embedder")
    print("| residents | status | wall s | CPU s | events/s | calls | calls/s | waiting on calls "
          "s | rounds | most in flight | mean in flight | critical path | wall / (critical "
          "path x latency) | calls per resident-hour | wall ms per resident-hour | "
          "against the first | peak RSS MB | RSS MB per resident | load average |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for r, ratio in zip(rows, per_resident_hour(rows, args.hours), strict=True):
        rh = r["residents"] * args.hours
        most = r["endpoint"]["max_in_flight"] if "endpoint" in r else "-"
        chain = r.get("critical_path", 0)
        mean = f"{r.get('call_s', 0.0) / r['wall_s']:.1f}" if "endpoint" in r else "-"
        bound = (f"{r['wall_s'] / (chain * args.latency):.2f}"
                 if "endpoint" in r and chain and args.latency > 0 else "-")
        print(f"| {r['residents']} | {r['status']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
              f"{r['events'] / r['wall_s']:.0f} | {r['calls']} | {r['calls'] / r['wall_s']:.1f} | "
              f"{r['wait_s']:.1f} | {r['rounds']} | {most} | {mean} | {chain} | {bound} | "
              f"{r['calls'] / rh:.2f} | "
              f"{1000 * r['wall_s'] / rh:.1f} | {ratio:.2f}x | {r['peak_rss_mb']:.0f} | "
              f"{r['peak_rss_mb'] / r['residents']:.2f} | {r['load'][0]} -> {r['load'][1]} |")
    if len(rows) > 1:
        print(f"{rows[-1]['residents']} against {rows[0]['residents']}: wall per resident-hour "
              f"{per_resident_hour(rows, args.hours)[-1]:.2f}x (target at 1,000 on the scripted "
              f"model: at most {SIZE_TARGET}x of 25)")


def show_population_side_by_side(legs: dict, hours: float) -> None:
    names = list(legs)
    ratios = {n: dict(zip([r["residents"] for r in legs[n]],
                          per_resident_hour(legs[n], hours), strict=True)) for n in names}
    walls = {n: {r["residents"]: r for r in legs[n]} for n in names}
    print("\nwall per resident-hour against the first size, side by side:")
    print("| residents | " + " | ".join(f"{n} wall s | {n} ms per resident-hour | {n} ratio"
                                         for n in names) + " |")
    print("|--:|" + "--:|--:|--:|" * len(names))
    for size in sorted({s for n in names for s in ratios[n]}):
        cells = []
        for n in names:
            r = walls[n].get(size)
            cells.append("- | - | -" if r is None else
                         f"{r['wall_s']:.1f} | {1000 * r['wall_s'] / (size * hours):.1f} | "
                         f"{ratios[n][size]:.2f}x")
        print(f"| {size} | " + " | ".join(cells) + " |")


# -- the figures on disk and the PNG ------------------------------------------------------------

def save(path: Path, what: str, figures: dict) -> dict:
    """Merge this run's figures into the JSON at `path` (per command, per endpoint): all of it."""
    kept = json.loads(path.read_text()) if path.is_file() else {}
    old = kept.get(what, {})
    legs = {**old.get("legs", {}), **figures["legs"]}
    kept[what] = {**figures, "legs": legs, "date": datetime.date.today().isoformat()}
    path.write_text(json.dumps(kept, indent=1) + "\n")
    return kept


def colour(name: str, names: list[str]) -> str:
    """Scripted dark blue; each loopback latency a colour of its own, in the order met."""
    if name == "scripted":
        return "#1d3557"
    others = [n for n in names if n != "scripted"]
    return ["#e76f51", "#2a9d8f", "#b5838d", "#e9c46a"][others.index(name) % 4]


def draw(figures: dict, path: Path) -> Path:
    """Two panels: cost per simulated day against day 1, cost per resident-hour against the
    smallest town; the targets dashed, the sizes and the machine's load in the caption."""
    import matplotlib

    matplotlib.use("Agg")  # no screen here, nor in CI
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4), dpi=100)
    caption, loads, dates = [], [], []
    d = figures.get("days")
    if d:
        names = list(d["legs"])
        for name, f in d["legs"].items():
            x = [r["day"] for r in f["days"]]
            left.plot(x, days_ratio(f, "wall_s"), "o-", color=colour(name, names),
                      label=f"{name}: wall time")
            left.plot(x, days_ratio(f, "prompt_per_call"), "s:", color=colour(name, names),
                      label=f"{name}: prompt tokens per call")
            loads += f["load"]
        left.axhline(DAYS_TARGET, color="#888", linestyle="--", linewidth=1)
        left.annotate(f"target {DAYS_TARGET}x", (1, DAYS_TARGET), textcoords="offset points",
                      xytext=(0, 4), fontsize=8, color="#666")
        left.set_xticks(range(1, d["days"] + 1))
        caption.append(f"days: {d['residents']} residents, one episode of {d['days']} "
                       "simulated days")
        dates.append(d.get("date", ""))
    left.set_xlabel("simulated day")
    left.set_ylabel("against day 1")
    left.set_title("Cost per simulated day", fontsize=11)
    p = figures.get("population")
    sizes: list[int] = []
    if p:
        names = list(p["legs"])
        for name, rows in p["legs"].items():
            if rows:
                right.plot([r["residents"] for r in rows], per_resident_hour(rows, p["hours"]),
                           "o-", color=colour(name, names), label=f"{name}: wall per "
                           "resident-hour")
                loads += [x for r in rows for x in r["load"]]
        right.axhline(SIZE_TARGET, color="#888", linestyle="--", linewidth=1)
        right.set_xscale("log")
        sizes = sorted({r["residents"] for rows in p["legs"].values() for r in rows})
        right.set_xticks(sizes, [f"{s:,}" for s in sizes])
        right.minorticks_off()
        right.annotate(f"target {SIZE_TARGET}x (scripted)", (sizes[0] if sizes else 1,
                                                             SIZE_TARGET),
                       textcoords="offset points", xytext=(0, 4), fontsize=8, color="#666")
        caption.append(f"population: one episode of {p['hours']:g} simulated hours per size")
        dates.append(p.get("date", ""))
    right.set_xlabel("residents")
    right.set_ylabel(f"against {sizes[0]:,}" if sizes else "against the smallest")
    right.set_title("Cost per resident-hour", fontsize=11)
    # the days' legend below their curves, the sizes' above the target (room made for it)
    for ax, target, where in ((left, DAYS_TARGET, "lower left"),
                              (right, SIZE_TARGET, "upper right")):
        ax.grid(alpha=0.3)
        ax.set_ylim(0, max(ax.get_ylim()[1], target * 1.35))
        if ax.lines:
            ax.legend(fontsize=8, loc=where)
    caption.append(f"loopback: {CONNECTIONS} connections, the real openai backend")
    ones = [float(load_avg.split("/")[0]) for load_avg in loads]
    if ones:
        caption.append(f"{os.cpu_count()} cores, 1-minute load average "
                       f"{min(ones):.1f}-{max(ones):.1f}")
    caption.append(" and ".join(sorted({x for x in dates if x})))
    fig.text(0.01, 0.01, "; ".join(c for c in caption if c), fontsize=7.5, color="#444",
             ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path)
    plt.close(fig)
    return path


# -- the command line ---------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["days", "population", "all", "plot", "leg"],
                        metavar="{days,population,all,plot}")
    parser.add_argument("leg_what", nargs="?", choices=["days", "population"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", choices=[*ENDPOINTS, "both"], default="scripted",
                        help="scripted/town in process, through the loopback endpoint, or both "
                             "side by side [default: scripted]")
    parser.add_argument("--latency", type=float, default=0.5,
                        help="the loopback endpoint's seconds a call [default: 0.5]")
    parser.add_argument("--connections", type=int, default=CONNECTIONS,
                        help="calls the openai backend holds open at once against the "
                             f"loopback endpoint [default: {CONNECTIONS}]")
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--residents", type=int, default=25, help="the town of `days`")
    parser.add_argument("--sizes", default="25,100,400,1000")
    parser.add_argument("--hours", type=float, default=24.0, help="each population's episode")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="keep the figures in FILE (merged into what it holds)")
    parser.add_argument("--png", type=Path, metavar="FILE",
                        help="draw the two curves from the figures (this run's and --json's)")
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.endpoints = list(ENDPOINTS) if args.endpoint == "both" else [args.endpoint]
    if args.what == "leg":  # one episode, run by the benchmark in a child process
        leg = days_leg if args.leg_what == "days" else population_leg
        print(json.dumps(leg(args)))
        return 0
    figures = json.loads(args.json.read_text()) if args.json and args.json.is_file() else {}
    if args.what == "plot":
        if not args.png or not figures:
            parser.error("plot draws --png from the figures kept in --json")
    measured = {}
    if args.what in ("days", "all"):
        measured["days"] = days(args)
    if args.what in ("population", "all"):
        measured["population"] = population(args)
    for what, got in measured.items():
        if args.json:
            figures = save(args.json, what, got)
        else:
            figures[what] = {**got, "date": datetime.date.today().isoformat()}
    if args.png:
        print(f"\n{draw(figures, args.png)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
