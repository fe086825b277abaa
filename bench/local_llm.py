"""Prompt-prefix reuse in the embedded model: the same STSS episode with reuse off and on,
measured side by side in one run (each in its own process).

    .venv/bin/python bench/local_llm.py                       # the README demo's episode
    .venv/bin/python bench/local_llm.py --start 13:00         # a longer one (more calls)

For each: wall time, LLM calls, seconds per call, prompt tokens and the share not evaluated
again, calls that restored a stored prefix, peak RSS; then the ratio, and the agreement of the
answers: over the calls both runs made with the same prompt (same cache key), the share whose
answers are identical. Restoring a KV state instead of recomputing it may change a float in the
last digits, and so, rarely, a sampled token; every later prompt of that episode then differs.
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

ROOT = Path(__file__).resolve().parent.parent
SANDBOX = ROOT / ".venv" / "bin" / "sandbox"


def run(out: Path, prefix_mb: int, args) -> dict:
    env = {**os.environ, "SANDBOX_LLM_PREFIX_MB": str(prefix_mb)}
    command = ["/usr/bin/time", "-f", "%M", str(SANDBOX), "run", args.template, "--arch",
               "ga_tdp", "--model", "local/smollm2-135m", "--background", str(args.background),
               "--same-day", "--start", args.start, "--seed", str(args.seed), "--out", str(out),
               "--overwrite", "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the run failed:\n{done.stderr[-2000:]}")
    rss_mib = int(done.stderr.strip().splitlines()[-1]) / 1024
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    answers = {}
    for line in (out / "llm_cache.jsonl").read_text().splitlines():
        entry = json.loads(line)
        answers[entry["key"]] = entry["text"]
    llm_s = sum(c["latency_s"] for c in calls)
    return {"wall": wall, "calls": len(calls), "llm_s": llm_s,
            "per_call": llm_s / max(len(calls), 1),
            "prompt": sum(c["prompt_tokens"] for c in calls),
            "reused": sum(c.get("prefix_tokens", 0) for c in calls),
            "restored": sum(bool(c.get("prefix_restored")) for c in calls),
            "rss": rss_mib, "answers": answers,
            "events": (out / "events.jsonl").read_bytes()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", default="public_spring_tasting")
    parser.add_argument("--background", type=int, default=2)
    parser.add_argument("--start", default="15:00", help="start time on the event's day")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefix-mb", type=int, default=512, help="the store's budget when on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        off = run(Path(tmp) / "off", 0, args)
        on = run(Path(tmp) / "on", args.prefix_mb, args)
    shared = [k for k in off["answers"] if k in on["answers"]]
    same = sum(off["answers"][k] == on["answers"][k] for k in shared)
    print(f"{args.template}, {args.background} background residents, from {args.start}, seed "
          f"{args.seed}, embedded model, threads {os.environ.get('SANDBOX_LLM_THREADS', 'all')}")
    for name, r in (("reuse off", off), (f"reuse on ({args.prefix_mb} MiB)", on)):
        share = r["reused"] / max(r["prompt"], 1)
        print(f"  {name:20s} {r['wall']:7.1f} s wall, {r['calls']:4d} calls, "
              f"{r['per_call']:5.2f} s per call, {r['reused']}/{r['prompt']} prompt tokens "
              f"reused ({share:.0%}), {r['restored']} restores, peak RSS {r['rss']:.0f} MiB")
    print(f"  per call: {off['per_call'] / max(on['per_call'], 1e-9):.2f}x faster with reuse; "
          f"wall {off['wall'] / on['wall']:.2f}x")
    print(f"  agreement: {same} of {len(shared)} calls with the same prompt gave the same answer"
          f"; events.jsonl {'identical' if off['events'] == on['events'] else 'differ'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
