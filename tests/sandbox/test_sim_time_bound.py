"""Simulated time is bounded: a template, window or town day asking for more than the longest
episode allowed (--max-sim-hours, $SANDBOX_MAX_SIM_HOURS, 72 h by default) is refused before
anything runs, in one line naming the file and field (or the option); nothing is written."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.llm import ScriptedBackend
from sandbox.runner import run_episode
from sandbox.simtime import SimTimeTooLong

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tasks" / "stss" / "templates" / "public_spring_tasting.yaml"
TOWN_DAY = ROOT / "tasks" / "scenarios" / "town_day.yaml"
SCRIPTED = ["--model", "scripted/town", "--embedder", "hashing", "--background", "2"]


def template_with(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    data.update(changes)
    path = tmp_path / "long_party.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def one_line(capsys) -> str:
    printed = capsys.readouterr()
    [line] = printed.err.strip().splitlines()
    return line


@pytest.mark.parametrize("command", ["run", "stss"])
def test_a_template_asking_for_too_much_time_is_refused_naming_file_and_field(command, tmp_path,
                                                                              capsys):
    path = template_with(tmp_path, duration_minutes=1_000_000_000)
    out = tmp_path / "out"
    argv = ["run", str(path)] if command == "run" else ["stss", "--templates", str(path)]
    assert main([*argv, *SCRIPTED, "--out", str(out)]) == 2
    line = one_line(capsys)
    assert str(path) in line and "duration_minutes" in line and "72 h" in line
    assert "16,666,666.7 simulated hours" in line
    assert not out.exists()


def test_a_window_longer_than_the_maximum_is_refused_naming_the_window(tmp_path, capsys):
    out = tmp_path / "out"
    # 06:00 the day before to the party's end: more than 30 h
    assert main(["run", str(TEMPLATE), *SCRIPTED, "--max-sim-hours", "30", "--out",
                 str(out)]) == 2
    line = one_line(capsys)
    assert str(TEMPLATE) in line and "the episode window" in line and "--same-day" in line
    assert "(30 h;" in line and not out.exists()


def test_the_maximum_is_settable(tmp_path, capsys, monkeypatch):
    path = template_with(tmp_path, duration_minutes=24 * 60)  # a day-long event: 24 h
    window = ["--same-day", "--start", "16:00", "--until", "18:30", "--quiet"]
    monkeypatch.setenv("SANDBOX_MAX_SIM_HOURS", "12")
    assert main(["run", str(path), *SCRIPTED, *window, "--out", str(tmp_path / "a")]) == 2
    assert "duration_minutes" in one_line(capsys)
    assert main(["run", str(path), *SCRIPTED, *window, "--max-sim-hours", "30", "--out",
                 str(tmp_path / "b")]) == 0  # the option wins over the variable
    assert (tmp_path / "b" / "result.json").exists()


def test_a_town_day_too_long_is_refused_by_file_field_or_option(tmp_path, capsys):
    config = yaml.safe_load(TOWN_DAY.read_text(encoding="utf-8"))
    config["hours"] = 10_000
    path = tmp_path / "long_day.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    town = ["run", "town_day", "--model", "scripted/town", "--embedder", "hashing"]
    assert main([*town, "--config", str(path), "--out", str(tmp_path / "a")]) == 2
    line = one_line(capsys)
    assert str(path) in line and "at hours" in line
    assert main([*town, "--hours", "500", "--out", str(tmp_path / "b")]) == 2
    assert "--hours 500: asks for 500.0 simulated hours" in one_line(capsys)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("value", ["soon", "0", "-5", "inf"])
def test_a_bad_maximum_is_one_line(value, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SANDBOX_MAX_SIM_HOURS", value)
    assert main(["run", "single_room", "--model", "scripted/default", "--out",
                 str(tmp_path / "x")]) == 2
    assert "SANDBOX_MAX_SIM_HOURS" in one_line(capsys)
    assert main(["run", "single_room", "--max-sim-hours", value, "--out",
                 str(tmp_path / "x")]) == 2  # the option is checked as it is parsed
    assert "--max-sim-hours" in one_line(capsys)


def test_the_runner_refuses_an_episode_too_long_before_writing_anything(tmp_path):
    class Forever:
        name, world, until = "forever", None, 1e12
        start_time = datetime(2024, 1, 1)

        def config(self):
            return {}

        def models(self, default_model):
            return {}

        def setup(self, engine):
            raise AssertionError("never set up")

    with pytest.raises(SimTimeTooLong, match="the forever episode"):
        run_episode(Forever(), ScriptedBackend(), seed=0, out_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()
