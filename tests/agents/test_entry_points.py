"""A module from another package is picked up through the `sandbox.agent_modules` entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import registry
from agents.architecture import load_architecture
from agents.protocols import Retriever

ARCH = """\
name: plugin
modules:
  memory: {module: stream, params: {embedder: hashing}}
  retriever: {module: oldest_first, params: {top_k: 3}}
  planner: {module: ga}
  reflector: {module: none}
  conversation: {module: ga}
  task_planner: {module: none}
"""


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """What `pip install` of a package declaring the entry point would leave on sys.path."""
    dist = tmp_path / "thirdparty_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-plugin\n"
                                   "Version: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sandbox.agent_modules]\n"
        "retriever.oldest_first = thirdparty_plugin:OldestFirstRetriever\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # where the module itself lives
    yield
    registry.MODULES["retriever"].pop("oldest_first", None)


def test_an_entry_point_module_is_used_by_an_architecture(installed_plugin, tmp_path):
    path = tmp_path / "plugin.yaml"
    path.write_text(ARCH)
    arch = load_architecture(path)
    retriever = arch.build()["retriever"]
    assert type(retriever).__name__ == "OldestFirstRetriever"
    assert retriever.params.top_k == 3
    assert isinstance(retriever, Retriever)
    assert "oldest_first" in registry.known("retriever")


def test_without_the_entry_point_the_module_is_unknown(tmp_path):
    path = tmp_path / "plugin.yaml"
    path.write_text(ARCH)
    with pytest.raises(Exception, match="unknown retriever module 'oldest_first'"):
        load_architecture(path)


def test_a_town_file_tuning_what_a_third_party_module_lacks_names_slot_and_field(
        installed_plugin, tmp_path, capsys):
    from sandbox.app.cli import main

    (tmp_path / "plugin.yaml").write_text(ARCH)
    town = tmp_path / "town.yaml"
    town.write_text("world: town\nhours: 1\nparams:\n  retriever: {recency_weight: 2}\n")
    assert main(["run", "town_day", "--config", str(town), "--architecture",
                 str(tmp_path / "plugin.yaml"), "--model", "scripted/town", "--out",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "\\n" not in err
    assert "retriever.recency_weight: Extra inputs are not permitted (the retriever module " \
        "'oldest_first' of " in err and "takes: top_k)" in err


def test_a_run_s_header_names_the_distribution_of_each_third_party_module(
        installed_plugin, tmp_path):
    import json

    from sandbox.app.cli import main

    (tmp_path / "plugin.yaml").write_text(ARCH)
    run = tmp_path / "run"
    assert main(["run", "town_day", "--architecture", str(tmp_path / "plugin.yaml"),
                 "--residents", "2", "--hours", "1", "--model", "scripted/town", "--embedder",
                 "hashing", "--quiet", "--out", str(run)]) == 0
    config = json.loads((run / "header.json").read_text())["config"]
    assert config["module_distributions"] == {
        str(tmp_path / "plugin.yaml"): {"retriever": "thirdparty-plugin 1.0"}}
