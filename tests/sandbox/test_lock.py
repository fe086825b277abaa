"""One writer per directory (sandbox/lock.py): a second command writing into an --out is
refused at once naming the holder; a lock left by a killed process is taken over; what killed
writes left behind is cleaned when a directory is locked; torn lines are cut only under a lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback
from sandbox.lock import LOCK_FILE, DirectoryBusy, held_over, hold
from sandbox.storage import open_append

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = str(ROOT / "tasks" / "stss" / "templates" / "public_spring_tasting.yaml")
HOLD = ("import sys, time\nfrom sandbox.lock import hold\nwith hold(sys.argv[1]):\n"
        "    print('held', flush=True)\n    time.sleep(120)\n")


@contextmanager
def holder(directory: Path):
    """Another process holding `directory`'s lock; yields its pid."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


WRITERS = {
    "run": ["run", "single_room", "--model", "scripted/default"],
    "stss": ["stss", "--templates", TEMPLATE, "--arch", "ga", "--model", "scripted/town",
             "--embedder", "hashing", "--background", "2", "--same-day", "--start", "15:00"],
    "pingpong": ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "32"],
    "refutebench": ["refutebench", "--model", "scripted/refutebench", "--refuter",
                    "scripted/refutebench", "--judge", "scripted/refutebench", "--every", "40"],
    "simulbench-collect": ["simulbench-collect", "--user", "scripted/simulbench", "--simulator",
                           "scripted/simulbench", "--judge", "scripted/simulbench", "--every",
                           "60"],
    "stss-lang": ["stss-lang", "--arch", "ga", "--model", "scripted/stss-lang", "--judge",
                  "scripted/stss-lang", "--every", "67"],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_second_writer_is_refused_at_once_naming_the_holder(command, tmp_path, capsys,
                                                              monkeypatch):
    from sandbox.llm import SCRIPTS
    from tasks.stss_lang.scripted import stss_lang_backend

    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    out = tmp_path / "out"
    with holder(out) as proc:
        before = listing(out)
        started = time.perf_counter()
        assert main([*WRITERS[command], "--out", str(out)]) == 2
        assert time.perf_counter() - started < 10  # at once: before any model or episode
        printed = capsys.readouterr()
        assert printed.out == ""
        [line] = printed.err.strip().splitlines()
        assert f"pid {proc.pid}" in line and "python -c" in line and str(out) in line
        assert listing(out) == before  # nothing written


