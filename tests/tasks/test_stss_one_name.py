"""One name everywhere for STSS (issue 58, 2): a role's model is named "alias (model id)" when
the models file named it, and boards, compare and `sandbox log` go by who answered, never by
the string typed: the performer whose calls went to two models is listed under both, two
aliases of one model id are two models, and an alias edited to another model is refused."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main

ALIASES = "A:\n  model: scripted/town\nB:\n  model: scripted/town\nB2:\n  model: scripted/town\n"


def suite(tmp_path, out, *extra) -> int:
    return main(["stss", "--templates", "public_spring_tasting", "--arch", "ga", "--seeds", "1",
                 "--models", str(tmp_path / "models.yaml"), "--embedder", "hashing",
                 "--background", "2", "--same-day", "--start", "15:00", "--out",
                 str(tmp_path / out), *extra])


@pytest.fixture
def suites(tmp_path, capsys):
    (tmp_path / "models.yaml").write_text(ALIASES)
    assert suite(tmp_path, "ab", "--model", "A", "--background-model", "B") == 0
    assert suite(tmp_path, "ab2", "--model", "A", "--background-model", "B2") == 0
    capsys.readouterr()
    return tmp_path


def test_the_performer_is_listed_under_every_model_that_answered_it(suites, capsys):
    run = suites / "ab" / "public_spring_tasting" / "ga" / "s1"
    performer = json.loads((run / "header.json").read_text())["config"]["roles"]["performer"]
    assert main(["log", str(run)]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # as wrapped to the terminal
    models = printed[printed.index("models: ") + 8:printed.index(" simulated time")]
    # was "PERFORMER=scripted/town" though most of its calls went to the background model
    mine = next(part for part in models.split("; ") if part.startswith(performer))
    # each role as the header records it, with the purposes it answers and its calls
    assert "=evaluated: A (scripted/town) for converse.turn, plan.daily, " in mine
    assert " and background: B (scripted/town) for every other purpose (" in mine
    assert all(part.count("=") == 1 for part in models.split("; "))
    assert main(["log", str(run), "--json"]) == 0
    answering = json.loads(capsys.readouterr().out)["models_answering"][performer]
    assert set(answering) == {"A (scripted/town)", "B (scripted/town)"}


def test_boards_name_and_keep_apart_models_by_alias_and_model_id(suites, capsys):
    target = suites / "board.json"
    assert main(["board", str(suites / "ab"), str(suites / "ab2"), "--json", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "| A (scripted/town) (background B (scripted/town)) | ga |" in printed
    assert "| A (scripted/town) (background B2 (scripted/town)) | ga |" in printed
    assert "@" not in printed
    score = json.loads((suites / "ab" / "public_spring_tasting" / "ga" / "s1" /
                        "score.json").read_text())
    assert score["model"] == "A (scripted/town)"
    assert score["background_model"] == "B (scripted/town)"


def test_compare_refuses_two_aliases_of_one_model_as_the_same_background(suites, capsys):
    assert main(["compare", str(suites / "ab"), str(suites / "ab2")]) == 2
    err = capsys.readouterr().err
    assert "background model B (scripted/town) (A) vs B2 (scripted/town) (B)" in err


def test_an_alias_edited_to_another_model_is_refused_in_its_suite(suites, capsys):
    (suites / "models.yaml").write_text(ALIASES.replace("B:\n  model: scripted/town",
                                                        "B:\n  model: scripted/default"))
    assert suite(suites, "ab", "--model", "A", "--background-model", "B") == 2
    err = capsys.readouterr().err
    assert "--background-model: asked for B (scripted/default), but the suite in" in err
    assert "was run with B (scripted/town)" in err
