"""A public RefuteBench 1.0 email file runs unchanged through `sandbox refutebench --items`: the
feedback is 1.0's rule (a choice the answer before does not meet; none when it meets them all),
every later email is checked by the feedback's checker as 1.0's src/instructions_checker.py
decides (langdetect, punkt) without a judge, and the board gives the share met per kind of
feedback and over all; a line with a missing or unusable field stops with one line, exit 2."""

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
    choose,
    count_sentences,
    email_dialogue,
    email_met,
    language_of,
    load_v1,
)

SOFTBALL = ("Please write me an email to my friend Mark. Tell him we are putting together a "
            "softball team and would like him to join. Sign the email as Cameron.")
RULES = {  # checker -> (choices, the file's feedback prompt), in the public files' wording
    "greetings": (["Greetings"], "When writing my emails to my friends, please start the "
                                 "email with the greetings: \n\"{choice}\""),
    "signature": (["Peace,\nBob"], "When writing my emails to my friends, please use the "
                                   "following signature: \"\n{choice}\""),
    "title": (["wrapped in double angular brackets, i.e. <<subject>>",
               "wrapped in double asterisks, i.e. **subject**."],
              "When writing my emails to my friends, the email must contain a subject that "
              "{choice}."),
    "response_language": (["English", "Chinese"], "When writing my emails to my friends, please "
                                                  "make the email in only {choice}, no other "
                                                  "language is allowed."),
    "sentence": (["less than 15 sentences", "at least 15 sentences"],
                 "When writing my emails to my friends, the email should contain {choice}."),
}


def single(checker: str, **change) -> str:
    choices, prompt = RULES[checker]
    data = {"system_prompt": "You are a helpful assistant.", "domain": "friend",
            "feedbacks": {"choices": choices, "checker": checker}, "feedback_prompt": prompt,
            "queries": [SOFTBALL, "[MAYBE FEEDBACK]", "What is the Balfour Declaration?",
                        SOFTBALL]}
    data.update(change)
    return json.dumps(data, ensure_ascii=False)


def multi(checkers: list[str]) -> str:
    emails = [SOFTBALL.replace("Mark", name) for name in ("Mark", "Ann", "Joe", "Sue", "Tom")]
    queries = [q for e in emails for q in (e, "[MAYBE FEEDBACK]")][:-1]
    return json.dumps({"system_prompt": "You are a helpful assistant.", "domain": "friend",
                       "feedbacks": [{"choices": RULES[c][0], "checker": c} for c in checkers],
                       "feedback_prompts": [RULES[c][1] for c in checkers],
                       "queries": queries}, ensure_ascii=False)


def emailer(request) -> str:
    """Keeps the greetings, signatures and Chinese it was asked for in every later email; never
    writes a subject line nor counts sentences (so those checks fail)."""
    said = [m.content for m in request.messages if m.role == "user"]
    last = said[-1]
    if last.startswith("When writing"):
        return "Understood, I will do that from now on."
    if "email" not in last:
        return "It was a 1917 statement of British policy."
    rules = "\n".join(s for s in said if s.startswith("When writing"))
    greeting = re.search(r'greetings: \n"(.*)"', rules)
    signature = re.search(r'signature: "\n(.*?)"', rules, re.DOTALL)
    name = re.search(r"my friend (\w+)", last).group(1)
    if "only Chinese" in rules:
        return f"{name}，你好！我们正在组建一支垒球队，希望你加入。卡梅伦"
    return (f"{greeting.group(1) if greeting else 'Hi'} {name}!\n\nWe are putting together a "
            "softball team. We would love you to join us. Games are on Tuesday.\n\n"
            f"{signature.group(1) if signature else 'Best,' + chr(10) + 'Cameron'}")


@pytest.fixture
def scripted_emailer(monkeypatch):
    monkeypatch.setitem(SCRIPTS, "emailer", lambda: ScriptedBackend(
        {ANSWER_TAG: emailer}, model_id="scripted/emailer"))


