"""Runs, logs, determinism, cache record/replay, faults: through the single-room scenario."""

import json
from collections import Counter
from pathlib import Path

import pytest
from pydantic import BaseModel

from agents.chat import ChatAgent, converse
from sandbox.app.cli import main
from sandbox.events import Utterance
from sandbox.llm import CacheMiss, LLMRequest, LLMSettings, Message, ScriptedBackend, make_llm
from sandbox.log import RunFormatError, load_run
from sandbox.runner import run_episode
from tasks.scenarios.single_room import SingleRoomScenario


def run(tmp_path: Path, name: str, backend=None, seed=0, **settings):
    llm = make_llm(LLMSettings(model="scripted/default", **settings),
                   backend=backend or ScriptedBackend())
    out = tmp_path / name
    result = run_episode(SingleRoomScenario.from_file(max_turns=6), llm, seed=seed, out_dir=out)
    return out, result


def test_same_seed_gives_the_same_events_file(tmp_path):
    a, _ = run(tmp_path, "a")
    b, _ = run(tmp_path, "b")
    assert (a / "events.jsonl").read_bytes() == (b / "events.jsonl").read_bytes()
    c, _ = run(tmp_path, "c", seed=1)
    assert (a / "events.jsonl").read_bytes() != (c / "events.jsonl").read_bytes()


def test_run_directory_reads_back_typed(tmp_path):
    out, result = run(tmp_path, "r")
    loaded = load_run(out)
    assert result.status == "completed" and loaded.result.status == "completed"
    utterances = loaded.of_kind("utterance")
    assert len(utterances) == 6 and all(isinstance(u, Utterance) for u in utterances)
    assert [u.agent for u in utterances[:2]] == ["Ines Okafor", "Dario Lindqvist"]
    assert loaded.header.seed == 0 and loaded.header.models["Ines Okafor"] == "scripted/default"
    assert len(loaded.calls) == 6 and loaded.problems == []
    assert loaded.header.backend == {}  # the scripted backend has no settings of its own


def test_the_header_records_the_backend_settings_under_the_wrappers(tmp_path):
    class Tuned(ScriptedBackend):
        def settings(self):
            return {"weights": "f16", "dictation": "write"}

    out, _ = run(tmp_path, "tuned", backend=Tuned(), cache_path=tmp_path / "cache.jsonl")
    assert load_run(out).header.backend == {"weights": "f16", "dictation": "write"}


def test_a_killed_run_keeps_its_events_and_reports_the_cut_line(tmp_path):
    out, _ = run(tmp_path, "r")
    (out / "result.json").unlink()  # as if killed before the end
    events = out / "events.jsonl"
    text = events.read_text()
    events.write_text(text[: len(text) - 25])  # the last line cut mid-write
    loaded = load_run(out)
    assert loaded.result is None
    assert len(loaded.events) == len(text.splitlines()) - 1
    assert loaded.problems[0].line == len(text.splitlines())
    assert loaded.problems[0].reason == "truncated last line"


def test_unknown_format_version_is_refused_clearly(tmp_path):
    out, _ = run(tmp_path, "r")
    header = json.loads((out / "header.json").read_text())
    header["format_version"] = 99
    (out / "header.json").write_text(json.dumps(header))
    with pytest.raises(RunFormatError, match="format version 99"):
        load_run(out)
    with pytest.raises(RunFormatError, match="no such directory"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunFormatError, match="not a run directory"):
        load_run(tmp_path / "empty")


def test_cache_only_replay_gives_the_same_log_without_the_model(tmp_path):
    cache = tmp_path / "answers.jsonl"
    recorded, _ = run(tmp_path, "rec", cache_path=cache, cache_mode="record")

    class Unreachable(ScriptedBackend):
        def complete(self, request):
            raise AssertionError("replay must not call the model")

    replayed, _ = run(tmp_path, "rep", backend=Unreachable(), cache_path=cache,
                      cache_mode="replay")
    assert (recorded / "events.jsonl").read_bytes() == (replayed / "events.jsonl").read_bytes()
    assert all(c.cached for c in load_run(replayed).calls)


def test_cache_miss_in_replay_names_the_call_and_keeps_the_partial_run(tmp_path):
    cache = tmp_path / "answers.jsonl"
    run(tmp_path, "rec", cache_path=cache, cache_mode="record", seed=0)
    with pytest.raises(CacheMiss, match="tag='chat.turn' agent='Ines Okafor'"):
        run(tmp_path, "rep", cache_path=cache, cache_mode="replay", seed=5)
    assert load_run(tmp_path / "rep").result.status == "failed"


class Mood(BaseModel):
    mood: str
    energy: int


