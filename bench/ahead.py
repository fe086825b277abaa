"""Residents running ahead against lockstep, side by side: one STSS episode (a template, ga_tdp,
12 residents, its full window by default) against the loopback endpoint answering like
scripted/town after a fixed latency, or one drawn at random per call, through the real `openai`
backend with 64 connections. For each schedule: the wall time, the calls, how many times calls
went out (lockstep: its rounds), the most in flight and the mean in flight (their latency over
the wall time), and the critical path (the longest chain of calls each waiting for the one
before: no schedule can need fewer rounds); then ahead against lockstep, and whether the two
runs are the same run, file for file (they must be).

    .venv/bin/python bench/ahead.py --latency 0.2
    .venv/bin/python bench/ahead.py --latency 0.1 --latency-max 1.0
    .venv/bin/python bench/ahead.py --latency 0.2 -- --background 4 --same-day --start 15:00

Words after `--` go to `sandbox run` (a shorter window, fewer residents; not with --virtual).

`--virtual` measures the schedule alone: the episode runs in process on scripted/town, and each
call takes its latency on a virtual clock (the run loop's waits move it on: a lockstep round to
its slowest call, running ahead to the first call back), so the figure is the wall time the
schedule would cost against an endpoint with no CPU of its own, the same on any machine and any
load. A drawn latency is drawn from what the call asked (its asker, purpose and seed), so both
schedules draw the same per call.

    .venv/bin/python bench/ahead.py --virtual --latency 0.1 --latency-max 1.0

`--town N --hours H` (with --virtual) runs a generated town of N residents living H simulated
hours instead (bench/growth.py's towns, scripted/town, hashing embedder), where the rounds of a
large town are too many to wait for against an endpoint; each leg also prints its CPU time and
peak memory.

    .venv/bin/python bench/ahead.py --virtual --latency 0.5 --town 1000 --hours 24
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.simtime import MAX_SIM_HOURS_ENV  # noqa: E402


def endpoint(latency: float, latency_max: float | None) -> tuple[subprocess.Popen, str]:
    """The loopback endpoint in a process of its own, and its URL."""
    command = [sys.executable, "-m", "sandbox.llm.loopback", "--script", "town", "--latency",
               str(latency), "--port", "0"]
    if latency_max is not None:
        command += ["--latency-max", str(latency_max)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        process.kill()
        raise SystemExit(f"the loopback endpoint did not start: {line!r}")
    return process, line.split()[-1]


def virtual_leg(template: str, schedule: str, out: Path, latency: float,
                latency_max: float | None, town: tuple[int, float] | None = None) -> None:
    """One episode in this process on the virtual clock (`--virtual`); prints its figures.
    The engine runs as it is: only the pool its calls go out on answers at once, each answer
    done when the virtual clock reaches its latency, and the run loop's wait moves that clock
    on (a lockstep round to its slowest call, running ahead to the first one back)."""
    import hashlib

    from sandbox import engine
    from sandbox.llm import LLMSettings, make_llm
    from tasks.stss import template_path
    from tasks.stss.plugin.suite import run_task
    from worlds import load_world

    clock, spent = [0.0], [0.0]

    class Answer:  # a call answered at once, done when the virtual clock reaches its latency
        def __init__(self, call, llm, request):
            self.value = call(llm, request)
            # drawn from what the asker asked (its seed comes from its own stream, in its own
            # order): the same call draws the same latency under either schedule
            mark = repr((request.agent, request.tag, request.seed)).encode()
            draw = int.from_bytes(hashlib.sha256(mark).digest()[:8], "big")
            self.seconds = latency + (((latency_max or latency) - latency) * draw / 2**64)
            self.at = clock[0] + self.seconds
            self.callbacks = []
            spent[0] += self.seconds
            flying.append(self)

        def add_done_callback(self, callback) -> None:
            self.callbacks.append(callback)

        def done(self) -> bool:
            return self.at <= clock[0]

        def result(self):
            return self.value

    class Pool:  # what the engine sends its calls on
        def __init__(self, max_workers: int):
            pass

        def submit(self, call, llm, request) -> Answer:
            return Answer(call, llm, request)

        def shutdown(self, cancel_futures: bool = False) -> None:
            pass

    flying: list[Answer] = []

    def wait(run_loop, everyone: bool) -> None:
        """The run loop's wait: the clock moves to the last call in flight (a lockstep round)
        or the first, and the calls it reaches are back."""
        if not flying:
            return
        clock[0] = max(a.at for a in flying) if everyone else min(a.at for a in flying)
        back = [a for a in flying if a.done()]
        flying[:] = [a for a in flying if not a.done()]
        for answer in back:
            for callback in answer.callbacks:
                callback(answer)
        run_loop._take_back(block=False)

    engine.ThreadPoolExecutor, engine.Engine._await = Pool, wait
    os.environ["SANDBOX_SCHEDULE"] = schedule
    if town is not None:  # a generated town of (residents, hours), as bench/growth.py runs it
        from bench.growth import episode

        cpu = time.process_time()
        result = episode(*town, out)
        if result.status != "completed":
            raise SystemExit(f"the town ended {result.status}")
        found = figures(out / "run", clock[0])
        found["in_flight"] = spent[0] / clock[0]
        found["cpu_s"] = time.process_time() - cpu
        found["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(found))
        return
    result, _score = run_task(template_path(template), load_world("town"),
                              lambda _run, _performer: make_llm(LLMSettings(
                                  model="scripted/town", cache_mode="off")),
                              architecture="ga_tdp", seed=0, out=out, embedder="hashing",
                              max_concurrency=64)
    if result.status != "completed":
        raise SystemExit(f"the episode ended {result.status}")
    found = figures(out, clock[0])
    found["in_flight"] = spent[0] / clock[0]  # the calls' virtual seconds, not their real ones
    print(json.dumps(found))


def figures(run: Path, wall: float) -> dict:
    result = json.loads((run / "result.json").read_text())
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    return {"wall_s": wall, "calls": len(calls), "sends": result.get("sends"),
            "peak_in_flight": result.get("peak_in_flight"),
            "in_flight": sum(c["latency_s"] for c in calls) / wall,
            "critical_path": max(c.get("depth", 0) for c in calls)}


def main() -> int:
    words = sys.argv[1:]
    extra = words[words.index("--") + 1:] if "--" in words else []
    words = words[:words.index("--")] if "--" in words else words
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--template", default="public_spring_tasting")
    p.add_argument("--latency", type=float, default=0.2, help="seconds a call [default: 0.2]")
    p.add_argument("--latency-max", type=float,
                   help="draw each call's latency from --latency to this")
    p.add_argument("--json", type=Path, help="keep the figures in this file")
    p.add_argument("--virtual", action="store_true",
                   help="in process, each call's latency on a virtual clock: the schedule alone")
    p.add_argument("--town", type=int, metavar="N",
                   help="with --virtual: a generated town of N residents instead of a template")
    p.add_argument("--hours", type=float, default=24.0,
                   help="with --town: simulated hours [default: 24]")
    p.add_argument("--virtual-leg", nargs=2, metavar=("SCHEDULE", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(words)
    if args.virtual and extra:
        p.error("--virtual runs the template's full window: no words after --")
    if args.town is not None and (not (args.virtual or args.virtual_leg) or args.town < 1
                                  or not args.hours > 0):
        p.error("--town N needs --virtual, N of 1 or more and --hours above 0")
    town = (args.town, args.hours) if args.town is not None else None
    if args.virtual_leg:
        virtual_leg(args.template, args.virtual_leg[0], Path(args.virtual_leg[1]), args.latency,
                    args.latency_max, town)
        return 0
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("same_runs", ROOT / ".ci" / "same_runs.py")
    same_runs = module_from_spec(spec)
    spec.loader.exec_module(same_runs)

    process, url = (None, None) if args.virtual else endpoint(args.latency, args.latency_max)
    found = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for schedule in ("lockstep", "ahead"):
                out = Path(tmp) / schedule
                if args.virtual:
                    leg = [a for a in sys.argv[1:] if a != "--virtual"]
                    at = leg.index("--") if "--" in leg else len(leg)
                    done = subprocess.run([sys.executable, __file__, *leg[:at], "--virtual-leg",
                                           schedule, str(out), *leg[at:]], cwd=ROOT,
                                          capture_output=True, text=True, env={
                                              **os.environ, MAX_SIM_HOURS_ENV:
                                              str(max(72.0, args.hours))})
                    if done.returncode != 0:
                        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                        return 1
                    found[schedule] = json.loads(done.stdout.strip().splitlines()[-1])
                    print(f"  {schedule}: {found[schedule]['wall_s']:.1f} virtual s",
                          file=sys.stderr)
                    continue
                command = [sys.executable, "-m", "sandbox.app.cli", "run", args.template,
                           "--arch", "ga_tdp", "--model", "openai/town", "--base-url", url,
                           "--max-concurrency", "64", "--embedder", "hashing", "--seed", "0",
                           "--no-cache", "--quiet", "--schedule", schedule, "--out", str(out),
                           *extra]
                started = time.perf_counter()
                done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                      env={**os.environ, "PYTHONPATH": str(ROOT)})
                wall = time.perf_counter() - started
                if done.returncode != 0:
                    print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                    return 1
                found[schedule] = figures(out, wall)
                print(f"  {schedule}: {wall:.1f} s", file=sys.stderr)
            runs = [Path(tmp) / schedule / ("run" if town else "") for schedule in
                    ("lockstep", "ahead")]
            differs = same_runs.differences(*runs)
    finally:
        if process is not None:
            process.kill()
    latency = f"{args.latency:g}" + (f"-{args.latency_max:g}" if args.latency_max else "")
    where = ("in process on a virtual clock (the schedule alone)" if args.virtual
             else "64 connections")
    what = (f"a generated town of {args.town} residents, {args.hours:g} simulated hours"
            if town else f"{args.template}, ga_tdp, {' '.join(extra) or 'full window'}")
    print(f"{what}, endpoint {latency} s a call, {where}")
    print("| schedule | wall s | calls | sent | most in flight | mean in flight | critical "
          "path | wall / (critical path x mean latency) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    mean = (args.latency + (args.latency_max or args.latency)) / 2
    for schedule, f in found.items():
        bound = f["critical_path"] * mean
        print(f"| {schedule} | {f['wall_s']:.1f} | {f['calls']} | {f['sends']} | "
              f"{f['peak_in_flight']} | {f['in_flight']:.2f} | {f['critical_path']} | "
              f"{f['wall_s'] / bound:.2f} |")
    if town:
        print("CPU s (the episode in process, scripted answers): " + ", ".join(
            f"{schedule} {f['cpu_s']:.1f}" for schedule, f in found.items()) + "; peak RSS MB: "
            + ", ".join(f"{schedule} {f['peak_rss_mb']:.0f}" for schedule, f in found.items()))
    ratio = found["lockstep"]["wall_s"] / found["ahead"]["wall_s"]
    print(f"ahead against lockstep: {ratio:.2f}x; the same run, file for file: "
          f"{'yes' if not differs else 'NO: ' + ', '.join(differs)}")
    if args.json:
        args.json.write_text(json.dumps({"latency": latency, "runs": found}, indent=1))
    return 0 if not differs else 1


if __name__ == "__main__":
    sys.exit(main())
