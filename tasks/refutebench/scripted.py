"""Scripted stand-ins for RefuteBench's dialogue roles, for tests and dry runs.

Deterministic: the same prompt gives the same answer.

- The refuter writes "Honestly, the <focus> ..." demands, numbered after its history, and a
  "From now on" rule when asked for a standing one; it wraps the demand in a label and quotes,
  which the cleaning removes.
- The assistant answers a query with "Answer to ..." plus one "adjusted for: ..." clause per
  refutation it has seen; after an unrelated request it forgets them (so the persistent C=3
  re-ask loses what C=0 keeps). `stubborn` never adjusts.
"""

from __future__ import annotations

import re

from sandbox.llm import LLMRequest

from .refuter import REFUTER_TAG
from .scenario import ANSWER_TAG

MARK = "Honestly,"


def refuter(request: LLMRequest) -> str:
    system, user = request.messages[0].content, request.messages[-1].content
    focus = re.search(r"about the answer's ([a-z ]+)\.", system)
    made = len(re.findall(r"^\d+\. ", user, re.MULTILINE))
    rule = "From now on, for this kind of request: " if "standing rule" in system else ""
    return (f'Refutation: "{rule}{MARK} the {focus.group(1) if focus else "style"} is a '
            f'letdown; make it feel different, demand {made + 1}!"')


def assistant(stubborn: bool = False):
    def answer(request: LLMRequest) -> str:
        users = [m.content for m in request.messages if m.role == "user"]
        query = users[0]
        last = users[-1]
        if last != query and MARK not in last:
            return f"Sure. About '{last[:30]}': here is a short helpful answer."
        kept: list[str] = []
        for said in users[1:]:
            if MARK in said:
                kept.append(said.split(MARK, 1)[1].strip()[:40])
            elif said != query:
                kept = []  # an unrelated request: the scripted model forgets the feedback
        head = f"Answer to '{query.splitlines()[0][:40]}'"
        if stubborn or not kept:
            return head + "."
        return head + "".join(f"; adjusted for: {k}" for k in kept) + "."
    return answer


def dialogue_answers(stubborn: bool = False) -> dict:
    """Tag -> answer function for the refuter and the model under test."""
    return {REFUTER_TAG: refuter, ANSWER_TAG: assistant(stubborn)}
