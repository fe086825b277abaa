"""A name that becomes part of a path is one safe component (sandbox/pathnames.py): nothing a
user names can put an output outside its directory."""

from __future__ import annotations

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.pathnames import component_problem, safe_component
from tasks.kit import ItemSet
from tasks.kit.items import UnsafeItemId


@pytest.mark.parametrize("name", ["", " ", ".", "..", "../../x", "a/b", "a\\b", "red\x1b[31m",
                                  "line\nbreak", " padded", "x" * 201, "ẞ" * 67])
def test_a_name_that_is_not_one_safe_component_is_refused(name):
    assert component_problem(name) is not None
    with pytest.raises(ValueError, match="model label"):
        safe_component(name, "model label")


@pytest.mark.parametrize("name", ["smol", "gpt-4o.mini", "Maya Lindqvist", "名前", "-rf", "con",
                                  "x" * 200])
def test_a_plain_name_passes(name):
    assert safe_component(name, "name") == name


def test_world_generate_does_not_write_above_its_out(tmp_path, capsys):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    assert main(["world", "generate", "--residents", "4", "--out", str(work / "g"),
                 "--name", "../../escaped"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "argument --name: '../../escaped': a world name holds /" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b"]


def test_a_sweep_model_label_that_is_a_path_is_refused_before_any_cell(tmp_path, capsys):
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({
        "out": str(tmp_path / "exp"), "models": {"../../x": "scripted/pingpong"},
        "benchmarks": {"pingpong": {"flags": {"every": 64}}}}))
    assert main(["sweep", str(path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "model label '../../x' holds / or \\" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["experiment.yaml"]


@pytest.mark.parametrize("flags, said", [
    ({"every": 64, "out": "elsewhere"}, "`out` is the sweep's own"),
    ({"every": [64, 8]}, "--every takes one value, and the experiment gives it 2"),
    ({"every": 64, "player": "scripted/default"}, "the flag --player is the sweep's own"),
])
def test_a_sweep_flag_that_would_be_dropped_or_leave_out_is_refused(flags, said, tmp_path,
                                                                    capsys):
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump({
        "out": str(tmp_path / "exp"), "models": {"smol": "scripted/pingpong"},
        "benchmarks": {"pingpong": {"flags": flags}}}))
    assert main(["sweep", str(path), "--dry-run"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert said in line


def test_an_item_id_that_is_not_a_folder_name_is_refused():
    with pytest.raises(UnsafeItemId, match="its id '../../x' holds /"):
        ItemSet(items=["a"], ids=["../../x"], origins=["line 1"], source="set.jsonl")


def test_a_template_id_that_is_a_path_is_refused(tmp_path, capsys):
    template = yaml.safe_load(open("tasks/stss/templates/public_spring_tasting.yaml"))
    template["id"] = "../../x"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(template))
    assert main(["run", str(path), "--model", "scripted/town", "--out",
                 str(tmp_path / "r")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "id" in line and "holds / or" in line
    assert not (tmp_path / "r").exists()
