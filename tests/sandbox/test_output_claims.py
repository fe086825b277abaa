"""No command can lose a result: an output is claimed one guarded way (sandbox/outdirs.py) --
never an input of the same command nor inside one, a run only into a new or empty directory
or over a run (never the user's own files, --overwrite or not), nothing written before every
check has passed -- and each refusal is one line, exit 2, every file as it was."""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.app.cli import main
from tests.tasks.test_pingpong_cli import pingpong

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "single_room", "--model", "scripted/default", "--quiet"]


def snapshot(*dirs: Path) -> dict[str, bytes]:
    """Every file below `dirs` (hidden ones too) with its bytes."""
    return {str(p): p.read_bytes() for d in dirs for p in sorted(d.rglob("*")) if p.is_file()}


def refused(capsys, argv: list[str]) -> str:
    """The one line a refused command prints (it must exit 2)."""
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A finished PingPong directory and a finished single-room run, made once."""
    base = tmp_path_factory.mktemp("claims")
    assert pingpong(base, "scripted/pingpong", base / "pp", "--every", "2") == 0
    assert main([*RUN, "--out", str(base / "run")]) == 0
    return base


def test_a_board_never_overwrites_the_benchmark_manifest(made, capsys):
    pp = made / "pp"
    before = snapshot(pp)
    line = refused(capsys, ["pingpong-board", str(pp), "--json", str(pp / "pingpong.json")])
    assert "an input of this command" in line and "pingpong.json" in line
    assert snapshot(pp) == before


@pytest.mark.parametrize("option", ["--json", "--markdown", "--plot"])
@pytest.mark.parametrize("side", ["A", "B", "B:ARCH"])
def test_compare_never_writes_over_or_into_a_run_set(made, tmp_path, capsys, option, side):
    """`compare A B --json A/pingpong.json` once replaced A's manifest, after which A could
    not be resumed: every output of compare is refused inside either run set."""
    import shutil

    pp, other = made / "pp", tmp_path / "other"
    shutil.copytree(pp, other)
    target = (pp if side == "A" else other) / ("pingpong.json" if option == "--json"
                                               else "board.png" if option == "--plot"
                                               else "board.md")
    b = f"{other}:ga" if side == "B:ARCH" else str(other)
    before = snapshot(pp, other)
    line = refused(capsys, ["compare", str(pp), b, option, str(target)])
    assert "an input of this command" in line
    assert snapshot(pp, other) == before


def test_a_plot_in_a_format_no_plot_is_written_in_is_refused_at_parsing(made, tmp_path, capsys):
    for argv in (["compare", str(made / "pp"), str(made / "run")],
                 ["pingpong-board", str(made / "pp")]):
        line = refused(capsys, [*argv, "--plot", str(tmp_path / "d.txt")])
        assert "not a plot format (.txt)" in line
    assert not (tmp_path / "d.txt").exists()


def test_a_board_saved_where_a_manifest_should_be_is_refused_not_read(made, tmp_path, capsys):
    board = tmp_path / "board.json"
    assert main(["pingpong-board", str(made / "pp"), "--json", str(board)]) == 0
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "pingpong.json").write_bytes(board.read_bytes())
    before = snapshot(fake)
    capsys.readouterr()
    assert "a board's JSON?" in refused(capsys, ["pingpong-board", str(fake)])
    line = refused(capsys, ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                            "scripted/pingpong", "--judge", "scripted/pingpong", "--out",
                            str(fake)])
    assert "pingpong.json: not a benchmark manifest" in line
    assert snapshot(fake) == before


def test_replay_never_exports_frames_into_the_run(made, capsys):
    run = made / "run"
    before = snapshot(run)
    for export in (run, run / "frames"):
        assert "an input of this command" in refused(capsys, ["replay", str(run), "--export",
                                                              str(export)])
    assert snapshot(run) == before


def test_an_empty_out_is_refused_not_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert "an empty path" in refused(capsys, [*RUN, "--out", ""])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("overwrite", [False, True], ids=["plain", "--overwrite"])
def test_a_run_is_never_written_into_a_directory_of_the_users_own_files(tmp_path, capsys,
                                                                         overwrite):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes\n")
    (mine / "result.json").write_text('{"mine": true}\n')  # a name a run writes, but not ours
    before = snapshot(mine)
    line = refused(capsys, [*RUN, "--out", str(mine), *(["--overwrite"] * overwrite)])
    assert "holds files that are not a run's (notes.txt)" in line
    assert snapshot(mine) == before


def test_rerun_into_a_directory_that_is_not_a_run_is_refused_before_it_copies(made, tmp_path,
                                                                             capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("\\chapter{One}\n")
    before = snapshot(mine, made / "run")
    assert "not a run's (thesis.tex)" in refused(capsys, ["rerun", str(made / "run"), "--out",
                                                          str(mine)])
    assert "inside" in refused(capsys, ["rerun", str(made / "run"), "--out",
                                        str(made / "run" / "again")])
    assert snapshot(mine, made / "run") == before


def test_a_run_over_a_run_still_works_with_overwrite(made, tmp_path):
    again = tmp_path / "again"
    assert main([*RUN, "--out", str(again)]) == 0
    assert main([*RUN, "--out", str(again), "--overwrite"]) == 0


@pytest.fixture(scope="module")
def town_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("town") / "run"
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(out), "--model",
                 "scripted/town", "--embedder", "hashing", "--background", "2", "--same-day",
                 "--start", "11:00", "--quiet"]) == 0
    return out


def test_interview_set_with_a_bad_judge_writes_no_answer(town_run, tmp_path, capsys):
    out = tmp_path / "interviews"
    line = refused(capsys, ["interview-set", str(town_run), "--judge", "scripted/nope",
                            "--model", "scripted/town", "--out", str(out)])
    assert "unknown scripted backend 'nope'" in line
    assert not out.exists()


def test_a_single_room_run_is_not_interviewed(made, tmp_path, capsys):
    out = tmp_path / "interviews"
    line = refused(capsys, ["interview-set", str(made / "run"), "--judge", "scripted/default",
                            "--out", str(out)])
    assert "is a single_room run: its agents keep no memory" in line
    assert not out.exists()


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed")
def test_executor_ray_without_ray_writes_nothing(tmp_path, capsys):
    out = tmp_path / "suite"
    line = refused(capsys, ["stss", "--model", "scripted/town", "--executor", "ray", "--out",
                            str(out)])
    assert "needs Ray" in line and not out.exists()


def _small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
    resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sandbox.app.cli", *RUN, "--out", "run"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          preexec_fn=_small_files, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "run/" in line and ".jsonl: File too large" in line, line
    written = json.loads((tmp_path / "run" / "header.json").read_text())
    assert written["scenario"] == "single_room"  # what was written before is whole