@pytest.mark.parametrize("checker, choice, answer, ok", [
    ("greetings", "Greetings", "Subject: team\n\nGreetings, Mark!", True),
    ("greetings", "Greetings", "Hi Mark, how are you?", False),
    ("greetings", "I hope you're coping well during these challenging times",
     "Dear Ann,\nI hope you're coping well during these challenging times.", True),
    # 1.0 compares as written: a curly apostrophe or a line break is another greeting
    ("greetings", "I hope you're coping well during these challenging times",
     "Dear Ann,\nI hope you’re coping well during these challenging times.", False),
    ("greetings", "I hope you're coping well during these challenging times",
     "Dear Ann,\nI hope you're coping well during\nthese challenging times.", False),
    ("greetings", "Hello and best wishes to you.", "HELLO AND BEST WISHES TO YOU!", True),
    ("signature", "Peace,\nBob", "See you there.\n\npeace,\nbob", True),
    ("signature", "Peace,\nBob", "See you there.\n\nPeace,\n\nBob", False),
    ("signature", "Peace,\nBob", "See you there. Peace, Bob", False),
    ("title", "wrapped in double angular brackets, i.e. <<subject>>",
     "<<Join our softball team>>\n\nHi Mark", True),
    ("title", "wrapped in double angular brackets, i.e. <<subject>>",
     "Subject: Join our softball team\n\n<< >>", False),
    ("title", "wrapped in double asterisks, i.e. **subject**.",
     "**Subject: Softball**\nHi Mark", True),
    ("title", "wrapped in double asterisks, i.e. **subject**.", "*Softball*\nHi Mark", False),
    ("response_language", "German", "Lieber Mark, wir gründen eine Mannschaft und ich hoffe, "
                                    "dass du dabei bist. Bitte sag mir Bescheid.", True),
    ("response_language", "French", "Bonjour Marc, nous avons une équipe et je pense que tu "
                                    "es le bienvenu pour jouer avec nous.", True),
    ("response_language", "French", "Hola Marcos, estamos formando un equipo de softbol y nos "
                                    "encantaría que te unieras.", False),  # Spanish
    ("response_language", "English", "Thanks! Cheers, Bob", True),  # no function word needed
    ("response_language", "Chinese", "马克你好！我们正在组建一支垒球队，希望你加入。", True),
    ("response_language", "Chinese", "馬克你好！我們正在組建一支壘球隊，希望你加入。",
     False),  # Traditional: langdetect's zh-tw, not the zh-cn 1.0 asks for
    ("response_language", "German", "", True),  # nothing to detect: 1.0 counts it as met
    ("response_language", "German", "Dear Mark, we are starting a team and you are welcome.",
     False),
    ("sentence", "less than 3 sentences", "Dear Mr. Smith, thanks for the ball. See you!",
     True),
    ("sentence", "less than 3 sentences", "One. Two! Three? Best,\nCameron", False),
    ("sentence", "at least 3 sentences", "Hi Mark, the fee is $70.50 per player. Bye.",
     False),
    # punkt keeps an abbreviation it knows together with the next word
    ("sentence", "less than 3 sentences", "We meet at 3 p.m. on Tuesday in the U.S. office. "
                                          "It is us vs. them.", True),
    ("sentence", "less than 1 sentences", "", True),
])
def test_each_checker_decides_as_1_0_on_hand_made_answers(checker, choice, answer, ok):
    assert email_met(checker, choice, answer) is ok


def test_sentences_and_languages_are_counted_and_told_as_documented():
    # a line break ends nothing: "Dear Mark, The fee is $70.50." is punkt's first sentence
    assert count_sentences("Dear Mark,\n\nThe fee is $70.50. See you on Tue.\n\nBest,\nCam") \
        == 3
    assert count_sentences("") == 0 and count_sentences("   ") == 0
    assert count_sentences("Meet me at 3 p.m. tomorrow. Bring the U.S. flag.") == 2
    assert language_of("The team is ready and we would love you to join.") == "en"
    assert language_of("12345 !!!") is None
    assert language_of("Hola amigo, ¿cómo estás? Espero que todo vaya bien.") == "es"


