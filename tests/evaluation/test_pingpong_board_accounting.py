"""The PingPong board accounts for every pair its manifest selected: hand-damaged copies of a
finished scripted run (a run deleted, result.json removed, header.json cut, events cut after
judging, a judgment unreadable, of an unknown status, empty, cut to fewer turns or with a score
off the 1-5 scale or not a number) are counted
and named, never crash the board, and the next `sandbox pingpong` makes them good."""

from __future__ import annotations

import json
import shutil

import pytest

from sandbox.app.cli import main
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

SETTINGS = {"en": {
    "characters": [
        {"char_name": "Makise", "system_prompt": "A sharp young scientist.",
         "summary": "A scientist."},
        {"char_name": "Bob", "system_prompt": "A calm plumber.", "summary": "A plumber."}],
    "situations": [{"text": "Chat about the weather.", "num_turns": 2},
                   {"text": "Ask for advice.", "num_turns": 3}]}}
JUDGES = ("scripted/pingpong", "scripted/pingpong-strict")
STRICT = "pingpong__scripted_pingpong-strict.json"


def pingpong(tmp_path, out) -> int:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    return main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", JUDGES[0], "--judge", JUDGES[1],
                 "--settings", str(settings), "--out", str(out)])


@pytest.fixture
def finished(tmp_path, capsys):
    """A finished benchmark directory: 4 pairs, each judged by 2 judges."""
    out = tmp_path / "pp"
    assert pingpong(tmp_path, out) == 0
    capsys.readouterr()
    return out


def board(out, capsys, *extra):
    return read_board("pingpong-board", out, capsys, *extra)


def row_of(printed: str) -> str:
    return next(line for line in printed.splitlines() if line.startswith("| 1 |"))


def test_an_undamaged_directory_accounts_for_every_pair(finished, capsys):
    printed, data = board(finished, capsys)
    assert "| 4/4 | 0 |" in row_of(printed)
    assert "- scripted/pingpong: 4 selected: 4 finished; judgments: 8 usable\n" in printed
    assert data["accounting"]["scripted/pingpong"]["named"] == []


def test_runs_deleted_cut_or_without_a_result_are_counted_named_and_run_again(
        tmp_path, finished, capsys):
    before = runs(finished)
    delete_run(before[0])
    remove_result(before[1])
    cut_header(before[2])
    printed, data = board(finished, capsys)
    assert "| 1/4 | 0 |" in row_of(printed)  # not 1/1: the denominator is what was selected
    assert "- scripted/pingpong: 4 selected: 1 finished, 1 unfinished, 2 missing; judgments: " \
        "2 usable, 4 stale" in printed
    assert f"  - missing (no run directory): {before[0].name}" in printed
    assert f"  - unfinished (no result.json (killed, or removed)): {before[1].name}" in printed
    assert "  - missing (header.json: not valid JSON (" in printed and before[2].name in printed
    assert f"  - stale judgment (its run is not finished): {before[1].name} (" in printed
    assert data["accounting"]["scripted/pingpong"]["runs"] == {
        "finished": 1, "unfinished": 1, "missing": 2}

    assert pingpong(tmp_path, finished) == 0
    assert "conversations run 3, skipped 1" in capsys.readouterr().out
    printed, _ = board(finished, capsys)
    assert "| 4/4 | 0 |" in row_of(printed)
    assert "4 selected: 4 finished; judgments: 8 usable\n" in printed


def _turns_cut_to_one(data):
    data["turns"] = data["turns"][:1]


def _score(turn: int, criterion: str, value: float):
    def change(data):
        data["turns"][turn]["scores"][criterion] = value
    return change


