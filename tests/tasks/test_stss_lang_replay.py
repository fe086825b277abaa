"""A harvested scenario replayed as a single-room episode (no town), judged, and the Table 3
board, through `sandbox stss-lang` on the scripted stand-ins (scripted/stss-lang: the town's
scripted agents and a rule-based goal-condition judge)."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS
from tasks.stss_lang import save_set
from tasks.stss_lang.harvest import harvest
from tasks.stss_lang.scripted import stss_lang_backend

from .test_stss_lang_harvest import golden

MODEL = "scripted/stss-lang"


@pytest.fixture
def scenario_set(tmp_path, monkeypatch):
    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    return save_set(harvest([golden(tmp_path / "run")]), tmp_path / "set.json")


def lang(scenario_set, out, *extra):
    return main(["stss-lang", str(scenario_set), "--arch", "ga", "--arch", "ga_tdp", "--model",
                 MODEL, "--judge", MODEL, "--out", str(out), *extra])


def test_replay_judges_and_prints_table_3(scenario_set, tmp_path, capsys):
    assert lang(scenario_set, tmp_path / "lang", "--json", str(tmp_path / "t3.json"),
                "--plot", str(tmp_path / "t3.png")) == 0
    printed = capsys.readouterr().out
    assert "Conv. SR micro" in printed and "Summ. GCSR macro" in printed
    # named as the command line and the STSS board name an architecture, not "GA + TDP"
    assert "| scripted/stss-lang | ga | " in printed and "| ga_tdp |" in printed
    data = json.loads((tmp_path / "t3.json").read_text())
    ga = data["rows"][0]
    # The scripted performer says the party's place and time; the partner's summary keeps them.
    assert ga["conversation_gcsr_micro"] == 1.0 and ga["summary_sr_macro"] == 1.0
    assert ga["conversation_n"] == "3 (1)"
    assert data["by_type"]["scripted/stss-lang ga"]["public_activity"]["conversation_n"] == 3
    assert (tmp_path / "t3.png").stat().st_size > 0
    run = tmp_path / "lang" / "ga_tdp" / "runs" / "golden_task-s0__julian-reyes-1"
    kinds = [json.loads(line)["kind"] for line in (run / "events.jsonl").open()]
    assert "task_planned" in kinds and kinds.count("utterance") >= 2
    assert "summary_written" in kinds and "move" not in kinds  # no town
    usage = data["usage"]["scripted/stss-lang ga_tdp"]
    assert usage["performer"]["calls"] > usage["partner"]["calls"] - 2  # TDP plans
    assert usage["judge"]["calls"] == 2 * 3  # conversation and summary, 3 scenarios
    assert data["usage_uncounted"] == []


def test_the_usage_table_names_a_run_whose_calls_it_could_not_read(scenario_set, tmp_path,
                                                                   capsys):
    from evaluation.stss_lang.usage import table3_board
    assert lang(scenario_set, tmp_path / "lang") == 0
    run = tmp_path / "lang" / "ga" / "runs" / "golden_task-s0__julian-reyes-1"
    (run / "calls.jsonl").unlink()
    report = table3_board([tmp_path / "lang"])
    assert "Not counted above (1 unreadable): golden_task-s0__julian-reyes-1/calls.jsonl: " \
           "missing" in report.markdown
    assert report.data["usage_uncounted"] == ["golden_task-s0__julian-reyes-1/calls.jsonl: missing"]


def test_same_seed_and_cache_give_the_same_log_and_a_rerun_resumes(scenario_set, tmp_path,
                                                                    capsys):
    assert lang(scenario_set, tmp_path / "a") == 0
    assert lang(scenario_set, tmp_path / "b") == 0
    for arch in ("ga", "ga_tdp"):
        for run in (tmp_path / "a" / arch / "runs").iterdir():
            other = tmp_path / "b" / arch / "runs" / run.name
            assert (run / "events.jsonl").read_bytes() == (other / "events.jsonl").read_bytes()
    capsys.readouterr()
    assert lang(scenario_set, tmp_path / "a", "--cache-only") == 0
    assert "conversations run 0, skipped 3" in capsys.readouterr().out
    assert lang(scenario_set, tmp_path / "a", "--rejudge", "--cache-only") == 0
    assert "judgments made 6" in capsys.readouterr().out


def test_board_reads_saved_judgments_only(scenario_set, tmp_path, capsys):
    assert lang(scenario_set, tmp_path / "lang") == 0
    capsys.readouterr()
    assert main(["stss-lang-board", str(tmp_path / "lang")]) == 0
    assert "95% bootstrap intervals" in capsys.readouterr().out
    assert main(["stss-lang-board", str(tmp_path / "nothing")]) == 2


def test_a_fresh_action_level_run_harvests_and_replays(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "public_spring_tasting", "--seed", "1", "--out", str(run), "--quiet",
                 "--model", "scripted/town", "--embedder", "hashing", "--background", "2",
                 "--same-day", "--start", "11:00"]) == 0
    assert main(["stss-harvest", str(run), "--out", str(tmp_path / "set.json")]) == 0
    assert "4 scenarios of 1 tasks from 1 runs" in capsys.readouterr().out
    assert main(["stss-lang", str(tmp_path / "set.json"), "--arch", "ga_tdp", "--model", MODEL,
                 "--judge", MODEL, "--out", str(tmp_path / "lang"), "--json",
                 str(tmp_path / "t3.json")]) == 0
    data = json.loads((tmp_path / "t3.json").read_text())
    compared = data["by_type"]["scripted/stss-lang ga_tdp"]["public_activity"]
    assert compared["action"] == 1.0 and compared["action_runs"] == 1


def test_the_builtin_set_plays_out_of_the_box(tmp_path, capsys):
    assert main(["stss-lang", "--arch", "ga", "--model", MODEL, "--judge", MODEL,
                 "--every", "40", "--out", str(tmp_path / "lang")]) == 0
    printed = capsys.readouterr().out
    assert "| scripted/stss-lang | ga |" in printed


def test_a_judge_without_a_usable_answer_falls_back_counted_and_left_out(scenario_set, tmp_path,
                                                                          monkeypatch, capsys):
    from sandbox.llm import ScriptedBackend

    monkeypatch.setitem(SCRIPTS, "babbler", lambda: ScriptedBackend(
        {"stss_lang.judge.conversation": lambda r: "yes yes no, I think",
         "stss_lang.judge.summary": lambda r: "{\"c1\": 3}"}, model_id="scripted/babbler"))
    assert main(["stss-lang", str(scenario_set), "--arch", "ga", "--model", MODEL, "--judge",
                 "scripted/babbler", "--out", str(tmp_path / "lang"), "--json",
                 str(tmp_path / "t3.json")]) == 0
    printed = capsys.readouterr().out
    assert "judgments made 6 (6 fell back)" in printed
    data = json.loads((tmp_path / "t3.json").read_text())
    assert data["fallbacks"] == 6 and data["rows"][0]["conversation_sr_micro"] is None


def test_every_memory_a_dialogue_retrieves_was_logged_first(scenario_set, tmp_path):
    """Both restored memory streams open each dialogue's log as `memory_added` (created when
    they were, with their importance), so no `memory_retrieved` names an id the log never
    wrote; before, every dialogue's log retrieved memories it had never logged."""
    from tasks.stss_lang import load_set
    assert lang(scenario_set, tmp_path / "lang") == 0
    scenarios = {s.id: s for s in load_set(scenario_set).scenarios}
    runs = sorted((tmp_path / "lang").glob("*/runs/*/events.jsonl"))
    assert len(runs) == 2 * len(scenarios)
    for path in runs:
        events = [json.loads(line) for line in path.open()]
        scenario = scenarios[path.parent.name]
        logged: dict[str, dict[int, dict]] = {}
        for e in events:
            if e["kind"] == "memory_added":
                logged.setdefault(e["agent"], {})[e["memory"]] = e
            elif e["kind"] == "memory_retrieved":
                assert set(e["ids"]) <= set(logged.get(e["agent"], {})), path
        for character in (scenario.performer, scenario.partner):
            restored = [e for e in logged[character.name].values() if e["created"] <= 0]
            assert [(e["description"], e["created"]) for e in restored][:len(
                character.memories)] == [(m.description, m.t) for m in character.memories]
        assert any(e["kind"] == "memory_retrieved" for e in events)
