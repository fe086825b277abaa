"""`sandbox run <template>`, `sandbox score` and `sandbox stss` as a user meets them."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from sandbox.app.cli import main
from tasks.stss import TEMPLATES_DIR

SHORT = ["--model", "scripted/town", "--embedder", "hashing", "--background", "2",
         "--same-day", "--start", "11:00"]


def test_run_a_builtin_template_ends_with_its_score(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(out), "--quiet",
                 *SHORT]) == 0
    printed = capsys.readouterr().out
    assert "score 1" in printed and "counted" in printed
    assert f"sandbox replay {out}" in printed.replace("\n", "")
    saved = json.loads((out / "score.json").read_text())
    assert saved["template"] == "public_spring_tasting" and saved["score"] == 1.0
    header = json.loads((out / "header.json").read_text())
    assert header["config"]["stss_task"]["performer"] == "Maya Lindqvist"
    assert header["config"]["performer_architecture"] == "ga_tdp"

    (out / "score.json").unlink()
    assert main(["score", str(out)]) == 0  # offline, from the log alone
    assert "score 1" in capsys.readouterr().out
    assert json.loads((out / "score.json").read_text())["score"] == 1.0


def test_the_plugin_gives_sandbox_run_its_templates_and_their_options(capsys):
    from sandbox.app.cli import build_parser
    from tasks.stss.plugin import PLUGIN

    target = PLUGIN.run_target
    assert target.owns("public_spring_tasting") and target.owns("my_task.yaml")
    assert not target.owns("single_room") and not target.owns("nowhere_room")
    run = next(a for a in build_parser()._actions if a.dest == "command").choices["run"]
    scenario = next(a for a in run._actions if a.dest == "scenario")
    assert scenario.help.endswith(f", or {target.describe}")
    assert {"--background", "--same-day", "--start", "--until"} <= set(run._option_string_actions)
    main(["list", "benchmarks"])
    assert "| stss | STSS action level: social tasks in the town, scored from the log (Table 4) " \
        "| social-sandbox | sandbox score, sandbox stss, sandbox stss-board |" in \
        capsys.readouterr().out


def test_run_a_template_file_with_an_unknown_place_fails_in_one_line(tmp_path, capsys):
    bad = yaml.safe_load((TEMPLATES_DIR / "public_quiz_night.yaml").read_text())
    bad["location_choices"] = ["town:The Moon"]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    assert main(["run", str(path), "--out", str(tmp_path / "run"), *SHORT]) == 2
    err = capsys.readouterr().err.strip()
    assert str(path) in err and "location_choices.0" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_window_that_starts_after_the_activity_is_refused(tmp_path, capsys):
    args = ["run", "public_spring_tasting", "--out", str(tmp_path / "run"), *SHORT,
            "--start", "19:00"]  # seed 0: the party is 18:00-20:00
    assert main(args) == 2
    assert "after the activity" in capsys.readouterr().err


def test_score_refuses_a_run_that_is_not_an_stss_task(tmp_path, capsys):
    assert main(["run", "single_room", "--model", "scripted/default", "--out",
                 str(tmp_path / "room"), "--quiet"]) == 0
    assert main(["score", str(tmp_path / "room")]) == 2
    assert "not an STSS run" in capsys.readouterr().err


def test_suite_writes_a_table_per_architecture_and_resumes(tmp_path, capsys):
    chosen = tmp_path / "templates"
    chosen.mkdir()
    for name in ("public_spring_tasting", "help_light_bulbs"):
        shutil.copy(TEMPLATES_DIR / f"{name}.yaml", chosen)
    args = ["stss", "--templates", str(chosen), "--arch", "ga", "--arch", "ga_tdp",
            "--seeds", "0..1", "--out", str(tmp_path / "suite"), *SHORT, "--until", "19:00"]
    assert main(args) == 0
    table = json.loads((tmp_path / "suite" / "table.json").read_text())
    assert [r["architecture"] for r in table["rows"]] == ["ga", "ga_tdp"]
    for row in table["rows"]:
        assert row["episodes"]["public_activity"] == 2 and row["episodes"]["asking_for_help"] == 2
        assert row["by_type"]["appointment"] is None
    markdown = (tmp_path / "suite" / "table.md").read_text()
    assert "| scripted/town | ga_tdp |" in markdown and "Pub. Act." in markdown
    assert (tmp_path / "suite" / "help_light_bulbs" / "ga" / "s1" / "score.json").exists()
    capsys.readouterr()

    assert main(args) == 0  # every episode is done: nothing runs again
    assert "8 episodes (8 already done)" in capsys.readouterr().out
    assert json.loads((tmp_path / "suite" / "table.json").read_text()) == table


def test_the_performer_can_run_any_architecture_file(tmp_path, capsys):
    from agents.architecture import BUILT_IN

    mine = yaml.safe_load((BUILT_IN / "ga_tdp.yaml").read_text())
    mine["name"] = "tdp_short_talks"
    mine["modules"]["conversation"]["params"] = {"max_turns": 2}
    path = tmp_path / "tdp_short_talks.yaml"
    path.write_text(yaml.safe_dump(mine))
    out = tmp_path / "run"
    assert main(["run", "public_spring_tasting", "--arch", str(path), "--seed", "1", "--out",
                 str(out), "--quiet", *SHORT]) == 0
    header = json.loads((out / "header.json").read_text())
    assert header["config"]["performer_architecture"] == str(path)
    events = [json.loads(line) for line in (out / "events.jsonl").open()]
    hers = {e["conversation"] for e in events if e["kind"] == "conversation_started"
            and "Maya Lindqvist" in e["participants"]}
    turns = [e["turns"] for e in events
             if e["kind"] == "conversation_ended" and e["conversation"] in hers]
    assert turns and max(turns) <= 2


def test_an_unknown_architecture_is_refused_before_anything_runs(tmp_path, capsys):
    code = None
    try:
        code = main(["run", "public_spring_tasting", "--arch", "ga_nope", "--out",
                     str(tmp_path / "run"), *SHORT])
    except SystemExit as exc:  # argparse's own exit for a bad option value
        code = exc.code
    assert code == 2
    assert "no such architecture" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def one_template(tmp_path, name="help_light_bulbs"):
    chosen = tmp_path / "templates"
    chosen.mkdir(exist_ok=True)
    shutil.copy(TEMPLATES_DIR / f"{name}.yaml", chosen)
    return chosen


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory):
    """A finished one-episode suite and the arguments it was run with."""
    tmp = tmp_path_factory.mktemp("small")
    args = ["stss", "--templates", str(one_template(tmp)), "--arch", "ga", "--seeds", "0",
            "--out", str(tmp / "suite"), *SHORT, "--until", "13:00"]
    assert main(args) == 0
    return tmp / "suite", args


@pytest.mark.parametrize("change, option", [
    (["--model", "scripted/default"], "--model"),
    (["--background", "1"], "--background"),
    (["--start", "10:00"], "--start"),
    (["--until", "14:00"], "--until"),
    (["--embedder", "minilm"], "--embedder"),
])
def test_resuming_a_suite_with_other_episode_options_is_refused(small_suite, capsys, change,
                                                                option):
    out, args = small_suite
    recorded = (out / "suite.json").read_text()
    capsys.readouterr()
    assert main([*args, *change]) == 2  # argparse: the last of a repeated option wins
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{option}:" in err and "use a new --out" in err
    assert (out / "suite.json").read_text() == recorded


def test_resuming_a_suite_without_same_day_is_refused(small_suite, capsys):
    out, args = small_suite
    capsys.readouterr()
    assert main([a for a in args if a != "--same-day"]) == 2
    assert "--same-day: asked for off" in capsys.readouterr().err


def test_resuming_a_suite_with_the_same_options_skips_its_episodes(small_suite, capsys):
    out, args = small_suite
    capsys.readouterr()
    assert main(args) == 0
    assert "1 episodes (1 already done)" in capsys.readouterr().out


def test_two_architecture_files_with_one_name_do_not_share_a_directory(tmp_path, capsys):
    from agents.architecture import BUILT_IN

    for folder, arch in (("a", "ga"), ("b", "ga_tdp")):
        (tmp_path / folder).mkdir()
        shutil.copy(BUILT_IN / f"{arch}.yaml", tmp_path / folder / "mine.yaml")
    args = ["stss", "--templates", str(one_template(tmp_path)), "--out", str(tmp_path / "suite"),
            *SHORT]
    assert main([*args, "--arch", str(tmp_path / "a" / "mine.yaml"),
                 "--arch", str(tmp_path / "b" / "mine.yaml")]) == 2
    assert "would share the directory mine/" in capsys.readouterr().err
    assert not (tmp_path / "suite").exists()


def test_an_architecture_file_cannot_take_over_a_suite_directory(tmp_path, capsys):
    from agents.architecture import BUILT_IN

    (tmp_path / "a").mkdir()
    mine = tmp_path / "a" / "ga.yaml"  # named like the built-in
    shutil.copy(BUILT_IN / "ga_tdp.yaml", mine)
    args = ["stss", "--templates", str(one_template(tmp_path)), "--out", str(tmp_path / "suite"),
            *SHORT, "--until", "12:00"]
    assert main([*args, "--arch", "ga"]) == 0
    capsys.readouterr()
    assert main([*args, "--arch", str(mine)]) == 2
    assert f"--arch: asked for ga = {mine}" in capsys.readouterr().err


def test_the_suite_window_rule_is_applied_and_recorded_in_the_table(tmp_path, capsys):
    args = ["stss", "--templates", str(one_template(tmp_path, "public_spring_tasting")),
            "--arch", "ga", "--seeds", "1", "--out", str(tmp_path / "suite"), *SHORT]
    assert main(args) == 0
    table = json.loads((tmp_path / "suite" / "table.json").read_text())
    assert table["window_rule"] == "overlap"
    assert "Window rule: overlap" in (tmp_path / "suite" / "table.md").read_text()
    capsys.readouterr()

    assert main([*args, "--window-rule", "start"]) == 0  # re-scored from the logs, not re-run
    assert "1 episodes (1 already done)" in capsys.readouterr().out
    assert json.loads((tmp_path / "suite" / "table.json").read_text())["window_rule"] == "start"
    assert "Window rule: start" in (tmp_path / "suite" / "table.md").read_text()
    score = json.loads((tmp_path / "suite" / "public_spring_tasting" / "ga" / "s1" /
                        "score.json").read_text())
    assert score["options"]["window"] == "start"


def test_the_suite_under_both_rule_sets_writes_a_table_for_each(tmp_path, capsys):
    args = ["stss", "--templates", str(one_template(tmp_path, "public_spring_tasting")),
            "--arch", "ga", "--seeds", "1", "--out", str(tmp_path / "suite"), *SHORT]
    assert main(args) == 0
    capsys.readouterr()
    assert not (tmp_path / "suite" / "table.reference.json").exists()
    assert main([*args, "--rules", "both"]) == 0  # scored again from the logs, not re-run
    printed = capsys.readouterr().out
    assert "1 episodes (1 already done)" in printed
    assert "Rules: ours" in printed and "Rules: the STSS authors' public scorer" in printed
    reference = json.loads((tmp_path / "suite" / "table.reference.json").read_text())
    assert reference["rules"] == "reference" and len(reference["rows"]) == 1
    assert json.loads((tmp_path / "suite" / "table.json").read_text())["rules"] == "ours"
    run = tmp_path / "suite" / "public_spring_tasting" / "ga" / "s1"
    assert json.loads((run / "score.reference.json").read_text())["rules"] == "reference"
    md = (tmp_path / "suite" / "table.md").read_text()
    assert md.index("Rules: ours") < md.index("Rules: the STSS authors' public scorer")
    assert "Episodes whose score differs between ours and the reference's: Pub. Act. " in md


def test_a_name_map_that_is_a_list_is_refused_in_one_line(tmp_path, capsys):
    from tests.tasks.test_stss_templates import PUBLIC

    (tmp_path / "tasks.json").write_text(json.dumps(PUBLIC))
    (tmp_path / "map.yaml").write_text("- Isabella Rodriguez\n- Maya Lindqvist\n")
    assert main(["stss", "--templates", str(tmp_path / "tasks.json"), "--name-map",
                 str(tmp_path / "map.yaml"), "--out", str(tmp_path / "suite"), *SHORT]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "expected a mapping" in err and "not a list" in err


def test_a_public_task_file_without_tasks_is_an_error(tmp_path, capsys):
    (tmp_path / "tasks.json").write_text("[]")
    assert main(["stss", "--templates", str(tmp_path / "tasks.json"), "--out",
                 str(tmp_path / "suite"), *SHORT]) == 2
    assert "no tasks in the file" in capsys.readouterr().err


def test_a_malformed_public_task_is_an_error_not_a_traceback(tmp_path, capsys):
    from tests.tasks.test_stss_templates import NAMES, PUBLIC

    broken = json.loads(json.dumps(PUBLIC[:1]))
    broken[0]["task"]["goal"][0]["start_time"] = "tomorrow evening"
    (tmp_path / "tasks.json").write_text(json.dumps(broken))
    (tmp_path / "map.json").write_text(json.dumps(NAMES))
    assert main(["stss", "--templates", str(tmp_path / "tasks.json"), "--name-map",
                 str(tmp_path / "map.json"), "--out", str(tmp_path / "suite"), *SHORT]) == 2
    err = capsys.readouterr().err
    assert "[0] (base_party).task.goal.0.start_time: 'tomorrow evening' is not a time" in err


@pytest.mark.parametrize("command", ["run", "stss"])
def test_an_until_before_the_activity_is_refused_before_any_model_loads(tmp_path, capsys,
                                                                        command):
    # A model that cannot load: had it been built first, its error would come instead.
    args = [*SHORT, "--model", "scripted/no-such-script", "--until", "12:00"]
    target = ["public_spring_tasting"] if command == "run" else \
        ["--templates", str(one_template(tmp_path, "public_spring_tasting"))]
    assert main([command, *target, "--out", str(tmp_path / "out"), *args]) == 2
    assert "before the activity's time window opens" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_until_inside_the_activity_window_is_warned_about(tmp_path, capsys):
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(tmp_path / "run"),
                 "--quiet", *SHORT, "--until", "17:30"]) == 0  # seed 1: 17:00-19:00
    printed = " ".join(capsys.readouterr().out.split())
    assert "warning: the episode ends at 17:30, before the activity's time window closes " \
        "(17:00-19:00)" in printed


def test_a_template_run_and_a_suite_load_the_model_once(tmp_path, monkeypatch):
    import sandbox.llm

    built = []
    make_backend = sandbox.llm.make_backend
    monkeypatch.setattr(sandbox.llm, "make_backend",
                        lambda *a, **k: built.append(1) or make_backend(*a, **k))
    assert main(["run", "help_light_bulbs", "--out", str(tmp_path / "run"), "--quiet",
                 *SHORT, "--until", "12:00"]) == 0
    assert len(built) == 1
    built.clear()
    assert main(["stss", "--templates", str(one_template(tmp_path)), "--arch", "ga", "--seeds",
                 "0..1", "--out", str(tmp_path / "suite"), *SHORT, "--until", "12:00"]) == 0
    assert len(built) == 1  # one backend for both episodes, each with its own cache
    assert (tmp_path / "suite" / "help_light_bulbs" / "ga" / "s1" / "llm_cache.jsonl").exists()


def test_an_episode_in_which_nobody_talked_is_flagged_on_its_score_and_the_table(tmp_path,
                                                                                capsys):
    # No background residents: the performer has nobody to talk to or invite.
    out = tmp_path / "suite"
    assert main(["stss", "--templates", str(TEMPLATES_DIR / "public_spring_tasting.yaml"),
                 "--arch", "ga", "--seeds", "0", "--model", "scripted/town", "--embedder",
                 "hashing", "--background", "0", "--same-day", "--start", "16:00",
                 "--out", str(out)]) == 0
    run = out / "public_spring_tasting" / "ga" / "s0"
    assert json.loads((run / "score.json").read_text())["warnings"] == [
        "nobody talked: no conversation happened (no 'utterance' event)"]
    table = (out / "table.md").read_text()
    assert "**Warning** (scripted/town, ga): in 1 of 1 episodes nothing happened (nobody " \
           "talked: 1)" in table
    assert json.loads((out / "table.json").read_text())["rows"][0]["warned"] == {
        "nobody talked": 1}
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    assert "warning: nobody talked: no conversation happened (no 'utterance' event): this " \
           "score does not measure the agents" in capsys.readouterr().out


def test_a_template_run_takes_whispers_and_forks_with_its_performer(tmp_path, capsys):
    out, new = tmp_path / "run", tmp_path / "fork"
    assert main(["run", "public_spring_tasting", "--out", str(out), "--quiet", *SHORT,
                 "--whisper", "Maya Lindqvist@11:30: Ask the neighbours first."]) == 0
    log = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [(e["agent"], e["t"]) for e in log if e["kind"] == "whispered"] == [
        ("Maya Lindqvist", 1800.0)]
    assert main(["fork", str(out), "--at", "12:00", "--arch", "ga", "--out", str(new)]) == 0
    [changed] = [json.loads(line) for line in (new / "events.jsonl").read_text().splitlines()
                 if '"architecture_changed"' in line]
    assert (changed["agent"], changed["previous"], changed["architecture"]) == (
        "Maya Lindqvist", "ga_tdp", "ga")
    assert "task_planner" in changed["fresh"] and (new / "score.json").is_file()
    capsys.readouterr()
    assert main(["run", "public_spring_tasting", "--out", str(tmp_path / "bad"), "--quiet",
                 *SHORT, "--whisper", "Maya Lindquist@11:30: hello"]) == 2
    err = capsys.readouterr().err.strip()
    assert "did you mean Maya Lindqvist" in err and len(err.splitlines()) == 1


def test_every_template_named_in_one_comma_separated_value_is_a_suite(tmp_path, capsys):
    """All 30 names in one --templates value (longer than a file name may be): the 30
    templates, not 'File name too long'; one name too long for a file: one line."""
    names = ",".join(sorted(p.stem for p in TEMPLATES_DIR.glob("*.yaml")))
    assert len(names) > 255
    assert main(["stss", "--templates", names, "--out", str(tmp_path / "s"), "--dry-run",
                 *SHORT[:4]]) == 0
    assert "60 episode(s) to run" in capsys.readouterr().out.replace("\n", " ")
    assert main(["stss", "--templates", "x" * 300, "--out", str(tmp_path / "t"), "--dry-run",
                 *SHORT[:4]]) == 2
    err = capsys.readouterr().err
    assert "300 characters is no template name or file" in err and len(err.splitlines()) == 1
