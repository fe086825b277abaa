"""Suites with episodes side by side (--jobs): the same run directories as one at a time, one
connection limit for all, failures listed while the others finish."""

import json
import shutil
import threading
from pathlib import Path

import pytest

from agents.scripted import town_backend
from sandbox.app.cli import main
from sandbox.app.suites.parallel import Monitor, Outcome, Parallel, run_parallel
from sandbox.llm import LLMSettings, make_llm
from sandbox.llm.loopback import Loopback
from tasks.stss import TEMPLATES_DIR, EpisodeWindow
from tasks.stss.plugin.suite import SuiteContext, plan_suite, run_suite
from worlds import load_world

EPISODE = ["--embedder", "hashing", "--background", "2", "--same-day", "--start", "16:30",
           "--until", "18:30"]
TEMPLATES = ("public_spring_tasting", "help_light_bulbs")


def templates(tmp_path: Path) -> Path:
    chosen = tmp_path / "templates"
    chosen.mkdir(exist_ok=True)
    for name in TEMPLATES:
        shutil.copy(TEMPLATES_DIR / f"{name}.yaml", chosen)
    return chosen


def run_files(out: Path) -> dict[str, object]:
    """Every episode's events and score, by path: what must not depend on --jobs."""
    def content(path: Path):
        if path.name == "score.json":  # all but the run directory's own path
            return {k: v for k, v in json.loads(path.read_text()).items() if k != "run"}
        return path.read_bytes()

    return {str(p.relative_to(out)): content(p)
            for name in ("events.jsonl", "score.json") for p in sorted(out.rglob(name))}


def test_jobs_4_gives_the_same_run_directories_as_jobs_1_through_one_endpoint(tmp_path):
    with Loopback("town") as server:
        outs = {}
        for jobs in (1, 4):
            out = outs[jobs] = tmp_path / f"jobs{jobs}"
            # The four episodes' calls held 10 ms each, so that they are in flight together and
            # meet the one limit; the reference, one episode at a time, has nothing to overlap
            # (the latency changes no answer).
            server.latency_s = 0.01 if jobs == 4 else 0.0
            assert main(["stss", "--templates", str(templates(tmp_path)), "--arch", "ga",
                         "--arch", "ga_tdp", "--seeds", "0", "--out", str(out), *EPISODE,
                         "--model", "openai/town", "--base-url", server.url,
                         "--max-concurrency", "6", "--jobs", str(jobs)]) == 0
            if jobs == 4:
                assert server.stats()["max_in_flight"] <= 6  # one limit for all four episodes
    one, four = run_files(outs[1]), run_files(outs[4])
    assert len(one) == 8 and one == four
    assert (outs[1] / "table.json").read_text() == (outs[4] / "table.json").read_text()


def test_a_backend_that_answers_one_call_at_a_time_stays_correct_under_jobs(tmp_path):
    """Like the embedded model (max_concurrency 1): the episodes wait for each other's calls."""
    overlaps, active, guard = [], [0], threading.Lock()

    class OneAtATime(type(town_backend())):
        def _complete(self, request):
            with guard:
                active[0] += 1
                overlaps.append(active[0] > 1)
            try:
                return super()._complete(request)
            finally:
                with guard:
                    active[0] -= 1

    backend = OneAtATime(town_backend().responders, model_id="scripted/town",
                         max_concurrency=1)
    world = load_world("town")
    window = EpisodeWindow(same_day=True, start="16:30", until="18:30")
    paths = [TEMPLATES_DIR / f"{name}.yaml" for name in TEMPLATES]
    results = {}
    for jobs in (1, 3):
        out = tmp_path / f"jobs{jobs}"
        context = SuiteContext(world, lambda run_dir, _performer: make_llm(
            LLMSettings(cache_path=run_dir / "llm_cache.jsonl"), backend=backend),
            window=window, background=1, embedder="hashing")
        run = run_suite(plan_suite(paths, ["ga"], [0, 1], out), lambda c=context: c,
                        parallel=Parallel(jobs=jobs))
        assert not run.failures and len(run.scores) == 4
        results[jobs] = run_files(out)
    assert overlaps and not any(overlaps)
    assert results[1] == results[3]


def test_a_failed_episode_is_listed_and_the_others_finish(tmp_path, capsys):
    world = load_world("town")
    paths = [TEMPLATES_DIR / f"{name}.yaml" for name in TEMPLATES]
    episodes = plan_suite(paths, ["ga"], [0, 1], tmp_path / "suite")
    broken = episodes[1].run_dir

    def model_for(run_dir, _performer):
        if run_dir == broken:
            raise RuntimeError("the endpoint fell over")
        return make_llm(LLMSettings(cache_path=run_dir / "llm_cache.jsonl"),
                        backend=town_backend())

    context = SuiteContext(world, model_for, background=1, embedder="hashing",
                           window=EpisodeWindow(same_day=True, start="16:30", until="18:30"))
    monitor = Monitor(total=len(episodes))
    run = run_suite(episodes, lambda: context, parallel=Parallel(jobs=2), monitor=monitor)
    assert [e.run_dir for e, _ in run.failures] == [broken]
    assert "the endpoint fell over" in run.failures[0][1]
    assert len(run.scores) == 3
    assert (monitor.done, monitor.failed, monitor.running) == (3, 1, set())
    assert monitor.calls() > 0 and "failed 1" in monitor.summary()


