"""Reliability in figures (issue 19): a fault soak, then kill -9 at random moments and resume.

    .venv/bin/python bench/soak.py                         # 100 episodes, 30% faults, 20 kills
    .venv/bin/python bench/soak.py --episodes 5 --kills 2  # a quick look
    .venv/bin/python bench/soak.py --kills 0 --jobs 8      # the soak alone, 8 episodes at once

The soak: short STSS episodes (event day from 15:00, 2 background residents, hashing embedder;
the 27 built-in templates whose activity fits that window, seeds 0, 1, ...) and a PingPong quick
run (--every 8, one judge) through the real `openai` backend -- HTTP client, our retries, the
structured layer -- against the loopback endpoint (sandbox.llm.loopback) answering with the
scripted backends and injecting faults of every kind at --fault-rate. It prints the faults
injected by kind (the server's count) beside those counted in calls.jsonl, the calls that
recovered and those that fell back by module, crashed or unscored episodes, whether `sandbox
log` shows every fault, and the wall time.

Kill and resume: the same `sandbox stss` suite (3 episodes, scripted/town) and `sandbox
pingpong` quick run (8 pairs, one judge) as a user runs them, each killed with SIGKILL at a
random moment (uniform over the time an uninterrupted run works; alternating between the two),
then run again with the same command; the finished directory's events.jsonl files, scores,
judgments (less their wall-clock fields) and table or board must be byte-identical to those of
an uninterrupted run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.app.suites.benchmark import Configuration, ModelPool, run_benchmark  # noqa: E402
from sandbox.app.suites.parallel import Parallel  # noqa: E402
from sandbox.llm import LLMSettings, make_backend, make_llm  # noqa: E402
from sandbox.llm.loopback import Loopback  # noqa: E402
from sandbox.log import CACHE, load_run  # noqa: E402
from sandbox.summary import summarize  # noqa: E402
from tasks.pingpong import load_settings, pair_items  # noqa: E402
from tasks.pingpong.plugin import PINGPONG  # noqa: E402
from tasks.stss import (  # noqa: E402
    TEMPLATES_DIR,
    EpisodeWindow,
    STSSEpisode,
    instantiate,
    load_template,
)
from tasks.stss.plugin.suite import Episode, SuiteContext, run_suite  # noqa: E402
from worlds import load_world  # noqa: E402

WINDOW = EpisodeWindow(same_day=True, start="15:00")
BACKGROUND = 2
# How each injected fault shows in calls.jsonl: transport faults one for one, answer faults as
# what the structured layer made of them.
TRANSPORT = {"timeout": "timeout", "429": "rate_limit", "429_retry_after": "rate_limit",
             "500": "server_error", "503": "server_error", "reset": "connection"}
ANSWER_FAULTS = ("malformed", "truncated", "off_schema", "empty")
ATTEMPT_ANSWER_FAULTS = {"truncated", "malformed_json", "off_schema", "unparseable", "empty",
                         "repaired"}


# -- the soak -----------------------------------------------------------------------------------
def short_episodes(count: int, out: Path, world) -> list[Episode]:
    """`count` episodes over the templates whose activity fits WINDOW for every seed used."""
    seeds = range(-(-count // 27) + 1)
    fits = []
    for path in sorted(TEMPLATES_DIR.glob("*.yaml")):
        template = load_template(path, world)
        try:
            for seed in seeds:
                task = instantiate(template, seed, world, background=BACKGROUND)
                STSSEpisode(task, "ga", window=WINDOW)
                if WINDOW.cut_short(task):
                    raise ValueError("cut short")
        except ValueError:
            continue
        fits.append(path)
    plan = [Episode(path, "ga", seed, out / path.stem / "ga" / f"s{seed}")
            for seed in seeds for path in fits]
    return plan[:count]


def attempts_with_answer_faults(faults: list[str]) -> int:
    """Attempts of one call whose answer was unusable or needed repair (a call's faults are its
    attempts' in order, each re-ask closing one)."""
    count, current = 0, set()
    for fault in [*faults, "reasked"]:
        if fault in ("reasked", "fallback", "unavailable"):
            count += bool(current & ATTEMPT_ANSWER_FAULTS)
            current = set()
        else:
            current.add(fault)
    return count


def call_figures(run_dirs: list[Path]) -> dict:
    """Faults counted in the runs' calls.jsonl, recoveries, fallbacks by module, and whether
    `sandbox log`'s summary of each run shows every one of them."""
    seen, fallbacks = Counter(), Counter()
    calls = faulted = recovered = answer_attempts = log_mismatches = 0
    for run_dir in run_dirs:
        run = load_run(run_dir)
        run_faults = Counter()
        for call in run.calls:
            calls += 1
            seen.update(call.faults)
            run_faults.update(call.faults)
            answer_attempts += attempts_with_answer_faults(call.faults)
            if call.faults:
                faulted += 1
                if "fallback" in call.faults:
                    fallbacks[call.tag.split(".")[0]] += 1
                else:
                    recovered += 1
        log_mismatches += Counter(summarize(run)["llm_faults"]) != run_faults
    return {"calls": calls, "faulted": faulted, "recovered": recovered, "seen": seen,
            "fallbacks": fallbacks, "answer_attempts": answer_attempts,
            "log_mismatches": log_mismatches}


def soak_stss(count: int, rate: float, seed: int, out: Path, jobs: int = 1) -> dict:
    world = load_world("town")
    episodes = short_episodes(count, out, world)
    failures: list[tuple[Episode, str]] = []
    crashed = 0
    with Loopback("town", fault_rate=rate, seed=seed, timeout_sleep_s=1.0) as server:
        settings = LLMSettings(model="openai/town", base_url=server.url, timeout_s=0.5,
                               retry_initial_wait_s=0.01)
        backend = make_backend(settings)
        started = time.perf_counter()
        def context() -> SuiteContext:
            return SuiteContext(world, lambda run_dir, _performer: make_llm(settings.model_copy(
                update={"cache_path": run_dir / CACHE}), backend=backend), window=WINDOW,
                background=BACKGROUND, embedder="hashing")

        try:
            suite = run_suite(episodes, context, parallel=Parallel(jobs=jobs))
            scores, failures = suite.scores, suite.failures
        except Exception as exc:  # noqa: BLE001 - what the soak measures
            print(f"  the suite itself crashed: {type(exc).__name__}: {exc}")
            crashed, scores = len(episodes), []
        wall = time.perf_counter() - started
        injected = server.stats()["faults"]
        free_text = server.stats()["free_text_faults"]
    completed = sum(1 for e in episodes
                    if (e.run_dir / "result.json").exists()
                    and load_run(e.run_dir).result.status == "completed")
    return {"episodes": len(episodes), "completed": completed, "scored": len(scores),
            "crashed": crashed + len(failures), "failures": failures, "wall_s": wall,
            "injected": Counter(injected), "free_text": Counter(free_text),
            **call_figures([e.run_dir for e in episodes if e.run_dir.exists()])}


def soak_pingpong(rate: float, seed: int, out: Path) -> dict:
    items = pair_items(load_settings())
    with Loopback("pingpong", fault_rate=rate, seed=seed, timeout_sleep_s=1.0) as server:
        pool = ModelPool(LLMSettings(base_url=server.url, timeout_s=0.5,
                                     retry_initial_wait_s=0.01))
        started = time.perf_counter()
        try:
            report = run_benchmark(
                PINGPONG, out, items, pool, Configuration(
                    models={"player": "openai/pingpong", "interrogator": "openai/pingpong"},
                    sampling={r.name: r.sampling for r in PINGPONG.roles},
                    judges=["openai/pingpong"], every=8))
            crashed = len(report.failures)
        except Exception as exc:  # noqa: BLE001 - what the soak measures
            print(f"  the PingPong run crashed: {type(exc).__name__}: {exc}")
            report, crashed = None, 1
        wall = time.perf_counter() - started
        injected = server.stats()["faults"]
        free_text = server.stats()["free_text_faults"]
    runs = sorted(p for p in (out / "runs").glob("*") if p.is_dir())
    return {"items": report.items if report else 0, "runs": report.runs_made if report else 0,
            "judged": report.judged.made if report else 0,
            "judge_fallbacks": report.judged.fallbacks if report else 0, "crashed": crashed,
            "wall_s": wall, "injected": Counter(injected), "free_text": Counter(free_text),
            **call_figures(runs)}


def print_soak(name: str, figures: dict, count_line: str) -> None:
    injected, seen = figures["injected"], figures["seen"]
    print(f"{name}: {count_line}; wall {figures['wall_s']:.1f} s")
    print(f"  faults injected: {sum(injected.values())}  "
          + ", ".join(f"{k} {injected[k]}" for k in sorted(injected)))
    transport_in = sum(injected[k] for k in TRANSPORT)
    transport_seen = sum(seen[v] for v in set(TRANSPORT.values()))
    answer_in = sum(injected[k] for k in ANSWER_FAULTS)
    # Prose or a JSON text is a valid answer to a free-text call (a chat line): no fault there.
    valid_text = figures["free_text"]["malformed"] + figures["free_text"]["off_schema"]
    missed = max(0, answer_in - valid_text - figures["answer_attempts"])
    print(f"  transport faults injected {transport_in}, counted in calls.jsonl {transport_seen}; "
          f"answer faults injected {answer_in} (of them {valid_text} prose or JSON sent to a "
          f"free-text call: a valid answer there unless its parser refuses it), attempts with an "
          f"unusable, cut-off or repaired answer counted {figures['answer_attempts']}: "
          f"{missed} uncounted")
    print("  counted in calls.jsonl: " + ", ".join(f"{k} {seen[k]}" for k in sorted(seen)))
    print(f"  calls {figures['calls']}, with a fault {figures['faulted']}: recovered "
          f"{figures['recovered']}, fell back {sum(figures['fallbacks'].values())} ("
          + ", ".join(f"{k} {v}" for k, v in sorted(figures["fallbacks"].items())) + ")")
    print(f"  runs whose `sandbox log` fault count differs from calls.jsonl: "
          f"{figures['log_mismatches']}")


# -- kill and resume ----------------------------------------------------------------------------
def stss_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "sandbox.app.cli", "stss", "--templates",
            str(TEMPLATES_DIR / "public_spring_tasting.yaml"), "--arch", "ga", "--seeds", "0..2",
            "--out", str(out), "--model", "scripted/town", "--embedder", "hashing",
            "--background", "2", "--same-day", "--start", "15:00"]


