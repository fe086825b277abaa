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

Words after `--` go to `sandbox run` (a shorter window, fewer residents).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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
    args = p.parse_args(words)
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("same_runs", ROOT / ".ci" / "same_runs.py")
    same_runs = module_from_spec(spec)
    spec.loader.exec_module(same_runs)

    process, url = endpoint(args.latency, args.latency_max)
    found = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for schedule in ("lockstep", "ahead"):
                out = Path(tmp) / schedule
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
            differs = same_runs.differences(Path(tmp) / "lockstep", Path(tmp) / "ahead")
    finally:
        process.kill()
    latency = f"{args.latency:g}" + (f"-{args.latency_max:g}" if args.latency_max else "")
    print(f"{args.template}, ga_tdp, {' '.join(extra) or 'full window'}, endpoint {latency} s "
          "a call, 64 connections")
    print("| schedule | wall s | calls | sent | most in flight | mean in flight | critical "
          "path | wall / (critical path x mean latency) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    mean = (args.latency + (args.latency_max or args.latency)) / 2
    for schedule, f in found.items():
        bound = f["critical_path"] * mean
        print(f"| {schedule} | {f['wall_s']:.1f} | {f['calls']} | {f['sends']} | "
              f"{f['peak_in_flight']} | {f['in_flight']:.2f} | {f['critical_path']} | "
              f"{f['wall_s'] / bound:.2f} |")
    ratio = found["lockstep"]["wall_s"] / found["ahead"]["wall_s"]
    print(f"ahead against lockstep: {ratio:.2f}x; the same run, file for file: "
          f"{'yes' if not differs else 'NO: ' + ', '.join(differs)}")
    if args.json:
        args.json.write_text(json.dumps({"latency": latency, "runs": found}, indent=1))
    return 0 if not differs else 1


if __name__ == "__main__":
    sys.exit(main())
