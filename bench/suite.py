"""Suites at scale: STSS episodes against an OpenAI-compatible endpoint that answers in 0.5 s.

The endpoint is the loopback server (sandbox.llm.loopback, in a process of its own) answering
with the scripted town model after a fixed latency, with up to 64 connections; the episodes
reach it through the real `openai` backend. Measured side by side in one run:

(a) one full STSS episode (public_spring_tasting seed 0, 12 residents, ga_tdp, the full window
    from 06:00 the day before): wall time, calls, CPU time;
(b) a suite of --episodes short episodes (templates whose activity starts by 20:00, from 16:00
    to 20:00 on the event day, 4 residents, ga and ga_tdp) with --jobs 1, --jobs 16, and
    --executor ray with 2 workers x --jobs 16: wall time, calls per second, ratios, peak memory
    per worker process;
(c) the projected wall time of the full suite (30 templates x 2 architectures x 3 seeds = 180
    episodes like (a)) on 2 Ray workers running as many episodes at once as the 64 connections
    serve: waves of episodes, each as long as (a) times how much slower an episode ran among the
    others in (b) than alone; or the calls over the connections, or the episodes' CPU time on 2
    cores, whichever is longest.

Each leg runs in a child process of its own (its peak memory is its own). The embedder is the
hashing one (`--embedder hashing`, as for every scripted benchmark): the real MiniLM adds its own
CPU time per memory, the same whatever the executor (`bench/stss.py` measures it).

    .venv/bin/python bench/suite.py                      # everything (about half an hour)
    .venv/bin/python bench/suite.py --skip-full --episodes 12 --latency 0.1   # a quick look

(d) --benchmarks pingpong,simulbench,refutebench: each single-room benchmark's whole built-in
    set against its own loopback endpoint (its scripted double answering every role after
    --latency), through the real command line in a child process with --jobs 64: PingPong's 64
    pairs, SimulBench's collection of our 120 task dialogues then every script extracted from
    them, RefuteBench's 80 transient dialogues; wall time, calls, calls per second.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loopback_endpoint import (  # noqa: E402
    API_KEY,
    CONNECTIONS,
    endpoint_stats,
    running_endpoint,
    start_endpoint,
    stop_endpoint,
)

FULL_SUITE = 180  # 30 templates x 2 architectures x 3 seeds


# -- (d) the single-room benchmarks at --jobs 64 -----------------------------------------------

def sandbox(argv: list[str]) -> float:
    """The command line in a child process (bench/ never imports a command module); its wall
    time. Raises when it fails."""
    env = {**__import__("os").environ, "OPENAI_API_KEY": API_KEY}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sandbox.app.cli", *argv], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def benchmark_legs(names: list[str], latency: float, jobs: int) -> None:
    """Each benchmark's built-in set against an endpoint of its own, --jobs `jobs`."""
    print(f"(d) single-room benchmarks, every item of the built-in set, --jobs {jobs}, each "
          f"against a loopback endpoint answering after {latency} s ({CONNECTIONS} connections)")
    for name in names:
        with running_endpoint(latency, name) as url:
            m = f"openai/{name}"
            access = ["--base-url", url, "--jobs", str(jobs), "--max-concurrency",
                      str(CONNECTIONS)]
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp)
                if name == "pingpong":
                    legs = {"64 pairs": ["pingpong", "--player", m, "--interrogator", m,
                                         "--judge", m, "--out", str(out / "pp"), *access]}
                elif name == "refutebench":
                    legs = {"80 transient dialogues": [
                        "refutebench", "--model", m, "--refuter", m, "--judge", m,
                        "--out", str(out / "rb"), *access]}
                else:
                    legs = {"collection, 120 dialogues": [
                        "simulbench-collect", "--user", m, "--simulator", m, "--judge", m,
                        "--out", str(out / "collect"), *access]}
                for what, argv in legs.items():
                    before = endpoint_stats(url)["requests"]
                    wall = sandbox(argv)
                    calls = endpoint_stats(url)["requests"] - before
                    print(f"  {name}, {what}: {wall:.1f} s wall, {calls} calls, "
                          f"{calls / wall:.1f} calls/s")
                if name == "simulbench":
                    scripts = out / "scripts.jsonl"
                    sandbox(["simulbench-extract", str(out / "collect"), "--out", str(scripts)])
                    count = len(scripts.read_text().splitlines())
                    before = endpoint_stats(url)["requests"]
                    wall = sandbox(["simulbench", "--scripts", str(scripts), "--simulator", m,
                                    "--judge", m, "--out", str(out / "answers"), *access])
                    calls = endpoint_stats(url)["requests"] - before
                    print(f"  {name}, {count} scripts answered and rated: {wall:.1f} s wall, "
                          f"{calls} calls, {calls / wall:.1f} calls/s")


# -- one leg, in a child process ----------------------------------------------------------------

