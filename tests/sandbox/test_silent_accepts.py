"""What used to be accepted without a word (issue 46, item 6) is refused in one line, exit 2,
before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    return line


@pytest.mark.parametrize("second, said", [
    ({"name": "Ann", "description": "A poet."}, "two personas are named 'Ann'"),
    ({"name": "  ", "description": "A poet."}, "personas.1.name: Value error, a name cannot be "
                                               "blank"),
])
def test_a_single_room_persona_that_would_be_dropped_or_blank_is_refused(second, said,
                                                                         tmp_path, capsys):
    config = tmp_path / "room.yaml"
    config.write_text(yaml.safe_dump({"personas": [{"name": "Ann", "description": "A baker."},
                                                   second]}))
    out = tmp_path / "run"
    assert said in refused(["run", "single_room", "--config", str(config), "--model",
                            "scripted/default", "--out", str(out)], capsys)
    assert not out.exists()


def test_more_background_residents_than_the_town_holds_is_said_not_clamped(tmp_path, capsys):
    out = tmp_path / "run"
    line = refused(["run", "public_spring_tasting", "--background", "100", "--model",
                    "scripted/town", "--out", str(out)], capsys)
    assert "--background 100: town has 24 residents besides the performer" in line
    assert not out.exists()


def test_an_option_of_world_generate_is_refused_when_checking_a_world(capsys):
    assert "--residents: options of `sandbox world generate`" in refused(
        ["world", "town", "--residents", "5"], capsys)


def test_distractors_under_the_transient_setting_are_refused(tmp_path, capsys):
    line = refused(["refutebench", "--model", "scripted/refutebench", "--refuter",
                    "scripted/refutebench", "--judge", "scripted/refutebench", "--distractors",
                    "1", "--out", str(tmp_path / "rb")], capsys)
    assert "--distractors 1: the unrelated requests are those of the persistent setting" in line
    assert not (tmp_path / "rb").exists()


def test_an_interview_question_of_an_unknown_category_is_refused(tmp_path, capsys):
    questions = tmp_path / "q.yaml"
    questions.write_text(yaml.safe_dump({"questions": [
        {"id": "a", "category": "plan", "text": "What next?"}]}))
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(run)]) == 0
    capsys.readouterr()
    line = refused(["interview-set", str(run), "--questions", str(questions), "--judge",
                    "scripted/default", "--out", str(tmp_path / "iv")], capsys)
    assert "unknown category 'plan'; did you mean 'plans'?" in line
    assert not (tmp_path / "iv").exists()


def test_a_board_given_one_directory_twice_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "x").mkdir()
    again = tmp_path / "x" / ".." / "run"
    line = refused(["stss-board", str(run), str(again)], capsys)
    assert line.endswith(f"argument DIR: {again} is given twice (as {run}): each "
                         "directory once")


def test_replay_with_the_map_of_another_world_is_refused(tmp_path, capsys):
    run = tmp_path / "day"
    assert main(["run", "town_day", "--model", "scripted/town", "--embedder", "hashing",
                 "--residents", "2", "--hours", "0.25", "--quiet", "--out", str(run)]) == 0
    capsys.readouterr()
    line = refused(["replay", str(run), "--world", str(ROOT / "worlds/maps/single_room.yaml"),
                    "--export", str(tmp_path / "frames")], capsys)
    assert "a map of 'single_room', but the run took place in 'town'" in line
    assert not (tmp_path / "frames").exists()


def test_a_template_title_with_escapes_is_printed_escaped(tmp_path, capsys):
    template = yaml.safe_load((ROOT / "tasks/stss/templates/public_spring_tasting.yaml")
                              .read_text(encoding="utf-8"))
    template["title"] = "Party\x1b]0;owned\x07 [red]loud[/red]"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(template))
    assert main(["run", str(path), "--model", "scripted/town", "--embedder", "hashing",
                 "--background", "1", "--same-day", "--start", "17:55", "--until", "18:05",
                 "--quiet", "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "Party\\x1b]0;owned\\x07 [red]loud[/red]" in printed


def test_harvesting_runs_without_a_conversation_writes_no_empty_set(tmp_path, capsys):
    run = tmp_path / "stss"
    assert main(["run", "public_spring_tasting", "--background", "1", "--same-day", "--start",
                 "17:55", "--until", "18:05", "--model", "scripted/town", "--embedder",
                 "hashing", "--quiet", "--out", str(run)]) == 0
    capsys.readouterr()
    line = refused(["stss-harvest", str(run), "--out", str(tmp_path / "set.json")], capsys)
    assert "no scenarios in" in line and "nothing written" in line
    assert not (tmp_path / "set.json").exists()


@pytest.mark.parametrize("field, value, said", [
    ("price_in", ".inf", "price_in: Input should be a finite number"),
    ("price_out", ".nan", "price_out: Input should be a finite number"),
    ("price_in", "true", "price_in: Value error, True is not a number"),
    ("price_in", "1.0e9", "price_in: Input should be less than or equal to 100000"),
    ("max_concurrency", "true", "max_concurrency: Input should be a valid integer"),
    ("timeout_s", "false", "timeout_s: Value error, False is not a number"),
])
def test_a_models_file_number_that_is_not_one_is_refused(tmp_path, capsys, field, value, said):
    """A price of .inf was printed as `$inf` by a dry run; `max_concurrency: true` read as 1."""
    models = tmp_path / "models.yaml"
    models.write_text(f"m:\n  model: scripted/town\n  {field}: {value}\n")
    line = refused(["list", "models", "--models", str(models)], capsys)
    field, reason = said.split(": ", 1)
    assert str(models) in line and f"m.{field} (line 3): {reason}" in line  # the field's line
