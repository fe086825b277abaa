"""`sandbox sweep EXPERIMENT.yaml`: every cell run by its benchmark's own command, checked
before anything runs, resumed when run again, one board per benchmark and one summary."""

from __future__ import annotations

import json

import pytest
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
    # the two models compared item by item, beside the summary
    assert "| pingpong | models | plain | verbose |" in summary
    assert "| refutebench | models | plain | verbose |" in summary
    compared = json.loads((out / "comparisons" / "pingpong" / "plain__vs__verbose.json")
                          .read_text())
    assert compared["format"] == "comparison" and compared["overall"]["n"] == 5  # --every 16
    assert (out / "comparisons" / "pingpong" / "plain__vs__verbose.md").is_file()

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
    models = {"plain": "scripted/pingpong",
              "capped": {"model": "scripted/pingpong", "flags": {"max-calls": 1}}}
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": PINGPONG})]) == 1
    out = tmp_path / "exp"
    cells = {c["cell"]: c for c in json.loads((out / "sweep.json").read_text())["cells"]}
    assert cells["plain"]["status"] == "ok"
    assert cells["capped"]["status"].startswith("failed")
    assert "| plain |" in (out / "pingpong" / "board.md").read_text()
    assert "1 cell(s) did not finish: pingpong/capped; run the same command again" in \
        capsys.readouterr().out


