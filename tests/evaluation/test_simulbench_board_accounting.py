"""The SimulBench board accounts for every script its manifest selected: hand-damaged copies of
a finished scripted run (a run deleted, result.json removed, header.json cut, a run that
failed, a judgment unreadable, of an unknown status, without a rating, out of range, events
cut after judging) are counted and named on the Markdown board, and "Scored" is over what was
selected. Request types come from the task file the directory was run with."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS, ScriptedBackend
from tests.evaluation.damage import (
    cut_events,
    cut_header,
    delete_run,
    edit_judgment,
    judgment_files,
    read_board,
    remove_result,
    runs,
    write_text,
)

S = "scripted/simulbench"
TASKS = [{"id": "000#Linux_Terminal", "act": "Linux Terminal", "task_description": "be a "
          "terminal; my first command is pwd", "request_type": "your command",
          "type": "stateful"},
         {"id": "074#Password_Generator", "act": "Password Generator",
          "task_description": "make passwords", "request_type": "a spec", "type": "stateless"}]


def script(id_, task, file, turn):
    n = 7 if turn == 0 else 2 * turn - 1
    history = [{"role": "user" if i % 2 == 0 else "assistant",
                "content": task["task_description"] if i == 0 else f"msg {i}"}
               for i in range(n)]
    return {"id": id_, "source_id": task["id"], "act": task["act"],
            "task_description": task["task_description"], "type": task["type"],
            "source_file_name": file, "turn_num": turn, "dialogue_history": history}


@pytest.fixture
def files(tmp_path):
    task_file = tmp_path / "simulbench_tasks.jsonl"
    task_file.write_text("\n".join(json.dumps(t) for t in TASKS) + "\n")
    rows = [script(0, TASKS[0], "gpt-3.5-turbo.json", 2),
            script(1, TASKS[0], "gpt-3.5-turbo.json", 3),
            script(2, TASKS[1], "gpt-3.5-turbo-1.json", 1),
            script(3, TASKS[0], "gpt-3.5-turbo-1.json", 0),
            script(4, TASKS[1], "gpt-3.5-turbo.json", 0)]
    scripts = tmp_path / "simulbench_all.jsonl"
    scripts.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return scripts, task_file


def answer(out, files, *extra, simulator=S) -> int:
    scripts, task_file = files
    return main(["simulbench", "--scripts", str(scripts), "--tasks", str(task_file),
                 "--simulator", simulator, "--judge", S, "--out", str(out), *extra])


@pytest.fixture
def finished(tmp_path, files, capsys):
    out = tmp_path / "sb"
    assert answer(out, files) == 0
    capsys.readouterr()
    return out


def board(out, capsys, *extra):
    return read_board("simulbench-board", out, capsys, *extra)


def test_the_run_prints_request_types_from_its_task_file(tmp_path, files, capsys):
    assert answer(tmp_path / "sb", files) == 0
    printed = capsys.readouterr().out
    assert "| your command |" in printed and "| a spec |" in printed
    assert "| ? |" not in printed and "Request type ?" not in printed
    printed, _ = board(tmp_path / "sb", capsys)  # the board finds the same file by itself
    assert "| your command |" in printed and "| a spec |" in printed
    assert "- scripted/simulbench: 5 selected: 5 finished; judgments: 5 usable\n" in printed


def test_without_a_task_file_unknown_request_types_are_said(tmp_path, files, capsys):
    scripts, _ = files
    assert main(["simulbench", "--scripts", str(scripts), "--simulator", S, "--judge", S,
                 "--out", str(tmp_path / "sb")]) == 0
    printed = capsys.readouterr().out
    assert "| ? |" in printed
    assert "Request type ?: scripts whose task is in no task file given (scripted/simulbench 5)" \
        in printed


def test_damaged_runs_are_counted_named_and_scored_over_what_was_selected(
        tmp_path, files, finished, capsys):
    first, second, third, *_ = runs(finished)
    delete_run(first)
    remove_result(second)
    cut_header(third)
    printed, data = board(finished, capsys)
    assert "| 2/5 | 0 | 0 |" in printed  # not 2/2
    assert "- scripted/simulbench: 5 selected: 2 finished, 1 unfinished, 2 missing; " \
        "judgments: 2 usable, 2 stale" in printed
    assert f"  - missing (no run directory): {first.name}" in printed
    assert f"  - unfinished (no result.json (killed, or removed)): {second.name}" in printed
    assert f"  - stale judgment (its run is not finished): {second.name} (" in printed
    assert data["rows"][0]["selected"] == 5 and data["rows"][0]["scored"] == 2
    # the accounting's line travels with the JSON (and the plot), as does the test double
    assert "Accounting: scripted/simulbench: 5 selected: 2 finished, 1 unfinished, 2 missing; " \
        "judgments: 2 usable, 2 stale" in data["notes"]
    assert data["test_double"] == ["scripted/simulbench"]

    assert answer(finished, files) == 0
    assert "answers run 3, skipped 2" in capsys.readouterr().out
    printed, data = board(finished, capsys)
    assert "| 5/5 | 0 | 0 |" in printed
    assert data["notes"] == []  # all finished and judged: nothing to carry


def test_a_failed_answer_is_on_the_markdown_board(tmp_path, files, capsys, monkeypatch):
    def falls_over(request):
        if "msg 4" in request.messages[-1].content:
            raise RuntimeError("the endpoint fell over")
        return "ok"

    monkeypatch.setitem(SCRIPTS, "sb-flaky", lambda: ScriptedBackend(
        {"simulbench.simulator": falls_over}, model_id="scripted/sb-flaky"))
    out = tmp_path / "flaky"
    assert answer(out, files, simulator="scripted/sb-flaky") == 1
    capsys.readouterr()
    printed, _ = board(out, capsys)
    assert "| 4/5 |" in printed
    assert "5 selected: 4 finished, 1 failed; judgments: 4 usable" in printed
    assert "  - failed (failed: RuntimeError: the endpoint fell over): " in printed


def _rating(value):
    def change(data):
        data["scores"]["score"] = value
    return change


@pytest.mark.parametrize("damage, count, named", [
    (lambda path: write_text(path, "{not json"), "4 usable, 1 unreadable",
     "unreadable judgment (not JSON (Expecting property name enclosed in double quotes))"),
    (lambda path: edit_judgment(path, lambda d: d.update(status="unsure")),
     "4 usable, 1 unreadable",
     "unreadable judgment (not a judgment (status: Input should be 'ok', 'fallback' or "
     "'unavailable'))"),
    (lambda path: edit_judgment(path, lambda d: d.update(scores={})), "4 usable, 1 stale",
     "stale judgment (an ok judgment without a rating)"),
    (lambda path: edit_judgment(path, _rating(12)), "4 usable, 1 out of range",
     "out of range judgment (rated 12, outside 1-10)"),
])
def test_a_damaged_judgment_is_counted_named_and_asked_again(
        tmp_path, files, finished, capsys, damage, count, named):
    run_dir = runs(finished)[0]
    damage(judgment_files(run_dir)[0])
    printed, _ = board(finished, capsys)
    assert f"5 selected: 5 finished; judgments: {count}\n" in printed
    assert f"  - {named}: {run_dir.name} (score__scripted_simulbench.json)" in printed
    assert "| 4/5 |" in printed
    if "out of range" not in count:  # an out-of-range rating is the judge's: kept as said
        assert answer(finished, files) == 0
        assert "judgments made 1 (0 fell back), skipped 4" in capsys.readouterr().out
        assert "| 5/5 |" in board(finished, capsys)[0]


def test_events_cut_after_judging_leave_the_script_out_until_it_is_answered_again(
        tmp_path, files, finished, capsys):
    run_dir = runs(finished)[0]
    assert cut_events(run_dir, lambda e: e["kind"] != "utterance" or e["agent"] == "User") > 0
    printed, _ = board(finished, capsys)
    assert "5 selected: 4 finished, 1 unfinished; judgments: 4 usable, 1 stale" in printed
    assert "| 4/5 |" in printed
    assert answer(finished, files) == 0
    assert "answers run 1, skipped 4" in capsys.readouterr().out


def test_an_unknown_judge_filter_is_one_line(finished, capsys):
    assert main(["simulbench-board", str(finished), "--judge", "nobody/none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no judge nobody/none in this directory; judges present: "
                        "scripted/simulbench") and len(err.splitlines()) == 1


def test_collection_damage_is_counted_on_its_board_and_by_the_extraction(tmp_path, capsys):
    collect = tmp_path / "collect"
    assert main(["simulbench-collect", "--user", S, "--simulator", S, "--judge", S,
                 "--every", "20", "--out", str(collect)]) == 0
    first, second, third, *_ = runs(collect)
    delete_run(first)
    write_text(judgment_files(second)[0], "{not json")
    edit_judgment(judgment_files(third)[0],
                  lambda d: d.update(scores={"challenging_turn": 9.0}))
    capsys.readouterr()
    assert main(["simulbench-collect-board", str(collect)]) == 0
    printed = capsys.readouterr().out
    assert "- scripted/simulbench: 6 selected: 5 finished, 1 missing; judgments: 3 usable, " \
        "1 stale, 1 unreadable" in printed
    assert f"  - stale judgment (names turn 9 of a dialogue of 4 turns): {third.name}" in printed
    assert main(["simulbench-extract", str(collect), "--out", str(tmp_path / "s.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "left out (run simulbench-collect again to finish them): scripted/simulbench: " \
        "6 selected: 5 finished, 1 missing" in printed
    assert f"  - missing (no run directory): {first.name}" in printed


def test_two_directories_of_one_label_and_configuration_are_one_row(tmp_path, finished,
                                                                       capsys):
    import shutil

    # the same label and configuration in a/sb and b/sb: one row, each script once (kit.rows)
    for parent in ("a", "b"):
        shutil.copytree(finished, tmp_path / parent / "sb")
    assert main(["simulbench-board", str(tmp_path / "a" / "sb"),
                 str(tmp_path / "b" / "sb")]) == 0
    printed = capsys.readouterr().out
    assert "(a/sb)" not in printed
    assert "- scripted/simulbench: 5 selected (and 5 again by another directory, counted " \
        "once): 5 finished" in printed
    # one directory given twice, by two paths to it, is refused in one line
    assert main(["simulbench-board", str(finished), str(tmp_path / "a" / ".." / "sb")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(f"is given twice (as {finished}): each "
                                                       "directory once")
