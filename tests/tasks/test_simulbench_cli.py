"""SimulBench as a user runs it, on scripted models: collect, extract, answer, judge, board,
pairwise; resume; bad files; a babbling judge."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from datetime import timedelta

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS, ScriptedBackend
from sandbox.log import load_run
from tasks.simulbench import SYSTEM_PROMPT, load_scripts

S = "scripted/simulbench"


@pytest.fixture(scope="module")
def built_pipeline(tmp_path_factory):
    """Collected dialogues (every 10th of our 120), extracted scripts, two answer dirs: built
    once for the module (about 5 s of commands), each test working on its own copy."""
    built = tmp_path_factory.mktemp("simulbench")
    collect = built / "collect"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["simulbench-collect", "--user", S, "--simulator", S, "--judge", S,
                     "--every", "10", "--out", str(collect)]) == 0
        scripts = built / "scripts.jsonl"
        assert main(["simulbench-extract", str(collect), "--out", str(scripts)]) == 0
    dialogues = len(list((collect / "runs").iterdir()))
    assert f"user agent's strategies: improvement {dialogues}, new_request {dialogues}, " \
        f"other {dialogues}" in printed.getvalue()
    with contextlib.redirect_stdout(io.StringIO()):
        for model in ("simulbench", "simulbench-weak"):
            assert main(["simulbench", "--scripts", str(scripts), "--simulator",
                         f"scripted/{model}", "--judge", S, "--out", str(built / model)]) == 0
    return built


@pytest.fixture
def pipeline(built_pipeline, tmp_path):
    """This test's copy of the built pipeline (tests add runs and judgments to it)."""
    copy = tmp_path / "pipeline"
    shutil.copytree(built_pipeline, copy)
    return copy