def test_the_command_lists_failures_at_the_end_and_exits_1(tmp_path, capsys, monkeypatch):
    import tasks.stss.plugin.suite as suite

    real = suite.run_task

    def flaky(template, *args, **kwargs):
        if template.stem == "help_light_bulbs":
            raise RuntimeError("injected failure")
        return real(template, *args, **kwargs)

    monkeypatch.setattr(suite, "run_task", flaky)
    code = main(["stss", "--templates", str(templates(tmp_path)), "--arch", "ga", "--seeds",
                 "0", "--out", str(tmp_path / "suite"), *EPISODE, "--model", "scripted/town",
                 "--jobs", "2"])
    printed = capsys.readouterr().err  # why it failed: on stderr, where scripts look
    assert code == 1
    assert "failed:" in printed and "help_light_bulbs" in printed
    assert "injected failure" in printed and "run the same command again" in printed
    table = json.loads((tmp_path / "suite" / "table.json").read_text())
    assert table["rows"][0]["episodes"]["public_activity"] == 1
    # The table accounts for the failed episode too: counted and named, not dropped.
    assert table["planned"] == 2
    [missing] = table["missing"]
    assert "help_light_bulbs" in missing["run"] and "injected failure" in missing["why"]
    md = (tmp_path / "suite" / "table.md").read_text()
    assert "Scored 1 of 2 planned episode(s); 1 without a score, not in the means:" in md
    assert "help_light_bulbs/ga/s0: failed: " in md


def test_a_cache_miss_stops_the_suite_after_the_running_episodes():
    from sandbox.llm import CacheMiss

    started = []

    def work(state, n):
        started.append(n)
        if n == 2:
            raise CacheMiss("no cached answer")
        return n

    with pytest.raises(CacheMiss):
        run_parallel([(str(n), n) for n in range(20)], lambda: None, work, Parallel(jobs=2),
                     stop_on=(CacheMiss,))
    assert len(started) < 20


def test_the_monitor_counts_and_estimates_the_time_left():
    calls, now = [0], [100.0]
    monitor = Monitor(total=4, clock=lambda: now[0])
    monitor.begin(lambda: calls[0])
    assert monitor.eta_s() is None and "left --" in monitor.summary()
    monitor.started("a")
    monitor.started("b")
    calls[0], now[0] = 100, 110.0  # 10 calls/s
    monitor.finished(Outcome("a", result=1), calls=60)
    monitor.finished(Outcome("z", result=1), skipped=True)
    eta = monitor.eta_s()
    # 2 episodes left at 60 calls each, 40 made by "b" already: 80 calls at the rate so far
    assert monitor.calls_per_s() == 10 and eta == 8
    assert monitor.summary().startswith("done 2 (1 already), running 1, failed 0;")


def test_a_calls_count_that_fails_keeps_the_last_one_and_is_counted():
    calls = [0]

    def source():
        if calls[0] < 0:
            raise OSError("a worker's calls.jsonl went away")
        return calls[0]

    monitor = Monitor(total=2)
    monitor.begin(source)
    calls[0] = 7
    assert monitor.calls() == 7
    calls[0] = -1
    assert monitor.calls() == 7 and monitor.failed_polls == 1
    assert "(calls not counted 2 times)" in monitor.summary()  # it polls once more


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "argument --jobs: '0': out of range; give a whole number from 1 to "
                      "1,024 (see: sandbox stss --help)"),
    (["--workers", "2"], "--workers needs --executor ray"),
    (["--address", "10.0.0.1:6379"], "--address needs --executor ray"),
])
def test_bad_parallel_options_are_one_line_errors(tmp_path, capsys, argv, message):
    assert main(["stss", "--templates", str(templates(tmp_path)), "--out",
                 str(tmp_path / "s"), *EPISODE, "--model", "scripted/town", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_benchmark_with_jobs_4_gives_the_same_dialogues_and_judgments(tmp_path, capsys):
    """The single-room kit (PingPong here; SimulBench, RefuteBench, the STSS language level
    run the same way)."""
    outs = {}
    for jobs in (1, 4):
        outs[jobs] = tmp_path / f"jobs{jobs}"
        assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                     "scripted/pingpong", "--judge", "scripted/pingpong", "--judge",
                     "scripted/pingpong-strict", "--every", "8", "--out", str(outs[jobs]),
                     "--jobs", str(jobs)]) == 0
    printed = capsys.readouterr().out
    assert "conversations run 8, skipped 0; judgments made 16" in printed

    def steady(value):  # a judgment but when it was made and how long the judge took
        if isinstance(value, dict):
            return {k: steady(v) for k, v in value.items() if k not in ("created_at", "latency_s")}
        return [steady(v) for v in value] if isinstance(value, list) else value

    def content(path: Path):
        return steady(json.loads(path.read_text())) if path.suffix == ".json" \
            else path.read_bytes()

    def files(out: Path) -> dict[str, object]:
        return {str(p.relative_to(out)): content(p) for p in sorted(out.rglob("*"))
                if p.name == "events.jsonl" or p.parent.name == "judgments"}

    one, four = files(outs[1]), files(outs[4])
    assert len(one) == 8 * 3 and one == four
