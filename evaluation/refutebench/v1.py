"""Scoring the public RefuteBench 1.0 files without a judge (1.0's rule-checked response rate).

MT: after a word's feedback, is the required translation a word of the answer to every later
query that has the word (the word lists of tasks/refutebench/v1_words.py, as the feedback rule
reads them)? Email: after a feedback, does every later email request get an answer that meets
the choice it asked for (tasks/refutebench/email_rules.py)? The unrelated requests in between
are not checked. What each feedback asked for is read from the run's RuleFeedback events (the
draws come from the episode's generator), and those events align the utterances with the
header's plan: a skipped slot said nothing, a conflict ended the dialogue.

A dialogue's rates: the share of its checks met (`v1_rule`), and per kind of feedback
(`v1_rule.translation`, `v1_rule.greetings`, ...) the share of that kind's checks met.
`feedback_outcomes` counts its slots by outcome (given, skipped, conflict, and `undecided`:
a slot of the plan the run reached without a decision, a run made before these events).

    from evaluation.refutebench.v1 import rule_rates, feedback_outcomes
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from sandbox.log import load_run
from tasks.refutebench import ASSISTANT, email_met, english_words, has_sense
from tasks.refutebench.events import RuleFeedback

from .judge import RefuteDialogue

RULE = "v1_rule"
TRANSLATION = "translation"  # the one kind of MT feedback
CHECKED = ("sentence", "email", "re_ask", "probe")  # requests of the task, not unrelated ones
OUTCOMES = ("given", "skipped", "conflict", "undecided")


def _decisions(d: RefuteDialogue) -> dict[int, RuleFeedback]:
    """Plan step -> the RuleFeedback the user logged for it."""
    run = load_run(d.dialogue.run_dir)
    return {e.step: e for e in run.events if isinstance(e, RuleFeedback)}


def _walk(d: RefuteDialogue, decisions: dict[int, RuleFeedback]
          ) -> Iterator[tuple[dict, str | RuleFeedback | None]]:
    """The plan's steps in order with what was said at each: the utterance, the slot's
    RuleFeedback (when it was given, it precedes the utterance), or None for a slot the run
    reached without a decision (it stops there). Ends where the run ended."""
    said = {u.turn: u.text for u in d.dialogue.utterances}
    turn, unanswered = 0, False
    for index, step in enumerate(d.dialogue.config["plan"]):
        if step["speaker"] == ASSISTANT and unanswered:
            unanswered = False
            continue
        if step["kind"] == "refutation":
            decision = decisions.get(index)
            if turn not in said and decision is None:
                return  # the run ended before this slot
            yield step, decision
            if decision is None or decision.outcome == "conflict":
                return
            if decision.outcome == "skipped":
                unanswered = True
                continue
        if turn not in said:
            return
        yield step, said[turn]
        turn += 1


def feedback_outcomes(d: RefuteDialogue) -> Counter:
    """How the dialogue's feedback slots went: given, skipped, conflict, undecided."""
    out: Counter = Counter()
    for step, what in _walk(d, _decisions(d)):
        if step["kind"] == "refutation" and not isinstance(what, str):
            out[what.outcome if what is not None else "undecided"] += 1
    return out


def rule_checks(d: RefuteDialogue) -> list[tuple[str, bool]]:
    """One check per (later request, feedback in force for it): (kind of feedback, met?)."""
    v1 = d.dialogue.config["v1"]
    email = v1.get("format", "mt") == "email"
    queries = v1["dialogue"]["queries"]
    given: list[RuleFeedback] = []
    checks: list[tuple[str, bool]] = []
    request = None  # the step of the request whose answer comes next
    for step, what in _walk(d, _decisions(d)):
        if isinstance(what, RuleFeedback):
            given += [what] if what.outcome == "given" else []
            continue
        if what is None:
            continue
        if step["speaker"] != ASSISTANT:
            request = step if step["kind"] in CHECKED else None
            continue
        if request is None:
            continue
        if email:
            checks += [(f.checker, email_met(f.checker, f.choice, what)) for f in given]
        else:
            words = set(english_words(queries[request["query"]]))
            checks += [(TRANSLATION, has_sense(what, target, v1["language"]))
                       for f in given for word, target in f.targets.items() if word in words]
        request = None
    return checks


def rule_rates(d: RefuteDialogue) -> dict[str, float]:
    """`v1_rule`: the share of all checks met (a single-feedback file has one: the final
    answer); `v1_rule.<kind>`: the share of that kind's. Empty when nothing could be checked
    (no feedback given, or no later request with its word; `feedback_outcomes` says which)."""
    if not d.dialogue.config.get("v1"):
        return {}
    checks = rule_checks(d)
    if not checks:
        return {}
    rates = {RULE: sum(ok for _, ok in checks) / len(checks)}
    for kind in dict.fromkeys(kind for kind, _ in checks):
        mine = [ok for k, ok in checks if k == kind]
        rates[f"{RULE}.{kind}"] = sum(mine) / len(mine)
    return rates
