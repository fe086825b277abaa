"""A run made with a models file travels: `sandbox rerun --cache-only` replays it from any
directory, with no key in the environment, and with the models file gone; the header records
what each alias resolved to."""

from __future__ import annotations

import json
import os

import yaml

from sandbox.app.cli import main
from sandbox.llm.loopback import Loopback

EPISODE = ["public_spring_tasting", "--background", "2", "--same-day", "--start", "15:00",
           "--until", "17:10", "--seed", "1", "--embedder", "hashing", "--quiet"]


def test_a_run_with_a_models_file_reruns_cache_only_anywhere_without_a_key(
        tmp_path, monkeypatch):
    made, elsewhere = tmp_path / "made", tmp_path / "elsewhere"
    made.mkdir()
    elsewhere.mkdir()
    with Loopback("town") as evaluated, Loopback("town") as background:
        (made / "models.yaml").write_text(yaml.safe_dump({
            "a": {"model": "openai/town", "base_url": evaluated.url, "key_env": "KEY_A"},
            "b": {"model": "openai/town", "base_url": background.url, "key_env": "KEY_B"}}))
        monkeypatch.chdir(made)
        monkeypatch.setenv("KEY_A", "sk-a-not-a-real-key")
        monkeypatch.setenv("KEY_B", "sk-b-not-a-real-key")
        assert main(["run", *EPISODE, "--models", "models.yaml", "--model", "a",
                     "--background-model", "b", "--out", "run"]) == 0
    run = made / "run"
    header = json.loads((run / "header.json").read_text())
    endpoints = header["config"]["endpoints"]
    assert set(endpoints) == {"a (openai/town)", "b (openai/town)"}
    assert endpoints["a (openai/town)"]["base_url"] == evaluated.url
    assert endpoints["b (openai/town)"]["key_env"] == "KEY_B"
    assert endpoints["a (openai/town)"]["models_file"] == str(made / "models.yaml")
    assert endpoints["a (openai/town)"]["json_dialect"] == "json_schema"
    # The servers are gone, the keys unset, and the command is run from another directory.
    monkeypatch.delenv("KEY_A")
    monkeypatch.delenv("KEY_B")
    monkeypatch.chdir(elsewhere)
    assert main(["rerun", str(run), "--cache-only", "--out", "again"]) == 0
    assert (elsewhere / "again" / "events.jsonl").read_bytes() == \
        (run / "events.jsonl").read_bytes()
    # And with the models file itself gone: the header's aliases stand in for it.
    os.remove(made / "models.yaml")
    assert main(["rerun", str(run), "--cache-only", "--out", "third"]) == 0
    assert (elsewhere / "third" / "events.jsonl").read_bytes() == \
        (run / "events.jsonl").read_bytes()
    assert not any("sk-" in p.read_text(errors="replace")
                   for d in (run, elsewhere) for p in d.rglob("*") if p.is_file())
