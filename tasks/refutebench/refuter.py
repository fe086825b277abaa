"""The refuter: the LLM that plays a dissatisfied user and writes each refutation.

It is stateless and sees only what the paper's refuter sees (Fig. 3): the original query, the
assistant's latest answer, its own earlier refutations, and the focus it is given; never the
dialogue. Its style is always vague, abstract and emotional. In the persistent setting its
prompt gains one line asking for a standing rule ([ours], spec section 3). What it writes is
cleaned (quotes, labels such as "Refutation:", a "User:" prefix, a trailing explanation after
a blank line) and both texts are logged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render
from tasks.kit import Sampling

if TYPE_CHECKING:  # annotations only: a scorer importing the refuter's names loads no engine
    from sandbox.engine import Engine, Process

REFUTER_TAG = "refutebench.refuter"
PROMPTS = "tasks.refutebench"

_LABEL = re.compile(r"^\s*(?:\*\*)?(?:(?:new|next|my)\s+)?(?:refutation|refute|demand|"
                    r"requirement|feedback|user|response|answer)(?:\s*\d+)?(?:\*\*)?\s*[:：-]\s*",
                    re.IGNORECASE)
_QUOTES = "\"'“”‘’「」"


class Refutation(BaseModel):
    """A usable refutation: the text the user says."""

    text: str


def clean(raw: str) -> Refutation:
    """The refutation in a refuter's answer; ValueError when nothing usable is left."""
    text = raw.strip()
    for _ in range(3):  # "**Refutation:** "..." " nests a label and quotes
        text = _LABEL.sub("", text).strip().strip("*").strip().strip(_QUOTES).strip()
    text = text.split("\n\n")[0].strip()  # a note or explanation after the demand
    text = " ".join(text.split())
    if len(text) < 3:
        raise ValueError("empty refutation")
    return Refutation(text=text)


def fallback(focus: str) -> Refutation:
    """Said, and counted, when the refuter gives nothing usable after its re-asks."""
    return Refutation(text=f"No, this is not it at all. The {focus} feels completely wrong to "
                           "me. Change it.")


class Refuter:
    """Writes refutation k of a dialogue (one call each)."""

    def __init__(self, *, llm=None, sampling: Sampling, name: str = "User"):
        self.llm = llm
        self.sampling = sampling
        self.name = name

    def messages(self, query: str, response: str, history: list[str], focus: str,
                 standing: bool) -> list[Message]:
        system = render(PROMPTS, "refutebench_refuter_system.j2", focus=focus, standing=standing)
        user = render(PROMPTS, "refutebench_refuter_user.j2", query=query, response=response,
                      history=history, focus=focus)
        return [Message(role="system", content=system), Message(role="user", content=user)]

    def refute(self, engine: Engine, query: str, response: str, history: list[str], focus: str,
               standing: bool = False) -> Process:
        """A process step; returns (raw text, Refutation, whether it fell back)."""
        request = LLMRequest(
            messages=self.messages(query, response, history, focus, standing),
            tag=REFUTER_TAG, agent=self.name, parser=clean, fallback=fallback(focus),
            temperature=self.sampling.temperature, top_p=self.sampling.top_p,
            max_tokens=self.sampling.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        return completion.text, completion.parsed, "fallback" in completion.faults
