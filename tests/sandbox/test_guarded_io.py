"""No input can destroy a result or hang a command: every file we read goes through one guarded
opener (sandbox/files.py `open_input`: regular files only, a size bound, UTF-8 naming the
byte and line), and a score is made of a whole log only. A damaged events.jsonl is an error
naming the file and the line (exit 2, one line), and the score.json already there is kept
byte for byte; a FIFO given as a log is refused before it is opened, not read for ever."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import threading
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.files import FileFormatError, open_input, read_text
from sandbox.log import RunFormatError, load_run

SHORT = ["--model", "scripted/town", "--embedder", "hashing", "--background", "2",
         "--same-day", "--start", "11:00", "--quiet"]


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory) -> Path:
    """A short STSS run whose score is 1 (the reference verdict the damage must not turn)."""
    out = tmp_path_factory.mktemp("guarded") / "run"
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(out),
                 *SHORT]) == 0
    assert json.loads((out / "score.json").read_text())["score"] == 1.0
    return out


@pytest.fixture
def run(scored_run, tmp_path, capsys) -> Path:
    """A copy of the scored run, scored where it lies (its score.json names its directory)."""
    copy = tmp_path / "run"
    shutil.copytree(scored_run, copy)
    assert main(["score", str(copy)]) == 0
    capsys.readouterr()
    return copy


def _lines(run: Path) -> list[str]:
    return (run / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def _every_other_line_garbage(run: Path) -> None:
    lines = _lines(run)
    (run / "events.jsonl").write_text("".join(
        "garbage{\n" if i % 2 else line for i, line in enumerate(lines)), encoding="utf-8")


def _nan_time(run: Path) -> None:
    lines = _lines(run)
    event = json.loads(lines[4])
    lines[4] = json.dumps(event).replace(f'"t": {json.dumps(event["t"])}', '"t": NaN') + "\n"
    (run / "events.jsonl").write_text("".join(lines), encoding="utf-8")


def _move_without_destination(run: Path) -> None:
    lines = _lines(run)
    at = next(i for i, line in enumerate(lines) if '"kind":"move"' in line)
    event = json.loads(lines[at])
    del event["destination"]
    lines[at] = json.dumps(event) + "\n"
    (run / "events.jsonl").write_text("".join(lines), encoding="utf-8")


DAMAGE = {
    "missing": (lambda run: (run / "events.jsonl").unlink(), "no such file"),
    "empty": (lambda run: (run / "events.jsonl").write_bytes(b""), "holds 0 of the"),
    "random bytes": (lambda run: (run / "events.jsonl").write_bytes(
        random.Random(46).randbytes(5000)), "line 1"),
    "every other line garbage": (_every_other_line_garbage, "line 2"),
    "an event with t NaN": (_nan_time, "line 5: unreadable: NaN"),
    "a move missing a required field": (_move_without_destination, "destination"),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_score_of_a_damaged_log_is_an_error_and_keeps_the_old_score(run, damage, capsys):
    spoil, said = DAMAGE[damage]
    before = (run / "score.json").read_bytes()
    spoil(run)
    assert main(["score", str(run)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "events.jsonl" in line and said in line, line
    assert (run / "score.json").read_bytes() == before


def test_a_run_that_did_nothing_and_says_so_reads_whole(run):
    """An empty log whose result counts no event is a run in which nothing happened, not
    damage: it reads strictly (its score says what the rules make of nothing)."""
    (run / "events.jsonl").write_bytes(b"")
    result = json.loads((run / "result.json").read_text())
    (run / "result.json").write_text(json.dumps({**result, "events": 0}))
    assert load_run(run, strict=True).events == []
    (run / "result.json").unlink()  # and with no result at all, it is not known to be whole
    with pytest.raises(RunFormatError, match="wrote nothing"):
        load_run(run, strict=True)


@contextlib.contextmanager
def unblocked_after(fifo: Path, seconds: float):
    """If a reader still waits on `fifo` after `seconds`, a writer opens and closes it: that
    reader reads an empty file and goes on, so a command that opened it fails the test instead
    of hanging it (the command runs in this process)."""
    def open_for_writing():
        with contextlib.suppress(OSError):  # no reader waiting (ENXIO): nothing to unblock
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Timer(seconds, open_for_writing)
    watchdog.start()
    try:
        yield
    finally:
        watchdog.cancel()


@pytest.mark.parametrize("command", [["score"], ["log"], ["replay", "--export", "frames"]],
                         ids=lambda c: c[0])
def test_a_fifo_as_events_jsonl_is_refused_before_it_is_opened(run, tmp_path, command, capsys,
                                                               monkeypatch):
    (run / "events.jsonl").unlink()
    os.mkfifo(run / "events.jsonl")  # nobody writes it: opening it for reading would block
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    with unblocked_after(run / "events.jsonl", 30):
        code = main([command[0], str(run), *command[1:]])
    printed = capsys.readouterr()
    assert code == 2, printed.err
    [line] = printed.err.splitlines()
    assert "events.jsonl: a named pipe (FIFO), not a regular file" in line
    assert not (run / ".sandbox.lock").exists() and not (tmp_path / "frames").exists()


def test_the_guarded_opener_refuses_special_files_and_oversized_ones(tmp_path):
    with pytest.raises(FileFormatError, match="character device"):
        open_input("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 100)
    with pytest.raises(FileFormatError, match="100 bytes, more than the 10"):
        open_input(big, limit=10)
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"name: ok\nplace: caf\xe9\n")
    with pytest.raises(FileFormatError, match=r"not UTF-8 text \(byte 19\)") as caught:
        read_text(bad)
    assert caught.value.where == "line 2"


def test_a_header_with_a_seed_of_5000_digits_is_said_in_one_line(run, capsys):
    text = (run / "header.json").read_text()
    seed = json.loads(text)["seed"]
    (run / "header.json").write_text(text.replace(f'"seed": {seed}', '"seed": ' + "9" * 5000))
    for command in (["log", str(run)], ["score", str(run)]):
        assert main(command) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert "header.json" in line and "more than 4,300 digits" in line


def test_a_binary_cache_file_is_refused_and_left_as_it_was(tmp_path, capsys):
    cache = tmp_path / "cache.jsonl"
    cache.write_bytes(random.Random(7).randbytes(3000))
    before = cache.read_bytes()
    out = tmp_path / "out"
    assert main(["run", "single_room", "--model", "scripted/default", "--cache", str(cache),
                 "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "cache.jsonl: not an LLM answer cache" in line
    assert cache.read_bytes() == before and not out.exists()
