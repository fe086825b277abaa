"""Structured answers: validate, repair, retry a bounded number of times, then fall back.

Small local models and busy servers return broken JSON: fenced, with prose around it, cut off at
max_tokens, or with values outside the schema. A run must never die on that, so every answer goes
through `parse_structured`; what could not be used is counted in `Completion.faults`. Every
answer asked for is paid for: the completion returned carries the tokens of all of them
(`usage`) and how many there were (`attempts`), not the last one's alone.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

from .base import CacheMiss, Completion, LLMRequest, LLMUnavailable, RequestTooLong, Usage
from .sentences import first_sentences, next_sentence_at

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _close_truncated(text: str) -> str:
    """Close the strings, arrays and objects a truncated JSON text left open."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    repaired = text + ('"' if in_string else "")
    repaired = re.sub(r",\s*$", "", repaired.rstrip())
    return repaired + "".join(reversed(stack))


def _candidates(text: str) -> list[tuple[str, bool]]:
    """JSON texts to try, each with whether it needed repair."""
    out = [(text.strip(), False)]
    fenced = _FENCE.search(text)
    if fenced:
        out.append((fenced.group(1).strip(), True))
    start = text.find("{")
    if start >= 0:
        end = text.rfind("}")
        if end > start:
            out.append((text[start:end + 1], True))
        out.append((_close_truncated(text[start:]), True))
    return out


def parse_structured(text: str, schema: type[BaseModel]) -> tuple[BaseModel | None, list[str]]:
    """Return (validated object or None, faults seen on the way)."""
    faults: list[str] = []
    saw_json = False
    for candidate, needed_repair in _candidates(text):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            # Small models write raw newlines and tabs inside strings; accept them as a repair.
            try:
                data = json.loads(candidate, strict=False)
            except json.JSONDecodeError:
                continue
            needed_repair = True
        saw_json = True
        try:
            obj = schema.model_validate(data)
        except ValidationError:
            continue
        if needed_repair:
            faults.append("repaired")
        return obj, faults
    faults.append("off_schema" if saw_json else "malformed_json")
    return None, faults


class StructuredLLM:
    """Wrapper: gives `Completion.parsed` for schema-bound requests, never raises on bad answers.

    On an unusable answer it asks again with a different seed (bounded by `max_attempts`), then
    returns the request's fallback. Only a cache miss in cache-only mode propagates, because that
    is a failure of reproduction the user must see.
    """

    def __init__(self, inner, max_attempts: int = 3):
        self.inner = inner
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.max_attempts = max_attempts

    def complete(self, request: LLMRequest) -> Completion:
        schema = request.schema_model
        shaped = schema is not None or request.parser is not None
        faults: list[str] = []
        retries = 0
        last: Completion | None = None
        spent = Usage()  # the tokens of every answer given so far
        answered = 0

        def paid(completion: Completion, **update) -> Completion:
            return completion.model_copy(update={"usage": spent, "attempts": answered,
                                                 **update})

        for attempt in range(self.max_attempts):
            # A new seed per attempt: the same request would give the same broken answer.
            attempt_request = request.model_copy(update={"seed": (request.seed or 0) + attempt})
            try:
                last = self.inner.complete(attempt_request)
            except CacheMiss:
                raise
            except RequestTooLong as exc:
                # Refused for its length: another seed is refused alike. The call's own
                # failure, counted with the server's reason; the endpoint is fine.
                retries += exc.retries
                faults.extend(exc.faults)
                faults.append("too_long")
                return paid(self._fallback(request, faults, retries, "").model_copy(
                    update={"refused": exc.reason, "cached": exc.cached}))
            except LLMUnavailable as exc:
                retries += exc.retries
                faults.extend(exc.faults)
                faults.append("unavailable")
                return paid(self._fallback(request, faults, retries, str(exc)))
            answered += last.attempts
            spent = Usage(prompt_tokens=spent.prompt_tokens + last.usage.prompt_tokens,
                          completion_tokens=spent.completion_tokens
                          + last.usage.completion_tokens)
            retries += last.retries
            faults.extend(last.faults)
            # Sentences past max_sentences are dropped: then an answer cut off at max_tokens
            # misses nothing that was asked for.
            whole = False
            if request.max_sentences is not None:
                whole = next_sentence_at(last.text, request.max_sentences) is not None
                last = last.model_copy(update={
                    "text": first_sentences(last.text, request.max_sentences)})
            # Cut off at max_tokens: counted whether or not the rest still parses.
            if last.finish_reason == "length" and not whole:
                faults.append("truncated")
            if not shaped:
                # Any text is a free-text answer, except none at all: asked again, like an
                # unusable structured answer.
                if last.text.strip():
                    return paid(last, faults=faults, retries=retries)
                parsed = None
                faults.append("empty")
            elif schema is not None:
                parsed, parse_faults = parse_structured(last.text, schema)
                faults.extend(parse_faults)
            else:
                try:
                    parsed = request.parser(last.text)
                except ValueError:
                    parsed = None
                    faults.append("unparseable")
            if parsed is not None:
                return paid(last, parsed=parsed, faults=faults, retries=retries)
            if attempt + 1 < self.max_attempts:
                faults.append("reasked")
        return paid(self._fallback(request, faults, retries, last.text if last else "", last))

    def _fallback(self, request: LLMRequest, faults: list[str], retries: int, text: str,
                  last: Completion | None = None) -> Completion:
        if request.fallback is None and request.schema_model is None and request.parser is None:
            # A plain-text call that could not be answered: an empty answer, counted.
            faults.append("fallback")
            return Completion(text="", faults=faults, retries=retries, model=self.model_id)
        faults.append("fallback")
        base = last or Completion(text=text, model=self.model_id)
        return base.model_copy(update={"parsed": request.fallback, "faults": faults,
                                       "retries": retries})
