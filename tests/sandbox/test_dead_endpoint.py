"""A dead key: an endpoint that lists its models but refuses every chat call (401), served by
the loopback endpoint. Runs whose calls none reached a model are not finished (result.json
status unavailable), the command says so in one line and exits 1, and the next run against a
working endpoint runs them again; judgments that reached no model likewise. A run mostly made
of fallbacks is marked degraded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.judgments import load_judgments
from sandbox.llm import CallRecord
from sandbox.llm.loopback import Loopback
from sandbox.runner import fallback_counts

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = str(ROOT / "tasks" / "stss" / "templates" / "public_spring_tasting.yaml")


def result(run_dir: Path) -> dict:
    return json.loads((run_dir / "result.json").read_text(encoding="utf-8"))


def test_a_run_no_call_of_which_reached_a_model_is_unavailable_and_run_again(tmp_path,
                                                                             capsys):
    out = tmp_path / "run"
    with Loopback("default", refuse_chat=401) as server:
        argv = ["run", "single_room", "--model", "openai/default", "--base-url", server.url,
                "--quiet", "--out", str(out)]
        assert main(argv) == 1
        printed = capsys.readouterr().err  # why a command failed goes where scripts look
        [line] = [line for line in printed.splitlines() if line.startswith("unavailable:")]
        assert "no LLM call reached a model" in line and "rejected_401" in line
        dead = result(out)
        assert dead["status"] == "unavailable" and dead["llm_calls"] > 0
        assert dead["unavailable_calls"] == dead["fallbacks"] == dead["llm_calls"]
        assert dead["degraded"] is True and dead["fallback_fraction"] == 1.0
        server.refuse_chat = None  # the key works again
        assert main([*argv, "--overwrite"]) == 0
    alive = result(out)
    assert alive["status"] == "completed" and alive["unavailable_calls"] == 0
    assert alive["degraded"] is False


def test_a_benchmark_against_a_dead_key_is_not_finished_and_is_run_again(tmp_path, capsys):
    out = tmp_path / "pp"
    with Loopback("pingpong", refuse_chat=401) as server:
        argv = ["pingpong", "--player", "openai/pingpong", "--interrogator", "openai/pingpong",
                "--judge", "openai/pingpong", "--base-url", server.url, "--every", "32",
                "--out", str(out)]
        assert main(argv) == 1
        printed = capsys.readouterr().err  # why it failed: where scripts look
        runs = sorted((out / "runs").iterdir())
        assert len(runs) == 3
        assert [line.split(":")[0] for line in printed.splitlines()
                if line.startswith("unavailable:")] == ["unavailable"] * 3
        assert "3 conversations or judgment(s) reached no model" in printed
        for run_dir in runs:
            assert result(run_dir)["status"] == "unavailable"
            assert load_judgments(run_dir) == []  # canned lines are not judged
        server.refuse_chat = None
        assert main(argv) == 0
        printed = capsys.readouterr().out
    assert "conversations run 3, skipped 0; judgments made 3 (0 fell back)" in printed
    for run_dir in runs:
        assert result(run_dir)["status"] == "completed"
        assert [j.status for j in load_judgments(run_dir)] == ["ok"]


def test_a_judgment_that_reached_no_model_is_saved_unavailable_and_asked_again(tmp_path,
                                                                              capsys):
    out = tmp_path / "pp"
    with Loopback("pingpong", refuse_chat=401) as server:
        argv = ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                "scripted/pingpong", "--judge", "openai/pingpong", "--base-url", server.url,
                "--every", "32", "--out", str(out)]
        assert main(argv) == 1
        printed = capsys.readouterr().out
        assert "judgments made 3 (0 fell back, 3 unavailable)" in printed
        runs = sorted((out / "runs").iterdir())
        for run_dir in runs:
            assert result(run_dir)["status"] == "completed"
            [judgment] = load_judgments(run_dir)
            assert judgment.status == "unavailable" and not judgment.usable
            assert "fallback" in judgment.faults  # its existing fields are kept
        server.refuse_chat = None
        assert main(argv) == 0
        printed = capsys.readouterr().out
    assert "conversations run 0, skipped 3; judgments made 3 (0 fell back), skipped 0" in printed
    for run_dir in runs:
        assert [j.status for j in load_judgments(run_dir)] == ["ok"]


def test_an_stss_suite_against_a_dead_key_is_retried_by_the_next_run(tmp_path, capsys):
    out = tmp_path / "suite"
    with Loopback("town", refuse_chat=401) as server:
        argv = ["stss", "--templates", TEMPLATE, "--arch", "ga", "--seeds", "0..1", "--model",
                "openai/town", "--base-url", server.url, "--embedder", "hashing",
                "--background", "2", "--same-day", "--start", "15:00", "--out", str(out)]
        assert main(argv) == 1
        printed = capsys.readouterr().err  # why it failed: where scripts look
        lines = [line for line in printed.splitlines() if line.startswith("unavailable:")]
        assert len(lines) == 2 and all("no LLM call reached a model" in x for x in lines)
        episode = out / "public_spring_tasting" / "ga" / "s0"
        assert result(episode)["status"] == "unavailable"
        assert not (episode / "score.json").exists()  # canned lines are not scored
        server.refuse_chat = None
        assert main(argv) == 0
        printed = capsys.readouterr().out
    assert "2 episodes (0 already done)" in printed
    assert result(episode)["status"] == "completed" and (episode / "score.json").exists()


def test_a_run_mostly_of_fallbacks_is_degraded_above_the_threshold(tmp_path, monkeypatch):
    out = tmp_path / "run"
    # Every answer empty: the model is reached, but no answer is usable.
    with Loopback("default", fault_rate=1.0, faults=("empty",)) as server:
        argv = ["run", "single_room", "--model", "openai/default", "--base-url", server.url,
                "--quiet", "--out", str(out)]
        assert main(argv) == 0
        reached = result(out)
        assert reached["status"] == "completed" and reached["unavailable_calls"] == 0
        assert reached["degraded"] is True and reached["fallback_fraction"] == 1.0
        monkeypatch.setenv("SANDBOX_DEGRADED_ABOVE", "1")
        assert main([*argv, "--overwrite"]) == 0
    assert result(out)["degraded"] is False


def test_the_degraded_share_counts_fallbacks_of_every_kind():
    def call(*faults):
        return CallRecord(seq=0, tag="t", model="m", faults=list(faults))

    calls = [call(), call("malformed_json", "reasked", "fallback"),
             call("rejected_401", "unavailable", "fallback"), call("repaired")]
    assert fallback_counts(calls) == {"fallbacks": 2, "unavailable_calls": 1,
                                      "fallback_fraction": 0.5, "degraded": False}
    assert fallback_counts([]) == {"fallbacks": 0, "unavailable_calls": 0,
                                   "fallback_fraction": 0.0, "degraded": False}


@pytest.mark.parametrize("value", ["lots", "1.5", "-0.1"])
def test_a_bad_degraded_threshold_is_one_line_before_anything_runs(value, tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.setenv("SANDBOX_DEGRADED_ABOVE", value)
    out = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "SANDBOX_DEGRADED_ABOVE" in line and not out.exists()


def test_pairwise_verdicts_that_reached_no_model_are_asked_again(tmp_path, capsys):
    from tasks.simulbench import Collected, Message, extract, load_tasks, write_scripts

    task = load_tasks()[0]
    messages = [Message(role=role, content=f"{role} {k}") for k in range(4)
                for role in ("user", "assistant")]
    scripts = write_scripts(extract([Collected(task=task, index=0, messages=messages,
                                               challenging_turn=2)]), tmp_path / "s.jsonl")
    dirs = []
    for model in ("simulbench", "simulbench-weak"):
        dirs.append(str(tmp_path / model))
        assert main(["simulbench", "--scripts", str(scripts), "--simulator", f"scripted/{model}",
                     "--judge", "scripted/simulbench", "--out", dirs[-1]]) == 0
    capsys.readouterr()
    with Loopback("simulbench", refuse_chat=401) as server:
        argv = ["simulbench-pairwise", *dirs, "--judge", "openai/simulbench", "--base-url",
                server.url, "--out", str(tmp_path / "pairs")]
        assert main(argv) == 1
        assert "verdict(s) reached no model" in capsys.readouterr().err
        server.refuse_chat = None
        assert main(argv) == 0
        printed = capsys.readouterr().out
    assert "verdicts made 3, kept 0" in printed  # asked again, not kept
