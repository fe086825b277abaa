"""The first minute of a new user: a fresh clone's set-up by phase, then the demo's start-up.

--setup: clone this checkout's HEAD into a scratch directory and run the set-up there (`make`'s
.venv/.installed; with --tests `make test`, the set-up and then the suite) with a fresh pip
and uv cache and an empty model cache (nothing cached: every download, the llama-cpp-python
build and the weights conversions happen), each recipe line
timed on its own (make runs its lines through this script, `--timed-line`), then the first
`sandbox --help` and a second one. The scratch
directory is deleted at the end (--keep keeps it).

--demo N: the README's demo (`make demo`'s command, read from the Makefile) N times, each into a
fresh run directory (so the model answers every call: nothing replayed), in this checkout's
venv: when its first line appears, the first utterance, the end; wall and CPU time. Then its
start-up phases N times, each in a fresh process, one after another as the command meets them:
the interpreter and the command's imports, the plug-ins and the parser, the world and the task,
the embedded model (llama.cpp load; the weights' timing when not kept yet), MiniLM.
Medians of the N runs. The weights' timing is kept per machine: run `sandbox weights` first
(or the first demo) so it is not inside the figures, and say so when it is.

Every figure is printed with the CPU's kind and flags and the machine's load (1-minute average
before and after): on a shared 2-core machine the wall time moves with other jobs, the CPU time
(user + sys) far less.

    python bench/first_minute.py --demo 3
    python bench/first_minute.py --setup [--keep] [--jobs auto]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINES_LOG = "FIRST_MINUTE_LINES"  # where --timed-line appends its JSON line


def load() -> float:
    return round(os.getloadavg()[0], 2)


def machine() -> str:
    """The CPU's kind, the flags that decide llama.cpp's speed, the cores, the load."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"model name\s*:\s*(.*)", info)
    flags = set((re.search(r"flags\s*:\s*(.*)", info) or [None, ""])[1].split())
    shown = [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16")
             if f in flags]
    return (f"CPU: {model.group(1) if model else 'unknown'}, {os.cpu_count()} cores, flags "
            f"{' '.join(shown) or 'none of avx2/avx512'}; load {load()}")


# --- the set-up ------------------------------------------------------------------------------

def timed_line(command: str) -> int:
    """Run one make recipe line with /bin/sh, append its wall and CPU time to $FIRST_MINUTE_LINES
    (make calls this as its SHELL: `make SHELL=python .SHELLFLAGS='first_minute.py
    --timed-line'`)."""
    before, started = load(), time.perf_counter()
    child = subprocess.Popen(["/bin/sh", "-c", command])
    _, status, usage = os.wait4(child.pid, 0)
    record = {"line": command, "wall_s": round(time.perf_counter() - started, 1),
              "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "load_before": before,
              "load_after": load(), "status": os.waitstatus_to_exitcode(status)}
    with open(os.environ[LINES_LOG], "a") as fh:
        fh.write(json.dumps(record) + "\n")
    return record["status"]


PHASES = [("venv", r"-m venv"), ("pip upgrade, uv", r"--upgrade pip"),
          ("llama.cpp build || torch", r"pip wheel.*torch=="), ("torch", r"torch=="),
          ("llama-cpp-python build", r"llama-cpp-python"), ("the rest (spaCy, ...)", r"-e "),
          ("bytecode (compileall)", r"compileall"), ("the tests", r"pytest"), ("touch", r"^touch")]


def phase_of(line: str) -> str:
    return next((name for name, pattern in PHASES if re.search(pattern, line, re.S)),
                line[:40])


def setup(keep: bool, tests: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="first-minute-"))
    clone, lines = scratch / "clone", scratch / "lines.jsonl"
    env = {**os.environ, LINES_LOG: str(lines), "PIP_CACHE_DIR": str(scratch / "pip-cache"),
           "UV_CACHE_DIR": str(scratch / "uv-cache"),
           "SANDBOX_MODEL_CACHE": str(scratch / "model-cache"),  # the tests convert, as new
           "PYTHONDONTWRITEBYTECODE": ""}  # a user's shell writes bytecode
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    print(machine())
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        started = time.perf_counter()
        made = subprocess.run(
            ["make", "test" if tests else ".venv/.installed", f"SHELL={sys.executable}",
             f".SHELLFLAGS={Path(__file__).resolve()} --timed-line"],
            cwd=clone, env=env, stdout=subprocess.PIPE, text=True)
        total = time.perf_counter() - started
        tail = [line for line in made.stdout.splitlines() if " passed" in line]
        print(f"make {'test' if tests else '(the set-up only)'}: {total:.0f} s wall in all, "
              f"exit {made.returncode}" + (f"; {tail[-1].strip() if tail else 'no test summary'}"
                                           if tests else ""))
        for record in map(json.loads, lines.read_text().splitlines()):
            if record["line"].lstrip().startswith(("#", "sed -n")):  # a comment; $(shell)
                continue
            print(f"  {phase_of(record['line']):24} {record['wall_s']:7.1f} s wall "
                  f"{record['cpu_s']:7.1f} s CPU  load {record['load_before']}-"
                  f"{record['load_after']}" + ("" if record["status"] == 0 else
                                               f"  exit {record['status']}"))
        for which in ("first", "second"):
            before, started = load(), time.perf_counter()
            subprocess.run([str(clone / ".venv/bin/sandbox"), "--help"], cwd=clone, env=env,
                           stdout=subprocess.DEVNULL, check=True)
            print(f"  {which} `sandbox --help`: {time.perf_counter() - started:.1f} s wall, "
                  f"load {before}-{load()}")
    finally:
        if keep:
            print(f"kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


# --- the demo --------------------------------------------------------------------------------

def demo_command(out: str) -> list[str]:
    """The Makefile's `demo` recipe as an argv, writing into `out` instead of runs/demo."""
    recipe, lines = [], (ROOT / "Makefile").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("demo:")))
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip().rstrip("\\"))
    argv = shlex.split(" ".join(recipe))
    argv[argv.index("--out") + 1] = out
    return [sys.executable, "-m", "sandbox.app.cli", *argv[1:]]