# NLTK 3.8.1's punkt (english parameters) on each text, taken from nltk==3.8.1 itself
@pytest.mark.parametrize("text, sentences", [
    # punctuation after the last boundary is a sentence of its own in 3.8.1
    ("Happy New Year!! I hope you are well. See you soon!!", 4),
    ("What?!", 2),
    ("Really??", 2),
    ("Wow!!!", 2),
    ("Hi!! ", 2),
    ("!!!", 3),
    # inside a text the run stays with its sentence
    ("Great job!!! Thanks", 2),
    ("Really?! Yes.", 2),
    ('He said "wow!!" and left.', 2),
    ("Done!!)", 1),
    # every period of a spaced ellipsis may end a sentence; an unspaced one ends it once
    ("Wait . . . what?", 4),
    ("Oh no... I see.", 2),
])
def test_sentences_are_counted_as_nltk_3_8_1_counts_them_at_repeated_punctuation(text,
                                                                                sentences):
    assert count_sentences(text) == sentences


def test_an_email_ending_in_two_exclamation_marks_is_judged_on_nltk_3_8_1s_count():
    text = "Happy New Year!! I hope you are well. See you soon!!"
    assert email_met("sentence", "at least 4 sentences", text)
    assert not email_met("sentence", "less than 4 sentences", text)


def test_the_feedback_asks_for_a_choice_the_answer_before_does_not_meet():
    rng = np.random.default_rng(0)
    dialogue = email_dialogue(json.loads(single("sentence")))
    # three sentences meet "less than 15": only "at least 15" is left to ask for
    assert choose(dialogue, 0, "One. Two. Three.", rng) == "at least 15 sentences"
    greeting = email_dialogue(json.loads(single("greetings")))
    assert choose(greeting, 0, "Greetings, Mark!", rng) is None  # all met: no feedback


