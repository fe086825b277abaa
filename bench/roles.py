"""The STSS protocol's roles: what the evaluated model answers against the background model.

Two loopback endpoints (sandbox.llm.loopback, each in a process of its own, the scripted town
model answering after --latency), named by a models file: `under-test` and `town`. Through the
real command line:

(a) one full-window episode (public_spring_tasting seed 0, 12 residents, ga_tdp, from 06:00 the
    day before) with `--model under-test --background-model town` (paper routing): the calls
    and tokens each endpoint answered, from calls.jsonl, against the endpoints' own request
    logs (the evaluated model's share is what a user pays for);
(b) a suite of 30 templates x ga, ga_tdp x --seeds (default 0..2: 180 episodes) with
    `--jobs 16` against the two endpoints: wall time, calls per role.

    .venv/bin/python bench/roles.py                     # (a) and the 180-episode suite
    .venv/bin/python bench/roles.py --seeds 0 --skip-full   # 60 episodes, a quick look
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SANDBOX = [sys.executable, "-m", "sandbox.app.cli"]


def serve(latency: float) -> tuple[subprocess.Popen, str]:
    """A loopback endpoint in a process of its own; (the process, its URL)."""
    proc = subprocess.Popen([sys.executable, "-m", "sandbox.llm.loopback", "--script", "town",
                             "--latency", str(latency), "--port", "0"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    url = next(word for word in line.split() if word.startswith("http"))
    return proc, url


def split(run_dirs: list[Path]) -> dict[str, Counter]:
    """role -> calls, prompt and completion tokens over the runs' calls.jsonl."""
    out: dict[str, Counter] = {}
    for run in run_dirs:
        for line in (run / "calls.jsonl").read_text().splitlines():
            call = json.loads(line)
            row = out.setdefault(call.get("role") or "-", Counter())
            row["calls"] += 1
            row["prompt_tokens"] += call["prompt_tokens"]
            row["completion_tokens"] += call["completion_tokens"]
    return out


def show(title: str, by_role: dict[str, Counter]) -> None:
    calls = sum(r["calls"] for r in by_role.values()) or 1
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in by_role.values()) or 1
    print(title)
    for role, row in sorted(by_role.items()):
        mine = row["prompt_tokens"] + row["completion_tokens"]
        print(f"  {role:10} {row['calls']:7} calls ({row['calls'] / calls:5.1%}), "
              f"{row['prompt_tokens']:9} tokens in, {row['completion_tokens']:8} out "
              f"({mine / tokens:5.1%} of the tokens)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency", type=float, default=0.05, help="seconds an answer takes")
    p.add_argument("--seeds", default="0..2")
    p.add_argument("--jobs", type=int, default=16)
    p.add_argument("--skip-full", action="store_true", help="skip (a)")
    p.add_argument("--skip-suite", action="store_true", help="skip (b)")
    p.add_argument("--out", type=Path, help="where the runs go [default: a temporary directory]")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-roles-"))
    (evaluated, url_a), (background, url_b) = serve(args.latency), serve(args.latency)
    try:
        models = out / "models.yaml"
        out.mkdir(parents=True, exist_ok=True)
        models.write_text(yaml.safe_dump({
            "under-test": {"model": "openai/town", "base_url": url_a, "max_concurrency": 64},
            "town": {"model": "openai/town", "base_url": url_b, "max_concurrency": 64}}))
        roles = ["--models", str(models), "--model", "under-test", "--background-model",
                 "town", "--embedder", "hashing"]
        if not args.skip_full:
            run = out / "full"
            started = time.perf_counter()
            subprocess.run([*SANDBOX, "run", "public_spring_tasting", "--arch", "ga_tdp",
                            "--seed", "0", "--quiet", "--out", str(run), "--overwrite", *roles],
                           check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            print(f"(a) one full-window episode, paper routing: "
                  f"{time.perf_counter() - started:.1f} s wall")
            show("    by role (calls.jsonl):", split([run]))
        if not args.skip_suite:
            suite = out / "suite"
            started = time.perf_counter()
            subprocess.run([*SANDBOX, "stss", "--seeds", args.seeds, "--jobs", str(args.jobs),
                            "--out", str(suite), *roles], check=True, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.perf_counter() - started
            runs = sorted(p.parent for p in suite.glob("*/*/s*/calls.jsonl"))
            print(f"(b) suite of {len(runs)} episodes, --jobs {args.jobs}, two endpoints "
                  f"({args.latency:g} s an answer): {wall:.1f} s wall "
                  f"({wall / 60:.1f} min)")
            show("    by role (calls.jsonl):", split(runs))
    finally:
        for proc in (evaluated, background):
            proc.terminate()
            proc.wait()
    print(f"runs in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