def test_a_command_writing_now_is_named_by_the_one_refused(tmp_path, capsys):
    """Two real commands into one --out: the second is refused with the first's command line,
    and the first finishes untouched."""
    out = tmp_path / "run"
    with Loopback("default", latency_s=0.4) as server:
        first = subprocess.Popen(
            [sys.executable, "-m", "sandbox.app.cli", "run", "single_room", "--model",
             "openai/default", "--base-url", server.url, "--out", str(out), "--quiet"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (out / "events.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out),
                     "--overwrite"]) == 2
        # The answers were slow only to keep the first writing while the second was refused;
        # its remaining calls need not wait.
        server.latency_s = 0.0
        first_out, first_err = first.communicate(timeout=120)
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"pid {first.pid}" in line and "sandbox run single_room" in line
    assert first.returncode == 0, first_err
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "completed"
    assert not (out / LOCK_FILE).exists()  # released when it ended


def test_writing_inside_a_directory_another_command_writes_is_refused(tmp_path, capsys):
    suite = tmp_path / "suite"
    with holder(suite) as proc:
        assert main(["run", "single_room", "--model", "scripted/default", "--out",
                     str(suite / "extra" / "s0")]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert f"pid {proc.pid}" in line and "inside" in line
        assert not (suite / "extra").exists()


def test_a_lock_left_by_a_killed_writer_is_taken_over_with_a_notice(tmp_path, caplog):
    out = tmp_path / "run"
    with holder(out) as proc:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert (out / LOCK_FILE).exists()  # left behind, naming its dead holder
        with caplog.at_level("WARNING", logger="sandbox.lock"):
            assert main(["run", "single_room", "--model", "scripted/default", "--out",
                         str(out), "--quiet"]) == 0
    [notice] = [r.getMessage() for r in caplog.records if "took over" in r.getMessage()]
    assert f"took over the lock of pid {proc.pid}" in notice and "no longer running" in notice
    assert not (out / LOCK_FILE).exists()


def test_a_lock_file_of_a_dead_pid_without_flock_is_taken_over(tmp_path, monkeypatch, caplog):
    """Where the filesystem has no flock, the recorded pid decides: gone is taken over, alive
    is refused."""
    import errno

    import sandbox.lock as lock

    def no_flock(fd, flags):
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(lock.fcntl, "flock", no_flock)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_FILE).write_text(json.dumps({"pid": int(gone), "host": os.uname().nodename,
                                             "command": "sandbox stss ..."}))
    with caplog.at_level("WARNING", logger="sandbox.lock"), hold(out):
        assert f"took over the lock of pid {gone}" in caplog.text
    (out / LOCK_FILE).write_text(json.dumps({"pid": os.getppid(), "host": os.uname().nodename,
                                             "command": "sandbox pingpong ..."}))
    with pytest.raises(DirectoryBusy, match=f"pid {os.getppid()} .sandbox pingpong"):
        with hold(out):
            pass


def test_temporaries_of_killed_writes_are_removed_when_a_command_takes_the_directory(
        tmp_path, caplog):
    out = tmp_path / "pp"
    argv = [*WRITERS["pingpong"], "--out", str(out)]
    assert main(argv) == 0
    run_dir = next((out / "runs").iterdir())
    left = [out / ".pingpong.json.a1B2c3D4.tmp", run_dir / ".result.json.x_9yZ8w7.tmp",
            run_dir / "judgments" / ".pingpong__scripted_pingpong.json.QwErTy12.tmp"]
    for path in left:
        path.write_text("half a file")
    (run_dir / LOCK_FILE).write_text('{"pid": 1, "command": "killed"}')  # nobody holds it
    keep = run_dir / "notes.tmp"  # not one of ours
    keep.write_text("mine")
    with caplog.at_level("WARNING", logger="sandbox.lock"):
        assert main(argv) == 0  # the resume
    [line] = [r.getMessage() for r in caplog.records if "temporary" in r.getMessage()]
    assert "removed 3 temporary file(s)" in line and "1 lock file(s)" in line
    assert not any(path.exists() for path in left) and not (run_dir / LOCK_FILE).exists()
    assert keep.exists()


def test_a_torn_line_is_cut_only_under_a_lock(tmp_path, caplog):
    path = tmp_path / "events.jsonl"
    path.write_text('{"a": 1}\n{"b": 2', encoding="utf-8")  # a writer still at it, or killed
    assert not held_over(path)
    with caplog.at_level("WARNING", logger="sandbox.storage"):
        open_append(path).close()
    assert path.read_text() == '{"a": 1}\n{"b": 2'  # not ours to cut
    assert "not cut" in caplog.text
    with hold(tmp_path):
        assert held_over(path)
        open_append(path).close()
    assert path.read_text() == '{"a": 1}\n'
    assert not held_over(path)


def test_a_lock_is_reentrant_in_one_process_and_removes_what_it_made(tmp_path):
    out = tmp_path / "a" / "b"
    with hold(out):
        with hold(out):  # a command holds its --out, the runner its run directory
            assert (out / LOCK_FILE).exists()
        assert (out / LOCK_FILE).exists()
    assert not (tmp_path / "a").exists()  # made for the lock, nothing written: gone again


def test_a_lock_where_a_file_is_in_the_way_is_one_user_error(tmp_path):
    """(The commands check their outputs as they parse them; the lock says so too.)"""
    from sandbox.errors import UserError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="a file is in the way"):
        with hold(blocker / "run"):
            pass
