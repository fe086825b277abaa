"""Events of RefuteBench dialogues (tasks/refutebench): what the refuter wrote before cleaning,
and how the rule-based user of a public 1.0 file decided each feedback slot.

The cleaned refutation is the user's next Utterance; RefutationWritten keeps, beside it, the
refuter's raw answer, the focus it was given and whether it was asked for a standing rule, so a
reader can see what the cleaning removed and which schedule the refuter followed. RuleFeedback
keeps what a 1.0 feedback asked for, or why a slot said nothing, or that the dialogue stopped.

Its kinds reach the log reader through the entry point `refutebench` of the group
`sandbox.events` (pyproject.toml): the reader imports this module on the first kind it does not
know.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sandbox.events.base import Event


class RefutationWritten(Event):
    """The refuter (`agent`) wrote refutation `k` (1-based) of the dialogue."""

    kind: Literal["refutation_written"] = "refutation_written"
    k: int
    focus: str
    standing: bool = False  # persistent setting: asked for a rule that holds from now on
    raw: str
    cleaned: str
    fallback: bool = False  # no usable refutation: the declared one was said instead


class RuleFeedback(Event):
    """The rule-based user of a public 1.0 dialogue (tasks/refutebench/v1.py, v1_email.py)
    decided feedback slot `k` (1-based), plan step `step` of the header's `config.plan`:
    `given` (and what: the MT words' required translations, or the email checker's choice),
    `skipped` (the answer before already met every choice: 1.0 says nothing there, and the
    plan's next request follows), or `conflict` (a word's every sense was already in the answer
    before: 1.0 marks the dialogue <CONFLICT> and stops it). A scorer reads what was asked for
    here: the draws come from the episode's generator and cannot be recomputed from the
    answers."""

    kind: Literal["rule_feedback"] = "rule_feedback"
    step: int
    k: int
    outcome: Literal["given", "skipped", "conflict"]
    targets: dict[str, str] = Field(default_factory=dict)  # MT: word -> required translation
    checker: str = ""  # email
    choice: str = ""  # email: the choice asked for
    said: str = ""  # the feedback turn, when given
