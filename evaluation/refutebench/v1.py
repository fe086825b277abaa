"""Scoring the public RefuteBench 1.0 MT files without a judge: is the required translation of
the feedback word in the final answer? (1.0's response rate for MT; the required translation is
recomputed from the first answer by the rule the user followed, tasks.refutebench.target.)"""

from __future__ import annotations

from tasks.refutebench import V1Dialogue, target

from .judge import RefuteDialogue

RULE = "v1_rule"


def rule_met(d: RefuteDialogue) -> float | None:
    """1.0 when the final answer contains the required translation, 0.0 when not, None for a
    dialogue that did not get that far."""
    v1 = d.dialogue.config.get("v1")
    if not v1 or not d.answers or d.final is None:
        return None
    required = target(V1Dialogue.model_validate(v1["dialogue"]), d.answers[0])
    return 1.0 if required in d.final else 0.0