def test_a_misspelt_model_or_template_stops_even_a_dry_run_naming_the_cell(tmp_path, capsys):
    models = {"plain": "scripted/pingpong", "ghost": "scripted/pingpnog"}
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": PINGPONG}), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "pingpong ghost: --player scripted/pingpnog" in err
    assert "did you mean scripted/pingpong" in err and len(err.strip().splitlines()) == 1
    judge = {"flags": {**PINGPONG["flags"], "judge": ["scriptd/pingpong"]}}
    assert main(["sweep", experiment(tmp_path, benchmarks={"pingpong": judge})]) == 2
    assert "--judge scriptd/pingpong" in capsys.readouterr().err
    stss = {"flags": {"templates": "public_sprng_tasting", "embedder": "hashing"}}
    assert main(["sweep", experiment(tmp_path, models={"town": "scripted/town"},
                                     benchmarks={"stss": stss}), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "stss town-ga: --templates public_sprng_tasting" in err
    assert "public_spring_tasting" in err
    assert not (tmp_path / "exp").exists()


def test_a_seed_axis_reaches_every_benchmark_that_has_seeds(tmp_path, capsys):
    from tests.evaluation.test_simulbench_board_accounting import TASKS, script

    scripts = tmp_path / "scripts.jsonl"  # a dry run refuses what the run would: not empty
    scripts.write_text(json.dumps(script(0, TASKS[0], "gpt-3.5-turbo.json", 0)) + "\n")
    benchmarks = {"stss": {"flags": {"embedder": "hashing"}},
                  "stss-lang": {"flags": {"embedder": "hashing"}},
                  "pingpong": PINGPONG, "refutebench": REFUTEBENCH,
                  "simulbench": {"flags": {"scripts": str(scripts)}}}
    path = experiment(tmp_path, models={"town": "scripted/town"}, architectures=["ga"],
                      seeds=[0, 1], benchmarks=benchmarks)
    assert main(["sweep", path, "--dry-run"]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith("sandbox ")]
    assert sum("--seeds 0,1" in c for c in commands) == 1  # stss: both seeds in its one cell
    for bench in ("stss-lang", "pingpong", "refutebench", "simulbench"):
        mine = [c for c in commands if c.startswith(f"sandbox {bench} ")]
        assert len(mine) == 2, bench  # a cell per seed
        assert " --seed 0 " in mine[0] and " --seed 1 " in mine[1], bench
        assert mine[0].endswith("-s0") and mine[1].endswith("-s1"), bench


def test_two_seeds_run_a_cell_each_and_are_pooled_on_the_board_and_compared_once(tmp_path,
                                                                                   capsys):
    assert main(["sweep", experiment(tmp_path, seeds=[0, 1],
                                     benchmarks={"pingpong": PINGPONG})]) == 0
    out = tmp_path / "exp"
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert [(c["cell"], c["status"]) for c in cells] == [
        ("plain-s0", "ok"), ("plain-s1", "ok"), ("verbose-s0", "ok"), ("verbose-s1", "ok")]
    board = json.loads((out / "pingpong" / "board.json").read_text())
    # once a row per seed ("plain-s0", "plain-s1"): one per configuration over its seeds
    assert [row["label"] for row in board["rows"]] == ["plain", "verbose"] or \
        [row["label"] for row in board["rows"]] == ["verbose", "plain"]
    assert all(row["conversations"] == 10 for row in board["rows"])  # 5 pairs x 2 seeds
    accounting = board["accounting"]["plain"]
    assert accounting["selected"] == 10 and "duplicate" not in accounting["runs"]
    # one comparison of the two models over both seeds (was two of n = 5 each)
    compared = sorted(p.name for p in (out / "comparisons" / "pingpong").iterdir())
    assert compared == ["plain__vs__verbose.json", "plain__vs__verbose.md"]
    data = json.loads((out / "comparisons" / "pingpong" / "plain__vs__verbose.json").read_text())
    assert data["overall"]["n"] == 10 and data["overall"]["units"] == 5
    assert data["a"]["config"]["seeds"] == [0, 1]
    summary = (out / "summary.md").read_text()
    assert summary.count("| pingpong | models | plain | verbose | 10 |") == 1


def test_a_refused_cell_keeps_the_summary_of_what_finished(tmp_path, capsys):
    models = {"plain": "scripted/pingpong"}
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": PINGPONG})]) == 0
    # Meets the cell's earlier configuration: refused, and refused again if run as it is.
    changed = {"flags": {**PINGPONG["flags"], "interrogator": "scripted/pingpong-verbose"}}
    capsys.readouterr()
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": changed})]) == 1
    printed = capsys.readouterr().out
    assert "1 cell(s) were refused: pingpong/plain; change what each said" in printed
    assert "run the same command again" not in printed  # it would be refused again
    summary = (tmp_path / "exp" / "summary.md").read_text()
    assert "no cell finished" not in summary and "| plain |" in summary.split("## pingpong")[1]


def test_a_dry_run_prints_the_commands_and_runs_nothing(tmp_path, capsys):
    assert main(["sweep", experiment(tmp_path), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "sandbox pingpong --interrogator scripted/pingpong --judge scripted/pingpong " \
        "--every 16 --player scripted/pingpong --seed 0 --label plain --out" in printed
    # each cell's own estimate: nothing finished yet, so the items it would run, no rate
    assert printed.count("Dry run: 5 pair(s) to run, 0 finished") == 2
    assert not (tmp_path / "exp").exists()


def test_a_sweep_is_refused_in_another_command_s_directory(tmp_path, capsys):
    run = tmp_path / "exp"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet", "--out",
                 str(run)]) == 0
    capsys.readouterr()
    assert main(["sweep", experiment(tmp_path)]) == 2
    assert "holds a run directory (sandbox run), not an experiment" in capsys.readouterr().err


def test_two_models_two_architectures_and_the_five_benchmarks_from_one_file(tmp_path, capsys):
    s = "scripted/simulbench"
    assert main(["simulbench-collect", "--user", s, "--simulator", s, "--judge", s, "--every",
                 "40", "--out", str(tmp_path / "collect")]) == 0
    scripts = tmp_path / "scripts.jsonl"
    assert main(["simulbench-extract", str(tmp_path / "collect"), "--out", str(scripts)]) == 0
    benchmarks = {
        "stss": {"flags": {"templates": "public_spring_tasting", "embedder": "hashing",
                           "background": 2, "same-day": True, "start": "15:00"}},
        "stss-lang": {"flags": {"judge": ["scripted/stss-lang"], "every": 67,
                                "partner-model": "scripted/stss-lang", "embedder": "hashing"}},
        "pingpong": PINGPONG, "refutebench": REFUTEBENCH,
        "simulbench": {"flags": {"scripts": str(scripts), "judge": [s]}}}
    path = experiment(tmp_path, models={"plain": "scripted/default", "town": "scripted/town"},
                      architectures=["ga", "ga_tdp"], benchmarks=benchmarks)
    capsys.readouterr()
    assert main(["sweep", path]) == 0
    out = tmp_path / "exp"
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert len(cells) == 2 * 2 * 2 + 3 * 2  # architectures only where the performer has one
    assert {c["status"] for c in cells} == {"ok"}
    stss = (out / "stss" / "board.md").read_text()
    for model in ("scripted/default", "scripted/town"):
        for arch in ("ga", "ga_tdp"):
            assert f"| {model} | {arch} |" in stss
    lang = (out / "stss-lang" / "board.md").read_text()
    assert lang.count("scripted/town") >= 2 and "GCSR" in lang
    for bench in ("pingpong", "simulbench", "refutebench"):
        board = (out / bench / "board.md").read_text()
        assert "| plain |" in board and "| town |" in board
    summary = (out / "summary.md").read_text()
    assert all(f"## {bench}" in summary for bench in benchmarks)
    assert "| stss | architectures | plain-ga | plain-ga_tdp |" in summary
    assert "| stss | models | plain-ga | town-ga |" in summary
    assert "| simulbench | models | plain | town |" in summary
    assert "| stss-lang | architectures | town-ga | town-ga_tdp |" in summary
    assert "not compared" not in summary  # every pair read and matched

    capsys.readouterr()
    assert main(["sweep", path]) == 0  # resumed: every cell skips what it finished
    printed = capsys.readouterr().out
    assert printed.count("(1 already done)") == 4 and printed.count("run 0, skipped") == 10


def test_a_dry_run_exits_1_naming_a_cell_the_run_would_refuse(tmp_path, capsys):
    """A cell meeting an earlier configuration in its --out is refused by the run: its dry run
    once said so in yellow and exited 0."""
    models = {"plain": "scripted/pingpong"}
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": PINGPONG})]) == 0
    changed = {"flags": {**PINGPONG["flags"], "interrogator": "scripted/pingpong-verbose"}}
    before = sorted((tmp_path / "exp").rglob("*"))
    capsys.readouterr()
    assert main(["sweep", experiment(tmp_path, models=models,
                                     benchmarks={"pingpong": changed}), "--dry-run"]) == 1
    printed = capsys.readouterr()
    assert "pingpong plain: refused:" in printed.out
    assert printed.err.strip() == "sandbox sweep: 1 cell(s) would be refused: pingpong/plain"
    assert sorted((tmp_path / "exp").rglob("*")) == before


@pytest.mark.parametrize("seeds, said", [
    ([True], "seed True"), ([0, False], "seed False"), ([-1], "seed -1"), ("0", "one or more"),
    ([1.5], "seed 1.5"), (list(range(10_001)), "10,001 seeds; at most 10,000"), ([], "one or more"),
])
def test_a_seed_list_is_checked_as_seeds_is(tmp_path, capsys, seeds, said):
    """`seeds: [true]` once ran seed 1; 10^5 seeds of a per-seed benchmark made a dry run list
    10^5 cells for minutes."""
    import time

    started = time.perf_counter()
    assert main(["sweep", experiment(tmp_path, seeds=seeds, benchmarks={"pingpong": PINGPONG}),
                 "--dry-run"]) == 2
    assert time.perf_counter() - started < 30
    [err] = capsys.readouterr().err.strip().splitlines()
    assert "seeds" in err and said in err
