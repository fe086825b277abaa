"""One strict reader for every file a user writes (sandbox.files.read_data): a key given twice
is an error naming the file, the key path and the line, in YAML and JSON alike, and every loader
of a user file goes through it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandbox import files
from sandbox.app.cli import main
from sandbox.files import FileFormatError, read_data, read_with_lines

ROOT = Path(__file__).resolve().parents[2]


def refused(path) -> FileFormatError:
    with pytest.raises(FileFormatError) as caught:
        read_data(path)
    return caught.value


def test_a_yaml_key_given_twice_names_its_path_and_lines(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nb:\n  c: 2\n  d:\n    - {e: 1}\n    - e: 1\n      f: 2\n      e: 3\n")
    error = refused(path)
    assert error.path == path and error.where == "b.d.1.e, line 8"
    assert "duplicate key 'e' (first at line 6)" in error.reason
    assert str(path) in str(error)


def test_a_json_key_given_twice_names_its_path_and_lines(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"en": {"characters": [{"name": "A"},\n  {"name": "B",\n'
                    '   "name": "C"}], "name": 1}}')
    error = refused(path)
    assert error.where == "en.characters.1.name, line 3"
    assert "duplicate key 'name' (first at line 2)" in error.reason


def test_what_is_not_a_duplicate_still_reads(tmp_path):
    (tmp_path / "merge.yaml").write_text("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\n")
    assert read_data(tmp_path / "merge.yaml") == {"base": {"x": 1, "y": 2},
                                                   "other": {"x": 3, "y": 2}}
    (tmp_path / "same.json").write_text('{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]}')
    assert read_data(tmp_path / "same.json")["c"] == [{"k": 1}, {"k": 2}]
    (tmp_path / "empty.yaml").write_text("")
    assert read_data(tmp_path / "empty.yaml") is None
    (tmp_path / "block.yaml").write_text("name: x\ngrid: |\n  ab\n  cd\n")
    assert read_with_lines(tmp_path / "block.yaml")[1] == {"name": 1, "grid": 3}


def twice(text: str, key_line: str) -> str:
    """`text` with the line starting with `key_line` given again right after it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(key_line))
    return "\n".join([*lines[:at + 1], lines[at], *lines[at + 1:]]) + "\n"


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_an_architecture_file_with_a_key_given_twice_is_exit_2(tmp_path, capsys):
    arch = tmp_path / "arch.yaml"
    arch.write_text(twice((ROOT / "agents/architectures/ga.yaml").read_text(), "name:"))
    # --arch is checked at parsing
    assert main(["run", "public_spring_tasting", "--arch", str(arch), "--model",
                 "scripted/town", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(arch) in err and "duplicate key 'name'" in err and "line 2" in err


@pytest.mark.parametrize("scenario, key", [("single_room", "max_turns:"),
                                           ("town_day", "hours:")])
def test_a_scenario_config_with_a_key_given_twice_is_exit_2(tmp_path, capsys, scenario, key):
    config = tmp_path / "config.yaml"
    config.write_text(twice((ROOT / f"tasks/scenarios/{scenario}.yaml").read_text(), key))
    assert main(["run", scenario, "--config", str(config), "--model", "scripted/town",
                 "--out", str(tmp_path / "run")]) == 2
    err = one_line_error(capsys)
    assert str(config) in err and f"duplicate key '{key[:-1]}'" in err
    assert not (tmp_path / "run").exists()


def test_a_resident_file_with_a_key_given_twice_is_exit_2(tmp_path, capsys):
    shutil.copytree(ROOT / "worlds/residents/town", tmp_path / "residents/town")
    (tmp_path / "maps").mkdir()
    shutil.copy(ROOT / "worlds/maps/town.yaml", tmp_path / "maps/town.yaml")
    agnes = tmp_path / "residents/town/agnes_whitfield.yaml"
    agnes.write_text(twice(agnes.read_text(), "age:"))
    assert main(["world", str(tmp_path / "maps/town.yaml")]) == 2
    err = one_line_error(capsys)
    assert str(agnes) in err and "duplicate key 'age'" in err and "age, line 3" in err


def test_a_pingpong_settings_json_with_a_key_given_twice_is_refused(tmp_path):
    from tasks.pingpong.importer import load_settings

    path = tmp_path / "settings.json"
    path.write_text('{"en": {"characters": [{"char_name": "A", "char_name": "B"}],\n'
                    '        "situations": [{"text": "hi"}]}}')
    with pytest.raises(FileFormatError) as caught:
        load_settings(path)
    assert caught.value.path == path
    assert caught.value.where == "en.characters.0.char_name, line 1"


SHIPPED_YAML = sorted(p for d in ("agents", "tasks", "worlds", "sandbox", "tests/data")
                      for p in (ROOT / d).rglob("*.yaml") if "bad" not in p.parts)


def test_every_yaml_file_we_ship_reads_the_same_with_libyaml_and_pure_python(monkeypatch):
    """libyaml parses (8x faster); a file must mean the same data and lines either way."""
    assert len(SHIPPED_YAML) > 50
    fast = [files.read_with_lines(p) for p in SHIPPED_YAML]
    monkeypatch.setattr(files, "_FAST_LOADER", None)
    assert fast == [files.read_with_lines(p) for p in SHIPPED_YAML]


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: 1\n  b: 2\n", "a: 1\nb: \x07\n"])
def test_a_broken_yaml_file_is_described_in_pure_python_parsers_words(tmp_path, monkeypatch,
                                                                       text):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(files.FileFormatError) as fast:
        files.read_data(path)
    monkeypatch.setattr(files, "_FAST_LOADER", None)
    with pytest.raises(files.FileFormatError) as slow:
        files.read_data(path)
    assert str(fast.value) == str(slow.value)
