"""The JSON dialect of an endpoint is asked of the server, not guessed: a server that refuses
json_schema as llama-cpp-python's does gets json_object with no setting, says so in one line,
and a dialect forced wrong stops the command at once, quoting the server's reason."""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from sandbox.app.cli import main
from sandbox.llm import LLMSettings, make_backend
from sandbox.llm.loopback import Loopback

EPISODE = ["public_spring_tasting", "--background", "2", "--same-day", "--start", "15:00",
           "--until", "17:10", "--seed", "1", "--embedder", "hashing", "--quiet"]
LLAMA_CPP = ("json_object",)  # what llama-cpp-python's server takes besides text


def models_file(tmp_path: Path, **aliases: dict) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump(aliases))
    return path


def test_a_server_that_refuses_json_schema_is_asked_and_answered_in_json_object(
        tmp_path, capsys):
    with Loopback("town", formats=LLAMA_CPP) as server:
        models = models_file(tmp_path, smol={"model": "openai/town", "base_url": server.url})
        out = tmp_path / "run"
        assert main(["run", *EPISODE, "--models", str(models), "--model", "smol",
                     "--out", str(out)]) == 0
        stats = server.stats()
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "JSON dialect" in line]
    assert len(said) == 1
    assert "smol (openai/town)" in said[0] and "json_object, asked of the server" in said[0]
    assert "Input should be 'text' or 'json_object'" in said[0]  # the server's own reason
    # Two probes (json_schema refused, json_object taken), then every call in json_object.
    assert stats["probes"] == 2 and stats["refused_formats"] == 0 and stats["requests"] > 0
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "completed" and result["fallbacks"] == 0
    header = json.loads((out / "header.json").read_text())
    assert header["backend"] == {"json_dialect": "json_object", "json_dialect_from": "asked"}


def test_a_server_that_takes_json_schema_keeps_it_and_one_that_takes_neither_gets_text():
    with Loopback("default") as both, Loopback("default", formats=()) as neither:
        takes = make_backend(LLMSettings(model="openai/a", base_url=both.url))
        plain = make_backend(LLMSettings(model="openai/b", base_url=neither.url))
    assert (takes.dialect, takes.dialect_from) == ("json_schema", "asked")
    assert plain.dialect == "text" and set(plain.dialect_refused) == {"json_schema",
                                                                        "json_object"}


def test_a_dialect_forced_wrong_stops_at_once_naming_the_alias_the_field_and_the_reason(
        tmp_path, capsys):
    with Loopback("town", formats=LLAMA_CPP) as server:
        models = models_file(tmp_path, smol={"model": "openai/town", "base_url": server.url,
                                             "json_dialect": "json_schema"})
        started = time.perf_counter()
        code = main(["run", *EPISODE, "--models", str(models), "--model", "smol",
                     "--out", str(tmp_path / "run")])
        took = time.perf_counter() - started
        stats = server.stats()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    line = err[0]
    assert "smol (openai/town)" in line and "json_dialect" in line and str(models) in line
    assert "Input should be 'text' or 'json_object'" in line
    # Not retried: each call of the first round refused once, and no probe was sent.
    assert stats["probes"] == 0 and 0 < stats["refused_formats"] <= 4 and took < 20
    assert json.loads((tmp_path / "run" / "result.json").read_text())["status"] == "failed"
