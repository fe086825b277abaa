"""`sandbox sweep EXPERIMENT.yaml`: every cell run by its benchmark's own command, checked
before anything runs, resumed when run again, one board per benchmark and one summary."""

from __future__ import annotations

import json

import yaml

from sandbox.app.cli import main

PINGPONG = {"flags": {"interrogator": "scripted/pingpong", "judge": ["scripted/pingpong"],
                      "every": 16}}
REFUTEBENCH = {"flags": {"refuter": "scripted/refutebench", "judge": ["scripted/refutebench"],
                         "every": 27, "tasks": "mt"}}


def experiment(tmp_path, **changes) -> str:
    data = {"out": str(tmp_path / "exp"),
            "models": {"plain": "scripted/pingpong", "verbose": "scripted/pingpong-verbose"},
            "benchmarks": {"pingpong": PINGPONG, "refutebench": REFUTEBENCH}, **changes}
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_every_cell_runs_every_benchmark_is_boarded_and_a_rerun_resumes(tmp_path, capsys):
    assert main(["sweep", experiment(tmp_path)]) == 0
    out = tmp_path / "exp"
    printed = capsys.readouterr().out
    assert "pingpong plain: player scripted/pingpong; interrogator scripted/pingpong; " \
        "judge scripted/pingpong" in printed  # every role's model said first
    for bench in ("pingpong", "refutebench"):
        board = (out / bench / "board.md").read_text()
        assert "| plain |" in board and "| verbose |" in board  # side by side, by name
        assert json.loads((out / bench / "board.json").read_text())
    record = json.loads((out / "sweep.json").read_text())
    assert [(c["benchmark"], c["cell"], c["status"]) for c in record["cells"]] == [
        ("pingpong", "plain", "ok"), ("pingpong", "verbose", "ok"),
        ("refutebench", "plain", "ok"), ("refutebench", "verbose", "ok")]
    assert record["cells"][0]["command"][:2] == ["sandbox", "pingpong"]
    summary = (out / "summary.md").read_text()
    assert "| pingpong | verbose | scripted/pingpong-verbose | - | ok |" in summary
    assert "## refutebench" in summary and "Table 4" in summary

    assert main(["sweep", experiment(tmp_path)]) == 0  # resumed: nothing runs again
    printed = capsys.readouterr().out
    assert printed.count("run 0, skipped") == 4


def test_a_misspelt_flag_stops_the_sweep_before_any_cell_runs(tmp_path, capsys):
    bad = {"flags": {**PINGPONG["flags"], "evry": 16}}
    assert main(["sweep", experiment(tmp_path, benchmarks={"pingpong": bad})]) == 2
    assert "--evry: did you mean --every?" in capsys.readouterr().err
    assert not (tmp_path / "exp").exists()


def test_an_unknown_benchmark_names_the_ones_that_can_be_swept(tmp_path, capsys):
    assert main(["sweep", experiment(tmp_path, benchmarks={"pingpnog": PINGPONG})]) == 2
    err = capsys.readouterr().err
    assert "benchmark 'pingpnog': not installed" in err and "pingpong" in err


def test_a_cell_that_fails_does_not_stop_the_others(tmp_path, capsys):
    models = {"plain": "scripted/pingpong", "ghost": "scripted/no-such-double"}
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": PINGPONG})]) == 1
    out = tmp_path / "exp"
    cells = {c["cell"]: c for c in json.loads((out / "sweep.json").read_text())["cells"]}
    assert cells["plain"]["status"] == "ok"
    assert cells["ghost"]["status"] == "error" and "no-such-double" in cells["ghost"]["said"]
    assert "| plain |" in (out / "pingpong" / "board.md").read_text()
    assert "1 cell(s) did not finish: pingpong/ghost" in capsys.readouterr().out


def test_a_dry_run_prints_the_commands_and_runs_nothing(tmp_path, capsys):
    assert main(["sweep", experiment(tmp_path), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "sandbox pingpong --interrogator scripted/pingpong --judge scripted/pingpong " \
        "--every 16 --player scripted/pingpong --label plain --out" in printed
    assert not (tmp_path / "exp").exists()


def test_a_sweep_is_refused_in_another_command_s_directory(tmp_path, capsys):
    run = tmp_path / "exp"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                 str(run)]) == 0
    capsys.readouterr()
    assert main(["sweep", experiment(tmp_path)]) == 2
    assert "holds a run directory (sandbox run), not an experiment" in capsys.readouterr().err