def test_the_whole_pipeline_from_collection_to_board(pipeline, capsys):
    collect_run = load_run(next((pipeline / "collect" / "runs").iterdir()))
    assert collect_run.header.models == {"user": S, "simulator": S}
    assert collect_run.header.config["sampling"]["user"]["temperature"] == 1.2
    utterances = [e for e in collect_run.events if e.kind == "utterance"]
    assert len(utterances) == 8
    assert utterances[0].text == collect_run.header.config["task"]["task_description"]
    # each request of the user agent is logged with its strategy, beside the utterance
    chosen = collect_run.of_kind("user_request_written")
    assert [(e.turn, e.strategy, e.agent) for e in chosen] == [
        (2, "new_request", "User"), (3, "improvement", "User"), (4, "other", "User")]
    assert [e.request for e in chosen] == [u.text for u in utterances[2::2]]
    run_dir = next((pipeline / "collect" / "runs").iterdir())
    capsys.readouterr()
    assert main(["log", str(run_dir), "--events", "user_request_written"]) == 0
    shown = capsys.readouterr().out.splitlines()
    start = collect_run.header.start_time
    assert len(shown) == 3 and shown[0].startswith(
        f"{start + timedelta(seconds=40):%H:%M:%S} (t=40) User user_request_written: turn=2, "
        "strategy='new_request'")  # the clock a user reads, and the seconds --at takes
    assert main(["log", str(run_dir), "--events", "user_request_written", "--json"]) == 0
    assert [json.loads(line)["strategy"] for line in capsys.readouterr().out.splitlines()] == \
        ["new_request", "improvement", "other"]

    scripts = load_scripts(pipeline / "scripts.jsonl")
    assert len(scripts) >= 12  # one per dialogue at least
    assert main(["simulbench-board", str(pipeline / "simulbench"),
                 str(pipeline / "simulbench-weak"), "--json", str(pipeline / "b.json"),
                 "--plot", str(pipeline / "b.png")]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| scripted/")]
    assert rows[0].startswith("| scripted/simulbench | ")  # the better one first
    assert rows[1].startswith("| scripted/simulbench-weak | 2.00 | [2.00, 2.00] | 2.00")
    data = json.loads((pipeline / "b.json").read_text())
    assert data["rows"][1]["scored"] == len(scripts)
    assert data["usage"]["scripted/simulbench"]["simulator"]["calls"] == len(scripts)
    assert (pipeline / "b.png").read_bytes()[:4] == b"\x89PNG"

    assert main(["simulbench-pairwise", str(pipeline / "simulbench"),
                 str(pipeline / "simulbench-weak"), "--judge", S, "--out",
                 str(pipeline / "pair")]) == 0
    out = capsys.readouterr().out
    assert "| scripted/simulbench | scripted/simulbench-weak | all | 100.00 | 0.00 | 0.00 | " \
        f"100.00 | 0.00 | {len(scripts)} | 0 |" in out
    assert main(["simulbench-pairwise", str(pipeline / "simulbench"),
                 str(pipeline / "simulbench-weak"), "--judge", S, "--out",
                 str(pipeline / "pair")]) == 0
    assert f"verdicts made 0, kept {len(scripts)}" in capsys.readouterr().out


def test_several_models_compared_pairwise_in_one_command(pipeline, capsys):
    """The paper's Table 1: every pair of three models, or each against a reference."""
    scripts = str(pipeline / "scripts.jsonl")
    assert main(["simulbench", "--scripts", scripts, "--simulator", S, "--judge", S,
                 "--label", "strong-too", "--out", str(pipeline / "strong2")]) == 0
    n = len(load_scripts(scripts))
    dirs = [str(pipeline / d) for d in ("simulbench", "strong2", "simulbench-weak")]
    capsys.readouterr()
    assert main(["simulbench-pairwise", *dirs, "--judge", S, "--judge-format", "json",
                 "--out", str(pipeline / "pairs"), "--json", str(pipeline / "t1.json")]) == 0
    out = capsys.readouterr().out
    assert f"3 pairs: verdicts made {3 * n}, kept 0" in out
    rows = {tuple(c.strip() for c in line.split("|")[1:4]): line
            for line in out.splitlines() if line.startswith("| ")}
    win = "| 100.00 | 0.00 | 0.00 | 100.00 | 0.00 |"
    assert win in rows["scripted/simulbench", "scripted/simulbench-weak", "all"]
    assert win in rows["strong-too", "scripted/simulbench-weak", "all"]
    assert "| 0.00 | 100.00 | 0.00 | 0.00 | 0.00 |" in \
        rows["scripted/simulbench", "strong-too", "all"]  # the same model: all ties
    data = json.loads((pipeline / "t1.json").read_text())
    assert data["judge_format"] == "json" and len(data["pairs"]) == 3
    assert data["pairs"][2]["subsets"]["hard"]["win"] == \
        sum(1 for s in load_scripts(scripts) if s.hard)

    # each against a reference: the directory's model first; the pair judged above is kept
    assert main(["simulbench-pairwise", dirs[0], dirs[1], "--reference", dirs[2], "--judge", S,
                 "--judge-format", "json", "--out", str(pipeline / "pairs")]) == 0
    out = capsys.readouterr().out
    assert f"2 pairs: verdicts made 0, kept {2 * n}" in out
    assert "| strong-too | scripted/simulbench-weak | all | 100.00 |" in out
    # verdicts of another judge format are not mixed in
    assert main(["simulbench-pairwise", *dirs, "--judge", S, "--out",
                 str(pipeline / "pairs")]) == 2
    assert "verdicts of --judge-format json, not text" in capsys.readouterr().err
    assert main(["simulbench-pairwise", dirs[0], "--judge", S, "--out", "x"]) == 2
    assert main(["simulbench-pairwise", dirs[0], dirs[0], "--judge", S, "--out", "x"]) == 2


def test_the_model_under_test_sees_exactly_the_script(pipeline, monkeypatch, capsys):
    seen = []

    def simulator(request):
        seen.append(request.messages)
        return '  "quoted answer"  '

    monkeypatch.setitem(SCRIPTS, "sb-probe", lambda: ScriptedBackend(
        {"simulbench.simulator": simulator}, model_id="scripted/sb-probe"))
    out = pipeline / "probe"
    assert main(["simulbench", "--scripts", str(pipeline / "scripts.jsonl"), "--simulator",
                 "scripted/sb-probe", "--judge", S, "--every", "5", "--out", str(out)]) == 0
    scripts = load_scripts(pipeline / "scripts.jsonl")
    wanted = {json.dumps([m.model_dump() for m in s.dialogue_history]) for s in scripts}
    assert seen and all(m[0].role == "system" and m[0].content == SYSTEM_PROMPT for m in seen)
    assert all(json.dumps([x.model_dump() for x in m[1:]]) in wanted for m in seen)
    run = load_run(next((out / "runs").iterdir()))
    assert [e for e in run.events if e.kind == "utterance"][-1].text == "quoted answer"

    # resumed: nothing is asked again
    seen.clear()
    assert main(["simulbench", "--scripts", str(pipeline / "scripts.jsonl"), "--simulator",
                 "scripted/sb-probe", "--judge", S, "--every", "5", "--out", str(out)]) == 0
    assert seen == [] and "answers run 0" in capsys.readouterr().out


def test_a_babbling_judge_is_counted_not_fatal(pipeline, monkeypatch, capsys):
    monkeypatch.setitem(SCRIPTS, "sb-babbler", lambda: ScriptedBackend(
        {"simulbench.judge": lambda request: "A fine answer, I would say seven."},
        model_id="scripted/sb-babbler"))
    out = pipeline / "simulbench"
    assert main(["simulbench", "--scripts", str(pipeline / "scripts.jsonl"), "--simulator", S,
                 "--judge", S, "--judge", "scripted/sb-babbler", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    n = len(load_scripts(pipeline / "scripts.jsonl"))
    assert f"judgments made {n} ({n} fell back)" in printed
    assert main(["simulbench-board", str(out), "--judge", "scripted/sb-babbler"]) == 0
    assert f"| 0/{n} | {n} | 0 |" in capsys.readouterr().out


def test_the_json_judge_format_gives_the_same_board_and_is_recorded(pipeline, capsys):
    scripts = str(pipeline / "scripts.jsonl")
    out = pipeline / "json"
    assert main(["simulbench", "--scripts", scripts, "--simulator", S, "--judge", S,
                 "--judge-format", "json", "--out", str(out)]) == 0
    assert json.loads((out / "simulbench.json").read_text())["judge_options"] == \
        {"judge_format": "json"}
    run = next((out / "runs").iterdir())
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    assert [c["faults"] for c in calls if c["tag"] == "simulbench.judge"] == [[]]
    capsys.readouterr()
    # the scripted judge says the same verdict in both formats: the same scores
    assert main(["simulbench-board", str(pipeline / "simulbench"), "--json",
                 str(pipeline / "text.json")]) == 0
    assert main(["simulbench-board", str(out), "--json", str(pipeline / "j.json")]) == 0
    text = json.loads((pipeline / "text.json").read_text())["rows"][0]["subsets"]
    judged = json.loads((pipeline / "j.json").read_text())["rows"][0]["subsets"]
    assert judged == text and judged["all"]["n"] == len(load_scripts(scripts))
    capsys.readouterr()

    # another format in the same directory needs --rejudge; no answer is asked again
    assert main(["simulbench", "--scripts", scripts, "--simulator", S, "--judge", S,
                 "--out", str(out)]) == 2
    assert "judged with --judge-format json, not text; add --rejudge" in \
        capsys.readouterr().err
    assert main(["simulbench", "--scripts", scripts, "--simulator", S, "--judge", S,
                 "--rejudge", "--out", str(out)]) == 0
    n = len(load_scripts(scripts))
    assert f"answers run 0, skipped {n}; judgments made {n}" in capsys.readouterr().out
    assert json.loads((out / "simulbench.json").read_text())["judge_options"] == \
        {"judge_format": "text"}


def test_collection_with_the_json_challenge_judge(tmp_path, capsys):
    collect = tmp_path / "collect"
    assert main(["simulbench-collect", "--user", S, "--simulator", S, "--judge", S,
                 "--judge-format", "json", "--every", "20", "--out", str(collect)]) == 0
    judged = [json.loads(p.read_text()) for p in collect.glob("runs/*/judgments/*.json")]
    assert len(judged) == 6 and all(j["status"] == "ok" for j in judged)
    assert main(["simulbench-extract", str(collect), "--out", str(tmp_path / "s.jsonl")]) == 0
    assert "0 judge fallbacks" in capsys.readouterr().out


def test_a_bad_script_file_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": 0, "source_id": "x", "act": "X", "task_description": "d", '
                    '"type": "stateish", "source_file_name": "f", "turn_num": 1, '
                    '"dialogue_history": [{"role": "user", "content": "d"}]}\n')
    assert main(["simulbench", "--scripts", str(path), "--simulator", S, "--judge", S,
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "line 1, field type" in err
    assert main(["simulbench", "--simulator", S, "--judge", S, "--out",
                 str(tmp_path / "o")]) == 2
    assert "give a test-script file" in capsys.readouterr().err


def test_a_published_format_file_runs_by_subset(tmp_path, capsys):
    """The published files' shape: a task file and scripts with int ids, Hard first."""
    tasks = [{"id": "000#Linux_Terminal", "act": "Linux Terminal", "task_description": "be a "
              "terminal; my first command is pwd", "request_type": "your command",
              "type": "stateful"},
             {"id": "074#Password_Generator", "act": "Password Generator",
              "task_description": "make passwords", "request_type": "a spec",
              "type": "stateless"}]
    task_file = tmp_path / "simulbench_tasks.jsonl"
    task_file.write_text("\n".join(json.dumps(t) for t in tasks) + "\n")

    def script(id_, task, file, turn):
        n = 7 if turn == 0 else 2 * turn - 1
        history = [{"role": "user" if i % 2 == 0 else "assistant",
                    "content": task["task_description"] if i == 0 else f"msg {i} ü"}
                   for i in range(n)]
        return {"id": id_, "source_id": task["id"], "act": task["act"],
                "task_description": task["task_description"], "type": task["type"],
                "source_file_name": file, "turn_num": turn, "dialogue_history": history}

    rows = [script(0, tasks[0], "gpt-3.5-turbo.json", 2),
            script(1, tasks[0], "gpt-3.5-turbo.json", 3),
            script(2, tasks[1], "gpt-3.5-turbo-1.json", 1),
            script(3, tasks[0], "gpt-3.5-turbo-1.json", 0),
            script(4, tasks[1], "gpt-3.5-turbo.json", 0)]
    scripts = tmp_path / "simulbench_all.jsonl"
    scripts.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    out = tmp_path / "hard"
    assert main(["simulbench", "--scripts", str(scripts), "--tasks", str(task_file),
                 "--subset", "hard", "--simulator", S, "--judge", S, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "answers run 3, skipped 0" in printed
    assert main(["simulbench-board", str(out), "--tasks", str(task_file)]) == 0
    table = capsys.readouterr().out
    assert "| 3/3 | 0 | 0 |" in table  # scored, unparsed, out of range
    assert "| your command |" in table and "| a spec |" in table  # by request type
    assert "| Linux Terminal |" in table
    # another subset in the same directory is another configuration
    assert main(["simulbench", "--scripts", str(scripts), "--tasks", str(task_file),
                 "--simulator", S, "--judge", S, "--out", str(out)]) == 2
    assert "subset 'hard', not 'all'" in capsys.readouterr().err
