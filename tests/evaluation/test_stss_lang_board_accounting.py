"""The STSS language-level board accounts for every scenario its manifest selected: hand-damaged
copies of finished scripted replays (a run deleted, header.json cut, a judgment unreadable or
answering other conditions, the partner's summary edited after judging) are counted and named,
and the next `sandbox stss-lang` makes them good."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS
from tasks.stss_lang import save_set
from tasks.stss_lang.harvest import harvest
from tasks.stss_lang.scripted import stss_lang_backend
from tests.evaluation.damage import (
    cut_header,
    delete_run,
    edit_judgment,
    read_board,
    runs,
    write_text,
)
from tests.tasks.test_stss_lang_harvest import golden

MODEL = "scripted/stss-lang"


@pytest.fixture
def scenario_set(tmp_path, monkeypatch):
    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    return save_set(harvest([golden(tmp_path / "run")]), tmp_path / "set.json")


def lang(scenario_set, out, *extra) -> int:
    return main(["stss-lang", str(scenario_set), "--arch", "ga", "--model", MODEL, "--judge",
                 MODEL, "--out", str(out), *extra])


def board(out, capsys, *extra):
    return read_board("stss-lang-board", out, capsys, *extra)


def test_damaged_scenarios_are_counted_named_and_made_good(scenario_set, tmp_path, capsys):
    out = tmp_path / "lang"
    assert lang(scenario_set, out) == 0
    capsys.readouterr()
    bench = out / "ga"
    printed, _ = board(bench, capsys)
    assert "- scripted/stss-lang ga: 3 selected: 3 finished; judgments: 6 usable\n" in printed
    first, second, third = runs(bench)
    delete_run(first)
    cut_header(second)
    write_text(third / "judgments" / "conversation__scripted_stss-lang.json", "{not json")
    edit_judgment(third / "judgments" / "summary__scripted_stss-lang.json",
                  lambda d: d.update(flags={}))
    printed, data = board(bench, capsys)
    assert "| 0 (0) | 0 (0) |" in printed  # n conversations (tasks) on the board
    assert "3 selected: 1 finished, 2 missing; judgments: 0 usable, 3 stale, 1 unreadable" \
        in printed
    assert f"  - missing (no run directory): {first.name}" in printed
    assert "  - missing (header.json: not valid JSON" in printed
    assert f"  - stale judgment (answers 0 of the task's 3 goal conditions): {third.name} " \
        "(summary__scripted_stss-lang.json)" in printed
    assert f"  - unreadable judgment (not JSON (Expecting property name enclosed in double " \
        f"quotes)): {third.name} (conversation__scripted_stss-lang.json)" in printed
    assert data["rows"][0]["selected"] == 3

    assert lang(scenario_set, out) == 0
    capsys.readouterr()
    printed, _ = board(bench, capsys)
    assert "3 selected: 3 finished; judgments: 6 usable\n" in printed


def test_a_summary_edited_after_judging_makes_only_the_summary_judgment_stale(
        scenario_set, tmp_path, capsys):
    out = tmp_path / "lang"
    assert lang(scenario_set, out) == 0
    capsys.readouterr()
    run_dir = runs(out / "ga")[0]
    events = run_dir / "events.jsonl"
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    for event in lines:
        if event["kind"] == "summary_written":
            event["text"] = "They talked about the weather."
    events.write_text("".join(json.dumps(e) + "\n" for e in lines))
    printed, _ = board(out / "ga", capsys)
    assert "judgments: 5 usable, 1 stale" in printed
    assert f"  - stale judgment (judged another dialogue than the one in the run now (its " \
        f"events changed since)): {run_dir.name} (summary__scripted_stss-lang.json)" in printed


def test_an_unknown_judge_filter_is_one_line(scenario_set, tmp_path, capsys):
    out = tmp_path / "lang"
    assert lang(scenario_set, out) == 0
    capsys.readouterr()
    assert main(["stss-lang-board", str(out / "ga"), "--judge", "nobody/none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no judge nobody/none in this directory; judges present: "
                        "scripted/stss-lang") and len(err.splitlines()) == 1


def test_seeds_of_one_configuration_are_one_row_and_other_configurations_told_apart(
        scenario_set, tmp_path, capsys):
    # a sweep's cells of one model and architecture, a seed each: once a row each, the seed
    # shown nowhere ("scripted/stss-lang | ga" twice)
    for seed in (0, 1):
        assert lang(scenario_set, tmp_path / f"s{seed}", "--seed", str(seed)) == 0
    dirs = [tmp_path / "s0" / "ga", tmp_path / "s1" / "ga", tmp_path / "p" / "ga"]
    assert main(["stss-lang", str(scenario_set), "--arch", "ga", "--model", MODEL, "--judge",
                 MODEL, "--partner-model", "scripted/town", "--out", str(tmp_path / "p")]) == 0
    capsys.readouterr()
    target = tmp_path / "board.json"
    assert main(["stss-lang-board", *map(str, dirs), "--json", str(target)]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(target.read_text())["rows"]
    assert len(rows) == 2
    pooled = next(r for r in rows if r["seeds"] == [0, 1])
    assert pooled["conversation_n"] == "6 (1)" and pooled["selected"] == 6  # 3 x 2 seeds
    assert "- scripted/stss-lang ga (partner scripted/stss-lang): seeds 0, 1 pooled" in printed
    table = [line for line in printed.split("\n\n")[1].splitlines()[2:]]
    assert len(table) == len(set(table)) == 2  # no row printed twice, each told apart
    assert "ga (partner scripted/town)" in printed
