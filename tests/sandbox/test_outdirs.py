"""One --out belongs to one kind of output: a benchmark, a suite or a run directory given the
directory of another is refused in one line before it writes anything."""

from __future__ import annotations

import pytest

from sandbox.app.cli import main
from tests.tasks.test_pingpong_cli import pingpong
from tests.tasks.test_refutebench_cli import refutebench


@pytest.fixture
def pingpong_out(tmp_path, capsys):
    out = tmp_path / "pp"
    assert pingpong(tmp_path, "scripted/pingpong", out, "--every", "16") == 0
    capsys.readouterr()
    return out


def files(out):
    return sorted(p.relative_to(out) for p in out.rglob("*"))


def test_another_benchmark_in_a_pingpong_directory_is_refused(pingpong_out, capsys):
    before = files(pingpong_out)
    assert refutebench(pingpong_out) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "holds a pingpong benchmark (pingpong.json), not a refutebench benchmark" in line
    assert files(pingpong_out) == before  # nothing written


def test_an_stss_suite_in_a_benchmark_directory_is_refused(pingpong_out, capsys):
    before = files(pingpong_out)
    assert main(["stss", "--templates", "tasks/stss/templates/public_spring_tasting.yaml",
                 "--model", "scripted/town",
                 "--arch", "ga", "--out", str(pingpong_out)]) == 2
    assert "holds a pingpong benchmark" in capsys.readouterr().err
    assert files(pingpong_out) == before


def test_a_run_never_overwrites_a_benchmark(pingpong_out, capsys):
    before = files(pingpong_out)
    assert main(["run", "single_room", "--model", "scripted/default", "--out",
                 str(pingpong_out), "--overwrite"]) == 2
    assert "holds a pingpong benchmark" in capsys.readouterr().err
    assert files(pingpong_out) == before


def test_a_run_never_writes_into_a_suite_a_plugin_marks(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.json").write_text("{}")  # the file the STSS plug-in declares as its mark
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(suite)]) == 2
    assert "holds an STSS suite (sandbox stss), not a run directory" in capsys.readouterr().err
    assert sorted(p.name for p in suite.iterdir()) == ["suite.json"]


def test_a_benchmark_in_a_run_directory_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(run),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert refutebench(run) == 2
    assert "holds a run directory (sandbox run), not a refutebench benchmark" in \
        capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["run", "single_room", "--model", "scripted/default", "--out", "{f}"],
    ["stss", "--model", "scripted/town", "--out", "{f}/suite"],
    ["pingpong", "--player", "scripted/pingpong", "--out", "{f}"],
    ["simulbench", "--simulator", "scripted/simulbench", "--out", "{f}"],
    ["refutebench", "--model", "scripted/refutebench", "--out", "{f}"],
    ["stss-lang", "--model", "scripted/town", "--out", "{f}"],
    ["stss-harvest", "{d}", "--out", "{f}/set.json"],
    ["pingpong-board", "{d}", "--json", "{d}"],
    ["replay", "{d}", "--export", "{f}"],
])
def test_an_output_that_cannot_be_written_is_refused_at_parsing(argv, tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a directory")
    args = [a.format(f=a_file, d=tmp_path) for a in argv]
    before = sorted(tmp_path.rglob("*"))
    assert main(args) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "is a file" in line or "is a directory, not a file" in line
    assert sorted(tmp_path.rglob("*")) == before  # nothing made


def test_a_read_only_place_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path)
                        else real(p, mode))
    assert main(["run", "single_room", "--model", "scripted/default", "--out",
                 str(tmp_path / "run")]) == 2
    assert "read-only filesystem or no permission" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
