"""`--model scripted/<name>`: the names come from the entry point group `sandbox.scripted`, so
a backend is there without importing the package that defines it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.llm import (
    SCRIPTS,
    SCRIPTS_ENTRY_POINT_GROUP,
    LLMSettings,
    ScriptedBackend,
    make_backend,
    scripted_names,
)

# Every name pyproject.toml declares (a stale install, `pip install -e .` not rerun, fails here).
with (Path(__file__).resolve().parents[2] / "pyproject.toml").open("rb") as _file:
    EVERY_SCRIPTED = set(tomllib.load(_file)["project"]["entry-points"][SCRIPTS_ENTRY_POINT_GROUP])


def test_the_entry_point_group_lists_every_scripted_backend():
    points = {ep.name: ep for ep in entry_points(group=SCRIPTS_ENTRY_POINT_GROUP)}
    assert set(points) == EVERY_SCRIPTED
    for name, ep in points.items():
        backend = ep.load()()
        assert isinstance(backend, ScriptedBackend)
        assert backend.model_id == f"scripted/{name}"


def test_importing_a_package_registers_nothing_by_side_effect():
    before = dict(SCRIPTS)
    import agents.scripted  # noqa: F401
    import evaluation.pingpong.scripted  # noqa: F401
    assert SCRIPTS == before


def test_an_in_process_script_overrides_the_entry_point(monkeypatch):
    mine = ScriptedBackend(model_id="scripted/mine")
    monkeypatch.setitem(SCRIPTS, "town", lambda: mine)
    assert make_backend(LLMSettings(model="scripted/town")) is mine


def test_an_unknown_name_lists_every_known_one(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(SCRIPTS, "only-in-this-test", ScriptedBackend)
    assert EVERY_SCRIPTED | {"only-in-this-test"} == set(scripted_names())
    assert main(["run", "single_room", "--model", "scripted/nope", "--out",
                 str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown scripted backend 'nope'" in err
    assert all(name in err for name in EVERY_SCRIPTED | {"only-in-this-test"})


@pytest.mark.parametrize("name", ["pingpong", "town"])
def test_a_fresh_interpreter_runs_any_scripted_backend(name, tmp_path):
    # Nothing imported the package that defines the backend before the command ran.
    out = tmp_path / "run"
    code = ("import sys; from sandbox.app.cli import main; "
            f"sys.exit(main(['run', 'single_room', '--model', 'scripted/{name}', '--turns', '2', "
            f"'--quiet', '--out', {str(out)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (out / "events.jsonl").exists()
