"""kill -9 at three moments of a suite, then the same command again: nothing lost, nothing
different. The finished suite's events, scores and table are byte-identical to those of a run
that was never interrupted (bench/soak.py does the same with 20 random kills)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from sandbox.llm import CallLog, LLMRequest, Message
from sandbox.llm.base import Completion
from sandbox.llm.cache import CachedLLM
from sandbox.llm.scripted import ScriptedBackend
from sandbox.lock import hold
from sandbox.storage import atomic_path, repair_torn_tail, write_atomic

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tasks" / "stss" / "templates" / "public_spring_tasting.yaml"


def suite_args(out: Path) -> list[str]:
    return ["stss", "--templates", str(TEMPLATE), "--arch", "ga", "--seeds", "0..2", "--out",
            str(out), "--model", "scripted/town", "--embedder", "hashing", "--background", "2",
            "--same-day", "--start", "15:00"]


def kill_when(argv: list[str], cwd: Path, ready, timeout_s: float = 120) -> bool:
    """Run `sandbox ARGV` in a process of its own, SIGKILL it as soon as `ready()` holds;
    whether it was killed (False: it finished first). The process is forked from this one: a
    separate process whose kill -9 leaves its files and locks as any would, without the second
    and a half an interpreter takes to start and import the command."""
    pid = os.fork()
    if pid == 0:  # the child: the command, then gone, never back into pytest
        code = 1
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - gone with us
            os.chdir(cwd)
            from sandbox.app.cli import main

            code = main(argv)
        finally:
            os._exit(code if isinstance(code, int) else 1)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                pid = 0
                return False  # it finished
            if ready():
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pid = 0
                return True
            time.sleep(0.002)
        return False
    finally:
        if pid and os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def outputs(out: Path) -> dict[str, bytes]:
    """What must not change: every episode's events and score, and the table."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.name in ("events.jsonl", "score.json", "table.json", "table.md"):
            found[str(path.relative_to(out))] = path.read_bytes()
    return found


def test_a_suite_killed_three_times_resumes_to_identical_logs_scores_and_table(
        tmp_path, monkeypatch, capsys):
    from sandbox.app.cli import main

    out = tmp_path / "suite"
    # The uninterrupted suite and the resuming one run in this process (the same entry point,
    # without an interpreter's start-up); the three that are killed are processes of their own.
    monkeypatch.chdir(tmp_path)
    assert main(suite_args(out)) == 0
    reference = outputs(out)
    assert len(reference) == 3 * 2 + 2  # 3 episodes' events and scores, the table
    shutil.move(out, tmp_path / "reference")

    episode = [out / "public_spring_tasting" / "ga" / f"s{seed}" for seed in (0, 1, 2)]
    moments = [
        ("first episode, mid-run", lambda: lines(episode[0] / "events.jsonl") >= 60),
        ("second episode, right after its first answers are cached",
         lambda: lines(episode[1] / "llm_cache.jsonl") >= 5),
        ("third episode, its run directory just made", lambda: episode[2].exists()),
    ]
    for what, ready in moments:
        assert kill_when(suite_args(out), tmp_path, ready), \
            f"the suite finished before: {what}"
        assert not (out / "table.json").exists()

    capsys.readouterr()
    assert main(suite_args(out)) == 0
    assert outputs(out) == reference
    assert "3 episodes (" in capsys.readouterr().out


def test_a_torn_last_cache_line_is_cut_and_the_next_answer_kept(tmp_path, caplog):
    cache = tmp_path / "llm_cache.jsonl"
    backend = ScriptedBackend()
    ask = [LLMRequest(messages=[Message(role="user", content=f"q{i}")], seed=i) for i in range(3)]
    llm = CachedLLM(backend, cache)
    for request in ask[:2]:
        llm.complete(request)
    whole = cache.read_bytes()
    cache.write_bytes(whole[:-15])  # a kill in the middle of writing the second entry
    with hold(tmp_path), caplog.at_level("WARNING", logger="sandbox.storage"):
        again = CachedLLM(backend, cache)  # the repair runs under the directory's lock
        assert "removed a torn last line" in caplog.text
        assert len(again) == 1
        again.complete(ask[2])
    third = CachedLLM(backend, cache)
    assert len(third) == 2 and third.bad_lines == 0  # the new entry is on a line of its own


def test_calls_appended_after_a_torn_line_keep_their_numbering(tmp_path):
    path = tmp_path / "calls.jsonl"
    request = LLMRequest(messages=[Message(role="user", content="hi")], tag="judge")
    log = CallLog(path)
    log.record(request, Completion(text="a"))
    log.close()
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"seq": 1, "tag": "jud')  # killed mid-line
    with hold(tmp_path):
        log = CallLog(path)
        log.record(request, Completion(text="b"))
        log.close()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["seq"] for r in records] == [0, 1]


def test_repair_keeps_whole_files_whole(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    assert repair_torn_tail(path) == 0
    path.write_text('{"only": "torn', encoding="utf-8")  # not even one whole line
    assert repair_torn_tail(path) == len('{"only": "torn')
    assert path.read_bytes() == b""


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path,
                                                                         monkeypatch):
    path = tmp_path / "score.json"
    write_atomic(path, '{"score": 1}')

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    try:
        write_atomic(path, '{"score": 2}')
    except OSError:
        pass
    assert path.read_text(encoding="utf-8") == '{"score": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["score.json"]


def test_a_file_written_by_name_and_interrupted_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.gguf"
    with atomic_path(path) as draft:  # a library writing the file itself, given its name
        draft.write_bytes(b"whole")
    assert path.read_bytes() == b"whole"
    with pytest.raises(KeyboardInterrupt), atomic_path(path) as draft:
        draft.write_bytes(b"half")
        raise KeyboardInterrupt  # Ctrl-C in the middle of a conversion
    assert path.read_bytes() == b"whole"
    assert [p.name for p in tmp_path.iterdir()] == ["model.gguf"]


def test_a_judge_call_recorded_before_a_kill_is_not_counted_twice(tmp_path, monkeypatch):
    """Killed after a judge's call reached calls.jsonl and before its judgment was saved: the
    same command asks again (from the cache), and the board's usage is the uninterrupted one."""
    from sandbox.app.cli import main

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "pp"
    command = ["pingpong", "--player", "scripted/pingpong", "--interrogator",
               "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "16", "--out",
               str(out)]
    assert main(command) == 0
    assert main(["pingpong-board", str(out), "--json", str(tmp_path / "before.json")]) == 0
    run = sorted((out / "runs").iterdir())[0]
    calls = (run / "calls.jsonl").read_text(encoding="utf-8")
    next((run / "judgments").glob("*.json")).unlink()  # the kill's moment
    assert main(command) == 0
    assert (run / "judgments").is_dir() and list((run / "judgments").glob("*.json"))
    assert (run / "calls.jsonl").read_text(encoding="utf-8") == calls
    assert main(["pingpong-board", str(out), "--json", str(tmp_path / "after.json")]) == 0
    assert (tmp_path / "after.json").read_bytes() == (tmp_path / "before.json").read_bytes()