@pytest.mark.parametrize("damage, count, named", [
    (lambda path: write_text(path, "{not json"), "7 usable, 1 unreadable",
     "unreadable judgment (not JSON (Expecting property name enclosed in double quotes))"),
    (lambda path: edit_judgment(path, lambda d: d.update(status="maybe")),
     "7 usable, 1 unreadable",
     "unreadable judgment (not a judgment (status: Input should be 'ok', 'fallback' or "
     "'unavailable'))"),
    (lambda path: edit_judgment(path, lambda d: d.update(turns=[])), "7 usable, 1 stale",
     "stale judgment (judges 0 of the 3 player turns)"),
    (lambda path: edit_judgment(path, _turns_cut_to_one), "7 usable, 1 stale",
     "stale judgment (judges 1 of the 3 player turns)"),
    # a score off the 1-5 scale, or not a number, never enters a mean (it made the board's
    # means 'nan' while the accounting said every judgment was usable)
    (lambda path: edit_judgment(path, _score(2, "fluency", 9)), "7 usable, 1 out of range",
     "out of range judgment (turn 5 fluency 9, outside 1-5)"),
    (lambda path: edit_judgment(path, _score(0, "in_character", 0)),
     "7 usable, 1 out of range", "out of range judgment (turn 1 in_character 0, outside 1-5)"),
    (lambda path: edit_judgment(path, _score(1, "entertaining", float("nan"))),
     "7 usable, 1 out of range", "out of range judgment (turn 3 entertaining nan, not a number)"),
    # the reference judge's schema takes whole numbers: a saved 3.5 was averaged
    (lambda path: edit_judgment(path, _score(1, "fluency", 3.5)), "7 usable, 1 out of range",
     "out of range judgment (turn 3 fluency 3.5, not a whole number (the 1-5 ratings are "
     "integers, as the reference judge's schema takes them))"),
])
def test_a_damaged_judgment_is_counted_named_left_out_and_asked_again(
        tmp_path, finished, capsys, damage, count, named):
    clean, _ = board(finished, capsys)
    # a conversation of 3 player turns ("Ask for advice."), its strict judge's verdict
    run_dir = next(r for r in runs(finished)
                   if json.loads((r / "header.json").read_text())["config"]["situation"]
                   ["num_turns"] == 3)
    path = run_dir / "judgments" / STRICT
    damage(path)
    printed, data = board(finished, capsys)
    assert f"4 selected: 4 finished; judgments: {count}\n" in printed
    assert f"  - {named}: {run_dir.name} ({STRICT})" in printed
    # the conversation keeps its other judge's score: still in the means, scored differently
    assert "| 4/4 |" in row_of(printed) and row_of(printed) != row_of(clean)
    assert "nan" not in row_of(printed)
    assert data["judges"]["scripted/pingpong"] == list(JUDGES)

    assert pingpong(tmp_path, finished) == 0
    assert "judgments made 1 (0 fell back), skipped 7" in capsys.readouterr().out
    printed, _ = board(finished, capsys)
    assert row_of(printed) == row_of(clean)
    assert "4 selected: 4 finished; judgments: 8 usable\n" in printed


def test_a_fallback_judgment_is_counted_and_named(finished, capsys):
    # evaluation/README says every unusable judgment is named: a fallback was only counted
    run_dir = runs(finished)[0]
    edit_judgment(run_dir / "judgments" / STRICT,
                  lambda d: d.update(status="fallback", faults=["unparsed"]))
    printed, data = board(finished, capsys)
    assert "4 selected: 4 finished; judgments: 7 usable, 1 fallback\n" in printed
    assert f"  - fallback judgment (its judge's answer could not be used (unparsed): the " \
        f"declared fallback, left out of the means): {run_dir.name} ({STRICT})" in printed


def test_events_cut_after_judging_make_the_run_unfinished_and_its_judgments_stale(
        tmp_path, finished, capsys):
    clean, _ = board(finished, capsys)
    run_dir = runs(finished)[0]
    said = iter(range(3))  # keep the first two utterances, cut from the third
    cut = cut_events(run_dir, lambda e: e["kind"] != "utterance" or next(said) < 2)
    assert cut > 0
    printed, _ = board(finished, capsys)
    assert "4 selected: 3 finished, 1 unfinished; judgments: 6 usable, 2 stale" in printed
    assert "  - unfinished (events.jsonl holds " in printed
    assert f"  - stale judgment (its run is not finished): {run_dir.name} (" in printed
    assert "| 3/4 |" in row_of(printed)

    assert pingpong(tmp_path, finished) == 0  # played again from the run's cache, re-judged
    assert "conversations run 1, skipped 3; judgments made 2" in capsys.readouterr().out
    printed, _ = board(finished, capsys)
    assert row_of(printed) == row_of(clean)