def test_a_1_0_email_file_runs_unchanged_and_is_rule_checked(scripted_emailer, tmp_path,
                                                             capsys):
    path = tmp_path / "email.memory.NC-1.jsonl"
    path.write_text("\n".join(single(c) for c in RULES) + "\n", encoding="utf-8")
    items = load_v1(path)
    assert len(items) == 5 and items.ids[0].startswith("friend-greetings_")
    out = tmp_path / "email"
    assert main(["refutebench", "--items", str(path), "--model", "scripted/emailer",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dialogues run 5, skipped 0; judgments made 0" in printed  # no judge needed
    for feedback, share in [("greetings", "1.00 n=1"),
                            ("response_language", "1.00 n=1"),
                            ("sentence", "0.00 n=1"),
                            ("signature", "1.00 n=1"),
                            ("title", "0.00 n=1"), ("all", "0.60")]:
        assert f"| scripted/emailer | email.memory.NC-1.jsonl | {feedback} | {share}" in printed
    run = load_run(out / "runs" / items.ids[0])
    said = [e.text for e in run.events if e.kind == "utterance"]
    assert len(said) == 8 and said[0] == SOFTBALL and said[-2] == SOFTBALL
    assert said[2] == 'When writing my emails to my friends, please start the email with ' \
                      'the greetings: \n"Greetings"'
    assert said[-1].startswith("Greetings Mark!")
    decided = [e for e in run.events if e.kind == "rule_feedback"]
    assert [(e.outcome, e.checker, e.choice) for e in decided] == [("given", "greetings",
                                                                    "Greetings")]
    language = load_run(out / "runs" / items.ids[3])
    said = [e.text for e in language.events if e.kind == "utterance"]
    assert "in only Chinese," in said[2]  # the first answer is in English: that one is met
    assert said[-1].startswith("Mark，你好")


def test_an_answer_that_meets_every_choice_gets_no_feedback_turn(scripted_emailer, tmp_path,
                                                               capsys):
    # the emailer opens with "Hi" and signs "Best,\nCameron": both choices already met
    path = tmp_path / "email.memory.NC-1.jsonl"
    path.write_text(single("greetings", feedbacks={"choices": ["Hi", "Hi "],
                                                   "checker": "greetings"}) + "\n",
                    encoding="utf-8")
    out = tmp_path / "met"
    assert main(["refutebench", "--items", str(path), "--model", "scripted/emailer",
                 "--out", str(out)]) == 0
    run_dir = out / "runs" / load_v1(path).ids[0]
    events = load_run(run_dir).events
    said = [e.text for e in events if e.kind == "utterance"]
    assert said[::2] == [SOFTBALL, "What is the Balfour Declaration?", SOFTBALL]  # no slot
    assert len(said) == 6
    assert [e.outcome for e in events if e.kind == "rule_feedback"] == ["skipped"]
    d = read_refute_dialogue(run_dir)
    assert feedback_outcomes(d) == {"skipped": 1} and rule_rates(d) == {}


def test_a_multi_feedback_email_keeps_every_feedback_in_force(scripted_emailer, tmp_path,
                                                             capsys):
    path = tmp_path / "multi" / "email.jsonl"
    path.parent.mkdir()
    path.write_text(multi(["greetings", "title", "signature", "sentence"]) + "\n",
                    encoding="utf-8")
    out = tmp_path / "m"
    assert main(["refutebench", "--items", str(path), "--model", "scripted/emailer",
                 "--out", str(out), "--label", "emailer"]) == 0
    printed = capsys.readouterr().out
    # greetings checked on emails 2-5 (met), title on 3-5 (never), signature on 4-5 (met),
    # sentence count on 5 (the answer before met "less than 15", so "at least 15" was asked
    # for: not met): 6 of 10 checks
    for feedback, share in [("greetings", "1.00"), ("title", "0.00"), ("signature", "1.00"),
                            ("sentence", "0.00"), ("all", "0.60 n=1")]:
        assert f"| emailer | email.jsonl | {feedback} | {share}" in printed
    run = load_run(out / "runs" / load_v1(path).ids[0])
    said = [e.text for e in run.events if e.kind == "utterance"]
    assert len(said) == 18 and said[-1].startswith("Greetings Tom!") and "Peace,\nBob" in said[-1]


@pytest.mark.parametrize("lines, where", [
    ([single("greetings"), json.dumps({k: v for k, v in json.loads(single("title")).items()
                                       if k != "feedback_prompt"})],
     "line 2.feedback_prompt: Field required"),
    ([single("greetings", domain=None)], "line 1.domain"),
    ([single("greetings", feedbacks={"choices": ["Hi"], "checker": "paragraph"})],
     "line 1.feedbacks.checker"),
    ([single("title", feedbacks={"choices": ["in brackets"], "checker": "title"})],
     "line 1.feedbacks: a title choice names angular brackets or asterisks"),
    ([single("sentence", feedbacks={"choices": ["a few sentences"], "checker": "sentence"})],
     "line 1.feedbacks"),
    ([single("greetings", feedback_prompt="Start with a greeting.")],
     "line 1.feedback_prompt"),
    ([single("greetings", queries=[SOFTBALL, "[MAYBE FEEDBACK]", "[MAYBE FEEDBACK]",
                                   SOFTBALL])], "line 1.queries"),
    ([json.dumps({**json.loads(multi(["greetings", "title"])), "feedback_prompts": ["{choice}"]})],
     "line 1.feedback_prompts: 2 feedbacks but 1 feedback prompts"),
    ([single("greetings"), json.dumps({"system_prompt": "x", "feedbacks": {"a": {
        "translation": ["b"]}}, "feedback_mapping_prompt": "{src} {tgt}",
        "queries": ["q", "[MAYBE FEEDBACK]", "q"]})], "line 2: an mt dialogue"),
])
def test_a_broken_1_0_email_line_is_one_line_exit_2(tmp_path, capsys, lines, where):
    path = tmp_path / "email.memory.NC-1.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["refutebench", "--items", str(path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and where in err, err
