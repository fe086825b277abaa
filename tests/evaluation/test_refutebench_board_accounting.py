"""The RefuteBench board accounts for every dialogue its manifest selected: hand-damaged copies
of finished scripted runs are counted and named; a public 1.0 file's dialogues with nothing to
check (no feedback turn, a conflict marked in their run data) are counted with their reason,
so "on the board" plus the counts is every dialogue selected."""

from __future__ import annotations

import json
import re

import pytest

from sandbox.app.cli import main
from sandbox.llm import SCRIPTS, ScriptedBackend
from tasks.refutebench import ANSWER_TAG
from tests.evaluation.damage import (
    cut_header,
    delete_run,
    edit_judgment,
    judgment_files,
    read_board,
    remove_result,
    runs,
    write_text,
)

R = "scripted/refutebench"


def refutebench(out, *extra) -> int:
    return main(["refutebench", "--model", R, "--refuter", R, "--judge", R, "--tasks", "mt",
                 "--every", "9", "--out", str(out), *extra])


@pytest.fixture
def finished(tmp_path, capsys):
    """Three transient MT dialogues, 9 judgments each."""
    out = tmp_path / "rb"
    assert refutebench(out) == 0
    capsys.readouterr()
    return out


def board(out, capsys, *extra):
    return read_board("refutebench-board", out, capsys, *extra)


def boards(dirs, capsys):
    """The board of several directories: (what it printed, the board as JSON)."""
    target = dirs[0].parent / "board.json"
    assert main(["refutebench-board", *map(str, dirs), "--json", str(target)]) == 0
    return capsys.readouterr().out, json.loads(target.read_text())


def test_damaged_runs_and_judgments_are_counted_named_and_made_good(finished, capsys):
    printed, _ = board(finished, capsys)
    assert "- scripted/refutebench: 3 of 3 dialogues on the board" in printed
    assert "- scripted/refutebench: 3 selected: 3 finished; judgments: 27 usable\n" in printed
    first, second, third = runs(finished)
    delete_run(first)
    remove_result(second)
    write_text(judgment_files(third)[0], "{not json")
    edit_judgment(judgment_files(third)[1], lambda d: d.update(scores={}))
    edit_judgment(judgment_files(third)[2], lambda d: d.update(status="perhaps"))
    printed, data = board(finished, capsys)
    assert "- scripted/refutebench: 1 of 3 dialogues on the board" in printed
    assert "3 selected: 1 finished, 1 unfinished, 1 missing; judgments: 6 usable, 10 stale, " \
        "2 unreadable" in printed
    assert f"  - missing (no run directory): {first.name}" in printed
    assert f"  - stale judgment (an ok judgment without a rating): {third.name} (" in printed
    assert data["rows"][0]["accounting"]["judgments"]["unreadable"] == 2

    assert refutebench(finished) == 0
    assert "dialogues run 2, skipped 1; judgments made 21" in capsys.readouterr().out
    printed, _ = board(finished, capsys)
    assert "3 selected: 3 finished; judgments: 27 usable\n" in printed


def test_a_rating_off_the_1_to_5_scale_or_not_a_number_is_named_out_of_range(finished,
                                                                            capsys):
    first, second, third = runs(finished)[:3]
    edit_judgment(judgment_files(first)[0], lambda d: d["scores"].update(rating=7))
    edit_judgment(judgment_files(second)[0], lambda d: d["scores"].update(rating=float("nan")))
    # The reference judge's schema takes whole numbers: a saved 3.5 was averaged (issue 59).
    edit_judgment(judgment_files(third)[0], lambda d: d["scores"].update(rating=3.5))
    printed, _ = board(finished, capsys)
    assert "3 selected: 3 finished; judgments: 24 usable, 3 out of range\n" in printed
    assert f"  - out of range judgment (rating 7, outside 1-5): {first.name} (" in printed
    assert f"  - out of range judgment (rating nan, not a number): {second.name} (" in printed
    assert (f"  - out of range judgment (rating 3.5, not a whole number (the 1-5 ratings are "
            f"integers, as the reference judge's schema takes them)): {third.name} (") in printed
    assert "nan" not in printed.split("Accounting")[0]


