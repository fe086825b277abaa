"""The public RefuteBench 1.0 email files, run unchanged: single-feedback dialogues
(`data/email/single/email.{memory,generalization}.NC-{0..3}.jsonl` of ElliottYan/RefuteBench)
and multi-feedback ones (`data/email/multi/email.jsonl`).

One JSON object per line. Single: `system_prompt`, `domain` (work, friend, family, school),
`feedbacks` ({choices: [...], checker}), `feedback_prompt` ("When writing my emails to my
friends, ... {choice} ..."), `queries` ([an email request, "[MAYBE FEEDBACK]", k unrelated
requests, the final request]: the first again in the memory files, another email of the domain
in the generalization files). Multi: `feedbacks` and `feedback_prompts` are lists of 4, and the
queries are 5 email requests with a slot after each of the first 4; slot j gives feedback j.

The feedback is 1.0's rule (src/test_email.py, test_email_multi.py), with no refuter model: at a
slot, the choices the answer just before does not meet yet (tasks.refutebench.email_rules) are
the candidates, and one is drawn by the episode's seeded generator (1.0 draws unseeded); when
the answer already meets every choice, the slot says nothing and the next request follows, as
in 1.0. Every later email request is checked without a judge: does its answer meet every
choice given so far? (evaluation.refutebench.v1)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .email_rules import check_choice, met

FEEDBACK_SLOT = "[MAYBE FEEDBACK]"
CHOICE = "{choice}"

Checker = Literal["greetings", "signature", "title", "response_language", "sentence"]  # CHECKERS


class EmailRule(BaseModel):
    """One feedback: which checker, and the choices it may ask for."""

    model_config = ConfigDict(extra="ignore")

    choices: list[str] = Field(min_length=1)
    checker: Checker

    @model_validator(mode="after")
    def _checkable(self) -> EmailRule:
        for choice in self.choices:
            check_choice(self.checker, choice)
        return self


class _Email(BaseModel):
    model_config = ConfigDict(extra="ignore")

    system_prompt: str
    domain: str = Field(min_length=1)
    queries: list[str] = Field(min_length=3)

    @property
    def rules(self) -> list[tuple[EmailRule, str]]:
        """(feedback, its prompt) of each slot, in order."""
        raise NotImplementedError

    @property
    def multi(self) -> bool:
        return False

    @property
    def word(self) -> str:
        """What the dialogue is about, for ids and the board: its domain and checker."""
        return f"{self.domain}-{'multi' if self.multi else self.rules[0][0].checker}"


def _with_choice(prompt: str) -> str:
    if CHOICE not in prompt:
        raise ValueError(f"a feedback prompt has a {CHOICE} slot")
    return prompt


class EmailSingle(_Email):
    """A line of a 1.0 email single-feedback file."""

    feedbacks: EmailRule
    feedback_prompt: str

    @field_validator("feedback_prompt")
    @classmethod
    def _prompt(cls, prompt: str) -> str:
        return _with_choice(prompt)

    @property
    def rules(self) -> list[tuple[EmailRule, str]]:
        return [(self.feedbacks, self.feedback_prompt)]


class EmailMulti(_Email):
    """A line of the 1.0 email multi-feedback file."""

    feedbacks: list[EmailRule] = Field(min_length=1)
    feedback_prompts: list[str] = Field(min_length=1)

    @field_validator("feedback_prompts")
    @classmethod
    def _prompts(cls, prompts: list[str]) -> list[str]:
        return [_with_choice(p) for p in prompts]

    @property
    def multi(self) -> bool:
        return True

    @property
    def rules(self) -> list[tuple[EmailRule, str]]:
        return list(zip(self.feedbacks, self.feedback_prompts, strict=False))


EmailDialogue = EmailSingle | EmailMulti


def is_email(data: dict) -> bool:
    """Whether a 1.0 line is in the email format (MT lines map words to senses)."""
    feedbacks = data.get("feedbacks")
    return "domain" in data or "feedback_prompts" in data or isinstance(feedbacks, list) or \
        (isinstance(feedbacks, dict) and ("checker" in feedbacks or "choices" in feedbacks))


def email_model(data: dict) -> type[_Email]:
    multi = "feedback_prompts" in data or isinstance(data.get("feedbacks"), list)
    return EmailMulti if multi else EmailSingle


def email_dialogue(data: dict) -> EmailDialogue:
    """A saved email dialogue read back (it was validated when its file was loaded)."""
    return email_model(data).model_validate(data)


def email_problem(dialogue: EmailDialogue) -> tuple[str, str] | None:
    """(field, reason) when the dialogue's slots and feedbacks do not pair up, else None."""
    if isinstance(dialogue, EmailMulti) and \
            len(dialogue.feedbacks) != len(dialogue.feedback_prompts):
        return "feedback_prompts", (f"{len(dialogue.feedbacks)} feedbacks but "
                                    f"{len(dialogue.feedback_prompts)} feedback prompts")
    slots = dialogue.queries.count(FEEDBACK_SLOT)
    if slots != len(dialogue.rules):
        return "queries", (f"expected {len(dialogue.rules)} {FEEDBACK_SLOT!r} slot(s), one per "
                           f"feedback, found {slots}")
    return None


def email_slots(dialogue: EmailDialogue) -> list[int | None]:
    """For every query, the index of the feedback its slot gives (None for a query)."""
    out: list[int | None] = []
    slot = 0
    for query in dialogue.queries:
        out.append(slot if query == FEEDBACK_SLOT else None)
        slot += query == FEEDBACK_SLOT
    return out


def unmet_choices(dialogue: EmailDialogue, slot: int, answer_before: str) -> list[str]:
    """The choices of feedback `slot` that the answer before it does not meet, in file order."""
    rule, _ = dialogue.rules[slot]
    return [c for c in rule.choices if not met(rule.checker, c, answer_before)]


def choose(dialogue: EmailDialogue, slot: int, answer_before: str,
           rng: np.random.Generator) -> str | None:
    """The choice feedback `slot` asks for, drawn from the unmet ones; None when the answer
    before meets every choice (1.0 then gives no feedback at that slot)."""
    unmet = unmet_choices(dialogue, slot, answer_before)
    return unmet[int(rng.integers(len(unmet)))] if unmet else None


def email_feedback_text(dialogue: EmailDialogue, slot: int, choice: str) -> str:
    """The feedback turn: the slot's prompt with its choice."""
    return dialogue.rules[slot][1].replace(CHOICE, choice)
