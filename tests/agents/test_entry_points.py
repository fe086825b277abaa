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