def demo_once(out: str) -> dict[str, float]:
    """One demo into `out`: seconds to its first line, its first progress line, its first
    utterance, its end; CPU seconds (user + sys); calls."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    seen: dict[str, float] = {}
    child = subprocess.Popen(demo_command(out), cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "COLUMNS": "100"})
    for line in child.stdout:
        now = time.perf_counter() - started
        seen.setdefault("first line", now)
        if line.startswith("... "):
            seen.setdefault("first progress", now)
        if re.match(r"[A-Z][\w'-]+ [A-Z][\w'-]+: ", line):  # a resident speaks
            seen.setdefault("first utterance", now)
    if child.wait():
        raise SystemExit(f"the demo failed (exit {child.returncode})")
    seen["end"] = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seen["CPU"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    seen["calls"] = sum(1 for _ in open(f"{out}/calls.jsonl"))
    return seen


# The demo's start-up, phase by phase in one fresh process: each prints its end (time.time()).
STARTUP = r'''
import sys, time, argparse
def mark(name): print(name, time.time(), time.process_time(), flush=True)
mark("start")
from sandbox.app import cli
mark("imports")
parser = cli.build_parser()
mark("plug-ins and parser")
from worlds import load_world
from tasks.stss import instantiate, load_template, template_path
world = load_world("town")
task = instantiate(load_template(template_path("public_spring_tasting"), world), 1, world,
                   background=2)
mark("world and task")
from sandbox.llm.local import LocalBackend
backend = LocalBackend()
mark("embedded model")
from agents.embedding import minilm_embedder
minilm_embedder()("a first memory")
mark("MiniLM")
'''


def startup_once() -> tuple[dict[str, float], dict[str, float]]:
    """The start-up's phases in a fresh process: (wall seconds, CPU seconds) by phase (the
    interpreter's CPU is counted from the process's start)."""
    spawned = time.time()
    out = subprocess.run([sys.executable, "-c", STARTUP], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    wall, cpu, last, last_cpu = {}, {}, spawned, 0.0
    for line in out.splitlines():
        name, at, used = line.rsplit(" ", 2)
        name = "interpreter" if name == "start" else name
        wall[name], cpu[name] = float(at) - last, float(used) - last_cpu
        last, last_cpu = float(at), float(used)
    return wall, cpu


def median_table(runs: list[dict[str, float]], unit: str = "s") -> None:
    for key in runs[0]:
        values = [run[key] for run in runs]
        print(f"  {key:22} median {statistics.median(values):6.2f} {unit}  "
              f"({min(values):.2f}-{max(values):.2f})")


def demo(n: int, startup_only: bool = False) -> None:
    print(machine())
    from sandbox.llm.local import embedded_model_path, llm_threads
    from sandbox.llm.weights import kept_measurements

    threads = llm_threads()
    if kept_measurements(embedded_model_path("smollm2-135m"), threads) is None:
        print(f"note: the weights' formats are not timed yet for {threads} threads: the first "
              "run below includes that timing (about 20 s)")
    runs = []
    for _ in range(0 if startup_only else n):
        with tempfile.TemporaryDirectory() as tmp:
            before = load()
            runs.append(demo_once(f"{tmp}/demo"))
            print(f"  demo: first line {runs[-1]['first line']:.1f} s, end "
                  f"{runs[-1]['end']:.1f} s, CPU {runs[-1]['CPU']:.1f} s, "
                  f"{runs[-1]['calls']:.0f} calls; load {before}-{load()}")
    if runs:
        print(f"the demo, {n} runs, SANDBOX_LLM_THREADS="
              f"{os.environ.get('SANDBOX_LLM_THREADS', '')} (every core when empty):")
        median_table(runs)
    starts, cpus = [], []
    for _ in range(n):
        before = load()
        wall, cpu = startup_once()
        starts.append(wall)
        cpus.append(cpu)
        print(f"  start-up: {sum(wall.values()):.1f} s wall, {sum(cpu.values()):.1f} s CPU; "
              f"load {before}-{load()}")
    print(f"the start-up's phases, one after another in one process, {n} runs, wall:")
    median_table(starts)
    print("the same, CPU (user + sys, every thread of the process):")
    median_table(cpus)
    print(machine())


def main() -> None:
    if sys.argv[1:2] == ["--timed-line"]:  # make's SHELL during --setup
        raise SystemExit(timed_line(sys.argv[2]))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--setup", action="store_true",
                   help="a fresh clone's `make test`, phase by phase, nothing cached (about 10 "
                        "min of every core)")
    p.add_argument("--keep", action="store_true", help="keep --setup's scratch directory")
    p.add_argument("--tests", action="store_true",
                   help="--setup runs `make test` (the set-up, then the whole suite on every "
                        "core) instead of the set-up alone")
    p.add_argument("--demo", type=int, metavar="N",
                   help="the demo N times, and its start-up's phases N times (medians)")
    p.add_argument("--startup-only", action="store_true",
                   help="with --demo N: the start-up's phases only, not the demo itself")
    args = p.parse_args()
    if not args.setup and not args.demo:
        p.error("give --setup, --demo N or both")
    if args.demo is not None and args.demo < 1:
        p.error("--demo N: N is 1 or more")
    if args.setup:
        setup(args.keep, args.tests)
    if args.demo:
        demo(args.demo, args.startup_only)


if __name__ == "__main__":
    main()
