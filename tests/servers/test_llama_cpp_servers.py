"""Against servers no one here wrote: two llama-cpp-python servers (`python -m
llama_cpp.server`), each with an API key, on the shipped SmolLM2 GGUF, reached through a models
file with no json_dialect line. Run by .ci/run (SANDBOX_REAL_SERVERS=1), not by `make test`:
loading two servers and an STSS window take a minute or two of the 2 cores.

The keys are drawn per run, handed to the servers on their command line and to the runs in
their environment: they are in no file, and a test checks that no file of a run holds one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.llm.local import embedded_model_path

pytestmark = pytest.mark.skipif(os.environ.get("SANDBOX_REAL_SERVERS") != "1",
                                reason="real llama.cpp servers: .ci/run sets "
                                       "SANDBOX_REAL_SERVERS=1")

WINDOW = ["public_spring_tasting", "--background", "2", "--same-day", "--start", "16:55",
          "--until", "17:02", "--seed", "1", "--embedder", "hashing", "--quiet"]
POSTED = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')


class Server:
    """One llama.cpp server on a free port with its own key; its access log counts what it
    answered (the server-side count calls.jsonl is held against)."""

    def __init__(self, name: str, folder: Path):
        self.name, self.key = name, f"sk-{name}-{secrets.token_hex(12)}"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = folder / f"server-{name}.log"
        self.proc = None

    def start(self) -> Server:
        self.log = self.log_path.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model",
             str(embedded_model_path("smollm2-135m")), "--model_alias", f"smol{self.name}",
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "2048",
             "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "False",
             "--api_key", self.key], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        request = urllib.request.Request(f"{self.url}/models",
                                         headers={"Authorization": f"Bearer {self.key}"})
        while True:
            assert self.proc.poll() is None, self.log_path.read_text()[-2000:]
            try:
                urllib.request.urlopen(request, timeout=2)
                return self
            except OSError:
                assert time.monotonic() < deadline, "the llama.cpp server did not start"
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def answered(self) -> int:
        """Chat requests it answered with a 200 so far."""
        return sum(1 for status in POSTED.findall(self.log_path.read_text()) if status == "200")


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("servers")
    a, b = Server("A", folder), Server("B", folder)
    try:
        a.start(), b.start()
        yield a, b
    finally:
        a.stop(), b.stop()


def keys(servers, env) -> None:
    a, b = servers
    env.setenv("SANDBOX_LLM_THREADS", "1")
    env.setenv("KEY_A", a.key)
    env.setenv("KEY_B", b.key)


@pytest.fixture
def models(servers, tmp_path, monkeypatch):
    keys(servers, monkeypatch)
    return models_at(servers, tmp_path)


def models_at(servers, folder: Path) -> Path:
    a, b = servers
    path = folder / "models.yaml"  # no json_dialect: the servers are asked
    path.write_text(yaml.safe_dump({
        "A": {"model": "openai/smolA", "base_url": a.url, "key_env": "KEY_A",
              "price_in": 0.5, "price_out": 1.0},
        "B": {"model": "openai/smolB", "base_url": b.url, "key_env": "KEY_B",
              "price_in": 0.1, "price_out": 0.2}}))
    return path


def calls(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]


def no_key_in(folder: Path, servers) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and not path.name.startswith("server-"):
            data = path.read_bytes()
            assert not any(s.key.encode() in data for s in servers), path


@pytest.fixture(scope="module")
def window(servers, tmp_path_factory):
    """The paper routing on a short window across the two servers, run once: (its run
    directory, what each server answered during it, stderr)."""
    a, b = servers
    folder = tmp_path_factory.mktemp("window")
    models = models_at(servers, folder)
    before = a.answered(), b.answered()
    out = folder / "run"
    with pytest.MonkeyPatch.context() as env:
        keys(servers, env)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["run", *WINDOW, "--models", str(models), "--model", "A",
                         "--background-model", "B", "--out", str(out)]) == 0
    return out, (a.answered() - before[0], b.answered() - before[1]), err.getvalue()


def test_the_paper_routing_window_on_two_servers_counts_what_each_answered(servers, window):
    out, answered, err = window
    assert err.count("JSON dialect json_object, asked of the server") == 2
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "completed" and result["fallbacks"] == 0
    recorded = calls(out)
    assert {c["role"]: c["endpoint"] for c in recorded} == {"evaluated": "A",
                                                            "background": "B"}
    # Every answer each server gave is in calls.jsonl (its one-token dialect probe aside).
    for alias, count in zip(("A", "B"), answered, strict=True):
        answers = sum(c.get("attempts", 1) for c in recorded
                      if c["endpoint"] == alias and not c["cached"])
        assert count == answers + 1, alias
    no_key_in(out.parent, servers)


def test_a_pingpong_player_on_one_server_and_its_judge_on_the_other(servers, models, tmp_path,
                                                                    capsys, monkeypatch):
    out = tmp_path / "pp"
    before = [s.answered() for s in servers]
    monkeypatch.chdir(tmp_path)  # the paths typed relative, as a user types them
    assert main(["pingpong", "--models", models.name, "--player", "A", "--interrogator", "A",
                 "--judge", "B", "--every", "64", "--player-max-tokens", "40",
                 "--interrogator-max-tokens", "30", "--out", "pp"]) == 0
    capsys.readouterr()
    # Every answer each server gave is in calls.jsonl, a judge's answer asked again too (its
    # attempts); at most one more: the dialect probe, once per process and server.
    recorded = [c for run in (out / "runs").iterdir() for c in calls(run) if not c["cached"]]
    for server, was, alias in zip(servers, before, ("A", "B"), strict=True):
        answers = sum(c.get("attempts", 1) for c in recorded if c["endpoint"] == alias)
        assert server.answered() - was - answers in (0, 1), alias
    answered = [s.answered() for s in servers]
    assert main(["pingpong-board", str(out)]) == 0
    board = capsys.readouterr().out
    assert "| A (openai/smolA) |" in board and "by B (openai/smolB)" in board
    pairs = len(list((out / "runs").iterdir()))
    assert "unjudged judgment" not in board and f"judgments: {pairs} usable" in board
    # An item travels: rerun from another directory with no key set, from its answers alone.
    monkeypatch.delenv("KEY_A")
    monkeypatch.delenv("KEY_B")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    item = sorted((out / "runs").iterdir())[0]
    assert main(["rerun", str(item), "--cache-only", "--out", "again"]) == 0
    again = tmp_path / "elsewhere" / "again"
    assert (again / "events.jsonl").read_bytes() == (item / "events.jsonl").read_bytes()
    assert sorted(p.name for p in (again / "judgments").iterdir()) == \
        sorted(p.name for p in (item / "judgments").iterdir())
    assert [s.answered() for s in servers] == answered  # nothing sent
    no_key_in(tmp_path, servers)


def test_a_server_killed_mid_run_then_the_same_command_finishes_as_one_uninterrupted(
        servers, models, window, tmp_path, capsys):
    a, b = servers
    whole = window[0]
    out = tmp_path / "run"
    # Half the whole run's answers in the cache: the run replays them, goes live, and B is
    # killed after its first live answer (its dialect probe's is the one before).
    lines = (whole / "llm_cache.jsonl").read_text().splitlines()
    out.mkdir()
    (out / "llm_cache.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    argv = ["run", *WINDOW, "--models", str(models), "--model", "A",
            "--background-model", "B", "--out", str(out), "--overwrite"]
    killer = threading.Thread(target=kill_after, args=(b, b.answered() + 2), daemon=True)
    killer.start()
    try:
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "the background role: B (openai/smolB)" in err and b.url in err
        assert "check or restart that endpoint" in err
    finally:
        killer.join()
        b.start()
    assert main(argv) == 0
    assert (out / "events.jsonl").read_bytes() == (whole / "events.jsonl").read_bytes()


def kill_after(server: Server, answered: int, within_s: float = 600) -> None:
    """Stop `server` once it has answered `answered` chat calls (a crash mid-run)."""
    deadline = time.monotonic() + within_s
    while server.answered() < answered and time.monotonic() < deadline:
        time.sleep(0.05)
    server.stop()


@pytest.mark.parametrize("case", ["wrong key", "unset key variable"])
def test_a_bad_key_stops_before_anything_runs_naming_the_alias(servers, models, tmp_path,
                                                               monkeypatch, capsys, case):
    if case == "wrong key":
        monkeypatch.setenv("KEY_B", "sk-not-the-key")
    else:
        monkeypatch.delenv("KEY_B")
    code = main(["run", *WINDOW, "--models", str(models), "--model", "A",
                 "--background-model", "B", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "B (openai/smolB)" in err[0]
    assert ("refused the API key" if case == "wrong key" else "$KEY_B is not set") in err[0]