def test_a_board_of_nothing_but_damage_still_names_it(finished, capsys):
    for run_dir in runs(finished):
        cut_header(run_dir)
    printed, _ = board(finished, capsys)
    assert printed.startswith("No judged RefuteBench dialogues yet.")
    assert "3 selected: 0 finished, 3 missing; judgments: 0 usable, 27 stale" in printed


def test_an_unknown_judge_filter_is_one_line(finished, capsys):
    assert main(["refutebench-board", str(finished), "--judge", "nobody/none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no judge nobody/none in this directory; judges present: "
                        "scripted/refutebench") and len(err.splitlines()) == 1


# -- a public 1.0 MT file --------------------------------------------------------------------
def query(text: str) -> str:
    return ("Please translate the following sentence from English into Chinese.\n[English]: "
            f"{text} \n[Chinese]: ")


def line(word: str, text: str) -> str:
    return json.dumps({
        "system_prompt": "You are a helpful assistant.",
        "feedbacks": {word: {"translation": ["咖啡", "咖啡豆"], "random": "暮气"}},
        "feedback_prompt": "",
        "feedback_mapping_prompt": "In the following translations, you should translate {src} "
                                   "to {tgt}.",
        "queries": [query(text), "[MAYBE FEEDBACK]", "What is Gremolata?", query(text)]},
        ensure_ascii=False)


def translator(request) -> str:
    said = [m.content for m in request.messages if m.role == "user"]
    if "Gremolata" in said[-1]:
        return "An Italian herb mix."
    if "once" in said[-1] or "makers" in said[-1]:  # every sense already there: a conflict
        return "咖啡和咖啡豆都不错。"
    wanted = re.findall(r"translate coffee to (\S+?)\.", "\n".join(said))
    return f"这是一台不错的{wanted[-1] if wanted else '咖啡'}机。"


def test_every_1_0_dialogue_is_on_the_board_or_counted_with_its_reason(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.setitem(SCRIPTS, "translator", lambda: ScriptedBackend(
        {ANSWER_TAG: translator}, model_id="scripted/translator"))
    items = tmp_path / "en-zh.memory.NC-1.jsonl"
    items.write_text("\n".join([
        line("coffee", "It was a fine coffee maker for a while."),  # feedback, checked
        line("tea", "It was a fine coffee maker."),  # no feedback word in the query
        line("coffee", "A fine coffee maker, once."),  # both senses already: a conflict
        line("coffee", "The coffee makers were fine."),  # the same
    ]) + "\n", encoding="utf-8")
    out = tmp_path / "v1"
    assert main(["refutebench", "--items", str(items), "--model", "scripted/translator",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    by_text = {json.loads((r / "header.json").read_text())["config"]["query"]: r
               for r in runs(out)}

    printed, data = board(out, capsys)
    # one dialogue: a mean with no interval (fewer than kit.MIN_UNITS)
    assert "| scripted/translator | en-zh.memory.NC-1.jsonl | translation | 1.00 n=1 |" \
        in printed
    assert "- scripted/translator: 1 of 4 dialogues on the board" in printed
    assert "- scripted/translator: 4 selected: 4 finished; judgments: 0 usable; left out: " \
        "2 conflict, 1 no feedback turn" in printed
    no_feedback = by_text[query("It was a fine coffee maker.")].name
    assert f"  - no feedback turn (the dialogue has no feedback turn (no feedback word in its " \
        f"queries)): {no_feedback}" in printed
    assert "  - conflict (every sense of the feedback word was already in the answer (1.0's " \
        "conflict): the dialogue stopped, no feedback to check): " in printed
    assert data["rows"][0]["accounting"]["items"] == {"conflict": 2, "no feedback turn": 1}


# -- a public 1.0 email file whose run's events are damaged afterwards -----------------------
EMAIL = ("Please write me an email to my friend Mark. Tell him we are putting together a "
         "softball team and would like him to join. Sign the email as Cameron.")


def email_line(name: str) -> str:
    return json.dumps({
        "system_prompt": "You are a helpful assistant.", "domain": "friend",
        "feedbacks": {"choices": ["Greetings"], "checker": "greetings"},
        "feedback_prompt": "When writing my emails to my friends, please start the email with "
                           "the greetings: \n\"{choice}\"",
        "queries": [EMAIL.replace("Mark", name), "[MAYBE FEEDBACK]",
                    "What is the Balfour Declaration?", EMAIL.replace("Mark", name)]})


def greeter(request) -> str:
    said = [m.content for m in request.messages if m.role == "user"]
    if "email" not in said[-1]:
        return "A 1917 statement of British policy."
    return ("Greetings" if any("Greetings" in s for s in said) else "Hi") + \
        " Mark!\n\nJoin our team.\n\nCameron"


def test_a_run_whose_events_have_a_damaged_line_is_named_damaged(tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.setitem(SCRIPTS, "greeter", lambda: ScriptedBackend(
        {ANSWER_TAG: greeter}, model_id="scripted/greeter"))
    items = tmp_path / "email.memory.NC-1.jsonl"
    items.write_text("\n".join(email_line(n) for n in ("Mark", "Ann", "Joe")) + "\n",
                     encoding="utf-8")
    out = tmp_path / "email"
    assert main(["refutebench", "--items", str(items), "--model", "scripted/greeter",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    printed, _ = board(out, capsys)
    assert "- scripted/greeter: 3 selected: 3 finished; judgments: 0 usable\n" in printed
    first, second, _ = runs(out)

    def damage(run_dir, change) -> int:
        """Rewrite the rule_feedback line in place (still a whole line); its line number."""
        path = run_dir / "events.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if '"rule_feedback"' in line)
        lines[at] = change(lines[at])
        path.write_text("".join(lines), encoding="utf-8")
        return at + 1

    torn = damage(first, lambda line: line[: len(line) // 2] + "\n")  # a mid-file cut
    odd = damage(second, lambda line: line.replace('"given"', '"perhaps"'))  # unknown outcome
    printed, data = board(out, capsys)
    assert "- scripted/greeter: 1 of 3 dialogues on the board" in printed
    assert "3 selected: 1 finished, 2 damaged; judgments: 0 usable\n" in printed
    assert f"  - damaged (events.jsonl line {torn}: unreadable: " in printed
    assert f"(remove its run directory and run again)): {first.name}" in printed
    assert f"  - damaged (events.jsonl line {odd}: unreadable: " in printed
    # not mistaken for a dialogue with nothing to check, or for one run before the 1.0 rules
    assert "nothing to check" not in printed and "undecided" not in printed
    assert data["rows"][0]["accounting"]["runs"] == {"finished": 1, "damaged": 2}


def test_an_item_two_directories_of_one_label_hold_is_counted_once_and_said(tmp_path, finished,
                                                                           capsys):
    import shutil

    again = tmp_path / "again"
    shutil.copytree(finished, again)  # the same model's same items under the same label
    printed, data = boards([finished, again], capsys)
    # was n=6 and 54 judgments, while the row's Δ column said n=3
    assert "| scripted/refutebench | 5.00 n=3 | 5.00 n=3 | 0.00 n=3 |" in printed
    assert "- scripted/refutebench: 3 of 3 dialogues on the board, 0 of 27 judgments" in printed
    assert "- scripted/refutebench: 3 selected (and 3 again by another directory, counted " \
        "once): 3 finished; judgments: 27 usable\n" in printed
    assert f"  - duplicate (also selected by {finished}: counted once, from there): " in printed
    assert data["rows"][0]["dialogues"] == 3
    assert main(["refutebench-board", str(finished), str(finished)]) == 2
    assert capsys.readouterr().err.strip().endswith("is given twice: each directory once")


def test_a_1_0_file_run_into_two_directories_of_one_label_is_listed_once(tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setitem(SCRIPTS, "greeter", lambda: ScriptedBackend(
        {ANSWER_TAG: greeter}, model_id="scripted/greeter"))
    items = tmp_path / "email.memory.NC-1.jsonl"
    items.write_text("\n".join(email_line(n) for n in ("Mark", "Ann")) + "\n", encoding="utf-8")
    for out in ("one", "two"):
        assert main(["refutebench", "--items", str(items), "--model", "scripted/greeter",
                     "--out", str(tmp_path / out)]) == 0
    capsys.readouterr()
    printed, _ = boards([tmp_path / "one", tmp_path / "two"], capsys)
    # was "4 of 4" with every item listed twice
    assert "| scripted/greeter | email.memory.NC-1.jsonl | greetings | 1.00 n=2 |" in printed
    assert "- scripted/greeter: 2 of 2 dialogues on the board" in printed
    assert "2 selected (and 2 again by another directory, counted once)" in printed


# -- rows are (label, configuration) (evaluation/kit/rows.py) ---------------------------------
def test_one_label_over_two_models_is_two_rows_named_by_the_model_in_either_order(tmp_path,
                                                                                 finished,
                                                                                 capsys):
    stubborn = tmp_path / "stubborn"
    assert refutebench(stubborn, "--model", "scripted/refutebench-stubborn", "--label", R) == 0
    capsys.readouterr()
    alone = {}
    for out in (finished, stubborn):
        alone[out] = boards([out], capsys)[1]["rows"][0]["cells"]
    shown = []
    for order in ([finished, stubborn], [stubborn, finished]):
        printed, data = boards(order, capsys)
        # was one row holding only the first directory given, nothing said of the model
        rows = {row["label"]: row for row in data["rows"]}
        assert set(rows) == {f"{R} (model {R})", f"{R} (model {R}-stubborn)"}
        assert rows[f"{R} (model {R})"]["cells"] == alone[finished]
        assert rows[f"{R} (model {R}-stubborn)"]["cells"] == alone[stubborn]
        assert f"- {R}: 2 configurations under one label (they differ in model): not pooled, " \
            "a row each" in printed
        shown.append(sorted(line for line in printed.splitlines() if line.startswith("| ")))
    assert shown[0] == shown[1]


def test_two_public_1_0_files_sharing_a_line_are_each_scored_on_their_own(tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setitem(SCRIPTS, "translator", lambda: ScriptedBackend(
        {ANSWER_TAG: translator}, model_id="scripted/translator"))
    shared = line("coffee", "It was a fine coffee maker for a while.")  # in both files
    files = {"en-zh.memory.NC-1.jsonl": [shared, line("coffee", "A coffee maker for a day.")],
             "en-zh.generalization.NC-1.jsonl": [line("coffee", "Any coffee maker for me."),
                                                 shared]}
    alone = {}
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = tmp_path / name.split(".")[1]
        assert main(["refutebench", "--items", str(tmp_path / name), "--model",
                     "scripted/translator", "--out", str(out)]) == 0
        capsys.readouterr()
        alone[name] = boards([out], capsys)[1]["v1"]
    printed, data = boards([tmp_path / "memory", tmp_path / "generalization"], capsys)
    # was one row of 3 dialogues, the shared line's second run dropped as a "duplicate"
    assert "duplicate" not in printed
    for name in files:
        row = f"scripted/translator (items {name})"
        assert f"- {row}: 2 selected: 2 finished; judgments: 0 usable\n" in printed
        assert [{**c, "label": "?"} for c in data["v1"] if c["file"] == name] == \
            [{**c, "label": "?"} for c in alone[name]]
        assert [c["met"]["n"] for c in alone[name]] == [2]
    assert [row["dialogues"] for row in data["rows"]] == [2, 2]


def test_two_public_1_0_sets_compare_by_the_boards_measure(tmp_path, capsys, monkeypatch):
    # once "0 items with a value" and exit 0: a 1.0 set has no judged rating
    monkeypatch.setitem(SCRIPTS, "translator", lambda: ScriptedBackend(
        {ANSWER_TAG: translator}, model_id="scripted/translator"))
    items = tmp_path / "en-zh.memory.NC-1.jsonl"
    items.write_text("\n".join(line("coffee", f"A fine coffee maker for {n} days.")
                               for n in ("two", "three", "four")) + "\n", encoding="utf-8")
    for out in ("a", "b"):
        assert main(["refutebench", "--items", str(items), "--model", "scripted/translator",
                     "--label", out, "--out", str(tmp_path / out)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    printed = capsys.readouterr().out
    assert "B - A in share of 1.0 rule checks met (0-1)" in printed
    assert "- matched: 3 item(s)" in printed
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--metric",
                 "overall"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a RefuteBench 1.0 set (rule-checked, no judge)" in err