def test_an_old_judgment_of_other_turns_is_stale_even_without_a_digest(finished, capsys):
    """Judgments saved before digests were recorded are checked by their turns."""
    run_dir = runs(finished)[0]
    for path in judgment_files(run_dir):
        edit_judgment(path, lambda d: (d.pop("dialogue_digest"),
                                       [t.update(turn=t["turn"] + 10) for t in d["turns"]]))
    printed, _ = board(finished, capsys)
    assert "judgments: 6 usable, 2 stale" in printed
    assert f"  - stale judgment (judges other turns than the player's): {run_dir.name}" \
        in printed


def test_an_unknown_judge_filter_is_one_line_naming_the_judges_present(finished, capsys):
    assert main(["pingpong-board", str(finished), "--judge", "nobody/none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no judge nobody/none in this directory; judges present: "
                        "scripted/pingpong, scripted/pingpong-strict")
    assert len(err.splitlines()) == 1
    printed, _ = board(finished, capsys, "--judge", "scripted/pingpong")
    assert "4 selected: 4 finished; judgments: 4 usable\n" in printed


def test_a_copy_with_every_damage_at_once_still_prints_a_board(tmp_path, finished, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    first, second, third, fourth = runs(copy)
    delete_run(first)
    for path in judgment_files(second):
        write_text(path, "{not json")
    for path in judgment_files(third):
        edit_judgment(path, lambda d: d.update(turns=[]))
    remove_result(fourth)
    printed, data = board(copy, capsys)
    assert "| 0/4 |" in printed
    assert "4 selected: 2 finished, 1 unfinished, 1 missing; judgments: 0 usable, 4 stale, " \
        "2 unreadable" in printed
    assert len(data["accounting"]["scripted/pingpong"]["named"]) == 1 + 2 + 2 + 1 + 2


def test_a_degraded_run_and_an_unavailable_judgment_are_named(finished, capsys):
    first, second = runs(finished)[:2]
    result = json.loads((first / "result.json").read_text())
    result.update(degraded=True, fallback_fraction=0.75)
    (first / "result.json").write_text(json.dumps(result))
    edit_judgment(judgment_files(second)[0], lambda j: j.update(status="unavailable"))
    printed, data = board(finished, capsys)
    assert "- scripted/pingpong: 4 selected: 4 finished (1 degraded); judgments: 7 usable, " \
        "1 unavailable" in printed
    assert f"  - degraded (75% of its calls fell back (above SANDBOX_DEGRADED_ABOVE)): " \
        f"{first.name}" in printed
    assert f"  - unavailable judgment (its judge's call reached no model): {second.name} (" \
        in printed
    assert data["accounting"]["scripted/pingpong"]["runs"] == {"finished": 4, "degraded": 1}


def test_two_directories_of_one_label_and_configuration_are_one_row_each_pair_once(
        tmp_path, finished, capsys):
    # both directories are named "pp": once two rows of one player, each pair counted twice
    for parent in ("a", "b"):
        shutil.copytree(finished, tmp_path / parent / "pp")
    assert main(["pingpong-board", str(tmp_path / "a" / "pp"), str(tmp_path / "b" / "pp")]) == 0
    printed = capsys.readouterr().out
    assert "| scripted/pingpong (a/pp) |" not in printed
    assert "- scripted/pingpong: 4 selected (and 4 again by another directory, counted once): " \
        "4 finished" in printed
    assert printed.count("| 1 | scripted/pingpong |") == 1


def test_one_label_over_two_interrogators_is_two_rows_named_by_it(tmp_path, finished, capsys):
    other = tmp_path / "other"
    settings = tmp_path / "settings.json"
    assert main(["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong-strict", "--judge", JUDGES[0], "--judge", JUDGES[1],
                 "--settings", str(settings), "--label", "scripted/pingpong",
                 "--out", str(other)]) == 0
    capsys.readouterr()
    for order in ([finished, other], [other, finished]):
        assert main(["pingpong-board", *map(str, order)]) == 0
        printed = capsys.readouterr().out
        assert "| scripted/pingpong (interrogator scripted/pingpong) |" in printed
        assert "| scripted/pingpong (interrogator scripted/pingpong-strict) |" in printed
        assert "scripted/pingpong: 2 configurations under one label (they differ in " \
            "interrogator): not pooled, a row each" in printed
    assert main(["pingpong-board", str(finished), str(finished)]) == 2
    assert capsys.readouterr().err.strip().endswith("is given twice: each directory once")
