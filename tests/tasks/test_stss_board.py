"""`sandbox stss-board DIR...`: suites merged into one board (a row per model x architecture,
pooled across suites), each mean with a seeded bootstrap interval and n, per task type and per
template, and every planned episode accounted for; `sandbox score SUITE` and the sweep's use of
it. The arithmetic is checked on score files written here; the commands on real suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.kit import BoardError, bootstrap_ci
from evaluation.stss import ScoringOptions, STSSScore, read_suite, suite_board
from sandbox.app.cli import main
from tasks.stss import TaskType

SHORT = ["--model", "scripted/town", "--embedder", "hashing", "--background", "2",
         "--same-day", "--start", "11:00"]


def fake_suite(path: Path, scores: dict[str, tuple[TaskType, float | None]], *,
               model: str = "m/one", archs: dict[str, str] | None = None,
               planned: list[str] = (), rules: str = "ours", **options) -> Path:
    """A suite directory as the board reads it: suite.json, and a score file per episode key
    (template/arch/sN -> (type, score); None: unscored by the rules)."""
    archs = archs or {"ga": "ga"}
    path.mkdir(parents=True)
    (path / "suite.json").write_text(json.dumps(
        {"model": model, "world": "town", "background": None, "architectures": archs,
         "episodes": [*scores, *planned], **options}))
    for key, (kind, value) in scores.items():
        template, arch, seed = key.split("/")
        run = path / key
        run.mkdir(parents=True)
        score = STSSScore(run=str(run), template=template, type=kind, performer="P",
                          architecture=archs[arch], model=model, seed=int(seed[1:]),
                          score=value, rule="r", rules=rules, expected=2,
                          unscored=None if value is not None else "no target_num",
                          conversation_ratio=None if kind is TaskType.asking_for_help else 0.5)
        (run / ScoringOptions(rules=rules).file).write_text(score.model_dump_json())
    return path


PUB, HELP = TaskType.public_activity, TaskType.asking_for_help


def test_a_configuration_in_two_suites_is_one_row_with_intervals_and_n(tmp_path):
    a = fake_suite(tmp_path / "a", {"party/ga/s0": (PUB, 1.0), "party/ga/s1": (PUB, 0.5),
                                    "bulbs/ga/s0": (HELP, 0.0)})
    b = fake_suite(tmp_path / "b", {"party/ga/s2": (PUB, 0.25), "party/tdp/s2": (PUB, 1.0)},
                   archs={"ga": "ga", "tdp": "ga_tdp"})
    report = suite_board([a, b], seed=7, resamples=200)
    rows = {r["label"]: r for r in report.data["rows"]}
    assert list(rows) == ["m/one ga", "m/one ga_tdp"]
    ga = rows["m/one ga"]
    assert ga["suites"] == ["a", "b"] and ga["planned"] == ga["scored"] == 4
    # Two templates (party, bulbs): below the minimum of independent units, no interval.
    assert ga["overall"] == {"mean": pytest.approx(1.75 / 4), "n": 4, "units": 2, "ci": None}
    party = ga["by_type"]["public_activity"]
    assert party["n"] == 3 and party["units"] == 1 and party["ci"] is None
    assert ga["by_type"]["appointment"] == {"mean": None, "ci": None, "n": 0, "units": 0}
    assert ga["by_template"]["party"]["n"] == 3 and ga["by_template"]["bulbs"]["mean"] == 0.0
    assert ga["conversation_ratio"] == {"mean": 0.5, "n": 3}  # help tasks left out
    md = report.markdown
    assert "| m/one | ga | 0.583 | - | - | - | 0.000 | 0.438 | " in md
    assert "| m/one | ga | party | Pub. Act. | 0.583 | " in md and "| 3/3 |" in md
    assert "200 resamples, seed 7" in md
    assert [(p.label, p.n) for p in report.plot.points] == [("m/one ga_tdp", 1), ("m/one ga", 4)]
    assert "seed 7, 200 resamples" in report.plot.interval and report.plot.scale == (0, 1)
    assert "no interval below 5 independent units" in md


def test_intervals_resample_templates_then_seeds(tmp_path):
    """Six templates x three seeds: the interval is over templates (seeds within each), wider
    than one that took the 18 episodes as independent when seeds within a template agree."""
    scores = {f"t{t}/ga/s{s}": (PUB, t / 5) for t in range(6) for s in range(3)}
    suite = fake_suite(tmp_path / "a", scores, model="scripted/town")
    report = suite_board([suite], seed=7, resamples=400)
    overall = report.data["rows"][0]["overall"]
    assert overall["units"] == 6 and overall["n"] == 18
    lo, hi = overall["ci"]
    naive = bootstrap_ci([v for v, in ([x[1]] for x in scores.values())], 7, 400)
    assert hi - lo > (naive[1] - naive[0]) * 1.4  # 6 units, not 18
    assert report.data["rows"][0]["by_template"]["t0"]["ci"] is None  # 3 seeds: too few
    again = suite_board([suite], seed=7, resamples=400)
    assert again.data == report.data  # seeded: the same intervals every time
    assert suite_board([suite], seed=8, resamples=400).data["rows"][0]["overall"]["ci"] != \
        overall["ci"]
    # The board's warnings travel with the plot and the JSON; the test double is marked.
    file = suite / "t0/ga/s0" / ScoringOptions().file
    warned = STSSScore.model_validate_json(file.read_text())
    warned.warnings = ["nobody moved"]
    file.write_text(warned.model_dump_json())
    report = suite_board([suite], seed=7, resamples=400)
    assert any("in 1 of 18 episodes nothing happened" in n for n in report.plot.notes)
    assert report.data["notes"] == report.plot.notes
    assert report.data["test_double"] == ["scripted/town"]
    assert report.plot.test_double == ["scripted/town"]


def test_two_rows_that_would_share_a_label_name_their_suites(tmp_path):
    a = fake_suite(tmp_path / "x" / "a", {"party/mine/s0": (PUB, 1.0)},
                   archs={"mine": "/one/mine.yaml"})
    b = fake_suite(tmp_path / "x" / "b", {"party/mine/s0": (PUB, 0.0)},
                   archs={"mine": "/two/mine.yaml"})
    rows = suite_board([a, b]).data["rows"]
    assert [r["label"] for r in rows] == ["m/one mine (a)", "m/one mine (b)"]
    assert [r["overall"]["mean"] for r in rows] == [1.0, 0.0]


def test_every_planned_episode_is_accounted_for(tmp_path):
    suite = fake_suite(tmp_path / "s", {"party/ga/s0": (PUB, 1.0), "party/ga/s1": (PUB, None)},
                       planned=["party/ga/s2"])
    (suite / "party" / "ga" / "s3").mkdir()  # begun, but no header: found though not recorded
    report = suite_board([suite])
    row = report.data["rows"][0]
    assert (row["planned"], row["scored"], row["unscored"]) == (4, 1, {"no target_num": 1})
    missing = {Path(m["run"]).name: m["why"] for m in row["missing"]}
    assert missing["s2"] == "not run: no run directory (never started)"
    assert missing["s3"].startswith("not run:") and "no header.json" in missing["s3"]
    md = report.markdown
    assert "- m/one ga: scored 1 of 4 planned episode(s); 1 unscored by the rules; 2 without a " \
        "score, not in the means:" in md
    assert "**Unscored** (m/one ga): 1 episode(s), not in the means: no target_num." in md


def test_the_reference_rules_read_their_own_score_files(tmp_path):
    suite = fake_suite(tmp_path / "s", {"party/ga/s0": (PUB, 0.5)}, rules="reference")
    assert suite_board([suite], rules="reference").data["rows"][0]["overall"]["mean"] == 0.5
    ours = suite_board([suite]).data["rows"][0]
    assert ours["scored"] == 0 and ours["missing"][0]["why"].startswith("not run: ")


def test_suites_pooled_with_different_episode_options_are_warned_about(tmp_path):
    a = fake_suite(tmp_path / "a", {"party/ga/s0": (PUB, 1.0)}, embedder="hashing")
    b = fake_suite(tmp_path / "b", {"party/ga/s1": (PUB, 1.0)}, embedder="minilm")
    warnings = suite_board([a, b]).data["warnings"]
    assert warnings == ["m/one ga pools suites run with different --embedder (hashing in a; "
                        "minilm in b): their episodes differ by more than the model and the "
                        "architecture"]


def test_a_directory_that_is_not_a_suite_is_refused(tmp_path, capsys):
    with pytest.raises(BoardError, match="not an STSS suite directory"):
        suite_board([tmp_path])
    assert main(["stss-board", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no suite.json" in err


def test_a_plot_of_a_board_with_nothing_scored_is_refused_not_drawn_blank(tmp_path, capsys):
    suite = fake_suite(tmp_path / "s", {"party/ga/s0": (PUB, None)})  # unscored by the rules
    png = tmp_path / "board.png"
    assert main(["stss-board", str(suite), "--plot", str(png)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("nothing scored to draw (no configuration has a score); no PNG written")
    assert not png.exists()


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    """Two finished suites from the command line, both with `scripted/town ga`: built-in
    names, a glob of names and a repeated --templates."""
    tmp = tmp_path_factory.mktemp("suites")
    assert main(["stss", "--templates", "public_spring_tasting,help_light*", "--arch", "ga",
                 "--seeds", "0,1", "--out", str(tmp / "a"), *SHORT, "--until", "19:00"]) == 0
    assert main(["stss", "--templates", "help_light_bulbs", "--templates", "appointment_portrait",
                 "--arch", "ga", "--arch", "ga_tdp", "--seeds", "2", "--out", str(tmp / "b"),
                 *SHORT, "--until", "13:00"]) == 0
    return tmp / "a", tmp / "b"


def test_templates_by_name_glob_and_repeat_and_the_plan_in_suite_json(suites):
    a, b = suites
    assert sorted(p.name for p in a.iterdir() if p.is_dir()) == [
        "help_light_bulbs", "public_spring_tasting"]
    recorded = json.loads((a / "suite.json").read_text())["episodes"]
    assert recorded == ["public_spring_tasting/ga/s0", "public_spring_tasting/ga/s1",
                        "help_light_bulbs/ga/s0", "help_light_bulbs/ga/s1"]
    assert [e.key for e in read_suite(b).episodes] == [
        "appointment_portrait/ga/s2", "appointment_portrait/ga_tdp/s2",
        "help_light_bulbs/ga/s2", "help_light_bulbs/ga_tdp/s2"]


def test_the_board_command_merges_suites_and_writes_its_files(suites, tmp_path, capsys):
    a, b = suites
    md, js, png = tmp_path / "board.md", tmp_path / "board.json", tmp_path / "board.png"
    assert main(["stss-board", str(a), str(b), "--seed", "3", "--resamples", "100",
                 "--markdown", str(md), "--json", str(js), "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(js.read_text())
    assert [(r["label"], r["planned"], r["scored"]) for r in data["rows"]] == [
        ("scripted/town ga", 6, 6), ("scripted/town ga_tdp", 2, 2)]
    assert data["rows"][0]["suites"] == ["a", "b"] and data["seed"] == 3
    assert md.read_text() in printed and "| scripted/town | ga | " in md.read_text()
    assert png.read_bytes()[:4] == b"\x89PNG"
    # The suite's own table and the board agree on a suite's means.
    table = json.loads((a / "table.json").read_text())["rows"][0]
    alone = suite_board([a]).data["rows"][0]
    assert round(alone["overall"]["mean"], 3) == table["overall"]
    assert alone["conversation_ratio"]["mean"] == pytest.approx(table["conversation_ratio"],
                                                                abs=5e-4)


def test_score_given_a_suite_scores_what_is_missing_and_prints_its_board(suites, tmp_path,
                                                                         capsys):
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(suites[1], suite)
    run = suite / "help_light_bulbs" / "ga" / "s2"
    (run / "score.json").unlink()
    capsys.readouterr()
    assert main(["score", str(suite)]) == 0
    printed = capsys.readouterr().out
    assert (run / "score.json").exists()  # scored again, offline
    assert "1 score file(s) written" in printed and "Every episode:" in printed
    assert "| scripted/town | ga_tdp | appointment_portrait | 2 |" in printed
    assert "scored 2 of 2 planned episode(s)." in printed
    assert main(["score", str(suite), "--rules", "reference", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == "reference" and len(data["episodes"]) == 4
    assert (run / "score.reference.json").exists()


def test_log_of_a_suite_says_one_line_per_episode(suites, capsys):
    a, _ = suites
    capsys.readouterr()
    assert main(["log", str(a)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("help_light_bulbs/ga/s0: completed, ") and " calls" in lines[0]
    assert lines[-1].startswith(f"4 runs in {a}: 4 completed")
    assert main(["log", str(a), "--events", "utterance"]) == 2
    assert "--events reads one run" in capsys.readouterr().err


def test_a_misspelt_template_names_the_nearest_and_the_list(tmp_path, capsys):
    out = tmp_path / "suite"
    assert main(["stss", "--templates", "help_light_bulbs,public_sprng_tasting", "--out",
                 str(out), *SHORT]) == 2
    err = capsys.readouterr().err
    assert "--templates public_sprng_tasting: no such template file, and no built-in template " \
        "of that name; did you mean public_spring_tasting? `sandbox list templates` lists " \
        "them" in err
    assert not out.exists()
    assert main(["stss", "--templates", "nothing_*", "--out", str(out), *SHORT]) == 2
    assert "matches no built-in template name and no file" in capsys.readouterr().err
    assert main(["run", "public_sprng_tasting", "--out", str(tmp_path / "run"), *SHORT]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'public_sprng_tasting'; did you mean public_spring_tasting? " \
        "known: single_room, town_day, and the names `sandbox list templates` lists" in err


def test_list_templates_shows_every_builtin_one(capsys):
    from tasks.stss import template_names

    assert main(["list", "templates"]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    rows = dict(line.strip("| ").split(" | ") for line in lines)
    assert sorted(rows) == template_names() and len(rows) == 30
    assert rows["public_spring_tasting"] == "public_activity: Spring tasting party at the cafe"
    assert rows["help_light_bulbs"].startswith("asking_for_help: ")


def test_a_sweep_runs_stss_cells_and_boards_them(tmp_path, capsys):
    import yaml

    flags = {"templates": "help_light_bulbs", "embedder": "hashing", "background": 2,
             "same-day": True, "start": "11:00", "until": "12:00"}
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({
        "out": str(tmp_path / "exp"), "models": {"town": "scripted/town"},
        "architectures": ["ga", "ga_tdp"], "seeds": [0, 1],
        "benchmarks": {"stss": {"flags": flags}}}))
    assert main(["sweep", str(path)]) == 0
    out = tmp_path / "exp" / "stss"
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["town-ga", "town-ga_tdp"]
    assert (out / "town-ga" / "help_light_bulbs" / "ga" / "s1" / "score.json").exists()
    board = json.loads((out / "board.json").read_text())
    assert [(r["label"], r["scored"]) for r in board["rows"]] == [
        ("scripted/town ga", 2), ("scripted/town ga_tdp", 2)]
    assert "## stss" in (tmp_path / "exp" / "summary.md").read_text()


def _example(command: str) -> str:
    from sandbox.app.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices[command].epilog.removeprefix("example: ")


def test_the_help_examples_use_builtin_names_and_a_short_suite(tmp_path, monkeypatch, capsys):
    import shlex

    stss = _example("stss")
    assert "tasks/" not in stss and "--templates public_spring_tasting" in stss
    harvest = _example("stss-harvest")
    assert harvest == ("sandbox stss --templates public_spring_tasting --model scripted/town "
                       "--embedder hashing --out runs/suite && sandbox stss-harvest runs/suite "
                       "--out runs/scenarios.json")
    monkeypatch.chdir(tmp_path)  # the example runs as written: two episodes, seconds
    for part in harvest.split(" && "):
        assert main(shlex.split(part)[1:]) == 0
    assert json.loads((tmp_path / "runs" / "scenarios.json").read_text())["scenarios"]


def test_the_board_reads_the_file_the_suite_writes():
    from evaluation.stss import SUITE_FILE
    from tasks.stss.plugin import SUITE_FILE as WRITTEN

    assert SUITE_FILE == WRITTEN


def test_a_suite_on_the_embedded_model_says_before_it_starts_how_long_it_will_take(
        tmp_path, capsys, monkeypatch):
    from sandbox.errors import UserError
    from tasks.stss.plugin import commands

    def stop(*_args, **_kw):  # what would load the model and run: not needed to see the notice
        raise UserError("stopped here by the test")

    monkeypatch.setattr(commands, "_setup", stop)
    # No --model: the embedded one, two full episodes (12 residents, 38 simulated hours).
    assert main(["stss", "--templates", "public_spring_tasting", "--seeds", "0..1", "--arch",
                 "ga", "--out", str(tmp_path / "s")]) == 2
    out = capsys.readouterr().out
    said = " ".join(out.split())
    assert "this will take long: 2 episode(s) on the embedded model local/smollm2-135m: about" \
        in said and "--same-day --start 15:00 --background 2" in said
    assert main(["stss", "--templates", "public_spring_tasting", "--arch", "ga", *SHORT[:2],
                 "--out", str(tmp_path / "t")]) == 2
    assert "embedded model" not in capsys.readouterr().out  # an endpoint's speed is not known