def pingpong_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "sandbox.app.cli", "pingpong", "--player", "scripted/pingpong",
            "--interrogator", "scripted/pingpong", "--judge", "scripted/pingpong", "--every",
            "8", "--out", str(out)]


def board_command(out: Path, board: Path) -> list[str]:
    return [sys.executable, "-m", "sandbox.app.cli", "pingpong-board", str(out), "--json",
            str(board)]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def run_to_end(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:5])} exited {done.returncode}: "
                           f"{done.stderr.strip()[-400:]}")
    return time.perf_counter() - started


WALL_CLOCK = ("created_at", "latency_s", "cached", "wall_time_s")


def outputs(out: Path, kind: str, cwd: Path) -> dict[str, bytes]:
    """What must come out the same: every run's events.jsonl, the scores or judgments (less
    their wall-clock fields), and the table or board."""
    found = {}
    for path in sorted(out.rglob("*")):
        rel = str(path.relative_to(out))
        if path.name in ("events.jsonl", "score.json", "table.json", "table.md"):
            found[rel] = path.read_bytes()
        elif path.parent.name == "judgments" and path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            found[rel] = json.dumps({k: v for k, v in data.items() if k not in WALL_CLOCK},
                                    sort_keys=True).encode()
    if kind == "pingpong":
        board = cwd / "board.json"
        run_to_end(board_command(out, board), cwd)
        found["board.json"] = board.read_bytes()
    return found


