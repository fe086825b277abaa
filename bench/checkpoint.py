"""Checkpoints (sandbox/checkpoint.py): what writing them costs a run, and what they save a fork.

One STSS episode (a built-in template, 12 residents, its full window; `sandbox run TEMPLATE`
in a process of its own, so that it records its command) run `--repeat` times each way, in
turn: without checkpoints and with one every `--every` of simulated time. Printed: the
episode's wall time (result.json) each way, their ratio and the cost per checkpoint, the
checkpoints' count and size. Then a fork of the run with checkpoints at `--at` (a share of its
window, default 0.9; nothing changed, so the rest comes from the cache too), from its last
checkpoint and `--from-start`: the episode's wall time of each and their ratio, and whether
the two forks' events are byte-identical (they must be, and both the parent's).

    python bench/checkpoint.py                                  # scripted/town, hashing
    python bench/checkpoint.py --model local/smollm2-135m --embedder minilm --same-day
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import checkpoint  # noqa: E402
from sandbox.log import read_header  # noqa: E402


def sandbox(argv: list[str]) -> tuple[float, dict]:
    """Run `sandbox ARGV` in its own process (a benchmark does not drive a command module);
    its wall time and the result.json of the run it wrote (`--out`)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", *argv],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"sandbox {' '.join(argv)} exited {done.returncode}:\n"
                         f"{done.stderr[-2000:]}")
    out = Path(argv[argv.index("--out") + 1])
    return wall, json.loads((out / "result.json").read_text())


def run_twice(args, tmp: Path) -> Path:
    base = ["run", args.template, "--model", args.model, "--seed", str(args.seed),
            "--background", str(args.residents - 1), "--quiet"]
    if args.embedder:
        base += ["--embedder", args.embedder]
    if args.same_day:
        base += ["--same-day"]
    plain, kept = tmp / "plain", tmp / "checkpointed"
    # the episode's own wall time (result.json), without the process's start
    walls: dict[str, list[float]] = {"off": [], args.every: []}
    for _ in range(args.repeat):  # in turn, so that a warmer second run favours neither
        for every, out in (("off", plain), (args.every, kept)):
            _, result = sandbox([*base, "--checkpoint-every", every, "--overwrite",
                                 "--out", str(out)])
            walls[every].append(result["wall_time_s"])
    wall_plain, wall_kept = statistics.median(walls["off"]), statistics.median(walls[args.every])
    sizes = [path.stat().st_size for _, path in checkpoint.listed(kept)]
    same = (plain / "events.jsonl").read_bytes() == (kept / "events.jsonl").read_bytes()
    print(f"== {args.model}: {args.template} seed {args.seed}, {args.residents} residents, "
          f"{args.repeat} runs each, in turn")
    print(f"episode without checkpoints {wall_plain:.2f} s, with one every {args.every} "
          f"{wall_kept:.2f} s (medians of {', '.join(f'{w:.2f}' for w in walls['off'])} and "
          f"{', '.join(f'{w:.2f}' for w in walls[args.every])}): {wall_kept / wall_plain:.3f}x, "
          f"{(wall_kept - wall_plain) / max(len(sizes), 1) * 1000:.0f} ms a checkpoint; "
          f"events identical: {same}")
    print(f"checkpoints {len(sizes)}, {sum(sizes) / 1e6:.2f} MB in all, largest "
          f"{max(sizes, default=0) / 1e6:.2f} MB")
    return kept


def fork_twice(args, run: Path, tmp: Path) -> None:
    header = read_header(run)
    result = json.loads((run / "result.json").read_text())
    at = header.start_time + timedelta(seconds=args.at * result["sim_time_s"])
    when = f"{at:%Y-%m-%d %H:%M}"
    quick, slow = tmp / "fork-quick", tmp / "fork-slow"
    wall_quick, quick_result = sandbox(["fork", str(run), "--at", when, "--out", str(quick)])
    wall_slow, slow_result = sandbox(["fork", str(run), "--at", when, "--out", str(slow),
                                      "--from-start"])
    restored = quick_result.get("restored_from") or 0.0
    same = (quick / "events.jsonl").read_bytes() == (slow / "events.jsonl").read_bytes() \
        == (run / "events.jsonl").read_bytes()
    print(f"fork at {when} ({args.at:.0%} of the window), nothing changed, the rest of the "
          f"window from the cache: from the checkpoint at {restored / 3600:.1f} h "
          f"{quick_result['wall_time_s']:.2f} s, from the start {slow_result['wall_time_s']:.2f} "
          f"s: {slow_result['wall_time_s'] / quick_result['wall_time_s']:.1f}x faster (the "
          f"commands {wall_quick:.1f} and {wall_slow:.1f} s with their start); both forks' "
          f"events identical to each other and the run's: {same}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="scripted/town", help="[default: %(default)s]")
    p.add_argument("--template", default="public_spring_tasting", help="built-in template")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--residents", type=int, default=12, help="performer + background")
    p.add_argument("--embedder", choices=["minilm", "hashing"], default="hashing",
                   help="memory embedder [default: %(default)s]")
    p.add_argument("--same-day", action="store_true", help="start on the event day")
    p.add_argument("--every", default="1h", help="checkpoint interval [default: %(default)s]")
    p.add_argument("--at", type=float, default=0.9,
                   help="the fork point, as a share of the run's window [default: 0.9]")
    p.add_argument("--repeat", type=int, default=3, help="runs of each arm [default: 3]")
    p.add_argument("--keep", type=Path, metavar="DIR", help="keep the runs in DIR")
    args = p.parse_args()
    if not 0 < args.at < 1:
        p.error("--at: a share of the window, above 0 and below 1")
    if args.repeat < 1:
        p.error("--repeat: 1 or more")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        fork_twice(args, run_twice(args, args.keep), args.keep)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fork_twice(args, run_twice(args, Path(tmp)), Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
