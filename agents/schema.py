"""Answer-schema building blocks that keep a small model inside the lines.

llama.cpp turns a JSON schema into a grammar, but ignores `minimum`/`maximum`: an hour of 13
where 4-11 was asked passes the grammar and fails validation, costing a re-ask. Small integer
ranges are therefore enums, which the grammar does enforce. Strings carry a `max_length`, which
the grammar turns into a bounded repetition, so an answer cannot run on inside an open string
until it hits `max_tokens`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from sandbox.engine import Engine, Process
from sandbox.llm import LLMRequest, Message
from sandbox.prompts import render

Hour = Literal[tuple(range(24))]  # type: ignore[valid-type]
WakeHour = Literal[tuple(range(4, 12))]  # type: ignore[valid-type]
Score = Literal[tuple(range(1, 11))]  # type: ignore[valid-type]
Minutes = Literal[5, 10, 15, 20, 30, 45, 60]


# Plain prose: starts with a letter; no brackets, braces, quotes, markup or line breaks. Measured
# on the embedded 135M model, free strings filled with '[1]', '{', '```' and JSON fragments.
_PROSE = "A-Za-z0-9 ,.'():;!?&/%+-"


def text(max_length: int, min_length: int = 1) -> type:
    """A string of `min_length` to `max_length` characters of plain prose.

    The lengths are validated; the prose pattern goes into the JSON schema only, so a grammar
    (llama.cpp) or a schema-following server steers the model with it, while an answer from a
    model that ignores it (or a fallback built from user text) is still accepted."""
    pattern = f"^[A-Za-z][{_PROSE}]{{{max(0, min_length - 1)},{max_length - 1}}}$"
    return Annotated[str, Field(min_length=min_length, max_length=max_length,
                                json_schema_extra={"pattern": pattern})]


def ask(agent, engine: Engine, template: str, *, tag: str, schema, fallback,
        temperature: float, max_tokens: int, about: dict[str, str] | None = None,
        **variables) -> Process:
    """Render an agents/prompts template for `agent` and ask for an answer in `schema`.
    Returns the validated answer, or `fallback` when the model never gave one (counted).
    `about`: the facts a person answering instead of a model is shown (agents/human.py)."""
    prompt = render("agents", template, persona=agent.persona, **variables)
    completion = yield engine.ask(LLMRequest(
        messages=[Message(role="user", content=prompt)], tag=tag, agent=agent.name,
        schema=schema, fallback=fallback, temperature=temperature, max_tokens=max_tokens,
        about=about or {}))
    return completion.parsed