def kill_at(command: list[str], cwd: Path, started_when, after_s: float) -> bool:
    """Start `command`; once `started_when()` holds (it is doing its work, past the imports),
    wait `after_s` and SIGKILL it. Whether it was still running to be killed."""
    proc = subprocess.Popen(command, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not started_when():
            time.sleep(0.002)
        deadline = time.perf_counter() + after_s
        while proc.poll() is None and time.perf_counter() < deadline:
            time.sleep(0.002)
        if proc.poll() is not None:
            return False
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def kill_and_resume(kills: int, seed: int, work: Path) -> dict:
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    kinds = {"stss": (stss_command, "suite.json"), "pingpong": (pingpong_command, "runs")}
    reference, working = {}, {}
    for kind, (command, marker) in kinds.items():
        out = work / kind
        started = time.perf_counter()
        proc = subprocess.Popen(command(out), cwd=work, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while proc.poll() is None and not (out / marker).exists():
            time.sleep(0.002)
        begun = time.perf_counter()
        if proc.wait() != 0:
            raise RuntimeError(f"the uninterrupted {kind} run failed")
        working[kind] = time.perf_counter() - begun  # the time it works, past the imports
        print(f"  uninterrupted {kind} run: {time.perf_counter() - started:.1f} s "
              f"({working[kind]:.1f} s of work)")
        reference[kind] = outputs(out, kind, work)
        shutil.rmtree(out)
    done = Counter()
    identical = Counter()
    early = 0
    moments = []
    differ: dict[str, list[str]] = {}
    while sum(done.values()) < kills:
        kind = "stss" if sum(done.values()) % 2 == 0 else "pingpong"
        command, marker = kinds[kind]
        out = work / kind
        after = rng.uniform(0, working[kind])
        if not kill_at(command(out), work, (out / marker).exists, after):
            early += 1  # it finished first: not a kill, draw again
            shutil.rmtree(out, ignore_errors=True)
            continue
        done[kind] += 1
        moments.append(f"{kind}@{after:.2f}s")
        run_to_end(command(out), work)
        resumed = outputs(out, kind, work)
        identical[kind] += resumed == reference[kind]
        if resumed != reference[kind]:
            names = sorted(set(resumed) | set(reference[kind]))
            differ[f"{kind}@{after:.2f}s"] = [n for n in names
                                               if resumed.get(n) != reference[kind].get(n)]
            keep = work / f"differs-{kind}-{len(differ)}"  # for a look afterwards
            shutil.rmtree(keep, ignore_errors=True)
            shutil.move(out, keep)
        shutil.rmtree(out, ignore_errors=True)
    return {"kills": done, "identical": identical, "finished_first": early,
            "moments": moments, "differ": differ}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=100,
                        help="STSS episodes of the soak [default: %(default)s]")
    parser.add_argument("--fault-rate", type=float, default=0.3,
                        help="share of requests that get a fault [default: %(default)s]")
    parser.add_argument("--jobs", type=int, default=4,
                        help="soak episodes side by side (sandbox stss --jobs) "
                             "[default: %(default)s]")
    parser.add_argument("--kills", type=int, default=20,
                        help="kill -9 and resume trials, half STSS, half PingPong "
                             "[default: %(default)s]")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the fault draws and the kill moments")
    parser.add_argument("--keep", type=Path, help="keep the soak's directories here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        crashes = 0
        if args.episodes:
            stss = soak_stss(args.episodes, args.fault_rate, args.seed, work / "soak-stss",
                             jobs=args.jobs)
            crashes += stss["crashed"]
            print_soak(f"STSS soak, {args.fault_rate:.0%} faults", stss,
                       f"{stss['episodes']} episodes, {stss['completed']} completed, "
                       f"{stss['scored']} scored, {stss['crashed']} crashed")
            for episode, error in stss["failures"]:
                print(f"  crashed: {episode.run_dir}: {error}")
            ping = soak_pingpong(args.fault_rate, args.seed, work / "soak-pingpong")
            crashes += ping["crashed"]
            print_soak(f"PingPong quick run, {args.fault_rate:.0%} faults", ping,
                       f"{ping['items']} pairs, {ping['runs']} conversations, {ping['judged']} "
                       f"judgments ({ping['judge_fallbacks']} judge fallbacks), "
                       f"{ping['crashed']} crashed")
        if args.kills:
            started = time.perf_counter()
            figures = kill_and_resume(args.kills, args.seed, work / "kills")
            kills, same = figures["kills"], figures["identical"]
            print(f"kill -9 and resume: {sum(kills.values())} kills ("
                  + ", ".join(f"{k} {kills[k]}" for k in sorted(kills)) + f"), "
                  f"{sum(same.values())} resumed byte-identical ("
                  + ", ".join(f"{k} {same[k]}" for k in sorted(same)) + f"); "
                  f"{figures['finished_first']} drawn moments came after the run had ended; "
                  f"{time.perf_counter() - started:.0f} s")
            print("  moments: " + " ".join(figures["moments"]))
            for moment, names in figures["differ"].items():
                print(f"  not identical after the kill at {moment}: {', '.join(names[:6])}"
                      + (f" and {len(names) - 6} more" if len(names) > 6 else ""))
        print(f"crashes: {crashes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
