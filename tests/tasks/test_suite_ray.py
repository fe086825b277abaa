"""`--executor ray`: a suite's episodes in Ray worker processes on a local Ray (2 CPUs), the same
run directories and table as in this process; a worker killed mid-suite loses only its
episodes, which are run again."""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from sandbox.app.cli import main  # noqa: E402
from sandbox.llm.loopback import Loopback  # noqa: E402

from .test_suite_parallel import EPISODE, run_files, templates  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (starting one takes seconds); the suites join it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def suite(tmp_path, out, *extra):
    return main(["stss", "--templates", str(templates(tmp_path)), "--arch", "ga", "--arch",
                 "ga_tdp", "--seeds", "0", "--out", str(out), *EPISODE, *extra])


def test_ray_gives_the_same_table_and_runs_as_this_process(tmp_path, local_ray, capsys):
    assert suite(tmp_path, tmp_path / "here", "--model", "scripted/town") == 0
    assert suite(tmp_path, tmp_path / "ray", "--model", "scripted/town", "--executor", "ray",
                 "--workers", "2", "--jobs", "2") == 0
    assert run_files(tmp_path / "here") == run_files(tmp_path / "ray")
    assert json.loads((tmp_path / "here" / "table.json").read_text()) == \
        json.loads((tmp_path / "ray" / "table.json").read_text())
    capsys.readouterr()
    # resume and score work on what the workers wrote
    assert suite(tmp_path, tmp_path / "ray", "--model", "scripted/town") == 0
    assert "4 episodes (4 already done)" in capsys.readouterr().out
    assert main(["score", str(tmp_path / "ray" / "help_light_bulbs" / "ga" / "s0")]) == 0


def worker_pids() -> list[int]:
    """Ray's worker processes running our actor (Ray names them ray::EpisodeWorker...)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"EpisodeWorker" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_killed_worker_loses_only_its_episodes_which_run_again(tmp_path, local_ray, capsys):
    out = tmp_path / "suite"
    with Loopback("town", latency_s=0.03) as server:
        code = []
        driver = threading.Thread(target=lambda: code.append(suite(
            tmp_path, out, "--model", "openai/town", "--base-url", server.url,
            "--executor", "ray", "--workers", "2", "--jobs", "1")))
        driver.start()
        deadline = time.monotonic() + 120
        while not any(out.rglob("events.jsonl")) or len(worker_pids()) < 2:
            assert time.monotonic() < deadline, "the suite did not start"
            time.sleep(0.2)
        time.sleep(1.0)  # well into the first episodes
        victim = worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        driver.join(timeout=600)
        printed = capsys.readouterr().out
        assert code == [0]
        assert "run again after their worker died" in printed
        assert victim not in worker_pids()
        assert len(list(out.rglob("score.json"))) == 4
        # the episodes run again are the same as those run in this process
        assert suite(tmp_path, tmp_path / "here", "--model", "openai/town", "--base-url",
                     server.url) == 0
    assert run_files(out) == run_files(tmp_path / "here")


def test_without_ray_the_executor_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    assert suite(tmp_path, tmp_path / "s", "--model", "scripted/town", "--executor",
                 "ray") == 2
    err = capsys.readouterr().err
    assert "pip install '.[ray]'" in err and "Traceback" not in err


def test_a_benchmark_on_ray_gives_the_same_dialogues_and_board(tmp_path, local_ray, capsys):
    """The single-room kit (PingPong here) on Ray workers, as in this process."""
    outs = {}
    for name, extra in (("here", []), ("ray", ["--executor", "ray", "--workers", "2"])):
        outs[name] = tmp_path / name
        assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                     "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "16",
                     "--out", str(outs[name]), "--jobs", "2", *extra]) == 0
    printed = capsys.readouterr().out
    assert printed.count("conversations run 5, skipped 0; judgments made 5") == 2

    def events(out: Path) -> dict[str, bytes]:
        return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("events.jsonl")}

    assert len(events(outs["here"])) == 5 and events(outs["here"]) == events(outs["ray"])
    for name, out in outs.items():  # a board is written beside the directory, never into it
        assert main(["pingpong-board", str(out), "--json", str(tmp_path / f"{name}.json")]) == 0
    here, there = (json.loads((tmp_path / f"{name}.json").read_text())["rows"] for name in outs)
    assert [(r["score"], r["ci"]) for r in here] == [(r["score"], r["ci"]) for r in there]
