"""`sandbox list WHAT` names everything a user may type: models (test doubles marked),
architectures, worlds, benchmarks, and what a plug-in adds."""

from __future__ import annotations

import pytest

from sandbox.app import plugins
from sandbox.app.cli import main
from sandbox.llm import scripted_names


def rows(capsys) -> dict[str, str]:
    lines = capsys.readouterr().out.splitlines()[2:]
    cells = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]
    return {row[0]: row[1] for row in cells}


def test_models_name_the_embedded_one_and_mark_every_test_double(capsys):
    assert main(["list", "models"]) == 0
    found = rows(capsys)
    assert "local/smollm2-135m" in found and "openai/NAME" in found
    doubles = {name for name in found if name.startswith("scripted/")}
    assert doubles == {f"scripted/{n}" for n in scripted_names()}
    assert {"scripted/town", "scripted/pingpong"} <= doubles
    assert all(found[name].startswith("test double") for name in doubles)


def test_architectures_and_worlds_are_listed_with_what_they_are(capsys):
    assert main(["list", "architectures"]) == 0
    found = rows(capsys)
    assert {"ga", "ga_tdp", "ga_no_reflection", "ga_recency"} <= set(found)
    assert "Ablation" in found["ga_no_reflection"]
    assert main(["list", "worlds"]) == 0
    assert {"town", "single_room"} <= set(rows(capsys))


def test_scenarios_list_what_sandbox_run_takes(capsys):
    assert main(["list", "scenarios"]) == 0
    found = rows(capsys)
    assert {"single_room", "town_day"} <= set(found)
    assert "sandbox list templates" in found[r"FILE.yaml \| NAME"]  # a plug-in's, and its list


def test_an_unknown_architecture_gets_the_nearest_name(capsys):
    assert main(["run", "town_day", "--architecture", "ga_tpd"]) == 2
    assert "ga_tpd: no such architecture; did you mean ga_tdp?" in capsys.readouterr().err


def test_what_a_plugin_adds_to_the_list_is_a_choice_of_its_own(capsys, monkeypatch):
    extra = plugins.Plugin("toy", "a toy", lists={"questions": lambda: [("salt", "a question")]})
    installed = plugins.plugins
    monkeypatch.setattr(plugins, "plugins", lambda: [*installed(), extra])
    assert main(["list", "questions"]) == 0
    assert rows(capsys) == {"salt": "a question"}


def test_an_unknown_list_names_the_choices(capsys):
    assert main(["list", "modles"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'modles'" in err and "models" in err


@pytest.mark.parametrize("what", ["benchmarks"])
def test_benchmarks_are_listed_with_their_commands(capsys, what):
    assert main(["list", what]) == 0
    assert "| pingpong |" in capsys.readouterr().out
