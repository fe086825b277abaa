"""`sandbox run <template>`, `sandbox score` and `sandbox stss` as a user meets them."""

from __future__ import annotations

import json
import shutil

import yaml

from sandbox.cli import main
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
