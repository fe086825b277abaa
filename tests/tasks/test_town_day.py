"""`sandbox run town_day`: a day in the town from a config file, checked before it runs."""

import json

import pytest
import yaml

from sandbox.app.cli import main
from tasks.scenarios.town_day import DEFAULT_CONFIG


def write_config(tmp_path, **changes):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    config.update(changes)
    path = tmp_path / "day.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("changes, message", [
    ({"residents": ["Grace Okonkwo", "Nobody Atall"]}, "no resident(s) Nobody Atall"),
    ({"architectures": {"Kenji Mori": "ga_nope"}}, "no such architecture"),
    ({"tasks": {"Wen Zhao": "sell books"}}, "'Wen Zhao' is not among the residents"),
    ({"params": {"reflector": {"threshold": -3}}}, "params"),
    ({"params": {"brain": {"size": 3}}}, "no slot 'brain'"),
    ({"hours": 0}, "hours"),
])
def test_bad_town_day_file_is_one_line_before_anything_runs(tmp_path, capsys, changes, message):
    out = tmp_path / "run"
    args = ["run", "town_day", "--config", str(write_config(tmp_path, **changes)),
            "--model", "scripted/default", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(tmp_path / "day.yaml") in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_town_day_runs_and_applies_parameter_changes(tmp_path, capsys):
    config = write_config(tmp_path, hours=3, embedder="hashing",
                          params={"reflector": {"threshold": 7}})
    out = tmp_path / "run"
    assert main(["run", "town_day", "--config", str(config), "--model", "scripted/town",
                 "--out", str(out), "--quiet"]) == 0
    header = json.loads((out / "header.json").read_text())
    assert header["config"]["params"] == {"reflector": {"threshold": 7}}
    kinds = [json.loads(line)["kind"] for line in (out / "events.jsonl").open()]
    assert {"plan_made", "move", "action_started", "task_planned"} <= set(kinds)
    # A threshold of 7 is passed within three hours: the override reached the reflector.
    reflections = [json.loads(line) for line in (out / "events.jsonl").open()
                   if '"kind":"reflected"' in line]
    assert reflections, "no reflection despite the lowered threshold"
    assert any(r["insights"] for r in reflections)  # (evidence links: tests/agents)


def test_command_line_options_change_the_file_the_performer_switch_is_one_flag(tmp_path):
    config = write_config(tmp_path, params={})
    out = tmp_path / "run"
    assert main(["run", "town_day", "--config", str(config), "--model", "scripted/town",
                 "--residents", "2", "--performer", "Agnes Whitfield", "--arch", "ga",
                 "--task", "Agnes wants to sell books.", "--hours", "1",
                 "--embedder", "hashing", "--out", str(out), "--quiet"]) == 0
    cfg = json.loads((out / "header.json").read_text())["config"]
    assert cfg["residents"] == ["Agnes Whitfield", "Amara Mensah"]  # sorted, performer first
    assert cfg["architectures"] == {"Agnes Whitfield": "ga"}  # Grace's is dropped with her
    assert cfg["tasks"] == {"Agnes Whitfield": "Agnes wants to sell books."}
    assert (cfg["hours"], cfg["embedder"]) == (1.0, "hashing")


def test_a_performer_joins_the_file_s_residents_beside_its_own_performer(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "town_day", "--model", "scripted/town", "--performer", "Kenji Mori",
                 "--arch", "ga", "--hours", "1", "--embedder", "hashing", "--out", str(out),
                 "--quiet"]) == 0
    cfg = json.loads((out / "header.json").read_text())["config"]
    assert cfg["residents"] == ["Grace Okonkwo", "Arthur Okonkwo", "Kenji Mori"]
    assert cfg["architectures"] == {"Grace Okonkwo": "ga_tdp", "Kenji Mori": "ga"}
    assert list(cfg["tasks"]) == ["Grace Okonkwo"]
    assert (cfg["hours"], cfg["embedder"]) == (1.0, "hashing")


@pytest.mark.parametrize("options, message", [
    (["--arch", "ga"], "--arch needs --performer"),
    (["--task", "sell books"], "--task needs --performer"),
    (["--performer", "Nobody Atall"], "--performer 'Nobody Atall': no such resident"),
    (["--resident", "Nobody Atall"], "--resident 'Nobody Atall': no such resident"),
    (["--resident", "Agnes Whitfeld"], "no such resident in world town; did you mean Agnes "
                                       "Whitfield"),
])
def test_bad_town_day_options_are_one_line_before_anything_runs(tmp_path, capsys, options,
                                                               message):
    out = tmp_path / "run"
    assert main(["run", "town_day", *options, "--model", "scripted/town", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_a_bad_hours_is_refused_at_parsing(tmp_path, capsys):
    assert main(["run", "town_day", "--hours", "0", "--out", str(tmp_path / "run")]) == 2
    assert "give a number more than 0 and at most 8784" in capsys.readouterr().err


def test_town_day_options_are_refused_for_another_scenario(tmp_path, capsys):
    assert main(["run", "single_room", "--performer", "Agnes Whitfield", "--model",
                 "scripted/default", "--out", str(tmp_path / "run")]) == 2
    assert "--performer is an option of town_day" in capsys.readouterr().err


def test_an_ablation_without_the_tuned_module_runs_and_says_what_was_not_applied(tmp_path):
    from sandbox.app.cli import main

    out = tmp_path / "run"
    assert main(["run", "town_day", "--model", "scripted/town", "--embedder", "hashing",
                 "--architecture", "ga_no_reflection", "--hours", "1", "--quiet", "--out",
                 str(out)]) == 0
    config = json.loads((out / "header.json").read_text())["config"]
    assert config["params_not_applied"] == {"ga_no_reflection": ["reflector"]}
    ga = tmp_path / "ga"
    assert main(["run", "town_day", "--model", "scripted/town", "--embedder", "hashing",
                 "--architecture", "ga", "--hours", "1", "--quiet", "--out", str(ga)]) == 0
    config = json.loads((ga / "header.json").read_text())["config"]
    assert "params_not_applied" not in config
    assert config["architecture_modules"]["ga"]["modules"]["reflector"]["params"]["threshold"] == 50