def _work(context, episode):
    """One episode, its wall time, and the peak memory of the process that ran it."""
    from tasks.stss.plugin.suite import run_suite_episode

    started = time.perf_counter()
    done = run_suite_episode(context, episode)
    return (done, time.perf_counter() - started,
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def episodes_for(kind: str, count: int, out: Path, background: int):
    from tasks.stss import TEMPLATES_DIR, EpisodeWindow, STSSEpisode, instantiate, load_template
    from tasks.stss.plugin.suite import plan_suite
    from worlds import load_world

    if kind == "full":
        return plan_suite([TEMPLATES_DIR / "public_spring_tasting.yaml"], ["ga_tdp"], [0], out), \
            EpisodeWindow()
    # every episode from 16:00 to 20:00 on the event day: of one length, so a suite's wall
    # time is not one long episode's
    window = EpisodeWindow(same_day=True, start="16:00", until="20:00")
    world, chosen = load_world("town"), []
    for seed in range(3):
        for path in sorted(TEMPLATES_DIR.glob("*.yaml")):  # those whose activity is by 20:00
            try:
                STSSEpisode(instantiate(load_template(path, world), seed, world,
                                        background=background), "ga_tdp", window=window)
            except ValueError:
                continue
            chosen.append((path, seed))
    pairs = chosen[: (count + 1) // 2]
    episodes = [e for path, seed in pairs for e in plan_suite([path], ["ga", "ga_tdp"], [seed],
                                                               out)]
    return episodes[:count], window


def leg(args) -> None:
    """Run one leg and print its figures as JSON (the parent reads them)."""
    from functools import partial

    from sandbox.app.roles import TownRoles
    from sandbox.app.suites.parallel import Monitor, Parallel, run_parallel
    from sandbox.llm import LLMSettings, calls_recorded
    from tasks.stss.plugin.suite import SuiteRecipe, episode_key, suite_context

    out = Path(args.out)
    background = 11 if args.kind == "full" else args.background
    episodes, window = episodes_for(args.kind, args.episodes, out, background)
    workers = args.workers or 1
    settings = LLMSettings(model="openai/town", base_url=args.url, cache_mode="off",
                           max_concurrency=max(1, CONNECTIONS // workers))
    recipe = SuiteRecipe(roles=TownRoles(settings), window=window, background=background,
                         embedder="hashing")
    parallel = Parallel(jobs=args.jobs, executor=args.executor, workers=args.workers)
    monitor = Monitor(total=len(episodes))
    started, cpu0 = time.perf_counter(), time.process_time()
    outcomes = run_parallel([(episode_key(e), e) for e in episodes], partial(suite_context, recipe),
                            _work, parallel, monitor=monitor)
    wall = time.perf_counter() - started
    ok = [o for o in outcomes if not o.failed]
    rss: dict[str, float] = {}
    for o in ok:
        rss[str(o.worker)] = max(rss.get(str(o.worker), 0.0), o.result[2])
    print(json.dumps({
        "episodes": len(episodes), "failed": [o.key for o in outcomes if o.failed],
        "wall_s": wall, "run_s": monitor.elapsed_s,  # without setting up (Ray, the world)
        "calls": sum(o.result[0].calls for o in ok), "driver_calls": calls_recorded(),
        "episode_s": [o.result[1] for o in ok], "cpu_s": time.process_time() - cpu0,
        "peak_rss_mib": rss,
        "driver_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_leg(url: str, kind: str, episodes: int, jobs: int, executor: str = "local",
            workers: int | None = None, background: int = 3) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, __file__, "--leg", kind, "--url", url, "--out", tmp,
               "--episodes", str(episodes), "--jobs", str(jobs), "--executor", executor,
               "--background", str(background)]
        if workers:
            cmd += ["--workers", str(workers)]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"leg {kind} jobs {jobs} {executor} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["failed"]:
        raise SystemExit(f"leg {kind} jobs {jobs} {executor}: episodes failed: "
                         f"{figures['failed']}")
    return figures


def project(full: dict, legs: dict, args) -> None:
    """(c): the full suite on 2 Ray workers, as many episodes at once as 64 connections serve."""
    name = f"--executor ray, 2 x --jobs {args.jobs}"
    ray_leg = legs[name]
    total_calls = FULL_SUITE * full["calls"]
    # An episode alone keeps calls x latency / wall of them in flight on average (its agents
    # ask together only at some instants); the endpoint's connections serve that many episodes.
    per_episode = full["calls"] * args.latency / full["wall_s"]
    jobs = max(1, int(CONNECTIONS / per_episode) // 2)  # per worker
    in_flight = 2 * jobs
    # How much slower an episode ran among the others in (b) than alone: the Ray leg's run
    # time against its longest episode run alone (--jobs 1).
    stretch = ray_leg["run_s"] / max(legs["--jobs 1"]["episode_s"]) if "--jobs 1" in legs \
        else 1.0
    waves = math.ceil(FULL_SUITE / in_flight)
    bounds = {
        "episodes": waves * full["wall_s"] * stretch,
        "connections": total_calls * args.latency / CONNECTIONS,
        "CPU": FULL_SUITE * full["cpu_s"] / 2,
    }
    limit = max(bounds, key=bounds.get)
    print(f"(c) the full suite: {FULL_SUITE} episodes like (a), {total_calls:,} calls. An "
          f"episode keeps {per_episode:.2f} calls in flight, so {CONNECTIONS} connections "
          f"serve {in_flight} episodes at once: 2 Ray workers x --jobs {jobs}.")
    print(f"    episodes: {waves} waves x (a)'s {full['wall_s']:.0f} s x {stretch:.2f} (an "
          f"episode among the others against alone, measured in (b) with "
          f"{min(args.episodes, 2 * args.jobs)} at once) = {bounds['episodes'] / 3600:.2f} h")
    print(f"    connections: {total_calls:,} calls x {args.latency} s / {CONNECTIONS} = "
          f"{bounds['connections'] / 3600:.2f} h; CPU: {FULL_SUITE} x {full['cpu_s']:.1f} s / "
          f"2 cores = {bounds['CPU'] / 3600:.2f} h")
    print(f"    projected: {bounds[limit] / 3600:.2f} h, bound by the {limit} (target < 1 h)")


# -- the benchmark --------------------------------------------------------------------------------

def show(name: str, f: dict) -> None:
    rss = ", ".join(f"{r:.0f}" for r in sorted(f["peak_rss_mib"].values()))
    setup = f" (+{f['wall_s'] - f['run_s']:.1f} s setting up)" if f["wall_s"] - f["run_s"] > 1 \
        else ""
    print(f"  {name:30} {f['run_s']:7.1f} s{setup}  {f['calls']:6d} calls  "
          f"{f['calls'] / f['run_s']:6.1f} calls/s  peak RSS per worker {rss} MiB")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--latency", type=float, default=0.5,
                   help="endpoint seconds per call [default: 0.5]")
    p.add_argument("--episodes", type=int, default=12,
                   help="episodes of the suite in (b), 12 or more [default: 12]")
    p.add_argument("--jobs", type=int, default=16, help="--jobs of the parallel legs [16]")
    p.add_argument("--background", type=int, default=3,
                   help="background residents of (b)'s episodes [default: 3]")
    p.add_argument("--skip-full", action="store_true", help="skip (a); no projection")
    p.add_argument("--skip-serial", action="store_true",
                   help="skip (b)'s --jobs 1 leg (the slowest); no ratios")
    p.add_argument("--benchmarks", metavar="NAMES",
                   help="instead, (d): these single-room benchmarks' whole sets at --jobs 64 "
                        "(pingpong,simulbench,refutebench)")
    # a leg, run by the benchmark in a child process
    p.add_argument("--leg", choices=["full", "short"], help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--executor", default="local", help=argparse.SUPPRESS)
    p.add_argument("--workers", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.leg:
        args.kind = args.leg
        leg(args)
        return 0
    if args.benchmarks:
        benchmark_legs(args.benchmarks.split(","), args.latency, 64)
        return 0

    server, url = start_endpoint(args.latency)
    try:
        print(f"loopback endpoint {url}: scripted town answers after {args.latency} s, "
              f"{CONNECTIONS} connections; embedder hashing")
        full = None
        if not args.skip_full:
            full = run_leg(url, "full", 1, 1)
            print(f"(a) one full STSS episode (public_spring_tasting s0, 12 residents, ga_tdp, "
                  f"06:00 the day before to the end):\n      {full['wall_s']:.1f} s wall, "
                  f"{full['calls']} calls, {full['cpu_s']:.1f} s CPU, peak RSS "
                  f"{full['driver_rss_mib']:.0f} MiB")
        print(f"(b) {args.episodes} short episodes ({args.background + 1} residents, 16:00-20:00 "
              f"on the event day, templates whose activity starts by then; ga and ga_tdp); run "
              f"time without setting up:")
        legs = {}
        if not args.skip_serial:
            legs["--jobs 1"] = run_leg(url, "short", args.episodes, 1,
                                       background=args.background)
            show("--jobs 1", legs["--jobs 1"])
        legs[f"--jobs {args.jobs}"] = run_leg(url, "short", args.episodes, args.jobs,
                                              background=args.background)
        show(f"--jobs {args.jobs}", legs[f"--jobs {args.jobs}"])
        ray_name = f"--executor ray, 2 x --jobs {args.jobs}"
        legs[ray_name] = run_leg(url, "short", args.episodes, args.jobs, "ray", 2,
                                 background=args.background)
        show(ray_name, legs[ray_name])
        if "--jobs 1" in legs:
            serial = legs["--jobs 1"]["run_s"]
            for name, figures in legs.items():
                if name != "--jobs 1":
                    print(f"  {name}: {serial / figures['run_s']:.1f}x faster than --jobs 1"
                          + (" (target >= 8x)" if name == f"--jobs {args.jobs}" else "")
                          + f"; {serial / figures['wall_s']:.1f}x with setting up")
        stats = endpoint_stats(url)
        print(f"  endpoint: {stats['requests']} requests, at most {stats['max_in_flight']} at "
              f"once")
        if full is not None:
            project(full, legs, args)
    finally:
        stop_endpoint(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