class MoodyScenario(SingleRoomScenario):
    """Single room where each agent also reports a schema-bound mood before speaking."""

    def setup(self, engine):
        agents = [ChatAgent(p) for p in self.cfg.personas]

        def moods():
            for agent in agents:
                yield engine.ask(LLMRequest(
                    messages=[Message(role="user", content=f"mood of {agent.name}?")],
                    tag="mood", agent=agent.name, schema=Mood,
                    fallback=Mood(mood="neutral", energy=5)))
            yield from converse(engine, agents, conversation="c0", place="room", max_turns=4)

        engine.process(moods())


def test_faults_do_not_stop_the_episode_and_are_counted(tmp_path, capsys):
    faults = ["malformed", "ok", "truncated", "timeout", "rate_limit", "off_schema",
              "server_error"]
    backend = ScriptedBackend(faults=faults)
    llm = make_llm(LLMSettings(model="scripted/default", retry_initial_wait_s=0.001),
                   backend=backend)
    out = tmp_path / "faulty"
    scenario = MoodyScenario(SingleRoomScenario.from_file().cfg)
    result = run_episode(scenario, llm, seed=0, out_dir=out)
    assert result.status == "completed"
    loaded = load_run(out)
    assert len(loaded.of_kind("utterance")) == 4
    counted = [f for c in loaded.calls for f in c.faults]
    for kind in ("malformed_json", "timeout", "rate_limit", "server_error", "off_schema"):
        assert kind in counted
    assert sum(c.retries for c in loaded.calls) == 3
    assert "truncated" in counted
    # `sandbox log` shows each fault with its count.
    assert main(["log", str(out)]) == 0
    shown = capsys.readouterr().out
    for kind, n in Counter(counted).items():
        assert f"{kind}={n}" in shown


def test_an_unparseable_chat_turn_falls_back_and_is_counted(tmp_path):
    silent = ScriptedBackend(responders={"chat.turn": lambda r: "   "})
    out, result = run(tmp_path, "silent", backend=silent)
    loaded = load_run(out)
    assert result.status == "completed"
    assert {u.text for u in loaded.of_kind("utterance")} == {"(says nothing)"}
    assert all("fallback" in c.faults for c in loaded.calls)


def test_a_json_line_that_is_not_an_object_is_a_bad_line_not_a_crash(tmp_path, capsys):
    out, _ = run(tmp_path, "r")
    events = out / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text("".join(lines[:2]) + "123\n" + "".join(lines[2:]))
    (out / "calls.jsonl").open("a").write('["a list"]\n')
    loaded = load_run(out)
    assert len(loaded.events) == len(lines)
    assert [(p.file, p.line) for p in loaded.problems] == [("events.jsonl", 3),
                                                           ("calls.jsonl", 7)]
    assert "not a JSON object" in loaded.problems[0].reason
    assert main(["log", str(out)]) == 0
    assert "events.jsonl line 3" in capsys.readouterr().out


def test_a_cut_result_file_is_reported_and_the_log_still_reads(tmp_path, capsys):
    out, _ = run(tmp_path, "r")
    result = out / "result.json"
    result.write_text(result.read_text()[:30])
    loaded = load_run(out)
    assert loaded.result is None and len(loaded.of_kind("utterance")) == 6
    assert [p.file for p in loaded.problems] == ["result.json"]
    assert main(["log", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "log problem: result.json" in shown and "status=unknown" in shown


def test_overwrite_removes_the_previous_runs_score_and_judgments(tmp_path):
    out, _ = run(tmp_path, "r")
    (out / "score.json").write_text('{"value": 1.0}')
    (out / "score.other-rules.json").write_text('{"value": 0.5}')  # a score by other rules
    (out / "judgments").mkdir()
    (out / "judgments" / "judge.json").write_text("{}")
    llm = make_llm(LLMSettings(model="scripted/default"), backend=ScriptedBackend())
    run_episode(SingleRoomScenario.from_file(max_turns=2), llm, seed=0, out_dir=out,
                overwrite=True)
    assert not (out / "score.json").exists() and not (out / "judgments").exists()
    assert not (out / "score.other-rules.json").exists()
    assert load_run(out).result.status == "completed"


def test_a_backend_that_stays_down_has_every_retry_and_fault_in_calls_jsonl(tmp_path):
    backend = ScriptedBackend(faults=["timeout"] * 5)
    llm = make_llm(LLMSettings(model="scripted/default", retry_initial_wait_s=0.001),
                   backend=backend)
    out = tmp_path / "down"
    run_episode(MoodyScenario(SingleRoomScenario.from_file().cfg), llm, seed=0, out_dir=out)
    first = load_run(out).calls[0]
    assert first.retries == 4  # five attempts
    assert first.faults == ["timeout"] * 5 + ["unavailable", "fallback"]
