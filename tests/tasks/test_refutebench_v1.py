"""A public RefuteBench 1.0 MT file runs unchanged through `sandbox refutebench --items`, its
feedback decided as 1.0's src/test_mt.py decides it (spaCy's English words, jieba's and
hebrew_tokenizer's target words, a random unmet sense from the episode's generator, a conflict
when every sense is there) and scored without a judge; other 1.0 formats and broken lines stop
with one line, exit 2."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from evaluation.refutebench.judge import read_refute_dialogue
from evaluation.refutebench.v1 import feedback_outcomes, rule_rates
from sandbox.app.cli import main
from sandbox.llm import SCRIPTS, ScriptedBackend
from sandbox.log import load_run
from tasks.refutebench import (
    ANSWER_TAG,
    V1Dialogue,
    draw_targets,
    has_sense,
    load_v1,
    slot_words,
    unmet_senses,
)

TEMPLATE = ("Please translate the following sentence from English into {language}.\n"
            "[English]: {text} \n[{language}]: ")
QUERY = TEMPLATE.format(language="Chinese", text="It was a fine coffee maker for a while.")
MAPPING = "In the following translations, you should translate {src} to {tgt}."


def line(**change) -> str:
    """A line of en-zh.memory.NC-1.jsonl (senses cut to the two jieba keeps whole: it splits
    咖啡树, the file's third, into 咖啡 and 树, so no answer can meet that one)."""
    data = {"system_prompt": "You are a helpful assistant.",
            "feedbacks": {"coffee": {"translation": ["咖啡", "咖啡豆"],
                                     "random": "暮气", "existence": [1, 3], "cnt": 2}},
            "feedback_prompt": "", "feedback_mapping_prompt": MAPPING,
            "queries": [QUERY, "[MAYBE FEEDBACK]", "What is Gremolata?", QUERY]}
    data.update(change)
    return json.dumps(data, ensure_ascii=False)


def dialogue(word: str, senses: list[str], text: str, language: str = "Chinese") -> V1Dialogue:
    query = TEMPLATE.format(language=language, text=text)
    return V1Dialogue.model_validate(json.loads(line(
        feedbacks={word: {"translation": senses, "random": "暮气"}},
        queries=[query, "[MAYBE FEEDBACK]", query])))


def translator(request) -> str:
    """Says 咖啡 first; after 'translate coffee to X' it writes X (until an unrelated request).
    The word leads its sentence, so jieba keeps it whole."""
    said = [m.content for m in request.messages if m.role == "user"]
    if "Gremolata" in said[-1]:
        return "An Italian herb mix."
    mapping = re.compile(r"(?:translate coffee to |coffee -> )(\S+?)\.?$", re.MULTILINE)
    if mapping.search(said[-1]):
        return "Understood."
    wanted = [m.group(1) for s in said for m in mapping.finditer(s)]
    return f"{wanted[-1] if wanted else '咖啡'}：这是一台不错的机器。"


@pytest.fixture
def scripted_translator(monkeypatch):
    monkeypatch.setitem(SCRIPTS, "translator", lambda: ScriptedBackend(
        {ANSWER_TAG: translator}, model_id="scripted/translator"))


def run(path, out, model="scripted/translator", *extra) -> None:
    assert main(["refutebench", "--items", str(path), "--model", model, "--refuter",
                 "scripted/refutebench", "--judge", "scripted/refutebench", "--out", str(out),
                 *extra]) == 0


@pytest.mark.parametrize("word, text", [
    ("country", "Zimbabwe will start a new unit by March, says the country's deputy energy "
                "minister."),  # a line of en-zh.memory.NC-0.jsonl
    ("year", "Last year's harvest was poor."),
    ("year", "A 14-year-old boy has been charged."),
    ("day", "It handles day-to-day tasks."),
    ("web", "A web-based tool."),
])
def test_a_feedback_word_inside_a_hyphenated_or_possessive_word_gets_its_feedback(word, text):
    # spaCy splits "country's" into country + 's and "day-to-day" at its hyphens, as 1.0 did
    assert slot_words(dialogue(word, ["国家"], text)) == [[], [word], []]


def test_a_feedback_word_that_is_only_part_of_a_word_gets_none():
    assert slot_words(dialogue("year", ["年"], "Yearly reports and years of data.")) == \
        [[], [], []]


def test_a_one_character_sense_is_not_met_inside_a_longer_word():
    # en-zh.memory.NC-0.jsonl, line 2: theory -> 理论, 假说, 学说, 论
    theory = dialogue("theory", ["理论", "假说", "学说", "论"], "true apart from any theory")
    answer = "这些陈述是真实的，与它们可能支持的任何理论无关。"
    assert unmet_senses(theory, "theory", answer, "zh") == ["假说", "学说", "论"]
    assert has_sense("论点与理论", "论", "zh") is False
    assert has_sense("这就是我的论。", "论", "zh") is True


def test_a_hebrew_sense_with_a_prefix_attached_is_another_word():
    house = dialogue("house", ["בית", "משכן"], "The house is big.", language="Hebrew")
    assert unmet_senses(house, "house", "הבית גדול", "he") == ["בית", "משכן"]  # ה + בית
    assert unmet_senses(house, "house", "זה בית גדול", "he") == ["משכן"]
    assert has_sense("", "בית", "he") is False


def test_the_required_sense_is_a_random_unmet_one_from_the_episode_generator():
    theory = dialogue("theory", ["理论", "假说", "学说", "论"], "any theory")
    answer = "任何理论"  # 理论 is there: the draw is among the three others
    drawn = [draw_targets(theory, ["theory"], answer, "zh", np.random.default_rng(seed))
             for seed in range(12)]
    assert {d["theory"] for d in drawn} == {"假说", "学说", "论"}  # not always the first
    again = draw_targets(theory, ["theory"], answer, "zh", np.random.default_rng(3))
    assert again == drawn[3]  # same seed, same draw


def test_every_sense_present_is_a_conflict():
    theory = dialogue("theory", ["理论", "假说"], "any theory")
    assert draw_targets(theory, ["theory"], "假说与理论", "zh", np.random.default_rng(0)) is None


def test_a_1_0_file_runs_unchanged_and_is_rule_checked(scripted_translator, tmp_path, capsys):
    path = tmp_path / "en-zh.memory.NC-1.jsonl"
    path.write_text(line() + "\n" + line() + "\n", encoding="utf-8")
    items = load_v1(path)
    assert len(items) == 2 and items.ids[1] == items.ids[0] + "-2"  # the same line twice
    assert items.items[0].language == "zh"
    out = tmp_path / "v1"
    run(path, out)
    printed = capsys.readouterr().out
    assert "dialogues run 2, skipped 0; judgments made 0" in printed  # no judge needed
    assert "| scripted/translator | en-zh.memory.NC-1.jsonl | translation | 1.00 " \
        "n=2 |" in printed
    run_dir = out / "runs" / items.ids[0]
    events = load_run(run_dir).events
    said = [e.text for e in events if e.kind == "utterance"]
    assert len(said) == 8 and said[1] == "咖啡：这是一台不错的机器。"
    # 咖啡 is a word of the first answer: the only unmet sense is 咖啡豆
    assert said[2] == "In the following translations, you should translate coffee to 咖啡豆."
    assert said[-1] == "咖啡豆：这是一台不错的机器。"
    assert said[-2] == QUERY.strip()
    decided = [e for e in events if e.kind == "rule_feedback"]
    assert [(e.outcome, e.targets, e.step) for e in decided] == [("given", {"coffee": "咖啡豆"},
                                                                   2)]
    assert feedback_outcomes(read_refute_dialogue(run_dir)) == {"given": 1}


def test_the_same_seed_gives_the_same_dialogue(scripted_translator, tmp_path):
    path = tmp_path / "en-zh.memory.NC-0.jsonl"
    senses = ["理论", "假说", "学说", "论"]
    path.write_text(line(feedbacks={"coffee": {"translation": senses}}) + "\n",
                    encoding="utf-8")
    texts = []
    for name in ("a", "b"):
        run(path, tmp_path / name, "scripted/translator", "--seed", "7")
        run_dir = tmp_path / name / "runs" / load_v1(path).ids[0]
        texts.append([e.text for e in load_run(run_dir).events if e.kind == "utterance"])
    assert texts[0] == texts[1] and "translate coffee to" in texts[0][2]


def test_every_sense_in_the_first_answer_is_a_conflict_that_stops_the_dialogue(
        scripted_translator, tmp_path, capsys):
    path = tmp_path / "en-zh.memory.NC-1.jsonl"
    path.write_text(line(feedbacks={"coffee": {"translation": ["咖啡"]}}) + "\n",
                    encoding="utf-8")
    out = tmp_path / "conflict"
    run(path, out)
    run_dir = out / "runs" / load_v1(path).ids[0]
    run_log = load_run(run_dir)
    said = [e.text for e in run_log.events if e.kind == "utterance"]
    assert said == [QUERY.strip(), "咖啡：这是一台不错的机器。"]  # 1.0 stops at <CONFLICT>
    assert [e.outcome for e in run_log.events if e.kind == "rule_feedback"] == ["conflict"]
    assert run_log.result.status == "completed"
    d = read_refute_dialogue(run_dir)
    assert feedback_outcomes(d) == {"conflict": 1} and rule_rates(d) == {}


@pytest.mark.parametrize("body, where", [
    (line(feedbacks={}), "line 1.feedbacks"),
    (json.dumps({"system_prompt": "x", "queries": [QUERY, "[MAYBE FEEDBACK]", QUERY]}),
     "line 1.feedbacks"),
    (json.dumps({"system_prompt": "x", "answers": "y", "feedbacks": "z", "queries": []}),
     "QA file"),
    (line(queries=["[MAYBE FEEDBACK]", QUERY]), "line 1.queries"),
    ("{not json", "line 1"),
    (line(queries=["Translate: hello", "[MAYBE FEEDBACK]", "Translate: hello"]),
     "cannot tell the target language"),
])
def test_a_broken_or_unsupported_1_0_line_is_one_line_exit_2(tmp_path, capsys, body, where):
    path = tmp_path / "bad.jsonl"  # no en-zh/en-he in the name: the language is the query's
    path.write_text(body + "\n", encoding="utf-8")
    assert main(["refutebench", "--items", str(path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and where in err


def test_a_multi_feedback_document_gives_feedback_where_its_words_occur(scripted_translator,
                                                                       tmp_path, capsys):
    other = QUERY.replace("It was a fine coffee maker for a while.", "The weather was cold.")
    body = line(feedback_prompt="For all translations, follow these mappings:\n",
                feedback_mapping_prompt="{src} -> {tgt}\n",
                queries=[other, "[MAYBE FEEDBACK]", QUERY, "[MAYBE FEEDBACK]", other,
                         "[MAYBE FEEDBACK]", QUERY])
    path = tmp_path / "multi" / "en-zh.jsonl"
    path.parent.mkdir()
    path.write_text(body + "\n", encoding="utf-8")
    out = tmp_path / "m"
    run(path, out)
    said = [e.text for e in load_run(out / "runs" / load_v1(path).ids[0]).events
            if e.kind == "utterance"]
    # the first slot follows a sentence without 'coffee': skipped; the third has no word left
    assert said[2] == QUERY.strip() and len(said) == 10
    assert said[4] == "For all translations, follow these mappings:\ncoffee -> 咖啡豆"
    assert said[-1] == "咖啡豆：这是一台不错的机器。"  # the later sentence with 'coffee': checked
    assert "| scripted/translator | en-zh.jsonl | translation | 1.00 n=1 |" in \
        capsys.readouterr().out


@pytest.mark.parametrize("options, refused", [
    # each ran with exit 0, the manifest recording it, every run's header saying v1
    (["--setting", "transient"], "--setting transient does not apply"),
    (["--setting", "persistent", "--distractors", "0,3"],
     "--setting persistent, --distractors 0,3 do not apply"),
    (["--tasks", "summ"], "--tasks summ does not apply"),
    (["--language", "Hebrew"], "--language Hebrew does not apply"),
    # the file's own target language applies
    (["--language", "chinese"], None),
])
def test_an_option_a_1_0_file_does_not_take_is_refused_in_one_line(scripted_translator,
                                                                   tmp_path, capsys, options,
                                                                   refused):
    path = tmp_path / "en-zh.memory.NC-1.jsonl"
    path.write_text(line() + "\n", encoding="utf-8")
    out = tmp_path / "rb"
    code = main(["refutebench", "--items", str(path), "--model", "scripted/translator",
                 "--out", str(out), *options])
    err = capsys.readouterr().err.strip()
    if refused is None:
        assert code == 0 and err == ""
        return
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{refused} to a RefuteBench 1.0 file (en-zh.memory.NC-1.jsonl runs as it is: its " \
        "own requests, feedback and setting; its target language Chinese); drop " in err
    assert err.endswith("drop them" if "do not" in refused else "drop it")
    assert not (out / "refutebench.json").exists()


def test_an_email_file_takes_no_language(tmp_path, capsys):
    email = {"system_prompt": "You are a helpful assistant.", "domain": "friend",
             "feedbacks": {"choices": ["Greetings"], "checker": "greetings"},
             "feedback_prompt": "When writing my emails to my friends, please start the email "
                                "with the greetings: \n\"{choice}\"",
             "queries": ["Write an email to Mark.", "[MAYBE FEEDBACK]", "Hi?",
                         "Write an email to Mark."]}
    path = tmp_path / "email.memory.NC-1.jsonl"
    path.write_text(json.dumps(email) + "\n", encoding="utf-8")
    assert main(["refutebench", "--items", str(path), "--language", "Chinese",
                 "--out", str(tmp_path / "rb")]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--language Chinese does not apply to a RefuteBench 1.0 file (email.memory.NC-1.jsonl "
        "runs as it is: its own requests, feedback and setting); drop it")


def test_1_0_sets_compare_by_the_1_0_boards_measure(scripted_translator, tmp_path, capsys):
    """Two 1.0 sets once compared as "0 items with a value", exit 0: they compare by the share
    of rule checks met, and a judged measure asked of them is one line naming what they take."""
    import shutil

    path = tmp_path / "en-zh.memory.NC-1.jsonl"
    path.write_text(line() + "\n" + line() + "\n", encoding="utf-8")
    out = tmp_path / "v1"
    run(path, out)
    shutil.copytree(out, tmp_path / "again")
    capsys.readouterr()
    board = tmp_path / "c.json"
    assert main(["compare", str(out), str(tmp_path / "again"), "--json", str(board)]) == 0
    data = json.loads(board.read_text())
    assert data["overall"]["n"] == 2 and data["overall"]["difference"] == 0
    for metric, said in (("overall", "a RefuteBench 1.0 set"), ("bogus", "compares one of")):
        assert main(["compare", str(out), str(tmp_path / "again"), "--metric", metric]) == 2
        [err] = capsys.readouterr().err.strip().splitlines()
        assert said in err and f"--metric {metric!r}" in err
