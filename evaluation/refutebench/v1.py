"""Scoring the public RefuteBench 1.0 MT files without a judge: after a word's feedback, does
every later query that has the word get an answer with the required translation? (1.0's
response rate for MT.) The required translation is recomputed from the answer before the
feedback by the rule the user followed (tasks.refutebench.target)."""

from __future__ import annotations

from tasks.refutebench import ASSISTANT, V1Dialogue, english_words, target

from .judge import RefuteDialogue

RULE = "v1_rule"
CHECKED = ("sentence", "re_ask", "probe")  # queries to translate (not unrelated requests)


def rule_checks(d: RefuteDialogue) -> list[bool]:
    """One check per (later query, required word in it): is the translation in its answer?"""
    config = d.dialogue.config
    dialogue = V1Dialogue.model_validate(config["v1"]["dialogue"])
    said = {u.turn: u.text for u in d.dialogue.utterances}
    required: dict[str, str] = {}
    checks: list[bool] = []
    answer = ""
    for turn, step in enumerate(config["plan"]):
        if turn not in said:
            break
        if step["speaker"] == ASSISTANT:
            answer = said[turn]
        elif step["kind"] == "refutation":
            for word in step["words"]:
                required[word] = target(dialogue, answer, word)
        elif step["kind"] in CHECKED and turn + 1 in said:
            words = english_words(dialogue.queries[step["query"]])
            checks += [tgt in said[turn + 1] for word, tgt in required.items() if word in words]
    return checks


def rule_met(d: RefuteDialogue) -> float | None:
    """The share of checks met (a single-feedback file has one: the final answer), None when
    nothing could be checked."""
    if not d.dialogue.config.get("v1"):
        return None
    checks = rule_checks(d)
    return sum(checks) / len(checks) if checks else None
